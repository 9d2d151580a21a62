//! Walking a schema: its subschemas, each with the JSON Pointer suffix that reaches it.

use serde_json::{Map, Value};

use crate::dialect::SINGLE_SUBSCHEMA_KEYWORDS;

/// JSON Pointer token escaping (RFC 6901).
pub(super) fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The subschemas of a schema with their pointer suffixes. With `defs`, the schemas under
/// `$defs`/`definitions` are included.
pub(super) fn subschemas(map: &Map<String, Value>, defs: bool) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (key, value) in map {
        let k = token(key);
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(m) = value {
                    out.extend(m.iter().map(|(n, s)| (format!("/{k}/{}", token(n)), s)));
                }
            }
            "$defs" | "definitions" if defs => {
                if let Value::Object(m) = value {
                    out.extend(m.iter().map(|(n, s)| (format!("/{k}/{}", token(n)), s)));
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    out.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, s)| (format!("/{k}/{i}"), s)),
                    );
                }
            }
            "items" => match value {
                Value::Array(items) => {
                    out.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, s)| (format!("/{k}/{i}"), s)),
                    );
                }
                other => out.push((format!("/{k}"), other)),
            },
            // `additionalProperties: false` is a boolean, not a schema to walk.
            key if SINGLE_SUBSCHEMA_KEYWORDS.contains(&key) && value.is_object() => {
                out.push((format!("/{k}"), value));
            }
            _ => {}
        }
    }
    out
}
