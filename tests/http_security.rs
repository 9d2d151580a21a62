//! `xcsh serve --http` exposed on purpose: what a client without the token, a web page of
//! another site, a request for a foreign host name, an oversized body and one session too
//! many each get, that an exposed address without a token is refused at start, and that TLS
//! works with a real client and a certificate made here.
//!
//! The clients are a bare HTTP/1.1 one (hyper, as in `reliability_http.rs`), over TCP or over
//! rustls, and raw bytes on a socket where the exact bytes sent matter (a body that never
//! ends). Every connection goes to this machine's loopback address, whatever the server binds.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

mod common;
use common::first_line_then_drain;

const TOKEN: &str = "c2VjcmV0LXRva2VuLWZvci10aGUtdGVzdHM=";
const PROTOCOL: &str = "2025-11-25";

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "http-security", "version": "0"}}})
    .to_string()
}

struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, whatever address the server bound.
    addr: String,
    /// The line the server printed first.
    line: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn xcsh(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xcsh"));
    command
        .arg("serve")
        .args(args)
        .arg("--root")
        .arg(root)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn start(root: &Path, args: &[&str]) -> Server {
    let mut child = xcsh(root, args).spawn().expect("xcsh serve --http starts");
    let stderr = child.stderr.take().expect("stderr");
    // Owned first, so that a failed check below still kills the server.
    let mut server = Server {
        child,
        addr: String::new(),
        line: first_line_then_drain(stderr),
    };
    let port = server
        .line
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|authority| authority.rsplit(':').next())
        .unwrap_or_else(|| panic!("no address in {:?}", server.line))
        .to_owned();
    server.addr = format!("127.0.0.1:{port}");
    server
}

