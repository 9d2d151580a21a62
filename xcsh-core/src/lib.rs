//! Core runtime of xcsh: tools, the pending-action stack, `resolve`, sessions and
//! provider dialects. Depend on the `xcsh` facade, which re-exports a curated selection of
//! this crate in concept modules; this crate is its implementation.
//!
//! A tool that changes things does not act at once: it computes a preview, pushes a
//! [`PendingAction`] with [`ToolContext::push_pending_action`], and the change happens only
//! when the model (or a person) calls the hidden `resolve` tool with `action: "apply"`.
//! While anything is pending, [`Session::tool_choice`] forces `resolve` in each provider's
//! own format.
//!
//! ```
//! use xcsh_core::{AgentToolResult, CustomTool, Dialect, PendingAction, Session, ToolContext, ToolError};
//!
//! /// Deletes a scratch file, after a preview.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct DeleteFile { path: String }
//!
//! struct Deletion { path: String }
//!
//! impl PendingAction for Deletion {
//!     fn label(&self) -> String { format!("Delete: {}", self.path) }
//!     async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
//!         Ok(format!("Deleted {}.", self.path).into()) // a real tool would delete here
//!     }
//! }
//!
//! impl CustomTool for DeleteFile {
//!     const NAME: &'static str = "delete_file";
//!     const DESCRIPTION: &'static str = "Deletes a file after a preview.";
//!     const PUSHES_PENDING_ACTIONS: bool = true;
//!     async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
//!         ctx.push_pending_action(Deletion { path: self.path.clone() })?;
//!         Ok(format!("Will delete {}. Call resolve to apply or discard.", self.path).into())
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let session = Session::builder().custom::<DeleteFile>().build().unwrap();
//! assert_eq!(session.tool_names(), ["delete_file", "resolve"]);
//!
//! session.call("delete_file", serde_json::json!({"path": "a.txt"})).await;
//! assert_eq!(
//!     session.tool_choice(Dialect::Anthropic),
//!     Some(serde_json::json!({"type": "tool", "name": "resolve"}))
//! );
//!
//! let applied = session
//!     .call("resolve", serde_json::json!({"action": "apply", "reason": "user asked"}))
//!     .await;
//! assert_eq!(applied.text_content(), "Deleted a.txt.");
//! assert_eq!(session.tool_choice(Dialect::Anthropic), None);
//! # });
//! ```

//!
//! # Layers
//!
//! Each module names only modules below it (`tests/layers.rs` fails on a circle):
//!
//! ```text
//! builder, turn                  build sessions; a provider's response in, its messages out
//! session                        one conversation: calls, reminders, tool choice, resources
//! registry, render, macro_support  validated tools shared by sessions; views for people
//! resolve, suite                 `resolve` (take → gate → run → record); sets of tools
//! tool                           the `Tool` and `CustomTool` traits
//! context                        what a running tool sees
//! durable, resources, pending_fn the kept stack; published resources; closures as actions
//! pending                        the stack (durable observes it through `Keeper`)
//! approval, bounds               policies, the gate, rules, the audit log
//! result                         what a tool returns
//! error                          `ToolError`, `ErrorKind`, `ResolveError`
//! action, dialect, locate        `PendingId`, `PendingSummary`, `ResolveAction`; providers
//! effect, framing, future, kept, names, schema   leaves
//! ```

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro_support;
mod action;
pub mod approval;
mod bounds;
mod builder;
mod context;
pub mod dialect;
pub mod durable;
mod effect;
mod error;
pub mod framing;
mod future;
mod kept;
mod locate;
mod names;
mod pending;
mod pending_fn;
mod registry;
mod render;
mod resolve;
mod resources;
mod result;
pub mod schema;
mod session;
mod suite;
mod tool;
pub mod turn;
pub mod workspace;

pub use bounds::MAX_ARGUMENT_DEPTH;
pub use builder::SessionBuilder;
pub use context::{
    Extensions, Progress, ProgressSink, RESOLVE_REMINDER, Reminders, STORE_UNAVAILABLE, ToolContext,
};
pub use dialect::Dialect;
pub use dialect::Provider;
pub use effect::{Effect, EffectKind, EffectSource, FileEffect};
pub use error::{ErrorKind, ToolError};
pub use future::BoxFuture;
pub use names::validate_tool_name;
pub use pending::{
    DEFAULT_SOURCE_TOOL_NAME, PendingAction, PendingActionStore, PendingEvent, PendingId,
    PendingSummary,
};
pub use pending_fn::PendingFn;
pub use registry::{BuildError, DialectNotEnabled, Registry};
pub use render::ResolutionView;
pub use resolve::{
    APPLY_FAILED_PREFIX, NOTHING_PENDING, RESOLVE_TOOL_LABEL, RESOLVE_TOOL_NAME, Resolution,
    ResolveAction, ResolveArgs, ResolveError, ResolveTool, describe_with_stack, resolve,
    resolve_files,
};
pub use resources::{
    RESOURCE_SCHEME, Resource, ResourceBody, ResourceContents, ResourceError, ResourceInfo,
    resource_part_uri,
};
pub use result::{AgentToolResult, Content, IntoToolResult};
pub use schema::JsonObject;
pub use session::{CallOptions, ResolveBias, Session};
pub use suite::{Suite, ToolSuite, registered_suite};
pub use tokio_util::sync::CancellationToken;
pub use tool::{CustomTool, Tool, ToolAnnotations, decode_arguments};

// Plumbing of the macros and the facade, not API: generated code reaches these through
// `__macro_support`.
#[doc(hidden)]
pub use suite::{ToolRegistration, registered_tools};
#[doc(hidden)]
pub use tool::{CustomToolAdapter, custom_tool};
