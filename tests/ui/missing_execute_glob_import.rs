// With the runtime's traits imported (`use xcsh::*`), a missing `execute` is ambiguous
// between `CustomTool::execute` and the macro's probe: rustc names both candidates.
use xcsh::*;

/// Greets.
#[custom_tool]
struct Greet {
    /// Who.
    name: String,
}

fn main() {}
