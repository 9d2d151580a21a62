//! Confinement through the binary's two doors: `xcsh ast-edit` (a person's paths, relative to
//! the current directory) and `xcsh serve` (an MCP client's arguments, sent here as raw
//! JSON-RPC lines over stdio, no client library). Whatever the path, glob or link, nothing
//! outside `--root` is read (no answer ever shows outside content) or written.
//!
//! The same MCP connection also gets garbage a client could send — broken JSON, 10,000-deep
//! nesting, a 10 MB line, arguments that are not an object — and must keep answering.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::content_text;

const OUTSIDE_MARKER: &str = "leak_outside";
const INSIDE: &str = "fn a() { let v = load().unwrap(); }\n";

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let (root, outside) = (base.join("ws"), base.join("outside"));
    fs::create_dir_all(root.join("src")).expect("mkdir");
    fs::create_dir_all(outside.join("sub")).expect("mkdir");
    fs::write(root.join("src/a.rs"), INSIDE).expect("write");
    for path in ["secret.rs", "sub/deep.rs"] {
        fs::write(
            outside.join(path),
            format!("fn secret() {{ {OUTSIDE_MARKER}().unwrap(); }}\n"),
        )
        .expect("write");
    }
    symlink("../outside", root.join("out_dir")).expect("link");
    symlink(&outside, root.join("out_dir_abs")).expect("link");
    symlink("../outside/secret.rs", root.join("out_file.rs")).expect("link");
    symlink("../../outside/sub", root.join("src/nested_out")).expect("link");
    symlink("loop_b", root.join("loop_a.rs")).expect("link");
    symlink("loop_a.rs", root.join("loop_b")).expect("link");
    Fixture {
        _dir: dir,
        root,
        outside,
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(base).expect("inside").to_path_buf();
            let meta = fs::symlink_metadata(&path).expect("meta");
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("link");
                out.insert(rel, target.as_os_str().as_encoded_bytes().to_vec());
            } else if meta.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                walk(base, &path, out);
            } else {
                out.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn hostile_paths(fx: &Fixture) -> Vec<String> {
    let mut paths: Vec<String> = [
        "..",
        "../outside",
        "../outside/secret.rs",
        "src/../../outside/secret.rs",
        "/etc/passwd",
        "/etc/**",
        "../**",
        "../*/secret.rs",
        "out_dir",
        "out_dir/secret.rs",
        "out_dir/**",
        "out_dir_abs/secret.rs",
        "out_file.rs",
        "src/nested_out/deep.rs",
        "src/nested_out/**",
        "loop_a.rs",
        "**/secret.rs",
    ]
    .iter()
    .map(|p| (*p).to_owned())
    .collect();
    paths.push(fx.outside.join("secret.rs").to_string_lossy().into_owned());
    paths.push(fx.outside.to_string_lossy().into_owned());
    paths
}

// ---------------------------------------------------------------------------------------
// xcsh ast-edit

#[test]
fn cli_ast_edit_never_reads_or_writes_outside_the_root() {
    let fx = fixture();
    let outside_before = snapshot(&fx.outside);
    for path in hostile_paths(&fx) {
        for lang in [None, Some("rust")] {
            let mut command = Command::new(env!("CARGO_BIN_EXE_xcsh"));
            // The root given explicitly: without `--root`, a path outside the current
            // directory moves the root to it (a person means the path they type).
            command.current_dir(&fx.root).env_remove("RUST_LOG").args([
                "ast-edit",
                "-p",
                "$X.unwrap()",
                "-r",
                "$X.expect(\"pwned\")",
                "--yes",
                "--root",
                ".",
            ]);
            if let Some(lang) = lang {
                command.args(["-l", lang]);
            }
            let output = command
                .arg(&path)
                .stdin(Stdio::null())
                .output()
                .expect("xcsh runs");
            let (stdout, stderr) = (
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr),
            );
            let what = format!("xcsh ast-edit {path:?} (lang {lang:?})");
            assert!(
                !stdout.contains(OUTSIDE_MARKER) && !stderr.contains(OUTSIDE_MARKER),
                "{what} showed outside content:\n{stdout}\n{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{what} panicked: {stderr}");
            assert_eq!(
                snapshot(&fx.outside),
                outside_before,
                "{what} wrote outside"
            );
            if !output.status.success() {
                assert_eq!(output.status.code(), Some(2), "{what}: {stderr}");
                assert!(
                    [
                        "outside the root",
                        "leaves the workspace root",
                        "symbolic-link loop",
                        "not a valid glob",
                        "does not exist"
                    ]
                    .iter()
                    .any(|r| stderr.contains(r)),
                    "{what}: an unexplained failure: {stderr}"
                );
            }
        }
    }
    // Only `src/a.rs` is inside; whatever ran, it is the only file that may have changed.
    let a = fs::read_to_string(fx.root.join("src/a.rs")).expect("read");
    assert!(a == INSIDE || a.contains("expect(\"pwned\")"), "{a}");
}

