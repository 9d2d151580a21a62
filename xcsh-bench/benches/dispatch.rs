//! In-process micro-benchmarks (divan): a trivial tool through `Session::call` against the
//! same tool through rmcp's tool router, the preview → `resolve` apply round trip, schema
//! retrieval after the first call — which must not allocate (checked before the benchmarks
//! run; the process fails if it does) — and a turn of the agent loop per provider against
//! the bare calls it makes (what `Session::turn` adds: reading the response, writing the
//! answer).
//!
//! `cargo bench -p xcsh-bench --bench dispatch` (divan's options after `--`, e.g.
//! `-- --sample-count 50`). The allocation counts in the table come from divan's
//! `AllocProfiler`, wrapped by our own per-thread counter.

use std::hint::black_box;

use divan::{AllocProfiler, Bencher};
use rmcp::ServerHandler as _;
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use xcsh::{CustomTool, Dialect};
use xcsh_bench::{CountingAlloc, allocations_in};

#[path = "fixtures/mod.rs"]
mod fixtures;

use fixtures::{Add, RmcpDefaultServer, RmcpServer};

#[global_allocator]
static ALLOC: CountingAlloc<AllocProfiler> = CountingAlloc::new(AllocProfiler::system());

fn main() {
    schema_retrieval_is_allocation_free();
    divan::main();
}

/// A single-threaded runtime: both contestants are polled the same way, on this thread.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn add_args() -> Value {
    json!({"a": 1, "b": 2})
}

/// One call of the trivial tool.
mod call {
    use super::*;
    use rmcp::model::CallToolRequestParams;

    #[divan::bench]
    fn xcsh_session_call(bencher: Bencher) {
        let rt = runtime();
        let session = fixtures::xcsh_session();
        let args = add_args();
        assert_eq!(
            rt.block_on(session.call("add", args.clone()))
                .text_content(),
            "3"
        );
        bencher.bench_local(|| rt.block_on(session.call("add", args.clone())));
    }

    #[divan::bench]
    fn rmcp_router_call(bencher: Bencher) {
        let rt = runtime();
        let _enter = rt.enter();
        let server = RmcpServer::new();
        let (peer, _guard) = fixtures::rmcp_peer(server.clone());
        let args = fixtures::rmcp_arguments();
        let first = rt.block_on(fixtures::rmcp_router_call(
            &server,
            &args,
            fixtures::request_context(&peer, 0),
        ));
        assert!(fixtures::rmcp_says_three(&first));
        bencher.bench_local(|| {
            rt.block_on(fixtures::rmcp_router_call(
                &server,
                &args,
                fixtures::request_context(&peer, 1),
            ))
        });
    }

    /// Through `ServerHandler::call_tool` (what rmcp's service calls), router in a field.
    #[divan::bench]
    fn rmcp_handler_call_tool(bencher: Bencher) {
        let rt = runtime();
        let _enter = rt.enter();
        let server = RmcpServer::new();
        let (peer, _guard) = fixtures::rmcp_peer(server.clone());
        let args = fixtures::rmcp_arguments();
        bencher.bench_local(|| {
            let params = CallToolRequestParams::new("add").with_arguments(args.clone());
            rt.block_on(server.call_tool(params, fixtures::request_context(&peer, 1)))
        });
    }

    /// `#[tool_router(server_handler)]`'s default `call_tool`, which rebuilds the router on
    /// every call.
    #[divan::bench]
    fn rmcp_default_server_handler(bencher: Bencher) {
        let rt = runtime();
        let _enter = rt.enter();
        let server = RmcpDefaultServer;
        let (peer, _guard) = fixtures::rmcp_peer(server.clone());
        let args = fixtures::rmcp_arguments();
        bencher.bench_local(|| {
            let params = CallToolRequestParams::new("add").with_arguments(args.clone());
            rt.block_on(server.call_tool(params, fixtures::request_context(&peer, 1)))
        });
    }
}

