//! Command-line parsing and dispatch: one module per subcommand, shared pieces beside them.

mod apply_patch;
mod approval;
mod ast_edit;
mod cache;
mod confirm;
mod demo;
mod guard;
mod logging;
mod progress;
mod recover;
mod review;
mod root;
mod serve;
mod session;
mod style;
mod tools;
mod undo;

use std::fmt;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tools for LLM coding agents: previewed edits that change nothing until resolved.
#[derive(Debug, Parser)]
#[command(name = "xcsh", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the built-in tools and `resolve` over MCP on stdin/stdout.
    Serve(serve::Args),
    /// Print the tool definitions for one provider, as JSON.
    Tools(tools::Args),
    /// Replay a JSONL script of tool calls against one session.
    #[command(
        after_help = "A line: {\"tool\": \"ast_edit\", \"args\": {\"ops\": [{\"pat\": \"$X.unwrap()\", \"out\": \"$X?\"}]}}\nBlank lines and lines starting with # are skipped. Exit code 2 if a line was malformed (the other lines still run)."
    )]
    Session(session::Args),
    /// Structural search-and-replace with a diff preview, applied after confirmation.
    #[command(
        after_help = "Exit codes: 0 applied or nothing to do, 1 declined or preview only, 2 error.\nExample: xcsh ast-edit -p '$X.unwrap()' -r '$X?' -l rust src/"
    )]
    AstEdit(ast_edit::Args),
    /// Apply a patch in the apply_patch format (Codex's): a coloured diff, then written on
    /// confirmation, all or nothing.
    #[command(
        after_help = "The patch: *** Begin Patch, then *** Add File: PATH (+ lines), *** Delete File: PATH, *** Update File: PATH [*** Move to: PATH] with @@ hunks ( , -, + lines), then *** End Patch. Paths are relative to --root.\nExit codes: 0 applied or nothing to do, 1 declined or preview only, 2 error (a hunk that does not apply is named with the closest place in the file; nothing is written).\nExample: xcsh apply-patch fix.patch --yes"
    )]
    ApplyPatch(apply_patch::Args),
    /// Show the whole preview → resolve flow on a bundled sample workspace.
    Demo(demo::Args),
    /// Finish or undo an apply that a crash interrupted, and remove what it left behind.
    #[command(
        after_help = "Prints what it found and did: \"rolled forward N files\", \"rolled back N files\" or \"nothing to do\". Exit code 0, or 2 if the journal is unusable or files changed since the crash (nothing is written then)."
    )]
    Recover(recover::Args),
    /// Revert the most recent apply in a workspace: a diff, then written on confirmation.
    #[command(
        after_help = "Every apply (ast-edit, resolve apply over serve or session, an earlier undo excepted) keeps its inverse in <root>/.xcsh/undo, the last --undo-keep of them. Exit codes: 0 reverted or nothing to undo, 1 declined or preview only, 2 error (a file changed since the apply: it is named and nothing is written)."
    )]
    Undo(undo::Args),
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Serve(_) => "serve",
            Command::Tools(_) => "tools",
            Command::Session(_) => "session",
            Command::AstEdit(_) => "ast-edit",
            Command::ApplyPatch(_) => "apply-patch",
            Command::Demo(_) => "demo",
            Command::Recover(_) => "recover",
            Command::Undo(_) => "undo",
        }
    }
}

/// A failure that ends the command with exit code 2; the message says what was wrong and
/// what to do.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

/// Exit code of a failure: usage errors and failed commands alike.
pub(crate) const EXIT_FAILURE: u8 = 2;

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    let name = cli.command.name();
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Session(args) => session::run(args),
        Command::AstEdit(args) => ast_edit::run(args),
        Command::ApplyPatch(args) => apply_patch::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Recover(args) => recover::run(args),
        Command::Undo(args) => undo::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("xcsh {name}: {failure}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// A runtime for the async parts (tool calls, the MCP server).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure(format!("cannot start the async runtime: {e}")))
}
