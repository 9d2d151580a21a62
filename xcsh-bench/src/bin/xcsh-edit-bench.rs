//! `edit` against a plain read-replace-write, and the syntax guard's share of a preview.
//!
//! 1. `edit`: one exact replacement in a generated Rust file of `--lines` lines, through a
//!    session (`edit` preview, then `resolve` apply: confinement, the uniqueness check, the
//!    diff, the syntax guard, the journalled apply with its undo record) against the
//!    reference, what a minimal `str_replace` editor does: read the file, check `old` occurs
//!    once, `replacen`, write it back. Median wall time of each (alternated runs), ratio.
//! 2. The syntax guard's cost: `SyntaxReport::check` on the same change, as a share of the
//!    `edit` preview; and on an `ast_edit`-sized change (`--root DIR`, every `$X.unwrap()`
//!    made `$X?` in the Rust files there, or `--pattern P --rewrite R`) as a share of
//!    planning it.
//!
//! Usage: `xcsh-edit-bench [--lines N] [--runs N] [--root DIR [--pattern P --rewrite R]]
//! [--out FILE.json]`

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;
use xcsh_core::Session;
use xcsh_tools::changeset::ChangeSet;
use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::syntax::SyntaxReport;
use xcsh_tools::workspace::Workspace;
use xcsh_tools::{AstToolsConfig, builtin_suite};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xcsh-edit-bench: {message}");
            ExitCode::from(2)
        }
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// A Rust file of about `lines` lines, with one unique line to replace in its middle.
fn source(lines: usize) -> String {
    let mut out = String::new();
    let fns = lines / 5;
    for i in 0..fns {
        if i == fns / 2 {
            out.push_str("pub fn target() -> u32 {\n    let answer = 41;\n    answer + 1\n}\n\n");
        } else {
            out.push_str(&format!(
                "pub fn f{i}(x: u32) -> u32 {{\n    let y = x.wrapping_mul({i});\n    y ^ 0x5a\n}}\n\n"
            ));
        }
    }
    out
}

const OLD: &str = "    let answer = 41;\n";
const NEW: &str = "    let answer = 42;\n";

