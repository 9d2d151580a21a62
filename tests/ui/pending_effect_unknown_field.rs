use xcsh::pending;

#[pending(apply, label = "Delete", effect = efect)]
struct Delete {
    effect_of: xcsh::pending::Effect,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) {}
}

fn main() {}
