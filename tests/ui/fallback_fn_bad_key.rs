// One mistake, one error: the fn form's struct exists (a stub) even when the attribute is
// wrong, so its uses are not "cannot find type `Greet`".
use xcsh::{Session, ToolContext, custom_tool, suite};

/// Greets.
#[custom_tool(read_only = "yes")]
async fn greet(
    /// Who.
    name: String,
    _ctx: &ToolContext,
) -> String {
    format!("hi {name}")
}

fn main() {
    let _ = Session::builder().custom::<Greet>();
    let _ = suite![Greet];
}
