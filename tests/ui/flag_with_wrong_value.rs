use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool(read_only = "yes", pending = 1, name = greet)]
struct Greet {}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

fn main() {}
