//! `#[pending(apply, reject, label = "…")]`: a `PendingAction` impl that calls the struct's
//! inherent `async fn apply(&mut self, reason: &str)` (and `reject`), with a label
//! interpolated from its fields the way thiserror interpolates `#[error("…{field}")]`.
//!
//! Staged as `#[custom_tool]` is: the attribute is read (`attr`), checked against the struct
//! (`valid`), then expanded (`expand`) or, after any error, replaced by a stub (`fallback`).

mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

use crate::errors::Errors;
use crate::krate::Paths;

/// The `#[pending]` expansion. `default_paths` overrides Cargo.toml discovery (tests).
pub(crate) fn expand(
    attr: TokenStream,
    item: TokenStream,
    default_paths: Option<Paths>,
) -> TokenStream {
    let mut errors = Errors::new();
    let attr = attr::parse(attr, default_paths, &mut errors);
    let paths = attr.paths.clone();
    let output = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(item)) => {
            let pending = valid::check(&item, attr, &mut errors);
            if errors.is_empty() {
                expand::pending(&item, &pending, &paths)
            } else {
                fallback::pending(&item, &paths)
            }
        }
        Ok(other) => {
            errors.spanned(
                crate::item::keyword(&other),
                "#[pending] goes on a struct: its fields hold what `apply` needs (for an enum, implement `PendingAction` by hand)",
            );
            fallback::misplaced(item, &paths)
        }
        Err(error) => {
            errors.push(error);
            item
        }
    };
    let errors = errors.finish();
    quote!(#output #errors)
}
