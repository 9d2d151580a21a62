//! `#[custom_tool]`, in stages as thiserror's impl crate is: the item is read into a model
//! (`ast`), the attribute into typed keys (`attr`), both are checked in one place (`valid`),
//! and then either the real impls are generated (`expand`, which cannot fail) or, after any
//! error, the item with stub impls (`fallback`), so one mistake is one error.

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::Errors;
use crate::krate::Paths;

/// The `#[custom_tool]` expansion. `default_paths` overrides Cargo.toml discovery (tests).
pub(crate) fn expand(
    attr: TokenStream,
    item: TokenStream,
    default_paths: Option<Paths>,
) -> TokenStream {
    let mut errors = Errors::new();
    let attr = attr::parse(attr, default_paths, &mut errors);
    let output = match ast::Input::parse(item.clone(), &mut errors) {
        Some(input) => {
            let tool = valid::check(&input, &attr, &mut errors);
            if errors.is_empty() {
                expand::tool(&input, &tool, &attr.paths)
            } else {
                fallback::tool(&input, &tool, &attr.paths)
            }
        }
        None => fallback::misplaced(item, &attr.paths),
    };
    let errors = errors.finish();
    quote!(#output #errors)
}
