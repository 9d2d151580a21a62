//! Rewrites both restricted dialects (OpenAI strict mode, Gemini) share: refusing maps and
//! mixed tuples, unions as an `anyOf` of single types, dropped annotations restated in the
//! description.

use serde_json::{Map, Value, json};

use super::types::types_of;
use super::{FieldPath, LowerError, LowerErrorKind, Lowerer};
use crate::schema::JsonObject;

impl Lowerer<'_> {
    /// The first step of both finishers: `not: {}` (a `false` schema) accepts nothing, and
    /// `oneOf` becomes `anyOf`, the only one supported (schemars' `oneOf`s are disjoint
    /// anyway, by distinct tags).
    pub(super) fn refuse_never_fold_one_of(
        &self,
        out: &mut JsonObject,
        path: &FieldPath,
    ) -> Result<(), LowerError> {
        if out.get("not") == Some(&json!({})) {
            return Err(self.err(path, LowerErrorKind::Never));
        }
        if let Some(one_of) = out.remove("oneOf") {
            if out.contains_key("anyOf") {
                return Err(self.err(
                    path,
                    LowerErrorKind::Malformed {
                        detail: "both `anyOf` and `oneOf` on one schema".into(),
                    },
                ));
            }
            out.insert("anyOf".into(), one_of);
        }
        Ok(())
    }

    /// Homogeneous tuples become arrays with a fixed length; others cannot be expressed.
    pub(super) fn untuple(&self, out: &mut JsonObject, path: &FieldPath) -> Result<(), LowerError> {
        let Some(Value::Array(items)) = out.remove("prefixItems") else {
            return Ok(());
        };
        let rest_ok = matches!(out.get("items"), None | Some(Value::Bool(false)));
        let Some(first) = items.first() else {
            out.insert("maxItems".into(), json!(0));
            out.remove("items");
            return Ok(());
        };
        if !rest_ok || items.iter().any(|i| i != first) {
            return Err(self.err(path, LowerErrorKind::Tuple));
        }
        out.insert("items".into(), first.clone());
        out.insert("minItems".into(), json!(items.len()));
        out.insert("maxItems".into(), json!(items.len()));
        Ok(())
    }

    /// Refuses open objects (maps) in dialects that need every property declared.
    pub(super) fn refuse_map(&self, out: &JsonObject, path: &FieldPath) -> Result<(), LowerError> {
        let open_additional = match out.get("additionalProperties") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => true,
        };
        let pattern =
            matches!(out.get("patternProperties"), Some(Value::Object(m)) if !m.is_empty());
        // A bare `{type: object}` is what schemars writes for `struct Empty {}`; an object of
        // anything (`serde_json::Map`) says `additionalProperties: true`. So the bare form
        // is taken as an empty struct, not as a map.
        if open_additional || pattern {
            return Err(self.err(path, LowerErrorKind::Map));
        }
        Ok(())
    }

    /// Annotations the dialect drops, restated in the description so the model keeps them.
    pub(super) fn restate(out: &mut JsonObject, notes: Vec<String>) {
        if out.get("description").is_none()
            && let Some(Value::String(title)) = out.get("title")
        {
            out.insert("description".into(), Value::String(title.clone()));
        }
        if notes.is_empty() {
            return;
        }
        let mut text = match out.get("description") {
            Some(Value::String(d)) => d.clone(),
            _ => String::new(),
        };
        for note in notes {
            // A note that starts a new line (a Markdown list item) goes on as it is; a
            // sentence follows the previous one after a space.
            let item = note.starts_with('\n');
            if !text.is_empty() && !item {
                if !text.ends_with(['.', '!', '?', ':']) {
                    text.push('.');
                }
                text.push(' ');
            }
            if text.is_empty() && item {
                text.push_str(note.trim_start());
            } else {
                text.push_str(&note);
            }
        }
        out.insert("description".into(), Value::String(text));
    }

    pub(super) fn default_note(out: &JsonObject) -> Option<String> {
        out.get("default").map(|d| format!("Default: {d}."))
    }
}

/// Replaces `type: ["string", "integer"]` (several non-null types) by an `anyOf` of one
/// type each, since neither OpenAI strict mode nor Gemini documents multi-type arrays beyond
/// `[T, "null"]`.
pub(super) fn split_type_union(out: &mut JsonObject) {
    let Some(types) = types_of(out) else { return };
    let non_null: Vec<&String> = types.iter().filter(|t| t.as_str() != "null").collect();
    if non_null.len() < 2 {
        return;
    }
    let description = out.remove("description");
    let mut branches: Vec<Value> = types
        .iter()
        .map(|t| {
            let mut branch = out.clone();
            branch.insert("type".into(), Value::String(t.clone()));
            Value::Object(branch)
        })
        .collect();
    if let Some(Value::Array(existing)) = out.get("anyOf") {
        branches.extend(existing.iter().cloned());
    }
    out.clear();
    if let Some(d) = description {
        out.insert("description".into(), d);
    }
    out.insert("anyOf".into(), Value::Array(branches));
}

/// Splices branches that are themselves plain `anyOf`s into the parent's list.
pub(super) fn flatten_nested_any_of(out: &mut JsonObject) {
    let Some(Value::Array(branches)) = out.remove("anyOf") else {
        return;
    };
    let mut adopted = None;
    let flat = branches
        .into_iter()
        .flat_map(|b| match b {
            Value::Object(mut m)
                if matches!(m.get("anyOf"), Some(Value::Array(_)))
                    && m.keys().all(|k| k == "anyOf" || k == "description") =>
            {
                if let Some(d) = m.remove("description") {
                    adopted.get_or_insert(d);
                }
                match m.remove("anyOf") {
                    Some(Value::Array(inner)) => inner,
                    _ => Vec::new(),
                }
            }
            other => vec![other],
        })
        .collect();
    out.insert("anyOf".into(), Value::Array(flat));
    if let Some(d) = adopted
        && !out.contains_key("description")
    {
        out.insert("description".into(), d);
    }
}

/// [`flatten_nested_any_of`] for a list of branches.
pub(super) fn flatten_branches(branches: Vec<Value>) -> Vec<Value> {
    let mut holder = Map::from_iter([("anyOf".to_owned(), Value::Array(branches))]);
    flatten_nested_any_of(&mut holder);
    match holder.remove("anyOf") {
        Some(Value::Array(b)) => b,
        _ => Vec::new(),
    }
}
