//! Suites of tools: explicit lists, and tools that registered themselves.

use std::sync::Arc;

use crate::tool::{CustomTool, Tool, custom_tool};

/// A group of tools registered together, e.g. everything a crate exports.
pub trait Suite {
    /// The suite's tools.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// An explicit suite, built in code.
///
/// ```
/// use xcsh_core::{ToolSuite, Suite};
/// let suite = ToolSuite::new().with_tool(xcsh_core::ResolveTool);
/// assert_eq!(suite.tools().len(), 1);
/// ```
#[derive(Clone, Default)]
pub struct ToolSuite {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolSuite {
    /// An empty suite.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    #[must_use]
    pub fn with_tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds a [`CustomTool`] type.
    #[must_use]
    pub fn with<T: CustomTool>(mut self) -> Self {
        self.tools.push(custom_tool::<T>());
        self
    }

    /// Adds every tool of another suite.
    #[must_use]
    pub fn with_suite(mut self, suite: &impl Suite) -> Self {
        self.tools.extend(suite.tools());
        self
    }
}

impl Suite for ToolSuite {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Suite for Vec<Arc<dyn Tool>> {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.clone()
    }
}

/// A tool that registered itself at link time (`#[custom_tool]` emits one per tool).
///
/// Collected with the `inventory` crate: it needs no build script and no list kept by hand,
/// works on every platform Rust's static constructors do, and a tool in any linked crate
/// shows up — see [`SessionBuilder::registered`](crate::SessionBuilder::registered).
pub struct ToolRegistration {
    /// The tool's name.
    pub name: &'static str,
    /// `module_path!()` where the tool was defined, to select a crate's tools.
    pub module_path: &'static str,
    /// Builds the tool.
    pub make: fn() -> Arc<dyn Tool>,
}

inventory::collect!(ToolRegistration);

/// Every self-registered tool in the program, in no particular order.
pub fn registered_tools() -> impl Iterator<Item = &'static ToolRegistration> {
    inventory::iter::<ToolRegistration>.into_iter()
}

/// The self-registered tools defined in modules under `prefix` (a crate name, or
/// `crate::module`), as a suite.
///
/// ```
/// let suite = xcsh_core::registered_suite("my_crate::tools");
/// assert!(xcsh_core::Suite::tools(&suite).is_empty());
/// ```
pub fn registered_suite(prefix: &str) -> ToolSuite {
    let mut registrations: Vec<_> = registered_tools()
        .filter(|r| {
            r.module_path == prefix
                || r.module_path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with("::"))
        })
        .collect();
    registrations.sort_by_key(|r| r.name);
    ToolSuite {
        tools: registrations.into_iter().map(|r| (r.make)()).collect(),
    }
}
