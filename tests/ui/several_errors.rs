use xcsh::{ToolContext, custom_tool};

#[custom_tool(name = "bad name", read_only = "yes", descripton = "Greets.", destructive)]
#[derive(serde::Deserialize)]
struct Greet {
    /// Who.
    name: String,
}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("hi {}", self.name)
    }
}

fn main() {}
