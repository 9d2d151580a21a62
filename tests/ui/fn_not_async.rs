use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool]
fn greet(
    /// Who.
    name: String,
    _ctx: &ToolContext,
) -> String {
    format!("hi {name}")
}

fn main() {}
