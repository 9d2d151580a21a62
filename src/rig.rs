//! [rig](https://github.com/0xPlaygrounds/rig) agents with xcsh tools (feature `rig`): a
//! session's tools and suites become rig tools, and the pending flow stays whole.
//!
//! [`RigTools::tools`] gives every tool of a [`Session`], `resolve` included, as rig
//! [`DynamicTool`]s for `AgentBuilder::dynamic_tools`; [`RigTools::hook`] is an
//! [`AgentHook`] that forces `resolve` (rig's `ToolChoice::Specific`, a per-turn
//! [`RequestPatch`]) on every model call while anything is pending, and asks for nothing
//! otherwise, so a forced choice is never stale. Each call's result reaches the model in
//! rig's content blocks (text, images), failures as rig's tool errors with the same
//! content, and the reminder a preview queues right after its result.
//!
//! rig runs one response's tool calls one after the other unless the run sets
//! `tool_concurrency(n)`. With it, calls to tools annotated read-only that push nothing run
//! together, and every other call runs alone (nothing else at the same time), in the order
//! rig starts them, which is the model's order unless rig's own scheduling reorders them.
//!
//! The version: rig-core and rig-agent 0.44, the newest release that builds with Rust 1.95
//! (0.45 and later need Rust 1.97.1). Both are re-exported, as [`rig_core`] and [`rig_agent`],
//! so a program can name the same types the adapter does.
//!
//! `cargo run --features rig --example rig_agent` runs a rig agent, driven by a scripted
//! Anthropic endpoint (no network), that previews an edit, is forced to `resolve`, and
//! applies it.
//!
//! ```
//! use xcsh::rig::RigTools;
//! use xcsh::rig::rig_agent::AgentBuilder;
//! use xcsh::rig::rig_core::{DynModel, operation::Completion};
//!
//! fn agent(model: impl Into<DynModel<Completion>>) -> xcsh::rig::rig_agent::Agent {
//!     // Your tools (`.suite(xcsh::tools::builtin_suite())` for ast_edit and ast_grep).
//!     let session = xcsh::Session::builder().build().unwrap();
//!     let xcsh_tools = RigTools::new(session);
//!     AgentBuilder::new(model)
//!         .dynamic_tools(xcsh_tools.tools())
//!         .add_hook(xcsh_tools.hook())
//!         .build()
//! }
//! ```

use std::sync::Arc;

use rig_agent::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, RequestPatch,
};
use rig_core::completion::message::{ImageMediaType, MimeType, ToolChoice, ToolName};
use rig_core::message::ToolResultContent;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde_json::Value;
use tokio::sync::RwLock;
use xcsh_core::{
    AgentToolResult, CallOptions, Content, Dialect, ErrorKind, RESOLVE_TOOL_NAME, Session, Tool,
};

#[doc(no_inline)]
pub use rig_agent;
#[doc(no_inline)]
pub use rig_core;

/// A session's tools as rig tools, with the hook that steers a rig agent toward `resolve`.
/// Cheap to clone; clones share the session.
///
/// ```
/// use xcsh::rig::RigTools;
/// // A session without tools of its own still offers `resolve`.
/// let session = xcsh::Session::builder().build().unwrap();
/// let tools = RigTools::new(session).tools();
/// let names: Vec<&str> = tools.iter().map(|t| t.name().as_str()).collect();
/// assert_eq!(names, ["resolve"]);
/// ```
#[derive(Clone)]
pub struct RigTools {
    inner: Arc<Inner>,
}

struct Inner {
    session: Session,
    /// The dialect the parameter schemas are lowered for, and the arguments restored from.
    dialect: Dialect,
    /// Read-only calls share it; every other call holds it alone.
    order: RwLock<()>,
}

impl RigTools {
    /// The tools of `session`, their parameter schemas lowered as for Anthropic (references
    /// inlined, a root object: what most providers rig speaks to take).
    ///
    /// ```
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let tools = xcsh::rig::RigTools::new(session);
    /// assert_eq!(tools.tools()[0].definition().parameters["type"], "object");
    /// ```
    pub fn new(session: Session) -> Self {
        RigTools {
            inner: Arc::new(Inner {
                session,
                dialect: Dialect::Anthropic,
                order: RwLock::new(()),
            }),
        }
    }

