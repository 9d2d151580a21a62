use xcsh::{ToolError, pending};

#[pending(apply, label = "Delete: {path}")]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self) -> Result<String, ToolError> {
        Ok(format!("deleted {}", self.path))
    }
}

fn main() {}
