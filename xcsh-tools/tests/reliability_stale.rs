//! Files that change between an `ast_edit` preview and `resolve apply`, through the session:
//! edited (even to the same length), deleted, replaced by a directory, by a symbolic link
//! (leading inside or out), or reached through a directory swapped for a link. Apply must
//! write nothing, name every stale file, keep the action pending — and a fresh preview then
//! works.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;
use xcsh_core::{AgentToolResult, Session};

mod common;
use common::{Fixture, session, snapshot};

const OLD: &str = "fn f() { let v = load().unwrap(); }\n";
const FILES: [&str; 7] = [
    "src/edited.rs",
    "src/same_len.rs",
    "src/deleted.rs",
    "src/dir.rs",
    "src/link_in.rs",
    "src/link_out.rs",
    "src/untouched.rs",
];

fn fixture() -> Fixture {
    let fx = common::root_and_outside();
    let (root, outside) = (&fx.root, &fx.outside);
    fs::create_dir_all(root.join("lib")).expect("mkdir");
    for file in FILES {
        fs::write(root.join(file), OLD).expect("write");
    }
    fs::write(root.join("lib/inner.rs"), OLD).expect("write");
    fs::write(root.join("twin.rs.txt"), OLD).expect("write");
    fs::write(outside.join("twin.rs"), OLD).expect("write");
    fx
}

async fn preview(session: &Session, path: &str) -> AgentToolResult {
    let result = session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": path, "lang": "rust"}),
        )
        .await;
    assert!(!result.is_error(), "{}", result.text_content());
    assert_eq!(session.pending().len(), 1);
    result
}

async fn apply(session: &Session) -> AgentToolResult {
    session
        .call("resolve", json!({"action": "apply", "reason": "go"}))
        .await
}

/// Each way a file can go stale, alone: nothing written, the file named with its reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_change_makes_apply_write_nothing_and_name_the_file() {
    type Mutate = fn(&Fixture, &Path);
    let kinds: [(&str, Mutate, &str); 6] = [
        (
            "edited",
            |_, p| fs::write(p, "fn f() { other(); }\n").expect("write"),
            "modified since it was read",
        ),
        (
            "same length, different bytes",
            |_, p| fs::write(p, OLD.replace("load", "lade")).expect("write"),
            "modified since it was read",
        ),
        ("deleted", |_, p| fs::remove_file(p).expect("rm"), "deleted"),
        (
            "replaced by a directory",
            |_, p| {
                fs::remove_file(p).expect("rm");
                fs::create_dir(p).expect("mkdir");
            },
            "directory",
        ),
        (
            "replaced by a link inside, same content",
            |fx, p| {
                fs::remove_file(p).expect("rm");
                symlink(fx.root.join("twin.rs.txt"), p).expect("link");
            },
            "symbolic link",
        ),
        (
            "replaced by a link outside, same content",
            |fx, p| {
                fs::remove_file(p).expect("rm");
                symlink(fx.outside.join("twin.rs"), p).expect("link");
            },
            "symbolic link",
        ),
    ];
    for (kind, mutate, reason) in kinds {
        let fx = fixture();
        let session = session(&fx.root);
        preview(&session, "src/edited.rs").await;
        let target = fx.root.join("src/edited.rs");
        mutate(&fx, &target);
        let (root_before, outside_before) = (snapshot(&fx.root), snapshot(&fx.outside));
        let failed = apply(&session).await;
        let text = failed.text_content();
        assert!(failed.is_error(), "{kind}: {text}");
        assert!(text.starts_with("Apply failed: "), "{kind}: {text}");
        assert_eq!(
            failed.error_kind(),
            Some(&xcsh_core::ErrorKind::Stale {
                files: vec!["src/edited.rs".into()]
            }),
            "{kind}: the result's kind names the stale file"
        );
        assert!(
            text.contains("`src/edited.rs` (") && text.contains(reason),
            "{kind}: expected the file and `{reason}` in: {text}"
        );
        assert_eq!(snapshot(&fx.root), root_before, "{kind}: wrote inside");
        assert_eq!(
            snapshot(&fx.outside),
            outside_before,
            "{kind}: wrote outside"
        );
        assert_eq!(session.pending().len(), 1, "{kind}: the action was lost");
        // Retrying does not help while the file stays changed; discarding clears it.
        assert!(apply(&session).await.is_error(), "{kind}: retry");
        let discarded = session
            .call("resolve", json!({"action": "discard", "reason": "stale"}))
            .await;
        assert!(
            !discarded.is_error(),
            "{kind}: {}",
            discarded.text_content()
        );
        assert_eq!(snapshot(&fx.root), root_before, "{kind}: discard wrote");
    }
}

