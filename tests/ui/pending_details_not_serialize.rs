use xcsh::pending;

// Not `Serialize`: it cannot be shown as the action's details.
struct Target {
    path: String,
}

#[pending(apply, label = "Delete", details = target)]
struct Delete {
    target: Target,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {
        let _ = &self.target.path;
    }
}

fn main() {}
