//! What `#[custom_tool]` and `#[pending]` expansions call, defined once here instead of in
//! every expansion. Not public API: reached as `xcsh::__private::xcsh_core::__macro_support`
//! by generated code only.
//!
//! Most items exist for their `#[diagnostic::on_unimplemented]` message: each bound a user's
//! code can fail says what to write instead. They used to be local traits with blanket impls
//! in every expansion, and coherence checks every impl one by one: 200 tools paid for 800
//! traits and 600 impls, about a second of `cargo check`. Here they cost nothing per tool.
//!
//! # Probes
//!
//! The generated `impl CustomTool for T` must call the user's *inherent* `T::execute`; the
//! call is `<T>::execute(…)`, which prefers an inherent method. Without one it would silently
//! find `CustomTool::execute` itself (when that trait is in scope) and recurse. So the
//! expansion imports [`MissingInherentExecute`] (`use … as _`): every type has its `execute`,
//! which the call finds when there is no inherent one, and whose bound, which no type meets,
//! reports "`T` has no inherent `async fn execute(…)`" on the user's struct. The same goes
//! for `#[pending]`'s `apply` and `reject`.
//!
//! # Hooks
//!
//! The method is not called directly but passed to [`call_execute`] (or [`call_apply`],
//! [`call_reject`]) and called through [`ExecuteHook`] (or [`ApplyHook`], [`RejectHook`]):
//! a method with the wrong receiver or arguments fails that trait's bound, whose message
//! gives the signature to write, instead of reporting an argument count at the attribute.
//!
//! # Fallbacks
//!
//! After a compile error the macros emit stub impls whose bodies call
//! [`after_compile_error`], so the item's uses still type-check and the error stays the only
//! one.

use std::future::{Future, Ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::result::IntoToolResult;

// The runtime items generated code names, by their defining modules: expansions reach them
// only through this module, so the crate root's public re-exports can change freely.
pub use crate::context::ToolContext;
pub use crate::durable::{DurableKind, DurableState};
pub use crate::error::ToolError;
pub use crate::pending::PendingAction;
pub use crate::result::AgentToolResult;
pub use crate::schema::JsonObject;
pub use crate::suite::{ToolRegistration, ToolSuite};
pub use crate::tool::{CustomTool, ToolAnnotations, custom_tool};
pub use inventory;

/// What `#[custom_tool(output = T)]` needs of `T`.
#[diagnostic::on_unimplemented(
    message = "`#[custom_tool(output = {Self})]` needs `{Self}` to be `Serialize + JsonSchema`",
    label = "the tool's structured output (its MCP `outputSchema`)",
    note = "mark the type `#[tool_param(serialize)]` (no serde or schemars needed in your Cargo.toml), or derive `serde::Serialize` and `schemars::JsonSchema`"
)]
pub trait ToolOutput: serde::Serialize + schemars::JsonSchema {}
impl<T: serde::Serialize + schemars::JsonSchema> ToolOutput for T {}

/// What `#[pending(details …)]` needs of the value it shows.
#[diagnostic::on_unimplemented(
    message = "`#[pending(details)]` needs `{Self}` to be `Serialize`",
    label = "shown to people as the action's details",
    note = "mark `{Self}` `#[tool_param(serialize)]` (no serde needed in your Cargo.toml), or show something else (`details = field`, `details_fn = method`)"
)]
pub trait DetailsValue: serde::Serialize {}
impl<T: serde::Serialize + ?Sized> DetailsValue for T {}

/// The details of a `#[pending(details …)]` action: `None` for a value that is `null` or
/// does not serialise (a map with non-string keys; the label still describes the action).
pub fn details_value<T: DetailsValue + ?Sized>(value: &T) -> Option<serde_json::Value> {
    serde_json::to_value(value)
        .ok()
        .filter(|value| !value.is_null())
}

