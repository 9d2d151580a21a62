//! The [`Tool`] trait the runtime dispatches on, and the typed [`CustomTool`] most authors write.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::result::AgentToolResult;
use crate::schema::{JsonObject, cached_schema_for};

/// Hints about a tool's behaviour, as MCP defines them. `None` means "not stated".
///
/// ```
/// use xcsh_core::ToolAnnotations;
/// const PREVIEW: ToolAnnotations = ToolAnnotations::new().read_only(true).idempotent(true);
/// assert_eq!(PREVIEW.read_only, Some(true));
/// assert_eq!(PREVIEW.destructive, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub const fn new() -> Self {
        ToolAnnotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Sets the read-only hint.
    pub const fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Sets the destructive hint.
    pub const fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Sets the idempotent hint.
    pub const fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Sets the open-world hint.
    pub const fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}

/// A tool the runtime can list and call: the dynamic, object-safe form.
///
/// Most tools are written as a [`CustomTool`] (usually through `#[custom_tool]`) and bridged
/// here by the runtime. Implement `Tool` directly for tools that carry state or
/// decode their own arguments.
///
/// ```
/// use std::sync::{Arc, LazyLock};
/// use xcsh_core::{AgentToolResult, BoxFuture, JsonObject, Session, Tool, ToolContext, ToolError};
///
/// struct Clock;
///
/// static NO_PARAMS: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
///     let serde_json::Value::Object(map) = serde_json::json!({"type": "object", "properties": {}}) else { unreachable!() };
///     Arc::new(map)
/// });
///
/// impl Tool for Clock {
///     fn name(&self) -> &str { "clock" }
///     fn description(&self) -> &str { "Tells the time." }
///     fn parameters(&self) -> &Arc<JsonObject> { &NO_PARAMS }
///     fn execute<'a>(&'a self, _ctx: &'a ToolContext, _args: serde_json::Value)
///         -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
///         Box::pin(async { Ok("noon".into()) })
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::builder().tool(Clock).build().unwrap();
/// assert_eq!(session.call("clock", serde_json::json!({})).await.text_content(), "noon");
/// # });
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by: 1–64 of `[A-Za-z0-9_-]`, starting with a letter or `_`.
    fn name(&self) -> &str;

    /// A short human-readable title; defaults to the name.
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments (canonical form; dialects lower it). Return a cached
    /// value: this is called on every tool listing.
    fn parameters(&self) -> &Arc<JsonObject>;

    /// Behaviour hints for clients.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new()
    }

    /// The JSON Schema of the tool's structured output (MCP `outputSchema`), when it
    /// declares one: then every successful result carries
    /// [`structured`](AgentToolResult::structured) valid against it. Return a cached value.
    fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        None
    }

    /// Whether the tool may push pending actions. A session that registers such a tool
    /// offers `resolve` to the model.
    fn pushes_pending_actions(&self) -> bool {
        false
    }

    /// Hidden tools (such as `resolve`) are managed by the runtime: a user cannot select or
    /// deselect them.
    fn hidden(&self) -> bool {
        false
    }

    /// Runs the tool. `args` is the raw JSON the model sent.
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>>;
}

impl<T: Tool + ?Sized> Tool for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn label(&self) -> &str {
        (**self).label()
    }
    fn description(&self) -> &str {
        (**self).description()
    }
    fn parameters(&self) -> &Arc<JsonObject> {
        (**self).parameters()
    }
    fn annotations(&self) -> ToolAnnotations {
        (**self).annotations()
    }
    fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        (**self).output_schema()
    }
    fn pushes_pending_actions(&self) -> bool {
        (**self).pushes_pending_actions()
    }
    fn hidden(&self) -> bool {
        (**self).hidden()
    }
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        (**self).execute(ctx, args)
    }
}

/// A tool whose parameters are a Rust type: decoded with serde, described with schemars.
///
/// `#[custom_tool]` writes this impl for you; writing it by hand is short too:
///
/// ```
/// use xcsh_core::{AgentToolResult, CustomTool, Session, ToolContext, ToolError};
///
/// /// Greets someone.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Greet {
///     /// Who to greet.
///     name: String,
/// }
///
/// impl CustomTool for Greet {
///     const NAME: &'static str = "greet";
///     const DESCRIPTION: &'static str = "Greets someone.";
///     async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
///         Ok(format!("Hello, {}!", self.name).into())
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::builder().custom::<Greet>().build().unwrap();
/// let result = session.call("greet", serde_json::json!({"name": "Ada"})).await;
/// assert_eq!(result.text_content(), "Hello, Ada!");
/// let bad = session.call("greet", serde_json::json!({"name": 7})).await;
/// assert!(bad.is_error());
/// assert!(bad.text_content().contains("name: invalid type: integer `7`, expected a string"));
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "not a tool",
    note = "a tool is a struct or `async fn` marked `#[custom_tool]`, or a type implementing `CustomTool` by hand"
)]
pub trait CustomTool: DeserializeOwned + JsonSchema + Send + Sized + 'static {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// A short human-readable title.
    const LABEL: &'static str = Self::NAME;
    /// What the tool does, for the model.
    const DESCRIPTION: &'static str;
    /// Behaviour hints.
    const ANNOTATIONS: ToolAnnotations = ToolAnnotations::new();
    /// Whether the tool may push pending actions (see [`Tool::pushes_pending_actions`]).
    const PUSHES_PENDING_ACTIONS: bool = false;

    /// The parameter schema, cached per type. Override only to post-process it.
    fn parameters() -> Arc<JsonObject> {
        cached_schema_for::<Self>()
    }

    /// The schema of the structured output, when the tool declares one
    /// (`#[custom_tool(output = T)]` writes `Some(cached_schema_for::<T>())`). Successful
    /// results then carry it ([`AgentToolResult::with_output`]).
    fn output_schema() -> Option<Arc<JsonObject>> {
        None
    }

    /// Runs the tool with decoded parameters.
    fn execute(
        self,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<AgentToolResult, ToolError>> + Send;
}

