//! Oracle on real sources: for fourteen language families beyond the fixture tree's five,
//! the engine rewrites a real, pinned package exactly as `ast-grep run -p PAT -r OUT -l LANG
//! --update-all .` (CLI 0.51.1) does, byte for byte.
//!
//! The corpora are packages from npm, PyPI and Debian, pinned by version and sha256 in
//! `scripts/corpora.json` and unpacked by `scripts/fetch-corpora.sh` into `$XCSH_CORPORA`
//! (default `~/.cache/xcsh-corpora`). For each language the files of its extensions (ast-grep's
//! own table) under the package's directory for it are copied twice; the CLI rewrites one
//! copy, the engine's plan goes through a `ChangeSet` on the other, and the two trees must be
//! identical. A case the CLI changes nothing with is a failure: it would test nothing. Every
//! file the CLI changed must also have passed the engine's prefilter.
//!
//! Without the corpora (or the CLI: see `oracle.rs`) a plain `cargo test` skips, saying how to
//! get them; with `XCSH_REQUIRE_ORACLE=1` (`scripts/test-all.sh`, which fetches them first)
//! their absence fails. Each language needs its grammar's feature:
//! `cargo test -p xcsh-tools --features all-languages --test oracle_corpora`.

// Without any of the fourteen grammars compiled, nothing below is used.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use xcsh_tools::engine::{self, CompiledOps, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::workspace::Workspace;

mod common;
use common::oracle::{apply_plan, ast_grep, first_difference, repo_root, run_ast_grep, snapshot};

/// ast-grep 0.51.1's file extensions per language (`ast-grep-language`'s `extensions()`),
/// kept here rather than asked of the engine, so that a difference in which files the two
/// pick would show.
fn extensions(lang: &str) -> &'static [&'static str] {
    match lang {
        "bash" => &[
            "bash", "bats", "cgi", "command", "env", "fcgi", "ksh", "sh", "tmux", "tool", "zsh",
        ],
        "c" => &["c", "h"],
        "cpp" => &["cc", "hpp", "cpp", "c++", "hh", "cxx", "cu", "ino"],
        "csharp" => &["cs"],
        "css" => &["css", "scss"],
        "html" => &["html", "htm", "xhtml"],
        "java" => &["java"],
        "kotlin" => &["kt", "ktm", "kts"],
        "lua" => &["lua"],
        "php" => &["php"],
        "ruby" => &["rb", "rbw", "gemspec"],
        "scala" => &["scala", "sc", "sbt"],
        "swift" => &["swift"],
        "yaml" => &["yaml", "yml"],
        other => panic!("no extension table for {other}"),
    }
}

fn corpora_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XCSH_CORPORA") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").expect("HOME or XCSH_CORPORA is set");
    Path::new(&home).join(".cache/xcsh-corpora")
}

/// The directory holding `lang`'s corpus, as `scripts/corpora.json` places it, once
/// `scripts/fetch-corpora.sh` has fetched and verified its package; otherwise the reason.
fn corpus(lang: &str) -> Result<(PathBuf, String), String> {
    let manifest_path = repo_root().join("scripts/corpora.json");
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&manifest_path).expect("scripts/corpora.json is readable"),
    )
    .expect("scripts/corpora.json is JSON");
    let packages = manifest["packages"].as_array().expect("a packages list");
    let pkg = packages
        .iter()
        .find(|p| p["languages"].get(lang).is_some())
        .unwrap_or_else(|| panic!("scripts/corpora.json has no corpus for {lang}"));
    let field = |k: &str| pkg[k].as_str().expect("a string field").to_string();
    let (name, version, sha256) = (field("name"), field("version"), field("sha256"));
    let dir = corpora_dir().join(format!("{name}-{version}"));
    // The stamp is written last, after the archive's sha256 was checked and it was unpacked.
    let stamp: Option<serde_json::Value> = std::fs::read(dir.join(".xcsh-corpus.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if stamp.as_ref().and_then(|s| s["sha256"].as_str()) != Some(sha256.as_str()) {
        return Err(format!(
            "{name} {version} ({lang}) is not in {}",
            corpora_dir().display()
        ));
    }
    let sub = pkg["languages"][lang].as_str().expect("a directory");
    Ok((dir.join(sub), format!("{name} {version}")))
}

/// The files of `lang`'s extensions under `root`, root-relative, with their bytes. Hidden
/// entries are left out (both walkers skip them) and so are symbolic links.
fn language_files(root: &Path, lang: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, exts: &[&str], out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read corpus dir") {
            let entry = entry.expect("corpus entry");
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                walk(root, &path, exts, out);
            } else if kind.is_file()
                && path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| exts.contains(&e))
            {
                let rel = path.strip_prefix(root).expect("under root").to_path_buf();
                out.insert(rel, std::fs::read(&path).expect("read corpus file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, extensions(lang), &mut out);
    out
}

fn write_tree(files: &BTreeMap<PathBuf, Vec<u8>>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, bytes) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write copy");
    }
    dir
}

