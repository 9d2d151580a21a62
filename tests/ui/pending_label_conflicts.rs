use xcsh::pending;

#[pending(apply, label = "Delete: {path}", label_fn = describe)]
struct Delete {
    path: String,
}

#[pending(apply)]
struct Unlabelled {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    fn describe(&self) -> String {
        self.path.clone()
    }
}

impl Unlabelled {
    async fn apply(&mut self, _reason: &str) {}
}

fn main() {}
