use xcsh::{ToolContext, custom_tool};

/// Resolves things.
#[custom_tool(name = "resolve")]
struct MyResolve {
    /// What.
    what: String,
}

impl MyResolve {
    async fn execute(self, _ctx: &ToolContext) -> String {
        self.what
    }
}

fn main() {}