/// The output schema of `#[custom_tool(output = T)]`, cached per type.
pub fn output_schema_of<T: ToolOutput + 'static>() -> std::sync::Arc<JsonObject> {
    crate::schema::cached_schema_for::<T>()
}

/// What `#[pending(durable)]` needs of its struct.
#[diagnostic::on_unimplemented(
    message = "`#[pending(durable)]` needs `{Self}` to be `Serialize + Deserialize`",
    label = "`{Self}` is kept across restarts as JSON",
    note = "add `#[derive(serde::Serialize, serde::Deserialize)]` to the struct (its fields are what a restarted process gets back), or leave out `durable`"
)]
pub trait Durable: PendingAction + Sized {
    /// Decodes kept state and pushes the action: a [`DurableKind`]'s `restore`.
    fn restore(
        store: &crate::pending::PendingActionStore,
        state: serde_json::Value,
    ) -> Result<crate::pending::PendingId, String>;
    /// The action as JSON: a [`DurableKind`]'s `save`.
    fn save(this: &dyn std::any::Any) -> Option<serde_json::Value>;
}

impl<T: PendingAction + serde::Serialize + serde::de::DeserializeOwned> Durable for T {
    fn restore(
        store: &crate::pending::PendingActionStore,
        state: serde_json::Value,
    ) -> Result<crate::pending::PendingId, String> {
        serde_json::from_value::<T>(state)
            .map(|action| store.push(action))
            .map_err(|e| format!("its state no longer decodes: {e}"))
    }

    fn save(this: &dyn std::any::Any) -> Option<serde_json::Value> {
        serde_json::to_value(this.downcast_ref::<T>()?).ok()
    }
}

/// `PendingAction::durable` of a `#[pending(durable)]` struct: saved through its registered
/// kind, so the `Durable` bound is named once (one error when it is unmet).
pub fn durable_state_of<T: 'static>(this: &T, kind: &'static str) -> Option<DurableState> {
    let registered = inventory::iter::<DurableKind>
        .into_iter()
        .find(|k| k.kind == kind)?;
    (registered.save)(this).map(|state| DurableState { kind, state })
}

/// Never implemented: the unmet bound of [`MissingInherentExecute::execute`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no inherent `async fn execute(self, ctx: &ToolContext)`",
    label = "#[custom_tool] calls `{Self}::execute`",
    note = "add `impl {Self} {{ async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {{ … }} }}`"
)]
pub trait NeedsInherentExecute<'a> {}

/// The `execute` a `#[custom_tool]` struct's call finds when it has no inherent one.
pub trait MissingInherentExecute: Sized {
    /// Never callable: its bound cannot hold.
    fn execute<'a>(self, _: &'a ToolContext) -> Ready<()>
    where
        Self: NeedsInherentExecute<'a>,
    {
        unreachable!()
    }
}

impl<T> MissingInherentExecute for T {}

/// Never implemented: the unmet bound of [`MissingInherentApply::apply`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no inherent `async fn apply(&mut self, reason: &str)`",
    label = "#[pending(apply)] calls `{Self}::apply`",
    note = "add `impl {Self} {{ async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {{ … }} }}`"
)]
pub trait NeedsInherentApply<'a> {}

/// The `apply` a `#[pending(apply)]` struct's call finds when it has no inherent one.
pub trait MissingInherentApply: Sized {
    /// Never callable: its bound cannot hold.
    fn apply<'a>(&mut self, _: &'a str) -> Ready<()>
    where
        Self: NeedsInherentApply<'a>,
    {
        unreachable!()
    }
}

impl<T> MissingInherentApply for T {}

/// Never implemented: the unmet bound of [`MissingInherentReject::reject`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no inherent `async fn reject(&mut self, reason: &str)`",
    label = "#[pending(reject)] calls `{Self}::reject`",
    note = "add `impl {Self} {{ async fn reject(&mut self, reason: &str) -> Option<String> {{ … }} }}`"
)]
pub trait NeedsInherentReject<'a> {}

