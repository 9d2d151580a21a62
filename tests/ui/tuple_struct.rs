// Its uses report nothing more: the fallback keeps `Greet` a (stub) tool.
use xcsh::{Session, ToolContext, custom_tool};

/// Greets.
#[custom_tool]
struct Greet(String);

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> String {
        self.0
    }
}

fn main() {
    let _ = Session::builder().custom::<Greet>();
}
