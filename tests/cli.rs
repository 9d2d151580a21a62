//! The `xcsh` binary as a person or a script uses it: `ast-edit` exit codes and terminal
//! behaviour, `tools` per dialect, `session` replays, and the `demo`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use xcsh::Dialect;
use xcsh::testing::validate;

const UNWRAPS: &str =
    "fn load() -> Result<(), E> {\n    let a = f().unwrap();\n    g(a).unwrap();\n    Ok(())\n}\n";
const QUESTIONS: &str =
    "fn load() -> Result<(), E> {\n    let a = f()?;\n    g(a)?;\n    Ok(())\n}\n";

fn xcsh() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xcsh"));
    command.env_remove("RUST_LOG").env_remove("CLICOLOR_FORCE");
    command
}

/// Runs with `stdin` as the whole input (a pipe: not a terminal).
fn run(command: &mut Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the xcsh binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin takes the input");
    child.wait_with_output().expect("xcsh finishes")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/load.rs"), UNWRAPS).unwrap();
    std::fs::write(dir.path().join("src/other.rs"), UNWRAPS).unwrap();
    dir
}

/// The ast-grep CLI (`AST_GREP`, else the repository's `.venv`), or `None` when it is not
/// installed and `XCSH_REQUIRE_ORACLE=1` (which `scripts/test-all.sh` sets) does not require it.
fn ast_grep_cli() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("AST_GREP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/ast-grep"));
    if path.is_file() {
        return Some(path);
    }
    assert_ne!(
        std::env::var("XCSH_REQUIRE_ORACLE").as_deref(),
        Ok("1"),
        "the ast-grep CLI is missing at {}: run scripts/bootstrap-python.sh",
        path.display()
    );
    eprintln!("SKIPPED the comparison with the ast-grep CLI: run scripts/bootstrap-python.sh");
    None
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

fn ast_edit(dir: &Path, extra: &[&str]) -> Command {
    let mut command = xcsh();
    command
        .current_dir(dir)
        .args(["ast-edit", "-p", "$X.unwrap()", "-r", "$X?", "-l", "rust"])
        .args(extra);
    command
}

// ---------------------------------------------------------------------------------------
// ast-edit

#[test]
fn ast_edit_with_yes_applies_and_exits_0() {
    let dir = workspace();
    let output = run(&mut ast_edit(dir.path(), &["--yes", "src/load.rs"]), "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains("--- a/src/load.rs\n+++ b/src/load.rs\n"),
        "{out}"
    );
    assert!(
        out.contains("-    let a = f().unwrap();\n-    g(a).unwrap();\n+    let a = f()?;\n"),
        "{out}"
    );
    assert!(
        out.contains("2 replacements in 1 file (1 file scanned)."),
        "{out}"
    );
    assert!(
        out.ends_with("Applied 2 replacements in 1 file.\n"),
        "{out}"
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
    assert_eq!(
        read(dir.path(), "src/other.rs"),
        UNWRAPS,
        "only the named path is edited"
    );
}

#[test]
fn ast_edit_rule_file_applies_like_ast_grep_scan_and_bad_rules_name_the_line() {
    let dir = workspace();
    let rules = tempfile::tempdir().unwrap();
    let rule = rules.path().join("no-unwrap.yml");
    // Only the unwrap whose receiver is a call to `g`.
    std::fs::write(
        &rule,
        "id: no-unwrap\nlanguage: rust\nrule:\n  pattern: $X.unwrap()\n  has:\n    pattern: g($$$A)\n    stopBy: end\nfix: $X?\n",
    )
    .unwrap();
    let mut command = xcsh();
    command
        .current_dir(dir.path())
        .args(["ast-edit", "--rule"])
        .arg(&rule)
        .args(["--yes", "src/load.rs"]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        read(dir.path(), "src/load.rs"),
        "fn load() -> Result<(), E> {\n    let a = f().unwrap();\n    g(a)?;\n    Ok(())\n}\n"
    );
    if let Some(cli) = ast_grep_cli() {
        let theirs = workspace();
        let status = Command::new(cli)
            .current_dir(theirs.path())
            .args(["scan", "--rule"])
            .arg(&rule)
            .args(["--update-all", "src/load.rs"])
            .output()
            .unwrap();
        assert!(status.status.success());
        assert_eq!(
            read(theirs.path(), "src/load.rs"),
            read(dir.path(), "src/load.rs")
        );
    }

    std::fs::write(
        &rule,
        "language: rust\nrule:\n  pattern: $X.unwrap()\n  hass: {}\nfix: y\n",
    )
    .unwrap();
    let mut command = xcsh();
    command
        .current_dir(dir.path())
        .args(["ast-edit", "--rule"])
        .arg(&rule)
        .arg("--yes");
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("no-unwrap.yml: line 4: unknown key `hass`"),
        "{err}"
    );
    assert!(err.contains("did you mean `has`?"), "{err}");
}

