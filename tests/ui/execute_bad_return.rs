use xcsh::{ToolContext, custom_tool};

/// Counts.
#[custom_tool]
struct Count {
    /// Up to.
    to: u32,
}

impl Count {
    async fn execute(self, _ctx: &ToolContext) -> Vec<u32> {
        (0..self.to).collect()
    }
}

fn main() {}