/// Runs a `serve` that must refuse to start: its exit status and what it said.
fn refused(root: &Path, args: &[&str]) -> (ExitStatus, String) {
    let mut child = xcsh(root, args).spawn().expect("xcsh serve starts");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr is text");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status, stderr);
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("`serve {args:?}` did not stop: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn token_file(dir: &Path, token: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("token");
    std::fs::write(&path, format!("{token}\n")).expect("write the token");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path.to_str().expect("a UTF-8 path").to_owned()
}

struct Answer {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    /// What a refusal says: a JSON-RPC error's message (the form an MCP client's POST gets),
    /// or the plain-text body.
    fn message(&self) -> String {
        if self.header("content-type") != "application/json" {
            return self.body.clone();
        }
        let value: serde_json::Value = serde_json::from_str(&self.body).expect("JSON");
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
        assert_eq!(value["id"], serde_json::Value::Null, "{value}");
        assert_eq!(value["error"]["data"]["httpStatus"], self.status, "{value}");
        value["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no error message in {value}"))
            .to_owned()
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A request: method, extra headers (`host` defaults to the address, `accept` to an MCP
/// client's), body.
struct Ask<'a> {
    method: &'a str,
    headers: Vec<(&'a str, String)>,
    body: String,
}

impl<'a> Ask<'a> {
    fn post(body: String) -> Self {
        Ask {
            method: "POST",
            headers: Vec::new(),
            body,
        }
    }

    fn method(method: &'a str) -> Self {
        Ask {
            method,
            headers: Vec::new(),
            body: String::new(),
        }
    }

    fn header(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    fn bearer(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    fn request(self, addr: &str) -> hyper::Request<Full<Bytes>> {
        let mut request = hyper::Request::builder()
            .method(self.method)
            .uri("/mcp")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL);
        for (name, default) in [
            ("host", addr),
            ("accept", "application/json, text/event-stream"),
        ] {
            if !self.headers.iter().any(|(given, _)| *given == name) {
                request = request.header(name, default);
            }
        }
        for (name, value) in self.headers {
            request = request.header(name, value);
        }
        request
            .body(Full::new(Bytes::from(self.body)))
            .expect("a request")
    }

    async fn send(self, addr: &str) -> Answer {
        let stream = TcpStream::connect(addr).await.expect("connect");
        exchange(hyper_util::rt::TokioIo::new(stream), self.request(addr)).await
    }

    async fn send_tls(self, addr: &str, connector: &tokio_rustls::TlsConnector) -> Answer {
        let stream = TcpStream::connect(addr).await.expect("connect");
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
        let stream = connector
            .connect(name, stream)
            .await
            .expect("TLS handshake");
        exchange(hyper_util::rt::TokioIo::new(stream), self.request(addr)).await
    }
}

async fn exchange<I>(io: I, request: hyper::Request<Full<Bytes>>) -> Answer
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let response = sender.send_request(request).await.expect("a response");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Writes `parts` one after the other (a pause between them), then reads the answer until the
/// server closes the connection.
async fn raw(addr: &str, parts: &[Vec<u8>]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    for part in parts {
        stream.write_all(part).await.expect("write");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

fn session_of(answer: &Answer) -> String {
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.header("mcp-session-id");
    assert!(!id.is_empty(), "no Mcp-Session-Id");
    id.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_need_the_right_bearer_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = token_file(dir.path(), TOKEN);
    let server = start(
        dir.path(),
        &["--http", "127.0.0.1:0", "--auth-token-file", &file],
    );
    let addr = server.addr.as_str();
    assert!(
        server.line.contains("needs its bearer token") && !server.line.contains(TOKEN),
        "{}",
        server.line
    );

    let missing = Ask::post(initialize()).send(addr).await;
    assert_eq!(missing.status, 401, "{}", missing.body);
    assert_eq!(missing.header("www-authenticate"), "Bearer realm=\"xcsh\"");
    assert!(
        missing
            .message()
            .contains("needs `Authorization: Bearer <token>`"),
        "{}",
        missing.body
    );
    assert!(missing.header("mcp-session-id").is_empty());

    for wrong in [
        "c2VjcmV0LXRva2VuLWZvci10aGUtdGVzdHM",
        "c2VjcmV0LXRva2VuLWZvci10aGUtdGVzdHM==",
        "x",
    ] {
        let answer = Ask::post(initialize()).bearer(wrong).send(addr).await;
        assert_eq!(answer.status, 401, "{wrong}: {}", answer.body);
        assert_eq!(
            answer.header("www-authenticate"),
            "Bearer realm=\"xcsh\", error=\"invalid_token\""
        );
        assert!(answer.body.contains("not this server's"), "{}", answer.body);
    }
    // Another scheme is no bearer token.
    let basic = Ask::post(initialize())
        .header("authorization", format!("Basic {TOKEN}"))
        .send(addr)
        .await;
    assert_eq!(basic.status, 401);
    assert_eq!(basic.header("www-authenticate"), "Bearer realm=\"xcsh\"");

    // An MCP client's POST gets the refusal as a JSON-RPC error, which clients show; anything
    // else (curl, a GET) gets plain text.
    assert_eq!(missing.header("content-type"), "application/json");
    let curl = Ask::post(initialize())
        .header("accept", "*/*")
        .send(addr)
        .await;
    assert_eq!(curl.status, 401);
    assert_eq!(curl.header("content-type"), "text/plain; charset=utf-8");
    assert_eq!(curl.message(), missing.message());

    let right = Ask::post(initialize()).bearer(TOKEN).send(addr).await;
    let session = session_of(&right);
    assert!(right.body.contains("\"serverInfo\""), "{}", right.body);
    // The scheme is case-insensitive (RFC 7235).
    let lower = Ask::post(initialize())
        .header("authorization", format!("bearer {TOKEN}"))
        .send(addr)
        .await;
    session_of(&lower);

    // GET and DELETE need it too: without it the session is neither listened to nor ended.
    for method in ["GET", "DELETE"] {
        let answer = Ask::method(method)
            .header("mcp-session-id", session.clone())
            .send(addr)
            .await;
        assert_eq!(answer.status, 401, "{method}: {}", answer.body);
    }
    let listed = Ask::post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}).to_string(),
    )
    .bearer(TOKEN)
    .header("mcp-session-id", session.clone())
    .send(addr)
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(listed.body.contains("ast_edit"), "{}", listed.body);
    let ended = Ask::method("DELETE")
        .bearer(TOKEN)
        .header("mcp-session-id", session)
        .send(addr)
        .await;
    assert!((200..300).contains(&ended.status), "{}", ended.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_of_another_origin_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--allow-origin",
            "https://app.example.com",
        ],
    );
    let addr = server.addr.as_str();
    for foreign in [
        "https://evil.example",
        "http://app.example.com",
        "https://app.example.com:8443",
        "null",
        "not an origin",
    ] {
        let answer = Ask::post(initialize())
            .header("origin", foreign)
            .send(addr)
            .await;
        assert_eq!(answer.status, 403, "{foreign}: {}", answer.body);
        assert!(
            answer
                .body
                .contains(&format!("`{foreign}` are not allowed"))
                && answer.body.contains(&format!("--allow-origin {foreign}")),
            "{}",
            answer.body
        );
        assert!(answer.header("mcp-session-id").is_empty());
    }
    for allowed in [
        "http://localhost:3000",
        "https://127.0.0.1",
        "http://[::1]:8080",
        "https://app.example.com",
        "https://app.example.com:443",
    ] {
        let answer = Ask::post(initialize())
            .header("origin", allowed)
            .send(addr)
            .await;
        session_of(&answer);
    }
    // No Origin at all: a client that is not a browser.
    session_of(&Ask::post(initialize()).send(addr).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_names_are_checked_and_ip_addresses_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--allow-host",
            "mcp.example.com",
            "--allow-host",
            "pinned.example.com:8443",
        ],
    );
    let addr = server.addr.as_str();
    for foreign in [
        "evil.example",
        "rebind.evil.example:8931",
        "pinned.example.com:8931",
        "localhost.evil.example",
    ] {
        let answer = Ask::post(initialize())
            .header("host", foreign)
            .send(addr)
            .await;
        assert_eq!(answer.status, 403, "{foreign}: {}", answer.body);
        let message = answer.message();
        assert!(
            message.contains(&format!("host name `{foreign}`")) && message.contains("--allow-host"),
            "{}",
            answer.body
        );
    }
    for allowed in [
        "localhost:1234",
        "127.0.0.1",
        "[::1]:9",
        "192.0.2.10:8931",
        "MCP.example.com",
        "mcp.example.com:443",
        "pinned.example.com:8443",
    ] {
        let answer = Ask::post(initialize())
            .header("host", allowed)
            .send(addr)
            .await;
        assert_eq!(answer.status, 200, "{allowed}: {}", answer.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_get_413_however_they_are_sent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(
        dir.path(),
        &["--http", "127.0.0.1:0", "--max-body-bytes", "1024"],
    );
    let addr = server.addr.as_str();
    let head = |extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{extra}\r\n"
        )
        .into_bytes()
    };

    // By its Content-Length: answered before a byte of the body is sent.
    let declared = raw(addr, &[head("content-length: 5000\r\n")]).await;
    assert!(declared.starts_with("HTTP/1.1 413"), "{declared:.300}");
    assert!(
        declared.contains("is 5000 bytes, over this server's limit of 1024 bytes")
            && declared.contains("--max-body-bytes"),
        "{declared}"
    );

    // Chunked, with no length said: refused once 1200 bytes have come, the end never sent.
    let chunk = |n: usize| format!("{n:x}\r\n{}\r\n", " ".repeat(n)).into_bytes();
    let streamed = raw(
        addr,
        &[
            head("transfer-encoding: chunked\r\n"),
            chunk(600),
            chunk(600),
        ],
    )
    .await;
    assert!(streamed.starts_with("HTTP/1.1 413"), "{streamed:.300}");
    assert!(
        streamed.contains("streams past this server's limit of 1024 bytes"),
        "{streamed}"
    );

    // Just under the limit is served, chunked or not.
    let padded = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "p".repeat(850), "version": "0"}}})
    .to_string();
    assert!(
        padded.len() > 900 && padded.len() <= 1024,
        "{}",
        padded.len()
    );
    session_of(&Ask::post(padded.clone()).send(addr).await);
    let mut chunked = head("transfer-encoding: chunked\r\n");
    chunked.extend(format!("{:x}\r\n{padded}\r\n0\r\n\r\n", padded.len()).into_bytes());
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(&chunked).await.expect("write");
    let mut answer = vec![0; 4096];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut answer))
        .await
        .expect("an answer")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