/// A previewing tool pushes a pending action; `resolve` applies it (rmcp has no equivalent).
mod pending {
    use super::*;

    #[divan::bench]
    fn xcsh_push_then_resolve_apply(bencher: Bencher) {
        let rt = runtime();
        let session = fixtures::xcsh_session();
        let stage = json!({"n": 7});
        let apply = json!({"action": "apply", "reason": "benchmark"});
        let once = || async {
            let preview = session.call("stage", stage.clone()).await;
            let applied = session.call("resolve", apply.clone()).await;
            // An agent loop delivers the reminder each push queues.
            let reminders = session.take_reminders();
            (preview, applied, reminders)
        };
        let (preview, applied, reminders) = rt.block_on(once());
        assert!(!preview.is_error() && !applied.is_error(), "{applied:?}");
        assert_eq!(applied.text_content(), "Applied 7.");
        assert_eq!(reminders.len(), 1);
        assert!(session.pending().is_empty());
        bencher.bench_local(|| rt.block_on(once()));
    }
}

/// Schema retrieval after the first call.
mod schema {
    use super::*;

    #[divan::bench]
    fn xcsh_tool_parameters(bencher: Bencher) {
        let session = fixtures::xcsh_session();
        let tool = session.registry().get("add").expect("registered");
        bencher.bench_local(|| black_box(tool).parameters().len());
    }

    #[divan::bench]
    fn xcsh_custom_tool_parameters(bencher: Bencher) {
        let _ = Add::parameters();
        bencher.bench_local(Add::parameters);
    }

    #[divan::bench(args = Dialect::ALL)]
    fn xcsh_registry_definitions(bencher: Bencher, dialect: Dialect) {
        let session = fixtures::xcsh_session();
        let registry = session.registry();
        bencher.bench_local(|| registry.definitions(black_box(dialect)).map(<[_]>::len));
    }

    #[divan::bench]
    fn rmcp_router_get(bencher: Bencher) {
        let server = RmcpServer::new();
        bencher.bench_local(|| {
            server
                .tool_router
                .get(black_box("add"))
                .map(|t| t.input_schema.len())
        });
    }

    /// rmcp's listing (`tools/list` calls it): clones every tool.
    #[divan::bench]
    fn rmcp_router_list_all(bencher: Bencher) {
        let server = RmcpServer::new();
        bencher.bench_local(|| server.tool_router.list_all());
    }
}

/// One response with two calls of the trivial tool, per provider: `Session::turn` against
/// the same two calls made directly, and its two halves, reading the calls and writing the
/// answer, alone.
mod turn {
    use super::*;
    use xcsh::session::{AnsweredCall, CallOptions, Session, parse_calls, render_results};

    const PROVIDERS: [Dialect; 5] = [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
        Dialect::Bedrock,
    ];

