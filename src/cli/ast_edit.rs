//! `xcsh ast-edit`: the `ast_edit` tool's engine and ChangeSet for a person at a terminal —
//! a coloured diff, then apply on confirmation (or `--yes`).
//!
//! Exit codes: 0 applied or nothing to do, 1 declined or preview only, 2 error.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use xcsh::changeset::{ChangeSet, UndoLimits};
use xcsh::tool::{PathError, Workspace};
use xcsh::tools::engine::{Control, EditPlan, EditRequest, EngineError, Lang, Op, Scope, Within};
// The binary reaches the engine's own plumbing, which the facade does not show.
use xcsh::tools::{preview_notes, render_near_misses, render_preview, summary};
use xcsh_tools::engine;

use super::guard::{self, Verdict};
use super::progress::StderrProgress;
use super::{Failure, confirm, review, root, style, undo};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The code to match, as an ast-grep pattern: `$X` matches one node, `$$$XS` a list.
    /// Repeat `-p PATTERN -r REWRITE` for several rewrites applied together.
    #[arg(
        short = 'p',
        long = "pattern",
        value_name = "PATTERN",
        required_unless_present = "rule"
    )]
    pattern: Vec<String>,
    /// The replacement; may use the pattern's metavariables. One per `-p`, in order.
    #[arg(
        short = 'r',
        long = "rewrite",
        value_name = "REWRITE",
        required_unless_present = "rule"
    )]
    rewrite: Vec<String>,
    /// Instead of `-p/-r`: an ast-grep rule file with a `fix` (the YAML of `ast-grep scan
    /// --rule`; several rules as `---` documents), applied as `ast-grep scan --rule FILE
    /// --update-all` applies it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["pattern", "rewrite"])]
    rule: Option<PathBuf>,
    #[arg(short = 'l', long = "lang", value_name = "LANG", help = lang_help())]
    lang: Option<String>,
    /// Only files whose root-relative path matches this glob, e.g. `src/**/*.rs`.
    #[arg(short = 'g', long, value_name = "GLOB")]
    glob: Option<String>,
    /// At most this many replacements (the first ones in path order); at least 1.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
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
    /// The directory edits are confined to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Files, directories or globs to edit (default: the whole root).
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

