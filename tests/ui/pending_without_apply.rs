// Its uses report nothing more: the fallback keeps `Delete` a (stub) pending action.
use xcsh::pending;
use xcsh::pending::PendingActionStore;

#[pending(reject, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn reject(&mut self, _reason: &str) {}
}

fn main() {
    PendingActionStore::new().push(Delete {
        path: "a.txt".into(),
    });
}
