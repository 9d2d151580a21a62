//! Pointing at an item an attribute does not belong on.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

/// The token to point at when an attribute is on the wrong kind of item: its keyword.
pub(crate) fn keyword(item: &Item) -> TokenStream {
    match item {
        Item::Enum(e) => {
            let t = e.enum_token;
            quote!(#t)
        }
        Item::Union(u) => {
            let t = u.union_token;
            quote!(#t)
        }
        Item::Fn(f) => {
            let t = f.sig.fn_token;
            quote!(#t)
        }
        Item::Trait(t) => {
            let t = t.trait_token;
            quote!(#t)
        }
        Item::Impl(i) => {
            let t = i.impl_token;
            quote!(#t)
        }
        other => quote!(#other),
    }
}
