//! An error accumulator: every problem in one invocation is reported together.
//!
//! Modelled on serde_derive's `Ctxt`: errors are pushed as they are found and turned into
//! `compile_error!` invocations at the end, so a user fixes five mistakes in one build
//! instead of five builds. Dropping it unchecked is a bug in the macro, caught in tests.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Collects errors while parsing and validating one macro invocation.
pub(crate) struct Errors {
    errors: Option<Vec<syn::Error>>,
}

impl Errors {
    pub(crate) fn new() -> Self {
        Errors {
            errors: Some(Vec::new()),
        }
    }

    fn list(&mut self) -> &mut Vec<syn::Error> {
        self.errors
            .as_mut()
            .expect("Errors used after being finished")
    }

    /// An error spanning `tokens` (the whole span, as `syn::Error::new_spanned` does).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.list().push(syn::Error::new_spanned(tokens, message));
    }

    /// An error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.list().push(syn::Error::new(span, message));
    }

    /// Whether nothing is wrong so far: the real expansion runs only then, a fallback
    /// otherwise.
    pub(crate) fn is_empty(&self) -> bool {
        self.errors.as_ref().is_none_or(Vec::is_empty)
    }

    pub(crate) fn push(&mut self, error: syn::Error) {
        self.list().push(error);
    }

    /// Ends collection: the `compile_error!`s to emit next to the item (empty if none).
    pub(crate) fn finish(mut self) -> TokenStream {
        let errors = self.errors.take().unwrap_or_default();
        errors.into_iter().map(|e| e.to_compile_error()).collect()
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if self.errors.is_some() && !std::thread::panicking() {
            panic!("xcsh-macros bug: errors dropped without being reported");
        }
    }
}

/// "; did you mean `x`?" for the candidate closest to `given`, or nothing.
pub(crate) fn did_you_mean<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    suggestion(closest(given, candidates))
}

/// "; did you mean `x`?", or nothing.
pub(crate) fn suggestion(meant: Option<&str>) -> String {
    meant
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

pub(crate) use xcsh_names::closest;
