//! `human` approval over MCP without elicitation: `resolve` apply refuses clearly, writes
//! nothing, keeps the action pending, and says how to proceed.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use xcsh::Session;
use xcsh::approval::ApprovalPolicy;
use xcsh::mcp::McpServer;
use xcsh::tools::builtin_suite;

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
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
async fn human_approval_without_elicitation_refuses_and_keeps_the_action() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.rs");
    std::fs::write(&file, "fn f() -> R { g().unwrap() }\n").unwrap();
    let registry = Session::builder()
        .suite(builtin_suite())
        .workspace_root(dir.path())
        .approval(ApprovalPolicy::Human)
        .build_registry()
        .unwrap();
    let server = McpServer::new(Arc::clone(&registry));
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(server.serve(server_end));
    let client = ().serve(client_end).await.unwrap();

    let preview = call(
        &client,
        "ast_edit",
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
    )
    .await;
    assert_ne!(preview.is_error, Some(true), "{}", text(&preview));
    let refused = call(
        &client,
        "resolve",
        json!({"action": "apply", "reason": "looks right"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let message = text(&refused);
    assert!(message.starts_with("Not approved: "), "{message}");
    assert!(message.contains("no one to ask"), "{message}");
    assert!(message.contains("still pending"), "{message}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn f() -> R { g().unwrap() }\n"
    );
    // Discarding is always possible.
    let discarded = call(
        &client,
        "resolve",
        json!({"action": "discard", "reason": "not approved"}),
    )
    .await;
    assert_ne!(discarded.is_error, Some(true), "{}", text(&discarded));
    client.cancel().await.unwrap();
}
