//! A crate that uses xcsh's macros with xcsh as its only dependency, renamed to `tools_fw`,
//! under the strictest lints a library might set.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use tools_fw::{ToolContext, ToolError, ToolSuite, custom_tool, pending, suite, tool_param};

/// A temperature unit.
#[tool_param]
#[serde(rename_all = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Converts a temperature to another unit.
#[custom_tool(read_only, idempotent)]
pub struct ConvertTemperature {
    /// The temperature to convert.
    pub value: f64,
    /// The unit of `value`.
    pub from: Unit,
    /// The unit to convert to.
    pub to: Unit,
}

impl ConvertTemperature {
    async fn execute(self, _ctx: &ToolContext) -> String {
        let celsius = match self.from {
            Unit::Celsius => self.value,
            Unit::Fahrenheit => (self.value - 32.0) * 5.0 / 9.0,
        };
        let converted = match self.to {
            Unit::Celsius => celsius,
            Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
        };
        format!("{converted:.1}")
    }
}

/// Plans deleting a note; the deletion waits for `resolve`.
#[custom_tool(destructive, pending)]
pub async fn delete_note(
    /// The title of the note to delete.
    title: String,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::new("`title` is empty; name the note to delete"));
    }
    ctx.push_pending_action(NoteDeletion {
        title: title.clone(),
    })?;
    Ok(format!(
        "Will delete `{title}`. Call resolve to apply or discard."
    ))
}

/// A note deletion waiting for `resolve`.
#[pending(apply, reject, label = "Delete note: {title}", source = DeleteNote, details)]
pub struct NoteDeletion {
    /// The note to delete.
    pub title: String,
}

impl NoteDeletion {
    async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {
        Ok(format!("Deleted `{}` ({reason}).", self.title))
    }

    async fn reject(&mut self, _reason: &str) -> Option<String> {
        Some(format!("Kept `{}`.", self.title))
    }
}

/// Every tool this crate exports.
pub fn tools() -> ToolSuite {
    suite![ConvertTemperature, DeleteNote]
}
