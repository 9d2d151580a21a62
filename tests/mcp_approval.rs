//! `human` approval over MCP: a client that answers elicitation requests decides (accept
//! writes, decline discards, cancel or a malformed answer keeps the action pending); a
//! client without elicitation gets a `resolve` apply that refuses clearly, writes nothing,
//! keeps the action pending, and says how to proceed.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use xcsh::Session;
use xcsh::approval::ApprovalPolicy;
use xcsh::mcp::McpServer;
use xcsh::tools::builtin_suite;

async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
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

/// An MCP client whose user answers elicitation requests from a script, and remembers what
/// it was asked.
struct ScriptedUser {
    answers: std::sync::Mutex<std::collections::VecDeque<ElicitResult>>,
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for ScriptedUser {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .expect("a scripted answer"))
    }

    fn get_info(&self) -> ClientConfig {
        // The `initialize` lifecycle: 2026-07-28 forbids server-to-client requests.
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("scripted-user", "1"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
    let mut result = ElicitResult::new(action);
    result.content = content;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_approval_asks_the_client_user_by_elicitation() {
    const OLD: &str = "fn f() -> R { g().unwrap() }\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.rs");
    std::fs::write(&file, OLD).unwrap();
    let registry = Session::builder()
        .suite(builtin_suite())
        .workspace_root(dir.path())
        .approval(ApprovalPolicy::Human)
        .build_registry()
        .unwrap();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let user = ScriptedUser {
        answers: std::sync::Mutex::new(
            [
                // 1. cancel: no decision, stays pending; 2. accept (the form's content does
                // not matter: the action is the decision): written; 3. decline with words:
                // discarded.
                answer(ElicitationAction::Cancel, None),
                answer(ElicitationAction::Accept, Some(json!({}))),
                answer(
                    ElicitationAction::Decline,
                    Some(json!({"comment": "not in this file"})),
                ),
            ]
            .into(),
        ),
        asked: Arc::clone(&asked),
    };
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(McpServer::new(Arc::clone(&registry)).serve(server_end));
    let client = user.serve(client_end).await.unwrap();
    let edit = json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"});
    let apply = json!({"action": "apply", "reason": "safer error handling"});

    call(&client, "ast_edit", edit.clone()).await;
    let cancelled = call(&client, "resolve", apply.clone()).await;
    assert_eq!(cancelled.is_error, Some(true));
    assert!(
        text(&cancelled).contains("the person gave no answer"),
        "{}",
        text(&cancelled)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OLD);
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert!(
            asked[0].contains("AST Edit: 1 replacement in 1 file"),
            "{}",
            asked[0]
        );
        assert!(
            asked[0].contains("Reason: safer error handling"),
            "{}",
            asked[0]
        );
        assert!(asked[0].contains("g().unwrap() → g()?"), "{}", asked[0]);
    }

    // Still pending: ask again; an accept is a yes, with an empty form.
    let accepted = call(&client, "resolve", apply.clone()).await;
    assert_ne!(accepted.is_error, Some(true), "{}", text(&accepted));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn f() -> R { g()? }\n"
    );

    std::fs::write(&file, OLD).unwrap();
    call(&client, "ast_edit", edit).await;
    let declined = call(&client, "resolve", apply).await;
    assert_eq!(declined.is_error, Some(true));
    let message = text(&declined);
    assert!(
        message.contains("The person declined to apply"),
        "{message}"
    );
    assert!(message.contains("They said: not in this file"), "{message}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), OLD);
    let nothing = call(
        &client,
        "resolve",
        json!({"action": "discard", "reason": "check"}),
    )
    .await;
    assert!(
        text(&nothing).starts_with("No pending action"),
        "{}",
        text(&nothing)
    );
    assert_eq!(asked.lock().unwrap().len(), 3);
    client.cancel().await.unwrap();
}