/// No file holds every literal of `Rc::new($A)`, so the preview parses none and the near
/// misses come from one walk over the files holding any of them.
#[test]
fn ast_edit_that_parses_nothing_still_shows_near_misses() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("src/shared.rs"),
        "fn shared() -> Arc<u8> {\n    Arc::new(1)\n}\n",
    )
    .unwrap();
    let mut command = xcsh();
    command.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "Rc::new($A)",
        "-r",
        "Rc::from($A)",
        "-l",
        "rust",
    ]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains(", 0 parsed)."), "{out}");
    assert!(out.contains("- src/shared.rs:2:5 `Arc::new(1)`"), "{out}");
    assert!(out.contains("Arc::new($A)"), "{out}");
}

#[test]
fn ast_edit_that_matches_nothing_shows_near_misses() {
    let dir = workspace();
    let mut command = xcsh();
    command.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "fn load($$$A) { $$$B }",
        "-r",
        "x",
        "-l",
        "rust",
    ]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.starts_with("No replacements made"), "{out}");
    assert!(
        out.contains("Near misses (code close to the pattern that it does not match):\n- src/"),
        "{out}"
    );
    assert!(
        out.contains("it has `-> Result<(), E>` where the pattern has nothing"),
        "{out}"
    );
    assert!(out.contains("fn load($$$A) -> Result<(), E> {"), "{out}");
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
}

// ---------------------------------------------------------------------------------------
// undo

