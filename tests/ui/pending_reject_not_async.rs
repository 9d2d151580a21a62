use xcsh::pending;

#[pending(apply, reject, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    fn reject(&mut self, _reason: &str) -> Option<u64> {
        Some(self.path.len() as u64)
    }
}

fn main() {}
