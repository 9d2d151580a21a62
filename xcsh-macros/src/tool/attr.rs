//! `#[custom_tool(…)]`'s keys, read into typed values. Checking them against the item and
//! each other is `valid`'s job.

use proc_macro2::{Span, TokenStream};
use syn::{Ident, LitStr};

use crate::args::{self, KeySpec, Kind, Value};
use crate::errors::Errors;
use crate::krate::Paths;

pub(crate) const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "name",
        kind: Kind::Str,
        example: "`name = \"batch_rename\"` (1–64 of [A-Za-z0-9_-], starting with a letter or `_`)",
    },
    KeySpec {
        name: "label",
        kind: Kind::Str,
        example: "`label = \"Batch Rename\"`",
    },
    KeySpec {
        name: "description",
        kind: Kind::Str,
        example: "`description = \"Renames files after a preview.\"`",
    },
    KeySpec {
        name: "read_only",
        kind: Kind::Flag,
        example: "write `read_only` or `read_only = false`",
    },
    KeySpec {
        name: "destructive",
        kind: Kind::Flag,
        example: "write `destructive` or `destructive = false`",
    },
    KeySpec {
        name: "idempotent",
        kind: Kind::Flag,
        example: "write `idempotent` or `idempotent = false`",
    },
    KeySpec {
        name: "open_world",
        kind: Kind::Flag,
        example: "write `open_world` or `open_world = false`",
    },
    KeySpec {
        name: "pending",
        kind: Kind::Flag,
        example: "write `pending` when the tool pushes pending actions",
    },
    KeySpec {
        name: "output",
        kind: Kind::Type,
        example: "`output = EditSummary` (a `Serialize + JsonSchema` type, e.g. marked `#[tool_param(serialize)]`: the tool's structured output, MCP `outputSchema`)",
    },
    KeySpec {
        name: "allow_unknown_fields",
        kind: Kind::Flag,
        example: "write `allow_unknown_fields` to ignore arguments the tool does not know (by default they are refused, naming the field)",
    },
    KeySpec {
        name: "register",
        kind: Kind::Flag,
        example: "write `register = false` to leave the tool out of `Session::builder().registered()`",
    },
    KeySpec {
        name: "crate",
        kind: Kind::StrOrPath,
        example: "`crate = my_facade` (a crate re-exporting xcsh, with its `__private` module)",
    },
    KeySpec {
        name: "struct_name",
        kind: Kind::Ident,
        example: "`struct_name = GrepTool` (the fn form's generated struct)",
    },
];

/// The annotation flags, in the order the impl states them.
pub(crate) const ANNOTATIONS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

/// The attribute's keys, each as written (or absent).
pub(crate) struct Attr {
    pub(crate) name: Option<LitStr>,
    pub(crate) label: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// The annotation flags given, with the span of their value.
    pub(crate) annotations: Vec<(&'static str, bool, Span)>,
    pub(crate) pending: bool,
    pub(crate) register: bool,
    /// `output = T`: the type of the structured output.
    pub(crate) output: Option<syn::Type>,
    /// `allow_unknown_fields`: unknown arguments are ignored, not refused.
    pub(crate) allow_unknown_fields: bool,
    /// `struct_name = Ident`, with its key (to point at when given on a struct).
    pub(crate) struct_name: Option<(Ident, Ident)>,
    /// An unknown key was reported as a misspelt `description`, so a missing description
    /// is not reported again.
    pub(crate) description_misspelled: bool,
    pub(crate) paths: Paths,
}

/// Reads the attribute; malformed, unknown and duplicate keys are reported and left out.
pub(crate) fn parse(
    tokens: TokenStream,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> Attr {
    let args = args::parse(tokens, KEYS, errors);
    let flag = |key: &str| args.flag(key);
    let annotations = ANNOTATIONS
        .iter()
        .filter_map(|&key| flag(key).map(|(value, span)| (key, value, span)))
        .collect();
    let struct_name = match (args.key("struct_name"), args.value("struct_name")) {
        (Some(key), Some(Value::Ident(ident))) => Some((key.clone(), ident.clone())),
        _ => None,
    };
    Attr {
        name: args.str("name").cloned(),
        label: args.str("label").cloned(),
        description: args.str("description").cloned(),
        annotations,
        pending: flag("pending").is_some_and(|(v, _)| v),
        register: flag("register").is_none_or(|(v, _)| v),
        output: args.ty("output").cloned(),
        allow_unknown_fields: flag("allow_unknown_fields").is_some_and(|(v, _)| v),
        struct_name,
        description_misspelled: args.misspelled("description"),
        paths: Paths::from_args(&args, default_paths, errors),
    }
}