/// `--lang`'s help, listing the languages compiled into this binary.
fn lang_help() -> String {
    format!(
        "The language of the patterns: {} (default: inferred from each file's extension)",
        Lang::supported_list()
    )
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    // A person typing a path means that path: without --root, the root is the current
    // directory, or the directory holding every PATH given when one lies outside it.
    let implied = match &args.root {
        Some(_) => None,
        None => root_of_paths(&args.paths)?,
    };
    let root = root::workspace_root(args.root.as_deref().or(implied.as_deref()))?;
    let ws = Workspace::new(&root).map_err(|e| Failure(format!("--root: {e}")))?;
    let undo = args.undo.limits();
    let lang = args
        .lang
        .as_deref()
        .map(str::parse::<Lang>)
        .transpose()
        .map_err(engine_failure)?;
    let scopes = scope_paths(&root, &args.paths)?;
    if args.pattern.len() != args.rewrite.len() {
        return Err(Failure(format!(
            "{} --pattern but {} --rewrite: give one -r REWRITE after each -p PATTERN",
            args.pattern.len(),
            args.rewrite.len()
        )));
    }
    if args.limit == Some(0) {
        return Err(Failure(
            "--limit: must be at least 1; leave it out to keep every replacement".to_owned(),
        ));
    }
    let rule = match &args.rule {
        Some(file) => Some(std::fs::read_to_string(file).map_err(|e| {
            Failure(format!(
                "--rule {}: cannot read it: {e}; give the path of an ast-grep rule file (YAML)",
                file.display()
            ))
        })?),
        None => None,
    };
    let request = EditRequest {
        rule,
        ops: args
            .pattern
            .into_iter()
            .zip(args.rewrite)
            .map(|(pat, out)| Op::new(pat, out))
            .collect(),
        lang,
        limit: args.limit,
        // The guard takes what the plan's own trees tell of the results.
        check_syntax: args.syntax.enabled(),
        ..EditRequest::default()
    };

    let patterns: Vec<String> = request.ops.iter().map(|op| op.pat.clone()).collect();
    let started = Instant::now();
    let plan = {
        let indicator = StderrProgress::new();
        let report = |p| indicator.report(p);
        let control = Control {
            cancel: None,
            progress: Some(&report),
        };
        plan_scopes(&ws, &scopes, args.glob.as_deref(), &request, &control).map_err(|e| {
            match (&args.rule, e.0.strip_prefix("rule")) {
                // `rule: line 3: …` names the file the person gave.
                (Some(file), Some(rest)) => Failure(format!("--rule {}{rest}", file.display())),
                _ => e,
            }
        })?
    };

    // Buffered: a preview can run to a hundred thousand lines, and the standard output
    // writes each line on its own (a system call per line, a tenth of a large preview's time).
    // The buffer sits beneath the colour handling: where colours are stripped (not a
    // terminal), each run of text between two escape codes is a write of its own, which
    // must land in the buffer, not in a system call (80,000 of them for a preview of 2,700
    // files).
    let choice = anstream::AutoStream::choice(&std::io::stdout());
    let buffered: Box<dyn Write> = Box::new(std::io::BufWriter::with_capacity(
        1 << 16,
        std::io::stdout().lock(),
    ));
    let mut stdout = anstream::AutoStream::new(buffered, choice);
    let write_failed = |e: std::io::Error| Failure(format!("cannot write to stdout: {e}"));
    if plan.totals.replacements == 0 {
        writeln!(stdout, "{}", render_preview(&plan, 0)).map_err(write_failed)?;
        // What the tool's answer says too: the code closest to each pattern.
        let misses = if patterns.is_empty() {
            Vec::new()
        } else {
            let mut scope = Scope::root(&ws);
            if let [only] = scopes.as_slice() {
                scope = scope.with_path(only);
            }
            if let Some(glob) = args.glob.as_deref() {
                scope = scope.with_glob(glob);
            }
            let unmatched: Vec<usize> = (0..patterns.len()).collect();
            let deadline = engine::near_miss_deadline(started.elapsed());
            let within = Within {
                scope: &scope,
                lang,
                walk: &request.walk,
                cache: None,
            };
            // A search that found no file holding every literal of a pattern (over this same
            // scope) leaves none for the first phase: one walk instead of two.
            let pass = if plan.totals.files_with_literals == 0 && scopes.len() <= 1 {
                engine::near_misses_after_parsing_none
            } else {
                engine::near_misses
            };
            pass(
                &within,
                &patterns,
                &unmatched,
                deadline,
                &Control::default(),
            )
        };
        let fields: Vec<String> = (1..=patterns.len()).map(|i| format!("-p #{i}")).collect();
        if let Some(note) = render_near_misses(&misses, &fields) {
            writeln!(stdout, "\n{note}").map_err(write_failed)?;
        }
        stdout.flush().map_err(write_failed)?;
        return Ok(ExitCode::SUCCESS);
    }
    let syntax = args.syntax;
    if args.interactive {
        drop(stdout);
        return reviewed(ws, undo, syntax, plan);
    }
    // Staged before the question only for the guard, which judges what will be written: a
    // preview that is not applied holds no second copy of every new text.
    let staged = if syntax.enabled() {
        Some(stage(ws.clone(), undo, &plan, None)?)
    } else {
        None
    };
    let verdict = staged
        .as_ref()
        .map(|changes| Verdict::of(changes, Some(&plan), syntax));
    show(&mut stdout, &plan).map_err(write_failed)?;
    if let Some(verdict) = &verdict {
        verdict.show(&mut stdout).map_err(write_failed)?;
    }
    // Before the question is asked, and with its error reported (dropping would hide it).
    stdout.flush().map_err(write_failed)?;
    drop(stdout);
    if let Some(refusal) = verdict.as_ref().and_then(Verdict::refusal) {
        return Err(refusal);
    }

    let what = summary(plan.totals.replacements, plan.files.len());
    if !confirm::go_ahead(args.yes, &format!("Apply {what}? [y/N] "))? {
        return Ok(ExitCode::from(confirm::NOT_APPLIED));
    }

    let changes = match staged {
        Some(changes) => changes,
        None => stage(ws, undo, &plan, None)?,
    };
    drop(plan);
    changes.apply().map_err(|e| Failure(e.to_string()))?;
    let mut stdout = anstream::stdout().lock();
    style::line(&mut stdout, style::OK, &format!("Applied {what}.")).map_err(write_failed)?;
    Ok(ExitCode::SUCCESS)
}