async fn the_session_limit_holds(state: Option<&Path>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["--http", "127.0.0.1:0", "--max-sessions", "2"];
    let state_arg;
    if let Some(state) = state {
        state_arg = state.to_str().expect("UTF-8").to_owned();
        args.extend(["--state", &state_arg]);
    }
    let server = start(dir.path(), &args);
    let addr = server.addr.as_str();
    let first = session_of(&Ask::post(initialize()).send(addr).await);
    let _second = session_of(&Ask::post(initialize()).send(addr).await);

    let refused = Ask::post(initialize()).send(addr).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    let message = refused.message();
    assert!(
        message
            .starts_with("Service Unavailable: this server already serves 2 live MCP session(s)")
            && message.contains("--max-sessions"),
        "{}",
        refused.body
    );
    assert!(refused.header("mcp-session-id").is_empty());
    // The sessions that are live keep working.
    let listed = Ask::post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}).to_string(),
    )
    .header("mcp-session-id", first.clone())
    .send(addr)
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);

    // One ends: its place is free again, once.
    let ended = Ask::method("DELETE")
        .header("mcp-session-id", first)
        .send(addr)
        .await;
    assert!((200..300).contains(&ended.status), "{}", ended.body);
    session_of(&Ask::post(initialize()).send(addr).await);
    assert_eq!(Ask::post(initialize()).send(addr).await.status, 503);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initialize_beyond_the_session_limit_is_refused() {
    the_session_limit_holds(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_limit_holds_under_state_and_for_restored_sessions() {
    let state = tempfile::tempdir().expect("tempdir");
    the_session_limit_holds(Some(state.path())).await;

    // A session restored after a restart takes a place too.
    let dir = tempfile::tempdir().expect("tempdir");
    let state_dir = state.path().join("restart");
    let state_arg = state_dir.to_str().expect("UTF-8");
    let args = [
        "--http",
        "127.0.0.1:0",
        "--max-sessions",
        "1",
        "--state",
        state_arg,
    ];
    let server = start(dir.path(), &args);
    let old = session_of(&Ask::post(initialize()).send(&server.addr).await);
    drop(server);
    let server = start(dir.path(), &args);
    session_of(&Ask::post(initialize()).send(&server.addr).await);
    let restored = Ask::post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}).to_string(),
    )
    .header("mcp-session-id", old)
    .send(&server.addr)
    .await;
    assert_eq!(restored.status, 503, "{}", restored.body);
    assert!(
        restored.message().contains("1 live MCP session(s)"),
        "{}",
        restored.body
    );
}

