//! Helpers shared by the binary's reliability tests in this directory.

// Each test file that says `mod common;` compiles this module into its own crate and uses
// only part of it; the rest would warn as dead code there.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};

use serde_json::Value;

/// The text items of an MCP tool result's `content`, joined by newlines (empty if none).
pub fn content_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The first line a child's `pipe` gives; the rest is read and dropped on a thread, so the
/// child never blocks on a full pipe.
pub fn first_line_then_drain(pipe: impl Read + Send + 'static) -> String {
    let mut lines = BufReader::new(pipe).lines();
    let first = lines
        .next()
        .expect("a first line")
        .expect("readable output");
    std::thread::spawn(move || lines.for_each(drop));
    first
}
