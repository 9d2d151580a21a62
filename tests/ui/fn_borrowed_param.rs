use xcsh::custom_tool;

/// Greets.
#[custom_tool]
async fn greet(
    /// Who.
    name: &str,
    (first, last): (String, String),
) -> String {
    format!("hi {name} {first} {last}")
}

fn main() {}
