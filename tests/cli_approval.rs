//! `xcsh session --approval rules=FILE --audit FILE`: three previews decided three ways, each
//! with its rule; the audit trail read back; a malformed policy file refused at start.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn xcsh() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xcsh"));
    command.env_remove("RUST_LOG").env_remove("CLICOLOR_FORCE");
    command
}

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
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().expect("xcsh finishes")
}

const RULES: &str = r#"
[[rule]]
name = "no-secrets"
decision = "deny"
paths = ["secrets/**"]

[[rule]]
name = "docs-freely"
decision = "allow"
paths = ["docs/**"]

[[rule]]
name = "code-asks"
decision = "ask"
tools = ["ast_edit"]
"#;

fn edit(path: &str) -> String {
    format!(
        r#"{{"tool": "ast_edit", "args": {{"ops": [{{"pat": "print($A)", "out": "log($A)"}}], "lang": "python", "path": "{path}"}}}}
{{"tool": "resolve", "args": {{"action": "apply", "reason": "{path}"}}}}
"#
    )
}

fn sha256(path: &Path) -> String {
    xcsh::approval::sha256_hex(&std::fs::read(path).unwrap())
}

#[test]
fn rules_decide_three_previews_three_ways_and_the_audit_names_each_maker() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    for (path, text) in [
        ("docs/a.py", "print(1)\n"),
        ("src/b.py", "print(2)\n"),
        ("secrets/c.py", "print(3)\n"),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(
        &script,
        format!("{}{}{}", edit("docs"), edit("src"), edit("secrets")),
    )
    .unwrap();
    let audit = dir.path().join("audit.jsonl");

    // The person's answer to the one rule that asks comes on stdin (the script is a file).
    let output = run(
        xcsh()
            .arg("session")
            .arg(&script)
            .arg("--root")
            .arg(&root)
            .arg(format!("--approval=rules={}", rules.display()))
            .arg("--audit")
            .arg(&audit),
        "y\n",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let results: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["tool"] == "resolve")
        .map(|l| l["result"].clone())
        .collect();
    assert_eq!(results.len(), 3);
    let text = |r: &Value| r["content"][0]["text"].as_str().unwrap().to_owned();
    let rule = |r: &Value| {
        r["details"]["approval"]["rule"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(rule(&results[0]), "docs-freely");
    assert_eq!(rule(&results[1]), "code-asks");
    assert_eq!(rule(&results[2]), "no-secrets");
    assert!(
        results[0]["content"]
            .to_string()
            .contains("Allowed by rule `docs-freely`")
    );
    assert!(
        results[1]["content"]
            .to_string()
            .contains("Approved by the person.")
    );
    assert!(text(&results[2]).starts_with("Denied by rule `no-secrets`"));
    assert!(stderr.contains("Approve this change?"), "{stderr}");

    assert_eq!(
        std::fs::read_to_string(root.join("docs/a.py")).unwrap(),
        "log(1)\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/b.py")).unwrap(),
        "log(2)\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("secrets/c.py")).unwrap(),
        "print(3)\n"
    );

    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let decisions: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["event"] == "resolve")
        .map(|l| {
            (
                l["decidedBy"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("rule:docs-freely".to_owned(), "applied".to_owned()),
            ("person".to_owned(), "applied".to_owned()),
            ("rule:no-secrets".to_owned(), "denied".to_owned()),
        ]
    );
    assert_eq!(lines.iter().filter(|l| l["event"] == "push").count(), 3);
    // The hashes match the files on disk, before and after.
    for (line, path, before) in [
        (1, "docs/a.py", "print(1)\n"),
        (3, "src/b.py", "print(2)\n"),
    ] {
        let file = &lines[line]["files"][0];
        assert_eq!(file["path"], path);
        assert_eq!(file["after"], sha256(&root.join(path)));
        assert_eq!(
            file["before"],
            xcsh::approval::sha256_hex(before.as_bytes())
        );
    }
}

#[test]
fn the_audit_holds_file_contents_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, edit("src")).unwrap();
    for contents in [false, true] {
        std::fs::write(root.join("src/b.py"), "print('confidential')\n").unwrap();
        let audit = dir.path().join(format!("audit-{contents}.jsonl"));
        let mut command = xcsh();
        command
            .arg("session")
            .arg(&script)
            .arg("--root")
            .arg(&root)
            .arg("--audit")
            .arg(&audit);
        if contents {
            command.arg("--audit-contents");
        }
        let output = run(&mut command, "");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let log = std::fs::read_to_string(&audit).unwrap();
        assert_eq!(log.contains("confidential"), contents, "{log}");
        if contents {
            let resolve: Value = log
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|l| l["event"] == "resolve")
                .unwrap();
            assert_eq!(resolve["files"][0]["beforeText"], "print('confidential')\n");
            assert_eq!(resolve["files"][0]["afterText"], "log('confidential')\n");
        }
    }
    // --audit-contents needs --audit.
    let output = run(
        xcsh().arg("session").arg(&script).arg("--audit-contents"),
        "",
    );
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_malformed_policy_file_is_refused_at_start_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nname = \"x\"\ndecision = \"allow\"\nmax_lines = \"ten\"\n",
    )
    .unwrap();
    for command in ["session", "serve"] {
        let output = run(
            xcsh()
                .arg(command)
                .arg("--root")
                .arg(dir.path())
                .arg(format!("--approval=rules={}", rules.display())),
            "",
        );
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("line 4"), "{stderr}");
        assert!(stderr.contains("rules.toml"), "{stderr}");
    }
    let output = run(
        xcsh()
            .args(["session", "--approval", "sometimes", "--root"])
            .arg(dir.path()),
        "",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("expected `model`, `human` or `rules=FILE`")
    );
}

#[test]
fn human_at_the_terminal_declines_with_words_or_leaves_it_pending() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.py"), "print(1)\n").unwrap();
    let script = dir.path().join("script.jsonl");
    std::fs::write(&script, edit(".")).unwrap();
    let session = |answer: &str| {
        run(
            xcsh()
                .arg("session")
                .arg(&script)
                .arg("--root")
                .arg(&root)
                .args(["--approval", "human"]),
            answer,
        )
    };

    let declined = session("n not before the release\n");
    assert!(declined.status.success());
    let out = String::from_utf8(declined.stdout).unwrap();
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let text = last["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("The person declined to apply"), "{text}");
    assert!(text.contains("They said: not before the release"), "{text}");
    assert_eq!(last["result"]["details"]["approval"]["answer"], "decline");

    // No answer (end of input): nothing written, the action still pending at the end.
    let unanswered = session("");
    let out = String::from_utf8(unanswered.stdout).unwrap();
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert!(
        last["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Not approved: the person gave no answer")
    );
    assert!(String::from_utf8_lossy(&unanswered.stderr).contains("never resolved"));
    assert_eq!(
        std::fs::read_to_string(root.join("a.py")).unwrap(),
        "print(1)\n"
    );
}