#[test]
fn an_exposed_address_without_a_token_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let (status, stderr) = refused(dir.path(), &["--http", addr]);
        assert_eq!(status.code(), Some(2), "{addr}: {stderr}");
        assert!(
            stderr.contains("without a bearer token")
                && stderr.contains("--auth-token-file FILE")
                && stderr.contains("head -c 32 /dev/urandom | base64")
                && stderr.contains("127.0.0.1"),
            "{stderr}"
        );
        assert!(!stderr.contains("Streamable HTTP at"), "{stderr}");
    }
    // A token that is no token is refused as well, saying how to make one.
    for bad in ["", "short-token"] {
        let file = token_file(dir.path(), bad);
        let (status, stderr) = refused(
            dir.path(),
            &["--http", "0.0.0.0:0", "--auth-token-file", &file],
        );
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--auth-token-file") && stderr.contains("/dev/urandom"),
            "{stderr}"
        );
    }
    let (status, stderr) = refused(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--auth-token-file",
            &dir.path().join("missing").to_string_lossy(),
        ],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read the token file"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exposed_address_with_a_token_serves_clients_that_have_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = token_file(dir.path(), TOKEN);
    let server = start(
        dir.path(),
        &["--http", "0.0.0.0:0", "--auth-token-file", &file],
    );
    assert!(server.line.contains("http://0.0.0.0:"), "{}", server.line);
    let addr = server.addr.as_str();
    assert_eq!(Ask::post(initialize()).send(addr).await.status, 401);
    // A remote client names the server by its address: an IP address is a host served.
    let remote = Ask::post(initialize())
        .bearer(TOKEN)
        .header("host", "192.0.2.10:8931")
        .send(addr)
        .await;
    session_of(&remote);
}

