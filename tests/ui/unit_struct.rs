// Its uses report nothing more: the fallback keeps `Ping` a (stub) tool.
use xcsh::{Session, ToolContext, custom_tool, suite};

/// Pings.
#[custom_tool]
struct Ping;

impl Ping {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "pong"
    }
}

fn main() {
    let _ = suite![Ping];
    let _ = Session::builder().custom::<Ping>();
}
