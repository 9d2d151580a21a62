//! Nothing outside the workspace root is read or written, whatever path, glob or link a model
//! tries: `..`, absolute paths, symbolic links (to files, to directories, by absolute and
//! relative targets, in loops), globs that try to climb out — through `ast_edit` (preview and
//! apply), `ast_grep`, and `ChangeSet`. Non-UTF-8 file names inside the root work.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::{Value, json};
use xcsh_core::{AgentToolResult, Session};
use xcsh_tools::changeset::ChangeSet;
use xcsh_tools::workspace::Workspace;

mod common;
use common::{Fixture, session, snapshot};

/// Text only the outside files hold: if a result ever shows it, something was read out there.
const OUTSIDE_MARKER: &str = "leak_outside";

fn fixture() -> Fixture {
    let fx = common::root_and_outside();
    let (root, outside) = (&fx.root, &fx.outside);
    fs::create_dir(outside.join("sub")).expect("mkdir");
    fs::write(
        root.join("src/a.rs"),
        "fn a() { let v = load().unwrap(); }\n",
    )
    .expect("write");
    for path in ["secret.rs", "sub/deep.rs"] {
        fs::write(
            outside.join(path),
            format!("fn secret() {{ {OUTSIDE_MARKER}().unwrap(); }}\n"),
        )
        .expect("write");
    }
    fs::write(
        outside.join("secret.py"),
        format!("{OUTSIDE_MARKER}().unwrap()\n"),
    )
    .expect("write");
    // Links that lead out, every way a link can.
    symlink("../outside", root.join("out_dir")).expect("link");
    symlink(outside, root.join("out_dir_abs")).expect("link");
    symlink("../outside/secret.rs", root.join("out_file.rs")).expect("link");
    symlink(outside.join("secret.rs"), root.join("src/out_file_abs.rs")).expect("link");
    symlink("../../outside/sub", root.join("src/nested_out")).expect("link");
    symlink("loop_b", root.join("loop_a.rs")).expect("link");
    symlink("loop_a.rs", root.join("loop_b")).expect("link");
    symlink("self_loop", root.join("self_loop")).expect("link");
    // A link that leads out and back in is fine, as in a shell.
    symlink("../ws/src", root.join("back_in")).expect("link");
    fx
}

/// Paths and globs a model could try, with what the answer must say when it is an error.
const HOSTILE_PATHS: &[&str] = &[
    "..",
    "../outside",
    "../outside/secret.rs",
    "src/../../outside/secret.rs",
    "/etc",
    "/etc/passwd",
    "/etc/**",
    "/",
    "../**",
    "../*/secret.rs",
    "../outside/**/*.rs",
    "out_dir",
    "out_dir/secret.rs",
    "out_dir/**",
    "out_dir_abs/secret.rs",
    "out_file.rs",
    "src/out_file_abs.rs",
    "src/nested_out/deep.rs",
    "src/nested_out/**",
    "loop_a.rs",
    "self_loop",
    "self_loop/x.rs",
    "**/secret.rs",
    "**/*",
];

const HOSTILE_GLOBS: &[&str] = &[
    "../**",
    "../outside/**",
    "/etc/**",
    "/**",
    "**/../../**",
    "!../**",
    "out_dir/**",
];

/// The ways a refusal is worded: each says the path leaves the root, loops, or is not valid.
fn is_refusal(text: &str) -> bool {
    [
        "leaves the workspace root",
        "symbolic-link loop",
        "cannot start with `/` or contain `..`",
        "does not exist under the workspace root",
    ]
    .iter()
    .any(|r| text.contains(r))
}

fn check_no_leak(what: &str, result: &AgentToolResult) {
    let text = result.text_content();
    assert!(
        !text.contains(OUTSIDE_MARKER),
        "{what}: the answer shows something from outside the root:\n{text}"
    );
    if let Some(details) = &result.details {
        let details = details.to_string();
        assert!(
            !details.contains(OUTSIDE_MARKER),
            "{what}: the details show something from outside the root"
        );
    }
    assert!(
        !text.contains("panic"),
        "{what}: a panic reached the model: {text}"
    );
    if result.is_error() {
        assert!(is_refusal(&text), "{what}: an unexplained error: {text}");
    }
}

