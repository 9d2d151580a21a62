//! Gemini: the `Schema` object, a subset of OpenAPI 3.0.

use serde_json::{Map, Value};

use super::Checker;
use super::walk::{subschemas, token};
use crate::dialect::lower::{GEMINI_KEYWORDS, gemini_format_ok};

/// Fields of Gemini's Schema object that only annotate, beyond those the lowering emits.
const GEMINI_ANNOTATIONS: &[&str] = &["title", "default", "example"];

impl Checker {
    pub(super) fn gemini(&mut self, schema: &Value, pointer: &str, is_root: bool) {
        let Value::Object(map) = schema else {
            self.push(
                pointer,
                "a Gemini Schema must be an object (no boolean schemas)",
            );
            return;
        };
        for key in map.keys() {
            // The lowering emits fewer fields than the Schema object documents (it restates
            // `title`, `default` and `example` in the description); the check allows them all.
            let documented = GEMINI_KEYWORDS.contains(&key.as_str())
                || GEMINI_ANNOTATIONS.contains(&key.as_str());
            if !documented {
                self.push(
                    &format!("{pointer}/{}", token(key)),
                    format!("`{key}` is not a field of Gemini's Schema object; the API refuses unknown fields"),
                );
            }
        }
        let ty = match map.get("type") {
            Some(Value::String(t)) => {
                let t = t.to_ascii_lowercase();
                if !matches!(
                    t.as_str(),
                    "string" | "number" | "integer" | "boolean" | "array" | "object"
                ) {
                    self.push(&format!("{pointer}/type"), format!("`{t}` is not a Gemini type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT)"));
                }
                Some(t)
            }
            Some(Value::Array(_)) => {
                self.push(
                    &format!("{pointer}/type"),
                    "type arrays are not supported; use one type and `nullable: true`",
                );
                None
            }
            Some(_) => {
                self.push(&format!("{pointer}/type"), "`type` must be a string");
                None
            }
            None => {
                if !map.contains_key("anyOf") {
                    self.push(pointer, "every Gemini Schema needs a `type` (or `anyOf`)");
                }
                None
            }
        };
        if let Some(n) = map.get("nullable")
            && !n.is_boolean()
        {
            self.push(&format!("{pointer}/nullable"), "must be a boolean");
        }
        if let Some(values) = map.get("enum") {
            let strings = matches!(values, Value::Array(v) if !v.is_empty() && v.iter().all(Value::is_string));
            if !strings {
                self.push(
                    &format!("{pointer}/enum"),
                    "`enum` must be a non-empty array of strings",
                );
            }
            if ty.as_deref() != Some("string") {
                self.push(
                    &format!("{pointer}/enum"),
                    "`enum` is only for `type: \"string\"`",
                );
            }
        }
        // Without a (valid) type the format cannot be judged; the type is reported already.
        if let (Some(t), Some(format)) = (ty.as_deref(), map.get("format")) {
            let ok = format.as_str().is_some_and(|f| gemini_format_ok(t, f));
            if !ok {
                self.push(
                    &format!("{pointer}/format"),
                    format!("format {format} is not supported for this type (number: float, double; integer: int32, int64; string: enum, date-time)"),
                );
            }
        }
        if ty.as_deref() == Some("array") && !map.contains_key("items") {
            self.push(pointer, "an array needs `items`");
        }
        if ty.as_deref() == Some("object") || map.contains_key("properties") {
            let props = match map.get("properties") {
                Some(Value::Object(p)) => Some(p),
                _ => None,
            };
            if props.is_none_or(Map::is_empty) {
                let hint = if is_root {
                    " (leave `parameters` out for a tool without parameters)"
                } else {
                    ""
                };
                self.push(
                    pointer,
                    format!("\"properties: should be non-empty for OBJECT type\"{hint}"),
                );
            }
            if let Some(Value::Array(required)) = map.get("required") {
                for (i, name) in required.iter().enumerate() {
                    let declared = name
                        .as_str()
                        .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)));
                    if !declared {
                        self.push(
                            &format!("{pointer}/required/{i}"),
                            format!("{name} is required but not a property"),
                        );
                    }
                }
            }
        }
        if let Some(Value::Array(branches)) = map.get("anyOf")
            && branches.is_empty()
        {
            self.push(&format!("{pointer}/anyOf"), "`anyOf` must not be empty");
        }
        for (suffix, sub) in subschemas(map, false) {
            self.gemini(sub, &format!("{pointer}{suffix}"), false);
        }
    }
}