/// The `reject` a `#[pending(reject)]` struct's call finds when it has no inherent one.
pub trait MissingInherentReject: Sized {
    /// Never callable: its bound cannot hold.
    fn reject<'a>(&mut self, _: &'a str) -> Ready<()>
    where
        Self: NeedsInherentReject<'a>,
    {
        unreachable!()
    }
}

impl<T> MissingInherentReject for T {}

/// What a user's `execute` returned must be a future: `async fn`, not `fn`.
#[diagnostic::on_unimplemented(
    message = "`execute` must be an `async fn`, but it returned `{Self}`",
    label = "expected `async fn execute(self, ctx: &ToolContext) -> …`"
)]
pub trait ExecuteIsAsync: Future {}
impl<F: Future> ExecuteIsAsync for F {}

/// What a user's `apply` returned must be a future.
#[diagnostic::on_unimplemented(
    message = "`apply` must be an `async fn`, but it returned `{Self}`",
    label = "expected `async fn apply(&mut self, reason: &str) -> …`"
)]
pub trait ApplyIsAsync: Future {}
impl<F: Future> ApplyIsAsync for F {}

/// What a user's `reject` returned must be a future.
#[diagnostic::on_unimplemented(
    message = "`reject` must be an `async fn`, but it returned `{Self}`",
    label = "expected `async fn reject(&mut self, reason: &str) -> …`"
)]
pub trait RejectIsAsync: Future {}
impl<F: Future> RejectIsAsync for F {}

/// What a `#[custom_tool]` struct's `execute` may return: whatever [`IntoToolResult`] converts.
#[diagnostic::on_unimplemented(
    message = "`execute` cannot return `{Self}`",
    label = "this returns `{Self}`",
    note = "return `String`, `&str`, `AgentToolResult`, `()`, or `Result<T, E>` with T one of those and E any `Display` error (`ToolError`, `std::io::Error`, `String`…)"
)]
pub trait ExecuteOutput {
    /// The conversion.
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError>;
}

impl<T: IntoToolResult> ExecuteOutput for T {
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError> {
        IntoToolResult::into_tool_result(self)
    }
}

/// What a `#[custom_tool] async fn` may return.
#[diagnostic::on_unimplemented(
    message = "a #[custom_tool] function cannot return `{Self}`",
    label = "this returns `{Self}`",
    note = "return `String`, `&str`, `AgentToolResult`, `()`, or `Result<T, E>` with T one of those and E any `Display` error (`ToolError`, `std::io::Error`, `String`…)"
)]
pub trait ToolFnOutput {
    /// The conversion.
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError>;
}

impl<T: IntoToolResult> ToolFnOutput for T {
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError> {
        IntoToolResult::into_tool_result(self)
    }
}

/// What a `#[pending]` struct's `apply` may return.
#[diagnostic::on_unimplemented(
    message = "`apply` cannot return `{Self}`",
    label = "this returns `{Self}`",
    note = "return `String`, `&str`, `AgentToolResult`, `()`, or `Result<T, E>` with T one of those and E any `Display` error (`ToolError`, `std::io::Error`, `String`…)"
)]
pub trait ApplyOutput {
    /// The conversion.
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError>;
}

impl<T: IntoToolResult> ApplyOutput for T {
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError> {
        IntoToolResult::into_tool_result(self)
    }
}

/// What a `#[pending]` struct's `reject` may return: `()` keeps the default message.
#[diagnostic::on_unimplemented(
    message = "`reject` cannot return `{Self}`",
    label = "this returns `{Self}`",
    note = "return `()` to keep the default `Discarded: …` message, or `String`, `&str`, `AgentToolResult` or an `Option` of one of them to replace it"
)]
pub trait RejectOutput {
    /// The conversion: `None` keeps the default message.
    fn into_reject(self) -> Option<AgentToolResult>;
}

impl RejectOutput for () {
    fn into_reject(self) -> Option<AgentToolResult> {
        None
    }
}

