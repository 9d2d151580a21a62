//! `#[custom_tool]`: the attribute model shared by the struct and fn forms, and the
//! `CustomTool` impl both expand to.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Attribute, Ident, LitStr};

use crate::args::{self, Args, KeySpec, Kind};
use crate::docs::{Doc, doc_of};
use crate::errors::Errors;
use crate::krate::Paths;
use crate::names;

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
        name: "register",
        kind: Kind::Flag,
        example: "write `register = false` to keep the tool out of `registered()` (it is still a `CustomTool`)",
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

/// Which form the attribute is on; a few keys apply to one form only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Struct,
    Fn,
}

/// The validated attribute: what the `CustomTool` impl's constants say.
pub(crate) struct ToolConfig {
    pub(crate) name: String,
    pub(crate) label: String,
    pub(crate) description: TokenStream,
    pub(crate) annotations: Vec<(&'static str, bool)>,
    pub(crate) pending: bool,
    /// Whether to `inventory::submit!` the tool (`register = false` leaves it out).
    pub(crate) register: bool,
    pub(crate) paths: Paths,
    pub(crate) struct_name: Option<Ident>,
}

/// Parses and validates the attribute. Invalid values are reported and replaced by
/// placeholders, so the rest of the expansion (and its own checks) still runs.
pub(crate) fn parse_config(
    attr: TokenStream,
    form: Form,
    target: &Ident,
    docs: &[Attribute],
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> ToolConfig {
    let args = Args::new(args::parse(attr, KEYS, errors));

    let default_name = names::snake_case(&target.to_string());
    let name = match args.str("name") {
        Some(lit) => {
            let name = lit.value();
            if let Err(problem) = names::validate(&name) {
                errors.spanned(lit, problem);
            }
            name
        }
        None => {
            if let Err(problem) = names::validate(&default_name) {
                errors.spanned(
                    target,
                    format!("{problem}; the name comes from `{target}`, or set `name = \"…\"`"),
                );
            }
            default_name
        }
    };

    let label = match args.str("label") {
        Some(lit) if lit.value().trim().is_empty() => {
            errors.spanned(lit, "`label` is empty: a person reads it; write a short title, or leave the key out to use the title-cased name");
            String::new()
        }
        Some(lit) => lit.value(),
        None => names::title_case(&name),
    };

    let description = description(&args, form, target, docs, errors);

    let mut annotations = Vec::new();
    for key in ["read_only", "destructive", "idempotent", "open_world"] {
        if let Some((value, _)) = args.flag(key) {
            annotations.push((key, value));
        }
    }
    if let (Some((true, _)), Some((true, span))) =
        (args.flag("read_only"), args.flag("destructive"))
    {
        errors.at(
            span,
            "a tool cannot be both `read_only` and `destructive`: `destructive` describes tools that modify their environment",
        );
    }

    let struct_name = args.ident("struct_name").cloned();
    if form == Form::Struct
        && let Some(key) = args.key("struct_name")
    {
        errors.spanned(
                key,
                format!("`struct_name` names the struct generated for an `async fn` tool; here the struct is `{target}` already"),
            );
    }

    let paths = Paths::from_args(&args, default_paths, errors);

    ToolConfig {
        name,
        label,
        description,
        annotations,
        pending: args.flag("pending").is_some_and(|(v, _)| v),
        register: args.flag("register").is_none_or(|(v, _)| v),
        paths,
        struct_name,
    }
}

fn description(
    args: &Args,
    form: Form,
    target: &Ident,
    docs: &[Attribute],
    errors: &mut Errors,
) -> TokenStream {
    if let Some(lit) = args.str("description") {
        if lit.value().trim().is_empty() {
            errors.spanned(lit, "`description` is empty: the model reads it to decide when to call the tool; say what the tool does");
        }
        let text = lit.value().trim().to_owned();
        return quote!(#text);
    }
    let item = match form {
        Form::Struct => "struct",
        Form::Fn => "fn",
    };
    match doc_of(docs) {
        Doc::Text(text) if !text.is_empty() => quote!(#text),
        Doc::Expr(expr) => expr,
        Doc::Text(_) | Doc::None => {
            errors.spanned(
                target,
                format!(
                    "tool `{target}` has no description: the model reads it to decide when to call the tool\nadd a doc comment above the {item} (`/// What it does.`) or `description = \"…\"` to #[custom_tool]"
                ),
            );
            quote!("")
        }
    }
}

/// The `CustomTool` impl and the registration, inside one `const _: () = { … };`.
///
/// `execute_body` is the body of `CustomTool::execute` (it sees `self` and `ctx`);
/// `helpers` are items it needs, placed in the same block.
pub(crate) fn expand_impl(
    target: &Ident,
    config: &ToolConfig,
    ctx: &Ident,
    helpers: TokenStream,
    execute_body: TokenStream,
) -> TokenStream {
    let core = &config.paths.core;
    let inventory = &config.paths.inventory;
    let name = LitStr::new(&config.name, Span::call_site());
    let label = LitStr::new(&config.label, Span::call_site());
    let description = &config.description;
    let annotations = config.annotations.iter().map(|(key, value)| {
        let method = Ident::new(key, Span::call_site());
        quote!(.#method(#value))
    });
    let pending = config.pending.then(|| {
        quote!(
            const PUSHES_PENDING_ACTIONS: bool = true;
        )
    });
    let annotations = (!config.annotations.is_empty()).then(|| {
        quote!(const ANNOTATIONS: #core::ToolAnnotations = #core::ToolAnnotations::new() #(#annotations)*;)
    });
    let registration = config.register.then(|| {
        quote! {
            #inventory::submit! {
                #core::ToolRegistration {
                    name: <#target as #core::CustomTool>::NAME,
                    module_path: ::core::module_path!(),
                    make: #core::custom_tool::<#target>,
                }
            }
        }
    });
    // The impl itself is spanned at the target so "`X` is not `Send`"-style errors about the
    // parameters point at the user's struct.
    let impl_head = quote_spanned!(target.span()=> impl #core::CustomTool for #target);
    quote! {
        const _: () = {
            #helpers

            #[automatically_derived]
            #impl_head {
                const NAME: &'static str = #name;
                const LABEL: &'static str = #label;
                const DESCRIPTION: &'static str = #description;
                #annotations
                #pending

                fn execute(
                    self,
                    #ctx: &#core::ToolContext,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<#core::AgentToolResult, #core::ToolError>,
                > + ::core::marker::Send {
                    #execute_body
                }
            }

            #registration
        };
    }
}

/// Which helper attributes on a field or parameter belong to the generated derives.
pub(crate) fn is_derive_helper(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// Derives the user wrote by hand (an error, but the expansion leaves them out so the error
/// is not followed by "conflicting implementations").
#[derive(Default)]
pub(crate) struct ManualDerives {
    deserialize: bool,
    json_schema: bool,
}

/// The `#[derive(Deserialize, JsonSchema)]` and crate attributes put on a parameter struct.
pub(crate) fn derive_attrs(paths: &Paths, manual: &ManualDerives) -> TokenStream {
    let serde = &paths.serde;
    let schemars = &paths.schemars;
    let serde_str = paths.serde_str();
    let schemars_str = paths.schemars_str();
    let mut derives = Vec::new();
    if !manual.deserialize {
        derives.push(quote!(#serde::Deserialize));
    }
    if !manual.json_schema {
        derives.push(quote!(#schemars::JsonSchema));
    }
    quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = #serde_str)]
        #[schemars(crate = #schemars_str)]
    }
}

/// Reports `#[derive(Deserialize)]`/`#[derive(JsonSchema)]` written by hand: the macro
/// derives them itself, and a second impl would conflict.
pub(crate) fn check_no_manual_derives(attrs: &[Attribute], errors: &mut Errors) -> ManualDerives {
    let mut manual = ManualDerives::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let Ok(paths) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            continue;
        };
        for path in paths {
            let Some(last) = path.segments.last() else {
                continue;
            };
            if last.ident == "Deserialize" || last.ident == "JsonSchema" {
                manual.deserialize |= last.ident == "Deserialize";
                manual.json_schema |= last.ident == "JsonSchema";
                errors.spanned(
                    &path,
                    format!(
                        "remove `{}` from this derive: #[custom_tool] derives `Deserialize` and `JsonSchema` itself (through xcsh, so your crate needs neither serde nor schemars)",
                        last.ident
                    ),
                );
            }
        }
    }
    manual
}
