//! What `#[custom_tool]` emits when anything is wrong, next to the errors: the item, and
//! stub impls of the traits its uses need, so that one mistake is one error. Without them
//! `Session::builder().custom::<T>()`, `suite![T]` and `T::NAME` would each add "`T` is not
//! a `CustomTool`" (or "cannot find type `T`", for the fn form's struct) to the real error.
//! The stubs never run: the crate does not compile.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, Item, LitStr};

use super::ast::Input;
use super::valid::Tool;
use crate::derives::{self, ManualDerives};
use crate::docs::is_doc;
use crate::krate::Paths;
use crate::names;

pub(crate) fn tool(input: &Input, tool: &Tool, paths: &Paths) -> TokenStream {
    match input {
        Input::Struct(item) => {
            let generic = !item.generics.params.is_empty();
            let item = derives::without_orphan_helpers(item.clone());
            // A generic struct has no one impl to stub; its uses are errors of their own.
            let stubs = (!generic).then(|| stubs(&item.ident, &tool.name, tool.manual, paths));
            quote!(#item #stubs)
        }
        Input::Fn(tool_fn) => {
            let func = &tool_fn.func;
            let vis = &func.vis;
            let ident = &tool.ident;
            let docs = func.attrs.iter().filter(|a| is_doc(a));
            let stubs = stubs(ident, &tool.name, tool.manual, paths);
            quote! {
                #func

                #(#docs)*
                #vis struct #ident {}

                #stubs
            }
        }
    }
}

/// An item #[custom_tool] does not go on (reported): emitted as it is, and an enum is given
/// the stubs too, so its uses as a tool add nothing to that error.
pub(crate) fn misplaced(item: TokenStream, paths: &Paths) -> TokenStream {
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Enum(item)) if item.generics.params.is_empty() => {
            let name = names::snake_case(&item.ident.to_string());
            let stubs = stubs(&item.ident, &name, ManualDerives::of(&item.attrs), paths);
            quote!(#item #stubs)
        }
        _ => item,
    }
}

/// `Deserialize`, `JsonSchema` (unless derived by hand) and `CustomTool` for `target`, with
/// bodies that panic. Not registered: no session finds a stub.
fn stubs(target: &Ident, name: &str, manual: ManualDerives, paths: &Paths) -> TokenStream {
    let support = paths.support();
    let serde = &paths.serde;
    let schemars = &paths.schemars;
    let stub = quote!(#support::after_compile_error());
    let name = LitStr::new(name, Span::call_site());
    let deserialize = (!manual.deserialize).then(|| {
        quote! {
            impl<'de> #serde::Deserialize<'de> for #target {
                fn deserialize<D: #serde::Deserializer<'de>>(
                    _: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    #stub
                }
            }
        }
    });
    let json_schema = (!manual.json_schema).then(|| {
        quote! {
            impl #schemars::JsonSchema for #target {
                fn schema_name() -> ::std::borrow::Cow<'static, str> {
                    #stub
                }
                fn json_schema(_: &mut #schemars::SchemaGenerator) -> #schemars::Schema {
                    #stub
                }
            }
        }
    });
    let result = quote!(::core::result::Result<#support::AgentToolResult, #support::ToolError>);
    quote! {
        const _: () = {
            #deserialize
            #json_schema

            impl #support::CustomTool for #target {
                const NAME: &'static str = #name;
                const DESCRIPTION: &'static str = "";

                fn execute(
                    self,
                    _: &#support::ToolContext,
                ) -> impl ::core::future::Future<Output = #result> + ::core::marker::Send {
                    #support::after_compile_error::<::core::future::Ready<#result>>()
                }
            }
        };
    }
}
