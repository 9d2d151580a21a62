//! `xcsh recover`: finish or undo an apply a crash interrupted, and say what was done.

use std::path::PathBuf;
use std::process::ExitCode;

use super::Failure;
use super::root::workspace_root_unrecovered;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let root = workspace_root_unrecovered(args.root.as_deref())?;
    let report = xcsh::changeset::recover(&root).map_err(|e| Failure(e.to_string()))?;
    match &report.journal {
        Some(journal) => println!(
            "found an interrupted apply (journal `{}`): {report}",
            journal.display()
        ),
        None => println!("{report}"),
    }
    Ok(ExitCode::SUCCESS)
}
