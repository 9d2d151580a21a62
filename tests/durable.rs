//! Durable pending stacks: a session opened on a state directory finds the stack a previous
//! process left, in order; actions that could not be kept are reported, never dropped
//! silently; a bad state file is refused naming it; `ast_edit` previews survive a restart
//! and their apply is still stale-checked.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use xcsh::session::Registry;
use xcsh::{AgentToolResult, Session, ToolError, pending};

/// Appends a line to a file when applied: durable.
#[pending(durable, apply, label = "Append to {file}: {line}")]
#[derive(Serialize, Deserialize)]
struct Append {
    file: String,
    line: String,
}

impl Append {
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let mut text = std::fs::read_to_string(&self.file).unwrap_or_default();
        text.push_str(&self.line);
        text.push('\n');
        std::fs::write(&self.file, text).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(AgentToolResult::text(format!("Appended to {}.", self.file)))
    }
}

/// Lives only in memory.
#[pending(apply, label = "Ping {host}")]
struct Ping {
    host: String,
}

impl Ping {
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text(format!("Pinged {}.", self.host)))
    }
}

fn registry() -> Arc<Registry> {
    Session::builder().build_registry().unwrap()
}

fn labels(session: &Session) -> Vec<String> {
    session
        .pending()
        .snapshot()
        .into_iter()
        .map(|s| s.label)
        .collect()
}

#[tokio::test]
async fn a_restarted_process_finds_the_same_stack_and_hears_what_was_lost() {
    let state = tempfile::tempdir().unwrap();
    let out = state.path().join("out.txt");
    let file = out.to_str().unwrap().to_owned();
    {
        let first = registry().durable_session(state.path(), "main").unwrap();
        for line in ["one", "two"] {
            first.pending().push(Append {
                file: file.clone(),
                line: line.into(),
            });
        }
        first.pending().push(Ping { host: "db".into() });
        first.pending().push(Append {
            file: file.clone(),
            line: "three".into(),
        });
        // The process ends here, nothing resolved.
    }

    let second = registry().durable_session(state.path(), "main").unwrap();
    assert_eq!(
        labels(&second),
        [
            format!("Append to {file}: three"),
            format!("Append to {file}: two"),
            format!("Append to {file}: one"),
        ],
        "the same order, top first"
    );
    assert_eq!(
        second.take_reminders(),
        ["`Ping db` was lost when the server restarted; preview again."]
    );

    let done = second
        .call("resolve", json!({"action": "apply", "reason": "ok"}))
        .await;
    assert_eq!(done.text_content(), format!("Appended to {file}."));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "three\n");
    // A resolved action leaves the kept stack: a third process sees two, and no lost note.
    drop(second);
    let third = registry().durable_session(state.path(), "main").unwrap();
    assert_eq!(third.pending().len(), 2);
    assert!(third.take_reminders().is_empty());
}

/// Held in its apply until the test lets it go.
static HOLD: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[pending(durable, apply, label = "Slow {n}")]
#[derive(Serialize, Deserialize)]
struct Slow {
    n: u32,
}

