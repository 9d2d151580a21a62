//! A quick, manual timing of the engine on a large tree (not the benchmark harness).
//!
//! Ignored by default. Lay out the pinned corpus and run in release mode, one pattern per
//! process so peak memory can be read per pattern:
//!
//! ```text
//! cargo vendor --versioned-dirs --manifest-path ../shared/bench/corpus-rust/Cargo.toml /tmp/corpus
//! XCSH_BENCH_CORPUS=/tmp/corpus XCSH_BENCH_PAT='$X.unwrap()' XCSH_BENCH_OUT='$X.expect("checked")' \
//!     cargo test --release -p xcsh-tools --test engine_bench -- --ignored --nocapture
//! ```

use std::time::Instant;

use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::workspace::Workspace;

#[test]
#[ignore = "manual timing; needs XCSH_BENCH_CORPUS"]
fn time_a_preview() {
    let Ok(corpus) = std::env::var("XCSH_BENCH_CORPUS") else {
        eprintln!("set XCSH_BENCH_CORPUS to a directory");
        return;
    };
    let pat = std::env::var("XCSH_BENCH_PAT").unwrap_or_else(|_| "$X.unwrap()".into());
    let out = std::env::var("XCSH_BENCH_OUT").unwrap_or_else(|_| "$X.expect(\"checked\")".into());
    let diffs = std::env::var("XCSH_BENCH_DIFFS").is_ok();
    let ws = Workspace::new(&corpus).expect("corpus directory");
    let mut request = EditRequest {
        ops: vec![Op::new(pat.clone(), out)],
        lang: Some(Lang::Rust),
        ..EditRequest::default()
    };
    if let Ok(threads) = std::env::var("XCSH_BENCH_THREADS") {
        request.walk.threads = threads.parse().expect("XCSH_BENCH_THREADS is a number");
    }
    let start = Instant::now();
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default()).expect("plan");
    let planned = start.elapsed();
    let mut diff_bytes = 0;
    if diffs {
        for file in &plan.files {
            diff_bytes += engine::preview::unified_diff(file).len();
        }
    }
    let total = start.elapsed();
    if std::env::var("XCSH_BENCH_APPLY").is_ok() {
        // Write the plan to the (scratch!) corpus, to compare with `ast-grep --update-all`.
        let mut changes = xcsh_tools::changeset::ChangeSet::new(ws.clone());
        for file in &plan.files {
            changes
                .modify_splicing(&file.path, file.fingerprint, file.splices())
                .expect("queue");
        }
        changes.apply().expect("apply");
    }
    let kept: usize = plan
        .files
        .iter()
        .map(|f| {
            // What differs of the new texts: the rest is read from the file when shown.
            let texts: usize = f.splices().map(|s| s.text.len()).sum();
            texts + f.replacements.len() * std::mem::size_of::<engine::Replacement>()
        })
        .sum();
    eprintln!(
        "{pat}: plan {:.3}s, with diffs {:.3}s | scanned {} parsed {} changed {} replacements {} identical {} parse_errors {} | kept ~{} KiB, diffs {} KiB",
        planned.as_secs_f64(),
        total.as_secs_f64(),
        plan.totals.files_scanned,
        plan.totals.files_parsed,
        plan.totals.files_changed,
        plan.totals.replacements,
        plan.totals.identical,
        plan.parse_errors.len(),
        kept / 1024,
        diff_bytes / 1024,
    );
}

/// Where the time goes for one literal: reading, parsing, matching (one thread).
#[test]
#[ignore = "manual timing; needs XCSH_BENCH_CORPUS"]
fn time_the_parts() {
    use ast_grep_core::Pattern;
    use ast_grep_core::tree_sitter::LanguageExt;
    use ast_grep_language::SupportLang;
    let Ok(corpus) = std::env::var("XCSH_BENCH_CORPUS") else {
        return;
    };
    let word = std::env::var("XCSH_BENCH_WORD").unwrap_or_else(|_| "match".into());
    let pat = std::env::var("XCSH_BENCH_PAT").unwrap_or_else(|_| "match $E { $$$ARMS }".into());
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(&corpus).build().flatten() {
        if entry.path().extension().is_some_and(|e| e == "rs") {
            files.push(entry.into_path());
        }
    }
    let t = Instant::now();
    let mut texts = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if text.contains(&word) {
            texts.push(text);
        }
    }
    let read = t.elapsed();
    let bytes: usize = texts.iter().map(String::len).sum();
    let t = Instant::now();
    let mut roots = Vec::new();
    for text in &texts {
        roots.push(SupportLang::Rust.ast_grep(text));
    }
    let parse = t.elapsed();
    let pattern = Pattern::try_new(&pat, SupportLang::Rust).unwrap();
    let t = Instant::now();
    let mut n = 0;
    for root in &roots {
        n += root.root().find_all(&pattern).count();
    }
    let matching = t.elapsed();
    let t = Instant::now();
    let mut nodes = 0usize;
    for root in &roots {
        nodes += root.root().dfs().count();
    }
    let walking = t.elapsed();
    eprintln!(
        "{} files {} KiB: read+contains {:.3}s parse {:.3}s ({:.1} MB/s) find_all {:.3}s ({n}) dfs {:.3}s ({nodes} nodes)",
        texts.len(),
        bytes / 1024,
        read.as_secs_f64(),
        parse.as_secs_f64(),
        bytes as f64 / parse.as_secs_f64() / 1e6,
        matching.as_secs_f64(),
        walking.as_secs_f64(),
    );
}

/// Parse every `.rs` file once on one thread and drop it: the raw parser speed of this build.
#[test]
#[ignore = "manual timing; needs XCSH_BENCH_CORPUS"]
fn time_parse_only() {
    use ast_grep_core::tree_sitter::LanguageExt;
    use ast_grep_language::SupportLang;
    let Ok(corpus) = std::env::var("XCSH_BENCH_CORPUS") else {
        return;
    };
    let walk_only = std::env::var("XCSH_BENCH_WALK").is_ok();
    let start = Instant::now();
    let (mut bytes, mut nodes) = (0usize, 0usize);
    for entry in ignore::WalkBuilder::new(&corpus).build().flatten() {
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        bytes += text.len();
        let root = SupportLang::Rust.ast_grep(&text);
        if walk_only {
            let mut cursor = root.root().get_inner_node().walk();
            'walk: loop {
                nodes += 1;
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break 'walk;
                    }
                }
            }
        }
    }
    let t = start.elapsed().as_secs_f64();
    eprintln!(
        "parsed {} KiB in {t:.3}s ({:.1} MB/s), {nodes} nodes walked",
        bytes / 1024,
        bytes as f64 / t / 1e6
    );
}