/// Bridges a [`CustomTool`] type to the dynamic [`Tool`] trait: decodes the JSON arguments
/// (errors name the JSON path and the expected type) and calls `execute`.
pub struct CustomToolAdapter<T> {
    parameters: Arc<JsonObject>,
    output: Option<Arc<JsonObject>>,
    marker: PhantomData<fn() -> T>,
}

impl<T: CustomTool> CustomToolAdapter<T> {
    /// The adapter for `T`.
    pub fn new() -> Self {
        CustomToolAdapter {
            parameters: T::parameters(),
            output: T::output_schema(),
            marker: PhantomData,
        }
    }
}

impl<T: CustomTool> Default for CustomToolAdapter<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The dynamic tool for a [`CustomTool`] type, ready to register.
pub fn custom_tool<T: CustomTool>() -> Arc<dyn Tool> {
    Arc::new(CustomToolAdapter::<T>::new())
}

/// Decodes tool arguments, naming the JSON path and the expected type on failure
/// (`files[2]: invalid type: integer `2`, expected a string`). `null` counts as `{}` because
/// clients send it for tools without parameters.
/// An array is refused: serde would read it positionally, as the fields in declaration order,
/// so `["apply", "why"]` sent to `resolve` would apply the top action.
pub fn decode_arguments<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = named_parameters(tool, args)?;
    // Tracking the path costs more than the decoding itself: only a failed decode pays for it,
    // by decoding again with the tracker to say where the problem is.
    match T::deserialize(&args) {
        Ok(decoded) => Ok(decoded),
        Err(_) => match serde_path_to_error::deserialize::<_, T>(&args) {
            Ok(decoded) => Ok(decoded),
            Err(error) => Err(located_error(tool, error)),
        },
    }
}

/// [`decode_arguments`] for a tool whose parameter schema is at hand (every
/// [`CustomTool`]): a failed decode is located by walking the schema (see
/// [`locate`](crate::locate)) rather than by decoding again with a path tracker, which would
/// compile a second copy of the type's `Deserialize`.
pub(crate) fn decode_with_schema<T: DeserializeOwned>(
    tool: &str,
    args: Value,
    schema: &JsonObject,
) -> Result<T, ToolError> {
    let args = named_parameters(tool, args)?;
    T::deserialize(&args).map_err(|error| schema_located_error(tool, &args, schema, error))
}

// `decode_arguments` is compiled once per parameter type; what does not need the type lives
// in these, compiled once.

fn schema_located_error(
    tool: &str,
    args: &Value,
    schema: &JsonObject,
    error: serde_json::Error,
) -> ToolError {
    let path = crate::locate::locate(schema, args).unwrap_or_default();
    ToolError::invalid_arguments(tool, &path, error)
}

/// The arguments as an object of named parameters: `null` becomes `{}`, an array is refused.
fn named_parameters(tool: &str, args: Value) -> Result<Value, ToolError> {
    match args {
        Value::Null => Ok(Value::Object(JsonObject::new())),
        Value::Array(_) => Err(ToolError::invalid_arguments(
            tool,
            "",
            "invalid type: sequence, expected an object of named parameters",
        )),
        args => Ok(args),
    }
}

fn located_error(tool: &str, error: serde_path_to_error::Error<serde_json::Error>) -> ToolError {
    let path = error.path().to_string();
    ToolError::invalid_arguments(tool, &path, error.into_inner())
}

impl<T: CustomTool> Tool for CustomToolAdapter<T> {
    fn name(&self) -> &str {
        T::NAME
    }
    fn label(&self) -> &str {
        T::LABEL
    }
    fn description(&self) -> &str {
        T::DESCRIPTION
    }
    fn parameters(&self) -> &Arc<JsonObject> {
        &self.parameters
    }
    fn annotations(&self) -> ToolAnnotations {
        T::ANNOTATIONS
    }
    fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output.as_ref()
    }
    fn pushes_pending_actions(&self) -> bool {
        T::PUSHES_PENDING_ACTIONS
    }
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let params = decode_with_schema::<T>(T::NAME, args, &self.parameters)?;
            params.execute(ctx).await
        })
    }
}
