//! Merging schemas that must all hold (`allOf`, a `$ref` with sibling keywords) into one.

use serde_json::{Map, Value, json};

use super::types::{intersect_types, type_value, types_in};
use super::{FieldPath, LowerError, LowerErrorKind, Lowerer};
use crate::schema::JsonObject;

/// Merges `overlay` into `base` as `allOf` would: properties and `required` are united,
/// types intersected, anything else taken from `overlay` (the outer schema, whose
/// annotations are the more specific).
pub(super) fn merge_into(base: &mut JsonObject, overlay: &JsonObject) -> Result<(), String> {
    for (key, value) in overlay {
        match (key.as_str(), base.get_mut(key)) {
            ("properties" | "patternProperties", Some(Value::Object(existing))) => {
                let Value::Object(more) = value else {
                    return Err(format!("`{key}` is not an object"));
                };
                for (name, schema) in more {
                    let merged = match existing.get(name) {
                        // Same property on both sides: both constraints hold.
                        Some(old) if old != schema => json!({"allOf": [old, schema]}),
                        _ => schema.clone(),
                    };
                    existing.insert(name.clone(), merged);
                }
            }
            ("required", Some(Value::Array(existing))) => {
                let Value::Array(more) = value else {
                    return Err("`required` is not an array".into());
                };
                for name in more {
                    if !existing.contains(name) {
                        existing.push(name.clone());
                    }
                }
            }
            ("type", Some(existing)) => {
                let (Some(a), Some(b)) = (types_in(existing), types_in(value)) else {
                    return Err("`type` is neither a string nor an array".into());
                };
                let both = intersect_types(&a, &b);
                if both.is_empty() {
                    return Err(format!(
                        "type {existing} and type {value} have nothing in common"
                    ));
                }
                *existing = type_value(&both);
            }
            ("allOf", Some(Value::Array(existing))) => {
                if let Value::Array(more) = value {
                    existing.extend(more.iter().cloned());
                }
            }
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(())
}

impl Lowerer<'_> {
    /// Merges an `allOf` into its schema. Parts that reference a kept (recursive) target
    /// cannot be merged and stay in a residual `allOf`.
    pub(super) fn flatten_all_of(
        &mut self,
        schema: &JsonObject,
        path: &FieldPath,
    ) -> Result<JsonObject, LowerError> {
        let Some(Value::Array(parts)) = schema.get("allOf") else {
            return Err(self.err(
                path,
                LowerErrorKind::Malformed {
                    detail: "`allOf` is not an array".into(),
                },
            ));
        };
        let mut merged = Map::new();
        let mut residual = Vec::new();
        for part in parts {
            let part = match part {
                Value::Object(map) => map.clone(),
                Value::Bool(true) => continue,
                Value::Bool(false) => Map::from_iter([("not".to_owned(), json!({}))]),
                _ => {
                    return Err(self.err(
                        path,
                        LowerErrorKind::Malformed {
                            detail: "an `allOf` entry is not a schema".into(),
                        },
                    ));
                }
            };
            if let Some(Value::String(reference)) = part.get("$ref")
                && self.keep.contains(reference)
            {
                residual.push(Value::Object(part));
                continue;
            }
            merge_into(&mut merged, &part)
                .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
        }
        let mut outer = schema.clone();
        outer.remove("allOf");
        merge_into(&mut merged, &outer)
            .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
        if !residual.is_empty() {
            if self.strict() {
                return Err(self.err(path, LowerErrorKind::RefWithKeywords));
            }
            merged.insert("allOf".into(), Value::Array(residual));
        }
        Ok(merged)
    }
}