/// `-i`: file by file, then the accepted files in one apply.
fn reviewed(
    ws: Workspace,
    undo: UndoLimits,
    syntax: guard::GuardArgs,
    plan: EditPlan,
) -> Result<ExitCode, Failure> {
    confirm::terminal_for_review()?;
    let chosen = match review::review(&plan)? {
        review::Review::Quit => {
            eprintln!("Quit: nothing was written.");
            return Ok(ExitCode::from(confirm::NOT_APPLIED));
        }
        review::Review::Apply(chosen) => chosen,
    };
    let skipped = plan.files.len() - chosen.len();
    if chosen.is_empty() {
        eprintln!("No file accepted: nothing was written.");
        return Ok(ExitCode::from(confirm::NOT_APPLIED));
    }
    // Only the accepted files, and of a split file only its accepted replacements.
    let changes = stage(ws, undo, &plan, Some(&chosen))?;
    let replacements: usize = chosen
        .iter()
        .map(|(index, only)| {
            only.as_ref()
                .map_or(plan.files[*index].replacements.len(), Vec::len)
        })
        .sum();
    let mut stdout = anstream::stdout().lock();
    guard::before_apply(&changes, Some(&plan), syntax, &mut stdout)?;
    let what = summary(replacements, chosen.len());
    changes.apply().map_err(|e| Failure(e.to_string()))?;
    let skipped = confirm::skipped(skipped);
    style::line(&mut stdout, style::OK, &format!("Applied {what}{skipped}."))
        .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// The paths as the engine takes them: relative to the root (a person's are relative to the
/// current directory), refused when they lead out of the root.
fn scope_paths(root: &Path, paths: &[String]) -> Result<Vec<String>, Failure> {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| Failure(format!("cannot read the current directory: {e}")))?;
    paths
        .iter()
        .map(|given| {
            let joined = normalize(&cwd.join(given));
            let resolved = joined.canonicalize().unwrap_or(joined);
            if !resolved.starts_with(root) {
                return Err(Failure(format!(
                    "PATH `{given}` is outside the root `{}`; edit files under the root, or pass --root DIR to widen it",
                    root.display()
                )));
            }
            // Root-relative, which the engine reads both as a path and as a glob.
            let relative = resolved.strip_prefix(root).unwrap_or(&resolved);
            Ok(match relative.to_string_lossy().into_owned() {
                empty if empty.is_empty() => ".".to_owned(),
                relative => relative,
            })
        })
        .collect()
}

