// A renamed hook gets a probe of its own name: the message names `commit`, not `apply`.
use xcsh::pending;

#[pending(apply = commit, label = "Delete: {path}")]
struct Delete {
    path: String,
}

fn main() {}
