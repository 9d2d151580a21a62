//! What `#[pending]` emits when anything is wrong, next to the errors: the struct, and a
//! stub `PendingAction` impl so that `ctx.push_pending_action(T { … })` and
//! `store.push(T { … })` do not add "`T` is not a `PendingAction`" to the real error. The
//! stub never runs: the crate does not compile.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Item, ItemStruct};

use crate::derives;
use crate::krate::Paths;

pub(crate) fn pending(item: &ItemStruct, paths: &Paths) -> TokenStream {
    let generic = !item.generics.params.is_empty();
    let item = derives::without_orphan_helpers(item.clone());
    // A generic struct has no one impl to stub; its uses are errors of their own.
    let stub = (!generic).then(|| stub(&item.ident, paths));
    quote!(#item #stub)
}

/// An item #[pending] does not go on (reported): emitted as it is, and an enum is given the
/// stub too, so pushing it adds nothing to that error.
pub(crate) fn misplaced(item: TokenStream, paths: &Paths) -> TokenStream {
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Enum(item)) if item.generics.params.is_empty() => {
            let stub = stub(&item.ident, paths);
            quote!(#item #stub)
        }
        _ => item,
    }
}

/// `PendingAction` for `target`, with bodies that panic.
fn stub(target: &Ident, paths: &Paths) -> TokenStream {
    let support = paths.support();
    let result = quote!(::core::result::Result<#support::AgentToolResult, #support::ToolError>);
    quote! {
        impl #support::PendingAction for #target {
            fn label(&self) -> ::std::string::String {
                #support::after_compile_error()
            }

            fn apply(
                &mut self,
                _: &str,
            ) -> impl ::core::future::Future<Output = #result> + ::core::marker::Send {
                #support::after_compile_error::<::core::future::Ready<#result>>()
            }
        }
    }
}