#[test]
fn undo_reverts_the_last_apply_byte_for_byte_and_then_has_nothing_to_undo() {
    let dir = workspace();
    let output = run(&mut ast_edit(dir.path(), &["--yes"]), "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);

    let undo = |extra: &[&str]| {
        run(
            xcsh()
                .args(["undo", "--root", dir.path().to_str().unwrap()])
                .args(extra),
            "y\n",
        )
    };
    let listed = undo(&["--list"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(
        stdout(&listed).starts_with("apply #1 (2 files, "),
        "{}",
        stdout(&listed)
    );

    // Without a terminal or --yes: the diff, and nothing written.
    let preview = undo(&[]);
    assert_eq!(preview.status.code(), Some(1), "{}", stderr(&preview));
    let out = stdout(&preview);
    assert!(out.starts_with("Revert apply #1 (2 files, "), "{out}");
    assert!(out.contains("-    let a = f()?;\n"), "{out}");
    assert!(out.contains("+    let a = f().unwrap();\n"), "{out}");
    assert!(stderr(&preview).contains("Re-run with --yes to apply"));
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);

    let reverted = undo(&["--yes"]);
    assert_eq!(reverted.status.code(), Some(0), "{}", stderr(&reverted));
    let bytes = 2 * UNWRAPS.len();
    assert!(
        stdout(&reverted).ends_with(&format!(
            "Reverted apply #1: 2 files modified, {bytes} bytes written.\n"
        )),
        "{}",
        stdout(&reverted)
    );
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);

    let again = undo(&["--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).starts_with("Nothing to undo: no applied change is kept in `"));
}

#[test]
fn undo_refuses_naming_a_file_changed_since_the_apply_and_writes_nothing() {
    let dir = workspace();
    assert_eq!(
        run(&mut ast_edit(dir.path(), &["--yes"]), "").status.code(),
        Some(0)
    );
    std::fs::write(dir.path().join("src/other.rs"), "// edited by hand\n").unwrap();
    let output = run(
        xcsh().args(["undo", "--yes", "--root", dir.path().to_str().unwrap()]),
        "",
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains(
            "cannot undo apply #1: a file changed since it was applied: `src/other.rs` (modified)"
        ),
        "{err}"
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
    assert_eq!(read(dir.path(), "src/other.rs"), "// edited by hand\n");
}

#[test]
fn undo_keep_zero_keeps_no_record() {
    let dir = workspace();
    let output = run(
        &mut ast_edit(dir.path(), &["--yes", "--undo-keep", "0"]),
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run(
        xcsh().args(["undo", "--yes", "--root", dir.path().to_str().unwrap()]),
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("Nothing to undo"),
        "{}",
        stdout(&output)
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
}

#[test]
fn session_state_carries_a_preview_to_a_second_process() {
    let dir = workspace();
    let state = tempfile::tempdir().unwrap();
    let state_arg = state.path().to_str().unwrap();
    let preview = r#"{"tool": "ast_edit", "args": {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust", "path": "src/load.rs"}}"#;
    let apply = r#"{"tool": "resolve", "args": {"action": "apply", "reason": "second process"}}"#;

    let first = session(dir.path(), &["--state", state_arg], preview);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("1 pending action(s) kept in"),
        "{}",
        stderr(&first)
    );
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);

    let second = session(dir.path(), &["--state", state_arg], apply);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let lines = json_lines(&second);
    assert_eq!(
        lines[0]["result"]["content"][0]["text"],
        "Applied 2 replacements in 1 file."
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
    // The tree equals what the ast-grep CLI makes of the same edit.
    if let Some(cli) = ast_grep_cli() {
        let theirs = workspace();
        let output = Command::new(cli)
            .args([
                "run",
                "-p",
                "$X.unwrap()",
                "-r",
                "$X?",
                "-l",
                "rust",
                "--update-all",
            ])
            .arg("src/load.rs")
            .current_dir(theirs.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        for file in ["src/load.rs", "src/other.rs"] {
            assert_eq!(read(dir.path(), file), read(theirs.path(), file), "{file}");
        }
    }

    // A file edited between the two processes: refused, named, nothing written.
    let first = session(
        dir.path(),
        &["--state", state_arg],
        &preview.replace("load", "other"),
    );
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    std::fs::write(
        dir.path().join("src/other.rs"),
        format!("{UNWRAPS}// edited\n"),
    )
    .unwrap();
    let second = session(dir.path(), &["--state", state_arg], apply);
    let lines = json_lines(&second);
    assert_eq!(lines[0]["result"]["isError"], true);
    let text = lines[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`src/other.rs` (modified since it was read)"),
        "{text}"
    );
    assert!(read(dir.path(), "src/other.rs").ends_with("// edited\n"));

    // A corrupt state file: refused at start, naming it, exit 2.
    std::fs::write(state.path().join("session.stack"), "garbage").unwrap();
    let bad = session(dir.path(), &["--state", state_arg], apply);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("session.stack` cannot be used"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn ast_edit_without_a_terminal_previews_only_and_exits_1() {
    let dir = workspace();
    // A "y" on a pipe is not an answer: with no terminal there is no question.
    let output = run(&mut ast_edit(dir.path(), &[]), "y\n");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(out.contains("4 replacements in 2 files"), "{out}");
    assert!(
        !out.contains("[y/N]") && !err.contains("[y/N]"),
        "no prompt: {out}{err}"
    );
    assert!(err.contains("Re-run with --yes to apply"), "{err}");
    assert!(!out.contains('\x1b'), "no colours on a pipe: {out:?}");
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);
}

#[test]
fn ast_edit_with_nothing_to_do_exits_0() {
    let dir = workspace();
    let mut command = xcsh();
    command
        .current_dir(dir.path())
        .args(["ast-edit", "-p", "$X.expect($M)", "-r", "$X?"]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("No replacements made: nothing matched"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn ast_edit_errors_exit_2_naming_the_problem() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.rs"), UNWRAPS).unwrap();
    let outside_file = outside.path().join("x.rs");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["-p", "foo(", "-r", "x", "-l", "rust"],
            "--pattern: `foo(` is not a valid rust pattern",
        ),
        (
            vec!["-p", "foo", "-r", "x", "-l", "cobol"],
            "--lang: `cobol` is not a supported language; use one of: rust, python",
        ),
        (
            vec!["-p", "$X.unwrap()", "-r", "$X?", "--root", ".", "../"],
            "is outside the root",
        ),
        (
            vec![
                "-p",
                "$X.unwrap()",
                "-r",
                "$X?",
                "--root",
                ".",
                outside_file.to_str().unwrap(),
            ],
            "is outside the root",
        ),
        (
            vec![
                "-p",
                "$X.unwrap()",
                "-r",
                "$X?",
                "--root",
                "/definitely/not/here",
            ],
            "--root `/definitely/not/here`",
        ),
        (
            vec!["-p", "$X.unwrap()", "-r", "$X?", "src/missing.rs"],
            "path `src/missing.rs` does not exist",
        ),
    ];
    for (args, expected) in cases {
        let mut command = xcsh();
        command
            .current_dir(dir.path().join("src"))
            .arg("ast-edit")
            .args(&args);
        let output = run(&mut command, "");
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("xcsh ast-edit: "), "{args:?}: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected `{expected}` in {err}"
        );
        assert!(stdout(&output).is_empty(), "{args:?}: {}", stdout(&output));
    }
    assert_eq!(read(outside.path(), "x.rs"), UNWRAPS);
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
}

#[test]
fn ast_edit_takes_several_pairs_a_glob_a_limit_and_every_language() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("src/App.java"),
        "class App {\n    void run() {\n        System.out.println(1);\n        System.out.println(2);\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src/util.h"),
        "int f(void) { return g(1); }\n",
    )
    .unwrap();

    // Two pairs at once, on the files the glob keeps.
    let mut command = xcsh();
    command.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "$X.unwrap()",
        "-r",
        "$X?",
        "-p",
        "Ok(())",
        "-r",
        "Ok(done())",
        "--glob",
        "src/load.rs",
        "--yes",
    ]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        read(dir.path(), "src/load.rs"),
        QUESTIONS.replace("Ok(())", "Ok(done())")
    );
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);

    // A limit keeps the first replacements; Java and C are inferred from the extensions.
    let mut command = xcsh();
    command.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "System.out.println($A)",
        "-r",
        "log($A)",
        "-l",
        "java",
        "--limit",
        "1",
        "--yes",
    ]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let java = read(dir.path(), "src/App.java");
    assert!(
        java.contains("log(1);") && java.contains("System.out.println(2);"),
        "{java}"
    );
    let mut command = xcsh();
    command.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "return g($A);",
        "-r",
        "return h($A);",
        "--yes",
        "src/util.h",
    ]);
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        read(dir.path(), "src/util.h"),
        "int f(void) { return h(1); }\n"
    );

    // Unpaired flags and a zero limit are refused.
    for (args, expected) in [
        (
            &["-p", "a()", "-r", "b()", "-p", "c()"][..],
            "2 --pattern but 1 --rewrite",
        ),
        (
            &["-p", "a()", "-r", "b()", "--limit", "0"][..],
            "--limit: must be at least 1",
        ),
        (
            &[
                "-p", "a(", "-r", "b()", "-p", "c()", "-r", "d()", "-l", "rust",
            ][..],
            "--pattern #1: `a(`",
        ),
    ] {
        let mut command = xcsh();
        command.current_dir(dir.path()).arg("ast-edit").args(args);
        let output = run(&mut command, "");
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected `{expected}` in {err}"
        );
    }
}

