use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool]
struct Greet {
    /// Who.
    name: String,
}

impl Greet {
    fn execute(self, _ctx: &ToolContext) -> u64 {
        self.name.len() as u64
    }
}

fn main() {}
