use xcsh::pending;

#[pending(apply, reject, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    async fn reject(&mut self, _reason: &str) -> bool {
        true
    }
}

fn main() {}
