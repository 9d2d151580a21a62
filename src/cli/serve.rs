//! `xcsh serve`: the built-in tools over MCP on stdin/stdout.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use xcsh::mcp::McpServer;

use super::{Failure, root, runtime};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let root = root::workspace_root(args.root.as_deref())?;
    let registry = root::builtin_registry(&root)?;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "xcsh serve: speaking MCP on stdin/stdout for {}; start it from an MCP client (Ctrl-D to quit)",
            root.display()
        );
    }
    tracing::info!(root = %root.display(), "serving MCP on stdio");

    let runtime = runtime()?;
    let outcome = runtime.block_on(McpServer::new(registry).serve_stdio());
    // A read of a blocking stdin cannot be cancelled; don't let it hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome.map_err(|e| Failure(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
