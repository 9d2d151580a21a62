//! Procedural macros for xcsh: [`macro@custom_tool`], [`macro@pending`],
//! [`macro@tool_param`] and [`suite!`].
//!
//! Use them through the `xcsh` facade (`xcsh::custom_tool`, …): generated code names serde,
//! schemars and the runtime through `xcsh::__private`, so a crate needs `xcsh` alone — under
//! any name — in its Cargo.toml. A runnable tour is `examples/batch_rename_preview.rs`.
//!
//! Each macro follows parse → model → validate → expand, accumulating every error (a
//! `compile_error!` on the offending token, unknown keys with a "did you mean") and still
//! emitting the item so the rest of the crate, and an IDE, keep working.

mod args;
mod docs;
mod errors;
mod format;
mod krate;
mod names;
mod param;
mod pending;
mod probe;
mod suite;
mod tool;
mod tool_fn;
mod tool_struct;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::Item;

use crate::errors::Errors;
use crate::krate::Paths;

/// Makes a struct or an `async fn` a tool: its JSON parameter schema, argument decoding,
/// the `CustomTool` impl and self-registration.
///
/// # On a struct
///
/// The fields are the parameters; an inherent `async fn execute(self, ctx: &ToolContext)`
/// runs the tool. It may return anything `IntoToolResult` converts: `String`, `&str`,
/// `AgentToolResult`, `()`, or a `Result` of one of those with any `Display` error.
///
/// ```
/// use xcsh::{ToolContext, ToolError, custom_tool};
///
/// /// Counts the lines of a text.
/// #[custom_tool(read_only, idempotent)]
/// struct CountLines {
///     /// The text to count.
///     text: String,
///     /// Skip blank lines.
///     #[serde(default)]
///     skip_blank: bool,
/// }
///
/// impl CountLines {
///     async fn execute(self, _ctx: &ToolContext) -> Result<String, ToolError> {
///         let lines = self.text.lines().filter(|l| !(self.skip_blank && l.trim().is_empty()));
///         Ok(format!("{} lines", lines.count()))
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = xcsh::Session::builder().custom::<CountLines>().build().unwrap();
/// let result = session.call("count_lines", serde_json::json!({"text": "a\n\nb"})).await;
/// assert_eq!(result.text_content(), "3 lines");
/// # });
/// ```
///
/// # On an `async fn`
///
/// The arguments are the parameters, documented with doc comments on the arguments
/// themselves. A `&ToolContext` argument (recognised by its type, in any position) is not a
/// parameter. The macro generates a parameter struct named after the function in CamelCase
/// (`struct_name = …` to choose another): it is the tool's type, and the fn stays callable.
///
/// ```
/// use xcsh::{ToolContext, custom_tool};
///
/// /// Repeats a word.
/// #[custom_tool]
/// async fn repeat(
///     /// The word to repeat.
///     word: String,
///     /// How many times (default 2).
///     times: Option<usize>,
///     _ctx: &ToolContext,
/// ) -> String {
///     word.repeat(times.unwrap_or(2))
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = xcsh::Session::builder().custom::<Repeat>().build().unwrap();
/// let result = session.call("repeat", serde_json::json!({"word": "ab"})).await;
/// assert_eq!(result.text_content(), "abab");
/// # });
/// ```
///
/// # Keys
///
/// | key | value | default |
/// |---|---|---|
/// | `name` | `"tool_name"`: 1–64 of `[A-Za-z0-9_-]`, starting with a letter or `_` | the struct name in snake_case, or the fn name |
/// | `label` | `"Title"` for people | the name, title-cased |
/// | `description` | `"…"` for the model | the doc comment (one of the two is required) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | flag, or `= bool` | unstated |
/// | `pending` | flag, or `= bool`: the tool pushes pending actions, so sessions offer `resolve` | `false` |
/// | `struct_name` | `Ident` (fn form only) | the fn name in CamelCase |
/// | `register` | flag, or `= bool`: `register = false` keeps the tool out of the self-registered set | `true` |
/// | `crate` | path of a crate re-exporting xcsh | found in Cargo.toml |
///
/// `#[serde(…)]` and `#[schemars(…)]` on fields (or arguments, or the fn) are honoured: the
/// macro derives `Deserialize` and `JsonSchema` itself, so do not derive them by hand.
/// Field doc comments become property descriptions; `Option` fields are not required.
///
/// Tools register themselves (`inventory`), so `Session::builder().registered()` or
/// `xcsh::registered_suite(module_path!())` finds them; [`suite!`] lists them explicitly.
/// A library whose tools are added only on request (in a suite of its own, with its own
/// configuration) writes `register = false`: the tool then appears only where it is added.
#[proc_macro_attribute]
pub fn custom_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_custom_tool(attr.into(), item.into(), None).into()
}

