//! The MCP server from the Rust side: rmcp's own client against `xcsh::mcp::McpServer` over an
//! in-memory pipe, and raw JSON-RPC against the `xcsh serve` binary (stdout carries the
//! protocol and nothing else). The Python SDK's view is in `tests/interop/`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use xcsh::mcp::McpServer;
use xcsh::session::{CancellationToken, Registry};
use xcsh::tools::builtin_suite;
use xcsh::{Dialect, Session, ToolContext, custom_tool};

/// What the client saw besides responses.
#[derive(Clone, Default)]
struct Seen {
    progress: Arc<Mutex<Vec<f64>>>,
    list_changed: Arc<AtomicBool>,
}

impl ClientHandler for Seen {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.store(true, Ordering::SeqCst);
    }
}

/// Reports progress 1, 2, 3 and returns.
#[custom_tool(read_only)]
struct Count {}

impl Count {
    async fn execute(self, ctx: &ToolContext) -> String {
        for step in 1..=3 {
            ctx.report_progress(f64::from(step), Some(3.0), Some(format!("step {step}")));
        }
        "counted".to_owned()
    }
}

/// Where `wait_forever` leaves its call's cancellation token for the test to look at.
static LAST_TOKEN: Mutex<Option<CancellationToken>> = Mutex::new(None);

/// Waits until cancelled.
#[custom_tool]
struct WaitForever {}

impl WaitForever {
    async fn execute(self, ctx: &ToolContext) -> String {
        *LAST_TOKEN.lock().unwrap() = Some(ctx.cancellation().clone());
        std::future::pending::<()>().await;
        unreachable!()
    }
}

fn registry(root: &std::path::Path) -> Arc<Registry> {
    Session::builder()
        .suite(builtin_suite())
        .custom::<Count>()
        .custom::<WaitForever>()
        .workspace_root(root)
        .build_registry()
        .unwrap()
}

async fn connect(server: McpServer) -> (RunningService<RoleClient, Seen>, Seen) {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve(server_end));
    let seen = Seen::default();
    let client = seen.clone().serve(client_end).await.unwrap();
    (client, seen)
}

async fn call(
    client: &RunningService<RoleClient, Seen>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .peer()
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_previews_sees_the_stack_and_applies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn f() -> R { g().unwrap() }\n").unwrap();
    let registry = registry(dir.path());
    let (client, seen) = connect(McpServer::new(Arc::clone(&registry))).await;

    let tools = client.peer().list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "apply_patch",
            "edit",
            "write_file",
            "undo",
            "count",
            "wait_forever",
            "resolve"
        ]
    );
    let ast_edit = &tools[1];
    assert_eq!(ast_edit.title.as_deref(), Some("AST Edit"));
    assert_eq!(
        ast_edit.input_schema,
        *registry
            .lowered_parameters("ast_edit", Dialect::Mcp)
            .unwrap()
    );
    let hints = ast_edit.annotations.as_ref().unwrap();
    assert_eq!(
        (hints.read_only_hint, hints.destructive_hint),
        (Some(true), Some(false))
    );
    let resolve = tools[8].annotations.as_ref().unwrap();
    assert_eq!(resolve.destructive_hint, Some(true));

    let preview = call(
        &client,
        "ast_edit",
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
    )
    .await;
    assert_eq!(preview.is_error, Some(false), "{}", text(&preview));
    assert!(text(&preview).contains("+fn f() -> R { g()? }"));
    let reminder = preview.content.last().and_then(|c| c.as_text()).unwrap();
    assert!(
        reminder.text.starts_with("<system-reminder>"),
        "{reminder:?}"
    );
    let details = preview.structured_content.as_ref().unwrap();
    assert_eq!(details["totals"]["replacements"], 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn f() -> R { g().unwrap() }\n"
    );

    for _ in 0..100 {
        if seen.list_changed.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        seen.list_changed.load(Ordering::SeqCst),
        "tools/list_changed after the push"
    );
    let tools = client.peer().list_tools(None).await.unwrap().tools;
    let description = tools[8].description.as_deref().unwrap();
    assert!(
        description.contains("#1 AST Edit: 1 replacement in 1 file (from ast_edit)"),
        "{description}"
    );

    let applied = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "ok"}),
    )
    .await;
    assert_eq!(applied.is_error, Some(false), "{}", text(&applied));
    assert_eq!(text(&applied), "Applied 1 replacement in 1 file.");
    assert_eq!(
        applied.structured_content.as_ref().unwrap()["action"],
        "apply"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn f() -> R { g()? }\n"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_error_results_not_protocol_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _) = connect(McpServer::new(registry(dir.path()))).await;

    let bad = call(
        &client,
        "ast_edit",
        json!({"ops": [{"pat": 1, "out": "x"}]}),
    )
    .await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("ops[0].pat: invalid type: integer `1`, expected a string"),
        "{}",
        text(&bad)
    );

    let unknown = call(&client, "ast_edits", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).starts_with("Unknown tool `ast_edits`. Did you mean `ast_edit`?"),
        "{}",
        text(&unknown)
    );

    let empty = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "x"}),
    )
    .await;
    assert_eq!(empty.is_error, Some(true));
    assert_eq!(
        text(&empty),
        "No pending action to resolve. Nothing to apply or discard."
    );
    client.cancel().await.unwrap();
}

/// Pushes a pending action although it does not declare `pending`.
#[custom_tool]
struct PushesUndeclared {}

