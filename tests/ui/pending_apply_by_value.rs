use xcsh::pending;

#[pending(apply, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(self) -> String {
        format!("deleted {}", self.path)
    }
}

fn main() {}
