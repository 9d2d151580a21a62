use xcsh::pending;

#[pending(apply, label = "Change")]
enum Change {
    Create,
    Delete,
}

fn main() {
    let _ = (Change::Create, Change::Delete);
}
