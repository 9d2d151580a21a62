//! Tool names every provider accepts.

/// Checks a tool name: 1–64 characters of `[A-Za-z0-9_-]`, starting with a letter or `_` —
/// the intersection of what Anthropic, OpenAI, Gemini, Bedrock and MCP clients accept.
///
/// ```
/// assert!(xcsh_core::validate_tool_name("ast_edit").is_ok());
/// assert!(xcsh_core::validate_tool_name("9lives").unwrap_err().contains("start with a letter"));
/// ```
pub fn validate_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("tool name is empty; use 1–64 characters of [A-Za-z0-9_-]".into());
    }
    if name.len() > 64 {
        return Err(format!(
            "tool name `{name}` is {} characters long; the limit is 64",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "tool name `{name}` contains {bad:?}; use only ASCII letters, digits, `_` and `-`"
        ));
    }
    let first = name.as_bytes()[0];
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return Err(format!(
            "tool name `{name}` must start with a letter or `_`"
        ));
    }
    Ok(())
}
