//! OpenAI strict mode's rules: closed objects, every property required (optional ones
//! nullable), only the supported keywords and formats.

use serde_json::{Map, Value, json};

use super::restricted::{flatten_nested_any_of, split_type_union};
use super::types::{admits_null, types_of};
use super::{FieldPath, LowerError, LowerErrorKind, Lowerer, required_names};
use crate::schema::JsonObject;

/// Keywords OpenAI strict mode accepts (Structured Outputs, "Supported schemas").
pub(in crate::dialect) const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// String formats OpenAI strict mode accepts.
pub(in crate::dialect) const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

impl Lowerer<'_> {
    pub(super) fn finish_openai(
        &mut self,
        mut out: JsonObject,
        path: &FieldPath,
    ) -> Result<Value, LowerError> {
        self.refuse_never_fold_one_of(&mut out, path)?;
        flatten_nested_any_of(&mut out);
        self.refuse_map(&out, path)?;
        self.untuple(&mut out, path)?;
        split_type_union(&mut out);

        let is_object = types_of(&out).is_some_and(|t| t.iter().any(|t| t == "object"))
            || out.contains_key("properties");
        if is_object {
            let properties = match out.remove("properties") {
                Some(Value::Object(p)) => p,
                None => Map::new(),
                Some(_) => {
                    return Err(self.err(
                        path,
                        LowerErrorKind::Malformed {
                            detail: "`properties` is not an object".into(),
                        },
                    ));
                }
            };
            let required = required_names(&out);
            let mut closed = Map::new();
            for (name, schema) in properties {
                let schema = if required.contains(&name) {
                    schema
                } else {
                    make_nullable(schema)
                };
                closed.insert(name, schema);
            }
            out.insert("required".into(), all_required(&required, &closed));
            out.insert("properties".into(), Value::Object(closed));
            out.insert("additionalProperties".into(), Value::Bool(false));
            if !out.contains_key("type") {
                out.insert("type".into(), json!("object"));
            }
        }

        let typed = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k));
        if !typed {
            return Err(self.err(path, LowerErrorKind::AnyValue));
        }

        let mut notes = Vec::new();
        notes.extend(Self::default_note(&out));
        if let Some(Value::String(format)) = out.get("format")
            && !OPENAI_FORMATS.contains(&format.as_str())
        {
            // Numeric formats (`uint8`, `int64`, `double`) are schemars' Rust types; their
            // range is already in minimum/maximum. String formats (`uri`) carry meaning.
            if types_of(&out).is_some_and(|t| t.iter().any(|t| t == "string")) {
                notes.push(format!("Format: {format}."));
            }
            out.remove("format");
        }
        if out.get("uniqueItems") == Some(&Value::Bool(true)) {
            notes.push("Items must be unique.".into());
        }
        Self::restate(&mut out, notes);
        out.retain(|k, _| OPENAI_KEYWORDS.contains(&k.as_str()));
        Ok(Value::Object(out))
    }
}

/// Strict mode's `required`: the originally required names first (declaration order, as
/// schemars wrote them), then the rest sorted, so the output does not depend on whether
/// serde_json preserves key order.
fn all_required(required: &[String], properties: &JsonObject) -> Value {
    let mut names: Vec<String> = required
        .iter()
        .filter(|n| properties.contains_key(*n))
        .cloned()
        .collect();
    let mut rest: Vec<String> = properties
        .keys()
        .filter(|k| !required.contains(k))
        .cloned()
        .collect();
    rest.sort();
    names.extend(rest);
    Value::Array(names.into_iter().map(Value::String).collect())
}

/// Makes an OpenAI-strict schema also accept `null`: `type: [T, "null"]` for scalars and
/// arrays, an `anyOf` with `{"type": "null"}` otherwise (both forms are in OpenAI's guide).
fn make_nullable(schema: Value) -> Value {
    if admits_null(&schema) {
        return schema;
    }
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let structural = |m: &JsonObject| {
        m.contains_key("enum")
            || m.contains_key("const")
            || m.contains_key("anyOf")
            || m.contains_key("$ref")
    };
    if let Some(Value::String(t)) = map.get("type")
        && matches!(
            t.as_str(),
            "string" | "number" | "integer" | "boolean" | "array"
        )
        && !structural(&map)
    {
        let t = t.clone();
        map.insert("type".into(), json!([t, "null"]));
        return Value::Object(map);
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return Value::Object(map);
    }
    let description = map.remove("description");
    let mut wrapper = Map::new();
    if let Some(d) = description {
        wrapper.insert("description".into(), d);
    }
    wrapper.insert(
        "anyOf".into(),
        json!([Value::Object(map), {"type": "null"}]),
    );
    Value::Object(wrapper)
}
