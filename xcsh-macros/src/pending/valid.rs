//! Every check of `#[pending]` in one place: the struct's shape, the hooks, the label's
//! placeholders against the fields, and keys that exclude each other.

use proc_macro2::Span;
use syn::{Fields, Ident, ItemStruct, LitStr};

use super::attr::{Attr, FlagOrIdent, Format, Source};
use crate::args::FormatArg;
use crate::errors::{Errors, did_you_mean};
use crate::format::named_placeholders;
use crate::names;

/// The checked action: what its `PendingAction` impl calls and says.
pub(crate) struct Pending {
    /// The method `apply` calls (a placeholder when the key is missing: reported).
    pub(crate) apply: Ident,
    pub(crate) reject: Option<Ident>,
    /// The label (an empty placeholder when it is missing or invalid: reported).
    pub(crate) label: Label,
    pub(crate) details: Option<Details>,
    pub(crate) source: Option<Source>,
    /// Where `effect` comes from: a field, a method, or nothing (unknown).
    pub(crate) effect: Option<EffectFrom>,
    /// The method `effect_digest` calls, when given.
    pub(crate) effect_digest: Option<Ident>,
    /// The method `select_files` calls, when given.
    pub(crate) select: Option<Ident>,
    /// Where `durable` was written, when it is on.
    pub(crate) durable: Option<Span>,
}

pub(crate) enum Label {
    Format(LitStr, Vec<FormatArg>),
    Method(Ident),
}

impl Label {
    /// What stands for a label that is missing or invalid (and reported), so the model is
    /// complete; the fallback never expands it.
    fn placeholder() -> Label {
        Label::Format(LitStr::new("", Span::call_site()), Vec::new())
    }
}

/// Where a `#[pending]` action's effect comes from.
pub(crate) enum EffectFrom {
    /// A field read through `EffectSource` (named, or the struct's one `ChangeSet` field).
    Field(Ident),
    /// A method returning `Effect`.
    Method(Ident),
}

pub(crate) enum Details {
    Whole,
    Field(Ident),
    Method(Ident),
}

