//! [`Registry`]: the validated tools of a session, their schemas lowered for every dialect,
//! and the [`SessionBuilder`] that makes it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::approval::{ApprovalConfig, ApprovalPolicy, Approver, AuditLog};
use crate::context::Extensions;
use crate::dialect::{Dialect, ToolMeta, lower_schema, tool_definition};
use crate::names::{closest, validate_tool_name};
use crate::resolve::{RESOLVE_TOOL_NAME, ResolveTool};
use crate::schema::JsonObject;
use crate::session::Session;
use crate::suite::{Suite, registered_tools};
use crate::tool::{CustomTool, Tool, custom_tool};

/// Why a session could not be built: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "cannot build the session: {one}"),
            many => {
                write!(f, "cannot build the session ({} problems):", many.len())?;
                for problem in many {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for BuildError {}

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
    tools: Vec<Arc<dyn Tool>>,
    selection: Option<Vec<String>>,
    workspace_root: Option<PathBuf>,
    strict_gate: bool,
    extensions: Extensions,
    dialects: Option<Vec<Dialect>>,
    approval: ApprovalConfig,
    audit: Option<Arc<AuditLog>>,
}

impl SessionBuilder {
    /// Registers a tool.
    #[must_use]
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Registers a shared tool.
    #[must_use]
    pub fn shared_tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers a [`CustomTool`] type.
    #[must_use]
    pub fn custom<T: CustomTool>(mut self) -> Self {
        self.tools.push(custom_tool::<T>());
        self
    }

    /// Registers every tool of a suite.
    #[must_use]
    pub fn suite(mut self, suite: impl Suite) -> Self {
        self.tools.extend(suite.tools());
        self
    }

    /// Registers every tool that registered itself (`#[custom_tool]` does), sorted by name.
    #[must_use]
    pub fn registered(mut self) -> Self {
        let mut registrations: Vec<_> = registered_tools().collect();
        registrations.sort_by_key(|r| r.name);
        self.tools
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
        self.selection = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The directory file tools work in (default: the current directory).
    #[must_use]
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace_root = Some(root.into());
        self
    }

    /// When on, any call other than `resolve` while actions are pending is refused with a
    /// message telling the model to call `resolve` first.
    #[must_use]
    pub fn strict_resolve_gate(mut self, on: bool) -> Self {
        self.strict_gate = on;
        self
    }

    /// The provider dialects this session must serve (default: all of them). Every tool's
    /// schema is lowered for each one when the session is built, so a type a dialect cannot
    /// express is a build error, never a surprise at call time; leave out dialects you don't
    /// use to accept such types.
    #[must_use]
    pub fn dialects(mut self, dialects: impl IntoIterator<Item = Dialect>) -> Self {
        self.dialects = Some(dialects.into_iter().collect());
        self
    }

    /// The approval policy for applies the model asks for through `resolve` (default
    /// [`ApprovalPolicy::Model`]: they apply). See [`approval`](crate::approval).
    #[must_use]
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval.policy = policy;
        self
    }

    /// The person to ask under [`ApprovalPolicy::Human`] or a rule that says ask. Without
    /// one, such an apply is refused and the action stays pending.
    #[must_use]
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.approval.approver = Some(Arc::new(approver));
        self
    }

    /// Records every push and resolve of the sessions built from this builder (or its
    /// registry) in `log`, one JSON line each.
    #[must_use]
    pub fn audit(mut self, log: AuditLog) -> Self {
        self.audit = Some(Arc::new(log));
        self
    }

    /// Shares a value with every tool call ([`ToolContext::extension`](crate::ToolContext::extension)).
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// Validates the tools and builds a registry that many sessions can share.
    pub fn build_registry(self) -> Result<Arc<Registry>, BuildError> {
        let mut problems = Vec::new();
        let mut tools = self.tools;

        if let Some(selection) = &self.selection {
            for name in selection {
                if name == RESOLVE_TOOL_NAME {
                    problems.push(format!(
                        "`{RESOLVE_TOOL_NAME}` cannot be selected: the runtime lists it whenever a selected tool can push pending actions or anything is pending; remove it from the selection"
                    ));
                } else if !tools.iter().any(|t| t.name() == name) {
                    problems.push(format!(
                        "selected tool `{name}` is not registered{}",
                        closest(name, tools.iter().map(|t| t.name()))
                            .map(|c| format!("; did you mean `{c}`?"))
                            .unwrap_or_default()
                    ));
                }
            }
            tools.retain(|t| selection.iter().any(|s| s == t.name()));
        }

        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (index, tool) in tools.iter().enumerate() {
            let name = tool.name();
            if let Err(problem) = validate_tool_name(name) {
                problems.push(problem);
            }
            if name == RESOLVE_TOOL_NAME {
                problems.push(format!(
                    "a tool named `{RESOLVE_TOOL_NAME}` is registered, but that name is reserved for the runtime's resolve tool; rename the tool"
                ));
                continue;
            }
            if tool.description().trim().is_empty() {
                problems.push(format!(
                    "tool `{name}` has no description; the model needs one to know when to call it"
                ));
            }
            if let Some(&first) = by_name.get(name) {
                problems.push(format!(
                    "two tools are named `{name}` (registrations {} and {}); tool names must be unique, rename one of them",
                    first + 1,
                    index + 1
                ));
            } else {
                by_name.insert(name.to_owned(), index);
            }
        }

        // `resolve` is always routed, last, so that no pushed action is ever a dead end; it
        // is listed at rest only when a tool declares it may push (see `Registry::listed`).
        let offers_resolve = tools.iter().any(|t| t.pushes_pending_actions());
        by_name.insert(RESOLVE_TOOL_NAME.to_owned(), tools.len());
        tools.push(Arc::new(ResolveTool));

        let dialects = self.dialects.unwrap_or_else(|| Dialect::ALL.to_vec());
        let mut lowered = vec![PerDialect::default(); tools.len()];
        let mut definitions = PerDialect::<Arc<[Value]>>::default();
        for &dialect in &dialects {
            let mut defs = Vec::with_capacity(tools.len());
            for (index, tool) in tools.iter().enumerate() {
                match lower_schema(dialect, tool.parameters()) {
                    Ok(schema) => {
                        defs.push(tool_definition(
                            dialect,
                            tool.name(),
                            &tool_meta(tool.as_ref()),
                            &schema,
                        ));
                        *lowered[index].slot(dialect) = Some(Arc::new(schema));
                    }
                    Err(error) => problems.push(error.with_tool(tool.name()).to_string()),
                }
            }
            *definitions.slot(dialect) = Some(defs.into());
        }

        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        let workspace_root = match self.workspace_root {
            Some(root) => root,
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        Ok(Arc::new(Registry {
            tools,
            by_name,
            offers_resolve,
            workspace_root: Arc::from(workspace_root),
            strict_gate: self.strict_gate,
            extensions: Arc::new(self.extensions),
            approval: match self.approval.policy {
                ApprovalPolicy::Model => None,
                _ => Some(Arc::new(self.approval)),
            },
            audit: self.audit,
            lowered,
            definitions,
        }))
    }

    /// Validates the tools and builds a session.
    pub fn build(self) -> Result<Session, BuildError> {
        Ok(Session::new(self.build_registry()?))
    }
}

