//! `$ref`s: every reference must resolve inside the document.

use serde_json::Value;

use super::Checker;
use super::walk::subschemas;

impl Checker {
    /// Every `$ref` must resolve inside the document (no external or anchor references).
    pub(super) fn refs(&mut self, root: &Value, schema: &Value, pointer: &str) {
        let Value::Object(map) = schema else { return };
        if let Some(r) = map.get("$ref") {
            match r.as_str() {
                Some(r) if resolves(root, r) => {}
                Some(r) => self.push(
                    &format!("{pointer}/$ref"),
                    format!("`$ref: {r:?}` does not resolve inside this schema; inline the definition or put it under the root's `$defs`"),
                ),
                None => self.push(&format!("{pointer}/$ref"), "`$ref` must be a string"),
            }
        }
        for (suffix, sub) in subschemas(map, true) {
            self.refs(root, sub, &format!("{pointer}{suffix}"));
        }
    }
}

/// Whether a `$ref` resolves inside `root`.
pub(super) fn resolves(root: &Value, reference: &str) -> bool {
    let Some(fragment) = reference.strip_prefix('#') else {
        return false;
    };
    if fragment.is_empty() {
        return true;
    }
    fragment.starts_with('/') && root.pointer(fragment).is_some()
}