#[test]
fn ast_edit_takes_a_path_outside_the_current_directory_as_given() {
    let dir = workspace();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("x.rs"), UNWRAPS).unwrap();
    std::fs::write(elsewhere.path().join("y.rs"), UNWRAPS).unwrap();
    let target = elsewhere.path().join("x.rs");
    let output = run(
        &mut ast_edit(dir.path(), &["--yes", target.to_str().unwrap()]),
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(read(elsewhere.path(), "x.rs"), QUESTIONS);
    assert_eq!(
        read(elsewhere.path(), "y.rs"),
        UNWRAPS,
        "only the path given"
    );
    assert_eq!(
        read(dir.path(), "src/load.rs"),
        UNWRAPS,
        "not the current directory"
    );

    // Judged on the path as written: a link in the current directory that leads out is
    // still confined (refused), not taken as a wider root.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("out")).unwrap();
        let output = run(&mut ast_edit(dir.path(), &["--yes", "out/y.rs"]), "");
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(read(elsewhere.path(), "y.rs"), UNWRAPS);
    }
}

#[test]
fn ast_edit_paths_are_relative_to_the_current_directory() {
    let dir = workspace();
    let mut command = ast_edit(
        &dir.path().join("src"),
        &["--yes", "--root", "..", "other.rs"],
    );
    let output = run(&mut command, "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("--- a/src/other.rs"),
        "{}",
        stdout(&output)
    );
    assert_eq!(read(dir.path(), "src/other.rs"), QUESTIONS);
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
}

/// `script` gives the command a pseudo-terminal, as a person's shell would.
fn on_a_terminal(dir: &Path, answer: &str, env: &[(&str, &str)]) -> Option<Output> {
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: /usr/bin/script (util-linux) is not installed");
        return None;
    }
    let line = format!(
        "{} ast-edit -p '$X.unwrap()' -r '$X?' -l rust src/load.rs",
        env!("CARGO_BIN_EXE_xcsh")
    );
    let mut command = Command::new("/usr/bin/script");
    command
        .current_dir(dir)
        .args(["-qec", &line, "/dev/null"])
        .env_remove("NO_COLOR")
        // Colour needs a terminal that says it has colours; CI may set no TERM at all.
        .env("TERM", "xterm-256color");
    for (key, value) in env {
        command.env(key, value);
    }
    Some(run(&mut command, answer))
}

#[test]
fn ast_edit_on_a_terminal_asks_and_applies_only_on_yes() {
    let dir = workspace();
    let Some(declined) = on_a_terminal(dir.path(), "n\n", &[]) else {
        return;
    };
    let out = stdout(&declined);
    assert_eq!(declined.status.code(), Some(1), "{out}");
    assert!(
        out.contains("Apply 2 replacements in 1 file? [y/N]"),
        "{out}"
    );
    assert!(
        out.contains("\x1b[32m+    let a = f()?;"),
        "coloured diff: {out:?}"
    );
    assert!(out.contains("Not applied"), "{out}");
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);

    let Some(accepted) = on_a_terminal(dir.path(), "y\n", &[("NO_COLOR", "1")]) else {
        return;
    };
    let out = stdout(&accepted);
    assert_eq!(accepted.status.code(), Some(0), "{out}");
    assert!(out.contains("Applied 2 replacements in 1 file."), "{out}");
    assert!(!out.contains("\x1b[3"), "NO_COLOR is honoured: {out:?}");
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
}

/// `xcsh ast-edit -i` over three files on a pseudo-terminal, answering `answers`.
fn reviewed_on_a_terminal(dir: &Path, answers: &str) -> Option<Output> {
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: /usr/bin/script (util-linux) is not installed");
        return None;
    }
    let line = format!(
        "{} ast-edit -i -p '$X.unwrap()' -r '$X?' -l rust src",
        env!("CARGO_BIN_EXE_xcsh")
    );
    let mut command = Command::new("/usr/bin/script");
    command
        .current_dir(dir)
        .args(["-qec", &line, "/dev/null"])
        .env("NO_COLOR", "1");
    Some(run(&mut command, answers))
}

#[test]
fn ast_edit_interactive_applies_exactly_the_accepted_files() {
    let dir = workspace();
    std::fs::write(dir.path().join("src/third.rs"), UNWRAPS).unwrap();
    // src/load.rs, src/other.rs, src/third.rs in path order: accept the first and the third.
    let Some(output) = reviewed_on_a_terminal(dir.path(), "y\nn\ny\n") else {
        return;
    };
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("(1/3) Apply 2 replacements in src/load.rs? [y,n,a,s,q,?]"),
        "{out}"
    );
    assert!(
        out.contains("(3/3) Apply 2 replacements in src/third.rs?"),
        "{out}"
    );
    assert!(
        out.contains("Applied 4 replacements in 2 files (1 file skipped)."),
        "{out}"
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);
    assert_eq!(read(dir.path(), "src/third.rs"), QUESTIONS);
}

