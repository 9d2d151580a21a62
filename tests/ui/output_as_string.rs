use xcsh::{ToolContext, custom_tool};

/// Counts.
// `output` names a type, not a string.
#[custom_tool(output = "Summary")]
struct Count {}

impl Count {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "counted"
    }
}

fn main() {}
