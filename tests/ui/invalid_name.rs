use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool(name = "greet people")]
struct Greet {}

/// Greets.
#[custom_tool(name = "9greet")]
struct Greet9 {}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

impl Greet9 {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

fn main() {}
