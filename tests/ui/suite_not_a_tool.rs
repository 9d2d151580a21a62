use xcsh::{ToolContext, custom_tool, suite};

/// Greets.
#[custom_tool]
async fn greet(_ctx: &ToolContext) -> &'static str {
    "hi"
}

struct NotATool;

fn main() {
    let _ = suite![Greet, NotATool, Greet];
}
