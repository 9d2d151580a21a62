use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool]
struct Greet {
    /// Who.
    name: String,
}

impl Greet {
    async fn execute(&self, _ctx: &ToolContext) -> String {
        format!("hi {}", self.name)
    }
}

fn main() {}
