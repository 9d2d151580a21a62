use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool(name = "", label = "")]
struct Greet {}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

fn main() {}
