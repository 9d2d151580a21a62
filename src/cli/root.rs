//! The workspace root every subcommand works in, and the registry of built-in tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xcsh::changeset::UndoLimits;
use xcsh::session::{Registry, SessionBuilder};
use xcsh::tools::syntax::SyntaxGuard;
use xcsh::tools::{AstToolsConfig, builtin_suite};

use super::Failure;

/// `--root` when given, else the current directory; it must be an existing directory.
/// Returned canonical, so messages and confinement checks agree on one spelling. An apply a
/// crash interrupted there is finished or undone first (and said so on stderr).
pub(crate) fn workspace_root(root: Option<&Path>) -> Result<PathBuf, Failure> {
    let root = workspace_root_unrecovered(root)?;
    match xcsh::changeset::recover(&root) {
        Ok(report) if report.journal.is_some() => {
            eprintln!("xcsh: found an interrupted apply in this workspace: {report}");
        }
        // Another process is applying right now: its apply is not interrupted.
        Ok(_) | Err(xcsh::changeset::RecoveryError::Busy { .. }) => {}
        Err(e) => return Err(Failure(e.to_string())),
    }
    Ok(root)
}

/// [`workspace_root`] without the recovery.
pub(crate) fn workspace_root_unrecovered(root: Option<&Path>) -> Result<PathBuf, Failure> {
    let given = match root {
        Some(root) => root.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            Failure(format!(
                "cannot read the current directory ({e}); pass --root DIR"
            ))
        })?,
    };
    let canonical = given.canonicalize().map_err(|e| {
        Failure(format!(
            "--root `{}`: {e}; pass an existing directory",
            given.display()
        ))
    })?;
    if !canonical.is_dir() {
        return Err(Failure(format!(
            "--root `{}` is not a directory; pass the directory the tools should work in",
            given.display()
        )));
    }
    Ok(canonical)
}

/// The built-in suite (`ast_grep`, `ast_edit`, `edit`, `write_file`, `undo` and `resolve`)
/// rooted at `root`.
pub(crate) fn builtin_registry(root: &Path) -> Result<Arc<Registry>, Failure> {
    build(builtin_builder(
        root,
        UndoLimits::default(),
        SyntaxGuard::default(),
    ))
}

/// A builder with the built-in suite rooted at `root`, its applies keeping undo records
/// within `undo` and its changes judged by the syntax guard `guard`, to configure further.
pub(crate) fn builtin_builder(root: &Path, undo: UndoLimits, guard: SyntaxGuard) -> SessionBuilder {
    xcsh::Session::builder()
        .suite(builtin_suite())
        .extension(
            AstToolsConfig::default()
                .with_undo_limits(undo)
                .with_syntax_guard(guard),
        )
        .workspace_root(root)
}

/// `--syntax-guard`, for the commands that serve the built-in tools.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct SyntaxGuardArgs {
    /// What to do with a change (ast_edit, apply_patch, edit, write_file) that introduces a
    /// syntax error into a file in a language xcsh parses: `warn` names it in the preview;
    /// `refuse` also makes `resolve` apply refuse it, writing nothing.
    #[arg(long, value_name = "POLICY", default_value = "warn", value_parser = parse_guard)]
    pub(crate) syntax_guard: SyntaxGuard,
}

fn parse_guard(s: &str) -> Result<SyntaxGuard, String> {
    s.parse()
}

/// Builds the registry of [`builtin_builder`].
pub(crate) fn build(builder: SessionBuilder) -> Result<Arc<Registry>, Failure> {
    builder.build_registry().map_err(|e| {
        Failure(format!(
            "{e} (a bug in the built-in tools; please report it)"
        ))
    })
}
