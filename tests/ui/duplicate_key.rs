use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool(name = "greet", read_only, name = "hello")]
struct Greet {}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

fn main() {}
