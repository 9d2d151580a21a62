//! The expansion of a valid `#[pending]`: a `PendingAction` impl that calls the struct's
//! inherent hooks, with the label interpolated from its fields. Nothing here reports errors;
//! type errors rustc still finds (a hook's wrong signature) are spanned at the hook's key.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Expr, Fields, Ident, ItemStruct};

use super::attr::Source;
use super::valid::{Details, Label, Pending};
use crate::derives::ManualDerives;
use crate::format::named_placeholders;
use crate::krate::Paths;
use crate::probe::Probe;

pub(crate) fn pending(item: &ItemStruct, pending: &Pending, paths: &Paths) -> TokenStream {
    let target = &item.ident;
    let support = paths.support();
    let span = target.span();
    let mut helpers = hook(
        target,
        paths,
        Hook {
            method: &pending.apply,
            tag: "Apply",
            returns: "Result<String, ToolError>",
        },
    );
    let mut methods = apply_method(&support, span);
    if let Some(reject) = &pending.reject {
        helpers.extend(hook(
            target,
            paths,
            Hook {
                method: reject,
                tag: "Reject",
                returns: "Option<String>",
            },
        ));
        methods.extend(reject_method(&support, span));
    }
    methods.extend(label(item, &pending.label));
    let (derive, details) = details(item, pending.details.as_ref(), paths);
    methods.extend(details);
    methods.extend(source(pending.source.as_ref(), &support));
    if let Some(method) = &pending.effect_digest {
        // At the method's name: a wrong return type is reported there.
        let call = quote_spanned!(method.span()=> <#target>::#method(self));
        methods.extend(quote! {
            fn effect_digest(&self) -> ::std::string::String {
                #call
            }
        });
    }

    if let Some(method) = &pending.select {
        // At the method's name: a wrong signature is reported there.
        let files = Ident::new("files", method.span());
        let call = quote_spanned!(method.span()=> <#target>::#method(self, #files));
        methods.extend(quote! {
            fn select_files(
                &mut self,
                #files: &[::std::string::String],
            ) -> ::core::result::Result<(), ::std::string::String> {
                #call
            }
        });
    }
    let mut registration = TokenStream::new();
    if let Some(at) = pending.durable {
        // The kind is the struct's path: unique in a program, stable across its restarts.
        let kind = quote!(::core::concat!(
            ::core::module_path!(),
            "::",
            ::core::stringify!(#target)
        ));
        // At the `durable` key: a struct that is not `Serialize + Deserialize` is reported
        // there.
        // One use of the `Durable` bound, so a struct that is not `Serialize + Deserialize`
        // is one error; `durable` itself goes through the registered kind's trait object.
        let mut target_at = target.clone();
        target_at.set_span(at);
        let restore = quote_spanned!(at=> <#target_at as #support::Durable>::restore);
        let save = quote_spanned!(at=> <#target_at as #support::Durable>::save);
        methods.extend(quote! {
            fn durable(&self) -> ::core::option::Option<#support::DurableState> {
                #support::durable_state_of(self, #kind)
            }
        });
        registration = quote! {
            #support::inventory::submit! {
                #support::DurableKind {
                    kind: #kind,
                    restore: #restore,
                    save: #save,
                }
            }
        };
    }

    let impl_head = quote_spanned!(span=> impl #support::PendingAction for #target);
    quote! {
        #derive
        #item

        const _: () = {
            #helpers
            #registration

            #[automatically_derived]
            #impl_head {
                #methods
            }
        };
    }
}

/// A user's hook method, and what to say when it is missing.
struct Hook<'a> {
    method: &'a Ident,
    /// `Apply` or `Reject`: names the probe and the `call_*` helper.
    tag: &'static str,
    /// A return type to suggest.
    returns: &'static str,
}

/// The free function that calls the user's hook (`__xcsh_apply`, `__xcsh_reject`) and the
/// probe that makes a missing hook readable. The call goes through `ApplyHook`/`RejectHook`,
/// so a wrong signature says what to write; it is located at the hook's key (or the method
/// named there), where the author can act on it.
fn hook(target: &Ident, paths: &Paths, hook: Hook<'_>) -> TokenStream {
    let Hook {
        method,
        tag,
        returns,
    } = hook;
    let support = paths.support();
    let lower = tag.to_lowercase();
    let probe = Probe {
        tag,
        support: &support,
        target,
        method,
        receiver: quote!(&mut self),
        arg: quote!(&'a str),
        signature: format!("async fn {method}(&mut self, reason: &str)"),
        attribute: &format!("#[pending({lower})]"),
        returns,
    }
    .items();
    let at = method.span();
    // Private to the generated code (mixed-site hygiene), located at the hook's name.
    let local = Span::mixed_site().located_at(at);
    let this = Ident::new("this", local);
    let reason = Ident::new("reason", local);
    let helper = Ident::new(&format!("__xcsh_{lower}"), Span::call_site());
    let call_hook = Ident::new(&format!("call_{lower}"), at);
    let output = if tag == "Apply" {
        result_future(&support, at)
    } else {
        option_future(&support, at)
    };
    let path = paths.support_at(at);
    // The type, too, at the hook: without an inherent method the probe's bound is checked
    // both where `<T>::method` is named and where it is called, and two reports at one
    // place are one.
    let mut target_at = target.clone();
    target_at.set_span(at);
    let call = quote_spanned!(at=>
        #path::#call_hook::<#target_at, _, _, _>(<#target_at>::#method, #this, #reason)
    );
    quote! {
        #probe
        fn #helper(#this: &mut #target, #reason: &str) -> #output {
            #call
        }
    }
}

fn apply_method(support: &TokenStream, span: Span) -> TokenStream {
    let returns = result_future(support, span);
    quote! {
        fn apply(&mut self, reason: &str) -> #returns {
            __xcsh_apply(self, reason)
        }
    }
}

