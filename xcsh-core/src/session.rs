//! [`Session`]: the registered tools, one pending stack, and the calls between them.

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::{Extensions, ProgressSink, RESOLVE_REMINDER, Reminders, ToolContext};
use crate::dialect::{
    Dialect, Provider, ToolMeta, lower_schema, restore_arguments, tool_definition,
};
use crate::error::{ToolError, panic_message};
use crate::names::validate_tool_name;
use crate::pending::PendingActionStore;
use crate::resolve::{RESOLVE_TOOL_NAME, ResolveTool};
use crate::result::{AgentToolResult, Content};
use crate::schema::JsonObject;
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
/// assert!(session.tool_names().is_empty()); // nothing pushes pending actions: no `resolve`
/// ```
#[derive(Default)]
pub struct SessionBuilder {
    tools: Vec<Arc<dyn Tool>>,
    selection: Option<Vec<String>>,
    workspace_root: Option<PathBuf>,
    strict_gate: bool,
    extensions: Extensions,
    dialects: Option<Vec<Dialect>>,
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

    /// Shares a value with every tool call ([`ToolContext::extension`]).
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
                        "`{RESOLVE_TOOL_NAME}` cannot be selected: the runtime adds it whenever a selected tool can push pending actions; remove it from the selection"
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

        let offers_resolve = tools.iter().any(|t| t.pushes_pending_actions());
        if offers_resolve {
            by_name.insert(RESOLVE_TOOL_NAME.to_owned(), tools.len());
            tools.push(Arc::new(ResolveTool));
        }

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
            lowered,
            definitions,
        }))
    }

    /// Validates the tools and builds a session.
    pub fn build(self) -> Result<Session, BuildError> {
        Ok(Session::new(self.build_registry()?))
    }
}

/// The closest of `candidates` to `name`, if any is close enough to be a likely typo.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Validated tools and settings, shared by any number of [`Session`]s (an MCP server makes one
/// session per client connection from the same registry).
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
    offers_resolve: bool,
    workspace_root: Arc<Path>,
    strict_gate: bool,
    extensions: Arc<Extensions>,
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
    /// The tools, in registration order, `resolve` last when offered.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&index| &self.tools[index])
    }

    /// The tool definitions in `dialect`'s request shape, `resolve` included when offered,
    /// computed once when the registry was built.
    pub fn definitions(&self, dialect: Dialect) -> Result<&[Value], DialectNotEnabled> {
        self.definitions
            .get(dialect)
            .map(|defs| &defs[..])
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

    /// Whether `resolve` is offered (some tool can push pending actions).
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

/// Options for one call.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The call id the model or client gave; generated when absent.
    pub call_id: Option<String>,
    /// Cancels the call: the model gets a `Cancelled` error result at once.
    pub cancellation: Option<CancellationToken>,
    /// Where the tool's progress reports go.
    pub progress: Option<ProgressSink>,
    /// The dialect the arguments come from. For OpenAI strict mode, explicit `null`s for
    /// omitted optional fields are removed before decoding.
    pub dialect: Option<Dialect>,
}

/// How to steer the model toward `resolve` while something is pending.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolveBias {
    /// Send this as the request's tool choice.
    ToolChoice(Value),
    /// The provider cannot force a named tool: deliver this reminder instead.
    Reminder(&'static str),
}

/// One conversation: the registered tools, its own pending-action stack and reminder queue.
/// Cheap to clone; clones share the same state.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = xcsh_core::Session::builder().build().unwrap();
/// let result = session.call("nope", serde_json::json!({})).await;
/// assert!(result.is_error);
/// assert_eq!(result.text_content(), "Unknown tool `nope`. No tools are registered.");
/// # });
/// ```
#[derive(Clone)]
pub struct Session {
    id: Arc<str>,
    registry: Arc<Registry>,
    store: Arc<PendingActionStore>,
    reminders: Arc<Reminders>,
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

impl Session {
    /// Starts building a session.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// A session over a registry, with an empty pending stack.
    pub fn new(registry: Arc<Registry>) -> Self {
        Session {
            id: Arc::from(format!(
                "session-{}",
                NEXT_SESSION.fetch_add(1, Ordering::Relaxed)
            )),
            registry,
            store: Arc::new(PendingActionStore::new()),
            reminders: Arc::default(),
        }
    }

