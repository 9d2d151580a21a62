//! What `#[custom_tool]` is on: a struct, or an `async fn` whose arguments are read into a
//! model here (every argument kept, the wrong ones too, so `valid` reports them all).

use proc_macro2::TokenStream;
use syn::{Attribute, FnArg, Ident, Item, ItemFn, ItemStruct, Pat, Receiver, Type};

use crate::derives::is_derive_helper;
use crate::docs::is_doc;
use crate::errors::Errors;

pub(crate) enum Input {
    Struct(ItemStruct),
    Fn(ToolFn),
}

/// An `async fn` tool.
pub(crate) struct ToolFn {
    /// The fn, without the doc comments and serde attributes of its arguments and its own
    /// `#[serde]`/`#[schemars]` (rustc rejects the former on parameters, and both belong to
    /// the generated struct).
    pub(crate) func: ItemFn,
    /// `#[serde]`/`#[schemars]` taken off the fn: they configure the parameter struct.
    pub(crate) struct_attrs: Vec<Attribute>,
    /// The arguments in call order.
    pub(crate) args: Vec<FnInput>,
}

/// One argument of an `async fn` tool.
pub(crate) enum FnInput {
    /// A JSON parameter.
    Param(Param),
    /// `&ToolContext`, with the attributes it should not have.
    Context { ty: Type, attrs: Vec<Attribute> },
    /// `self`: not a tool fn.
    Receiver(Receiver),
    /// `&mut ToolContext`.
    MutContext(Type),
    /// A borrowed parameter, which cannot be decoded from JSON.
    Borrowed(Type),
    /// `impl Trait`, which has no schema.
    ImplTrait(Type),
    /// A pattern instead of a name (the name is the JSON property).
    Pattern(Pat),
}

/// A JSON parameter: an argument other than the context.
pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    /// Doc comments and `#[serde]`/`#[schemars]`, moved to the struct field.
    pub(crate) attrs: Vec<Attribute>,
}

impl Input {
    /// The item, or `None` (reported) when it is neither a struct nor a fn.
    pub(crate) fn parse(item: TokenStream, errors: &mut Errors) -> Option<Input> {
        match syn::parse2::<Item>(item) {
            Ok(Item::Struct(item)) => Some(Input::Struct(item)),
            Ok(Item::Fn(item)) => Some(Input::Fn(ToolFn::parse(item))),
            Ok(other) => {
                let hint = if matches!(other, Item::Enum(_)) {
                    "\nfor a choice between values, use the enum as a field type and mark it #[xcsh::tool_param]"
                } else {
                    ""
                };
                errors.spanned(
                    crate::item::keyword(&other),
                    format!("#[custom_tool] goes on a struct (its fields are the parameters) or an `async fn` (its arguments are){hint}"),
                );
                None
            }
            Err(error) => {
                errors.push(error);
                None
            }
        }
    }

    /// The struct's or the fn's name.
    pub(crate) fn ident(&self) -> &Ident {
        match self {
            Input::Struct(item) => &item.ident,
            Input::Fn(tool_fn) => &tool_fn.func.sig.ident,
        }
    }

    /// The item's own attributes (its doc comment is the description).
    pub(crate) fn attrs(&self) -> &[Attribute] {
        match self {
            Input::Struct(item) => &item.attrs,
            Input::Fn(tool_fn) => &tool_fn.func.attrs,
        }
    }
}

impl ToolFn {
    fn parse(mut func: ItemFn) -> ToolFn {
        let args = func.sig.inputs.iter_mut().map(FnInput::parse).collect();
        let (struct_attrs, fn_attrs) = std::mem::take(&mut func.attrs)
            .into_iter()
            .partition(is_derive_helper);
        func.attrs = fn_attrs;
        ToolFn {
            func,
            struct_attrs,
            args,
        }
    }
}

impl FnInput {
    /// Reads an argument, taking its doc comments and derive helpers off the fn.
    fn parse(input: &mut FnArg) -> FnInput {
        let arg = match input {
            FnArg::Receiver(receiver) => return FnInput::Receiver(receiver.clone()),
            FnArg::Typed(arg) => arg,
        };
        let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut arg.attrs)
            .into_iter()
            .partition(|a| is_doc(a) || is_derive_helper(a));
        arg.attrs = kept;
        let ty = (*arg.ty).clone();
        if is_tool_context(&ty) {
            return FnInput::Context { ty, attrs: moved };
        }
        match &ty {
            Type::Reference(r) if r.mutability.is_some() && names_tool_context(&r.elem) => {
                FnInput::MutContext(ty)
            }
            Type::Reference(_) => FnInput::Borrowed(ty),
            Type::ImplTrait(_) => FnInput::ImplTrait(ty),
            _ => match &*arg.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                    FnInput::Param(Param {
                        ident: pat.ident.clone(),
                        ty,
                        attrs: moved,
                    })
                }
                other => FnInput::Pattern(other.clone()),
            },
        }
    }
}

/// `&ToolContext` under any path (recognised by its last segment, as the context is found
/// by type in any position).
fn is_tool_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => r.mutability.is_none() && names_tool_context(&r.elem),
        Type::Paren(p) => is_tool_context(&p.elem),
        Type::Group(g) => is_tool_context(&g.elem),
        _ => false,
    }
}

fn names_tool_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "ToolContext"))
}
