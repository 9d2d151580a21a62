//! Doc comments: the tool description and the parameter descriptions come from them.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// A description taken from `#[doc]` attributes.
pub(crate) enum Doc {
    /// No doc comment at all.
    None,
    /// Every line is a literal: the joined, trimmed text (checked for emptiness at compile time).
    Text(String),
    /// Some line is a macro (`#[doc = include_str!("…")]`): a `concat!` of the lines.
    Expr(TokenStream),
}

pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// Joins doc lines the way schemars does for schema descriptions (one leading space
/// stripped per line, lines joined with `\n`), then trims the whole.
pub(crate) fn doc_of(attrs: &[Attribute]) -> Doc {
    let mut lines = Vec::new();
    let mut exprs = Vec::new();
    let mut all_literal = true;
    for attr in attrs.iter().filter(|a| is_doc(a)) {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                let value = s.value();
                let line = value.strip_prefix(' ').unwrap_or(&value).to_owned();
                exprs.push(quote!(#line));
                lines.push(line);
            }
            other => {
                all_literal = false;
                exprs.push(quote!(#other));
            }
        }
    }
    if exprs.is_empty() {
        Doc::None
    } else if all_literal {
        Doc::Text(lines.join("\n").trim().to_owned())
    } else {
        let mut joined = TokenStream::new();
        for (i, e) in exprs.iter().enumerate() {
            if i > 0 {
                joined.extend(quote!("\n",));
            }
            joined.extend(quote!(#e,));
        }
        Doc::Expr(quote!(::core::concat!(#joined)))
    }
}