#[test]
fn ast_edit_interactive_quit_midway_writes_nothing() {
    let dir = workspace();
    std::fs::write(dir.path().join("src/third.rs"), UNWRAPS).unwrap();
    let Some(output) = reviewed_on_a_terminal(dir.path(), "y\n?\nq\n") else {
        return;
    };
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(
        out.contains("q - quit, writing nothing at all"),
        "help on `?`: {out}"
    );
    assert!(out.contains("Quit: nothing was written."), "{out}");
    for file in ["src/load.rs", "src/other.rs", "src/third.rs"] {
        assert_eq!(read(dir.path(), file), UNWRAPS, "{file}");
    }
    // `a` takes the rest without asking.
    let Some(output) = reviewed_on_a_terminal(dir.path(), "n\na\n") else {
        return;
    };
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(!out.contains("(3/3)"), "{out}");
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
    assert_eq!(read(dir.path(), "src/other.rs"), QUESTIONS);
    assert_eq!(read(dir.path(), "src/third.rs"), QUESTIONS);
}

#[test]
fn ast_edit_interactive_splits_a_file_into_its_replacements() {
    let dir = workspace();
    // load.rs: split, take the first replacement only; other.rs: skip.
    let Some(output) = reviewed_on_a_terminal(dir.path(), "s\ny\nn\nn\n") else {
        return;
    };
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(out.contains("@@ src/load.rs:2 @@"), "{out}");
    assert!(
        out.contains("(1/2) Apply this replacement at line 2? [y,n,a,d,q,?]"),
        "{out}"
    );
    assert!(
        out.contains("Applied 1 replacement in 1 file (1 file skipped)."),
        "{out}"
    );
    assert_eq!(
        read(dir.path(), "src/load.rs"),
        "fn load() -> Result<(), E> {\n    let a = f()?;\n    g(a).unwrap();\n    Ok(())\n}\n"
    );
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);
}

#[test]
fn ast_edit_interactive_without_a_terminal_is_refused() {
    let dir = workspace();
    let output = run(&mut ast_edit(dir.path(), &["-i"]), "y\n");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("-i reviews file by file on a terminal"));
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
}

// ---------------------------------------------------------------------------------------
// tools