impl PushesUndeclared {
    async fn execute(self, ctx: &ToolContext) -> Result<String, xcsh::ToolError> {
        ctx.push_pending_action(Undeclared)?;
        Ok("Previewed.".into())
    }
}

#[xcsh::pending(apply, label = "Undeclared: 1 step")]
struct Undeclared;

impl Undeclared {
    async fn apply(&mut self, _reason: &str) -> &'static str {
        "Applied the undeclared step."
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_push_is_resolvable_over_mcp_with_the_strict_gate() {
    let registry = Session::builder()
        .custom::<PushesUndeclared>()
        .custom::<Count>()
        .strict_resolve_gate(true)
        .build_registry()
        .unwrap();
    let (client, seen) = connect(McpServer::new(registry)).await;
    let listed = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(
        listed(client.peer().list_tools(None).await.unwrap().tools),
        ["pushes_undeclared", "count"]
    );

    let preview = call(&client, "pushes_undeclared", json!({})).await;
    assert_eq!(preview.is_error, Some(false), "{}", text(&preview));
    for _ in 0..100 {
        if seen.list_changed.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        seen.list_changed.load(Ordering::SeqCst),
        "tools/list_changed after the push"
    );
    assert_eq!(
        listed(client.peer().list_tools(None).await.unwrap().tools),
        ["pushes_undeclared", "count", "resolve"]
    );
    let refused = call(&client, "count", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).starts_with("Call refused: 1 pending action(s)"),
        "{}",
        text(&refused)
    );

    let applied = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "ok"}),
    )
    .await;
    assert_eq!(applied.is_error, Some(false), "{}", text(&applied));
    assert_eq!(text(&applied), "Applied the undeclared step.");
    assert_eq!(
        listed(client.peer().list_tools(None).await.unwrap().tools),
        ["pushes_undeclared", "count"]
    );
    assert_eq!(text(&call(&client, "count", json!({})).await), "counted");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_connection_has_its_own_pending_stack() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
    let first = McpServer::new(registry(dir.path()));
    let second = first.connection();
    let (a, _) = connect(first).await;
    let (b, _) = connect(second).await;

    let preview = call(
        &a,
        "ast_edit",
        json!({"ops": [{"pat": "print($A)", "out": "log($A)"}]}),
    )
    .await;
    assert_eq!(preview.is_error, Some(false), "{}", text(&preview));
    let other = call(&b, "resolve", json!({"action": "apply", "reason": "x"})).await;
    assert_eq!(
        text(&other),
        "No pending action to resolve. Nothing to apply or discard."
    );
    let own = call(&a, "resolve", json!({"action": "discard", "reason": "x"})).await;
    assert_eq!(own.is_error, Some(false), "{}", text(&own));
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let (client, seen) = connect(McpServer::new(registry(dir.path()))).await;
    // rmcp's client puts a progress token on every request.
    let result = call(&client, "count", json!({})).await;
    assert_eq!(text(&result), "counted");
    // Sent before the answer, but handled by the client on its own tasks: give them a moment.
    for _ in 0..100 {
        if seen.progress.lock().unwrap().last() == Some(&3.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let progress = seen.progress.lock().unwrap().clone();
    assert_eq!(
        progress.last(),
        Some(&3.0),
        "the latest report is always sent: {progress:?}"
    );
    assert!(progress.is_sorted(), "{progress:?}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_request_cancels_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _) = connect(McpServer::new(registry(dir.path()))).await;
    let peer = client.peer().clone();
    // Dropping rmcp's call future sends `notifications/cancelled`.
    let pending = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("wait_forever"))
            .await
    });
    let token = loop {
        if let Some(token) = LAST_TOKEN.lock().unwrap().clone() {
            break token;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(!token.is_cancelled());
    pending.abort();
    tokio::time::timeout(Duration::from_secs(5), token.cancelled())
        .await
        .expect("the client's cancellation reaches the tool's context");
    client.cancel().await.unwrap();
}

/// The real binary, spoken to in raw JSON-RPC lines: every stdout line is a protocol message,
/// even with debug logging on (it goes to stderr).
#[test]
fn serve_writes_only_protocol_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_xcsh"))
        .args(["serve", "--root", dir.path().to_str().unwrap()])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // Kills the server if it is still running after 30 s, so the read below ends and the
    // test fails instead of hanging; stands down once the test has its answers.
    let finished = Arc::new(AtomicBool::new(false));
    {
        let finished = Arc::clone(&finished);
        let id = child.id();
        std::thread::spawn(move || {
            for _ in 0..300 {
                if finished.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = Command::new("kill").arg(id.to_string()).status();
        });
    }
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "resolve", "arguments": {"action": "apply", "reason": "x"}}}),
    ];
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();

    let mut lines = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        lines.push(message);
        // rmcp answers requests concurrently: wait for all three answers, in any order.
        if [1, 2, 3]
            .iter()
            .all(|id| lines.iter().any(|m| m["id"] == *id))
        {
            break;
        }
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    finished.store(true, Ordering::SeqCst);

    let init = lines.iter().find(|m| m["id"] == 1).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "xcsh");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let list = lines.iter().find(|m| m["id"] == 2).unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 7);
    let call = lines.iter().find(|m| m["id"] == 3).unwrap();
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["content"][0]["text"],
        "No pending action to resolve. Nothing to apply or discard."
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("DEBUG"),
        "logs go to stderr"
    );
}
