// One mistake, one error: a #[pending] struct with a wrong key is still a `PendingAction`
// (a stub) where a tool pushes it.
use xcsh::{ToolContext, ToolError, custom_tool, pending};

#[pending(apply, label = "Delete: {path}", details = pth)]
struct Delete {
    path: String,
}

impl Delete {
    async fn apply(&mut self, _reason: &str) -> String {
        format!("deleted {}", self.path)
    }
}

/// Deletes a file after a preview.
#[custom_tool(pending)]
struct DeleteFile {
    /// The file.
    path: String,
}

impl DeleteFile {
    async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {
        ctx.push_pending_action(Delete { path: self.path })?;
        Ok("Will delete it. Call resolve.".into())
    }
}

fn main() {}