fn definitions(args: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let output = run(xcsh().current_dir(dir.path()).arg("tools").args(args), "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("tools prints a JSON array")
}

#[test]
fn tools_prints_valid_definitions_for_every_dialect() {
    for dialect in Dialect::ALL {
        let defs = definitions(&["--dialect", dialect.as_str()]);
        assert_eq!(defs.len(), 7, "{dialect}: {defs:?}");
        for def in &defs {
            assert_eq!(
                validate::tool_definition(dialect, def),
                vec![],
                "{dialect}: {def}"
            );
        }
        let text = serde_json::to_string(&defs).unwrap();
        for name in [
            "ast_grep",
            "ast_edit",
            "apply_patch",
            "edit",
            "write_file",
            "undo",
            "resolve",
        ] {
            assert!(text.contains(&format!("\"{name}\"")), "{dialect}: {text}");
        }
    }
    assert_eq!(
        definitions(&[]),
        definitions(&["--dialect", "mcp"]),
        "mcp is the default"
    );
    let mcp = definitions(&[]);
    assert_eq!(mcp[6]["name"], "resolve");
    assert_eq!(mcp[6]["annotations"]["destructiveHint"], true);
    assert_eq!(mcp[1]["annotations"]["readOnlyHint"], true);
}

#[test]
fn tools_refuses_an_unknown_dialect() {
    let output = run(xcsh().args(["tools", "--dialect", "claude"]), "");
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("unknown dialect `claude`; expected one of: anthropic, openai-chat"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// session

const SCRIPT: &str = r#"# preview, then apply
{"tool": "ast_edit", "args": {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": "src/load.rs"}}
{"tool": "resolve", "args": {"action": "apply", "reason": "propagate errors"}}

{"tool": "ast_edit", "args": {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": "src/other.rs"}}
{"tool": "resolve", "args": {"action": "discard", "reason": "not this one"}}
{"tool": "resolve", "args": {"action": "apply", "reason": "again"}}
"#;

fn session(dir: &Path, args: &[&str], script: &str) -> Output {
    run(
        xcsh()
            .arg("session")
            .args(["--root", dir.to_str().unwrap()])
            .args(args),
        script,
    )
}

fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each output line is JSON"))
        .collect()
}

#[test]
fn session_replays_a_script_as_json_lines() {
    let dir = workspace();
    let output = session(dir.path(), &[], SCRIPT);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = json_lines(&output);
    let tools: Vec<(u64, &str)> = lines
        .iter()
        .map(|l| (l["line"].as_u64().unwrap(), l["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tools,
        [
            (2, "ast_edit"),
            (3, "resolve"),
            (5, "ast_edit"),
            (6, "resolve"),
            (7, "resolve")
        ]
    );
    let preview = &lines[0]["result"];
    assert!(
        preview["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("+    let a = f()?;")
    );
    assert_eq!(preview["details"]["totals"]["replacements"], 2);
    assert_eq!(
        lines[1]["result"]["content"][0]["text"],
        "Applied 2 replacements in 1 file."
    );
    assert_eq!(lines[3]["result"]["details"]["action"], "discard");
    assert_eq!(lines[4]["result"]["isError"], true);
    assert_eq!(
        lines[4]["result"]["content"][0]["text"],
        "No pending action to resolve. Nothing to apply or discard."
    );
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);
    assert_eq!(read(dir.path(), "src/other.rs"), UNWRAPS);
}

/// Output to a pipe is the JSON serde writes, byte for byte: a DEL in a file's text (which
/// serde writes as is) reaches the reader, where a stream that strips styles dropped it.
#[test]
fn session_json_keeps_every_character_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "fn f() { g(\"a\u{7f}b\").unwrap(); }\n",
    )
    .unwrap();
    let script = r#"{"tool": "ast_grep", "args": {"pat": "g($S)"}}"#;
    let output = session(dir.path(), &[], script);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("a\u{7f}b"), "{}", stdout(&output));
    let lines = json_lines(&output);
    assert!(
        lines[0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("g(\"a\u{7f}b\")")
    );
}

#[test]
fn session_reads_a_file_argument() {
    let dir = workspace();
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, SCRIPT).unwrap();
    let output = session(dir.path(), &[script.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json_lines(&output).len(), 5);

    let missing = session(dir.path(), &["no-such-script.jsonl"], "");
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot open the script `no-such-script.jsonl`"));
}

#[test]
fn session_reports_malformed_lines_and_goes_on() {
    let dir = workspace();
    let script = "{\"tool\": \"ast_grep\", \"args\": {\"pat\": \"$X.unwrap()\"}}\nnot json\n{\"args\": {}}\n{\"tool\": \"nope\"}\n";
    let output = session(dir.path(), &[], script);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("xcsh session: line 2: "), "{err}");
    assert!(
        err.contains("xcsh session: line 3: missing field `tool`"),
        "{err}"
    );
    assert!(err.contains("2 malformed line(s) skipped"), "{err}");
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["line"], 2);
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("expected one JSON object per line")
    );
    assert_eq!(lines[3]["tool"], "nope");
    assert_eq!(lines[3]["result"]["isError"], true);
    assert!(
        lines[3]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Unknown tool `nope`.")
    );
}

#[test]
fn session_pretty_renders_resolutions_for_a_person() {
    let dir = workspace();
    let output = session(dir.path(), &["--pretty"], SCRIPT);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("line 2 · ast_edit"), "{out}");
    assert!(out.contains("+    let a = f()?;"), "{out}");
    assert!(
        out.contains("pending: 1 (top: AST Edit: 2 replacements in 1 file)"),
        "{out}"
    );
    assert!(
        out.contains("Accept: 2 replacements in 1 file [AST Edit]\n  propagate errors\n"),
        "{out}"
    );
    assert!(
        out.contains("Discard: 2 replacements in 1 file [AST Edit]\n  not this one\n"),
        "{out}"
    );
    assert!(
        out.contains("error: No pending action to resolve. Nothing to apply or discard."),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "{out:?}");
}

#[test]
fn session_warns_about_actions_left_pending() {
    let dir = workspace();
    let script = "{\"tool\": \"ast_edit\", \"args\": {\"ops\": [{\"pat\": \"$X.unwrap()\", \"out\": \"$X?\"}]}}\n";
    let output = session(dir.path(), &[], script);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("1 pending action(s) were never resolved and were dropped, nothing written: AST Edit: 4 replacements in 2 files"),
        "{}",
        stderr(&output)
    );
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);
}

// ---------------------------------------------------------------------------------------
// serve (the protocol itself is tested in tests/mcp.rs and tests/interop/)

#[test]
fn serve_reports_a_client_that_never_shakes_hands() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        xcsh().args(["serve", "--root", dir.path().to_str().unwrap()]),
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).is_empty(), "stdout is the protocol's alone");
    assert!(
        stderr(&output).contains("before the MCP handshake"),
        "{}",
        stderr(&output)
    );

    let missing = run(xcsh().args(["serve", "--root", "/definitely/not/here"]), "");
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("pass an existing directory"));
}

// ---------------------------------------------------------------------------------------
// demo

#[test]
fn demo_shows_the_whole_flow_from_any_directory() {
    let elsewhere = tempfile::tempdir().unwrap();
    let output = run(xcsh().current_dir(elsewhere.path()).arg("demo"), "");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    let milestones = [
        "Tools offered: ast_grep, ast_edit, apply_patch, edit, write_file, undo, resolve",
        "web/api.ts:13:5: console.log(\"usage request failed\", response.status)",
        "AST Edit preview: 4 replacements in 1 file",
        "+    let text = fs::read_to_string(path)?;",
        "src/config.rs on disk is unchanged: still 4 `.unwrap()` calls.",
        "  #1 AST Edit: 4 replacements in 1 file  (from ast_edit)",
        "  anthropic         {\"name\":\"resolve\",\"type\":\"tool\"}",
        "  openai-chat       {\"function\":{\"name\":\"resolve\"},\"type\":\"function\"}",
        "  gemini            {\"function_calling_config\":{\"allowed_function_names\":[\"resolve\"],\"mode\":\"ANY\"}}",
        "  bedrock           {\"tool\":{\"name\":\"resolve\"}}",
        "  mcp               (cannot force a tool",
        "Accept: 4 replacements in 1 file [AST Edit]",
        "Applied 4 replacements in 1 file.",
        "src/config.rs on disk now:",
        "   20 │     let text = fs::read_to_string(path)?;",
        "Discard: 2 replacements in 1 file [AST Edit]",
        "app/report.py on disk is unchanged.",
        "Nothing is pending; no provider gets a forced tool choice:",
        "resolve answers (isError: true): No pending action to resolve. Nothing to apply or discard.",
        "  src/config.rs    changed on 4 line(s)",
        "  app/report.py    unchanged",
    ];
    let mut from = 0;
    for milestone in milestones {
        let found = out[from..].find(milestone);
        assert!(
            found.is_some(),
            "missing, or out of order: `{milestone}`\n{out}"
        );
        from += found.unwrap_or(0);
    }
    assert!(!out.contains('\x1b'), "plain when not a terminal: {out:?}");
}