// ---------------------------------------------------------------------------------------
// xcsh serve, raw JSON-RPC over stdio

/// A bare-hands MCP client: lines in, lines out, answers matched by id.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    incoming: mpsc::Receiver<String>,
    next_id: u64,
    /// Every message that was not the answer waited for.
    seen: Vec<Value>,
}

impl Raw {
    fn start(root: &Path) -> Raw {
        let mut child = Command::new(env!("CARGO_BIN_EXE_xcsh"))
            .args(["serve", "--root"])
            .arg(root)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("xcsh serve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin,
            incoming,
            next_id: 0,
            seen: Vec::new(),
        };
        let init = raw.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "xcsh", "{init}");
        raw.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        raw
    }

    fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("the server reads its stdin");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and waits (bounded) for the answer with its id; notifications and
    /// answers to garbage (id null) pass by.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line.to_string());
        self.wait_for(id)
    }

    fn wait_for(&mut self, id: u64) -> Value {
        loop {
            let line = self
                .incoming
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer to request {id} ({e}); the server died?"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line:.200}"));
            if message["id"] == id {
                return message;
            }
            self.seen.push(message);
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_serve_never_reads_or_writes_outside_the_root() {
    let fx = fixture();
    let outside_before = snapshot(&fx.outside);
    let mut mcp = Raw::start(&fx.root);
    let mut paths: Vec<(String, Value)> = hostile_paths(&fx)
        .into_iter()
        .map(|p| (format!("path {p:?}"), json!({"path": p})))
        .collect();
    for glob in [
        "../**",
        "/etc/**",
        "../outside/**",
        "**/../../**",
        "out_dir/**",
    ] {
        paths.push((format!("glob {glob:?}"), json!({"glob": glob})));
    }
    for (what, scope) in paths {
        let mut grep = scope.clone();
        grep["pat"] = json!("$X.unwrap()");
        let mut edit = scope;
        edit["ops"] = json!([{"pat": "$X.unwrap()", "out": "$X.expect(\"pwned\")"}]);
        for (tool, args) in [("ast_grep", grep), ("ast_edit", edit)] {
            let answer = mcp.call(tool, args);
            let text = content_text(&answer["result"]);
            assert!(answer.get("result").is_some(), "{tool} {what}: {answer}");
            assert!(
                !text.contains(OUTSIDE_MARKER),
                "{tool} {what} showed outside content: {text}"
            );
            assert!(
                !answer["result"]["structuredContent"]
                    .to_string()
                    .contains(OUTSIDE_MARKER),
                "{tool} {what}: structured content from outside"
            );
            if tool == "ast_edit" && text.contains("AST Edit preview:") {
                let applied = mcp.call("resolve", json!({"action": "apply", "reason": "probe"}));
                assert!(!content_text(&applied["result"]).contains(OUTSIDE_MARKER));
            }
            assert_eq!(
                snapshot(&fx.outside),
                outside_before,
                "{tool} {what} wrote outside"
            );
        }
    }
    let refused = mcp.call(
        "ast_edit",
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X"}], "path": "out_file.rs"}),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        content_text(&refused["result"]).contains("through the symbolic link `out_file.rs`"),
        "{refused}"
    );
}

