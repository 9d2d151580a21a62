//! [`PendingFn`]: a pending action made of closures, for tools that don't want a type.

use std::fmt;
use std::future::Future;

use serde_json::Value;

use crate::error::ToolError;
use crate::future::BoxFuture;
use crate::pending::{DEFAULT_SOURCE_TOOL_NAME, PendingAction};
use crate::result::{AgentToolResult, IntoToolResult};

type ApplyFn =
    Box<dyn FnMut(String) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> + Send>;
type RejectFn = Box<dyn FnMut(String) -> BoxFuture<'static, Option<AgentToolResult>> + Send>;

/// A pending action built from closures: a label, an apply callback and optionally a reject
/// callback, details and a source tool name. Each callback receives the reason.
///
/// ```
/// use xcsh_core::{PendingFn, PendingActionStore, ResolveAction, resolve};
///
/// let plan = vec!["a.txt".to_string(), "b.txt".to_string()];
/// let action = PendingFn::new(format!("Batch rename: {} files", plan.len()), move |reason| {
///     let count = plan.len();
///     async move { Ok::<_, std::io::Error>(format!("Renamed {count} files. Reason: {reason}")) }
/// })
/// .on_reject(|reason| async move { Some(format!("Kept the names. Reason: {reason}").into()) })
/// .source_tool_name("batch_rename_preview");
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = PendingActionStore::new();
/// store.push(action);
/// let done = resolve(&store, ResolveAction::Apply, "approved").await.unwrap();
/// assert_eq!(done.result.text_content(), "Renamed 2 files. Reason: approved");
/// assert_eq!(done.summary.source_tool_name, "batch_rename_preview");
/// # });
/// ```
pub struct PendingFn {
    label: String,
    source_tool_name: String,
    details: Option<Value>,
    apply: ApplyFn,
    reject: Option<RejectFn>,
}

impl PendingFn {
    /// An action labelled `label` whose apply runs `apply(reason)`.
    pub fn new<F, Fut, R>(label: impl Into<String>, mut apply: F) -> Self
    where
        F: FnMut(String) -> Fut + Send + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        PendingFn {
            label: label.into(),
            source_tool_name: DEFAULT_SOURCE_TOOL_NAME.to_owned(),
            details: None,
            apply: Box::new(move |reason| {
                let fut = apply(reason);
                Box::pin(async move { fut.await.into_tool_result() })
            }),
            reject: None,
        }
    }

    /// Runs `reject(reason)` on discard; a returned result replaces the default message.
    #[must_use]
    pub fn on_reject<F, Fut>(mut self, mut reject: F) -> Self
    where
        F: FnMut(String) -> Fut + Send + 'static,
        Fut: Future<Output = Option<AgentToolResult>> + Send + 'static,
    {
        self.reject = Some(Box::new(move |reason| Box::pin(reject(reason))));
        self
    }

    /// Structured data for user interfaces.
    #[must_use]
    pub fn details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The tool that produced the action (default `custom_tool`).
    #[must_use]
    pub fn source_tool_name(mut self, name: impl Into<String>) -> Self {
        self.source_tool_name = name.into();
        self
    }
}

impl PendingAction for PendingFn {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn apply(
        &mut self,
        reason: &str,
    ) -> impl Future<Output = Result<AgentToolResult, ToolError>> + Send {
        (self.apply)(reason.to_owned())
    }

    fn reject(&mut self, reason: &str) -> impl Future<Output = Option<AgentToolResult>> + Send {
        let fut = self.reject.as_mut().map(|reject| reject(reason.to_owned()));
        async move {
            match fut {
                Some(fut) => fut.await,
                None => None,
            }
        }
    }

    fn details(&self) -> Option<Value> {
        self.details.clone()
    }

    fn source_tool_name(&self) -> &str {
        &self.source_tool_name
    }
}

impl fmt::Debug for PendingFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingFn")
            .field("label", &self.label)
            .field("source_tool_name", &self.source_tool_name)
            .field("has_reject", &self.reject.is_some())
            .finish_non_exhaustive()
    }
}
