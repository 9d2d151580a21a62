use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool]
struct Greet(String);

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> String {
        self.0
    }
}

fn main() {}
