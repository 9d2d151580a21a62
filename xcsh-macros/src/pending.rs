//! `#[pending(apply, reject, label = "…")]`: a `PendingAction` impl that calls the struct's
//! inherent `async fn apply(&mut self, reason: &str)` (and `reject`), with a label
//! interpolated from its fields the way thiserror interpolates `#[error("…{field}")]`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Attribute, Expr, Fields, Ident, Item, ItemStruct, LitStr};

use crate::args::{self, Args, FormatArg, KeySpec, Kind, Value};
use crate::errors::{Errors, did_you_mean};
use crate::format::named_placeholders;
use crate::krate::Paths;
use crate::names;
use crate::probe::Probe;

pub(crate) const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "apply",
        kind: Kind::FlagOrIdent,
        example: "`apply` (calls `async fn apply(&mut self, reason: &str)`) or `apply = method_name`",
    },
    KeySpec {
        name: "reject",
        kind: Kind::FlagOrIdent,
        example: "`reject` (calls `async fn reject(&mut self, reason: &str)`) or `reject = method_name`",
    },
    KeySpec {
        name: "label",
        kind: Kind::Format,
        example: "`label = \"Batch rename: {count} files\"` or `label = \"Batch rename: {} files\", self.files.len()`",
    },
    KeySpec {
        name: "label_fn",
        kind: Kind::Ident,
        example: "`label_fn = describe` (calls `fn describe(&self) -> impl Display`)",
    },
    KeySpec {
        name: "source",
        kind: Kind::StrOrPath,
        example: "`source = \"batch_rename_preview\"` or `source = BatchRenamePreview` (a #[custom_tool] type)",
    },
    KeySpec {
        name: "details",
        kind: Kind::FlagOrIdent,
        example: "`details` (serialise the whole struct) or `details = field`",
    },
    KeySpec {
        name: "details_fn",
        kind: Kind::Ident,
        example: "`details_fn = summary` (calls `fn summary(&self) -> impl Serialize`)",
    },
    KeySpec {
        name: "crate",
        kind: Kind::StrOrPath,
        example: "`crate = my_facade` (a crate re-exporting xcsh, with its `__private` module)",
    },
];

enum Label {
    Format(LitStr, Vec<FormatArg>),
    Method(Ident),
}

enum Details {
    Whole,
    Field(Ident),
    Method(Ident),
}

enum Source {
    Name(LitStr),
    Tool(syn::Path),
}

/// The validated attribute.
struct PendingConfig {
    /// `None` when the key is missing (reported): the impl then gets a stub `apply`, so the
    /// missing key is the only error.
    apply: Option<Ident>,
    reject: Option<Ident>,
    label: Option<Label>,
    details: Option<Details>,
    source: Option<Source>,
    paths: Paths,
}

pub(crate) fn expand(
    attr: TokenStream,
    item: TokenStream,
    default_paths: Option<Paths>,
) -> TokenStream {
    let mut errors = Errors::new();
    let output = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(item)) => expand_struct(attr, item, default_paths, &mut errors),
        Ok(other) => {
            errors.spanned(
                crate::item_keyword(&other),
                "#[pending] goes on a struct: its fields hold what `apply` needs (for an enum, implement `PendingAction` by hand)",
            );
            item
        }
        Err(error) => {
            errors.push(error);
            item
        }
    };
    let errors = errors.finish();
    quote!(#output #errors)
}

fn hook(args: &Args, key: &str, errors: &mut Errors) -> Option<Ident> {
    match args.value(key)? {
        Value::Flag(flag) if flag.value => Some(Ident::new(key, flag.span)),
        Value::Flag(flag) => {
            if key == "apply" {
                errors.spanned(
                    flag,
                    "`apply` cannot be turned off: applying is what a pending action is for",
                );
            }
            None
        }
        Value::Ident(method) => Some(method.clone()),
        _ => None,
    }
}

