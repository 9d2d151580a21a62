//! Oracle: the engine rewrites exactly what `ast-grep run --update-all` (CLI 0.51.1, the same
//! engine version as our `ast-grep-core`) rewrites, byte for byte.
//!
//! For each case the fixture tree (`tests/fixtures/oracle`, twenty languages, nested and
//! multi-line matches, unicode, CRLF files, a syntax error, hidden and .gitignored files) is
//! copied twice; the CLI rewrites one copy in place, the engine's plan is applied to the other
//! through a `ChangeSet`, and the two trees must be identical. Every file the CLI changed must
//! also have passed the engine's prefilter.
//!
//! The CLI is found through `AST_GREP`, else `<repo>/.venv/bin/ast-grep`
//! (`scripts/bootstrap-python.sh` installs it). Without it a plain `cargo test` skips this
//! test and says how to enable it; with `XCSH_REQUIRE_ORACLE=1` (`scripts/test-all.sh` sets
//! it) a missing CLI fails.

use std::ffi::OsStr;
use std::path::Path;

use xcsh_tools::engine::{self, CompiledOps, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::workspace::Workspace;

mod common;
use common::oracle::{
    apply_plan, ast_grep, first_difference, fixtures, fresh_copy, run_ast_grep, snapshot,
};

struct Case {
    lang: Option<&'static str>,
    pat: &'static str,
    out: &'static str,
}

const fn case(lang: &'static str, pat: &'static str, out: &'static str) -> Case {
    Case {
        lang: Some(lang),
        pat,
        out,
    }
}

const CASES: &[Case] = &[
    // Rust: nested calls, multi-line chains, CRLF, a file with a syntax error, hidden and
    // ignored files.
    case("rust", "$X.unwrap()", "$X.expect(\"checked\")"),
    case(
        "rust",
        "match $E { $$$ARMS }",
        "match ($E) {\n    $$$ARMS\n}",
    ),
    case("rust", "Arc::new($A)", "Rc::new($A)"),
    case("rust", "println!($$$ARGS)", "eprintln!($$$ARGS)"),
    // No literal at all: every file is parsed.
    case("rust", "$A + $B", "$B + $A"),
    case("rs", "let $P = $E;", "let $P = { $E };"),
    // Broad shapes, whose only literals are keywords and punctuation: the shape prefilter
    // (engine/prefilter/shape) must keep every file the CLI changes (rust/src/shapes.rs holds
    // them beside their near misses, in comments, strings and raw identifiers).
    case("rust", "fn $F() { $$$B }", "fn $F() -> () { $$$B }"),
    case(
        "rust",
        "impl $T { $$$B }",
        "impl $T { /* inherent */ $$$B }",
    ),
    case("rust", "|$A| $B", "|$A| ($B)"),
    case(
        "rust",
        "if $C { $A } else { $B }",
        "if !($C) { $B } else { $A }",
    ),
    case("rust", "let $X: $T = $V;", "let $X = $V as $T;"),
    case("rust", "$X?", "($X)?"),
    case(
        "rust",
        "match $E { $P => $A, _ => $B }",
        "match $E { $P => { $A } _ => $B }",
    ),
    case("rust", "$X.$M().$N()", "($X.$M()).$N()"),
    // Python: unicode, CRLF, multi-line calls, a .pyi stub.
    case("python", "print($$$A)", "logger.info($$$A)"),
    case("py", "$A == None", "$A is None"),
    case(
        "python",
        "def $F($$$P):\n    $$$B",
        "def $F($$$P):\n    \"\"\"TODO\"\"\"\n    $$$B",
    ),
    // TypeScript (.ts, .mts; CRLF file).
    case("typescript", "console.log($$$A)", "logger.debug($$$A)"),
    case("ts", "$A as any", "$A as unknown"),
    // TSX.
    case("tsx", "useState($A)", "useState<unknown>($A)"),
    case(
        "tsx",
        "<Button label={$L} $$$REST />",
        "<Button text={$L} $$$REST />",
    ),
    // JavaScript (.js, .mjs, .cjs with CRLF, .jsx).
    case("javascript", "var $A = $B", "let $A = $B"),
    case("js", "$A === undefined", "$A == null"),
    case("jsx", "require($M)", "await import($M)"),
    // Go (CRLF file).
    // In Go, `pkg.F($$$A)` alone parses as a type conversion and matches no call (same in
    // the CLI): spell the arguments out.
    case("go", "fmt.Println($A, $B)", "log.Println($A, $B)"),
    case(
        "golang",
        "var $X = errors.New($M)",
        "var $X = fmt.Errorf($M)",
    ),
    case(
        "go",
        "fmt.Errorf($F, $$$A)",
        "errors.Join(fmt.Errorf($F, $$$A))",
    ),
    // No literal: every Go file is parsed; nested calls stay.
    case("go", "$F($$$ARGS)", "call($F, $$$ARGS)"),
    case(
        "go",
        "if err != nil { return $$$R }",
        "if err != nil {\n\treturn $$$R // propagated\n}",
    ),
    // The other language families: each case needs its grammar's feature
    // (`cargo test -p xcsh-tools --features all-languages --test oracle`).
    #[cfg(feature = "lang-java")]
    case(
        "java",
        "System.out.println($A)",
        "LOG.info(String.valueOf($A))",
    ),
    #[cfg(feature = "lang-kotlin")]
    case("kt", "println($A)", "logger.info { $A }"),
    #[cfg(feature = "lang-c")]
    case("c", "$B = malloc($N)", "$B = xmalloc($N)"),
    #[cfg(feature = "lang-c")]
    case("c", "free($P);", "xfree(&$P);"),
    #[cfg(feature = "lang-cpp")]
    case("cpp", "NULL", "nullptr"),
    #[cfg(feature = "lang-cpp")]
    case("c++", "printf($$$A)", "std::printf($$$A)"),
    #[cfg(feature = "lang-csharp")]
    case("cs", "Console.WriteLine($A)", "logger.LogInformation($A)"),
    #[cfg(feature = "lang-ruby")]
    case("ruby", "puts $A", "logger.info($A)"),
    #[cfg(feature = "lang-php")]
    case("php", "array_key_exists($K, $A)", "isset($A[$K])"),
    #[cfg(feature = "lang-bash")]
    case("bash", "echo $A", "printf '%s\\n' $A"),
    #[cfg(feature = "lang-lua")]
    case("lua", "print($A)", "log.info($A)"),
    #[cfg(feature = "lang-swift")]
    case("swift", "print($A)", "logger.info($A)"),
    #[cfg(feature = "lang-scala")]
    case("scala", "println($A)", "logger.info($A)"),
    #[cfg(feature = "lang-yaml")]
    case("yml", "image: $I", "image: registry.local/$I"),
    #[cfg(feature = "lang-html")]
    case("html", "<b>$$$C</b>", "<strong>$$$C</strong>"),
    #[cfg(feature = "lang-css")]
    case("css", "color: $C;", "color: var(--fg, $C);"),
    // Language inferred per file: the same pattern in JS, TS and TSX files at once.
    Case {
        lang: None,
        pat: "console.log($$$A)",
        out: "console.info($$$A)",
    },
];

fn run_cli(ast_grep: &Path, case: &Case, dir: &Path) {
    let mut args = vec!["run", "-p", case.pat, "-r", case.out, "--update-all"];
    if let Some(lang) = case.lang {
        args.extend(["-l", lang]);
    }
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    run_ast_grep(ast_grep, dir, &args);
}

fn run_engine(case: &Case, dir: &Path) -> engine::EditPlan {
    let ws = Workspace::new(dir).expect("workspace");
    let request = EditRequest {
        ops: vec![Op::new(case.pat, case.out)],
        lang: case.lang.map(|l| l.parse::<Lang>().expect("supported")),
        ..EditRequest::default()
    };
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
        .unwrap_or_else(|e| panic!("engine refused `{}`: {e}", case.pat));
    apply_plan(dir, &plan);
    plan
}

#[test]
fn engine_rewrites_exactly_like_the_cli() {
    let Some(ast_grep) = ast_grep() else { return };
    let original = snapshot(&fixtures());
    let mut failures = Vec::new();
    for case in CASES {
        let cli_dir = fresh_copy();
        let our_dir = fresh_copy();
        run_cli(&ast_grep, case, cli_dir.path());
        let plan = run_engine(case, our_dir.path());
        let cli = snapshot(cli_dir.path());
        let ours = snapshot(our_dir.path());
        let label = format!(
            "[{}] `{}` -> `{}`",
            case.lang.unwrap_or("inferred"),
            case.pat,
            case.out
        );

        let changed_by_cli: Vec<&String> = cli
            .iter()
            .filter(|(name, bytes)| original.get(*name) != Some(*bytes))
            .map(|(name, _)| name)
            .collect();
        if changed_by_cli.is_empty() {
            failures.push(format!(
                "{label}: the CLI changed nothing; the case tests nothing"
            ));
            continue;
        }
        if let Some(diff) = first_difference(&cli, &ours) {
            failures.push(format!("{label}: {diff}"));
            continue;
        }

        // The prefilter must have let through every file the CLI changed.
        let ops = CompiledOps::for_edit(
            &[Op::new(case.pat, case.out)],
            case.lang.map(|l| l.parse().expect("supported")),
        )
        .expect("compiles");
        for name in &changed_by_cli {
            let lang = case
                .lang
                .map(|l| l.parse::<Lang>().expect("supported"))
                .or_else(|| Lang::from_path(Path::new(name.as_str())))
                .expect("a language");
            if !ops.may_match(lang, &original[*name]) {
                failures.push(format!(
                    "{label}: the prefilter would skip {name}, which the CLI changed"
                ));
            }
        }

        // The ignored and hidden-directory files are never touched by either.
        for untouched in [
            "generated/bindings.rs",
            "rust/src/schema.gen.rs",
            "rust/src/.cache/stale.rs",
        ] {
            assert_eq!(
                ours[untouched], original[untouched],
                "{label}: {untouched} changed"
            );
        }
        eprintln!(
            "ok {label}: {} files, {} replacements, {} parsed of {} scanned",
            plan.totals.files_changed,
            plan.totals.replacements,
            plan.totals.files_parsed,
            plan.totals.files_scanned
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
