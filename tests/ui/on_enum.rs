// Used as a tool, it reports nothing more: the fallback gives the enum stub impls.
use xcsh::{Session, custom_tool};

/// A choice.
#[custom_tool]
enum Mode {
    Fast,
    Slow,
}

fn main() {
    let _ = (Mode::Fast, Mode::Slow);
    let _ = Session::builder().custom::<Mode>();
}
