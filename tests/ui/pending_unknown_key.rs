// A misspelt key is one error: its "did you mean" is not followed by "needs a label" or
// "needs `apply`" for the key it was meant to be.
use xcsh::pending;

#[pending(aply, lable = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
}

fn main() {}
