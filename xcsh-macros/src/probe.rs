//! Calling a user's inherent method by the name a trait also uses, with readable errors.
//!
//! `#[custom_tool]` and `#[pending]` generate `impl Trait for T` whose methods call the
//! user's inherent `T::execute`/`T::apply`/`T::reject`. `<T>::method` resolves to the
//! inherent method when there is one; when there is none, it would silently find the
//! trait's own method (and recurse). So next to each call the expansion brings into scope a
//! *probe* trait with a method of the same name whose where-clause cannot hold: without an
//! inherent method, the call resolves to the probe and the unmet bound reports its
//! `#[diagnostic::on_unimplemented]` message on the user's struct.
//!
//! For the usual names the probes are defined once, in `xcsh_core::__macro_support`, and the
//! expansion only imports one. A hook renamed in `#[pending(apply = commit)]` needs a probe
//! method of that name, so it gets a local one.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// What a probe needs to say.
pub(crate) struct Probe<'a> {
    /// `Execute`, `Apply`, `Reject`: names the probe traits.
    pub(crate) tag: &'a str,
    /// `…::__macro_support`.
    pub(crate) support: &'a TokenStream,
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
    /// The items that put a probe in scope for the call: an import of the shared one, or,
    /// for a renamed method, a local trait and its impl for the target.
    pub(crate) fn items(&self) -> TokenStream {
        let Probe {
            tag,
            support,
            target,
            method,
            receiver,
            arg,
            signature,
            attribute,
            returns,
        } = self;
        // These names show up in rustc's notes, so they say what is wrong.
        let probe = format_ident!("MissingInherent{tag}");
        if **method == tag.to_lowercase() {
            return quote!(use #support::#probe as _;);
        }
        let missing = format_ident!("__XcshNeedsInherent{tag}");
        let probe = format_ident!("__XcshMissingInherent{tag}");
        let message = format!("`{{Self}}` has no inherent `{signature}`");
        let label = format!("{attribute} calls `{{Self}}::{method}`");
        let note = format!("add `impl {{Self}} {{{{ {signature} -> {returns} {{{{ … }}}} }}}}`");
        quote! {
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
        }
    }
}
