use xcsh::pending;

// The digest method returns the digest as a `String`.
#[pending(apply, label = "Delete: {path}", effect_digest_fn = digest)]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    fn digest(&self) -> u64 {
        self.path.len() as u64
    }
}

fn main() {}