/// The deepest directory holding every path given, when one of them lies outside the current
/// directory as written (`..`, an absolute path elsewhere); `None` when they all lie inside
/// (or none is given). Judged on the text, not on where links lead: a link inside the current
/// directory that leads out is still refused by the root's confinement. A glob counts from
/// its first component with a wildcard; a path that is not a directory, from its parent.
fn root_of_paths(paths: &[String]) -> Result<Option<PathBuf>, Failure> {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| Failure(format!("cannot read the current directory: {e}")))?;
    let mut dirs = Vec::new();
    for given in paths {
        let literal: PathBuf = Path::new(given)
            .components()
            .take_while(|c| {
                !c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            })
            .collect();
        let joined = normalize(&cwd.join(literal));
        let dir = if joined.is_dir() && !joined.is_symlink() {
            joined
        } else {
            joined.parent().map_or(joined.clone(), Path::to_path_buf)
        };
        dirs.push(dir);
    }
    if dirs.iter().all(|d| d.starts_with(&cwd)) {
        return Ok(None);
    }
    let mut common = dirs[0].clone();
    for dir in &dirs[1..] {
        while !dir.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    Ok(Some(common))
}

/// `a/./b/../c` as `a/c`, without touching the file system (the path may be a glob).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// One plan over every scope (the whole root when none): the engine takes one path at a time,
/// so each is planned and the plans are merged, a file named twice counted once.
///
/// A `--limit` counts across the scopes in the order they were given.
fn plan_scopes<'a>(
    ws: &'a Workspace,
    scopes: &'a [String],
    glob: Option<&'a str>,
    request: &EditRequest,
    control: &Control<'_>,
) -> Result<EditPlan, Failure> {
    let scope = |path: Option<&'a str>| {
        let mut scope = Scope::root(ws);
        if let Some(path) = path {
            scope = scope.with_path(path);
        }
        if let Some(glob) = glob {
            scope = scope.with_glob(glob);
        }
        scope
    };
    let failure = ops_failure(request.ops.len());
    if scopes.is_empty() {
        return engine::plan_edits(&scope(None), request, control).map_err(failure);
    }
    let mut merged = EditPlan::default();
    let mut seen = HashSet::new();
    let mut left = request.limit;
    for path in scopes {
        if left == Some(0) {
            break;
        }
        let request = EditRequest {
            limit: left,
            ..request.clone()
        };
        let plan =
            engine::plan_edits(&scope(Some(path.as_str())), &request, control).map_err(&failure)?;
        merged.totals.files_scanned += plan.totals.files_scanned;
        merged.totals.files_parsed += plan.totals.files_parsed;
        merged.totals.files_with_literals += plan.totals.files_with_literals;
        merged.totals.identical += plan.totals.identical;
        let before = merged.files.len();
        merged.files.extend(
            plan.files
                .into_iter()
                .filter(|f| seen.insert(f.path.clone())),
        );
        let added: usize = merged.files[before..]
            .iter()
            .map(|f| f.replacements.len())
            .sum();
        left = left.map(|n| n.saturating_sub(added));
        extend_unique(&mut merged.parse_errors, plan.parse_errors);
        extend_unique(&mut merged.warnings, plan.warnings);
        let skipped = &mut merged.skipped;
        extend_unique(&mut skipped.binary, plan.skipped.binary);
        extend_unique(&mut skipped.non_utf8, plan.skipped.non_utf8);
        extend_unique(&mut skipped.too_large, plan.skipped.too_large);
        extend_unique(&mut skipped.temp_artifacts, plan.skipped.temp_artifacts);
        extend_unique(&mut skipped.unreadable, plan.skipped.unreadable);
    }
    merged.files.sort_by(|a, b| a.display.cmp(&b.display));
    merged.totals.files_changed = merged.files.len();
    merged.totals.replacements = merged.files.iter().map(|f| f.replacements.len()).sum();
    merged.totals.replacements_found = merged.totals.replacements;
    Ok(merged)
}

