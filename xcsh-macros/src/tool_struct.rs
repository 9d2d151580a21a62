//! `#[custom_tool]` on a struct: the fields are the parameters, an inherent
//! `async fn execute(self, ctx: &ToolContext) -> R` runs the tool.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Fields, Ident, ItemStruct};

use crate::errors::Errors;
use crate::krate::Paths;
use crate::probe::Probe;
use crate::tool::{self, Form};

pub(crate) fn expand(
    attr: TokenStream,
    item: ItemStruct,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> TokenStream {
    let target = &item.ident;
    let mut fatal = false;
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            format!(
                "#[custom_tool] structs cannot be generic: a tool has one name and one parameter schema\nuse concrete field types in `{target}`"
            ),
        );
        fatal = true;
    }
    match &item.fields {
        Fields::Named(_) => {}
        Fields::Unnamed(fields) => {
            errors.spanned(
                fields,
                format!("a tool's parameters are a JSON object, so #[custom_tool] needs named fields: `struct {target} {{ path: String }}`"),
            );
            fatal = true;
        }
        Fields::Unit => {
            errors.spanned(
                target,
                format!(
                    "a unit struct has no parameter object: write `struct {target} {{}}` for a tool without parameters"
                ),
            );
            fatal = true;
        }
    }
    let config = tool::parse_config(
        attr,
        Form::Struct,
        target,
        &item.attrs,
        default_paths,
        errors,
    );
    let manual = tool::check_no_manual_derives(&item.attrs, errors);
    if fatal {
        return quote!(#item);
    }

    let core = &config.paths.core;
    let support = config.paths.support();
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
        arg: quote!(&'a #core::ToolContext),
        signature: "async fn execute(self, ctx: &ToolContext)".into(),
        attribute: "#[custom_tool]",
        returns: "Result<String, ToolError>",
    }
    .items();
    let returns = quote_spanned!(span=>
        impl ::core::future::Future<
            Output = ::core::result::Result<#core::AgentToolResult, #core::ToolError>,
        > + ::core::marker::Send
    );
    let output = config.paths.support_at(span);
    let call = quote_spanned!(span=> #output::execute_output(<#target>::#method(#this, #ctx)));
    let helpers = quote! {
        #probe

        fn __xcsh_execute(#this: #target, #ctx: &#core::ToolContext) -> #returns {
            #call
        }
    };
    let body = quote!(__xcsh_execute(self, #ctx));
    let derive = tool::derive_attrs(&config.paths, &manual);
    let tool_impl = tool::expand_impl(target, &config, &ctx, helpers, body);
    quote! {
        #derive
        #item
        #tool_impl
    }
}