fn parse_config(
    attr: TokenStream,
    item: &ItemStruct,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> PendingConfig {
    let args = Args::new(args::parse(attr, KEYS, errors));
    let target = &item.ident;
    let field_names: Vec<String> = match &item.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
            .collect(),
        _ => Vec::new(),
    };

    let apply = hook(&args, "apply", errors);
    if apply.is_none() && args.value("apply").is_none() {
        errors.at(
                Span::call_site(),
                format!(
                    "#[pending] needs `apply`: write `#[pending(apply, label = \"…\")]` and `impl {target} {{ async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {{ … }} }}`"
                ),
            );
    }
    let reject = hook(&args, "reject", errors);

    let label = match (args.value("label"), args.ident("label_fn")) {
        (Some(Value::Format(lit, extra)), None) => {
            check_label(lit, extra, item, &field_names, errors);
            Some(Label::Format(
                lit.clone(),
                extra
                    .iter()
                    .map(|a| FormatArg {
                        name: a.name.clone(),
                        expr: a.expr.clone(),
                    })
                    .collect(),
            ))
        }
        (None, Some(method)) => {
            if method == "label" {
                errors.spanned(method, "name the label method something other than `label` (that is `PendingAction::label` itself), e.g. `label_fn = describe`");
            }
            Some(Label::Method(method.clone()))
        }
        (Some(_), Some(_)) => {
            errors.spanned(
                args.key("label_fn"),
                "give either `label` or `label_fn`, not both",
            );
            None
        }
        (_, None) => {
            if args.key("label").is_none() {
                errors.at(
                    Span::call_site(),
                    "#[pending] needs a label, which is what the person deciding sees: `label = \"Batch rename: {count} files\"` (fields interpolate) or `label_fn = method`",
                );
            }
            None
        }
    };

    let details = match (args.value("details"), args.ident("details_fn")) {
        (Some(_), Some(_)) => {
            errors.spanned(
                args.key("details_fn"),
                "give either `details` or `details_fn`, not both",
            );
            None
        }
        (Some(Value::Flag(flag)), None) => flag.value.then_some(Details::Whole),
        (Some(Value::Ident(field)), None) => {
            if !field_names.iter().any(|f| field == f) {
                let hint = did_you_mean(&field.to_string(), field_names.iter().map(String::as_str));
                errors.spanned(
                    field,
                    format!("`{target}` has no field `{field}`{hint}\n(`details = field` serialises a field; use `details_fn = method` for a method)"),
                );
            }
            Some(Details::Field(field.clone()))
        }
        (None, Some(method)) => {
            if method == "details" {
                errors.spanned(method, "name the details method something other than `details` (that is `PendingAction::details` itself)");
            }
            Some(Details::Method(method.clone()))
        }
        _ => None,
    };

    let source = match args.value("source") {
        Some(Value::Str(lit)) => {
            if let Err(problem) = names::validate(&lit.value()) {
                errors.spanned(lit, format!("`source` must be a tool name: {problem}"));
            }
            Some(Source::Name(lit.clone()))
        }
        Some(Value::Path(path)) => Some(Source::Tool(path.clone())),
        _ => None,
    };

    let paths = Paths::from_args(&args, default_paths, errors);

    PendingConfig {
        apply,
        reject,
        label,
        details,
        source,
        paths,
    }
}

/// Every `{name}` in the label must be a field or a named argument (constants, in
/// SCREAMING_CASE, are left to rustc).
fn check_label(
    lit: &LitStr,
    extra: &[FormatArg],
    item: &ItemStruct,
    fields: &[String],
    errors: &mut Errors,
) {
    let text = lit.value();
    if text.trim().is_empty() {
        errors.spanned(lit, "the label is empty: it is what the person deciding sees; say what will happen, e.g. `\"Batch rename: {count} files\"`");
        return;
    }
    for name in named_placeholders(&text) {
        let is_field = fields.contains(&name);
        let is_arg = extra
            .iter()
            .any(|a| a.name.as_ref().is_some_and(|n| *n == name));
        let is_const = name
            .chars()
            .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '_');
        if is_field || is_arg || is_const {
            continue;
        }
        let target = &item.ident;
        let message = if fields.is_empty() {
            format!(
                "the label interpolates `{{{name}}}`, but `{target}` has no named fields\nuse positional arguments: `label = \"… {{}}\", .0`"
            )
        } else {
            let hint = did_you_mean(&name, fields.iter().map(String::as_str));
            format!(
                "the label interpolates `{{{name}}}`, but `{target}` has no field `{name}`{hint}\nfields: {}; for a computed value write `label = \"… {{{name}}}\", {name} = expr`",
                fields.join(", ")
            )
        };
        errors.spanned(lit, message);
    }
}

fn derives(attrs: &[Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|attr| {
            attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|paths| {
                paths
                    .iter()
                    .any(|p| p.segments.last().is_some_and(|s| s.ident == name))
            })
        })
}

