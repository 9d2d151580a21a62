use xcsh::pending;

#[pending(apply, reject = discard, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    async fn discard(&mut self) -> Option<String> {
        Some(format!("kept {}", self.path))
    }
}

fn main() {}