#[tokio::test]
async fn the_library_refuses_an_exposed_listener_without_a_token() {
    use xcsh::mcp::{HttpOptions, McpServer};
    let registry = xcsh::Session::builder()
        .build_registry()
        .expect("a registry");
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind");
    let shutdown = tokio_util::sync::CancellationToken::new();
    let err = McpServer::new(Arc::clone(&registry))
        .serve_http(listener, shutdown.clone())
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("without a bearer token"), "{err}");

    let state = tempfile::tempdir().expect("tempdir");
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind");
    let err = McpServer::new(Arc::clone(&registry))
        .serve_http_with_state(listener, &state.path().join("kept"), shutdown.clone())
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(
        !state.path().join("kept").exists(),
        "refused, yet the state directory was made"
    );

    // With a token the same listener serves (until shut down).
    let options = HttpOptions::new().auth_token(TOKEN).expect("a token");
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let serving = tokio::spawn(
        McpServer::new(registry)
            .with_http_options(options)
            .serve_http(listener, shutdown.clone()),
    );
    let answer = Ask::post(initialize())
        .bearer(TOKEN)
        .send(&format!("127.0.0.1:{port}"))
        .await;
    session_of(&answer);
    shutdown.cancel();
    serving.await.expect("joined").expect("served");
}

/// A CA, and a certificate for `localhost` and 127.0.0.1 that it signed, in PEM files.
struct Certificates {
    ca: rustls::pki_types::CertificateDer<'static>,
    cert: String,
    key: String,
}

fn certificates(dir: &Path) -> Certificates {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "xcsh test CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key"))
        .expect("a CA");
    let key = KeyPair::generate().expect("a key");
    let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("params")
        .signed_by(&key, &ca)
        .expect("a certificate");
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).expect("write the certificate");
    std::fs::write(&key_path, key.serialize_pem()).expect("write the key");
    Certificates {
        ca: ca.der().clone(),
        cert: cert_path.to_string_lossy().into_owned(),
        key: key_path.to_string_lossy().into_owned(),
    }
}

fn connector(
    trusted: Option<&rustls::pki_types::CertificateDer<'static>>,
) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(ca) = trusted {
        roots.add(ca.clone()).expect("a root");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_a_client_that_trusts_the_certificate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let certs = certificates(dir.path());
    let file = token_file(dir.path(), TOKEN);
    let server = start(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &certs.cert,
            "--tls-key",
            &certs.key,
            "--auth-token-file",
            &file,
        ],
    );
    assert!(
        server.line.contains("https://127.0.0.1:"),
        "{}",
        server.line
    );
    let addr = server.addr.as_str();
    let trusting = connector(Some(&certs.ca));

    let answer = Ask::post(initialize())
        .bearer(TOKEN)
        .send_tls(addr, &trusting)
        .await;
    let session = session_of(&answer);
    assert!(answer.body.contains("\"serverInfo\""), "{}", answer.body);
    let called = Ask::post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ast_grep", "arguments": {"pat": "fn $F() {}", "lang": "rust"}}})
        .to_string(),
    )
    .bearer(TOKEN)
    .header("mcp-session-id", session)
    .send_tls(addr, &trusting)
    .await;
    assert_eq!(called.status, 200, "{}", called.body);
    assert!(called.body.contains("\"result\""), "{}", called.body);
    // The token is still checked inside TLS.
    let anonymous = Ask::post(initialize()).send_tls(addr, &trusting).await;
    assert_eq!(anonymous.status, 401);

    // A client that does not trust the certificate gets no connection.
    let stream = TcpStream::connect(addr).await.expect("connect");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    let untrusted = connector(None).connect(name, stream).await;
    let err = untrusted.map(|_| ()).expect_err("an unknown issuer");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");

    // Plain HTTP on the TLS port gets no HTTP answer.
    let plain = raw(
        addr,
        &[format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-length: 0\r\n\r\n").into_bytes()],
    )
    .await;
    assert!(!plain.starts_with("HTTP/1.1"), "{plain:.200}");

    // And the server still serves after both.
    let again = Ask::post(initialize())
        .bearer(TOKEN)
        .send_tls(addr, &trusting)
        .await;
    session_of(&again);
}

#[test]
fn tls_files_that_cannot_serve_are_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let certs = certificates(dir.path());
    let other = tempfile::tempdir().expect("tempdir");
    let others = certificates(other.path());
    // The key of another certificate.
    let (status, stderr) = refused(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &certs.cert,
            "--tls-key",
            &others.key,
        ],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--tls-cert/--tls-key")
            && stderr.contains("the key is the certificate's own"),
        "{stderr}"
    );
    // The certificate given as the key, and the other way round.
    let (status, stderr) = refused(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &certs.key,
            "--tls-key",
            &certs.cert,
        ],
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds no certificate"), "{stderr}");
}