    /// The same tools with their schemas lowered for `dialect` instead (OpenAI strict mode,
    /// Gemini's subset, …), for the provider the agent talks to; arguments sent in that
    /// dialect's strict form are restored before decoding. A dialect the session's registry
    /// did not enable falls back to the canonical schemas.
    ///
    /// ```
    /// use xcsh::Dialect;
    /// use xcsh::rig::RigTools;
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let tools = RigTools::new(session).with_schemas(Dialect::OpenAiChat).tools();
    /// let schema = tools[0].definition().parameters;
    /// assert_eq!(schema["additionalProperties"], false);
    /// ```
    #[must_use]
    pub fn with_schemas(self, dialect: Dialect) -> Self {
        RigTools {
            inner: Arc::new(Inner {
                session: self.inner.session.clone(),
                dialect,
                order: RwLock::new(()),
            }),
        }
    }

    /// The session behind the tools: its pending stack, its reminders.
    ///
    /// ```
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let tools = xcsh::rig::RigTools::new(session.clone());
    /// assert_eq!(tools.session().id(), session.id());
    /// ```
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Every tool of the session as a rig tool, `resolve` last. rig fixes an agent's tool
    /// list when the agent is built, so `resolve` is on it even while nothing is pending
    /// (a call then answers that nothing is pending): every action any tool pushes stays
    /// resolvable.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let tools = xcsh::rig::RigTools::new(session).tools();
    /// let resolve = tools.last().unwrap();
    /// assert_eq!(resolve.name().as_str(), "resolve");
    /// // Nothing pending: the model is told so, as a rig tool error.
    /// let error = resolve
    ///     .execute(xcsh::serde_json::json!({"action": "apply", "reason": "r"}))
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.model_output().as_text(),
    ///     Some("No pending action to resolve. Nothing to apply or discard.")
    /// );
    /// # });
    /// ```
    pub fn tools(&self) -> Vec<DynamicTool> {
        let registry = self.inner.session.registry();
        let mut tools: Vec<&Arc<dyn Tool>> = registry.tools().iter().collect();
        if !registry.offers_resolve()
            && let Some(resolve) = registry.get(RESOLVE_TOOL_NAME)
        {
            tools.push(resolve);
        }
        tools
            .into_iter()
            .filter_map(|tool| self.rig_tool(tool.as_ref()))
            .collect()
    }

    /// The hook that forces `resolve` on each model call while anything is pending; add it
    /// to the agent (`AgentBuilder::add_hook`) or to one run.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use xcsh::rig::RigTools;
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let hook = RigTools::new(session).hook();
    /// assert!(!hook.forces_resolve());
    /// # });
    /// ```
    pub fn hook(&self) -> ResolveHook {
        ResolveHook {
            session: self.inner.session.clone(),
        }
    }

    fn rig_tool(&self, tool: &dyn Tool) -> Option<DynamicTool> {
        let name = ToolName::new(tool.name()).ok()?;
        let registry = self.inner.session.registry();
        let parameters = registry
            .lowered_parameters(tool.name(), self.inner.dialect)
            .unwrap_or(tool.parameters());
        let annotations = tool.annotations();
        let overlaps = annotations.read_only == Some(true)
            && !tool.pushes_pending_actions()
            && tool.name() != RESOLVE_TOOL_NAME;
        let inner = Arc::clone(&self.inner);
        let tool_name = tool.name().to_owned();
        Some(DynamicTool::new(
            name,
            tool.description(),
            Value::Object(parameters.as_ref().clone()),
            move |arguments| {
                let inner = Arc::clone(&inner);
                let tool_name = tool_name.clone();
                Box::pin(async move { inner.call(&tool_name, arguments, overlaps).await })
            },
        ))
    }
}

impl Inner {
    async fn call(
        &self,
        name: &str,
        arguments: Value,
        overlaps: bool,
    ) -> Result<ToolOutput, ToolExecutionError> {
        let options = CallOptions {
            dialect: Some(self.dialect),
            ..CallOptions::default()
        };
        let (result, reminders) = if overlaps {
            let _shared = self.order.read().await;
            let result = self.session.call_with(name, arguments, options).await;
            (result, self.session.take_reminders())
        } else {
            let _alone = self.order.write().await;
            let result = self.session.call_with(name, arguments, options).await;
            (result, self.session.take_reminders())
        };
        rig_result(&result, reminders)
    }
}

