use xcsh::pending;

// The digest method cannot be called `effect_digest`: that is the trait's own method.
#[pending(apply, label = "Delete: {path}", effect_digest_fn = effect_digest)]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    fn effect_digest(&self) -> String {
        self.path.clone()
    }
}

fn main() {}
