//! Many MCP sessions at once against one `xcsh serve --http`: each session previews and
//! resolves edits of its own files, concurrently with 59 others, and must only ever see and
//! resolve its own pending actions — in its own LIFO order, none lost, none applied twice or
//! by someone else.
//!
//! The client is a bare HTTP/1.1 one (hyper), speaking Streamable HTTP by hand: `initialize`
//! gives an `Mcp-Session-Id`, every later request carries it, answers come as JSON or as
//! server-sent events.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::net::TcpStream;

mod common;
use common::{content_text, first_line_then_drain};

const SESSIONS: usize = 60;
const ROUNDS: usize = 2;
const PROTOCOL: &str = "2025-11-25";

fn old(name: &str) -> String {
    format!("fn {name}() -> R {{\n    let v = load_{name}().unwrap();\n    Ok(v)\n}}\n")
}

fn new(name: &str) -> String {
    format!("fn {name}() -> R {{\n    let v = load_{name}()?;\n    Ok(v)\n}}\n")
}

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(root: &std::path::Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xcsh"))
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(root)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xcsh serve --http starts");
    let line = first_line_then_drain(child.stderr.take().expect("stderr"));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    Server { child, addr }
}

/// One MCP session over Streamable HTTP.
struct Client {
    addr: Arc<str>,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    async fn post(&mut self, body: Value) -> (Option<String>, Vec<Value>) {
        let stream = TcpStream::connect(&*self.addr).await.expect("connect");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util_io(stream))
            .await
            .expect("HTTP handshake");
        tokio::spawn(connection);
        let mut request = hyper::Request::post("/mcp")
            .header("host", &*self.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request");
        let response = sender.send_request(request).await.expect("a response");
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
        let text = String::from_utf8_lossy(&bytes);
        assert!(status.is_success(), "HTTP {status} for {body}: {text:.500}");
        (session, messages(&text))
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let (_, messages) = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        messages
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} #{id}"))
    }

    async fn connect(addr: Arc<str>) -> Client {
        let mut client = Client {
            addr,
            session: None,
            next_id: 1,
        };
        let (session, messages) = client
            .post(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL, "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "0"}}}),
            )
            .await;
        assert!(
            messages
                .iter()
                .any(|m| m["result"]["serverInfo"]["name"] == "xcsh"),
            "{messages:?}"
        );
        client.session = Some(session.expect("an Mcp-Session-Id"));
        client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert!(answer.get("result").is_some(), "{tool}: {answer}");
        answer["result"].clone()
    }
}