    /// This session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The registry it draws tools from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The tools offered to the model, `resolve` included when offered.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        self.registry.tools()
    }

    /// The names of the offered tools.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools().iter().map(|t| t.name()).collect()
    }

    /// The pending-action stack.
    pub fn pending(&self) -> &Arc<PendingActionStore> {
        &self.store
    }

    /// Takes the reminders queued for the model (one per pushed preview).
    pub fn take_reminders(&self) -> Vec<String> {
        self.reminders.drain()
    }

    /// The reminder queue.
    pub fn reminders(&self) -> &Arc<Reminders> {
        &self.reminders
    }

    /// The tool choice to send with the next request: `resolve` forced while anything is
    /// pending, `None` otherwise (never a stale force), and `None` for a provider that cannot
    /// force a named tool (deliver [`RESOLVE_REMINDER`] instead; see [`resolve_bias`](Self::resolve_bias)).
    pub fn tool_choice(&self, provider: impl Into<Provider>) -> Option<Value> {
        match self.resolve_bias(provider)? {
            ResolveBias::ToolChoice(choice) => Some(choice),
            ResolveBias::Reminder(_) => None,
        }
    }

    /// How to steer the model toward `resolve`, or `None` when nothing is pending.
    pub fn resolve_bias(&self, provider: impl Into<Provider>) -> Option<ResolveBias> {
        if !self.store.has_pending() || !self.registry.offers_resolve {
            return None;
        }
        Some(
            match provider.into().forced_tool_choice(RESOLVE_TOOL_NAME) {
                Some(choice) => ResolveBias::ToolChoice(choice),
                None => ResolveBias::Reminder(RESOLVE_REMINDER),
            },
        )
    }

    /// The tool definitions for `dialect` (see [`Registry::definitions`]).
    pub fn definitions(&self, dialect: Dialect) -> Result<&[Value], DialectNotEnabled> {
        self.registry.definitions(dialect)
    }

    /// Calls a tool. Failures of every kind come back as error results the model can act
    /// on: unknown names (with the available ones), bad arguments (with the JSON path and
    /// the expected type), tool errors, and panics (the session keeps working).
    pub async fn call(&self, name: &str, args: Value) -> AgentToolResult {
        self.call_with(name, args, CallOptions::default()).await
    }

    /// [`call`](Self::call) with a call id, a cancellation token and a progress sink.
    pub async fn call_with(
        &self,
        name: &str,
        mut args: Value,
        options: CallOptions,
    ) -> AgentToolResult {
        if nests_deeper_than(&args, MAX_ARGUMENT_DEPTH) {
            // Dropping (or decoding) such a value recursively would overflow the stack and
            // abort the process: take it apart in a loop, and tell the model.
            dismantle(args);
            return AgentToolResult::error(
                ToolError::invalid_arguments(
                    name,
                    "",
                    format!(
                        "arrays and objects are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
                    ),
                )
                .into_message(),
            );
        }
        let Some(tool) = self.registry.get(name) else {
            let mut result = AgentToolResult::error(self.unknown_tool_message(name));
            shorten_error_texts(&mut result);
            return result;
        };
        if self.registry.strict_gate
            && name != RESOLVE_TOOL_NAME
            && let Some(top) = self.store.peek()
        {
            return AgentToolResult::error(format!(
                "Call refused: {} pending action(s) await resolution, the most recent being `{}`. Call the `{RESOLVE_TOOL_NAME}` tool first to apply or discard it, then call `{name}` again.",
                self.store.len(),
                top.label
            ));
        }

        if let Some(dialect) = options.dialect {
            restore_arguments(dialect, tool.parameters(), &mut args);
        }

        let call_id = options
            .call_id
            .unwrap_or_else(|| format!("call-{}", NEXT_CALL.fetch_add(1, Ordering::Relaxed)));
        let cancellation = options.cancellation.unwrap_or_default();
        let mut ctx = ToolContext::new()
            .with_call_id(call_id.as_str())
            .with_session_id(Arc::clone(&self.id))
            .with_workspace_root(self.registry.workspace_root.to_path_buf())
            .with_cancellation(cancellation.clone())
            .with_pending_store(Arc::clone(&self.store))
            .with_reminders(Arc::clone(&self.reminders))
            .with_extensions(Arc::clone(&self.registry.extensions));
        if let Some(sink) = options.progress {
            ctx = ctx.with_progress(sink);
        }

        let span = tracing::debug_span!("tool_call", tool = name, call_id = %call_id);
        let run = AssertUnwindSafe(tool.execute(&ctx, args))
            .catch_unwind()
            .instrument(span);
        let outcome = tokio::select! {
            biased;
            () = cancellation.cancelled() => Ok(Err(ToolError::cancelled())),
            outcome = run => outcome,
        };
        let mut result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => AgentToolResult::error(error.into_message()),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                tracing::error!(tool = name, %message, "tool panicked");
                AgentToolResult::error(format!(
                    "Tool `{name}` failed unexpectedly (panic: {message}). Nothing else was affected; you may retry with different arguments or use another tool."
                ))
            }
        };
        if result.is_error {
            shorten_error_texts(&mut result);
        }
        result
    }

    fn unknown_tool_message(&self, name: &str) -> String {
        let names = self.tool_names();
        if names.is_empty() {
            return format!("Unknown tool `{name}`. No tools are registered.");
        }
        let hint = closest(name, names.iter().copied())
            .map(|c| format!(" Did you mean `{c}`?"))
            .unwrap_or_default();
        format!(
            "Unknown tool `{name}`.{hint} Available tools: {}.",
            names.join(", ")
        )
    }
}

