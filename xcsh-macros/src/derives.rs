//! The serde and schemars derives the macros add to an item, and the derives a user wrote
//! by hand.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Fields, ItemStruct};

use crate::errors::Errors;
use crate::krate::Paths;

/// Whether an attribute belongs to the serde or schemars derives (`#[serde(…)]`,
/// `#[schemars(…)]`): moved with a parameter, and taken off an item whose derives are not
/// emitted (rustc would not know them).
pub(crate) fn is_derive_helper(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// Which of serde's and schemars' derives the user wrote on an item.
#[derive(Default, Clone, Copy)]
pub(crate) struct ManualDerives {
    pub(crate) serialize: bool,
    pub(crate) deserialize: bool,
    pub(crate) json_schema: bool,
}

impl ManualDerives {
    pub(crate) fn of(attrs: &[Attribute]) -> Self {
        let mut manual = ManualDerives::default();
        for path in derived_paths(attrs) {
            if let Some(last) = path.segments.last() {
                manual.serialize |= last.ident == "Serialize";
                manual.deserialize |= last.ident == "Deserialize";
                manual.json_schema |= last.ident == "JsonSchema";
            }
        }
        manual
    }
}

fn derived_paths(attrs: &[Attribute]) -> Vec<syn::Path> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .filter_map(|attr| {
            attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .ok()
        })
        .flatten()
        .collect()
}

/// Whether `attrs` hold a serde attribute naming `word` (`#[serde(deny_unknown_fields)]`,
/// `#[serde(flatten)]`).
pub(crate) fn has_serde_word(attrs: &[Attribute], word: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .any(|attr| {
            attr.meta.require_list().is_ok_and(|list| {
                list.tokens
                    .clone()
                    .into_iter()
                    .any(|tt| matches!(&tt, proc_macro2::TokenTree::Ident(ident) if ident == word))
            })
        })
}

/// Whether arguments a struct does not know should be refused: unless the author opted out
/// (`allow_unknown_fields`), wrote it already, or flattens a field (serde cannot refuse them
/// then).
pub(crate) fn refuses_unknown<'a>(
    allow_unknown: bool,
    attrs: &[Attribute],
    mut field_attrs: impl Iterator<Item = &'a [Attribute]>,
) -> bool {
    !allow_unknown
        && !has_serde_word(attrs, "deny_unknown_fields")
        && !field_attrs.any(|attrs| has_serde_word(attrs, "flatten"))
}

/// The `#[derive(Deserialize, JsonSchema)]` and crate attributes put on a parameter struct,
/// leaving out any the user wrote (reported by [`check_no_manual_derives`]), so the error is
/// not followed by "conflicting implementations"; with `deny_unknown`, also
/// `#[serde(deny_unknown_fields)]` (an argument the tool does not know is an error naming it,
/// and the schema says `additionalProperties: false`).
pub(crate) fn derive_attrs(
    paths: &Paths,
    manual: &ManualDerives,
    deny_unknown: bool,
) -> TokenStream {
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
    let deny = deny_unknown.then(|| quote!(#[serde(deny_unknown_fields)]));
    quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = #serde_str)]
        #[schemars(crate = #schemars_str)]
        #deny
    }
}

/// Reports `#[derive(Deserialize)]`/`#[derive(JsonSchema)]` written by hand: the macro
/// derives them itself, and a second impl would conflict.
pub(crate) fn check_no_manual_derives(attrs: &[Attribute], errors: &mut Errors) {
    for path in derived_paths(attrs) {
        let Some(last) = path.segments.last() else {
            continue;
        };
        if last.ident == "Deserialize" || last.ident == "JsonSchema" {
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

/// `item` without the `#[serde]`/`#[schemars]` attributes no remaining derive reads: what a
/// fallback emits when it leaves the macro's own derives out, so those attributes are not
/// reported as unknown on top of the real error.
pub(crate) fn without_orphan_helpers(mut item: ItemStruct) -> ItemStruct {
    let manual = ManualDerives::of(&item.attrs);
    let keep_serde = manual.serialize || manual.deserialize || manual.json_schema;
    let keep_schemars = manual.json_schema;
    let keep = |attr: &Attribute| {
        let orphan = (attr.path().is_ident("serde") && !keep_serde)
            || (attr.path().is_ident("schemars") && !keep_schemars);
        !orphan
    };
    item.attrs.retain(keep);
    let fields = match &mut item.fields {
        Fields::Named(named) => named.named.iter_mut().collect::<Vec<_>>(),
        Fields::Unnamed(unnamed) => unnamed.unnamed.iter_mut().collect(),
        Fields::Unit => Vec::new(),
    };
    for field in fields {
        field.attrs.retain(keep);
    }
    item
}