/// A result in rig's terms: its blocks, then the reminders; a failure as rig's tool error
/// of the nearest kind, showing the model the same blocks.
fn rig_result(
    result: &AgentToolResult,
    reminders: Vec<String>,
) -> Result<ToolOutput, ToolExecutionError> {
    let mut blocks: Vec<ToolResultContent> = result.content.iter().filter_map(block).collect();
    blocks.extend(reminders.into_iter().map(ToolResultContent::text));
    if blocks.is_empty() {
        blocks.push(ToolResultContent::text("(no output)"));
    }
    let output = ToolOutput::content(blocks)?;
    if !result.is_error() {
        return Ok(output);
    }
    let message = result.text_content();
    let error = match result.error_kind() {
        Some(ErrorKind::InvalidArguments { .. }) => ToolExecutionError::invalid_args(message),
        Some(ErrorKind::UnknownTool { .. }) => ToolExecutionError::not_found(message),
        Some(ErrorKind::Cancelled) => ToolExecutionError::cancelled(message),
        Some(ErrorKind::Refused | ErrorKind::Declined | ErrorKind::Denied) => {
            ToolExecutionError::refused(message)
        }
        _ => ToolExecutionError::other(message),
    };
    Err(error.with_model_output(output))
}

fn block(content: &Content) -> Option<ToolResultContent> {
    match content {
        Content::Text { text } if text.is_empty() => None,
        Content::Text { text } => Some(ToolResultContent::text(text.clone())),
        Content::Image { data, mime_type } => Some(ToolResultContent::image_base64(
            data.clone(),
            ImageMediaType::from_mime_type(mime_type),
            None,
        )),
        // A resource link, and any kind `Content` gains: shown as text.
        other => Some(ToolResultContent::text(xcsh_core::turn::described(other))),
    }
}

/// The [`AgentHook`] of [`RigTools::hook`]: on each model call, while the session has
/// anything pending, a per-turn [`RequestPatch`] with
/// `ToolChoice::Specific { function_names: ["resolve"] }`; otherwise no patch, so the
/// agent's own tool choice stands.
///
/// ```
/// use xcsh::rig::RigTools;
/// use xcsh::rig::rig_agent::AgentBuilder;
/// # fn run(model: xcsh::rig::rig_core::DynModel<xcsh::rig::rig_core::operation::Completion>) {
/// let session = xcsh::Session::builder().build().unwrap();
/// let tools = RigTools::new(session);
/// // On the agent, for every run; or on one run: `agent.prompt(p).add_hook(tools.hook())`.
/// let agent = AgentBuilder::new(model).add_hook(tools.hook()).build();
/// # let _ = agent;
/// # }
/// ```
#[derive(Clone)]
pub struct ResolveHook {
    session: Session,
}

impl ResolveHook {
    /// Whether the next model call will be forced to `resolve`: anything is pending.
    ///
    /// ```
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let hook = xcsh::rig::RigTools::new(session).hook();
    /// assert!(!hook.forces_resolve()); // nothing is pending
    /// ```
    pub fn forces_resolve(&self) -> bool {
        self.session.pending().has_pending()
    }
}

impl AgentHook for ResolveHook {
    fn name(&self) -> Option<String> {
        Some("xcsh::rig::ResolveHook".to_owned())
    }

    async fn on_completion_call(
        &self,
        _ctx: &HookContext,
        _event: CompletionCallEvent<'_>,
    ) -> CompletionCallAction {
        match ToolName::new(RESOLVE_TOOL_NAME) {
            Ok(resolve) if self.forces_resolve() => {
                CompletionCallAction::patch(RequestPatch::new().tool_choice(ToolChoice::Specific {
                    function_names: vec![resolve],
                }))
            }
            _ => CompletionCallAction::continue_run(),
        }
    }
}

#[cfg(all(test, feature = "tools"))]
mod tests {
    use serde_json::json;
    use xcsh_core::{CustomTool, ToolContext, ToolError};

    use super::*;

    /// Shows a picture.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Picture {}