fn run() -> Result<(), String> {
    let mut lines = 20_000;
    let mut runs = 11;
    let mut root: Option<std::path::PathBuf> = None;
    let mut out: Option<std::path::PathBuf> = None;
    let mut op = Op::new("$X.unwrap()", "$X?");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--lines" => {
                lines = value("--lines")?
                    .parse()
                    .map_err(|e| format!("--lines: {e}"))?
            }
            "--runs" => {
                runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--root" => root = Some(value("--root")?.into()),
            "--out" => out = Some(value("--out")?.into()),
            "--pattern" => op.pat = value("--pattern")?,
            "--rewrite" => op.out = value("--rewrite")?,
            other => {
                return Err(format!(
                    "unknown argument `{other}`; see the source's usage line"
                ));
            }
        }
    }
    let dir = tempfile_dir()?;
    let ws_root = dir.join("ws");
    std::fs::create_dir_all(&ws_root).map_err(|e| e.to_string())?;
    let file = ws_root.join("big.rs");
    let original = source(lines);
    let write_original = || std::fs::write(&file, &original).map_err(|e| e.to_string());
    write_original()?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let session = Session::builder()
        .suite(builtin_suite())
        .extension(AstToolsConfig::default())
        .workspace_root(&ws_root)
        .build()
        .map_err(|e| e.to_string())?;

    let (mut previews, mut applies, mut totals, mut reference, mut guard) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        // xcsh: preview, then apply.
        write_original()?;
        let start = Instant::now();
        let preview =
            rt.block_on(session.call("edit", json!({"path": "big.rs", "old": OLD, "new": NEW})));
        let previewed = start.elapsed().as_secs_f64();
        if preview.is_error() {
            return Err(format!("edit refused: {}", preview.text_content()));
        }
        let applied =
            rt.block_on(session.call("resolve", json!({"action": "apply", "reason": "bench"})));
        let total = start.elapsed().as_secs_f64();
        if applied.is_error() {
            return Err(format!("apply failed: {}", applied.text_content()));
        }
        previews.push(previewed);
        applies.push(total - previewed);
        totals.push(total);
        let expected = original.replacen(OLD, NEW, 1);
        if std::fs::read_to_string(&file).map_err(|e| e.to_string())? != expected {
            return Err("edit wrote something other than the replacement".into());
        }

        // The reference: read, check unique, replace, write.
        write_original()?;
        let start = Instant::now();
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        if text.matches(OLD).count() != 1 {
            return Err("the reference found `old` other than once".into());
        }
        std::fs::write(&file, text.replacen(OLD, NEW, 1)).map_err(|e| e.to_string())?;
        reference.push(start.elapsed().as_secs_f64());

        // The guard alone, on the same change.
        write_original()?;
        let mut changes = ChangeSet::new(Workspace::new(&ws_root).map_err(|e| e.to_string())?);
        changes
            .modify("big.rs", original.replacen(OLD, NEW, 1))
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let report = SyntaxReport::check(&changes);
        guard.push(start.elapsed().as_secs_f64());
        if !report.broken_files().is_empty() {
            return Err("the guard flagged a change that parses".into());
        }
    }
    let ms = |xs: &[f64]| median(xs.to_vec()) * 1e3;
    let (preview_ms, apply_ms, total_ms, reference_ms, guard_ms) = (
        ms(&previews),
        ms(&applies),
        ms(&totals),
        ms(&reference),
        ms(&guard),
    );
    println!(
        "edit on a {lines}-line Rust file ({} bytes), {runs} runs, medians:",
        original.len()
    );
    println!("  xcsh edit: preview {preview_ms:.2} ms + apply {apply_ms:.2} ms = {total_ms:.2} ms");
    println!("  read-replace-write: {reference_ms:.3} ms");
    println!("  ratio xcsh / reference: {:.1}x", total_ms / reference_ms);
    println!(
        "  syntax guard: {guard_ms:.2} ms = {:.0}% of the edit preview",
        100.0 * guard_ms / preview_ms
    );

    let mut ast = serde_json::Value::Null;
    if let Some(root) = root {
        ast = ast_edit_share(&root, &op, runs)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(out) = out {
        let report = json!({
            "lines": lines, "bytes": original.len(), "runs": runs,
            "edit": {"preview_ms": preview_ms, "apply_ms": apply_ms, "total_ms": total_ms},
            "reference_ms": reference_ms,
            "ratio": total_ms / reference_ms,
            "guard_ms": guard_ms,
            "guard_share_of_edit_preview": guard_ms / preview_ms,
            "ast_edit": ast,
        });
        std::fs::write(
            &out,
            serde_json::to_string_pretty(&report).unwrap_or_default(),
        )
        .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// The guard on an `ast_edit`-sized change over `root`, as a share of planning it.
fn ast_edit_share(root: &Path, op: &Op, runs: usize) -> Result<serde_json::Value, String> {
    let ws = Workspace::new(root).map_err(|e| format!("--root: {e}"))?;
    let request = EditRequest {
        ops: vec![op.clone()],
        lang: Some(Lang::Rust),
        ..EditRequest::default()
    };
    let (mut plans, mut guards) = (Vec::new(), Vec::new());
    let mut files = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
            .map_err(|e| e.to_string())?;
        let mut changes = ChangeSet::new(ws.clone());
        for file in plan.files {
            changes
                .modify_splicing(&file.path, file.fingerprint, file.splices())
                .map_err(|e| e.to_string())?;
        }
        let planned = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let report = SyntaxReport::check(&changes);
        guards.push(start.elapsed().as_secs_f64());
        plans.push(planned);
        files = report.files.len();
    }
    let (plan_ms, guard_ms) = (median(plans) * 1e3, median(guards) * 1e3);
    println!(
        "ast_edit `{}` -> `{}` over {} ({files} files changed): plan {plan_ms:.1} ms, syntax guard {guard_ms:.1} ms = {:.0}% of the preview",
        op.pat,
        op.out,
        root.display(),
        100.0 * guard_ms / (plan_ms + guard_ms)
    );
    Ok(
        json!({"root": root.display().to_string(), "pattern": op.pat, "rewrite": op.out, "files": files, "plan_ms": plan_ms, "guard_ms": guard_ms,
        "guard_share_of_preview": guard_ms / (plan_ms + guard_ms)}),
    )
}

/// A fresh scratch directory under the system's temporary directory.
fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("xcsh-edit-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}