/// Validated tools and settings, shared by any number of [`Session`]s (an MCP server makes one
/// session per client connection from the same registry).
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
    pub(crate) offers_resolve: bool,
    pub(crate) workspace_root: Arc<Path>,
    pub(crate) strict_gate: bool,
    pub(crate) extensions: Arc<Extensions>,
    pub(crate) approval: Option<Arc<ApprovalConfig>>,
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// Per tool (same index as `tools`), its schema lowered for each enabled dialect.
    lowered: Vec<PerDialect<Arc<JsonObject>>>,
    definitions: PerDialect<Arc<[Value]>>,
}

/// One optional value per dialect, indexed by the dialect's position in [`Dialect::ALL`].
#[derive(Clone)]
struct PerDialect<T>([Option<T>; Dialect::ALL.len()]);

impl<T> Default for PerDialect<T> {
    fn default() -> Self {
        PerDialect(std::array::from_fn(|_| None))
    }
}

impl<T> PerDialect<T> {
    fn index(dialect: Dialect) -> usize {
        Dialect::ALL
            .iter()
            .position(|&d| d == dialect)
            .unwrap_or_default()
    }

    fn slot(&mut self, dialect: Dialect) -> &mut Option<T> {
        &mut self.0[Self::index(dialect)]
    }

    fn get(&self, dialect: Dialect) -> Option<&T> {
        self.0[Self::index(dialect)].as_ref()
    }
}

/// What a definition carries besides the schema: description, title, annotations.
fn tool_meta(tool: &dyn Tool) -> ToolMeta {
    let mut meta = ToolMeta::new(tool.description()).with_title(tool.label());
    let annotations = tool.annotations();
    if !annotations.is_empty()
        && let Ok(value) = serde_json::to_value(annotations)
    {
        meta = meta.with_annotations(value);
    }
    meta
}

/// A dialect the session was not built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialectNotEnabled(pub Dialect);

