//! The JSON types a schema allows: reading `type`, intersecting type sets, and whether a
//! schema admits `null`.

use serde_json::{Value, json};

use super::ANNOTATIONS;
use crate::schema::JsonObject;

/// The JSON types a `type` keyword allows, or `None` when it has none.
pub(super) fn types_of(schema: &JsonObject) -> Option<Vec<String>> {
    types_in(schema.get("type")?)
}

/// The JSON types in the value of a `type` keyword.
pub(super) fn types_in(ty: &Value) -> Option<Vec<String>> {
    match ty {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

pub(super) fn type_value(types: &[String]) -> Value {
    match types {
        [one] => Value::String(one.clone()),
        many => Value::Array(many.iter().cloned().map(Value::String).collect()),
    }
}

/// The types both lists allow (`integer` is also a `number`).
pub(super) fn intersect_types(a: &[String], b: &[String]) -> Vec<String> {
    let mut both: Vec<String> = Vec::new();
    for t in a {
        let common = if b.contains(t) {
            Some(t.clone())
        } else if (t == "integer" && b.iter().any(|x| x == "number"))
            || (t == "number" && b.iter().any(|x| x == "integer"))
        {
            Some("integer".to_owned())
        } else {
            None
        };
        if let Some(c) = common
            && !both.contains(&c)
        {
            both.push(c);
        }
    }
    both
}

/// Whether a schema admits `null` (on its face: `{}` does, a `$ref` is not followed).
pub(super) fn admits_null(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return schema == &Value::Bool(true);
    };
    if let Some(types) = types_of(map) {
        return types.iter().any(|t| t == "null");
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return values.contains(&Value::Null);
    }
    if let Some(c) = map.get("const") {
        return c.is_null();
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        return true;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            return branches.iter().any(admits_null);
        }
    }
    !map.contains_key("$ref") && map.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

/// Whether a schema is exactly "the null type" (with at most annotations beside).
pub(super) fn is_null_only(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type") == Some(&json!("null"))
        && map
            .keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}