    impl CustomTool for Picture {
        const NAME: &'static str = "picture";
        const DESCRIPTION: &'static str = "Shows a picture.";
        async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
            Ok(vec![
                Content::text("A dot:"),
                Content::image("iVBORw0KGgo=", "image/png"),
            ]
            .into())
        }
    }

    /// Waits at the test's barrier (read-only): finishes only if another call runs with it.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Meet {}

    impl CustomTool for Meet {
        const NAME: &'static str = "meet";
        const DESCRIPTION: &'static str = "Waits for a second call.";
        const ANNOTATIONS: xcsh_core::ToolAnnotations =
            xcsh_core::ToolAnnotations::new().read_only(true);
        async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
            let barrier = ctx
                .extension::<Arc<tokio::sync::Barrier>>()
                .expect("the test's barrier");
            barrier.wait().await;
            Ok("met".into())
        }
    }

    #[tokio::test]
    async fn read_only_calls_run_together_under_rigs_concurrency() {
        let session = Session::builder()
            .custom::<Meet>()
            .extension(Arc::new(tokio::sync::Barrier::new(2)))
            .build()
            .unwrap();
        let tools = RigTools::new(session).tools();
        let meet = &tools[0];
        // Run one after the other, the first would wait for ever.
        let (one, two) = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            tokio::join!(meet.execute(json!({})), meet.execute(json!({})))
        })
        .await
        .expect("the two read-only calls overlapped");
        assert_eq!(one.unwrap().as_text(), Some("met"));
        assert_eq!(two.unwrap().as_text(), Some("met"));
    }

    /// The same wait, from a tool that is not read-only: it must run alone.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct MeetAlone {}

    impl CustomTool for MeetAlone {
        const NAME: &'static str = "meet_alone";
        const DESCRIPTION: &'static str = "Waits for a second call, changing things.";
        async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
            Meet {}.execute(ctx).await
        }
    }

    #[tokio::test]
    async fn a_call_that_is_not_read_only_runs_alone() {
        let session = Session::builder()
            .custom::<Meet>()
            .custom::<MeetAlone>()
            .extension(Arc::new(tokio::sync::Barrier::new(2)))
            .build()
            .unwrap();
        let tools = RigTools::new(session).tools();
        let (meet, alone) = (&tools[0], &tools[1]);
        assert_eq!(alone.name().as_str(), "meet_alone");
        let together = tokio::time::timeout(std::time::Duration::from_millis(300), async {
            tokio::join!(alone.execute(json!({})), meet.execute(json!({})))
        })
        .await;
        assert!(together.is_err(), "a write ran alongside a read");
    }

    fn session() -> Session {
        Session::builder()
            .suite(xcsh_tools::builtin_suite())
            .custom::<Picture>()
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn images_become_rig_image_blocks_and_failures_rig_errors_with_the_same_text() {
        let tools = RigTools::new(session());
        let all = tools.tools();
        let picture = all.iter().find(|t| t.name().as_str() == "picture").unwrap();
        let output = picture.execute(json!({})).await.unwrap();
        let blocks = output.as_content();
        assert_eq!(blocks[0].as_text(), Some("A dot:"));
        assert!(matches!(&blocks[1], ToolResultContent::Image(image)
            if image.media_type == Some(ImageMediaType::PNG)));

        let resolve = all.iter().find(|t| t.name().as_str() == "resolve").unwrap();
        let error = resolve
            .execute(json!({"action": "apply", "reason": "r"}))
            .await
            .unwrap_err();
        assert_eq!(
            error.model_output().as_text(),
            Some("No pending action to resolve. Nothing to apply or discard.")
        );
    }

    #[tokio::test]
    async fn a_preview_carries_its_reminder_and_the_hook_forces_resolve_until_it_is_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn f() { x.unwrap(); }\n").unwrap();
        let session = Session::builder()
            .suite(xcsh_tools::builtin_suite())
            .workspace_root(dir.path())
            .build()
            .unwrap();
        let tools = RigTools::new(session);
        let hook = tools.hook();
        let all = tools.tools();
        let edit = all
            .iter()
            .find(|t| t.name().as_str() == "ast_edit")
            .unwrap();
        let output = edit
            .execute(json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}))
            .await
            .unwrap();
        let last = output.as_content().last().unwrap().as_text().unwrap();
        assert_eq!(last, xcsh_core::RESOLVE_REMINDER);
        assert!(hook.forces_resolve());

        let resolve = all.iter().find(|t| t.name().as_str() == "resolve").unwrap();
        let applied = resolve
            .execute(json!({"action": "apply", "reason": "ok"}))
            .await
            .unwrap();
        assert_eq!(applied.as_text(), Some("Applied 1 replacement in 1 file."));
        assert!(!hook.forces_resolve());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
            "fn f() { x?; }\n"
        );
    }
}
