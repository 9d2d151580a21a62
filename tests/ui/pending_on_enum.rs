// Pushed, it reports nothing more: the fallback gives the enum a stub impl.
use xcsh::pending;
use xcsh::pending::PendingActionStore;

#[pending(apply, label = "Change")]
enum Change {
    Create,
    Delete,
}

fn main() {
    let _ = Change::Delete;
    PendingActionStore::new().push(Change::Create);
}
