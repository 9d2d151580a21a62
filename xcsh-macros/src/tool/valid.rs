//! Every check of `#[custom_tool]` in one place: the item's shape, the arguments of the fn
//! form, and the keys against the item and each other. All problems are reported; the
//! returned model has placeholders where a value was invalid (a fallback needs a name too).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Fields, Ident, ItemFn, ItemStruct};

use super::ast::{FnInput, Input, ToolFn};
use super::attr::Attr;
use crate::derives::{self, ManualDerives};
use crate::docs::{Doc, doc_of};
use crate::errors::Errors;
use crate::names;

/// The tool's name `resolve` is taken by the runtime's hidden tool, which every session with
/// pending actions offers (the runtime's `RESOLVE_TOOL_NAME`).
const RESERVED_NAME: &str = "resolve";

/// The checked tool: what its `CustomTool` impl says.
pub(crate) struct Tool {
    /// The tool's type: the struct, or the one generated for the fn.
    pub(crate) ident: Ident,
    pub(crate) name: String,
    pub(crate) label: String,
    /// A string literal, or a `concat!` of doc lines.
    pub(crate) description: TokenStream,
    pub(crate) annotations: Vec<(&'static str, bool)>,
    pub(crate) pending: bool,
    pub(crate) register: bool,
    /// The structured output's type, when declared.
    pub(crate) output: Option<syn::Type>,
    /// Whether unknown arguments are ignored rather than refused.
    pub(crate) allow_unknown_fields: bool,
    /// Derives the user wrote, left out of the macro's own.
    pub(crate) manual: ManualDerives,
}

pub(crate) fn check(input: &Input, attr: &Attr, errors: &mut Errors) -> Tool {
    match input {
        Input::Struct(item) => check_struct(item, errors),
        Input::Fn(tool_fn) => check_fn(tool_fn, errors),
    }
    let target = input.ident();
    let name = name(input, attr, errors);
    let label = match &attr.label {
        Some(lit) if lit.value().trim().is_empty() => {
            errors.spanned(lit, "`label` is empty: a person reads it; write a short title, or leave the key out to use the title-cased name");
            String::new()
        }
        Some(lit) => lit.value(),
        None => names::title_case(&name),
    };
    let description = description(input, attr, errors);
    let flag = |key: &str| attr.annotations.iter().find(|(k, ..)| *k == key);
    if let (Some((_, true, _)), Some((_, true, span))) = (flag("read_only"), flag("destructive")) {
        errors.at(
            *span,
            "a tool cannot be both `read_only` and `destructive`: `destructive` describes tools that modify their environment",
        );
    }
    let manual = match input {
        Input::Struct(item) => {
            if let Some((key, _)) = &attr.struct_name {
                errors.spanned(
                    key,
                    format!("`struct_name` names the struct generated for an `async fn` tool; here the struct is `{target}` already"),
                );
            }
            derives::check_no_manual_derives(&item.attrs, errors);
            ManualDerives::of(&item.attrs)
        }
        Input::Fn(_) => ManualDerives::default(),
    };
    let ident = match (input, &attr.struct_name) {
        (Input::Fn(_), Some((_, ident))) => ident.clone(),
        (Input::Fn(_), None) => format_ident!(
            "{}",
            names::camel_case(&target.to_string()),
            span = target.span()
        ),
        (Input::Struct(_), _) => target.clone(),
    };
    Tool {
        ident,
        name,
        label,
        description,
        annotations: attr.annotations.iter().map(|(k, v, _)| (*k, *v)).collect(),
        pending: attr.pending,
        register: attr.register,
        output: attr.output.clone(),
        allow_unknown_fields: attr.allow_unknown_fields,
        manual,
    }
}

/// The name given, or the one derived from the item, checked as the runtime checks names
/// and against the reserved `resolve`.
fn name(input: &Input, attr: &Attr, errors: &mut Errors) -> String {
    let target = input.ident();
    if let Some(lit) = &attr.name {
        let name = lit.value();
        if let Err(problem) = names::validate(&name) {
            errors.spanned(lit, problem);
        } else if name == RESERVED_NAME {
            errors.spanned(lit, reserved());
        }
        return name;
    }
    let name = names::snake_case(&target.to_string());
    if let Err(problem) = names::validate(&name) {
        errors.spanned(
            target,
            format!("{problem}; the name comes from `{target}`, or set `name = \"…\"`"),
        );
    } else if name == RESERVED_NAME {
        errors.spanned(
            target,
            format!(
                "{}\nthe name comes from `{target}`: set `name = \"…\"` in #[custom_tool]",
                reserved()
            ),
        );
    }
    name
}

fn reserved() -> String {
    format!(
        "`{RESERVED_NAME}` is reserved for the runtime's hidden resolve tool; choose another name"
    )
}

fn description(input: &Input, attr: &Attr, errors: &mut Errors) -> TokenStream {
    if let Some(lit) = &attr.description {
        if lit.value().trim().is_empty() {
            errors.spanned(lit, "`description` is empty: the model reads it to decide when to call the tool; say what the tool does");
        }
        let text = lit.value().trim().to_owned();
        return quote!(#text);
    }
    match doc_of(input.attrs()) {
        Doc::Text(text) if !text.is_empty() => quote!(#text),
        Doc::Expr(expr) => expr,
        Doc::Text(_) | Doc::None if attr.description_misspelled => quote!(""),
        Doc::Text(_) | Doc::None => {
            let target = input.ident();
            let item = match input {
                Input::Struct(_) => "struct",
                Input::Fn(_) => "fn",
            };
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

fn check_struct(item: &ItemStruct, errors: &mut Errors) {
    let target = &item.ident;
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            format!(
                "#[custom_tool] structs cannot be generic: a tool has one name and one parameter schema\nuse concrete field types in `{target}`"
            ),
        );
    }
    match &item.fields {
        Fields::Named(_) => {}
        Fields::Unnamed(fields) => errors.spanned(
            fields,
            format!("a tool's parameters are a JSON object, so #[custom_tool] needs named fields: `struct {target} {{ path: String }}`"),
        ),
        Fields::Unit => errors.spanned(
            target,
            format!(
                "a unit struct has no parameter object: write `struct {target} {{}}` for a tool without parameters"
            ),
        ),
    }
}

fn check_fn(tool_fn: &ToolFn, errors: &mut Errors) {
    let ItemFn { sig, .. } = &tool_fn.func;
    let fn_ident = &sig.ident;
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            format!("#[custom_tool] functions must be async: write `async fn {fn_ident}(…)`"),
        );
    }
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            "#[custom_tool] functions cannot be generic: a tool has one parameter schema; use concrete types",
        );
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(constness, "#[custom_tool] functions cannot be `const`");
    }
    let mut context = None;
    for input in &tool_fn.args {
        match input {
            FnInput::Param(_) => {}
            FnInput::Context { ty, attrs } => {
                if let Some(first) = context {
                    let mut error = syn::Error::new_spanned(
                        ty,
                        "a tool receives one `&ToolContext`; remove this argument",
                    );
                    error.combine(syn::Error::new_spanned(
                        first,
                        "the context is already received here",
                    ));
                    errors.push(error);
                }
                context = Some(ty);
                if let Some(attr) = attrs.first() {
                    errors.spanned(
                        attr,
                        "the `&ToolContext` argument is not a parameter: it takes no doc comment or serde attributes",
                    );
                }
            }
            FnInput::Receiver(receiver) => errors.spanned(
                receiver,
                "a #[custom_tool] function cannot take `self`: put #[custom_tool] on a struct and write `async fn execute(self, ctx: &ToolContext)` in its impl",
            ),
            FnInput::MutContext(ty) => {
                errors.spanned(ty, "take the context by shared reference: `ctx: &ToolContext`")
            }
            FnInput::Borrowed(ty) => errors.spanned(
                ty,
                "tool parameters are decoded from JSON into owned values: use an owned type (`String` for `&str`, `Vec<T>` for `&[T]`)",
            ),
            FnInput::ImplTrait(ty) => errors.spanned(
                ty,
                "tool parameters need a concrete type (the schema is generated from it), not `impl Trait`",
            ),
            FnInput::Pattern(pat) => errors.spanned(
                pat,
                "tool parameters need a plain name (it is the JSON property name): write `name: Type`",
            ),
        }
    }
}
