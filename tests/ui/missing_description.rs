use xcsh::{ToolContext, custom_tool};

#[custom_tool]
struct Greet {
    /// Who to greet.
    name: String,
}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("hi {}", self.name)
    }
}

/// Greets.
#[custom_tool(description = "  ")]
struct Wave {}

impl Wave {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "o/"
    }
}

fn main() {}
