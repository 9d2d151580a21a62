//! [`Registry`]: the validated tools of a session, their schemas lowered for every dialect,
//! and the [`SessionBuilder`] that makes it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::approval::{ApprovalConfig, ApprovalPolicy, AuditLog};
use crate::context::Extensions;
use crate::dialect::{Dialect, ToolMeta, lower_schema, tool_definition};
use crate::names::{closest, validate_tool_name};
use crate::resolve::{RESOLVE_TOOL_NAME, ResolveTool};
use crate::schema::JsonObject;
use crate::tool::Tool;

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

/// What a [`SessionBuilder`](crate::SessionBuilder) collects: the tools and settings a registry
/// is built from.
#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) selection: Option<Vec<String>>,
    pub(crate) workspace_root: Option<PathBuf>,
    pub(crate) strict_gate: bool,
    pub(crate) extensions: Extensions,
    pub(crate) dialects: Option<Vec<Dialect>>,
    pub(crate) approval: ApprovalConfig,
    pub(crate) audit: Option<Arc<AuditLog>>,
}

impl Registry {
    /// Validates the tools and builds a registry from a builder's parts.
    pub(crate) fn build(parts: Parts) -> Result<Arc<Registry>, BuildError> {
        let this = parts;
        let mut problems = Vec::new();
        let mut tools = this.tools;

        if let Some(selection) = &this.selection {
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

        let dialects = this.dialects.unwrap_or_else(|| Dialect::ALL.to_vec());
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
        let workspace_root = match this.workspace_root {
            Some(root) => root,
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        Ok(Arc::new(Registry {
            tools,
            by_name,
            offers_resolve,
            workspace_root: Arc::from(workspace_root),
            strict_gate: this.strict_gate,
            extensions: Arc::new(this.extensions),
            approval: match this.approval.policy {
                ApprovalPolicy::Model => None,
                _ => Some(Arc::new(this.approval)),
            },
            audit: this.audit,
            lowered,
            definitions,
        }))
    }
}

/// Validated tools and settings, shared by any number of [`Session`](crate::Session)s (an MCP server makes one
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
    /// a tool declares it may push pending actions. A [`Session`](crate::Session) lists `resolve` also while
    /// anything is pending ([`Session::tools`](crate::Session::tools)).
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
    /// A [`Session`](crate::Session)'s [`definitions`](crate::Session::definitions) also list `resolve` while
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