/// A value quoted in an error text (between backticks or double quotes) longer than this
/// many characters is shortened: errors name what the model sent, they must not echo 10 MB.
const MAX_QUOTED_CHARS: usize = 200;
/// An error text still longer than this keeps only its start and its end.
const MAX_ERROR_CHARS: usize = 8 * 1024;

/// Shortens long quoted values in an error result's texts, then over-long texts.
fn shorten_error_texts(result: &mut AgentToolResult) {
    for content in &mut result.content {
        if let Content::Text { text } = content
            && text.len() > MAX_QUOTED_CHARS
        {
            let mut short = shorten_quotes(text);
            if short.len() > MAX_ERROR_CHARS {
                short = keep_ends(&short, MAX_ERROR_CHARS / 2);
            }
            *text = short;
        }
    }
}

/// `text` with every backtick- or double-quoted span longer than [`MAX_QUOTED_CHARS`]
/// shortened to its start and a count of what was left out.
fn shorten_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ERROR_CHARS));
    let mut rest = text;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('`');
        let inner_start = open + quote.len_utf8();
        let Some(len) = rest[inner_start..].find(quote) else {
            break;
        };
        let inner = &rest[inner_start..inner_start + len];
        out.push_str(&rest[..inner_start]);
        let chars = inner.chars().count();
        if chars > MAX_QUOTED_CHARS {
            out.extend(inner.chars().take(MAX_QUOTED_CHARS / 2));
            out.push_str(&format!(
                "… ({} more characters)",
                chars - MAX_QUOTED_CHARS / 2
            ));
        } else {
            out.push_str(inner);
        }
        out.push(quote);
        rest = &rest[inner_start + len + quote.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// The first and last `keep` bytes of `text` (on character boundaries) around a note.
fn keep_ends(text: &str, keep: usize) -> String {
    let mut head = keep.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(keep).max(head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} … ({} bytes left out) … {}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// How deeply a call's arguments may nest arrays and objects: serde_json's parser refuses
/// deeper JSON text, so only a `Value` built in code can exceed it — and dropping or
/// decoding one 10,000 levels deep recursively overflows a thread's stack.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// Whether `value` nests arrays and objects more than `max` levels deep (without recursion).
fn nests_deeper_than(value: &Value, max: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        if depth >= max {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// Drops `value` one level at a time, so its depth cannot overflow the stack.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => stack.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("tools", &self.tool_names())
            .field("pending", &self.store.len())
            .finish()
    }
}
