//! Your own tools over MCP in a few lines: a `#[custom_tool]` next to the built-in suite,
//! served on stdin/stdout by `xcsh::mcp::McpServer`.
//!
//! Start it from an MCP client, e.g. with this server entry in the client's configuration:
//!
//! ```json
//! {"command": "cargo", "args": ["run", "--quiet", "--example", "mcp_server", "--", "/path/to/project"]}
//! ```
//!
//! The argument is the workspace root (default: the current directory). Logs go to stderr
//! (`RUST_LOG=debug` for more): stdout carries the protocol and nothing else.

use std::path::PathBuf;

use xcsh::mcp::McpServer;
use xcsh::tool::Workspace;
use xcsh::tools::builtin_suite;
use xcsh::{Session, ToolContext, ToolError, custom_tool};

/// Counts the lines of a file under the workspace root.
#[custom_tool(read_only, idempotent)]
struct CountLines {
    /// The file, relative to the workspace root.
    path: String,
}

impl CountLines {
    async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {
        // `Workspace` refuses paths that lead out of the root (`..`, absolute, symlinks).
        let file = Workspace::new(ctx.workspace_root())?.resolve_existing(&self.path)?;
        let text = std::fs::read_to_string(file)?;
        let lines = text.lines().count();
        let noun = if lines == 1 { "line" } else { "lines" };
        Ok(format!("{}: {lines} {noun}", self.path))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(std::env::current_dir, |arg| Ok(PathBuf::from(arg)))?;

    let registry = Session::builder()
        .custom::<CountLines>()
        .suite(builtin_suite())
        .workspace_root(root)
        .build_registry()?;
    McpServer::new(registry)
        .with_name("count-lines-example", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await?;
    Ok(())
}
