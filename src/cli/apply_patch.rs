//! `xcsh apply-patch`: the `apply_patch` tool's planner and ChangeSet for a person at a
//! terminal — the same coloured diff as `xcsh ast-edit`, then apply on confirmation (or
//! `--yes`), or file by file with `-i`.
//!
//! Exit codes (those of `ast-edit`): 0 applied or nothing to do, 1 declined or preview only,
//! 2 error (a patch that does not apply: it says which hunk and why, and nothing is written).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use xcsh::changeset::ChangeSet;
use xcsh::tool::Workspace;
use xcsh_tools::patch::{self, PatchPlan, PlannedFile};

use super::guard::{self, Verdict};
use super::{Failure, confirm, root, style, undo};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The patch file, in the apply_patch format (`*** Begin Patch` … `*** End Patch`);
    /// `-` or nothing reads it from stdin.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Apply without asking.
    #[arg(short = 'y', long, conflicts_with = "interactive")]
    yes: bool,
    /// Review file by file on the terminal (y apply, n skip, a this and the rest, q quit
    /// writing nothing); what was accepted is applied as one atomic change.
    #[arg(short = 'i', long)]
    interactive: bool,
    #[command(flatten)]
    undo: undo::UndoArgs,
    #[command(flatten)]
    syntax: guard::GuardArgs,
    /// The directory the patch's paths are relative to and confined to (default: the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let from_stdin = args.file.as_deref().is_none_or(|f| f.as_os_str() == "-");
    if from_stdin && args.interactive {
        return Err(Failure(
            "-i reads its answers from the terminal, so the patch cannot come from stdin too: give it as a FILE".to_owned(),
        ));
    }
    let text = match &args.file {
        Some(file) if !from_stdin => std::fs::read_to_string(file).map_err(|e| {
            Failure(format!(
                "cannot read the patch `{}`: {e}; give the path of a patch file, or - for stdin",
                file.display()
            ))
        })?,
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Failure(format!("cannot read the patch from stdin: {e}")))?;
            text
        }
    };
    let root = root::workspace_root(args.root.as_deref())?;
    let ws = Workspace::new(&root).map_err(|e| Failure(format!("--root: {e}")))?;
    let undo = args.undo.limits();
    let planned = patch::parse(&text)
        .and_then(|p| patch::plan(&ws, &p))
        .map_err(|e| {
            Failure(format!(
                "the patch was not applied: {e}\nNothing was written."
            ))
        })?;
    let planned = PatchPlan {
        changes: planned.changes.with_undo(undo),
        ..planned
    };
    let write_failed = |e: std::io::Error| Failure(format!("cannot write to stdout: {e}"));
    if planned.changes.is_empty() {
        let mut stdout = anstream::stdout().lock();
        writeln!(stdout, "No changes: the patch leaves every file as it is.")
            .map_err(write_failed)?;
        for note in &planned.notes {
            style::line(&mut stdout, style::WARN, note).map_err(write_failed)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let syntax = args.syntax;
    if args.interactive {
        return reviewed(&planned, syntax);
    }
    let verdict = syntax
        .enabled()
        .then(|| Verdict::of(&planned.changes, None, syntax));
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, anstream::stdout().lock());
    show(&mut stdout, &planned).map_err(write_failed)?;
    if let Some(verdict) = &verdict {
        verdict.show(&mut stdout).map_err(write_failed)?;
    }
    stdout.flush().map_err(write_failed)?;
    drop(stdout);
    if let Some(refusal) = verdict.as_ref().and_then(Verdict::refusal) {
        return Err(refusal);
    }
    let what = summary(&planned.files);
    if !confirm::go_ahead(args.yes, &format!("Apply the patch ({what})? [y/N] "))? {
        return Ok(ExitCode::from(confirm::NOT_APPLIED));
    }
    planned
        .changes
        .apply()
        .map_err(|e| Failure(e.to_string()))?;
    let mut stdout = anstream::stdout().lock();
    style::line(
        &mut stdout,
        style::OK,
        &format!("Applied the patch: {what}."),
    )
    .map_err(write_failed)?;
    Ok(ExitCode::SUCCESS)
}

