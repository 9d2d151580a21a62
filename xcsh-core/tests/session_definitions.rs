//! Sessions lower every tool's schema for each provider once, at build time.

use serde_json::json;
use xcsh_core::dialect::{Provider, validate};
use xcsh_core::{
    AgentToolResult, CallOptions, CustomTool, Dialect, Session, ToolContext, ToolError,
};

/// A tree of notes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Node {
    /// The note.
    text: String,
    /// Child notes.
    children: Vec<Node>,
}

/// Stores a tree of notes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct StoreTree {
    /// The root of the tree.
    tree: Node,
}

impl CustomTool for StoreTree {
    const NAME: &'static str = "store_tree";
    const DESCRIPTION: &'static str = "Stores a tree of notes.";
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(format!(
            "stored {} with {} children",
            self.tree.text,
            self.tree.children.len()
        )
        .into())
    }
}

/// Searches with an optional limit.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
struct Search {
    /// What to look for.
    query: String,
    /// At most this many results.
    #[serde(default)]
    limit: Option<u32>,
    /// Case sensitivity.
    #[serde(default)]
    case_sensitive: bool,
}

impl CustomTool for Search {
    const NAME: &'static str = "search";
    const DESCRIPTION: &'static str = "Searches.";
    const PUSHES_PENDING_ACTIONS: bool = true;
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(format!(
            "query={} limit={:?} case_sensitive={}",
            self.query, self.limit, self.case_sensitive
        )
        .into())
    }
}

#[test]
fn a_type_a_dialect_cannot_express_fails_the_build_naming_tool_field_and_dialect() {
    let error = Session::builder()
        .custom::<StoreTree>()
        .build()
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("store_tree"), "{text}");
    assert!(text.contains("gemini"), "{text}");
    assert!(text.contains("children"), "{text}");
    // Leaving the dialect out accepts the type.
    let session = Session::builder()
        .custom::<StoreTree>()
        .dialects([Dialect::Anthropic, Dialect::Mcp])
        .build()
        .unwrap();
    assert!(session.definitions(Dialect::Anthropic).is_ok());
    let not_built = session.definitions(Dialect::Gemini).unwrap_err();
    assert_eq!(
        not_built.to_string(),
        "the session was not built for the gemini dialect; add it with `SessionBuilder::dialects`"
    );
}

#[test]
fn definitions_for_every_dialect_include_resolve_and_pass_the_validators() {
    let session = Session::builder().custom::<Search>().build().unwrap();
    for dialect in Dialect::ALL {
        let defs = session.definitions(dialect).unwrap();
        assert_eq!(defs.len(), 2, "{dialect}: search and resolve");
        for def in defs {
            assert_eq!(
                validate::tool_definition(dialect, def),
                vec![],
                "{dialect}: {def:#}"
            );
        }
        let text = serde_json::to_string(defs).unwrap();
        assert!(text.contains("\"resolve\""), "{dialect}");
    }
    let anthropic = session.definitions(Dialect::Anthropic).unwrap();
    assert_eq!(
        anthropic[1]["input_schema"]["required"],
        json!(["action", "reason"])
    );
    let mcp = session.definitions(Dialect::Mcp).unwrap();
    assert_eq!(mcp[1]["annotations"]["destructiveHint"], json!(true));
    assert_eq!(mcp[1]["title"], json!("Resolve"));
    // The definitions are computed once: the same allocation every time.
    assert!(std::ptr::eq(
        session.definitions(Dialect::Gemini).unwrap().as_ptr(),
        session.definitions(Dialect::Gemini).unwrap().as_ptr()
    ));
}

#[tokio::test]
async fn strict_mode_nulls_decode_like_omitted_fields() {
    let session = Session::builder().custom::<Search>().build().unwrap();
    let plain = session.call("search", json!({"query": "x"})).await;
    let strict = session
        .call_with(
            "search",
            json!({"query": "x", "limit": null, "case_sensitive": null}),
            CallOptions {
                dialect: Some(Dialect::OpenAiChat),
                ..Default::default()
            },
        )
        .await;
    assert!(!strict.is_error(), "{}", strict.text_content());
    assert_eq!(strict.text_content(), plain.text_content());
}

#[tokio::test]
async fn a_provider_that_refuses_forced_choice_gets_the_reminder() {
    let session = Session::builder().custom::<Search>().build().unwrap();
    struct Nop;
    impl xcsh_core::PendingAction for Nop {
        fn label(&self) -> String {
            "Nop: x".into()
        }
        async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
            Ok(().into())
        }
    }
    session.pending().push(Nop);
    let thinking = Provider::new(Dialect::Anthropic).without_forced_choice();
    assert_eq!(session.tool_choice(thinking), None);
    assert_eq!(
        session.resolve_bias(thinking),
        Some(xcsh_core::ResolveBias::Reminder(
            xcsh_core::RESOLVE_REMINDER
        ))
    );
    assert!(session.tool_choice(Dialect::Anthropic).is_some());
}
