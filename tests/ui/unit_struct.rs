use xcsh::{ToolContext, custom_tool};

/// Pings.
#[custom_tool]
struct Ping;

impl Ping {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "pong"
    }
}

fn main() {}
