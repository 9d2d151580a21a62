//! How generated code names its dependencies.
//!
//! Everything goes through the facade's hidden `__private` module (`::xcsh::__private::serde`,
//! `…::schemars`, `…::xcsh_core`, …), so a user's crate needs `xcsh` alone — under any name:
//! `proc-macro-crate` reads the user's Cargo.toml to find what `xcsh` is called there. A crate
//! that depends on `xcsh-core` but not the facade (our own workspace crates) gets
//! `::xcsh_core` for the runtime and its own `::serde`, `::schemars`, `::serde_json` and
//! `::inventory`. Paths start with `::`, so no local item can shadow them.
//!
//! Runtime items are named only through the runtime's hidden `__macro_support` module
//! (`…::xcsh_core::__macro_support::CustomTool`), never through its public paths, which may
//! move: `Paths` does not even hold the runtime's root.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::{Ident, Path};

use crate::args::{Args, Value};
use crate::errors::Errors;

/// Paths to everything generated code uses.
#[derive(Clone)]
pub(crate) struct Paths {
    /// The runtime's hidden module for generated code (`…::xcsh_core::__macro_support`): the
    /// only way expansions name runtime items, so the runtime's public paths may change.
    support: TokenStream,
    pub(crate) serde: TokenStream,
    pub(crate) serde_json: TokenStream,
    pub(crate) schemars: TokenStream,
    pub(crate) inventory: TokenStream,
}

impl Paths {
    /// Paths through a facade crate at `root` (e.g. `::xcsh`, `::tools_fw`).
    pub(crate) fn facade(root: TokenStream) -> Self {
        Paths {
            support: quote!(#root::__private::xcsh_core::__macro_support),
            serde: quote!(#root::__private::serde),
            serde_json: quote!(#root::__private::serde_json),
            schemars: quote!(#root::__private::schemars),
            inventory: quote!(#root::__private::inventory),
        }
    }

    fn core_only(core: TokenStream) -> Self {
        Paths {
            support: quote!(#core::__macro_support),
            serde: quote!(::serde),
            serde_json: quote!(::serde_json),
            schemars: quote!(::schemars),
            inventory: quote!(::inventory),
        }
    }

    /// From a user's `crate = path` (a facade-like crate with `__private`).
    pub(crate) fn from_override(path: &Path) -> Self {
        Paths::facade(path.to_token_stream())
    }

    /// The `crate = …` key if given, else `default` (tests), else discovery.
    pub(crate) fn from_args(args: &Args, default: Option<Paths>, errors: &mut Errors) -> Self {
        match args.value("crate") {
            Some(Value::Path(path)) => Paths::from_override(path),
            Some(Value::Str(lit)) => match lit.parse::<Path>() {
                Ok(path) => Paths::from_override(&path),
                Err(_) => {
                    errors.spanned(lit, "`crate` expects a path such as `::my_facade`");
                    Paths::discover()
                }
            },
            _ => default.unwrap_or_else(Paths::discover),
        }
    }

    /// The paths for the crate being compiled, read from its Cargo.toml.
    pub(crate) fn discover() -> Self {
        let root = |name: &str| {
            let ident = Ident::new(name, Span::call_site());
            quote!(::#ident)
        };
        match crate_name("xcsh") {
            // `Itself` is the facade's own examples, tests and doctests (the facade library
            // does not use its macros), where the library is the extern crate `xcsh`.
            Ok(FoundCrate::Itself) => return Paths::facade(root("xcsh")),
            Ok(FoundCrate::Name(name)) => return Paths::facade(root(&name)),
            Err(_) => {}
        }
        match crate_name("xcsh-core") {
            Ok(FoundCrate::Name(name)) => Paths::core_only(root(&name)),
            Ok(FoundCrate::Itself) => Paths::core_only(root("xcsh_core")),
            // Not found (or no Cargo.toml to read): assume the facade; rustc's "could not
            // find `xcsh`" then says what is missing.
            Err(_) => Paths::facade(root("xcsh")),
        }
    }

    /// The runtime's hidden module of helpers for generated code (`__macro_support`).
    pub(crate) fn support(&self) -> TokenStream {
        self.support.clone()
    }

    /// [`Paths::support`] with every token at `span`: a call through it that fails a bound
    /// is reported there (`quote_spanned!` does not respan interpolated paths, and a call
    /// whose path sits at the attribute would be reported at the attribute).
    pub(crate) fn support_at(&self, span: Span) -> TokenStream {
        respan(self.support(), span)
    }

    /// The string form for `#[serde(crate = "…")]`.
    pub(crate) fn serde_str(&self) -> String {
        self.serde.to_string().replace(' ', "")
    }

    /// The string form for `#[schemars(crate = "…")]`.
    pub(crate) fn schemars_str(&self) -> String {
        self.schemars.to_string().replace(' ', "")
    }
}

fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                return TokenTree::Group(inner);
            }
            token.set_span(span);
            token
        })
        .collect()
}