impl fmt::Display for DialectNotEnabled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the session was not built for the {} dialect; add it with `SessionBuilder::dialects`",
            self.0
        )
    }
}

impl std::error::Error for DialectNotEnabled {}

impl Registry {
    /// The tools listed while nothing is pending, in registration order, `resolve` last when
    /// a tool declares it may push pending actions. A [`Session`] lists `resolve` also while
    /// anything is pending ([`Session::tools`]).
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        self.listed(false)
    }

    /// The tools listed to the model: `resolve` (always last) is listed when a tool declares
    /// it may push, or when something is pending, whoever pushed it.
    pub(crate) fn listed(&self, pending: bool) -> &[Arc<dyn Tool>] {
        &self.tools[..self.listed_len(pending)]
    }

    fn listed_len(&self, pending: bool) -> usize {
        if self.offers_resolve || pending {
            self.tools.len()
        } else {
            self.tools.len() - 1
        }
    }

    /// The tool with this name. `resolve` is always found: every session can resolve what
    /// it holds.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    /// The tool definitions in `dialect`'s request shape while nothing is pending, `resolve`
    /// included when a tool declares it may push; computed once when the registry was built.
    /// A [`Session`]'s [`definitions`](Session::definitions) also list `resolve` while
    /// anything is pending.
    pub fn definitions(&self, dialect: Dialect) -> Result<&[Value], DialectNotEnabled> {
        self.definitions_listed(dialect, false)
    }

    pub(crate) fn definitions_listed(
        &self,
        dialect: Dialect,
        pending: bool,
    ) -> Result<&[Value], DialectNotEnabled> {
        self.definitions
            .get(dialect)
            .map(|defs| &defs[..self.listed_len(pending)])
            .ok_or(DialectNotEnabled(dialect))
    }

    /// A tool's parameter schema lowered for `dialect`, computed once at build.
    pub fn lowered_parameters(
        &self,
        name: &str,
        dialect: Dialect,
    ) -> Result<&Arc<JsonObject>, DialectNotEnabled> {
        self.by_name
            .get(name)
            .and_then(|&index| self.lowered[index].get(dialect))
            .ok_or(DialectNotEnabled(dialect))
    }

    /// Whether `resolve` is listed at rest (some tool declares it may push pending actions).
    /// It is routed, and listed while anything is pending, either way.
    pub fn offers_resolve(&self) -> bool {
        self.offers_resolve
    }

    /// The workspace root given to every call.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// A new session over these tools, with its own empty pending stack.
    pub fn session(self: &Arc<Self>) -> Session {
        Session::new(Arc::clone(self))
    }

    /// A session whose pending stack is kept in `state_dir` under `key` (see
    /// [`durable`](crate::durable)): the stack a previous process left there is restored
    /// first, in order; actions that could not be kept are reported to the model with the
    /// next result ("`<label>` was lost when the server restarted; preview again.").
    ///
    /// ```
    /// use xcsh_core::Session;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let registry = Session::builder().build_registry().unwrap();
    /// let session = registry.durable_session(dir.path(), "main").unwrap();
    /// assert!(session.pending().is_empty());
    /// // A corrupt file is refused, naming it.
    /// std::fs::write(dir.path().join("other.stack"), "garbage").unwrap();
    /// let err = registry.durable_session(dir.path(), "other").unwrap_err();
    /// assert!(err.to_string().contains("other.stack` cannot be used"), "{err}");
    /// ```
    pub fn durable_session(
        self: &Arc<Self>,
        state_dir: &Path,
        key: &str,
    ) -> Result<Session, crate::durable::StateError> {
        crate::durable::check_key(state_dir, key)?;
        std::fs::create_dir_all(state_dir).map_err(|source| crate::durable::StateError::Io {
            step: "create the state directory",
            path: state_dir.to_path_buf(),
            source,
        })?;
        let path = state_dir.join(format!("{key}.stack"));
        let file = crate::durable::StackFile::lock(path.clone())?;
        let kept = crate::durable::read(&path)?;
        let session = Session::new(Arc::clone(self));
        // Restored in memory first, then written once: a crash meanwhile leaves the old file.
        let (lost, unrestored) = crate::durable::restore(session.pending(), kept);
        // The lost stay in the file until their notices are taken (`take_reminders`): a
        // process that dies before telling anyone tells the next one.
        session.pending().keep_in(file, unrestored)?;
        for lost in lost {
            session.reminders().push(lost);
        }
        Ok(session)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("workspace_root", &self.workspace_root)
            .field("strict_gate", &self.strict_gate)
            .finish_non_exhaustive()
    }
}
