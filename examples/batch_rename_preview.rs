//! The seed's example: a tool that previews a batch rename and defers the change to
//! `resolve`.
//!
//! `cargo run --example batch_rename_preview` makes a scratch directory under the system's
//! temp dir, then plays both sides of a conversation: the model calls the preview tool,
//! the session forces `resolve`, one plan is applied (the files really are renamed) and a
//! second one is discarded through the action's reject hook.

use std::path::{Path, PathBuf};

use xcsh::pending::ResolutionView;
use xcsh::session::ResolveBias;
use xcsh::{
    Dialect, ResolveAction, Session, ToolContext, ToolError, custom_tool, pending, tool_param,
};

/// How new names are spelt.
#[tool_param]
#[serde(rename_all = "snake_case")]
enum NameStyle {
    /// `meeting-notes.txt`
    Kebab,
    /// `meeting_notes.txt`
    Snake,
}

/// Previews renaming files to a consistent style (lower case, no spaces). Nothing changes
/// until the preview is applied with the `resolve` tool.
#[custom_tool(name = "batch_rename_preview", label = "Batch Rename Preview", pending)]
struct BatchRenamePreview {
    /// Files to rename, relative to the workspace root.
    files: Vec<String>,
    /// The naming style (default `kebab`).
    style: Option<NameStyle>,
}

impl BatchRenamePreview {
    async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {
        let root = ctx.workspace_root();
        let style = self.style.unwrap_or(NameStyle::Kebab);
        let mut plan = Vec::new();
        for (index, file) in self.files.iter().enumerate() {
            if file.contains(['/', '\\']) || file == ".." || file == "." {
                return Err(ToolError::new(format!(
                    "files[{index}]: `{file}` is not a file name in the workspace root; give bare names such as `notes.txt`"
                )));
            }
            if !root.join(file).is_file() {
                return Err(ToolError::new(format!(
                    "files[{index}]: `{file}` does not exist in the workspace; list the directory and try again"
                )));
            }
            let new = restyle(file, &style);
            if new != *file {
                plan.push((file.clone(), new));
            }
        }
        if plan.is_empty() {
            return Ok("Every file already has a consistent name; nothing to rename.".into());
        }
        let preview: Vec<String> = plan
            .iter()
            .map(|(old, new)| format!("  {old} -> {new}"))
            .collect();
        let count = plan.len();
        ctx.push_pending_action(RenamePlan {
            dir: root.to_path_buf(),
            plan,
        })?;
        // The seed's words first; the plan itself after them.
        Ok(format!(
            "Prepared rename plan for {count} files. Call resolve to apply or discard.\n{}",
            preview.join("\n")
        ))
    }
}

/// `Meeting Notes 2024.TXT` -> `meeting-notes-2024.txt`.
fn restyle(name: &str, style: &NameStyle) -> String {
    let separator = match style {
        NameStyle::Kebab => "-",
        NameStyle::Snake => "_",
    };
    name.to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(separator)
}

/// The previewed renames. `apply` checks the whole plan before renaming anything, so a
/// stale plan fails cleanly and stays pending.
#[pending(apply, reject, label = "Batch rename: {} files", self.plan.len(), source = BatchRenamePreview, details)]
struct RenamePlan {
    dir: PathBuf,
    plan: Vec<(String, String)>,
}

impl RenamePlan {
    async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {
        for (old, new) in &self.plan {
            if !self.dir.join(old).is_file() {
                return Err(ToolError::new(format!(
                    "`{old}` is gone since the preview; preview again"
                )));
            }
            if self.dir.join(new).exists() {
                return Err(ToolError::new(format!("`{new}` exists now; preview again")));
            }
        }
        for (old, new) in &self.plan {
            std::fs::rename(self.dir.join(old), self.dir.join(new))?;
        }
        Ok(format!("Applied batch rename. Reason: {reason}"))
    }

