//! A file flipped between a regular file and a link leading out of the root, again and again,
//! while searches run: the walker sees a regular file, but by the time it opens it, it may be
//! the link. No search may ever return what the link leads to.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use xcsh_tools::engine::{self, Control, Scope, SearchRequest};
use xcsh_tools::workspace::Workspace;

mod common;

#[test]
fn a_file_swapped_for_a_link_out_during_a_walk_is_never_read() {
    let fx = common::root_and_outside();
    let (root, outside) = (&fx.root, &fx.outside);
    fs::write(
        outside.join("secret.rs"),
        "fn s() { leak_outside().unwrap(); }\n",
    )
    .expect("write");
    for i in 0..20 {
        fs::write(
            root.join(format!("src/f{i}.rs")),
            "fn f() { inside().unwrap(); }\n",
        )
        .expect("write");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, root, outside) = (Arc::clone(&stop), root.clone(), outside.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for i in 0..20 {
                    let target = root.join(format!("src/f{i}.rs"));
                    let reg = root.join(format!("src/.reg{i}"));
                    let link = root.join(format!("src/.link{i}"));
                    let _ = fs::write(&reg, "fn f() { inside().unwrap(); }\n");
                    let _ = fs::rename(&reg, &target);
                    let _ = fs::remove_file(&link);
                    let _ = symlink(outside.join("secret.rs"), &link);
                    let _ = fs::rename(&link, &target);
                    flips += 1;
                }
            }
            flips
        })
    };
    let ws = Workspace::new(root).expect("workspace");
    let request = SearchRequest {
        patterns: vec!["$X.unwrap()".to_owned()],
        ..SearchRequest::default()
    };
    let started = Instant::now();
    let (mut searches, mut leaks) = (0, Vec::new());
    while started.elapsed() < Duration::from_secs(3) {
        for scope in [Scope::root(&ws), Scope::root(&ws).with_path("src/f3.rs")] {
            if let Ok(result) = engine::search(&scope, &request, &Control::default()) {
                for m in result.matches {
                    if m.text.contains("leak_outside") {
                        leaks.push(m.file);
                    }
                }
            }
            searches += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().expect("flipper");
    eprintln!(
        "{searches} searches against {flips} flips; {} leaks",
        leaks.len()
    );
    assert!(
        leaks.is_empty(),
        "read through a link out of the root: {leaks:?}"
    );
}
