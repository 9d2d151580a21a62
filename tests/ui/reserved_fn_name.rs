use xcsh::{ToolContext, custom_tool};

/// Resolves things.
#[custom_tool]
async fn resolve(
    /// What.
    what: String,
    _ctx: &ToolContext,
) -> String {
    what
}

fn main() {}
