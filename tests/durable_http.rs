//! `xcsh serve --http ADDR --state DIR`: each MCP session's pending stack is kept in DIR under
//! its `Mcp-Session-Id`. The server is SIGKILLed between a preview and its `resolve`,
//! restarted on the same address and directory, and the client carries on with its old
//! session id: it applies exactly what it previewed, sees only its own stack, is refused when
//! a file changed meanwhile; ids the server never issued get a clear error and no file.
//!
//! The client is a bare HTTP/1.1 one (hyper) speaking Streamable HTTP by hand, as in
//! `reliability_http.rs`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::net::TcpStream;

mod common;
use common::{content_text, first_line_then_drain};

const PROTOCOL: &str = "2025-11-25";
const OLD_A: &str = "fn a() -> R {\n    let v = load_a().unwrap();\n    Ok(v)\n}\n";
const NEW_A: &str = "fn a() -> R {\n    let v = load_a()?;\n    Ok(v)\n}\n";
const OLD_B: &str = "fn b() -> R {\n    let v = load_b().unwrap();\n    Ok(v)\n}\n";
const NEW_B: &str = "fn b() -> R {\n    let v = load_b()?;\n    Ok(v)\n}\n";
const NOTHING_PENDING: &str = "No pending action to resolve. Nothing to apply or discard.";

struct Server {
    child: Child,
    addr: String,
}

impl Server {
    /// `xcsh serve --http ADDR --state STATE --root ROOT`; `addr` `127.0.0.1:0` picks a port.
    fn start(root: &Path, state: &Path, addr: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_xcsh"))
            .args(["serve", "--http", addr, "--root"])
            .arg(root)
            .arg("--state")
            .arg(state)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("xcsh serve --http starts");
        let line = first_line_then_drain(child.stderr.take().expect("stderr"));
        assert!(line.contains("pending stacks kept in"), "{line}");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        Server { child, addr }
    }

