//! Calling a user's inherent method by the name a trait also uses, with readable errors.
//!
//! `#[custom_tool]` and `#[pending]` generate `impl Trait for T` whose methods call the
//! user's inherent `T::execute`/`T::apply`/`T::reject`. `<T>::method` resolves to the
//! inherent method when there is one; when there is none, it would silently find the
//! trait's own method (and recurse). So next to each call the macro defines a *probe*
//! trait with a method of the same name whose where-clause cannot hold: without an inherent
//! method, the call resolves to the probe and the unmet bound reports the
//! `#[diagnostic::on_unimplemented]` message below, on the user's struct.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// What a probe needs to say.
pub(crate) struct Probe<'a> {
    /// `Execute`, `Apply`, `Reject`: names the helper traits.
    pub(crate) tag: &'a str,
    pub(crate) target: &'a Ident,
    /// The user's method.
    pub(crate) method: &'a Ident,
    /// `self` or `&mut self`.
    pub(crate) receiver: TokenStream,
    /// The second argument's type, with lifetime `'a`: `&'a ToolContext`, `&'a str`.
    pub(crate) arg: TokenStream,
    /// The signature to ask for: `async fn execute(self, ctx: &ToolContext)`.
    pub(crate) signature: String,
    /// The attribute that needs it: `#[custom_tool]`, `#[pending(apply)]`.
    pub(crate) attribute: &'a str,
    /// A return type to suggest.
    pub(crate) returns: &'a str,
}

impl Probe<'_> {
    /// The probe trait, its impl for the target, and the "is it async" check function
    /// (returned as the function's name).
    pub(crate) fn items(&self) -> (TokenStream, Ident) {
        let Probe {
            tag,
            target,
            method,
            receiver,
            arg,
            signature,
            attribute,
            returns,
        } = self;
        // These names show up in rustc's notes, so they say what is wrong.
        let missing = format_ident!("__XcshNeedsInherent{tag}");
        let probe = format_ident!("__XcshMissingInherent{tag}");
        let is_async_trait = format_ident!("__Xcsh{tag}IsAsync");
        let is_async_fn = format_ident!("__xcsh_{}_is_async", tag.to_lowercase());
        let message = format!("`{{Self}}` has no inherent `{signature}`");
        let label = format!("{attribute} calls `{{Self}}::{method}`");
        let note = format!("add `impl {{Self}} {{{{ {signature} -> {returns} {{{{ … }}}} }}}}`");
        let not_async = format!("`{method}` must be an `async fn`, but it returned `{{Self}}`");
        let not_async_label = format!("expected `{signature} -> …`");
        let items = quote! {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait #missing<'a> {}
            trait #probe: ::core::marker::Sized {
                fn #method<'a>(#receiver, _: #arg) -> ::core::future::Ready<()>
                where
                    Self: #missing<'a>,
                {
                    ::core::unreachable!()
                }
            }
            impl #probe for #target {}

            #[diagnostic::on_unimplemented(message = #not_async, label = #not_async_label)]
            trait #is_async_trait {}
            impl<F: ::core::future::Future> #is_async_trait for F {}
            fn #is_async_fn<F: #is_async_trait>(future: F) -> F {
                future
            }
        };
        (items, is_async_fn)
    }
}
