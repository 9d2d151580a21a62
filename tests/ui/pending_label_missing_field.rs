use xcsh::{ToolError, pending};

#[pending(apply, label = "Batch rename: {count} files in {dri}")]
struct RenamePlan {
    files: Vec<String>,
    dir: String,
}

impl RenamePlan {
    async fn apply(&mut self, _reason: &str) -> Result<String, ToolError> {
        Ok(format!("renamed {} in {}", self.files.len(), self.dir))
    }
}

fn main() {}