fn hyper_util_io(stream: TcpStream) -> hyper_util::rt::TokioIo<TcpStream> {
    hyper_util::rt::TokioIo::new(stream)
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

/// Every `x123.rs`-style file name a result's details mention.
fn files_named(value: &Value) -> Vec<String> {
    let s = value.to_string();
    let mut names = Vec::new();
    for (i, _) in s.match_indices(".rs") {
        let start = s[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        names.push(s[start..i + 3].to_owned());
    }
    names.sort();
    names.dedup();
    names
}

fn edit(path: &str, name: &str) -> Value {
    json!({"ops": [{"pat": format!("load_{name}().unwrap()"), "out": format!("load_{name}()?")}],
           "path": path, "lang": "rust"})
}

/// One session's work: two previews, apply the top (its second), discard the next (its
/// first), preview the first again and apply it, then nothing is left — each step checked.
async fn session_work(addr: Arc<str>, index: usize, root: Arc<std::path::PathBuf>) {
    let mut client = Client::connect(addr).await;
    for round in 0..ROUNDS {
        let (first, second) = (format!("a{index}r{round}"), format!("b{index}r{round}"));
        let (first_path, second_path) = (format!("src/{first}.rs"), format!("src/{second}.rs"));
        let mine = [format!("{first}.rs"), format!("{second}.rs")];
        let what = format!("session {index} round {round}");

        for (path, name) in [(&first_path, &first), (&second_path, &second)] {
            let preview = client.call("ast_edit", edit(path, name)).await;
            assert!(
                content_text(&preview).contains("AST Edit preview: 1 replacement in 1 file"),
                "{what}: {}",
                content_text(&preview)
            );
        }
        // Its own stack, as `resolve`'s description lists it: exactly two entries.
        let listed = client.request("tools/list", json!({})).await;
        let resolve = listed["result"]["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|t| t["name"] == "resolve"))
            .cloned()
            .unwrap_or_else(|| panic!("{what}: no resolve in {listed}"));
        let description = resolve["description"].as_str().unwrap_or_default();
        assert_eq!(
            description
                .matches("AST Edit: 1 replacement in 1 file")
                .count(),
            2,
            "{what}: {description}"
        );

        let applied = client
            .call("resolve", json!({"action": "apply", "reason": "mine"}))
            .await;
        assert_eq!(
            content_text(&applied),
            "Applied 1 replacement in 1 file.",
            "{what}"
        );
        assert_eq!(
            files_named(&applied["structuredContent"]),
            vec![mine[1].clone()],
            "{what}: applied someone else's action: {applied}"
        );
        let discarded = client
            .call("resolve", json!({"action": "discard", "reason": "later"}))
            .await;
        assert!(
            content_text(&discarded).starts_with("Discarded: AST Edit: 1 replacement in 1 file."),
            "{what}: {}",
            content_text(&discarded)
        );
        assert_eq!(
            files_named(&discarded["structuredContent"]),
            vec![mine[0].clone()],
            "{what}: discarded someone else's action"
        );
        let read = |name: &str| {
            std::fs::read_to_string(root.join("src").join(format!("{name}.rs"))).expect("read")
        };
        assert_eq!(read(&second), new(&second), "{what}");
        assert_eq!(
            read(&first),
            old(&first),
            "{what}: a discarded edit was written"
        );

        client.call("ast_edit", edit(&first_path, &first)).await;
        let applied = client
            .call("resolve", json!({"action": "apply", "reason": "now"}))
            .await;
        assert_eq!(
            content_text(&applied),
            "Applied 1 replacement in 1 file.",
            "{what}"
        );
        assert_eq!(read(&first), new(&first), "{what}");
        let empty = client
            .call("resolve", json!({"action": "apply", "reason": "nothing"}))
            .await;
        assert_eq!(
            content_text(&empty),
            "No pending action to resolve. Nothing to apply or discard.",
            "{what}: another session's action reached this one"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_concurrent_sessions_each_resolve_only_their_own_actions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    std::fs::create_dir(&src).expect("mkdir");
    for index in 0..SESSIONS {
        for round in 0..ROUNDS {
            for side in ["a", "b"] {
                let name = format!("{side}{index}r{round}");
                std::fs::write(src.join(format!("{name}.rs")), old(&name)).expect("write");
            }
        }
    }
    let server = start_server(dir.path());
    let addr: Arc<str> = Arc::from(server.addr.as_str());
    let root = Arc::new(dir.path().to_path_buf());
    let started = Instant::now();
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|index| tokio::spawn(session_work(Arc::clone(&addr), index, Arc::clone(&root))))
        .collect();
    let mut failures = Vec::new();
    for (index, session) in sessions.into_iter().enumerate() {
        match tokio::time::timeout(Duration::from_secs(300), session).await {
            Ok(Ok(())) => {}
            Ok(Err(join)) => failures.push(format!("session {index}: {join}")),
            Err(_) => failures.push(format!("session {index}: timed out")),
        }
    }
    eprintln!(
        "{SESSIONS} sessions × {ROUNDS} rounds (~{} requests) in {:?}",
        SESSIONS * ROUNDS * 9 + SESSIONS * 2,
        started.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for index in 0..SESSIONS {
        for round in 0..ROUNDS {
            for side in ["a", "b"] {
                let name = format!("{side}{index}r{round}");
                assert_eq!(
                    std::fs::read_to_string(src.join(format!("{name}.rs"))).expect("read"),
                    new(&name)
                );
            }
        }
    }
    drop(server);
}
