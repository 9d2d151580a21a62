//! Undoing what OpenAI strict mode makes a model send, before serde decodes the arguments.
//!
//! Strict mode lists every property in `required`, so a model cannot omit an optional
//! field: it sends `null` instead. serde reads `null` as `None` for an `Option` field, but a
//! field with `#[serde(default)]` and a non-`Option` type (`limit: u32`) would fail with
//! "invalid type: null". Removing those `null`s gives back exactly the plain arguments (the
//! field omitted), which is what the canonical schema describes.

use serde_json::Value;

use super::Dialect;
use crate::schema::JsonObject;

/// How many `$ref` hops one value may take before the schema is deemed cyclic without
/// progress (`A = {$ref: B}`, `B = {$ref: A}`).
const MAX_REF_HOPS: usize = 64;

/// Rewrites arguments a model produced under `dialect` into the plain form the canonical
/// schema describes, in place.
///
/// For OpenAI strict mode ([`Dialect::is_openai_strict`]) an object member whose value is
/// `null` is removed when the canonical schema does not require that property: strict mode
/// forced the model to send something, and `null` is how it says "not given". Everything
/// else is left as it is (`null` in a required field, in an array, in a map). Other dialects
/// do not rewrite schemas that way, and their arguments are returned untouched.
///
/// The walk follows the schema through `$ref`, `allOf`, and the branch of an
/// `anyOf`/`oneOf` that fits the value (tags and `const`s decide, as for serde's enums).
///
/// ```
/// use serde_json::json;
/// use xcsh_core::dialect::{Dialect, restore_arguments};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
/// struct Args {
///     path: String,
///     #[serde(default)]
///     limit: u32,
///     glob: Option<String>,
/// }
/// let canonical = xcsh_core::schema::schema_for::<Args>();
///
/// // What a strict-mode model sends: every field, `null` for those it leaves out.
/// let mut args = json!({"path": "src", "limit": null, "glob": null});
/// restore_arguments(Dialect::OpenAiChat, &canonical, &mut args);
/// assert_eq!(args, json!({"path": "src"}));
/// let decoded: Args = serde_json::from_value(args)?;
/// assert_eq!(decoded, Args { path: "src".into(), limit: 0, glob: None });
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn restore_arguments(dialect: Dialect, canonical: &JsonObject, arguments: &mut Value) {
    if !dialect.is_openai_strict() {
        return;
    }
    let restorer = Restorer { root: canonical };
    restorer.walk(canonical, arguments, 0);
}

struct Restorer<'a> {
    root: &'a JsonObject,
}

/// What one schema (with its `$ref`s and `allOf`s followed) says about a value's parts.
#[derive(Default)]
struct View<'a> {
    properties: Vec<&'a JsonObject>,
    required: Vec<&'a str>,
    additional: Vec<&'a JsonObject>,
    items: Vec<&'a JsonObject>,
    prefix_items: Vec<&'a Vec<Value>>,
    unions: Vec<&'a Vec<Value>>,
}