#[test]
fn session_with_a_dialect_answers_each_response_with_messages_and_tool_choice() {
    let dir = workspace();
    let responses = [
        json!({"output": {"message": {"role": "assistant", "content": [
            {"text": "Looking, then previewing."},
            {"toolUse": {"toolUseId": "t1", "name": "ast_grep",
                         "input": {"pat": "$X.unwrap()", "path": "src/load.rs"}}},
            {"toolUse": {"toolUseId": "t2", "name": "ast_edit",
                         "input": {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": "src/load.rs"}}}
        ]}}, "stopReason": "tool_use"}),
        json!({"output": {"message": {"role": "assistant", "content": "oops"}}}),
        json!({"output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t3", "name": "resolve",
                         "input": {"action": "apply", "reason": "propagate errors"}}}
        ]}}}),
    ];
    let script: String = responses.iter().map(|r| format!("{r}\n")).collect();
    let output = session(dir.path(), &["--dialect", "bedrock"], &script);
    // The malformed response is refused and the session goes on.
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 3);

    let first = &lines[0];
    let blocks = first["messages"][0]["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b["toolResult"]["toolUseId"].as_str())
        .collect();
    assert_eq!(ids, ["t1", "t2"]);
    assert_eq!(
        blocks[2]["text"],
        xcsh::pending::RESOLVE_REMINDER,
        "the reminder follows the results"
    );
    assert_eq!(first["tool_choice"], json!({"tool": {"name": "resolve"}}));

    assert_eq!(lines[1]["line"], 2);
    assert_eq!(
        lines[1]["error"],
        "output.message.content: expected an array, found a string"
    );

    let applied = &lines[2]["messages"][0]["content"][0]["toolResult"];
    assert_eq!(applied["toolUseId"], "t3");
    assert_eq!(
        applied["content"][0]["text"],
        "Applied 2 replacements in 1 file."
    );
    assert_eq!(lines[2]["tool_choice"], Value::Null);
    assert_eq!(read(dir.path(), "src/load.rs"), QUESTIONS);

    let mcp = session(dir.path(), &["--dialect", "mcp"], "");
    assert_eq!(mcp.status.code(), Some(2));
    assert!(stderr(&mcp).contains("--dialect mcp: an MCP client owns its model"));
}

const PATCH: &str = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** Add File: b.py\n+x = 1\n*** Delete File: c.py\n*** End Patch\n";

fn patch_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    std::fs::write(dir.path().join("c.py"), "gone\n").unwrap();
    std::fs::write(dir.path().join("fix.patch"), PATCH).unwrap();
    dir
}

#[test]
fn apply_patch_previews_without_a_terminal_applies_with_yes_and_refuses_a_bad_hunk() {
    let dir = patch_tree();
    // From a FILE, no --yes, no terminal: the diff, exit 1, nothing written.
    let preview = run(
        xcsh()
            .current_dir(dir.path())
            .args(["apply-patch", "fix.patch"]),
        "",
    );
    let out = stdout(&preview);
    assert_eq!(preview.status.code(), Some(1), "{out}{}", stderr(&preview));
    assert!(out.contains("-    return 1\n+    return 2"), "{out}");
    assert!(
        out.contains("a.py: updated (1 hunk)\nb.py: new file\nc.py: deleted\n1 file updated, 1 added, 1 deleted."),
        "{out}"
    );
    assert!(
        stderr(&preview).contains("Re-run with --yes"),
        "{}",
        stderr(&preview)
    );
    assert!(!dir.path().join("b.py").exists());

    // From stdin, with --yes and --root: applied, exit 0.
    let applied = run(
        xcsh()
            .args(["apply-patch", "-", "--yes", "--root"])
            .arg(dir.path()),
        PATCH,
    );
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    assert!(
        stdout(&applied).contains("Applied the patch: 1 file updated, 1 added, 1 deleted."),
        "{}",
        stdout(&applied)
    );
    assert_eq!(read(dir.path(), "a.py"), "def f():\n    return 2\n");
    assert_eq!(read(dir.path(), "b.py"), "x = 1\n");
    assert!(!dir.path().join("c.py").exists());

    // Again: the hunk no longer matches; exit 2, the hunk named, nothing written.
    std::fs::write(dir.path().join("b.py"), "changed\n").unwrap();
    let refused = run(
        xcsh()
            .args(["apply-patch", "--yes", "--root"])
            .arg(dir.path()),
        PATCH,
    );
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("xcsh apply-patch: the patch was not applied: `*** Update File: a.py` (patch line 2), hunk 1 (patch line 3):"),
        "{err}"
    );
    assert!(
        err.contains("a.py:2: a changed line: the file has `    return 2`"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("Nothing was written."), "{err}");
    assert_eq!(read(dir.path(), "b.py"), "changed\n");

    // -i with the patch on stdin cannot ask: refused before reading anything.
    let no_tty = run(
        xcsh().args(["apply-patch", "-i"]).current_dir(dir.path()),
        PATCH,
    );
    assert_eq!(no_tty.status.code(), Some(2));
    assert!(
        stderr(&no_tty).contains("give it as a FILE"),
        "{}",
        stderr(&no_tty)
    );
}

