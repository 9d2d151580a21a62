//! `#[pending(…)]`'s keys, read into typed values. Checking them against the struct and
//! each other is `valid`'s job.

use proc_macro2::TokenStream;
use syn::{Ident, LitBool, LitStr};

use crate::args::{self, FormatArg, KeySpec, Kind, Value};
use crate::errors::Errors;
use crate::krate::Paths;

pub(crate) const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "apply",
        kind: Kind::FlagOrIdent,
        example: "`apply` (calls `async fn apply(&mut self, reason: &str)`) or `apply = method_name`",
    },
    KeySpec {
        name: "reject",
        kind: Kind::FlagOrIdent,
        example: "`reject` (calls `async fn reject(&mut self, reason: &str)`) or `reject = method_name`",
    },
    KeySpec {
        name: "label",
        kind: Kind::Format,
        example: "`label = \"Batch rename: {count} files\"` or `label = \"Batch rename: {} files\", self.files.len()`",
    },
    KeySpec {
        name: "label_fn",
        kind: Kind::Ident,
        example: "`label_fn = describe` (calls `fn describe(&self) -> impl Display`)",
    },
    KeySpec {
        name: "source",
        kind: Kind::StrOrPath,
        example: "`source = \"batch_rename_preview\"` or `source = BatchRenamePreview` (a #[custom_tool] type)",
    },
    KeySpec {
        name: "details",
        kind: Kind::FlagOrIdent,
        example: "`details` (serialise the whole struct) or `details = field`",
    },
    KeySpec {
        name: "details_fn",
        kind: Kind::Ident,
        example: "`details_fn = summary` (calls `fn summary(&self) -> impl Serialize`)",
    },
    KeySpec {
        name: "effect",
        kind: Kind::Ident,
        example: "`effect = changes` (a field of type `Effect` or `ChangeSet`: the files the action touches; a `ChangeSet` field is found without it)",
    },
    KeySpec {
        name: "effect_fn",
        kind: Kind::Ident,
        example: "`effect_fn = touched` (calls `fn touched(&self) -> Effect`: the files the action touches)",
    },
    KeySpec {
        name: "effect_digest_fn",
        kind: Kind::Ident,
        example: "`effect_digest_fn = digest` (calls `fn digest(&self) -> String`, the digest of the exact effect a person approves)",
    },
    KeySpec {
        name: "select_fn",
        kind: Kind::Ident,
        example: "`select_fn = only` (calls `fn only(&mut self, files: &[String]) -> Result<(), String>` for a partial apply)",
    },
    KeySpec {
        name: "durable",
        kind: Kind::Flag,
        example: "`durable` (the struct is `Serialize + Deserialize`: a durable session keeps it across restarts)",
    },
    KeySpec {
        name: "crate",
        kind: Kind::StrOrPath,
        example: "`crate = my_facade` (a crate re-exporting xcsh, with its `__private` module)",
    },
];

/// A key that is a flag or names something: `apply`, `apply = false`, `apply = commit`.
pub(crate) enum FlagOrIdent {
    Flag(LitBool),
    Ident(Ident),
}

/// `label = "…", args…`.
pub(crate) struct Format {
    pub(crate) lit: LitStr,
    pub(crate) args: Vec<FormatArg>,
}

/// `source = "tool_name"` or `source = ToolType`.
pub(crate) enum Source {
    Name(LitStr),
    Tool(syn::Path),
}

/// The attribute's keys, each as written (or absent); `*_key` are the keys themselves, to
/// point at.
pub(crate) struct Attr {
    pub(crate) apply: Option<FlagOrIdent>,
    pub(crate) reject: Option<FlagOrIdent>,
    pub(crate) label: Option<Format>,
    pub(crate) label_key: Option<Ident>,
    pub(crate) label_fn: Option<Ident>,
    pub(crate) label_fn_key: Option<Ident>,
    pub(crate) source: Option<Source>,
    pub(crate) details: Option<FlagOrIdent>,
    pub(crate) details_fn: Option<Ident>,
    pub(crate) details_fn_key: Option<Ident>,
    pub(crate) effect: Option<Ident>,
    pub(crate) effect_fn: Option<Ident>,
    pub(crate) effect_fn_key: Option<Ident>,
    pub(crate) effect_digest_fn: Option<Ident>,
    pub(crate) select_fn: Option<Ident>,
    /// `durable`, when given (its span, to point at).
    pub(crate) durable: Option<LitBool>,
    /// An unknown key was reported as a misspelt `apply` (so its absence is not reported
    /// again); the same for `label`/`label_fn`.
    pub(crate) apply_misspelled: bool,
    pub(crate) label_misspelled: bool,
    pub(crate) paths: Paths,
}

/// Reads the attribute; malformed, unknown and duplicate keys are reported and left out.
pub(crate) fn parse(
    tokens: TokenStream,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> Attr {
    let mut args = args::parse(tokens, KEYS, errors);
    let paths = Paths::from_args(&args, default_paths, errors);
    let label_key = args.key("label").cloned();
    let label_fn_key = args.key("label_fn").cloned();
    let details_fn_key = args.key("details_fn").cloned();
    let effect_fn_key = args.key("effect_fn").cloned();
    let apply_misspelled = args.misspelled("apply");
    let label_misspelled = args.misspelled("label") || args.misspelled("label_fn");
    let mut value = |key: &str| args.take(key).map(|arg| arg.value);
    let flag_or_ident = |value: Option<Value>| match value {
        Some(Value::Flag(flag)) => Some(FlagOrIdent::Flag(flag)),
        Some(Value::Ident(ident)) => Some(FlagOrIdent::Ident(ident)),
        _ => None,
    };
    let ident = |value: Option<Value>| match value {
        Some(Value::Ident(ident)) => Some(ident),
        _ => None,
    };
    Attr {
        apply: flag_or_ident(value("apply")),
        reject: flag_or_ident(value("reject")),
        label: match value("label") {
            Some(Value::Format(lit, args)) => Some(Format { lit, args }),
            _ => None,
        },
        label_key,
        label_fn: ident(value("label_fn")),
        label_fn_key,
        source: match value("source") {
            Some(Value::Str(lit)) => Some(Source::Name(lit)),
            Some(Value::Path(path)) => Some(Source::Tool(path)),
            _ => None,
        },
        details: flag_or_ident(value("details")),
        details_fn: ident(value("details_fn")),
        details_fn_key,
        effect: ident(value("effect")),
        effect_fn: ident(value("effect_fn")),
        effect_fn_key,
        effect_digest_fn: ident(value("effect_digest_fn")),
        select_fn: ident(value("select_fn")),
        durable: match value("durable") {
            Some(Value::Flag(flag)) => Some(flag),
            _ => None,
        },
        apply_misspelled,
        label_misspelled,
        paths,
    }
}
