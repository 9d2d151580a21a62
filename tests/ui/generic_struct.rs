use xcsh::{ToolContext, custom_tool};

/// Echoes a value.
#[custom_tool]
struct Echo<T> {
    value: T,
}

impl<T: ToString> Echo<T> {
    async fn execute(self, _ctx: &ToolContext) -> String {
        self.value.to_string()
    }
}

fn main() {}