/// Implements `PendingAction` for a struct: `resolve` calls its inherent
/// `async fn apply(&mut self, reason: &str) -> R` (and `reject`, when named).
///
/// ```
/// use xcsh::{PendingActionStore, ResolveAction, ToolError, pending, resolve};
///
/// #[pending(apply, reject, label = "Batch rename: {count} files", source = "batch_rename", details)]
/// struct RenamePlan {
///     count: usize,
/// }
///
/// impl RenamePlan {
///     async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {
///         Ok(format!("Renamed {} files ({reason}).", self.count))
///     }
///     async fn reject(&mut self, _reason: &str) -> Option<String> {
///         Some("Kept the old names.".into())
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = PendingActionStore::new();
/// store.push(RenamePlan { count: 3 });
/// let top = store.peek().unwrap();
/// assert_eq!(top.label, "Batch rename: 3 files");
/// assert_eq!(top.details, Some(serde_json::json!({"count": 3})));
/// let done = resolve(&store, ResolveAction::Apply, "looks right").await.unwrap();
/// assert_eq!(done.result.text_content(), "Renamed 3 files (looks right).");
/// # });
/// ```
///
/// # Keys
///
/// | key | value |
/// |---|---|
/// | `apply` | required; flag (calls `apply`) or `= method` |
/// | `reject` | flag (calls `reject`) or `= method`; returns `()`, `String`, `&str`, `AgentToolResult` or an `Option` of one (replaces the default `Discarded: …`) |
/// | `label` | `"… {field} …"` interpolating fields, optionally followed by format arguments: `label = "{} files", self.files.len()` (`.files.len()` is short for `self.files.len()`; `n = expr` names one). A key after the arguments ends them. |
/// | `label_fn` | `= method` returning `impl Display`, instead of `label` |
/// | `source` | `"tool_name"`, or a `#[custom_tool]` type whose `NAME` is used |
/// | `details` | flag: the struct serialised (the macro derives `Serialize`); `= field`: that field |
/// | `details_fn` | `= method` returning `impl Serialize` |
/// | `crate` | path of a crate re-exporting xcsh |
#[proc_macro_attribute]
pub fn pending(attr: TokenStream, item: TokenStream) -> TokenStream {
    pending::expand(attr.into(), item.into(), None).into()
}

/// Derives `Deserialize` and `JsonSchema` (and `Serialize` with `serialize`) through the
/// facade, for types used inside tool parameters — an enum's variants become the schema's
/// allowed values.
///
/// ```
/// use xcsh::tool_param;
///
/// /// How to sort.
/// #[tool_param]
/// #[serde(rename_all = "snake_case")]
/// enum Order {
///     /// Oldest first.
///     Oldest,
///     /// Newest first.
///     Newest,
/// }
/// # let _ = Order::Oldest; let _ = Order::Newest;
/// ```
#[proc_macro_attribute]
pub fn tool_param(attr: TokenStream, item: TokenStream) -> TokenStream {
    param::expand(attr.into(), item.into(), None).into()
}

/// An explicit [`ToolSuite`](../xcsh/struct.ToolSuite.html) of `#[custom_tool]` types, for a
/// crate that exports a fixed set of tools: `pub fn tools() -> ToolSuite { suite![A, B] }`.
///
/// ```
/// use xcsh::{ToolContext, custom_tool, suite, Suite};
///
/// /// Says hi.
/// #[custom_tool]
/// async fn hi(_ctx: &ToolContext) -> &'static str { "hi" }
///
/// let tools = suite![Hi];
/// assert_eq!(tools.tools()[0].name(), "hi");
/// ```
#[proc_macro]
pub fn suite(input: TokenStream) -> TokenStream {
    suite::expand(input.into(), None).into()
}

/// The `#[custom_tool]` expansion, separate from the proc-macro shim so tests can run it.
/// `paths` overrides Cargo.toml discovery.
pub(crate) fn expand_custom_tool(
    attr: TokenStream2,
    item: TokenStream2,
    paths: Option<Paths>,
) -> TokenStream2 {
    let mut errors = Errors::new();
    let output = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Struct(item)) => tool_struct::expand(attr, item, paths, &mut errors),
        Ok(Item::Fn(item)) => tool_fn::expand(attr, item, paths, &mut errors),
        Ok(other) => {
            let hint = if matches!(other, Item::Enum(_)) {
                "\nfor a choice between values, use the enum as a field type and mark it #[xcsh::tool_param]"
            } else {
                ""
            };
            errors.spanned(
                item_keyword(&other),
                format!("#[custom_tool] goes on a struct (its fields are the parameters) or an `async fn` (its arguments are){hint}"),
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

/// The token to point at when an attribute is on the wrong kind of item: its keyword.
pub(crate) fn item_keyword(item: &Item) -> TokenStream2 {
    match item {
        Item::Enum(e) => {
            let t = e.enum_token;
            quote!(#t)
        }
        Item::Union(u) => {
            let t = u.union_token;
            quote!(#t)
        }
        Item::Fn(f) => {
            let t = f.sig.fn_token;
            quote!(#t)
        }
        Item::Trait(t) => {
            let t = t.trait_token;
            quote!(#t)
        }
        Item::Impl(i) => {
            let t = i.impl_token;
            quote!(#t)
        }
        other => quote!(#other),
    }
}
