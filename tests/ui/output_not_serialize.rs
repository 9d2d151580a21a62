use xcsh::{ToolContext, custom_tool};

// The structured output must be `Serialize + JsonSchema`: this one is neither.
struct Summary {
    files: usize,
}

/// Counts.
#[custom_tool(output = Summary)]
struct Count {}

impl Count {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        let _ = Summary { files: 1 }.files;
        "counted"
    }
}

fn main() {}
