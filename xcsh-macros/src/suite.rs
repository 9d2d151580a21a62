//! `suite![A, B, C]`: an explicit `ToolSuite` of `#[custom_tool]` types.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Token, Type};

use crate::errors::Errors;
use crate::krate::Paths;

pub(crate) fn expand(input: TokenStream, default_paths: Option<Paths>) -> TokenStream {
    let paths = default_paths.unwrap_or_else(Paths::discover);
    let support = paths.support();
    let parser = Punctuated::<Type, Token![,]>::parse_terminated;
    let types = match syn::parse::Parser::parse2(parser, input) {
        Ok(types) => types,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::new();
    let mut seen: Vec<String> = Vec::new();
    let mut adds = Vec::new();
    for ty in &types {
        let key = quote!(#ty).to_string();
        if seen.contains(&key) {
            errors.spanned(
                ty,
                format!("`{key}` is listed twice; each tool appears once in a suite"),
            );
            continue;
        }
        seen.push(key);
        // Spanned at the type: "`X: CustomTool` is not satisfied" lands on the listed name.
        adds.push(quote_spanned!(ty.span()=> .with::<#ty>()));
    }
    let errors = errors.finish();
    quote! {
        {
            #errors
            #support::ToolSuite::new() #(#adds)*
        }
    }
}