/// With `--syntax-guard`, the terminal commands judge their change as the tools do: `warn`
/// names the error under the diff and writes; `refuse` exits 2 before asking, writing
/// nothing, even with --yes.
#[test]
fn ast_edit_and_apply_patch_have_the_syntax_guard() {
    let dir = workspace();
    // `$X?` → `$X?)`: every rewritten line gets an unmatched `)`.
    let breaking = |guard: &str| {
        let mut command = xcsh();
        command
            .current_dir(dir.path())
            .args(["ast-edit", "-p", "$X.unwrap()", "-r", "$X)", "-l", "rust"])
            .args(["--yes", "--syntax-guard", guard, "src/load.rs"]);
        run(&mut command, "")
    };
    let refused = breaking("refuse");
    let (out, err) = (stdout(&refused), stderr(&refused));
    assert_eq!(refused.status.code(), Some(2), "{out}{err}");
    assert!(
        out.contains("Syntax: the change introduces a syntax error at src/load.rs:"),
        "{out}"
    );
    assert!(
        out.contains("--syntax-guard refuse: applying is refused."),
        "{out}"
    );
    assert!(
        err.contains("not applied: the change introduces a syntax error into src/load.rs (--syntax-guard refuse; see the preview). Nothing was written"),
        "{err}"
    );
    assert_eq!(read(dir.path(), "src/load.rs"), UNWRAPS);

    let warned = breaking("warn");
    let out = stdout(&warned);
    assert_eq!(warned.status.code(), Some(0), "{out}{}", stderr(&warned));
    assert!(out.contains("Applying writes it anyway"), "{out}");
    assert_ne!(read(dir.path(), "src/load.rs"), UNWRAPS);

    // A change that parses says nothing of syntax; without the flag nothing is checked.
    let fine = run(
        &mut ast_edit(
            dir.path(),
            &["--yes", "--syntax-guard", "refuse", "src/other.rs"],
        ),
        "",
    );
    assert_eq!(fine.status.code(), Some(0), "{}", stderr(&fine));
    assert!(!stdout(&fine).contains("Syntax:"), "{}", stdout(&fine));
    assert_eq!(read(dir.path(), "src/other.rs"), QUESTIONS);
    std::fs::write(dir.path().join("src/load.rs"), UNWRAPS).unwrap();
    let mut unguarded = xcsh();
    unguarded.current_dir(dir.path()).args([
        "ast-edit",
        "-p",
        "$X.unwrap()",
        "-r",
        "$X)",
        "-l",
        "rust",
        "--yes",
        "src/load.rs",
    ]);
    let unguarded = run(&mut unguarded, "");
    assert_eq!(unguarded.status.code(), Some(0), "{}", stderr(&unguarded));
    assert!(
        !stdout(&unguarded).contains("Syntax:"),
        "{}",
        stdout(&unguarded)
    );

    let patch = "*** Begin Patch\n*** Update File: src/other.rs\n@@\n-    let a = f()?;\n+    let a = f()?;)\n*** End Patch\n";
    let refused = run(
        xcsh()
            .args([
                "apply-patch",
                "-",
                "--yes",
                "--syntax-guard",
                "refuse",
                "--root",
            ])
            .arg(dir.path()),
        patch,
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("syntax error into src/other.rs"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(read(dir.path(), "src/other.rs"), QUESTIONS);
}

#[test]
fn apply_patch_interactive_applies_exactly_the_accepted_files() {
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: /usr/bin/script (util-linux) is not installed");
        return;
    }
    let dir = patch_tree();
    let line = format!("{} apply-patch -i fix.patch", env!("CARGO_BIN_EXE_xcsh"));
    let mut command = Command::new("/usr/bin/script");
    command
        .current_dir(dir.path())
        .args(["-qec", &line, "/dev/null"])
        .env("NO_COLOR", "1");
    // a.py yes, b.py no, c.py yes.
    let output = run(&mut command, "y\nn\ny\n");
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("(1/3) Apply this change to a.py? [y,n,a,q,?]"),
        "{out}"
    );
    assert!(
        out.contains("Applied the patch: 1 file updated, 1 deleted (1 file skipped)."),
        "{out}"
    );
    assert_eq!(read(dir.path(), "a.py"), "def f():\n    return 2\n");
    assert!(!dir.path().join("b.py").exists());
    assert!(!dir.path().join("c.py").exists());
}
