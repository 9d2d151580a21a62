use xcsh::custom_tool;

/// Greets.
#[custom_tool]
struct Greet {
    /// Who.
    name: String,
}

fn main() {}
