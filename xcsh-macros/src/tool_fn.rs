//! `#[custom_tool]` on an `async fn`: the arguments are the parameters. The macro generates
//! a parameter struct (the fn's name in CamelCase) that is also the tool's type, so
//! `Session::builder().custom::<Grep>()` registers `async fn grep(…)`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, ReturnType, Type};

use crate::docs::is_doc;
use crate::errors::Errors;
use crate::krate::Paths;
use crate::names;
use crate::tool::{self, Form};

/// One JSON parameter: a fn argument other than the context.
struct Param {
    ident: Ident,
    ty: Type,
    /// Doc comments and `#[serde]`/`#[schemars]` attributes, moved to the struct field.
    attrs: Vec<Attribute>,
}

/// An argument in call order.
enum Arg {
    Param(usize),
    Context,
}

fn is_tool_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) => p
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "ToolContext"),
            _ => false,
        },
        Type::Paren(p) => is_tool_context(&p.elem),
        Type::Group(g) => is_tool_context(&g.elem),
        _ => false,
    }
}

pub(crate) fn expand(
    attr: TokenStream,
    mut func: ItemFn,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> TokenStream {
    let fn_ident = func.sig.ident.clone();
    let mut fatal = false;

    if func.sig.asyncness.is_none() {
        errors.spanned(
            func.sig.fn_token,
            format!("#[custom_tool] functions must be async: write `async fn {fn_ident}(…)`"),
        );
        fatal = true;
    }
    if !func.sig.generics.params.is_empty() {
        errors.spanned(
            &func.sig.generics,
            "#[custom_tool] functions cannot be generic: a tool has one parameter schema; use concrete types",
        );
        fatal = true;
    }
    if let Some(constness) = &func.sig.constness {
        errors.spanned(constness, "#[custom_tool] functions cannot be `const`");
        fatal = true;
    }

    // Doc comments and derive helpers on arguments belong to the generated struct's fields.
    // They must come off the fn: rustc rejects doc comments on parameters, but only after
    // the attribute macro has run, so the macro sees them first.
    let mut params: Vec<Param> = Vec::new();
    let mut order: Vec<Arg> = Vec::new();
    let mut context: Option<Type> = None;
    for input in func.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => {
                errors.spanned(
                    &*receiver,
                    "a #[custom_tool] function cannot take `self`: put #[custom_tool] on a struct and write `async fn execute(self, ctx: &ToolContext)` in its impl",
                );
                fatal = true;
            }
            FnArg::Typed(arg) => {
                let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut arg.attrs)
                    .into_iter()
                    .partition(|a| is_doc(a) || tool::is_derive_helper(a));
                arg.attrs = kept;
                if is_tool_context(&arg.ty) {
                    if let Some(first) = &context {
                        let mut error = syn::Error::new_spanned(
                            &arg.ty,
                            "a tool receives one `&ToolContext`; remove this argument",
                        );
                        error.combine(syn::Error::new_spanned(
                            first,
                            "the context is already received here",
                        ));
                        errors.push(error);
                        fatal = true;
                    }
                    context = Some((*arg.ty).clone());
                    if let Some(attr) = moved.first() {
                        errors.spanned(
                            attr,
                            "the `&ToolContext` argument is not a parameter: it takes no doc comment or serde attributes",
                        );
                    }
                    order.push(Arg::Context);
                    continue;
                }
                if let Type::Reference(r) = &*arg.ty {
                    if r.mutability.is_some()
                        && let Type::Path(p) = &*r.elem
                        && p.path
                            .segments
                            .last()
                            .is_some_and(|s| s.ident == "ToolContext")
                    {
                        errors.spanned(
                            &arg.ty,
                            "take the context by shared reference: `ctx: &ToolContext`",
                        );
                        fatal = true;
                        continue;
                    }
                    errors.spanned(
                        &arg.ty,
                        "tool parameters are decoded from JSON into owned values: use an owned type (`String` for `&str`, `Vec<T>` for `&[T]`)",
                    );
                    fatal = true;
                    continue;
                }
                if let Type::ImplTrait(_) = &*arg.ty {
                    errors.spanned(&arg.ty, "tool parameters need a concrete type (the schema is generated from it), not `impl Trait`");
                    fatal = true;
                    continue;
                }
                match &*arg.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        order.push(Arg::Param(params.len()));
                        params.push(Param {
                            ident: pat.ident.clone(),
                            ty: (*arg.ty).clone(),
                            attrs: moved,
                        });
                    }
                    other => {
                        errors.spanned(
                            other,
                            "tool parameters need a plain name (it is the JSON property name): write `name: Type`",
                        );
                        fatal = true;
                    }
                }
            }
        }
    }

    // `#[serde(…)]`/`#[schemars(…)]` on the fn configure the parameter struct.
    let (struct_attrs, fn_attrs): (Vec<_>, Vec<_>) = std::mem::take(&mut func.attrs)
        .into_iter()
        .partition(tool::is_derive_helper);
    func.attrs = fn_attrs;

    let config = tool::parse_config(
        attr,
        Form::Fn,
        &fn_ident,
        &func.attrs,
        default_paths,
        errors,
    );
    if fatal {
        return quote!(#func);
    }

    let struct_ident = config.struct_name.clone().unwrap_or_else(|| {
        format_ident!(
            "{}",
            names::camel_case(&fn_ident.to_string()),
            span = fn_ident.span()
        )
    });
    let vis = &func.vis;
    let docs: Vec<&Attribute> = func.attrs.iter().filter(|a| is_doc(a)).collect();
    let struct_doc = if docs.is_empty() {
        let description = &config.description;
        quote!(#[doc = #description])
    } else {
        quote!(#(#docs)*)
    };
    let fields = params.iter().map(|p| {
        let Param { ident, ty, attrs } = p;
        quote!(#(#attrs)* #vis #ident: #ty)
    });
    let derive = tool::derive_attrs(&config.paths, &tool::ManualDerives::default());

    let output_span = match &func.sig.output {
        ReturnType::Default => fn_ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    // Private to the generated code (mixed-site hygiene), located where errors should point.
    let ctx = Ident::new("ctx", Span::mixed_site().located_at(fn_ident.span()));
    let future = Ident::new("future", Span::mixed_site().located_at(output_span));
    let bindings: Vec<&Ident> = params.iter().map(|p| &p.ident).collect();
    let call_args = order.iter().map(|arg| match arg {
        Arg::Param(i) => {
            let ident = &params[*i].ident;
            quote!(#ident)
        }
        Arg::Context => quote!(#ctx),
    });
    let call = quote_spanned!(fn_ident.span()=> #fn_ident(#(#call_args),*));
    let support = config.paths.support_at(output_span);
    let convert = quote_spanned!(output_span=> #support::tool_fn_output(#future));
    let body = quote! {
        let Self { #(#bindings),* } = self;
        let #future = #call;
        #convert
    };
    let tool_impl = tool::expand_impl(&struct_ident, &config, &ctx, TokenStream::new(), body);
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