fn summary(files: &[PlannedFile]) -> String {
    patch::summary(files.iter().map(|f| f.action.verb()))
}

/// The change-set names of one file of the plan (a rename by its source; a move that
/// rewrites by both of its paths), for `ChangeSet::retain_files`.
fn parts(file: &PlannedFile) -> Vec<String> {
    match &file.action {
        patch::FileAction::Rename { from } => vec![from.clone()],
        patch::FileAction::MoveHere { from, .. } => vec![file.file.clone(), from.clone()],
        _ => vec![file.file.clone()],
    }
}

/// The diff, the file list, the summary and the notes.
fn show(out: &mut impl Write, planned: &PatchPlan) -> std::io::Result<()> {
    style::diff(out, &planned.changes.diff())?;
    writeln!(out)?;
    for f in &planned.files {
        let line = format!("{}: {}", f.file, f.describe());
        if matches!(
            f.action,
            patch::FileAction::Replace
                | patch::FileAction::MoveHere {
                    overwrites: true,
                    ..
                }
        ) {
            style::line(out, style::WARN, &line)?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    style::line(out, style::FILE, &format!("{}.", summary(&planned.files)))?;
    for note in &planned.notes {
        style::line(out, style::WARN, note)?;
    }
    Ok(())
}

const HELP: &str = "y - apply this file\nn - skip this file\na - apply this file and all the rest\nq - quit, writing nothing at all";

/// `-i`: file by file, then the accepted files in one apply.
fn reviewed(planned: &PatchPlan, syntax: guard::GuardArgs) -> Result<ExitCode, Failure> {
    confirm::terminal_for_review()?;
    let total = planned.files.len();
    let mut chosen: Vec<&PlannedFile> = Vec::new();
    let mut rest = false;
    for (index, file) in planned.files.iter().enumerate() {
        if rest {
            chosen.push(file);
            continue;
        }
        let mut one = planned.changes.clone();
        one.retain_files(&parts(file)).map_err(Failure)?;
        {
            let mut out = anstream::stdout().lock();
            style::diff(&mut out, &one.diff())
                .and_then(|()| {
                    style::line(
                        &mut out,
                        style::FILE,
                        &format!("{}: {}", file.file, file.describe()),
                    )
                })
                .and_then(|()| out.flush())
                .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
        }
        let question = format!(
            "({}/{total}) Apply this change to {}? [y,n,a,q,?] ",
            index + 1,
            file.file
        );
        loop {
            match confirm::answer(&question)?.as_deref().map(str::trim) {
                None | Some("q") => {
                    eprintln!("Quit: nothing was written.");
                    return Ok(ExitCode::from(confirm::NOT_APPLIED));
                }
                Some("y") => {
                    chosen.push(file);
                    break;
                }
                Some("n") => break,
                Some("a") => {
                    chosen.push(file);
                    rest = true;
                    break;
                }
                Some(_) => eprintln!("{HELP}"),
            }
        }
    }
    if chosen.is_empty() {
        eprintln!("No file accepted: nothing was written.");
        return Ok(ExitCode::from(confirm::NOT_APPLIED));
    }
    let skipped = total - chosen.len();
    let names: Vec<String> = chosen.iter().flat_map(|f| parts(f)).collect();
    let mut changes: ChangeSet = planned.changes.clone();
    changes.retain_files(&names).map_err(Failure)?;
    let mut stdout = anstream::stdout().lock();
    guard::before_apply(&changes, None, syntax, &mut stdout)?;
    changes.apply().map_err(|e| Failure(e.to_string()))?;
    let chosen: Vec<PlannedFile> = chosen.into_iter().cloned().collect();
    let skipped = confirm::skipped(skipped);
    style::line(
        &mut stdout,
        style::OK,
        &format!("Applied the patch: {}{skipped}.", summary(&chosen)),
    )
    .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
