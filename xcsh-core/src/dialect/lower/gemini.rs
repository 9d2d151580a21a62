//! Gemini's rules: the `Schema` object, a subset of OpenAPI 3.0 (one type plus `nullable`,
//! string enums only, no references).

use serde_json::{Value, json};

use super::restricted::{flatten_branches, split_type_union};
use super::types::{is_null_only, type_value, types_of};
use super::{FieldPath, LowerError, LowerErrorKind, Lowerer, required_names};
use crate::schema::JsonObject;

/// Fields of Gemini's `Schema` object that xcsh emits.
pub(in crate::dialect) const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "anyOf",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// Whether Gemini accepts `format` on a schema of JSON type `ty`.
pub(in crate::dialect) fn gemini_format_ok(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("number", "float" | "double")
            | ("integer", "int32" | "int64")
            | ("string", "enum" | "date-time")
    )
}

impl Lowerer<'_> {
    pub(super) fn finish_gemini(
        &mut self,
        mut out: JsonObject,
        path: &FieldPath,
    ) -> Result<Value, LowerError> {
        self.refuse_never_fold_one_of(&mut out, path)?;
        self.refuse_map(&out, path)?;
        self.untuple(&mut out, path)?;
        let mut notes = Vec::new();
        let mut nullable = out.get("nullable") == Some(&Value::Bool(true));

        // Type arrays: one type plus `nullable`.
        if let Some(mut types) = types_of(&out) {
            if types.iter().any(|t| t == "null") && types.len() > 1 {
                types.retain(|t| t != "null");
                nullable = true;
            }
            if types.len() > 1 {
                split_type_union(&mut out);
            } else {
                out.insert("type".into(), type_value(&types));
            }
        }

        // `const` is not in the Schema object: a string const is a one-value enum.
        if let Some(c) = out.remove("const") {
            out.insert("enum".into(), json!([c]));
        }
        if let Some(Value::Array(values)) = out.get("enum").cloned() {
            let mut values = values;
            if values.contains(&Value::Null) {
                values.retain(|v| !v.is_null());
                nullable = true;
            }
            if values.iter().all(Value::is_string) && !values.is_empty() {
                out.insert("enum".into(), Value::Array(values));
                out.insert("type".into(), json!("string"));
            } else {
                // Gemini's enum holds strings only: keep the constraint in words.
                let listed: Vec<String> = values.iter().map(Value::to_string).collect();
                notes.push(format!("Allowed values: {}.", listed.join(", ")));
                out.remove("enum");
            }
        }

        if let Some(Value::Array(branches)) = out.remove("anyOf") {
            let mut kept = Vec::with_capacity(branches.len());
            for branch in branches {
                if is_null_only(&branch) {
                    nullable = true;
                } else if let Value::Object(b) = &branch
                    && b.get("nullable") == Some(&Value::Bool(true))
                {
                    nullable = true;
                    kept.push(branch);
                } else {
                    kept.push(branch);
                }
            }
            let mut branches = flatten_branches(kept);
            fold_string_enums(&mut branches, &mut notes);
            match branches.len() {
                0 => return Err(self.err(path, LowerErrorKind::AlwaysNull)),
                1 => {
                    // One alternative left: it is the schema (the outer annotations win).
                    if let Some(Value::Object(only)) = branches.pop() {
                        let outer = std::mem::take(&mut out);
                        out = only;
                        for (k, v) in outer {
                            out.insert(k, v);
                        }
                    }
                }
                _ => {
                    out.insert("anyOf".into(), Value::Array(branches));
                }
            }
            if out.get("nullable") == Some(&Value::Bool(true)) {
                nullable = true;
            }
        }

        // A `{"type": "null"}` left here is an `anyOf` branch (folded into `nullable` by the
        // parent) or a field the parent refuses as AlwaysNull; either way not an error yet.

        let is_object = types_of(&out).is_some_and(|t| t.iter().any(|t| t == "object"))
            || out.contains_key("properties");
        if is_object {
            let empty = match out.get("properties") {
                Some(Value::Object(p)) => p.is_empty(),
                _ => true,
            };
            if empty {
                if !path.is_root() {
                    return Err(self.err(path, LowerErrorKind::EmptyObject));
                }
                out.remove("properties");
                out.remove("required");
            }
            if let Some(Value::Object(props)) = out.get("properties") {
                let required: Vec<Value> = required_names(&out)
                    .into_iter()
                    .filter(|n| props.contains_key(n))
                    .map(Value::String)
                    .collect();
                if required.is_empty() {
                    out.remove("required");
                } else {
                    out.insert("required".into(), Value::Array(required));
                }
            }
            if !out.contains_key("type") {
                out.insert("type".into(), json!("object"));
            }
        }

        let typed = out.contains_key("type") || out.contains_key("anyOf");
        if !typed {
            return Err(self.err(path, LowerErrorKind::AnyValue));
        }

        notes.extend(Self::default_note(&out));
        if let (Some(Value::String(ty)), Some(Value::String(format))) =
            (out.get("type"), out.get("format"))
            && !gemini_format_ok(ty, format)
        {
            if ty == "string" {
                notes.push(format!("Format: {format}."));
            }
            out.remove("format");
        }
        if out.get("uniqueItems") == Some(&Value::Bool(true)) {
            notes.push("Items must be unique.".into());
        }
        if let Some(v) = out.get("exclusiveMinimum") {
            notes.push(format!("Must be greater than {v}."));
        }
        if let Some(v) = out.get("exclusiveMaximum") {
            notes.push(format!("Must be less than {v}."));
        }
        if let Some(v) = out.get("multipleOf") {
            notes.push(format!("Must be a multiple of {v}."));
        }
        Self::restate(&mut out, notes);
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        } else {
            out.remove("nullable");
        }
        out.retain(|k, _| GEMINI_KEYWORDS.contains(&k.as_str()));
        Ok(Value::Object(out))
    }
}

/// Gemini: merges branches that are string enums (schemars' unit variants, documented or
/// not) into one `enum` branch, folding each variant's doc comment into `notes`.
fn fold_string_enums(branches: &mut Vec<Value>, notes: &mut Vec<String>) {
    let is_string_enum = |b: &Value| {
        let Value::Object(m) = b else { return false };
        m.get("type") == Some(&json!("string"))
            && matches!(m.get("enum"), Some(Value::Array(v)) if v.iter().all(Value::is_string))
            && m.keys()
                .all(|k| matches!(k.as_str(), "type" | "enum" | "description"))
    };
    let count = branches.iter().filter(|b| is_string_enum(b)).count();
    if count < 2 {
        return;
    }
    let mut values = Vec::new();
    let mut documented = Vec::new();
    let mut first_at = None;
    let mut i = 0;
    branches.retain(|b| {
        let here = i;
        i += 1;
        if !is_string_enum(b) {
            return true;
        }
        first_at.get_or_insert(here);
        if let Value::Object(m) = b {
            let vals: Vec<Value> = match m.get("enum") {
                Some(Value::Array(v)) => v.clone(),
                _ => Vec::new(),
            };
            if let Some(Value::String(d)) = m.get("description") {
                let names: Vec<String> = vals
                    .iter()
                    .filter_map(|v| v.as_str().map(|s| format!("`{s}`")))
                    .collect();
                documented.push(format!("\n- {}: {d}", names.join(", ")));
            }
            values.extend(vals);
        }
        false
    });
    // A Markdown list (Gemini descriptions may be Markdown) of the documented values.
    notes.extend(documented);
    let merged = json!({"type": "string", "enum": values});
    let at = first_at.unwrap_or(0).min(branches.len());
    branches.insert(at, merged);
}
