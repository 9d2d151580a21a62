//! [`SessionBuilder`]: collects tools and settings, then builds a [`Registry`] (shared by many
//! sessions) or a [`Session`]. Above both: it makes them, and neither names it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::approval::{ApprovalPolicy, Approver, AuditLog};
use crate::dialect::Dialect;
use crate::registry::{BuildError, Parts, Registry};
use crate::session::Session;
use crate::suite::{Suite, registered_tools};
use crate::tool::{CustomTool, Tool, custom_tool};

/// Collects tools and settings, then builds a [`Registry`] or a [`Session`].
///
/// ```
/// use xcsh_core::{Session, ToolSuite};
/// let session = Session::builder()
///     .suite(ToolSuite::new())
///     .workspace_root(std::env::temp_dir())
///     .strict_resolve_gate(true)
///     .build()
///     .unwrap();
/// assert!(session.tool_names().is_empty()); // nothing declares a push: `resolve` is not listed
/// ```
#[derive(Default)]
pub struct SessionBuilder {
    parts: Parts,
}

impl SessionBuilder {
    /// Registers a tool.
    #[must_use]
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.parts.tools.push(Arc::new(tool));
        self
    }

    /// Registers a shared tool.
    #[must_use]
    pub fn shared_tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.parts.tools.push(tool);
        self
    }

    /// Registers a [`CustomTool`] type.
    #[must_use]
    pub fn custom<T: CustomTool>(mut self) -> Self {
        self.parts.tools.push(custom_tool::<T>());
        self
    }

    /// Registers every tool of a suite.
    #[must_use]
    pub fn suite(mut self, suite: impl Suite) -> Self {
        self.parts.tools.extend(suite.tools());
        self
    }

    /// Registers every tool that registered itself (`#[custom_tool]` does), sorted by name.
    #[must_use]
    pub fn registered(mut self) -> Self {
        let mut registrations: Vec<_> = registered_tools().collect();
        registrations.sort_by_key(|r| r.name);
        self.parts
            .tools
            .extend(registrations.into_iter().map(|r| (r.make)()));
        self
    }

    /// Keeps only the named tools (a person's selection). `resolve` is managed by the
    /// runtime and cannot be selected or deselected.
    #[must_use]
    pub fn select<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parts.selection = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The directory file tools work in (default: the current directory).
    #[must_use]
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.parts.workspace_root = Some(root.into());
        self
    }

    /// When on, any call other than `resolve` while actions are pending is refused with a
    /// message telling the model to call `resolve` first.
    #[must_use]
    pub fn strict_resolve_gate(mut self, on: bool) -> Self {
        self.parts.strict_gate = on;
        self
    }

    /// The provider dialects this session must serve (default: all of them). Every tool's
    /// schema is lowered for each one when the session is built, so a type a dialect cannot
    /// express is a build error, never a surprise at call time; leave out dialects you don't
    /// use to accept such types.
    #[must_use]
    pub fn dialects(mut self, dialects: impl IntoIterator<Item = Dialect>) -> Self {
        self.parts.dialects = Some(dialects.into_iter().collect());
        self
    }

    /// The approval policy for applies the model asks for through `resolve` (default
    /// [`ApprovalPolicy::Model`]: they apply). See [`approval`](crate::approval).
    #[must_use]
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.parts.approval.policy = policy;
        self
    }

    /// The person to ask under [`ApprovalPolicy::Human`] or a rule that says ask. Without
    /// one, such an apply is refused and the action stays pending.
    #[must_use]
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.parts.approval.approver = Some(Arc::new(approver));
        self
    }

    /// Records every push and resolve of the sessions built from this builder (or its
    /// registry) in `log`, one JSON line each.
    #[must_use]
    pub fn audit(mut self, log: AuditLog) -> Self {
        self.parts.audit = Some(Arc::new(log));
        self
    }

    /// Shares a value with every tool call ([`ToolContext::extension`](crate::ToolContext::extension)).
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.parts.extensions.insert(value);
        self
    }

    /// Validates the tools and builds a registry that many sessions can share.
    pub fn build_registry(self) -> Result<Arc<Registry>, BuildError> {
        Registry::build(self.parts)
    }

    /// Validates the tools and builds a session.
    pub fn build(self) -> Result<Session, BuildError> {
        Ok(Session::new(self.build_registry()?))
    }
}

impl Session {
    /// Starts building a session.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }
}
