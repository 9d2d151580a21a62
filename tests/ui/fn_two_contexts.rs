use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool]
async fn greet(
    ctx: &ToolContext,
    /// Who.
    name: String,
    again: &xcsh::ToolContext,
) -> String {
    let _ = (ctx, again);
    format!("hi {name}")
}

fn main() {}
