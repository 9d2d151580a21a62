use xcsh::pending;

// `effect = field` reads an `Effect` or a `ChangeSet`: a path string is neither.
#[pending(apply, label = "Delete: {path}", effect = path)]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
}

fn main() {}