    /// Two calls of `add`, as `dialect`'s API returns them.
    fn response(dialect: Dialect) -> Value {
        let (one, two) = (json!({"a": 1, "b": 2}), json!({"a": 3, "b": 4}));
        match dialect {
            Dialect::Anthropic => json!({"id": "msg_1", "type": "message", "role": "assistant",
                "content": [
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "toolu_1", "name": "add", "input": one},
                    {"type": "tool_use", "id": "toolu_2", "name": "add", "input": two}
                ], "stop_reason": "tool_use"}),
            Dialect::OpenAiChat => json!({"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "add", "arguments": one.to_string()}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "add", "arguments": two.to_string()}}
                ]}}]}),
            Dialect::OpenAiResponses => json!({"id": "resp_1", "object": "response", "output": [
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
                 "arguments": one.to_string(), "status": "completed"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "add",
                 "arguments": two.to_string(), "status": "completed"}
            ]}),
            Dialect::Gemini => json!({"candidates": [{"finishReason": "STOP", "content": {
            "role": "model", "parts": [
                {"functionCall": {"name": "add", "args": one}},
                {"functionCall": {"name": "add", "args": two}}
            ]}}]}),
            Dialect::Bedrock => json!({"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "tooluse_1", "name": "add", "input": one}},
                {"toolUse": {"toolUseId": "tooluse_2", "name": "add", "input": two}}
            ]}}, "stopReason": "tool_use"}),
            other => unreachable!("{other:?} has no model responses in this benchmark"),
        }
    }

    /// The calls a host makes without a turn: each one, in order, with its id and dialect.
    async fn bare(session: &Session, dialect: Dialect, calls: &[(Option<String>, Value)]) {
        for (id, args) in calls {
            let options = CallOptions {
                call_id: id.clone(),
                dialect: Some(dialect),
                ..CallOptions::default()
            };
            black_box(session.call_with("add", args.clone(), options).await);
        }
    }

    fn calls(dialect: Dialect) -> Vec<(Option<String>, Value)> {
        parse_calls(dialect, &response(dialect))
            .expect("a well-formed response")
            .into_iter()
            .map(|call| (call.id, call.arguments.expect("JSON arguments")))
            .collect()
    }

    #[divan::bench(args = PROVIDERS)]
    fn xcsh_bare_calls(bencher: Bencher, dialect: Dialect) {
        let rt = runtime();
        let session = fixtures::xcsh_session();
        let calls = calls(dialect);
        bencher.bench_local(|| rt.block_on(bare(&session, dialect, &calls)));
    }

    #[divan::bench(args = PROVIDERS)]
    fn xcsh_session_turn(bencher: Bencher, dialect: Dialect) {
        let rt = runtime();
        let session = fixtures::xcsh_session();
        let response = response(dialect);
        let turn = rt
            .block_on(session.turn(dialect, &response))
            .expect("a turn");
        assert_eq!(turn.calls.len(), 2);
        assert!(turn.calls.iter().all(|c| !c.result.is_error()), "{turn:?}");
        bencher.bench_local(|| rt.block_on(session.turn(dialect, &response)));
    }

    #[divan::bench(args = PROVIDERS)]
    fn xcsh_parse_calls(bencher: Bencher, dialect: Dialect) {
        let response = response(dialect);
        bencher.bench_local(|| parse_calls(dialect, black_box(&response)));
    }

    #[divan::bench(args = PROVIDERS)]
    fn xcsh_render_results(bencher: Bencher, dialect: Dialect) {
        let rt = runtime();
        let session = fixtures::xcsh_session();
        let answered: Vec<AnsweredCall> = rt
            .block_on(session.turn(dialect, &response(dialect)))
            .expect("a turn")
            .calls;
        bencher.bench_local(|| render_results(dialect, black_box(&answered), &[]));
    }
}

/// Asserts that schema retrieval allocates nothing once the first call has filled the caches.
fn schema_retrieval_is_allocation_free() {
    const ROUNDS: usize = 1000;
    let session = fixtures::xcsh_session();
    let registry = session.registry();
    let retrieve = || {
        let tool = registry.get("add").expect("registered");
        black_box(tool.parameters());
        black_box(Add::parameters());
        for dialect in Dialect::ALL {
            black_box(
                registry
                    .definitions(dialect)
                    .expect("every dialect is enabled"),
            );
            black_box(
                registry
                    .lowered_parameters("add", dialect)
                    .expect("enabled"),
            );
        }
    };
    retrieve();
    let (allocations, ()) = allocations_in(|| (0..ROUNDS).for_each(|_| retrieve()));
    assert_eq!(
        allocations, 0,
        "schema retrieval allocated {allocations} times in {ROUNDS} rounds after the first call"
    );
    let server = RmcpServer::new();
    let (rmcp_list, _) = allocations_in(|| black_box(server.tool_router.list_all()));
    eprintln!(
        "schema retrieval after the first call: 0 allocations in {ROUNDS} rounds of \
         Tool::parameters, CustomTool::parameters, and Registry::definitions and \
         lowered_parameters for all {} dialects (rmcp's list_all: {rmcp_list} per listing)",
        Dialect::ALL.len()
    );
}
