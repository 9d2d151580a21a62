//! The root: one plain object schema (a root `$ref`, `allOf` or `Option<Args>` resolved
//! first), lowered, with the kept recursive definitions under its `$defs`.

use serde_json::{Map, Value, json};

use super::merge::merge_into;
use super::types::{is_null_only, types_of};
use super::{DOCUMENT_KEYWORDS, FieldPath, LowerError, LowerErrorKind, Lowerer, MAX_DEPTH};
use crate::schema::JsonObject;

impl Lowerer<'_> {
    pub(super) fn lower_root(&mut self, schema: &JsonObject) -> Result<JsonObject, LowerError> {
        let path = FieldPath::root();
        let raw = self.root_shape(schema, &path)?;
        // The root is being inlined from here on: a `$ref: "#"` inside it is a cycle.
        self.stack.push("#".into());
        let lowered = self.lower_map(&raw, &path, 0)?;
        self.stack.pop();
        let Value::Object(mut out) = lowered else {
            // `lower_map` returns an object for an object input; keep the compiler honest.
            return Err(self.err(&path, LowerErrorKind::RootUnion));
        };
        out.remove("nullable");
        if !self.gemini() && !out.contains_key("properties") {
            out.insert("properties".into(), Value::Object(Map::new()));
        }
        if !self.kept.is_empty() {
            let defs: Map<String, Value> = std::mem::take(&mut self.kept).into_iter().collect();
            out.insert("$defs".into(), Value::Object(defs));
        }
        Ok(out)
    }

    /// Brings the root to one plain object schema before lowering: resolves a root `$ref`
    /// and `allOf`, unwraps `Option<Args>` (a union with `null`), and refuses anything that is
    /// not an object.
    fn root_shape(
        &mut self,
        schema: &JsonObject,
        path: &FieldPath,
    ) -> Result<JsonObject, LowerError> {
        let mut raw: JsonObject = schema
            .iter()
            .filter(|(k, _)| !DOCUMENT_KEYWORDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // Each round removes one `$ref`, `allOf` or nullable union; bounded for safety
        // against a root that references itself through a chain of plain `$ref`s.
        for _ in 0..MAX_DEPTH {
            if let Some(reference) = raw.get("$ref").cloned() {
                let reference = reference.as_str().map(str::to_owned).ok_or_else(|| {
                    self.err(
                        path,
                        LowerErrorKind::Malformed {
                            detail: "`$ref` is not a string".into(),
                        },
                    )
                })?;
                raw.remove("$ref");
                let target = self.resolve_object(&reference, path)?;
                let mut merged = target;
                merge_into(&mut merged, &raw)
                    .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
                raw = merged;
                continue;
            }
            if raw.contains_key("allOf") {
                raw = self.flatten_all_of(&raw, path)?;
                continue;
            }
            let union_key = ["anyOf", "oneOf"]
                .into_iter()
                .find(|k| raw.contains_key(*k));
            if let Some(key) = union_key {
                let Some(Value::Array(branches)) = raw.get(key) else {
                    return Err(self.err(
                        path,
                        LowerErrorKind::Malformed {
                            detail: format!("`{key}` is not an array"),
                        },
                    ));
                };
                let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null_only(b)).collect();
                let [only] = non_null.as_slice() else {
                    return Err(self.err(path, LowerErrorKind::RootUnion));
                };
                let only = match only {
                    Value::Object(map) => map.clone(),
                    Value::Bool(true) => Map::new(),
                    _ => return Err(self.err(path, LowerErrorKind::Never)),
                };
                let mut rest = raw.clone();
                rest.remove(key);
                let mut merged = only;
                merge_into(&mut merged, &rest)
                    .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
                raw = merged;
                continue;
            }
            break;
        }
        // The root title is the Rust type's name: noise to a model, and dialects that fold
        // titles into descriptions would otherwise describe the tool as "Args".
        raw.remove("title");
        match types_of(&raw) {
            Some(types) if types.iter().any(|t| t == "object") => {
                raw.insert("type".into(), json!("object"));
            }
            Some(_) => {
                return Err(self.err(
                    path,
                    LowerErrorKind::RootNotObject {
                        found: describe_kind(&raw),
                    },
                ));
            }
            None if raw.contains_key("enum") || raw.contains_key("const") => {
                return Err(self.err(
                    path,
                    LowerErrorKind::RootNotObject {
                        found: describe_kind(&raw),
                    },
                ));
            }
            None if raw.contains_key("not") => return Err(self.err(path, LowerErrorKind::Never)),
            // No type: an object schema by its keywords (`properties`), or the empty schema
            // that a tool without declared parameters has. Either way the arguments are an
            // object, and saying so is what every API requires.
            None => {
                raw.insert("type".into(), json!("object"));
            }
        }
        Ok(raw)
    }
}

/// A human name for what a root schema is instead of an object.
fn describe_kind(schema: &JsonObject) -> String {
    if let Some(types) = types_of(schema) {
        let article = |t: &str| match t {
            "integer" | "array" | "object" => format!("an {t}"),
            "null" => "null (a unit struct)".into(),
            _ => format!("a {t}"),
        };
        return types
            .iter()
            .map(|t| article(t.as_str()))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if schema.contains_key("enum") || schema.contains_key("const") {
        return "a fixed value (enum)".into();
    }
    "not an object schema".into()
}
