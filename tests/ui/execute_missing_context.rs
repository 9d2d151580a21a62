use xcsh::custom_tool;

/// Greets.
#[custom_tool]
struct Greet {
    /// Who.
    name: String,
}

impl Greet {
    async fn execute(self) -> String {
        format!("hi {}", self.name)
    }
}

fn main() {}
