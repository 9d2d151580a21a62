//! The expansion of a valid `#[custom_tool]`: the parameter derives, the `CustomTool` impl
//! and the registration. Everything here was checked by `valid`; nothing reports errors.
//! Type errors rustc still finds (a wrong `execute`) are spanned at the user's tokens.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ItemStruct, LitStr, ReturnType};

use super::ast::{FnInput, Input, ToolFn};
use super::valid::Tool;
use crate::derives;
use crate::docs::is_doc;
use crate::krate::Paths;
use crate::probe::Probe;

pub(crate) fn tool(input: &Input, tool: &Tool, paths: &Paths) -> TokenStream {
    match input {
        Input::Struct(item) => on_struct(item, tool, paths),
        Input::Fn(tool_fn) => on_fn(tool_fn, tool, paths),
    }
}

/// The struct is the parameter object; `execute` calls its inherent `execute`.
fn on_struct(item: &ItemStruct, tool: &Tool, paths: &Paths) -> TokenStream {
    let target = &item.ident;
    let support = paths.support();
    let span = target.span();
    // Private to the generated code (mixed-site hygiene), but located at the struct so type
    // errors about the call point at the user's struct rather than at the attribute.
    let local = Span::mixed_site().located_at(span);
    let ctx = Ident::new("ctx", local);
    let this = Ident::new("this", local);
    // `<T>::execute` prefers an inherent method; when there is none it finds the probe,
    // whose unmet bound carries a readable diagnostic. (Inside `impl CustomTool` it would
    // find the trait's own `execute` and recurse, so the call lives in a free function.)
    let method = Ident::new("execute", span);
    let probe = Probe {
        tag: "Execute",
        support: &support,
        target,
        method: &method,
        receiver: quote!(self),
        arg: quote!(&'a #support::ToolContext),
        signature: "async fn execute(self, ctx: &ToolContext)".into(),
        attribute: "#[custom_tool]",
        returns: "Result<String, ToolError>",
    }
    .items();
    let returns = quote_spanned!(span=>
        impl ::core::future::Future<
            Output = ::core::result::Result<#support::AgentToolResult, #support::ToolError>,
        > + ::core::marker::Send
    );
    // Called through `ExecuteHook`, so a wrong signature reports what to write.
    let at = paths.support_at(span);
    let call = quote_spanned!(span=>
        #at::call_execute::<#target, _, _, _>(<#target>::#method, #this, #ctx)
    );
    let helpers = quote! {
        #probe

        fn __xcsh_execute(#this: #target, #ctx: &#support::ToolContext) -> #returns {
            #call
        }
    };
    let body = quote!(__xcsh_execute(self, #ctx));
    let deny = derives::refuses_unknown(
        tool.allow_unknown_fields,
        &item.attrs,
        item.fields.iter().map(|f| f.attrs.as_slice()),
    );
    let derive = derives::derive_attrs(paths, &tool.manual, deny);
    let tool_impl = custom_tool_impl(tool, paths, &ctx, helpers, body);
    quote! {
        #derive
        #item
        #tool_impl
    }
}

/// The fn stays as written; a struct of its parameters is the tool's type.
fn on_fn(tool_fn: &ToolFn, tool: &Tool, paths: &Paths) -> TokenStream {
    let func = &tool_fn.func;
    let fn_ident = &func.sig.ident;
    let struct_ident = &tool.ident;
    let vis = &func.vis;
    let docs: Vec<&Attribute> = func.attrs.iter().filter(|a| is_doc(a)).collect();
    let struct_doc = if docs.is_empty() {
        let description = &tool.description;
        quote!(#[doc = #description])
    } else {
        quote!(#(#docs)*)
    };
    let params: Vec<_> = tool_fn
        .args
        .iter()
        .filter_map(|arg| match arg {
            FnInput::Param(param) => Some(param),
            _ => None,
        })
        .collect();
    let fields = params.iter().map(|p| {
        let (ident, ty, attrs) = (&p.ident, &p.ty, &p.attrs);
        quote!(#(#attrs)* #vis #ident: #ty)
    });
    let struct_attrs = &tool_fn.struct_attrs;
    let deny = derives::refuses_unknown(
        tool.allow_unknown_fields,
        &[],
        params.iter().map(|p| p.attrs.as_slice()),
    );
    let derive = derives::derive_attrs(paths, &tool.manual, deny);

    let output_span = match &func.sig.output {
        ReturnType::Default => fn_ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    // Private to the generated code (mixed-site hygiene), located where errors should point.
    let ctx = Ident::new("ctx", Span::mixed_site().located_at(fn_ident.span()));
    let future = Ident::new("future", Span::mixed_site().located_at(output_span));
    let bindings = params.iter().map(|p| &p.ident);
    let call_args = tool_fn.args.iter().map(|arg| match arg {
        FnInput::Param(param) => {
            let ident = &param.ident;
            quote!(#ident)
        }
        _ => quote!(#ctx),
    });
    let call = quote_spanned!(fn_ident.span()=> #fn_ident(#(#call_args),*));
    let at = paths.support_at(output_span);
    let convert = quote_spanned!(output_span=> #at::tool_fn_output(#future));
    let body = quote! {
        let Self { #(#bindings),* } = self;
        let #future = #call;
        #convert
    };
    let tool_impl = custom_tool_impl(tool, paths, &ctx, TokenStream::new(), body);
    quote! {
        #func

        #struct_doc
        #derive
        #(#struct_attrs)*
        #vis struct #struct_ident {
            #(#fields,)*
        }

        #tool_impl
    }
}

/// The `CustomTool` impl and the registration, inside one `const _: () = { … };`.
///
/// `execute_body` is the body of `CustomTool::execute` (it sees `self` and `ctx`);
/// `helpers` are items it needs, placed in the same block.
fn custom_tool_impl(
    tool: &Tool,
    paths: &Paths,
    ctx: &Ident,
    helpers: TokenStream,
    execute_body: TokenStream,
) -> TokenStream {
    let support = paths.support();
    let target = &tool.ident;
    let name = LitStr::new(&tool.name, Span::call_site());
    let label = LitStr::new(&tool.label, Span::call_site());
    let description = &tool.description;
    let annotations = (!tool.annotations.is_empty()).then(|| {
        let flags = tool.annotations.iter().map(|(key, value)| {
            let method = Ident::new(key, Span::call_site());
            quote!(.#method(#value))
        });
        quote!(const ANNOTATIONS: #support::ToolAnnotations = #support::ToolAnnotations::new() #(#flags)*;)
    });
    let pending = tool.pending.then(|| {
        quote!(
            const PUSHES_PENDING_ACTIONS: bool = true;
        )
    });
    // Spanned at the type, so an output type that is not `Serialize + JsonSchema` is reported
    // there.
    let output = tool.output.as_ref().map(|ty| {
        let at = paths.support_at(ty.span());
        quote_spanned! {ty.span()=>
            fn output_schema() -> ::core::option::Option<::std::sync::Arc<#support::JsonObject>> {
                ::core::option::Option::Some(#at::output_schema_of::<#ty>())
            }
        }
    });
    let registration = tool.register.then(|| {
        let inventory = &paths.inventory;
        quote! {
            #inventory::submit! {
                #support::ToolRegistration {
                    name: <#target as #support::CustomTool>::NAME,
                    module_path: ::core::module_path!(),
                    make: #support::custom_tool::<#target>,
                }
            }
        }
    });
    // The impl itself is spanned at the target so "`X` is not `Send`"-style errors about the
    // parameters point at the user's struct.
    let impl_head = quote_spanned!(target.span()=> impl #support::CustomTool for #target);
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
                #output

                fn execute(
                    self,
                    #ctx: &#support::ToolContext,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<#support::AgentToolResult, #support::ToolError>,
                > + ::core::marker::Send {
                    #execute_body
                }
            }

            #registration
        };
    }
}
