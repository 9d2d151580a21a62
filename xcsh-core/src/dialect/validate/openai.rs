//! OpenAI strict mode: the Structured Outputs subset of JSON Schema and its size limits.

use serde_json::Value;

use super::Checker;
use super::refs::resolves;
use super::walk::{subschemas, token};
use crate::dialect::Dialect;
use crate::dialect::lower::{OPENAI_FORMATS, OPENAI_KEYWORDS};

/// OpenAI strict mode's documented size limits.
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_STRING_BUDGET: usize = 120_000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_LARGE_ENUM_CHARS: usize = 15_000;

impl Checker {
    pub(super) fn strict_flag(&mut self, value: Option<&Value>, pointer: &str) -> bool {
        match value {
            Some(Value::Bool(b)) => *b,
            None => false,
            Some(_) => {
                self.push(pointer, "must be a boolean");
                false
            }
        }
    }

    pub(super) fn openai_parameters(&mut self, value: Option<&Value>, pointer: &str, strict: bool) {
        if value.is_none() && !strict {
            return; // a function without parameters
        }
        self.schema_at(Dialect::OpenAiChat, value, pointer, strict);
    }

    pub(super) fn openai(
        &mut self,
        schema: &Value,
        root: &Value,
        pointer: &str,
        nesting: usize,
        is_root: bool,
    ) {
        let Value::Object(map) = schema else {
            self.push(pointer, "boolean schemas are not supported in strict mode; use an object schema with a `type`");
            return;
        };
        for key in map.keys() {
            // `title` is not in the documented list, but OpenAI's own SDK sends pydantic's
            // titles in strict schemas, so the API takes it.
            let allowed = (OPENAI_KEYWORDS.contains(&key.as_str()) || key == "title")
                && (key != "$defs" || is_root);
            if !allowed {
                self.push(
                    &format!("{pointer}/{}", token(key)),
                    format!("`{key}` is not supported in strict mode (Structured Outputs supported schemas); remove it"),
                );
            }
        }
        if let Some(r) = map.get("$ref") {
            let ok = r
                .as_str()
                .is_some_and(|r| (r == "#" || r.starts_with("#/$defs/")) && resolves(root, r));
            if !ok {
                self.push(
                    &format!("{pointer}/$ref"),
                    format!("`$ref: {r}` must point to `#` or into the root's `$defs`"),
                );
            }
            if map.len() > 1 {
                self.push(pointer, "`$ref` must stand alone in strict mode; move the other keywords into the definition or wrap the reference in `anyOf`");
            }
        }
        let typed = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| map.contains_key(*k));
        if !typed {
            self.push(
                pointer,
                "every schema needs a `type` in strict mode (or `anyOf`/`$ref`/`enum`/`const`)",
            );
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let is_object = types.contains(&"object") || map.contains_key("properties");
        let mut nesting = nesting;
        if is_object {
            nesting += 1;
            self.deepest = self.deepest.max(nesting);
            if nesting == OPENAI_MAX_NESTING + 1 {
                self.push(pointer, format!("objects nest deeper than {OPENAI_MAX_NESTING} levels, the strict-mode limit; flatten the parameters"));
            }
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                self.push(
                    pointer,
                    "every object needs `additionalProperties: false` in strict mode",
                );
            }
            let props = match map.get("properties") {
                Some(Value::Object(p)) => Some(p),
                _ => None,
            };
            let required: Vec<&str> = match map.get("required") {
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if let Some(props) = props {
                self.properties += props.len();
                self.string_budget += props.keys().map(|k| k.chars().count()).sum::<usize>();
                let missing: Vec<&str> = props
                    .keys()
                    .map(String::as_str)
                    .filter(|k| !required.contains(k))
                    .collect();
                if !missing.is_empty() {
                    self.push(
                        pointer,
                        format!("`required` must list every property in strict mode; missing: {} (make an optional field nullable instead)", missing.join(", ")),
                    );
                }
            }
            for name in &required {
                if !props.is_some_and(|p| p.contains_key(*name)) {
                    self.push(
                        &format!("{pointer}/required"),
                        format!("`{name}` is required but not a property"),
                    );
                }
            }
        }
        if let Some(Value::String(format)) = map.get("format")
            && !OPENAI_FORMATS.contains(&format.as_str())
        {
            self.push(
                &format!("{pointer}/format"),
                format!(
                    "format `{format}` is not supported in strict mode (supported: {})",
                    OPENAI_FORMATS.join(", ")
                ),
            );
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            let chars: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            self.string_budget += chars;
            if values.len() > OPENAI_LARGE_ENUM && chars > OPENAI_LARGE_ENUM_CHARS {
                self.push(
                    &format!("{pointer}/enum"),
                    format!("an enum of more than {OPENAI_LARGE_ENUM} values may total at most {OPENAI_LARGE_ENUM_CHARS} characters in strict mode; this one has {chars}"),
                );
            }
        }
        if let Some(Value::String(c)) = map.get("const") {
            self.string_budget += c.chars().count();
        }
        if let Some(Value::Object(defs)) = map.get("$defs") {
            self.string_budget += defs.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for (suffix, sub) in subschemas(map, true) {
            let child = format!("{pointer}{suffix}");
            self.openai(sub, root, &child, nesting, false);
        }
    }

    pub(super) fn openai_totals(&mut self, pointer: &str) {
        if self.properties > OPENAI_MAX_PROPERTIES {
            self.push(
                pointer,
                format!(
                    "{} properties in total; strict mode allows {OPENAI_MAX_PROPERTIES}",
                    self.properties
                ),
            );
        }
        if self.enum_values > OPENAI_MAX_ENUM_VALUES {
            self.push(
                pointer,
                format!(
                    "{} enum values in total; strict mode allows {OPENAI_MAX_ENUM_VALUES}",
                    self.enum_values
                ),
            );
        }
        if self.string_budget > OPENAI_MAX_STRING_BUDGET {
            self.push(
                pointer,
                format!("property names, definition names, enum and const values total {} characters; strict mode allows {OPENAI_MAX_STRING_BUDGET}", self.string_budget),
            );
        }
    }
}
