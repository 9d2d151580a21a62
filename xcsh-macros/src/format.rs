//! Reading `format!` strings: which names a label interpolates, so a missing field is
//! reported by the macro (with a suggestion) rather than as "cannot find value".

/// The identifiers named by `{name}` / `{name:spec}` placeholders, in order. Positional
/// (`{}`, `{0}`) placeholders are skipped; `{{` and `}}` are escapes.
pub(crate) fn named_placeholders(format: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut chars = format.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if chars.peek().is_some_and(|&(_, n)| n == '{') => {
                chars.next();
            }
            '{' => {
                let rest = &format[i + 1..];
                let end = rest.find('}').unwrap_or(rest.len());
                let inner = &rest[..end];
                let name = inner.split(':').next().unwrap_or("").trim();
                let name = name.strip_prefix("r#").unwrap_or(name);
                if name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                {
                    names.push(name.to_owned());
                }
                // Skip to the closing brace.
                while let Some(&(_, n)) = chars.peek() {
                    chars.next();
                    if n == '}' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::named_placeholders;

    #[test]
    fn placeholders() {
        assert_eq!(
            named_placeholders("Batch rename: {count} files in {dir:?}, {} and {0} {{literal}}"),
            ["count", "dir"]
        );
        assert_eq!(named_placeholders("{width:>8}"), ["width"]);
        assert!(named_placeholders("no placeholders").is_empty());
    }
}