fn expand_struct(
    attr: TokenStream,
    item: ItemStruct,
    default_paths: Option<Paths>,
    errors: &mut Errors,
) -> TokenStream {
    let target = &item.ident;
    if !item.generics.params.is_empty() {
        errors.spanned(
            &item.generics,
            "#[pending] structs cannot be generic: a pending action is stored as `'static` type-erased state; use concrete field types",
        );
        let _ = parse_config(attr, &item, default_paths, errors);
        return quote!(#item);
    }
    let config = parse_config(attr, &item, default_paths, errors);
    let core = &config.paths.core;
    let serde_json = &config.paths.serde_json;
    let span = target.span();
    // Private to the generated code (mixed-site hygiene) but located at the hook's name, so
    // a type error about calling the user's method points there.
    let locals = |at: &Ident| {
        let local = Span::mixed_site().located_at(at.span());
        (Ident::new("this", local), Ident::new("reason", local))
    };
    // What `apply` returns. The helper that calls the user's method states it at the method's
    // name, where a failed bound on the call is reported too: one error, not two.
    let applies = |at: Span| {
        quote_spanned!(at=>
            impl ::core::future::Future<
                Output = ::core::result::Result<#core::AgentToolResult, #core::ToolError>,
            > + ::core::marker::Send
        )
    };
    let rejects = |at: Span| {
        quote_spanned!(at=>
            impl ::core::future::Future<
                Output = ::core::option::Option<#core::AgentToolResult>,
            > + ::core::marker::Send
        )
    };
    let returns = applies(span);

    // apply
    let support = config.paths.support();
    let mut helpers;
    let mut methods;
    if let Some(apply) = &config.apply {
        let (this, reason) = locals(apply);
        let probe = Probe {
            tag: "Apply",
            support: &support,
            target,
            method: apply,
            receiver: quote!(&mut self),
            arg: quote!(&'a str),
            signature: format!("async fn {apply}(&mut self, reason: &str)"),
            attribute: "#[pending(apply)]",
            returns: "Result<String, ToolError>",
        }
        .items();
        let output = config.paths.support_at(apply.span());
        let call =
            quote_spanned!(apply.span()=> #output::apply_output(<#target>::#apply(#this, #reason)));
        let helper_returns = applies(apply.span());
        helpers = quote! {
            #probe
            fn __xcsh_apply(#this: &mut #target, #reason: &str) -> #helper_returns {
                #call
            }
        };
        methods = quote! {
            fn apply(&mut self, #reason: &str) -> #returns {
                __xcsh_apply(self, #reason)
            }
        };
    } else {
        // The missing key is reported; this stub keeps it the only error.
        helpers = TokenStream::new();
        methods = quote! {
            fn apply(&mut self, _: &str) -> #returns {
                ::core::future::pending::<
                    ::core::result::Result<#core::AgentToolResult, #core::ToolError>,
                >()
            }
        };
    }

    // reject
    if let Some(reject) = &config.reject {
        let (this, reason) = locals(reject);
        let probe = Probe {
            tag: "Reject",
            support: &support,
            target,
            method: reject,
            receiver: quote!(&mut self),
            arg: quote!(&'a str),
            signature: format!("async fn {reject}(&mut self, reason: &str)"),
            attribute: "#[pending(reject)]",
            returns: "Option<String>",
        }
        .items();
        let output = config.paths.support_at(reject.span());
        let call = quote_spanned!(reject.span()=> #output::reject_output(<#target>::#reject(#this, #reason)));
        let helper_returns = rejects(reject.span());
        let returns = rejects(span);
        helpers.extend(quote! {
            #probe
            fn __xcsh_reject(#this: &mut #target, #reason: &str) -> #helper_returns {
                #call
            }
        });
        methods.extend(quote! {
            fn reject(&mut self, #reason: &str) -> #returns {
                __xcsh_reject(self, #reason)
            }
        });
    }

    // label
    match &config.label {
        Some(Label::Format(lit, extra)) => {
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
            methods.extend(quote! {
                fn label(&self) -> ::std::string::String {
                    #bindings
                    ::std::format!(#lit #(, #extra)*)
                }
            });
        }
        Some(Label::Method(method)) => {
            let call = quote_spanned!(method.span()=> ::std::string::ToString::to_string(&<#target>::#method(self)));
            methods.extend(quote! {
                fn label(&self) -> ::std::string::String {
                    #call
                }
            });
        }
        None => methods.extend(quote! {
            fn label(&self) -> ::std::string::String {
                ::std::string::String::new()
            }
        }),
    }

    // details
    let mut derive = TokenStream::new();
    if let Some(details) = &config.details {
        let value = match details {
            Details::Whole => {
                if !derives(&item.attrs, "Serialize") {
                    let serde = &config.paths.serde;
                    let serde_str = config.paths.serde_str();
                    derive = quote! {
                        #[derive(#serde::Serialize)]
                        #[serde(crate = #serde_str)]
                    };
                }
                quote_spanned!(span=> self)
            }
            Details::Field(field) => quote_spanned!(field.span()=> &self.#field),
            Details::Method(method) => quote_spanned!(method.span()=> &<#target>::#method(self)),
        };
        methods.extend(quote! {
            fn details(&self) -> ::core::option::Option<#serde_json::Value> {
                // Serialising to a `Value` fails only for maps with non-string keys; a label
                // without details is still a usable action, so that case yields `None`.
                #serde_json::to_value(#value)
                    .ok()
                    .filter(|value| !value.is_null())
            }
        });
    }

    // source
    match &config.source {
        Some(Source::Name(lit)) => methods.extend(quote! {
            fn source_tool_name(&self) -> &str {
                #lit
            }
        }),
        Some(Source::Tool(path)) => {
            let name = quote_spanned!(syn::spanned::Spanned::span(path)=> <#path as #core::CustomTool>::NAME);
            methods.extend(quote! {
                fn source_tool_name(&self) -> &str {
                    #name
                }
            });
        }
        None => {}
    }

    let impl_head = quote_spanned!(span=> impl #core::PendingAction for #target);
    quote! {
        #derive
        #item

        const _: () = {
            #helpers

            #[automatically_derived]
            #impl_head {
                #methods
            }
        };
    }
}
