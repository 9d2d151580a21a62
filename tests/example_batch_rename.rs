//! `cargo run --example batch_rename_preview` speaks the seed's own texts: the preview
//! sentence, the label, the source tool, and the apply and discard messages with the reason.

use std::path::PathBuf;
use std::process::Command;

/// The example as `cargo test` built it, beside the test binaries.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile.join("examples").join(format!(
        "batch_rename_preview{}",
        std::env::consts::EXE_SUFFIX
    ))
}

#[test]
fn the_batch_rename_example_speaks_the_seeds_texts() {
    let output = Command::new(example()).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "< Prepared rename plan for 3 files. Call resolve to apply or discard.",
        "#1 Batch rename: 3 files (from batch_rename_preview)",
        "< Applied batch rename. Reason: The user approved the new names.",
        "< Prepared rename plan for 2 files. Call resolve to apply or discard.",
        "< Discarded batch rename. Reason: The user prefers dashes.",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}
