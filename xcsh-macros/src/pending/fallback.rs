//! What `#[pending]` emits when anything is wrong, next to the errors: the struct, and a
//! stub `PendingAction` impl so that `ctx.push_pending_action(T { … })` and
//! `store.push(T { … })` do not add "`T` is not a `PendingAction`" to the real error. The
//! stub never runs: the crate does not compile.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use crate::derives;
use crate::krate::Paths;

pub(crate) fn pending(item: &ItemStruct, paths: &Paths) -> TokenStream {
    let generic = !item.generics.params.is_empty();
    let item = derives::without_orphan_helpers(item.clone());
    if generic {
        // No one impl to stub; the struct's uses are errors of their own.
        return quote!(#item);
    }
    let target = &item.ident;
    let support = paths.support();
    let result = quote!(::core::result::Result<#support::AgentToolResult, #support::ToolError>);
    quote! {
        #item

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
