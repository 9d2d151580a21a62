//! What the dispatch benchmark relies on, checked in every test run: schema retrieval after
//! the first call allocates nothing, and both contestants do the same work.

use std::hint::black_box;

use xcsh::{CustomTool, Dialect};
use xcsh_bench::{CountingAlloc, allocations_in};

#[path = "../benches/fixtures/mod.rs"]
mod fixtures;

#[global_allocator]
static ALLOC: CountingAlloc<std::alloc::System> = CountingAlloc::new(std::alloc::System);

#[test]
fn schema_retrieval_after_the_first_call_does_not_allocate() {
    let session = fixtures::xcsh_session();
    let registry = session.registry();
    let retrieve = || {
        let tool = registry.get("add").expect("registered");
        black_box(tool.parameters());
        black_box(fixtures::Add::parameters());
        for dialect in Dialect::ALL {
            black_box(registry.definitions(dialect).expect("enabled"));
            black_box(
                registry
                    .lowered_parameters("add", dialect)
                    .expect("enabled"),
            );
        }
    };
    retrieve();
    let (allocations, ()) = allocations_in(|| (0..100).for_each(|_| retrieve()));
    assert_eq!(allocations, 0);
}

#[test]
fn the_counter_sees_allocations() {
    let (allocations, v) = allocations_in(|| black_box(vec![0u8; 64]));
    assert_eq!((allocations, v.len()), (1, 64));
}

#[test]
fn both_contestants_answer_the_same_call() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let session = fixtures::xcsh_session();
    let xcsh = rt.block_on(session.call("add", serde_json::json!({"a": 1, "b": 2})));
    assert_eq!(xcsh.text_content(), "3");

    let _enter = rt.enter();
    let server = fixtures::RmcpServer::new();
    let (peer, _guard) = fixtures::rmcp_peer(server.clone());
    let rmcp = rt.block_on(fixtures::rmcp_router_call(
        &server,
        &fixtures::rmcp_arguments(),
        fixtures::request_context(&peer, 1),
    ));
    assert!(fixtures::rmcp_says_three(&rmcp), "{rmcp:?}");

    use rmcp::ServerHandler as _;
    let default = fixtures::RmcpDefaultServer;
    let (peer, _guard) = fixtures::rmcp_peer(default.clone());
    let params =
        rmcp::model::CallToolRequestParams::new("add").with_arguments(fixtures::rmcp_arguments());
    let rmcp = rt
        .block_on(default.call_tool(params, fixtures::request_context(&peer, 2)))
        .expect("rmcp add succeeds");
    assert!(fixtures::rmcp_says_three(&rmcp), "{rmcp:?}");
}
