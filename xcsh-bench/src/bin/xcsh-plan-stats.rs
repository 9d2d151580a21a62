//! Prints the engine's counts for one pattern over a tree, as JSON:
//! `{"filesScanned":…,"filesParsed":…,"filesChanged":…,"replacements":…,…}`.
//!
//! Usage: `xcsh-plan-stats --root DIR --lang LANG --pattern P --rewrite R`
//!
//! `bench/cli_bench.py` runs it once per pattern (untimed) to show how many files the
//! prefilter let through to the parser.

use std::process::ExitCode;

use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::workspace::Workspace;

fn main() -> ExitCode {
    match run() {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("xcsh-plan-stats: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<String, String> {
    let (mut root, mut lang, mut pattern, mut rewrite) = (None, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--root" => root = Some(value),
            "--lang" => lang = Some(value),
            "--pattern" => pattern = Some(value),
            "--rewrite" => rewrite = Some(value),
            other => return Err(format!("unknown flag {other}; see the usage in the source")),
        }
    }
    let root = root.ok_or("--root DIR is required")?;
    let pattern = pattern.ok_or("--pattern P is required")?;
    let rewrite = rewrite.ok_or("--rewrite R is required")?;
    let lang = lang
        .map(|l| l.parse::<Lang>().map_err(|e| e.to_string()))
        .transpose()?;
    let ws = Workspace::new(&root).map_err(|e| format!("--root {root}: {e}"))?;
    let request = EditRequest {
        ops: vec![Op::new(pattern, rewrite)],
        lang,
        ..EditRequest::default()
    };
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
        .map_err(|e| e.to_string())?;
    let mut totals = serde_json::to_value(plan.totals).map_err(|e| e.to_string())?;
    totals["parseErrors"] = plan.parse_errors.len().into();
    totals["skipped"] = plan.skipped.total().into();
    Ok(totals.to_string())
}