async fn try_everything(session: &Session, fx: &Fixture, args: Value, what: &str) {
    let outside_before = snapshot(&fx.outside);
    let mut grep_args = args.clone();
    grep_args["pat"] = json!("$X.unwrap()");
    let found = session.call("ast_grep", grep_args).await;
    check_no_leak(&format!("ast_grep {what}"), &found);

    let mut edit_args = args;
    edit_args["ops"] = json!([{"pat": "$X.unwrap()", "out": "$X.expect(\"pwned\")"}]);
    let preview = session.call("ast_edit", edit_args).await;
    check_no_leak(&format!("ast_edit {what}"), &preview);
    if session.pending().has_pending() {
        // Whatever was previewed, applying it may only touch files inside.
        let applied = session
            .call("resolve", json!({"action": "apply", "reason": "probe"}))
            .await;
        check_no_leak(&format!("resolve after ast_edit {what}"), &applied);
        assert!(!session.pending().has_pending());
    }
    assert_eq!(
        snapshot(&fx.outside),
        outside_before,
        "{what}: something outside the root changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_path_or_glob_reads_or_writes_outside_the_root() {
    let fx = fixture();
    let session = session(&fx.root);
    let outside_before = snapshot(&fx.outside);
    for path in HOSTILE_PATHS {
        for lang in [None, Some("rust")] {
            let mut args = json!({"path": path});
            if let Some(lang) = lang {
                args["lang"] = json!(lang);
            }
            try_everything(&session, &fx, args, &format!("path {path:?} lang {lang:?}")).await;
        }
    }
    for glob in HOSTILE_GLOBS {
        try_everything(
            &session,
            &fx,
            json!({"glob": glob}),
            &format!("glob {glob:?}"),
        )
        .await;
        try_everything(
            &session,
            &fx,
            json!({"glob": glob, "lang": "python"}),
            &format!("glob {glob:?} lang python"),
        )
        .await;
    }
    // The absolute path of an outside file, spelled out.
    let absolute = fx.outside.join("secret.rs");
    try_everything(
        &session,
        &fx,
        json!({"path": absolute.to_string_lossy()}),
        "absolute outside path",
    )
    .await;
    assert_eq!(snapshot(&fx.outside), outside_before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_outside_paths_are_refused_naming_the_path() {
    let fx = fixture();
    let session = session(&fx.root);
    for (path, expect) in [
        (
            "../outside/secret.rs",
            "path `../outside/secret.rs` leaves the workspace root",
        ),
        (
            "/etc/passwd",
            "path `/etc/passwd` leaves the workspace root",
        ),
        (
            "out_file.rs",
            "through the symbolic link `out_file.rs` (-> `../outside/secret.rs`)",
        ),
        ("out_dir/secret.rs", "through the symbolic link `out_dir`"),
        (
            "src/nested_out/deep.rs",
            "through the symbolic link `src/nested_out`",
        ),
        ("loop_a.rs", "runs into a symbolic-link loop"),
        ("../**", "path: `../**` is not a valid glob"),
        ("/etc/**", "path: `/etc/**` is not a valid glob"),
    ] {
        for tool in ["ast_grep", "ast_edit"] {
            let args = if tool == "ast_grep" {
                json!({"pat": "$X.unwrap()", "path": path})
            } else {
                json!({"ops": [{"pat": "$X.unwrap()", "out": "$X"}], "path": path})
            };
            let result = session.call(tool, args).await;
            assert!(
                result.is_error(),
                "{tool} {path}: {}",
                result.text_content()
            );
            assert!(
                result.text_content().contains(expect),
                "{tool} {path}: expected `{expect}` in: {}",
                result.text_content()
            );
        }
    }
    assert!(!session.pending().has_pending());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_root_edit_skips_links_and_edits_only_inside() {
    let fx = fixture();
    let session = session(&fx.root);
    let outside_before = snapshot(&fx.outside);
    let preview = session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}]}),
        )
        .await;
    assert!(
        preview
            .text_content()
            .contains("AST Edit preview: 1 replacement in 1 file"),
        "{}",
        preview.text_content()
    );
    let applied = session
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(
        fs::read_to_string(fx.root.join("src/a.rs")).expect("read"),
        "fn a() { let v = load()?; }\n"
    );
    assert_eq!(snapshot(&fx.outside), outside_before);
    // A link that leads out and back in reaches a file inside: that one is fine.
    let back_in = session
        .call("ast_grep", json!({"pat": "load()", "path": "back_in/a.rs"}))
        .await;
    assert!(
        back_in.text_content().starts_with("1 match in 1 file"),
        "{}",
        back_in.text_content()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_utf8_file_names_are_searched_and_edited() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let fx = fixture();
    let name = OsStr::from_bytes(b"caf\xe9-\xff.rs");
    let path = fx.root.join("src").join(name);
    fs::write(&path, "fn c() { x.unwrap(); }\n").expect("write");
    let session = session(&fx.root);
    let found = session
        .call("ast_grep", json!({"pat": "$X.unwrap()", "path": "src"}))
        .await;
    assert!(
        found.text_content().starts_with("2 matches in 2 files"),
        "{}",
        found.text_content()
    );
    assert!(found.text_content().contains("caf\u{fffd}-\u{fffd}.rs"));
    let preview = session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": "src"}),
        )
        .await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    let applied = session
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert_eq!(applied.text_content(), "Applied 2 replacements in 2 files.");
    assert_eq!(fs::read_to_string(&path).expect("read"), "fn c() { x?; }\n");
}

#[test]
fn changeset_refuses_every_hostile_path_for_every_operation() {
    let fx = fixture();
    let outside_before = snapshot(&fx.outside);
    let root_before = snapshot(&fx.root);
    let ws = Workspace::new(&fx.root).expect("workspace");
    let absolute = fx.outside.join("secret.rs");
    let mut paths: Vec<String> = HOSTILE_PATHS
        .iter()
        .filter(|p| !p.contains('*'))
        .map(|p| (*p).to_owned())
        .collect();
    paths.push(absolute.to_string_lossy().into_owned());
    paths.push("out_dir/new.rs".to_owned());
    paths.push("src/nested_out/new/dir/file.rs".to_owned());
    for path in &paths {
        let mut cs = ChangeSet::new(ws.clone());
        let results = [
            ("modify", cs.modify(path, "x").map(|_| ())),
            ("create", cs.create(path, "x").map(|_| ())),
            ("delete", cs.delete(path).map(|_| ())),
            ("rename from", cs.rename(path, "src/moved.rs").map(|_| ())),
            ("rename to", cs.rename("src/a.rs", path).map(|_| ())),
        ];
        for (op, result) in results {
            // `..` alone and `/` name directories: refused as such, or as outside.
            assert!(result.is_err(), "ChangeSet {op} {path:?} was accepted");
        }
        assert!(cs.is_empty());
    }
    assert_eq!(snapshot(&fx.outside), outside_before);
    assert_eq!(snapshot(&fx.root), root_before);
}
