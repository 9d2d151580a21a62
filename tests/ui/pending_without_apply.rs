use xcsh::pending;

#[pending(reject, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn reject(&mut self, _reason: &str) {}
}

fn main() {}