/// Many files going stale in different ways at once: every one is named, none is written,
/// not even the files that did not change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_stale_files_are_named_and_the_unchanged_ones_are_not_written_either() {
    let fx = fixture();
    let session = session(&fx.root);
    let shown = preview(&session, "src").await;
    assert!(
        shown
            .text_content()
            .contains("AST Edit preview: 7 replacements in 7 files"),
        "{}",
        shown.text_content()
    );
    let at = |p: &str| fx.root.join(p);
    fs::write(at("src/edited.rs"), "// rewritten\n").expect("write");
    fs::write(at("src/same_len.rs"), OLD.replace("v", "w")).expect("write");
    fs::remove_file(at("src/deleted.rs")).expect("rm");
    fs::remove_file(at("src/dir.rs")).expect("rm");
    fs::create_dir(at("src/dir.rs")).expect("mkdir");
    fs::remove_file(at("src/link_in.rs")).expect("rm");
    symlink("../twin.rs.txt", at("src/link_in.rs")).expect("link");
    fs::remove_file(at("src/link_out.rs")).expect("rm");
    symlink(fx.outside.join("twin.rs"), at("src/link_out.rs")).expect("link");
    let (root_before, outside_before) = (snapshot(&fx.root), snapshot(&fx.outside));

    let failed = apply(&session).await;
    let text = failed.text_content();
    assert!(
        failed.is_error() && text.starts_with("Apply failed: "),
        "{text}"
    );
    for stale in &FILES[..6] {
        assert!(
            text.contains(&format!("`{stale}` (")),
            "{stale} not named in: {text}"
        );
    }
    assert!(!text.contains("`src/untouched.rs` ("), "{text}");
    assert_eq!(snapshot(&fx.root), root_before);
    assert_eq!(snapshot(&fx.outside), outside_before);
    assert_eq!(
        fs::read_to_string(at("src/untouched.rs")).expect("read"),
        OLD
    );
    assert_eq!(session.pending().len(), 1);

    // Discard, preview again: the new preview sees the world as it is and applies.
    session
        .call("resolve", json!({"action": "discard", "reason": "stale"}))
        .await;
    let again = preview(&session, "src").await;
    assert!(
        again
            .text_content()
            .contains("AST Edit preview: 2 replacements in 2 files"),
        "{}",
        again.text_content()
    );
    let applied = apply(&session).await;
    assert_eq!(applied.text_content(), "Applied 2 replacements in 2 files.");
    assert_eq!(snapshot(&fx.outside), outside_before);
    assert_eq!(
        fs::read_to_string(at("src/untouched.rs")).expect("read"),
        "fn f() { let v = load()?; }\n"
    );
}

/// The directory holding the previewed files is swapped for a link to an outside copy with
/// the same contents: every fingerprint still matches, but the files are elsewhere now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_out_is_stale_and_nothing_is_written_outside() {
    let fx = fixture();
    let session = session(&fx.root);
    preview(&session, "lib").await;
    let copy = fx.outside.join("lib");
    fs::create_dir(&copy).expect("mkdir");
    fs::write(copy.join("inner.rs"), OLD).expect("write");
    fs::rename(fx.root.join("lib"), fx.root.join("lib.moved")).expect("mv");
    symlink(&copy, fx.root.join("lib")).expect("link");
    let (root_before, outside_before) = (snapshot(&fx.root), snapshot(&fx.outside));
    let failed = apply(&session).await;
    let text = failed.text_content();
    assert!(failed.is_error(), "{text}");
    assert!(text.contains("`lib/inner.rs` ("), "{text}");
    assert_eq!(
        snapshot(&fx.outside),
        outside_before,
        "wrote outside the root"
    );
    assert_eq!(snapshot(&fx.root), root_before);
    assert_eq!(
        fs::read_to_string(copy.join("inner.rs")).expect("read"),
        OLD
    );
}

/// Two previews of the same file: the second one applied first (LIFO) makes the first stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_previews_cannot_both_apply() {
    let fx = fixture();
    let session = session(&fx.root);
    preview(&session, "src/edited.rs").await;
    let second = session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "load()", "out": "fetch()"}], "path": "src/edited.rs"}),
        )
        .await;
    assert!(!second.is_error(), "{}", second.text_content());
    assert_eq!(session.pending().len(), 2);
    let first_applied = apply(&session).await;
    assert_eq!(
        first_applied.text_content(),
        "Applied 1 replacement in 1 file."
    );
    let after = fs::read_to_string(fx.root.join("src/edited.rs")).expect("read");
    assert_eq!(after, "fn f() { let v = fetch().unwrap(); }\n");
    let stale = apply(&session).await;
    assert!(stale.is_error(), "{}", stale.text_content());
    assert!(
        stale
            .text_content()
            .contains("`src/edited.rs` (modified since it was read)"),
        "{}",
        stale.text_content()
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("src/edited.rs")).expect("read"),
        after
    );
}