fn reject_method(support: &TokenStream, span: Span) -> TokenStream {
    let returns = option_future(support, span);
    quote! {
        fn reject(&mut self, reason: &str) -> #returns {
            __xcsh_reject(self, reason)
        }
    }
}

/// What `apply` returns, stated at `at`: the helper states it at the hook's name, where a
/// failed bound on the call is reported too (one error, not two).
fn result_future(support: &TokenStream, at: Span) -> TokenStream {
    quote_spanned!(at=>
        impl ::core::future::Future<
            Output = ::core::result::Result<#support::AgentToolResult, #support::ToolError>,
        > + ::core::marker::Send
    )
}

fn option_future(support: &TokenStream, at: Span) -> TokenStream {
    quote_spanned!(at=>
        impl ::core::future::Future<
            Output = ::core::option::Option<#support::AgentToolResult>,
        > + ::core::marker::Send
    )
}

fn label(item: &ItemStruct, label: &Label) -> TokenStream {
    let target = &item.ident;
    match label {
        Label::Format(lit, extra) => {
            let text = lit.value();
            let named_args: Vec<String> = extra
                .iter()
                .filter_map(|a| a.name.as_ref().map(ToString::to_string))
                .collect();
            let mut bound: Vec<Ident> = Vec::new();
            let mut bind = |ident: &Ident| {
                if !bound.iter().any(|b| b == ident) {
                    bound.push(ident.clone());
                }
            };
            if let Fields::Named(named) = &item.fields {
                let field = |name: &str| {
                    named
                        .named
                        .iter()
                        .filter_map(|f| f.ident.as_ref())
                        .find(|i| *i == name)
                };
                for name in named_placeholders(&text) {
                    if named_args.contains(&name) {
                        continue;
                    }
                    if let Some(ident) = field(&name) {
                        bind(ident);
                    }
                }
                // Bare field names as arguments: `label = "{} files", count`.
                for arg in extra {
                    if let Expr::Path(p) = &arg.expr
                        && let Some(ident) = p.path.get_ident().and_then(|i| field(&i.to_string()))
                    {
                        bind(ident);
                    }
                }
            }
            // The fields the label names are brought into scope by reference, so `{count}`
            // works as implicit format capture does for locals.
            let bindings = (!bound.is_empty()).then(|| quote!(let Self { #(#bound,)* .. } = self;));
            quote! {
                fn label(&self) -> ::std::string::String {
                    #bindings
                    ::std::format!(#lit #(, #extra)*)
                }
            }
        }
        Label::Method(method) => {
            let call = quote_spanned!(method.span()=> ::std::string::ToString::to_string(&<#target>::#method(self)));
            quote! {
                fn label(&self) -> ::std::string::String {
                    #call
                }
            }
        }
    }
}

/// The `details` method, and the `Serialize` derive it needs for the whole struct.
fn details(
    item: &ItemStruct,
    details: Option<&Details>,
    paths: &Paths,
) -> (TokenStream, TokenStream) {
    let Some(details) = details else {
        return (TokenStream::new(), TokenStream::new());
    };
    let target = &item.ident;
    let support = paths.support();
    let mut derive = TokenStream::new();
    let mut checks = TokenStream::new();
    let value = match details {
        Details::Whole => {
            if !ManualDerives::of(&item.attrs).serialize {
                let serde = &paths.serde;
                let serde_str = paths.serde_str();
                derive = quote! {
                    #[derive(#serde::Serialize)]
                    #[serde(crate = #serde_str)]
                };
                // Each field that cannot be shown is named, with what to write (serde's
                // own hint would ask for a serde dependency).
                let fields = item.fields.iter().map(|field| {
                    let ty = &field.ty;
                    let at = paths.support_at(syn::spanned::Spanned::span(ty));
                    quote_spanned!(syn::spanned::Spanned::span(ty)=> #at::details_value::<#ty>)
                });
                checks = quote! {
                    #( let _ = #fields; )*
                };
            }
            quote_spanned!(target.span()=> self)
        }
        Details::Field(field) => quote_spanned!(field.span()=> &self.#field),
        Details::Method(method) => quote_spanned!(method.span()=> &<#target>::#method(self)),
    };
    let at = match details {
        Details::Whole => support.clone(),
        Details::Field(field) => paths.support_at(field.span()),
        Details::Method(method) => paths.support_at(method.span()),
    };
    let serde_json = &paths.serde_json;
    let method = quote! {
        fn details(&self) -> ::core::option::Option<#serde_json::Value> {
            #checks
            #at::details_value(#value)
        }
    };
    (derive, method)
}

fn source(source: Option<&Source>, support: &TokenStream) -> TokenStream {
    match source {
        Some(Source::Name(lit)) => quote! {
            fn source_tool_name(&self) -> &str {
                #lit
            }
        },
        Some(Source::Tool(path)) => {
            let name = quote_spanned!(syn::spanned::Spanned::span(path)=> <#path as #support::CustomTool>::NAME);
            quote! {
                fn source_tool_name(&self) -> &str {
                    #name
                }
            }
        }
        None => TokenStream::new(),
    }
}
