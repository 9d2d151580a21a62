use xcsh::custom_tool;

/// Counts.
#[custom_tool]
async fn count(
    /// Up to.
    to: u32,
) -> Vec<u32> {
    (0..to).collect()
}

fn main() {}
