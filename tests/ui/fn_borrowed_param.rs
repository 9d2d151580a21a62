// Its uses report nothing more: the fallback still declares the (stub) tool `Greet`.
use xcsh::{Session, custom_tool};

/// Greets.
#[custom_tool]
async fn greet(
    /// Who.
    name: &str,
    (first, last): (String, String),
) -> String {
    format!("hi {name} {first} {last}")
}

fn main() {
    let _ = Session::builder().custom::<Greet>();
}