fn run_cli(ast_grep: &Path, lang: &str, pat: &str, out: &str, dir: &Path) {
    let args = ["run", "-p", pat, "-r", out, "-l", lang, "--update-all"];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    run_ast_grep(ast_grep, dir, &args);
}

/// Runs every `(pattern, rewrite)` of `cases` on `lang`'s corpus through both, and fails
/// naming each case whose trees differ or that the CLI changed nothing with.
fn check(lang: &str, cases: &[(&str, &str)]) {
    let Some(ast_grep) = ast_grep() else { return };
    let (root, package) = match corpus(lang) {
        Ok(found) => found,
        Err(why) => {
            let how = "run scripts/fetch-corpora.sh (downloads the pinned packages of \
                       scripts/corpora.json, about 12 MB, once) or set XCSH_CORPORA to where \
                       it put them";
            if std::env::var("XCSH_REQUIRE_ORACLE").as_deref() == Ok("1") {
                panic!("{why}, and XCSH_REQUIRE_ORACLE=1 requires it: {how}");
            }
            eprintln!("SKIPPED: {why}; to run the {lang} corpus oracle, {how}");
            return;
        }
    };
    let parsed: Lang = lang.parse().expect("a supported language");
    let files = language_files(&root, lang);
    assert!(
        files.len() >= 20,
        "{package} holds only {} {lang} files under {}",
        files.len(),
        root.display()
    );
    let original: BTreeMap<String, Vec<u8>> = files
        .iter()
        .map(|(rel, bytes)| (rel.to_string_lossy().into_owned(), bytes.clone()))
        .collect();

    let mut failures = Vec::new();
    for &(pat, out) in cases {
        let label = format!("[{lang}, {package}] `{pat}` -> `{out}`");
        let cli_dir = write_tree(&files);
        let our_dir = write_tree(&files);
        run_cli(&ast_grep, lang, pat, out, cli_dir.path());

        let ws = Workspace::new(our_dir.path()).expect("workspace");
        let request = EditRequest {
            ops: vec![Op::new(pat, out)],
            lang: Some(parsed),
            ..EditRequest::default()
        };
        let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
            .unwrap_or_else(|e| panic!("engine refused {label}: {e}"));
        apply_plan(our_dir.path(), &plan);

        let cli = snapshot(cli_dir.path());
        let ours = snapshot(our_dir.path());
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
        let ops = CompiledOps::for_edit(&[Op::new(pat, out)], Some(parsed)).expect("compiles");
        for name in &changed_by_cli {
            if !ops.may_match(parsed, &original[*name]) {
                failures.push(format!(
                    "{label}: the prefilter would skip {name}, which the CLI changed"
                ));
            }
        }
        eprintln!(
            "ok {label}: {} of {} files changed, {} replacements, {} files parsed",
            plan.totals.files_changed,
            files.len(),
            plan.totals.replacements,
            plan.totals.files_parsed
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// One test per language, each with its grammar's feature. The patterns are edits someone
// would make to that code base, and each matches many times in it.

/// plm 2.9.2 (Debian): the Java sources of the Programmer's Learning Machine and its
/// exercises.
#[cfg(feature = "lang-java")]
#[test]
fn java_plm() {
    check(
        "java",
        &[
            ("System.out.println($A)", "LOG.info(String.valueOf($A))"),
            ("new Vector<$T>()", "new ArrayList<$T>()"),
            // Multi-line bodies through `$$$`.
            (
                "for (int $I = 0; $I < $N; $I++) { $$$B }",
                "for (int $I = 0; $I < $N; ++$I) { $$$B }",
            ),
        ],
    );
}

/// react-native 0.88.1 (npm): ReactAndroid's Kotlin.
#[cfg(feature = "lang-kotlin")]
#[test]
fn kotlin_react_native() {
    check(
        "kotlin",
        &[
            ("checkNotNull($A)", "requireNotNull($A)"),
            ("FLog.e($TAG, $$$ARGS)", "Log.e($TAG, $$$ARGS)"),
            // A lambda whose body spans lines.
            ("$X?.let { $$$B }", "$X?.also { $$$B }"),
        ],
    );
}

/// pycryptodome 4.4.0 (PyPI sdist): the C of its primitives.
#[cfg(feature = "lang-c")]
#[test]
fn c_pycryptodome() {
    check(
        "c",
        &[
            ("memcpy($D, $S, $N)", "memmove($D, $S, $N)"),
            ("memset($P, 0, $N)", "explicit_bzero($P, $N)"),
            ("free($P);", "secure_free($P);"),
            // `$$$B` as the statements of a block parses as a statement missing its `;`; the
            // engine once refused it (the CLI rewrites 453 blocks in 75 files here).
            (
                "if ($C) { $$$B }",
                "if ($C) {\n    /* checked */\n    $$$B\n}",
            ),
        ],
    );
}

/// react-native 0.88.1 (npm): ReactCommon's and ReactAndroid's C++.
#[cfg(feature = "lang-cpp")]
#[test]
fn cpp_react_native() {
    check(
        "cpp",
        &[
            (
                "std::make_shared<$T>($$$A)",
                "std::allocate_shared<$T>(allocator, $$$A)",
            ),
            ("react_native_assert($A)", "RN_ASSERT($A)"),
            // The block of statements described under C (2,874 blocks in 327 files).
            ("while ($C) { $$$B }", "while ($C) {\n  // loop\n  $$$B\n}"),
        ],
    );
}

/// pythonnet 3.2.1 (PyPI sdist): the C# of its runtime.
#[cfg(feature = "lang-csharp")]
#[test]
fn csharp_pythonnet() {
    check(
        "csharp",
        &[
            ("$A == null", "$A is null"),
            // Written without its `;`, this pattern is a known difference: the CLI accepts it
            // (tree-sitter invents the missing `;`), matches the 167 whole statements with
            // their `;` and writes the rewrite without one, leaving C# that does not compile
            // (`… nameof(mb), "must not be null")` in runtime/ClassManager.cs); the engine
            // refuses the pattern as incomplete (`;` missing at column 44), by design
            // (`compile_pattern` in engine/pattern.rs). With the `;` both agree.
            (
                "throw new ArgumentNullException(nameof($A));",
                "throw new ArgumentNullException(nameof($A), \"must not be null\");",
            ),
            (
                "Exceptions.RaiseTypeError($A)",
                "Exceptions.RaiseTypeError($A.ToString())",
            ),
        ],
    );
}

/// ruby-faker 2.21.0 (Debian): the faker gem's Ruby.
#[cfg(feature = "lang-ruby")]
#[test]
fn ruby_faker() {
    check(
        "ruby",
        &[
            ("fetch($A)", "translate($A)"),
            ("raise $E, $M", "raise $E.new($M)"),
            // Whole methods, re-indented bodies.
            (
                "def $F($$$P)\n  $$$B\nend",
                "def $F($$$P)\n  # :nodoc:\n  $$$B\nend",
            ),
        ],
    );
}

/// php-doctrine-dbal 3.6.1 (Debian): Doctrine DBAL's PHP.
#[cfg(feature = "lang-php")]
#[test]
fn php_doctrine_dbal() {
    check(
        "php",
        &[
            ("$A === null", "null === $A"),
            ("sprintf($$$A)", "\\sprintf($$$A)"),
            ("is_array($A)", "\\is_array($A)"),
        ],
    );
}

/// dracut-core 059 (Debian): dracut's shell modules.
#[cfg(feature = "lang-bash")]
#[test]
fn bash_dracut() {
    check(
        "bash",
        &[
            ("[ -n $A ]", "[[ -n $A ]]"),
            ("inst_multiple $$$A", "inst_multiple -o $$$A"),
            ("echo $A", "printf '%s\\n' $A"),
        ],
    );
}

/// luarocks 3.8.0 (Debian): the LuaRocks package manager, written in Lua.
#[cfg(feature = "lang-lua")]
#[test]
fn lua_luarocks() {
    check(
        "lua",
        &[
            ("table.insert($T, $V)", "$T[#$T + 1] = $V"),
            ("local $A = require($M)", "local $A <const> = require($M)"),
            ("ipairs($T)", "pairs($T)"),
        ],
    );
}

/// @capacitor/ios 8.5.2 (npm): Capacitor's iOS runtime in Swift.
#[cfg(feature = "lang-swift")]
#[test]
fn swift_capacitor() {
    check(
        "swift",
        &[
            ("CAPLog.print($$$A)", "CAPLog.debug($$$A)"),
            (
                "guard let $X = $Y else { $$$B }",
                "guard let $X = $Y else { assertionFailure(); $$$B }",
            ),
        ],
    );
}

/// plm 2.9.2 (Debian): the Scala versions of the exercises.
#[cfg(feature = "lang-scala")]
#[test]
fn scala_plm() {
    check(
        "scala",
        &[
            // Procedure syntax, deprecated in Scala 3.
            (
                "override def $F($$$P) { $$$B }",
                "override def $F($$$P): Unit = { $$$B }",
            ),
            ("Game.i18n.tr($$$A)", "I18n.tr($$$A)"),
            ("forward($N)", "moveForward($N)"),
        ],
    );
}

/// ruby-faker 2.21.0 (Debian): the gem's locale files.
#[cfg(feature = "lang-yaml")]
#[test]
fn yaml_faker_locales() {
    check(
        "yaml",
        &[
            // Values that are lists over many lines.
            ("name: $N", "full_name: $N"),
            ("formats: $F", "patterns: $F"),
        ],
    );
}

/// plm 2.9.2 (Debian): the lessons' HTML.
#[cfg(feature = "lang-html")]
#[test]
fn html_plm() {
    check(
        "html",
        &[
            ("<tt>$$$C</tt>", "<code>$$$C</code>"),
            ("<b>$$$C</b>", "<strong>$$$C</strong>"),
        ],
    );
}

/// highlight.js 11.12.0 (npm): its themes, CSS and SCSS.
#[cfg(feature = "lang-css")]
#[test]
fn css_highlight_js() {
    check(
        "css",
        &[
            ("color: $C;", "color: var(--hljs-fg, $C);"),
            ("font-weight: bold;", "font-weight: 700;"),
            ("background: $B;", "background-color: $B;"),
        ],
    );
}