impl Slow {
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        HOLD.notified().await;
        Ok(AgentToolResult::text(format!("Slow {} done.", self.n)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_being_applied_stays_kept_until_the_apply_is_done() {
    let state = tempfile::tempdir().unwrap();
    let session = registry().durable_session(state.path(), "main").unwrap();
    session.pending().push(Slow { n: 1 });
    let resolving = tokio::spawn({
        let session = session.clone();
        async move {
            session
                .call("resolve", json!({"action": "apply", "reason": "go"}))
                .await
        }
    });
    // Off the stack for resolve: a process that died now would find it on restart (the
    // file still holds it), and a second session cannot take the stack meanwhile.
    while !session.pending().is_empty() {
        tokio::task::yield_now().await;
    }
    let kept = std::fs::read_to_string(state.path().join("main.stack")).unwrap();
    assert!(kept.contains("Slow 1"), "{kept}");
    let busy = registry()
        .durable_session(state.path(), "main")
        .expect_err("held");
    assert_eq!(
        busy.to_string(),
        format!(
            "the pending stack `{}` is in use by pid {}: one session at a time keeps a stack; stop that one, or point --state at another directory",
            state.path().join("main.stack").display(),
            std::process::id()
        )
    );

    HOLD.notify_one();
    let done = resolving.await.unwrap();
    assert_eq!(done.text_content(), "Slow 1 done.");
    drop(session);
    let after = registry().durable_session(state.path(), "main").unwrap();
    assert!(after.pending().is_empty(), "done: no longer kept");
}

#[test]
fn a_bad_state_file_is_refused_naming_it() {
    let state = tempfile::tempdir().unwrap();
    {
        let s = registry().durable_session(state.path(), "main").unwrap();
        s.pending().push(Append {
            file: "f".into(),
            line: "l".into(),
        });
    }
    let path = state.path().join("main.stack");
    let good = std::fs::read(&path).unwrap();
    for (what, bytes, expected) in [
        (
            "truncated",
            good[..good.len() - 5].to_vec(),
            "its checksum does not match",
        ),
        (
            "foreign",
            b"{\"hello\": 1}\n".to_vec(),
            "not an xcsh pending stack",
        ),
        ("empty", Vec::new(), "it is truncated"),
    ] {
        std::fs::write(&path, &bytes).unwrap();
        let err = registry()
            .durable_session(state.path(), "main")
            .expect_err(what);
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{what}: {text}");
        assert!(text.contains(expected), "{what}: {text}");
        assert!(text.contains("Move it away"), "{what}: {text}");
        // Refusing writes nothing: the file is as it was.
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{what}");
    }
    let err = registry()
        .durable_session(state.path(), "../escape")
        .expect_err("bad key");
    assert!(
        err.to_string().contains("a session key is letters"),
        "{err}"
    );
}

/// The built-in tools over `root`, as `xcsh serve` has them.
fn builtins(root: &Path) -> Arc<Registry> {
    Session::builder()
        .suite(xcsh::tools::builtin_suite())
        .workspace_root(root)
        .build_registry()
        .unwrap()
}

fn write(root: &Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).unwrap();
}

#[tokio::test]
async fn an_ast_edit_preview_survives_a_restart_and_is_still_stale_checked() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    write(root.path(), "b.rs", "fn b() { y.unwrap(); }\n");
    let builtins = || builtins(root.path());
    let edit = json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"});
    let apply = json!({"action": "apply", "reason": "restart test"});

    let first = builtins().durable_session(state.path(), "s").unwrap();
    first.call("ast_edit", edit.clone()).await;
    drop(first);
    let second = builtins().durable_session(state.path(), "s").unwrap();
    assert_eq!(labels(&second), ["AST Edit: 2 replacements in 2 files"]);
    let applied = second.call("resolve", apply.clone()).await;
    assert_eq!(applied.text_content(), "Applied 2 replacements in 2 files.");
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.rs")).unwrap(),
        "fn a() { x?; }\n"
    );

    // Edited between the two processes: refused, naming the file, nothing written.
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    write(root.path(), "b.rs", "fn b() { y.unwrap(); }\n");
    drop(second);
    let third = builtins().durable_session(state.path(), "s").unwrap();
    third.call("ast_edit", edit).await;
    drop(third);
    write(root.path(), "b.rs", "fn b() { y.unwrap(); z(); }\n");
    let fourth = builtins().durable_session(state.path(), "s").unwrap();
    let refused = fourth.call("resolve", apply).await;
    assert!(refused.is_error());
    assert!(
        refused
            .text_content()
            .contains("`b.rs` (modified since it was read)"),
        "{}",
        refused.text_content()
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.rs")).unwrap(),
        "fn a() { x.unwrap(); }\n"
    );
    assert_eq!(fourth.pending().len(), 1, "a failed apply stays pending");
}

/// An `apply_patch` preview (spliced edits, a move, a new file) is durable like `ast_edit`'s:
/// a restarted process finds it, partial accept by file still works, and the rest goes.
#[tokio::test]
async fn an_apply_patch_preview_survives_a_restart_and_applies_in_part() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write(root.path(), "a.txt", "one\r\ntwo\r\n");
    write(root.path(), "m.txt", "move me\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** Update File: m.txt\n*** Move to: sub/m.txt\n@@\n-move me\n+moved\n*** Add File: n.txt\n+new\n*** End Patch";
    let first = builtins(root.path())
        .durable_session(state.path(), "p")
        .unwrap();
    let preview = first.call("apply_patch", json!({"patch": patch})).await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    drop(first);
    let second = builtins(root.path())
        .durable_session(state.path(), "p")
        .unwrap();
    assert_eq!(
        labels(&second),
        ["Apply Patch: 1 file updated, 1 added, 1 moved"]
    );
    let done = second
        .resolve_files(
            &["a.txt".to_owned(), "sub/m.txt".to_owned()],
            "two of three",
        )
        .await
        .unwrap();
    assert_eq!(
        done.result.text_content(),
        "Applied the patch: 1 file updated, 1 moved."
    );
    assert_eq!(
        std::fs::read(root.path().join("a.txt")).unwrap(),
        b"one\r\n2\r\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("sub/m.txt")).unwrap(),
        "moved\n"
    );
    assert!(!root.path().join("m.txt").exists(), "a move is taken whole");
    assert!(!root.path().join("n.txt").exists());
    assert!(second.pending().is_empty());
}

