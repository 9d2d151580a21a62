use xcsh::pending;

#[pending(apply, label = "Delete: {path}")]
struct Delete {
    path: String,
}

fn main() {}
