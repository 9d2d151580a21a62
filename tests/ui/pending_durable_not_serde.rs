use xcsh::pending;

// A durable action is kept as JSON: it must be `Serialize + Deserialize`.
#[pending(durable, apply, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
}

fn main() {}