pub(crate) fn check(item: &ItemStruct, attr: Attr, errors: &mut Errors) -> Pending {
    let target = &item.ident;
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            "#[pending] structs cannot be generic: a pending action is stored as `'static` type-erased state; use concrete field types",
        );
    }
    let fields: Vec<String> = match &item.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
            .collect(),
        _ => Vec::new(),
    };

    let apply = match attr.apply {
        Some(FlagOrIdent::Flag(flag)) if flag.value => Ident::new("apply", flag.span),
        Some(FlagOrIdent::Flag(flag)) => {
            errors.spanned(
                flag,
                "`apply` cannot be turned off: applying is what a pending action is for",
            );
            Ident::new("apply", Span::call_site())
        }
        Some(FlagOrIdent::Ident(method)) => method,
        None => {
            if !attr.apply_misspelled {
                errors.at(
                    Span::call_site(),
                    format!(
                        "#[pending] needs `apply`: write `#[pending(apply, label = \"…\")]` and `impl {target} {{ async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {{ … }} }}`"
                    ),
                );
            }
            Ident::new("apply", Span::call_site())
        }
    };
    let reject = match attr.reject {
        Some(FlagOrIdent::Flag(flag)) => flag.value.then(|| Ident::new("reject", flag.span)),
        Some(FlagOrIdent::Ident(method)) => Some(method),
        None => None,
    };

    let label = match (attr.label, attr.label_fn) {
        (Some(Format { lit, args }), None) => {
            check_label(&lit, &args, target, &fields, errors);
            Label::Format(lit, args)
        }
        (None, Some(method)) => {
            if method == "label" {
                errors.spanned(&method, "name the label method something other than `label` (that is `PendingAction::label` itself), e.g. `label_fn = describe`");
            }
            Label::Method(method)
        }
        (Some(_), Some(_)) => {
            errors.spanned(
                attr.label_fn_key,
                "give either `label` or `label_fn`, not both",
            );
            Label::placeholder()
        }
        (None, None) => {
            let given = attr.label_key.is_some() || attr.label_fn_key.is_some();
            if !given && !attr.label_misspelled {
                errors.at(
                    Span::call_site(),
                    "#[pending] needs a label, which is what the person deciding sees: `label = \"Batch rename: {count} files\"` (fields interpolate) or `label_fn = method`",
                );
            }
            Label::placeholder()
        }
    };

    let details = match (attr.details, attr.details_fn) {
        (Some(_), Some(_)) => {
            errors.spanned(
                attr.details_fn_key,
                "give either `details` or `details_fn`, not both",
            );
            None
        }
        (Some(FlagOrIdent::Flag(flag)), None) => flag.value.then_some(Details::Whole),
        (Some(FlagOrIdent::Ident(field)), None) => {
            if !fields.iter().any(|f| field == f) {
                let hint = did_you_mean(&field.to_string(), fields.iter().map(String::as_str));
                errors.spanned(
                    &field,
                    format!("`{target}` has no field `{field}`{hint}\n(`details = field` serialises a field; use `details_fn = method` for a method)"),
                );
            }
            Some(Details::Field(field))
        }
        (None, Some(method)) => {
            if method == "details" {
                errors.spanned(&method, "name the details method something other than `details` (that is `PendingAction::details` itself)");
            }
            Some(Details::Method(method))
        }
        (None, None) => None,
    };

    if let Some(Source::Name(lit)) = &attr.source
        && let Err(problem) = names::validate(&lit.value())
    {
        errors.spanned(lit, format!("`source` must be a tool name: {problem}"));
    }

    let effect = match (attr.effect, attr.effect_fn) {
        (Some(_), Some(_)) => {
            errors.spanned(
                attr.effect_fn_key,
                "give either `effect` or `effect_fn`, not both",
            );
            None
        }
        (Some(field), None) => {
            if !fields.iter().any(|f| field == f) {
                let hint = did_you_mean(&field.to_string(), fields.iter().map(String::as_str));
                errors.spanned(
                    &field,
                    format!("`{target}` has no field `{field}`{hint}\n(`effect = field` reads a field of type `Effect` or `ChangeSet`; use `effect_fn = method` for a method)"),
                );
            }
            Some(EffectFrom::Field(field))
        }
        (None, Some(method)) => {
            if method == "effect" {
                errors.spanned(&method, "name the effect method something other than `effect` (that is `PendingAction::effect` itself), e.g. `effect_fn = touched`");
            }
            Some(EffectFrom::Method(method))
        }
        // A `ChangeSet` field says what the action writes: read without being named.
        (None, None) => change_set_field(item).map(EffectFrom::Field),
    };

    let effect_digest = attr.effect_digest_fn;
    if let Some(method) = &effect_digest
        && method == "effect_digest"
    {
        errors.spanned(method, "name the digest method something other than `effect_digest` (that is `PendingAction::effect_digest` itself), e.g. `effect_digest_fn = digest`");
    }

    Pending {
        apply,
        reject,
        label,
        details,
        source: attr.source,
        effect,
        effect_digest,
        select: attr.select_fn,
        durable: attr.durable.filter(|flag| flag.value).map(|flag| flag.span),
    }
}

/// Every `{name}` in the label must be a field or a named argument (constants, in
/// SCREAMING_CASE, are left to rustc).
fn check_label(
    lit: &LitStr,
    extra: &[FormatArg],
    target: &Ident,
    fields: &[String],
    errors: &mut Errors,
) {
    let text = lit.value();
    if text.trim().is_empty() {
        errors.spanned(lit, "the label is empty: it is what the person deciding sees; say what will happen, e.g. `\"Batch rename: {count} files\"`");
        return;
    }
    for name in named_placeholders(&text) {
        let is_field = fields.contains(&name);
        let is_arg = extra
            .iter()
            .any(|a| a.name.as_ref().is_some_and(|n| *n == name));
        let is_const = name
            .chars()
            .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '_');
        if is_field || is_arg || is_const {
            continue;
        }
        let message = if fields.is_empty() {
            format!(
                "the label interpolates `{{{name}}}`, but `{target}` has no named fields\nuse positional arguments: `label = \"… {{}}\", .0`"
            )
        } else {
            let hint = did_you_mean(&name, fields.iter().map(String::as_str));
            format!(
                "the label interpolates `{{{name}}}`, but `{target}` has no field `{name}`{hint}\nfields: {}; for a computed value write `label = \"… {{{name}}}\", {name} = expr`",
                fields.join(", ")
            )
        };
        errors.spanned(lit, message);
    }
}

/// The struct's one field whose type is named `ChangeSet` (`ChangeSet`, `changeset::ChangeSet`),
/// if there is exactly one.
fn change_set_field(item: &ItemStruct) -> Option<Ident> {
    let mut found = item.fields.iter().filter(|field| {
        matches!(&field.ty, syn::Type::Path(path)
            if path.qself.is_none()
                && path.path.segments.last().is_some_and(|last| last.ident == "ChangeSet"))
    });
    let first = found.next()?;
    if found.next().is_some() {
        return None;
    }
    first.ident.clone()
}
