//! `xcsh undo`: revert the most recent apply in a workspace, shown as a diff and written on
//! confirmation (or `--yes`), as `ast-edit` does; `--list` shows what is kept. Also the
//! `--undo-keep` / `--undo-max-mb` flags every command that applies shares.
//!
//! Exit codes: 0 reverted or nothing to undo, 1 declined or preview only, 2 error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use xcsh::changeset::{Undo, UndoLimits};
use xcsh::tool::Workspace;

use super::{Failure, confirm, root, style};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Revert without asking.
    #[arg(short = 'y', long)]
    yes: bool,
    /// List the kept applies, oldest first, and revert nothing.
    #[arg(long, conflicts_with = "yes")]
    list: bool,
}

/// How many applies keep their inverse, for the commands that apply.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct UndoArgs {
    /// Keep the inverse of the last N applies for `undo` (0: keep none).
    #[arg(long, value_name = "N", default_value_t = UndoLimits::default().keep())]
    undo_keep: usize,
    /// At most this many MiB of original contents kept for `undo`, oldest dropped first.
    #[arg(long, value_name = "MIB", default_value_t = UndoLimits::default().max_bytes() >> 20)]
    undo_max_mb: u64,
}

impl UndoArgs {
    pub(crate) fn limits(&self) -> UndoLimits {
        UndoLimits::new(self.undo_keep, self.undo_max_mb.saturating_mul(1 << 20))
    }
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let root = root::workspace_root(args.root.as_deref())?;
    let ws = Workspace::new(&root).map_err(|e| Failure(format!("--root: {e}")))?;
    let mut stdout = anstream::stdout().lock();
    let write_failed = |e: std::io::Error| Failure(format!("cannot write to stdout: {e}"));
    if args.list {
        let history = Undo::history(&ws).map_err(|e| Failure(e.to_string()))?;
        if history.is_empty() {
            writeln!(stdout, "No applied change is kept in `{}`.", root.display())
                .map_err(write_failed)?;
        }
        for entry in history {
            writeln!(stdout, "{entry}").map_err(write_failed)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(undo) = Undo::last(&ws).map_err(|e| Failure(e.to_string()))? else {
        writeln!(
            stdout,
            "Nothing to undo: no applied change is kept in `{}`.",
            root.display()
        )
        .map_err(write_failed)?;
        return Ok(ExitCode::SUCCESS);
    };
    let what = undo.entry().to_string();
    style::line(&mut stdout, style::FILE, &format!("Revert {what}:")).map_err(write_failed)?;
    style::diff(&mut stdout, &undo.diff()).map_err(write_failed)?;
    drop(stdout);
    if !confirm::go_ahead(args.yes, &format!("Revert {what}? [y/N] "))? {
        return Ok(ExitCode::from(confirm::NOT_APPLIED));
    }
    let report = undo.apply().map_err(|e| Failure(e.to_string()))?;
    let mut stdout = anstream::stdout().lock();
    style::line(
        &mut stdout,
        style::OK,
        &format!("Reverted apply #{}: {report}.", undo.entry().id),
    )
    .map_err(write_failed)?;
    Ok(ExitCode::SUCCESS)
}
