//! Names for xcsh, shared by its macros (at compile time) and its runtime (at registration),
//! so that both judge a tool name alike and suggest the same corrections: the tool-name rule
//! every provider accepts ([`validate_tool_name`]) and did-you-mean ([`closest`]).
//!
//! Depend on `xcsh`, which re-exports what a tool author needs.

#![forbid(unsafe_code)]

/// Checks a tool name: 1–64 characters of `[A-Za-z0-9_-]`, starting with a letter or `_` —
/// the intersection of what Anthropic, OpenAI, Gemini, Bedrock and MCP clients accept. The
/// error says what is wrong, in the order: empty, too long, a character, the first one.
///
/// ```
/// assert!(xcsh_names::validate_tool_name("ast_edit").is_ok());
/// assert!(xcsh_names::validate_tool_name("9lives").unwrap_err().contains("start with a letter"));
/// assert!(xcsh_names::validate_tool_name("a b").unwrap_err().contains("contains ' '"));
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

/// The candidate close enough to `given` to be what was meant, if any: Jaro–Winkler above
/// 0.8, as darling uses, because it favours shared prefixes (`labl` → `label`); and one edit
/// counts as close too, since Jaro–Winkler misses a transposition in a short word (`dri` for
/// `dir`).
///
/// ```
/// use xcsh_names::closest;
/// assert_eq!(closest("lable", ["name", "label"]), Some("label"));
/// assert_eq!(closest("dri", ["dir", "glob"]), Some("dir"));
/// assert_eq!(closest("zzz", ["dir", "glob"]), None);
/// ```
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| {
            let one_edit = given.len() > 1 && strsim::osa_distance(given, c) <= 1;
            let score = strsim::jaro_winkler(given, c).max(if one_edit { 0.85 } else { 0.0 });
            (score, c)
        })
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