    async fn reject(&mut self, reason: &str) -> String {
        format!("Discarded batch rename. Reason: {reason}")
    }
}

fn list(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

fn show_dir(title: &str, dir: &Path) -> std::io::Result<()> {
    println!("== {title}");
    for name in list(dir)? {
        println!("   {name}");
    }
    println!();
    Ok(())
}

/// One tool call as a transcript: the call, the result, and any reminder for the model.
async fn call(session: &Session, tool: &str, args: serde_json::Value) {
    println!("> {tool} {args}");
    let result = session.call(tool, args).await;
    let marker = if result.is_error() { "<!" } else { "<" };
    for line in result.text_content().lines() {
        println!("{marker} {line}");
    }
    for reminder in session.take_reminders() {
        println!("  (queued for the model: {})", reminder.replace('\n', " "));
    }
    println!();
}

/// `resolve`, shown first as the person deciding sees it.
async fn resolve(session: &Session, action: ResolveAction, reason: &str) {
    if let Some(top) = session.pending().peek() {
        println!("{}", ResolutionView::new(action, &top.label, reason));
    }
    call(
        session,
        "resolve",
        serde_json::json!({"action": action.as_str(), "reason": reason}),
    )
    .await;
}

fn show_pending(session: &Session) {
    println!("== Pending actions (top first, resolved first)");
    let stack = session.pending().snapshot();
    if stack.is_empty() {
        println!("   (none)");
    }
    for summary in stack {
        println!(
            "   {} {} (from {})",
            summary.id, summary.label, summary.source_tool_name
        );
        if let Some(details) = &summary.details {
            println!("      details: {details}");
        }
    }
    println!();
}

fn show_tool_choice(session: &Session) {
    println!("== Tool choice for the next request");
    for dialect in Dialect::ALL {
        match session.resolve_bias(dialect) {
            Some(ResolveBias::ToolChoice(choice)) => println!("   {dialect}: {choice}"),
            Some(ResolveBias::Reminder(_)) => {
                println!("   {dialect}: cannot force a tool; the resolve reminder is sent instead")
            }
            None => println!("   {dialect}: none (nothing pending)"),
        }
    }
    println!();
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = std::env::temp_dir().join(format!("xcsh-batch-rename-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    for name in [
        "Meeting Notes 2024.TXT",
        "Draft_Plan.md",
        "todo list.txt",
        "readme.md",
    ] {
        std::fs::write(scratch.join(name), format!("contents of {name}\n"))?;
    }
    show_dir(
        &format!("Scratch workspace {}", scratch.display()),
        &scratch,
    )?;

    let session = Session::builder()
        .custom::<BatchRenamePreview>()
        .workspace_root(&scratch)
        .build()?;
    println!(
        "== Tools offered to the model: {}\n",
        session.tool_names().join(", ")
    );

    // A bad argument comes back as an error result naming the path.
    call(
        &session,
        "batch_rename_preview",
        serde_json::json!({"files": ["todo list.txt", 2]}),
    )
    .await;

    // The first preview, applied.
    call(
        &session,
        "batch_rename_preview",
        serde_json::json!({"files": ["Meeting Notes 2024.TXT", "Draft_Plan.md", "todo list.txt", "readme.md"]}),
    )
    .await;
    show_pending(&session);
    show_tool_choice(&session);
    resolve(
        &session,
        ResolveAction::Apply,
        "The user approved the new names.",
    )
    .await;
    show_dir("Workspace after apply", &scratch)?;

    // A second preview, discarded: the reject hook's message replaces the default one.
    call(
        &session,
        "batch_rename_preview",
        serde_json::json!({"files": ["meeting-notes-2024.txt", "draft-plan.md"], "style": "snake"}),
    )
    .await;
    show_pending(&session);
    resolve(&session, ResolveAction::Discard, "The user prefers dashes.").await;
    show_dir("Workspace after discard (unchanged)", &scratch)?;
    show_pending(&session);
    show_tool_choice(&session);

    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}
