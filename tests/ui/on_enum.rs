use xcsh::custom_tool;

/// A choice.
#[custom_tool]
enum Mode {
    Fast,
    Slow,
}

fn main() {
    let _ = (Mode::Fast, Mode::Slow);
}