#[tokio::test]
async fn an_apply_a_stopped_process_had_finished_is_reported_not_written_twice() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    let builtins = || builtins(root.path());
    let stack = state.path().join("s.stack");
    let first = builtins().durable_session(state.path(), "s").unwrap();
    first
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )
        .await;
    let before_apply = std::fs::read(&stack).unwrap();
    let applied = first
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
    // The process stops after writing the files, before the stack is rewritten.
    drop(first);
    std::fs::write(&stack, before_apply).unwrap();

    let restarted = builtins().durable_session(state.path(), "s").unwrap();
    assert_eq!(restarted.pending().len(), 1);
    let again = restarted
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert!(!again.is_error(), "{}", again.text_content());
    assert_eq!(
        again.text_content(),
        "Already applied: 1 replacement in 1 file is already in the files (applied earlier, by a process that stopped before it could report it or by an identical change); nothing was written now."
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.rs")).unwrap(),
        "fn a() { x?; }\n"
    );
    assert!(restarted.pending().is_empty());
    // Changed by someone else instead: still refused as stale.
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    drop(restarted);
    let third = builtins().durable_session(state.path(), "s").unwrap();
    third
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )
        .await;
    write(root.path(), "a.rs", "fn a() { x?; } // by hand\n");
    let refused = third
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert!(refused.is_error(), "{}", refused.text_content());

    // Another change from the same original, applied elsewhere, is not this one.
    third
        .call("resolve", json!({"action": "discard", "reason": "r"}))
        .await;
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    third
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )
        .await;
    let other = builtins().session();
    other
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X.expect(\"x\")"}], "lang": "rust"}),
        )
        .await;
    other
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    let refused = third
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert!(refused.is_error(), "{}", refused.text_content());
    assert!(
        refused
            .text_content()
            .contains("`a.rs` (modified since it was read)"),
        "{}",
        refused.text_content()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_file_that_became_a_link_after_a_restart_is_refused_as_before() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write(root.path(), "a.rs", "fn a() { x.unwrap(); }\n");
    write(root.path(), "b.rs", "fn a() { x.unwrap(); }\n");
    let first = builtins(root.path())
        .durable_session(state.path(), "s")
        .unwrap();
    first
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust", "path": "a.rs"}),
        )
        .await;
    drop(first);
    // The same bytes, reached through a link now.
    std::fs::remove_file(root.path().join("a.rs")).unwrap();
    std::os::unix::fs::symlink("b.rs", root.path().join("a.rs")).unwrap();
    let second = builtins(root.path())
        .durable_session(state.path(), "s")
        .unwrap();
    let refused = second
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert!(refused.is_error(), "{}", refused.text_content());
    assert!(
        refused.text_content().contains("`a.rs`"),
        "{}",
        refused.text_content()
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("b.rs")).unwrap(),
        "fn a() { x.unwrap(); }\n"
    );
}

#[test]
fn a_lost_notice_not_yet_delivered_is_given_again_after_another_restart() {
    let state = tempfile::tempdir().unwrap();
    {
        let first = registry().durable_session(state.path(), "main").unwrap();
        first.pending().push(Ping { host: "db".into() });
    }
    let note = "`Ping db` was lost when the server restarted; preview again.";
    // Restored, but the process stops before anyone takes the notice.
    drop(registry().durable_session(state.path(), "main").unwrap());
    let third = registry().durable_session(state.path(), "main").unwrap();
    assert_eq!(third.take_reminders(), [note], "told again, not dropped");
    assert!(third.pending().is_empty());
    drop(third);
    // Delivered now: the next process hears nothing more of it.
    let fourth = registry().durable_session(state.path(), "main").unwrap();
    assert!(fourth.take_reminders().is_empty());
}
