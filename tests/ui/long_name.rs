use xcsh::{ToolContext, custom_tool};

/// Greets.
#[custom_tool(name = "greet_every_person_in_the_room_one_after_another_until_all_are_greeted")]
struct Greet {}

impl Greet {
    async fn execute(self, _ctx: &ToolContext) -> &'static str {
        "hi"
    }
}

fn main() {}
