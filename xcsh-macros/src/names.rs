//! Tool names: the check the runtime makes too (`xcsh-names`), and the defaults derived from
//! Rust identifiers.

/// Checks a tool name (1–64 of `[A-Za-z0-9_-]`, starting with a letter or `_`): the same
/// function the runtime calls, so the two never disagree.
pub(crate) use xcsh_names::validate_tool_name as validate;

/// `BatchRenamePreview` → `batch_rename_preview`, `HTTPGet` → `http_get`, `Grep2` → `grep2`.
pub(crate) fn snake_case(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                // The last capital of an acronym starts a new word: `HTTPGet` → `http_get`.
                Some(p) if p.is_uppercase() => next.is_some_and(char::is_lowercase),
                _ => false,
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `batch_rename_preview` → `BatchRenamePreview` (the fn form's struct name).
pub(crate) fn camel_case(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    ident
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
            first.unwrap_or_default() + chars.as_str()
        })
        .collect()
}

/// `batch_rename_preview` or `ast-edit` → `Batch Rename Preview`, `Ast Edit`.
pub(crate) fn title_case(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
            first.unwrap_or_default() + chars.as_str()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake() {
        assert_eq!(snake_case("BatchRenamePreview"), "batch_rename_preview");
        assert_eq!(snake_case("HTTPGet"), "http_get");
        assert_eq!(snake_case("Grep"), "grep");
        assert_eq!(snake_case("Grep2Files"), "grep2_files");
        assert_eq!(snake_case("r#Type"), "type");
    }

    #[test]
    fn camel_and_title() {
        assert_eq!(camel_case("batch_rename_preview"), "BatchRenamePreview");
        assert_eq!(camel_case("grep"), "Grep");
        assert_eq!(title_case("batch_rename_preview"), "Batch Rename Preview");
        assert_eq!(title_case("ast-edit"), "Ast Edit");
    }

    #[test]
    fn validation() {
        assert!(validate("ast_edit").is_ok());
        assert!(validate("_x-1").is_ok());
        assert!(validate("").unwrap_err().contains("empty"));
        assert!(
            validate("9lives")
                .unwrap_err()
                .contains("start with a letter")
        );
        assert!(validate("has space").unwrap_err().contains("' '"));
        assert!(
            validate(&"a".repeat(65))
                .unwrap_err()
                .contains("65 characters")
        );
        assert!(validate(&"a".repeat(64)).is_ok());
    }
}
