//! Runs the downstream crate's tools through a session.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake};

use tools_fw::pending::resolve;
use tools_fw::tool::Suite;
use tools_fw::{ResolveAction, Session};
use xcsh_downstream::{Unit, tools};

/// Drives a future on this thread: enough for tools that do not need a runtime's I/O.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

fn args(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn tools_run_through_a_session() {
    let suite = tools();
    let names: Vec<String> = suite.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["convert_temperature", "delete_note"]);

    let session = Session::builder().suite(suite).build().unwrap();
    assert_eq!(
        session.tool_names(),
        ["convert_temperature", "delete_note", "resolve"]
    );
    block_on(async {
        let converted = session
            .call(
                "convert_temperature",
                args(r#"{"value": 100, "from": "celsius", "to": "fahrenheit"}"#),
            )
            .await;
        assert_eq!(converted.text_content(), "212.0");

        let bad = session
            .call(
                "convert_temperature",
                args(r#"{"value": 1, "from": "kelvin", "to": "celsius"}"#),
            )
            .await;
        assert!(bad.is_error());
        assert!(
            bad.text_content()
                .contains("from: unknown variant `kelvin`")
        );

        let preview = session
            .call("delete_note", args(r#"{"title": "groceries"}"#))
            .await;
        assert_eq!(
            preview.text_content(),
            "Will delete `groceries`. Call resolve to apply or discard."
        );
        let top = session.pending().peek().unwrap();
        assert_eq!(top.label, "Delete note: groceries");
        assert_eq!(top.source_tool_name, "delete_note");
        assert_eq!(top.details, Some(args(r#"{"title": "groceries"}"#)));

        let done = resolve(session.pending(), ResolveAction::Apply, "asked to")
            .await
            .unwrap();
        assert_eq!(
            done.result.text_content(),
            "Deleted `groceries` (asked to)."
        );

        session
            .call("delete_note", args(r#"{"title": "todo"}"#))
            .await;
        let kept = resolve(session.pending(), ResolveAction::Discard, "keep it")
            .await
            .unwrap();
        assert_eq!(kept.result.text_content(), "Kept `todo`.");
    });
    assert_eq!(Unit::Celsius, Unit::Celsius);
}

#[test]
fn tools_register_themselves_under_the_crate_path() {
    let suite = tools_fw::tool::registered_suite("xcsh_downstream");
    let names: Vec<String> = suite.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["convert_temperature", "delete_note"]);
}