impl<T: Into<AgentToolResult>> RejectOutput for Option<T> {
    fn into_reject(self) -> Option<AgentToolResult> {
        self.map(Into::into)
    }
}

impl RejectOutput for AgentToolResult {
    fn into_reject(self) -> Option<AgentToolResult> {
        Some(self)
    }
}

impl RejectOutput for String {
    fn into_reject(self) -> Option<AgentToolResult> {
        Some(self.into())
    }
}

impl RejectOutput for &str {
    fn into_reject(self) -> Option<AgentToolResult> {
        Some(self.into())
    }
}

pin_project_lite::pin_project! {
    /// A user's future with its output converted: what the generated `execute`, `apply` and
    /// `reject` return. Compiled once per tool, so it is as small as a future can be: one
    /// `poll` that maps the output, no state of its own (`futures_util`'s `Map` tracks
    /// completion, and that cost a 200-tool crate 5% of its LLVM IR; an `async` block costs
    /// a state machine and its drop glue).
    pub struct Converted<F, R>
    where
        F: Future,
    {
        #[pin]
        future: F,
        convert: fn(F::Output) -> R,
    }
}

impl<F, R> Converted<F, R>
where
    F: Future,
{
    fn new(future: F, convert: fn(F::Output) -> R) -> Self {
        Converted { future, convert }
    }
}

impl<F: Future, R> Future for Converted<F, R> {
    type Output = R;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let this = self.project();
        this.future.poll(cx).map(*this.convert)
    }
}

/// A `#[custom_tool] async fn`'s future, its output converted to a tool result.
pub fn tool_fn_output<F, O>(future: F) -> Converted<F, Result<AgentToolResult, ToolError>>
where
    F: Future<Output = O>,
    O: ToolFnOutput,
{
    Converted::new(future, ToolFnOutput::into_tool_result)
}

/// The marker of the one [`ExecuteHook`]/[`ApplyHook`]/[`RejectHook`] impl a method meets.
pub struct Method;

/// The marker of an impl no type meets ([`Unmeetable`] has none). It is there so each hook
/// trait has two impls: with a lone impl bounded by `FnOnce`, rustc reports a mismatched
/// method as "function is expected to take 2 arguments, but it takes 1", at the attribute;
/// with two, it reports the trait's own message.
pub enum NoMethod {}

/// Never implemented: the bound of the hook impls for [`NoMethod`].
pub trait Unmeetable {}

/// A user's `execute`, called through a trait so a wrong signature reads as a sentence.
#[diagnostic::on_unimplemented(
    message = "`{T}::execute` must be `async fn execute(self, ctx: &ToolContext) -> …`",
    label = "#[custom_tool] calls `{T}::execute(self, ctx)` with `self` by value",
    note = "write `impl {T} {{ async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {{ … }} }}`"
)]
pub trait ExecuteHook<'a, T, M> {
    /// What the method returns: a future, unless it is not `async`.
    type Output;
    /// Calls the method.
    fn call(self, this: T, ctx: &'a ToolContext) -> Self::Output;
}

impl<'a, T, F, R> ExecuteHook<'a, T, Method> for F
where
    F: FnOnce(T, &'a ToolContext) -> R,
{
    type Output = R;
    fn call(self, this: T, ctx: &'a ToolContext) -> R {
        self(this, ctx)
    }
}

impl<'a, T, F: Unmeetable> ExecuteHook<'a, T, NoMethod> for F {
    type Output = ();
    fn call(self, _: T, _: &'a ToolContext) {}
}

/// A user's `apply`, called through a trait so a wrong signature reads as a sentence.
#[diagnostic::on_unimplemented(
    message = "`{T}`'s apply method must be `async fn apply(&mut self, reason: &str) -> …`",
    label = "#[pending(apply)] calls this method with `&mut self` and the reason",
    note = "write `impl {T} {{ async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {{ … }} }}`, named as in `apply = …` if renamed there"
)]
pub trait ApplyHook<'a, 'b, T: 'a, M> {
    /// What the method returns: a future, unless it is not `async`.
    type Output;
    /// Calls the method.
    fn call(self, this: &'a mut T, reason: &'b str) -> Self::Output;
}