    /// SIGKILL: no handler runs, nothing is cleaned up.
    fn kill(mut self) -> String {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
        std::mem::take(&mut self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Answer {
    status: hyper::StatusCode,
    session: Option<String>,
    text: String,
}

/// One HTTP request to `/mcp`, with `session` as `Mcp-Session-Id` when given.
async fn send(addr: &str, method: &str, session: Option<&str>, body: Option<&Value>) -> Answer {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let body = body.map(Value::to_string).unwrap_or_default();
    let response = sender
        .send_request(request.body(Full::new(Bytes::from(body))).expect("request"))
        .await
        .expect("a response");
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes();
    Answer {
        status,
        session,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// The JSON-RPC messages of a body: plain JSON, or server-sent events' `data:` lines.
fn messages(body: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect()
}

/// One MCP session: its id outlives the server process that issued it.
struct Client {
    addr: String,
    session: String,
    next_id: u64,
}

impl Client {
    async fn connect(addr: &str) -> Client {
        let answer = send(
            addr,
            "POST",
            None,
            Some(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL, "capabilities": {},
                "clientInfo": {"name": "durable-http", "version": "0"}}}),
            ),
        )
        .await;
        assert!(answer.status.is_success(), "{}", answer.text);
        let session = answer.session.expect("an Mcp-Session-Id");
        let initialized = send(
            addr,
            "POST",
            Some(&session),
            Some(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        )
        .await;
        assert!(initialized.status.is_success(), "{}", initialized.text);
        Client {
            addr: addr.to_owned(),
            session,
            next_id: 1,
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = send(&self.addr, "POST", Some(&self.session), Some(&body)).await;
        assert!(
            answer.status.is_success(),
            "HTTP {} for {body}: {:.500}",
            answer.status,
            answer.text
        );
        messages(&answer.text)
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} #{id}: {}", answer.text))
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert!(answer.get("result").is_some(), "{tool}: {answer}");
        answer["result"].clone()
    }

    async fn resolve(&mut self, action: &str) -> Value {
        self.call(
            "resolve",
            json!({"action": action, "reason": "durable http test"}),
        )
        .await
    }

    /// `resolve`'s description: the session's pending stack, top first.
    async fn listed_stack(&mut self) -> String {
        let listed = self.request("tools/list", json!({})).await;
        listed["result"]["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|t| t["name"] == "resolve"))
            .and_then(|t| t["description"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// The server now serves this session's requests at `addr` (a restarted server).
    fn reconnect(&mut self, addr: &str) {
        addr.clone_into(&mut self.addr);
    }
}

fn edit(name: &str) -> Value {
    json!({"ops": [{"pat": format!("load_{name}().unwrap()"), "out": format!("load_{name}()?")}],
           "path": format!("src/{name}.rs"), "lang": "rust"})
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("src")).expect("mkdir");
    std::fs::write(dir.path().join("src/a.rs"), OLD_A).expect("write");
    std::fs::write(dir.path().join("src/b.rs"), OLD_B).expect("write");
    dir
}

fn read(root: &Path, name: &str) -> String {
    std::fs::read_to_string(root.join("src").join(name)).expect("read")
}

/// The names in the state directory, sorted.
fn state_files(state: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(state)
        .map(|entries| {
            entries
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Waits until `state` holds exactly `expected` (a session's files go when its handler ends,
/// just after the HTTP answer).
async fn wait_for_files(state: &Path, expected: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = state_files(state);
        if now == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "state directory holds {now:?}, expected {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn files_of(id: &str, kinds: &[&str]) -> Vec<String> {
    kinds.iter().map(|kind| format!("{id}.{kind}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_survives_a_restart_and_applies_in_its_own_session_only() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");

    let mut a = Client::connect(&server.addr).await;
    let mut b = Client::connect(&server.addr).await;
    assert_ne!(a.session, b.session);
    let preview = a.call("ast_edit", edit("a")).await;
    let text = content_text(&preview);
    assert!(
        text.contains("AST Edit preview: 1 replacement in 1 file")
            && text.contains("-    let v = load_a().unwrap();")
            && text.contains("+    let v = load_a()?;"),
        "{text}"
    );
    b.call("ast_edit", edit("b")).await;
    // Each push is on disk before its preview is answered: the kill below loses nothing.
    let stack_a = state.path().join(format!("{}.stack", a.session));
    assert!(
        std::fs::read_to_string(&stack_a)
            .expect("A's stack")
            .contains("src/a.rs"),
        "A's preview is in its stack file"
    );
    let addr = server.kill();
    assert_eq!(read(root.path(), "a.rs"), OLD_A, "a preview wrote the file");
    assert_eq!(read(root.path(), "b.rs"), OLD_B, "a preview wrote the file");

    let restarted = Server::start(root.path(), state.path(), &addr);
    a.reconnect(&restarted.addr);
    b.reconnect(&restarted.addr);
    // A sees its own preview, and only it.
    let listed = a.listed_stack().await;
    assert_eq!(
        listed.matches("AST Edit: 1 replacement in 1 file").count(),
        1,
        "{listed}"
    );
    let applied = a.resolve("apply").await;
    assert_eq!(
        content_text(&applied),
        "Applied 1 replacement in 1 file.",
        "{applied}"
    );
    assert!(
        applied["structuredContent"].to_string().contains("a.rs")
            && !applied["structuredContent"].to_string().contains("b.rs"),
        "A applied someone else's action: {applied}"
    );
    assert_eq!(read(root.path(), "a.rs").as_bytes(), NEW_A.as_bytes());
    assert_eq!(read(root.path(), "b.rs"), OLD_B, "B's preview applied by A");
    // B's preview is not A's to resolve.
    assert_eq!(content_text(&a.resolve("apply").await), NOTHING_PENDING);
    assert_eq!(read(root.path(), "b.rs"), OLD_B);

    // B resolves its own, in the restarted server too.
    let applied = b.resolve("apply").await;
    assert_eq!(content_text(&applied), "Applied 1 replacement in 1 file.");
    assert_eq!(read(root.path(), "b.rs").as_bytes(), NEW_B.as_bytes());
    assert_eq!(content_text(&b.resolve("apply").await), NOTHING_PENDING);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_edited_across_the_restart_is_refused_by_name() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");
    let mut a = Client::connect(&server.addr).await;
    a.call("ast_edit", edit("a")).await;
    let addr = server.kill();

    let by_hand = OLD_A.replace("Ok(v)", "Ok(v + 1)");
    std::fs::write(root.path().join("src/a.rs"), &by_hand).expect("edit by hand");
    let restarted = Server::start(root.path(), state.path(), &addr);
    a.reconnect(&restarted.addr);
    let refused = a.resolve("apply").await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        content_text(&refused).contains("`src/a.rs` (modified since it was read)"),
        "{}",
        content_text(&refused)
    );
    assert_eq!(read(root.path(), "a.rs"), by_hand, "a stale apply wrote");
    // Still pending, on top; discarding it leaves the file alone.
    let discarded = a.resolve("discard").await;
    assert!(
        content_text(&discarded).starts_with("Discarded: AST Edit: 1 replacement in 1 file."),
        "{}",
        content_text(&discarded)
    );
    assert_eq!(read(root.path(), "a.rs"), by_hand);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_never_issued_here_are_refused_and_get_no_file() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");
    let mut a = Client::connect(&server.addr).await;
    let issued = state_files(state.path());
    assert_eq!(issued, files_of(&a.session, &["lock", "session", "stack"]));

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "resolve", "arguments": {"action": "apply", "reason": "forged"}}});
    let check = |state: PathBuf, issued: Vec<String>| async move {
        assert_eq!(state_files(&state), issued, "a refused id created a file");
    };
    // Well formed, never issued: rmcp's 404 for an unknown session, saying why.
    for forged in ["0b8c1e2f-5d6a-4c3b-9e8f-7a6b5c4d3e2f", "session"] {
        let answer = send(&server.addr, "POST", Some(forged), Some(&call)).await;
        assert_eq!(answer.status, 404, "{forged}: {}", answer.text);
        assert!(
            answer.text.contains(&format!(
                "MCP session `{forged}` is not known to this server"
            )) && answer
                .text
                .contains("send `initialize` without a session id"),
            "{}",
            answer.text
        );
        let get = send(&server.addr, "GET", Some(forged), None).await;
        assert_eq!(get.status, 404, "GET {forged}: {}", get.text);
        check(state.path().to_path_buf(), issued.clone()).await;
    }
    // Not a plain name: refused before anything looks at the disk.
    for forged in [
        "../escape",
        "a/b",
        "..",
        ".hidden",
        "x".repeat(65).as_str(),
        "with space",
        // Another spelling of an issued id (one file on a case-insensitive filesystem).
        &a.session.to_uppercase(),
    ] {
        for method in ["POST", "GET", "DELETE"] {
            let body = (method == "POST").then_some(&call);
            let answer = send(&server.addr, method, Some(forged), body).await;
            assert_eq!(answer.status, 400, "{method} {forged}: {}", answer.text);
            assert!(
                answer
                    .text
                    .contains("is not a session id this server issues"),
                "{}",
                answer.text
            );
        }
        check(state.path().to_path_buf(), issued.clone()).await;
    }
    // A DELETE of an id never issued changes nothing either.
    let deleted = send(
        &server.addr,
        "DELETE",
        Some("0b8c1e2f-5d6a-4c3b-9e8f-7a6b5c4d3e2f"),
        None,
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.text);
    check(state.path().to_path_buf(), issued.clone()).await;

    // After a restart the issued id is served, the forged ones still are not.
    let addr = server.kill();
    let restarted = Server::start(root.path(), state.path(), &addr);
    a.reconnect(&restarted.addr);
    assert_eq!(content_text(&a.resolve("apply").await), NOTHING_PENDING);
    let answer = send(
        &restarted.addr,
        "POST",
        Some("0b8c1e2f-5d6a-4c3b-9e8f-7a6b5c4d3e2f"),
        Some(&call),
    )
    .await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    check(state.path().to_path_buf(), issued).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_leaves_no_file_unless_it_had_previews() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");

    // Resolved everything, then DELETE: nothing of it stays.
    let mut a = Client::connect(&server.addr).await;
    a.call("ast_edit", edit("a")).await;
    a.resolve("apply").await;
    let mut b = Client::connect(&server.addr).await;
    b.call("ast_edit", edit("b")).await;
    let deleted = send(&server.addr, "DELETE", Some(&a.session), None).await;
    assert!(deleted.status.is_success(), "{}", deleted.text);
    wait_for_files(
        state.path(),
        &files_of(&b.session, &["lock", "session", "stack"]),
    )
    .await;
    let gone = send(
        &server.addr,
        "POST",
        Some(&a.session),
        Some(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}})),
    )
    .await;
    assert_eq!(
        gone.status, 404,
        "a deleted session is served: {}",
        gone.text
    );

    // Deleted with a preview pending: the session is gone, its stack stays for a person.
    let deleted = send(&server.addr, "DELETE", Some(&b.session), None).await;
    assert!(deleted.status.is_success(), "{}", deleted.text);
    wait_for_files(state.path(), &files_of(&b.session, &["lock", "stack"])).await;
    assert!(
        std::fs::read_to_string(state.path().join(format!("{}.stack", b.session)))
            .expect("B's stack")
            .contains("src/b.rs")
    );
    let addr = server.kill();
    let restarted = Server::start(root.path(), state.path(), &addr);
    let gone = send(
        &restarted.addr,
        "POST",
        Some(&b.session),
        Some(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}})),
    )
    .await;
    assert_eq!(gone.status, 404, "{}", gone.text);
    assert_eq!(read(root.path(), "b.rs"), OLD_B);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_stack_is_named_by_every_call_of_its_session_and_left_alone() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");
    let mut a = Client::connect(&server.addr).await;
    a.call("ast_edit", edit("a")).await;
    let addr = server.kill();
    let stack = state.path().join(format!("{}.stack", a.session));
    std::fs::write(&stack, "garbage").expect("corrupt the stack");

    let restarted = Server::start(root.path(), state.path(), &addr);
    a.reconnect(&restarted.addr);
    for _ in 0..2 {
        let refused = a.resolve("apply").await;
        assert_eq!(refused["isError"], true, "{refused}");
        let text = content_text(&refused);
        assert!(
            text.starts_with("This MCP session's pending stack cannot be opened:")
                && text.contains(&format!("{}` cannot be used", stack.display())),
            "{text}"
        );
    }
    let preview = a.call("ast_edit", edit("a")).await;
    assert_eq!(
        preview["isError"], true,
        "a broken session previewed: {preview}"
    );
    assert_eq!(std::fs::read(&stack).expect("the stack"), b"garbage");
    assert_eq!(read(root.path(), "a.rs"), OLD_A);
}

/// Sets the last change of every file of session `id` in `state` to `days` days ago.
fn age(state: &Path, id: &str, days: u64) {
    let then = std::time::SystemTime::now() - Duration::from_secs(days * 86_400);
    for kind in ["session", "stack", "lock"] {
        let path = state.join(format!("{id}.{kind}"));
        if let Ok(file) = std::fs::File::options().append(true).open(&path) {
            file.set_modified(then).expect("set mtime");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_unused_past_the_expiry_are_forgotten_unless_something_is_pending() {
    let root = workspace();
    let state = tempfile::tempdir().expect("state dir");
    let server = Server::start(root.path(), state.path(), "127.0.0.1:0");
    let mut pending = Client::connect(&server.addr).await;
    pending.call("ast_edit", edit("a")).await;
    let idle = Client::connect(&server.addr).await;
    let mut recent = Client::connect(&server.addr).await;
    let addr = server.kill();
    age(state.path(), &pending.session, 40);
    age(state.path(), &idle.session, 40);
    age(state.path(), &recent.session, 29);

    let kept: Vec<String> = state_files(state.path())
        .into_iter()
        .filter(|n| !n.starts_with(&idle.session))
        .collect();
    assert_eq!(kept.len(), 6, "{kept:?}");
    // An expiry that stopped half-way leaves a record moved aside: it is put back.
    let record = state.path().join(format!("{}.session", recent.session));
    std::fs::rename(&record, record.with_extension("session.expired")).expect("move aside");

    // The sweep runs as the restarted server starts serving: the idle session's files go.
    let restarted = Server::start(root.path(), state.path(), &addr);
    wait_for_files(state.path(), &kept).await;
    // Its id is now unknown: the client is told to start again.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let answer = send(&restarted.addr, "POST", Some(&idle.session), Some(&list)).await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    // A session within the expiry is served again.
    recent.reconnect(&restarted.addr);
    assert_eq!(
        content_text(&recent.resolve("apply").await),
        NOTHING_PENDING
    );
    // One with a preview is kept however old, and its preview applies.
    pending.reconnect(&restarted.addr);
    let applied = pending.resolve("apply").await;
    assert_eq!(content_text(&applied), "Applied 1 replacement in 1 file.");
    assert_eq!(read(root.path(), "a.rs").as_bytes(), NEW_A.as_bytes());
}