impl<'a> Restorer<'a> {
    fn resolve(&self, reference: &str) -> Option<&'a JsonObject> {
        let fragment = reference.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        let mut tokens = fragment.strip_prefix('/')?.split('/');
        let first = tokens.next()?.replace("~1", "/").replace("~0", "~");
        let mut at = self.root.get(&first)?;
        for raw in tokens {
            let token = raw.replace("~1", "/").replace("~0", "~");
            at = match at {
                Value::Object(map) => map.get(&token)?,
                Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        at.as_object()
    }

    fn gather(&self, schema: &'a JsonObject, view: &mut View<'a>, hops: usize) {
        if hops > MAX_REF_HOPS {
            return;
        }
        if let Some(Value::String(reference)) = schema.get("$ref")
            && let Some(target) = self.resolve(reference)
        {
            self.gather(target, view, hops + 1);
        }
        if let Some(Value::Object(props)) = schema.get("properties") {
            view.properties.push(props);
        }
        if let Some(Value::Array(names)) = schema.get("required") {
            view.required.extend(names.iter().filter_map(Value::as_str));
        }
        if let Some(Value::Object(extra)) = schema.get("additionalProperties") {
            view.additional.push(extra);
        }
        match schema.get("items") {
            Some(Value::Object(items)) => view.items.push(items),
            Some(Value::Array(tuple)) => view.prefix_items.push(tuple),
            _ => {}
        }
        if let Some(Value::Array(tuple)) = schema.get("prefixItems") {
            view.prefix_items.push(tuple);
        }
        if let Some(Value::Array(parts)) = schema.get("allOf") {
            for part in parts.iter().filter_map(Value::as_object) {
                self.gather(part, view, hops + 1);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                view.unions.push(branches);
            }
        }
    }

    fn walk(&self, schema: &'a JsonObject, value: &mut Value, depth: usize) {
        // serde_json limits parsed documents to 128 levels; a deeper value was built in
        // code, and is left alone rather than risking the stack.
        if depth > 256 {
            return;
        }
        let mut view = View::default();
        self.gather(schema, &mut view, 0);
        match value {
            Value::Object(members) => {
                let declared = |name: &str| view.properties.iter().find_map(|p| p.get(name));
                members.retain(|name, v| {
                    !(v.is_null()
                        && declared(name).is_some()
                        && !view.required.contains(&name.as_str()))
                });
                for (name, v) in members.iter_mut() {
                    if let Some(Value::Object(sub)) = declared(name) {
                        self.walk(sub, v, depth + 1);
                    } else if let Some(extra) = view.additional.first() {
                        self.walk(extra, v, depth + 1);
                    }
                }
            }
            Value::Array(elements) => {
                for (i, element) in elements.iter_mut().enumerate() {
                    let positional = view
                        .prefix_items
                        .iter()
                        .find_map(|t| t.get(i))
                        .and_then(Value::as_object);
                    if let Some(sub) = positional.or_else(|| view.items.first().copied()) {
                        self.walk(sub, element, depth + 1);
                    }
                }
            }
            _ => {}
        }
        for branches in &view.unions {
            let chosen = branches
                .iter()
                .filter_map(Value::as_object)
                .find(|b| self.fits(b, value, 0));
            if let Some(branch) = chosen {
                self.walk(branch, value, depth + 1);
            }
        }
    }

    /// A quick structural test of whether `value` is meant for `schema`: its JSON type,
    /// `const`/`enum`, and for objects the tag-like properties (`const`), the declared keys
    /// and the required ones. Enough to pick serde's variant; not a validator.
    fn fits(&self, schema: &'a JsonObject, value: &Value, hops: usize) -> bool {
        if hops > MAX_REF_HOPS {
            return false;
        }
        if let Some(Value::String(reference)) = schema.get("$ref") {
            match self.resolve(reference) {
                Some(target) if !self.fits(target, value, hops + 1) => return false,
                None => return false,
                _ => {}
            }
        }
        if let Some(ty) = schema.get("type") {
            let ok = |t: &str| match t {
                "null" => value.is_null(),
                "boolean" => value.is_boolean(),
                "string" => value.is_string(),
                "number" => value.is_number(),
                "integer" => value.is_i64() || value.is_u64(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => true,
            };
            let fits_type = match ty {
                Value::String(t) => ok(t),
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(ok),
                _ => true,
            };
            if !fits_type {
                return false;
            }
        }
        if let Some(c) = schema.get("const")
            && c != value
        {
            return false;
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            return false;
        }
        if let Value::Object(members) = value {
            let mut view = View::default();
            self.gather(schema, &mut view, hops);
            let declared = |name: &str| view.properties.iter().find_map(|p| p.get(name));
            // A tag (a property with a `const`) must match.
            for props in &view.properties {
                for (name, sub) in props.iter() {
                    if let (Some(Value::Object(sub)), Some(actual)) = (Some(sub), members.get(name))
                        && let Some(expected) = sub.get("const")
                        && expected != actual
                    {
                        return false;
                    }
                }
            }
            if view
                .required
                .iter()
                .any(|name| declared(name).is_some() && !members.contains_key(*name))
            {
                return false;
            }
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            if closed && members.keys().any(|k| declared(k).is_none()) {
                return false;
            }
        }
        if let Some(Value::Array(parts)) = schema.get("allOf") {
            return parts
                .iter()
                .filter_map(Value::as_object)
                .all(|p| self.fits(p, value, hops + 1));
        }
        true
    }
}
