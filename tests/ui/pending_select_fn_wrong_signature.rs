use xcsh::pending;

// The selection method takes the chosen files and says why it cannot narrow.
#[pending(apply, label = "Delete: {path}", select_fn = only)]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
    fn only(&mut self, files: Vec<String>) -> bool {
        files.contains(&self.path)
    }
}

fn main() {}