fn extend_unique(list: &mut Vec<String>, more: Vec<String>) {
    for item in more {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// The diffs, the per-file counts, the summary and the notes. Each diff is made from its file
/// read again now, one file at a time; a file changed since it was planned is named instead.
fn show(out: &mut impl Write, plan: &EditPlan) -> std::io::Result<()> {
    for file in &plan.files {
        match engine::preview::try_unified_diff(file) {
            Ok(diff) => style::diff(out, &diff)?,
            Err(stale) => style::line(
                out,
                style::WARN,
                &format!(
                    "{stale} is no longer what this preview read, so its diff cannot be shown and applying will be refused; run the command again"
                ),
            )?,
        }
    }
    writeln!(out)?;
    for file in &plan.files {
        let n = file.replacements.len();
        writeln!(out, "{}: {}", file.display, count(n, "replacement"))?;
    }
    style::line(
        out,
        style::FILE,
        &format!(
            "{} ({} scanned).",
            summary(plan.totals.replacements, plan.files.len()),
            count(plan.totals.files_scanned, "file")
        ),
    )?;
    for note in preview_notes(plan) {
        style::line(out, style::WARN, &note)?;
    }
    Ok(())
}

/// `1 file`, `2 files`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The change set that writes exactly the previewed contents, all or nothing, refusing
/// files changed since: it holds each file's edits and splices them into the file as it
/// reads it at apply. With `chosen` (a review's answer), only those files, each whole or
/// only the replacements listed.
fn stage(
    ws: Workspace,
    undo: UndoLimits,
    plan: &EditPlan,
    chosen: Option<&[review::Accepted]>,
) -> Result<ChangeSet, Failure> {
    let all: Vec<review::Accepted>;
    let chosen = match chosen {
        Some(chosen) => chosen,
        None => {
            all = (0..plan.files.len()).map(|i| (i, None)).collect();
            &all
        }
    };
    let mut changes = ChangeSet::new(ws).with_undo(undo);
    for (index, only) in chosen {
        let file = &plan.files[*index];
        let keep = |i: &usize| only.as_ref().is_none_or(|only| only.contains(i));
        let splices: Vec<_> = file
            .replacements
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(i))
            .flat_map(|(_, r)| file.splices_of(r))
            .collect();
        changes
            .modify_splicing(&file.path, file.fingerprint, splices)
            .map_err(|e| Failure(format!("cannot stage the edit of `{}`: {e}", file.display)))?;
    }
    Ok(changes)
}

/// An engine error in the command line's terms: its field names become the flags.
fn engine_failure(error: EngineError) -> Failure {
    ops_failure(1)(error)
}

/// [`engine_failure`] for a request of `ops` pattern/rewrite pairs: with several, the flag
/// says which pair (`--pattern #2`).
fn ops_failure(ops: usize) -> impl Fn(EngineError) -> Failure {
    move |error| flag_failure(error, ops)
}

fn flag_failure(error: EngineError, ops: usize) -> Failure {
    let hint = match &error {
        EngineError::Path(PathError::OutsideRoot { .. }) => {
            "; or pass --root DIR to widen the root"
        }
        _ => "",
    };
    let message = error.to_string();
    let message = op_flag(&message, ops)
        .or_else(|| {
            [
                ("lang: ", "--lang: "),
                ("limit: ", "--limit: "),
                ("path: ", ""),
            ]
            .iter()
            .find_map(|(field, flag)| {
                message
                    .strip_prefix(field)
                    .map(|rest| format!("{flag}{rest}"))
            })
        })
        .unwrap_or(message);
    Failure(format!("{message}{hint}"))
}

/// `ops[0].pat: …` as `--pattern: …`; with several ops, `ops[1].out: …` as `--rewrite #2: …`.
fn op_flag(message: &str, ops: usize) -> Option<String> {
    let rest = message.strip_prefix("ops[")?;
    let (index, rest) = rest.split_once(']')?;
    let index: usize = index.parse().ok()?;
    let (flag, rest) = if let Some(rest) = rest.strip_prefix(".pat: ") {
        ("--pattern", rest)
    } else {
        ("--rewrite", rest.strip_prefix(".out: ")?)
    };
    Some(if ops == 1 {
        format!("{flag}: {rest}")
    } else {
        format!("{flag} #{}: {rest}", index + 1)
    })
}