#[test]
fn mcp_serve_survives_garbage_and_keeps_answering() {
    let fx = fixture();
    let before = snapshot(&fx.root);
    let mut mcp = Raw::start(&fx.root);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let huge = "x".repeat(10 * 1024 * 1024);
    let garbage = [
        "this is not json".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": ".to_owned(),
        "{}".to_owned(),
        "[]".to_owned(),
        "null".to_owned(),
        deep.clone(),
        format!("{{\"jsonrpc\": \"2.0\", \"id\": 900, \"method\": \"tools/call\", \"params\": {{\"name\": \"ast_grep\", \"arguments\": {{\"pat\": {deep}}}}}}}"),
        format!("{{\"jsonrpc\": \"2.0\", \"id\": 901, \"method\": \"tools/call\", \"params\": {{\"name\": \"ast_grep\", \"arguments\": {{\"pat\": \"{huge}\", \"lang\": \"rust\"}}}}}}"),
        "{\"jsonrpc\": \"2.0\", \"id\": 902, \"method\": \"tools/call\", \"params\": {\"name\": \"resolve\", \"arguments\": [\"apply\", \"why\"]}}".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": 903, \"method\": \"tools/call\", \"params\": {\"name\": \"ast_edit\", \"arguments\": \"ops\"}}".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": 904, \"method\": \"tools/call\", \"params\": {\"name\": 7}}".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": 905, \"method\": \"no/such/method\"}".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": 906, \"method\": \"tools/call\", \"params\": {\"name\": \"ast_edit\", \"arguments\": {\"ops\": [{\"pat\": \"$X.unwrap()\", \"out\": \"$X?\"}], \"limit\": 18446744073709551616}}}".to_owned(),
    ];
    for line in &garbage {
        mcp.send_line(line);
        // After each, a good call still gets its answer.
        let alive = mcp.call("ast_grep", json!({"pat": "load()"}));
        assert!(
            content_text(&alive["result"]).starts_with("1 match in 1 file"),
            "after {:.120}: {alive}",
            line
        );
    }
    // The requests with ids among the garbage are each refused — as an error result or a
    // JSON-RPC error — never applied. (900 cannot be parsed at all: serde_json stops at 128
    // levels, so rmcp cannot read its id and drops it; the server lives on, as checked above.)
    // 901 searches for a 10 MB identifier, which takes a while: wait for its answer.
    let answer_901 = match mcp.seen.iter().find(|m| m["id"] == 901) {
        Some(answer) => answer.clone(),
        None => mcp.wait_for(901),
    };
    for id in 901..=906 {
        let answer = if id == 901 {
            &answer_901
        } else {
            mcp.seen
                .iter()
                .find(|m| m["id"] == id)
                .unwrap_or_else(|| panic!("request {id} got no answer"))
        };
        let is_error_result = answer["result"]["isError"] == true;
        assert!(
            id == 901 || is_error_result || answer.get("error").is_some(),
            "request {id} was not refused: {answer:.300}"
        );
        assert!(
            answer.to_string().len() < 64 * 1024,
            "request {id}: a huge answer"
        );
    }
    assert_eq!(snapshot(&fx.root), before, "garbage changed the workspace");
    // And the session still previews and applies.
    let preview = mcp.call(
        "ast_edit",
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}]}),
    );
    assert!(
        content_text(&preview["result"]).contains("AST Edit preview: 1 replacement in 1 file"),
        "{preview}"
    );
    let applied = mcp.call("resolve", json!({"action": "apply", "reason": "ok"}));
    assert!(
        content_text(&applied["result"]).starts_with("Applied 1 replacement in 1 file."),
        "{applied}"
    );
}
