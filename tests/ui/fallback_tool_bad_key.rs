// One mistake, one error: a tool with a bad key is still a `CustomTool` (a stub) where it is
// used, so only the key is reported.
use xcsh::{CustomTool, Session, ToolContext, custom_tool, suite};

/// Greets.
#[custom_tool(nmae = "greet")]
struct Greet {
    /// Who.
    #[serde(default)]
    name: String,
}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("hi {}", self.name)
    }
}

fn main() {
    let _ = Session::builder().custom::<Greet>();
    let _ = suite![Greet];
    let _ = Greet::NAME;
}
