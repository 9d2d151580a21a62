//! `xcsh tools`: the tool definitions one provider's API takes, as JSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use xcsh::Dialect;

use super::{Failure, root};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The provider format: anthropic, openai-chat, openai-responses, gemini, bedrock, mcp.
    #[arg(long, value_name = "D", default_value = "mcp")]
    dialect: Dialect,
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let root = root::workspace_root(args.root.as_deref())?;
    let registry = root::builtin_registry(&root)?;
    let session = registry.session();
    let definitions = session
        .definitions(args.dialect)
        .map_err(|e| Failure(e.to_string()))?;
    let json = serde_json::to_string_pretty(definitions)
        .map_err(|e| Failure(format!("cannot encode the definitions: {e}")))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{json}").map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