impl<'a, 'b, T: 'a, F, R> ApplyHook<'a, 'b, T, Method> for F
where
    F: FnOnce(&'a mut T, &'b str) -> R,
{
    type Output = R;
    fn call(self, this: &'a mut T, reason: &'b str) -> R {
        self(this, reason)
    }
}

impl<'a, 'b, T: 'a, F: Unmeetable> ApplyHook<'a, 'b, T, NoMethod> for F {
    type Output = ();
    fn call(self, _: &'a mut T, _: &'b str) {}
}

/// A user's `reject`, called through a trait so a wrong signature reads as a sentence.
#[diagnostic::on_unimplemented(
    message = "`{T}`'s reject method must be `async fn reject(&mut self, reason: &str) -> …`",
    label = "#[pending(reject)] calls this method with `&mut self` and the reason",
    note = "write `impl {T} {{ async fn reject(&mut self, reason: &str) -> Option<String> {{ … }} }}`, named as in `reject = …` if renamed there"
)]
pub trait RejectHook<'a, 'b, T: 'a, M> {
    /// What the method returns: a future, unless it is not `async`.
    type Output;
    /// Calls the method.
    fn call(self, this: &'a mut T, reason: &'b str) -> Self::Output;
}

impl<'a, 'b, T: 'a, F, R> RejectHook<'a, 'b, T, Method> for F
where
    F: FnOnce(&'a mut T, &'b str) -> R,
{
    type Output = R;
    fn call(self, this: &'a mut T, reason: &'b str) -> R {
        self(this, reason)
    }
}

impl<'a, 'b, T: 'a, F: Unmeetable> RejectHook<'a, 'b, T, NoMethod> for F {
    type Output = ();
    fn call(self, _: &'a mut T, _: &'b str) {}
}

/// Calls a `#[custom_tool]` struct's `execute`, its output converted to a tool result.
pub fn call_execute<'a, T, M, H, O>(
    hook: H,
    this: T,
    ctx: &'a ToolContext,
) -> Converted<H::Output, Result<AgentToolResult, ToolError>>
where
    H: ExecuteHook<'a, T, M>,
    H::Output: ExecuteIsAsync<Output = O>,
    O: ExecuteOutput,
{
    Converted::new(hook.call(this, ctx), ExecuteOutput::into_tool_result)
}

/// Calls a `#[pending]` struct's `apply`, its output converted to a tool result.
pub fn call_apply<'a, 'b, T: 'a, M, H, O>(
    hook: H,
    this: &'a mut T,
    reason: &'b str,
) -> Converted<H::Output, Result<AgentToolResult, ToolError>>
where
    H: ApplyHook<'a, 'b, T, M>,
    H::Output: ApplyIsAsync<Output = O>,
    O: ApplyOutput,
{
    Converted::new(hook.call(this, reason), ApplyOutput::into_tool_result)
}

/// Calls a `#[pending]` struct's `reject`, its output converted to a replacement message (or
/// none).
pub fn call_reject<'a, 'b, T: 'a, M, H, O>(
    hook: H,
    this: &'a mut T,
    reason: &'b str,
) -> Converted<H::Output, Option<AgentToolResult>>
where
    H: RejectHook<'a, 'b, T, M>,
    H::Output: RejectIsAsync<Output = O>,
    O: RejectOutput,
{
    Converted::new(hook.call(this, reason), RejectOutput::into_reject)
}

/// What the stub impls of an item with a compile error call: they exist so that one mistake
/// is one error (the item's uses still type-check), and never run, because the crate does
/// not compile.
#[cold]
pub fn after_compile_error<T>() -> T {
    panic!("xcsh-macros: this code belongs to an item with a compile error and never runs")
}
