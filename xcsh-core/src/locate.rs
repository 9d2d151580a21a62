//! Where in the arguments a failed decode failed, found by walking the parameter schema.
//!
//! serde says *what* is wrong ("invalid type: integer `1`, expected a string"), not *where*.
//! Decoding a second time through `serde_path_to_error` would say where, but compiles a
//! second copy of every tool's `Deserialize` (a fifth of the code a crate of tools makes).
//! The schema already describes the arguments, so a walk over the value with it finds the
//! place: it visits entries in the order serde does (the map's order), and the first one that
//! breaks the schema is where serde stopped. The path reads as `serde_path_to_error` writes
//! it: `ops[0].pat`; a missing field is reported at its object, an unknown one at itself.
//! When the walk finds nothing (a check the schema cannot express), the path is empty and the
//! message still says what is wrong.

use serde_json::{Map, Value};

use crate::schema::JsonObject;

/// One step of a path.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The path to the first place `args` breaks `schema`, if the schema says where.
pub(crate) fn locate(schema: &JsonObject, args: &Value) -> Option<String> {
    let mut path = Vec::new();
    walk(schema, schema, args, &mut path).then(|| render(&path))
}

fn render(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// `schema`, with a `$ref` (to the root, or into its `$defs`) followed.
fn resolve<'s>(root: &'s JsonObject, schema: &'s JsonObject) -> &'s JsonObject {
    let mut schema = schema;
    for _ in 0..32 {
        let Some(target) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        // `#` is the root itself (a recursive type refers to itself so).
        if target == "#" {
            schema = root;
            continue;
        }
        let found = target
            .strip_prefix("#/$defs/")
            .or_else(|| target.strip_prefix("#/definitions/"))
            .and_then(|name| {
                root.get("$defs")
                    .or_else(|| root.get("definitions"))
                    .and_then(|defs| defs.get(name))
            })
            .and_then(Value::as_object);
        match found {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

/// Whether `value` breaks `schema`; on `true`, `path` leads to the place.
fn walk<'v>(
    root: &JsonObject,
    schema: &JsonObject,
    value: &'v Value,
    path: &mut Vec<Step<'v>>,
) -> bool {
    let schema = resolve(root, schema);
    // `anyOf`/`oneOf` (an `Option`, an enum of described values): fine when a branch
    // accepts it; otherwise the branch of the value's own type says where.
    // Each branch is walked once (a recursive schema nests these).
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut typed: Option<Vec<Step<'v>>> = None;
            let mut first: Option<Vec<Step<'v>>> = None;
            for branch in branches {
                let mut scratch = Vec::new();
                let breaks = match branch {
                    Value::Object(b) => walk(root, b, value, &mut scratch),
                    Value::Bool(accepts) => !accepts,
                    _ => false,
                };
                if !breaks {
                    return false;
                }
                let is_typed = branch
                    .as_object()
                    .is_some_and(|b| type_allows(resolve(root, b), value));
                if is_typed && typed.is_none() {
                    typed = Some(scratch);
                } else if first.is_none() {
                    first = Some(scratch);
                }
            }
            path.extend(typed.or(first).unwrap_or_default());
            return true;
        }
    }
    if let Some(allowed) = schema.get("const") {
        return allowed != value;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        return true;
    }
    // serde reads a struct from a sequence too, positionally, in declaration order.
    if let (Value::Array(items), Some(properties)) = (
        value,
        schema
            .get("properties")
            .and_then(Value::as_object)
            .filter(|_| schema.get("type").and_then(Value::as_str) == Some("object")),
    ) {
        for (i, (item, (_, property))) in items.iter().zip(properties).enumerate() {
            path.push(Step::Index(i));
            if property
                .as_object()
                .is_some_and(|p| walk(root, p, item, path))
            {
                return true;
            }
            path.pop();
        }
        // Too many elements, or a required field left out at the end.
        let required = schema.get("required").and_then(Value::as_array);
        let missing_required = properties
            .keys()
            .skip(items.len())
            .any(|name| required.is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name))));
        return items.len() > properties.len() || missing_required;
    }
    if !type_allows(schema, value) {
        return true;
    }
    if let (Some(n), Some(min)) = (
        value.as_f64(),
        schema.get("minimum").and_then(Value::as_f64),
    ) && n < min
    {
        return true;
    }
    if let (Some(n), Some(max)) = (
        value.as_f64(),
        schema.get("maximum").and_then(Value::as_f64),
    ) && n > max
    {
        return true;
    }
    match value {
        Value::Object(map) => walk_object(root, schema, map, path),
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items").and_then(Value::as_object) else {
                return false;
            };
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                if walk(root, item_schema, item, path) {
                    return true;
                }
                path.pop();
            }
            false
        }
        _ => false,
    }
}

/// Entries in the map's order (serde's): an unknown key, or a value that breaks its
/// property's schema; then a required field that is missing, reported at the object.
fn walk_object<'v>(
    root: &JsonObject,
    schema: &JsonObject,
    map: &'v Map<String, Value>,
    path: &mut Vec<Step<'v>>,
) -> bool {
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    for (key, value) in map {
        path.push(Step::Key(key));
        // A property's schema, or what other keys must be (`false`: none allowed; a schema:
        // a map's values); `true` or absent accepts anything.
        let rule = properties.and_then(|p| p.get(key)).or(additional);
        let breaks = match rule {
            Some(Value::Object(property)) => walk(root, property, value, path),
            Some(Value::Bool(false)) => true,
            _ => false,
        };
        if breaks {
            return true;
        }
        path.pop();
    }
    let required = schema.get("required").and_then(Value::as_array);
    required.is_some_and(|required| {
        required
            .iter()
            .filter_map(Value::as_str)
            .any(|name| !map.contains_key(name))
    })
}

/// Whether the schema's `type` (a name or a list of names; none: anything) admits `value`.
fn type_allows(schema: &JsonObject, value: &Value) -> bool {
    let admits = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    match schema.get("type") {
        None => true,
        Some(Value::String(name)) => admits(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).any(admits),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn paths_read_as_serde_path_to_error_writes_them() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "ops": {"type": "array", "items": {"$ref": "#/$defs/Op"}},
                "lang": {"type": ["string", "null"]},
                "limit": {"type": ["integer", "null"], "minimum": 0},
                "order": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["ops"],
            "additionalProperties": false,
            "$defs": {"Op": {
                "type": "object",
                "properties": {"pat": {"type": "string"}, "out": {"type": "string"}},
                "required": ["pat", "out"],
                "additionalProperties": false
            }}
        }));
        let at = |v: Value| locate(&s, &v);
        assert_eq!(
            at(json!({"ops": [{"pat": 1, "out": "x"}]})).as_deref(),
            Some("ops[0].pat")
        );
        assert_eq!(
            at(json!({"ops": [{"pat": "p"}]})).as_deref(),
            Some("ops[0]")
        );
        assert_eq!(
            at(json!({"ops": [{"pat": "p", "out": "o", "flags": 1}]})).as_deref(),
            Some("ops[0].flags")
        );
        assert_eq!(
            at(json!({"ops": [], "force": true})).as_deref(),
            Some("force")
        );
        assert_eq!(at(json!({})).as_deref(), Some(""));
        assert_eq!(at(json!({"ops": [], "lang": 3})).as_deref(), Some("lang"));
        assert_eq!(
            at(json!({"ops": [], "limit": -1})).as_deref(),
            Some("limit")
        );
        assert_eq!(
            at(json!({"ops": [], "order": "c"})).as_deref(),
            Some("order")
        );
        assert_eq!(at(json!({"ops": [], "lang": null, "limit": 3})), None);
        // A field whose schema is `true` (a `serde_json::Value`) accepts anything.
        let open = schema(json!({
            "type": "object",
            "properties": {"any": true, "n": {"type": "integer"},
                           "map": {"type": "object", "additionalProperties": {"type": "integer"}}},
            "additionalProperties": false
        }));
        assert_eq!(
            locate(&open, &json!({"any": [1], "n": "x"})).as_deref(),
            Some("n")
        );
        assert_eq!(
            locate(&open, &json!({"map": {"a": 1, "b": "x"}})).as_deref(),
            Some("map.b")
        );
        // A struct read positionally from a sequence, as serde does.
        assert_eq!(at(json!({"ops": [[["x"]]]})).as_deref(), Some("ops[0][0]"));
        assert_eq!(at(json!({"ops": [["p"]]})).as_deref(), Some("ops[0]"));
    }

    /// Differential: for random arguments (objects: an array is refused before decoding), the path the walk finds is the one
    /// `serde_path_to_error` reports, on parameter shapes tools use (nested structs, lists of
    /// structs, options, enums, defaults, closed and open objects, positional structs).
    mod against_serde_path_to_error {
        use proptest::prelude::*;
        use serde::Deserialize;
        use serde_json::{Value, json};

        use super::super::locate;
        use crate::schema::schema_for;

        #[derive(Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Op {
            pat: String,
            out: String,
        }

        #[derive(Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        enum Order {
            OldestFirst,
            NewestFirst,
        }

        #[derive(Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Closed {
            ops: Vec<Op>,
            #[serde(default)]
            lang: Option<String>,
            #[serde(default)]
            limit: Option<u64>,
            #[serde(default)]
            order: Option<Order>,
            #[serde(default)]
            flag: bool,
        }

        #[derive(Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Open {
            name: String,
            #[serde(default)]
            tags: Vec<String>,
            inner: Option<Op>,
        }

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                (-3i64..5).prop_map(Value::from),
                Just(json!(1.5)),
                prop_oneof![
                    Just("x"),
                    Just("oldest_first"),
                    Just("sideways"),
                    Just("$X.unwrap()")
                ]
                .prop_map(Value::from),
            ]
        }

        fn key() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("ops"),
                Just("pat"),
                Just("out"),
                Just("lang"),
                Just("limit"),
                Just("order"),
                Just("flag"),
                Just("name"),
                Just("tags"),
                Just("inner"),
                Just("bogus"),
            ]
            .prop_map(str::to_owned)
        }

        fn value() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::vec((key(), inner), 0..4)
                        .prop_map(|entries| { Value::Object(entries.into_iter().collect()) }),
                ]
            })
        }

        fn same_path<T: for<'de> Deserialize<'de> + schemars::JsonSchema>(args: &Value) {
            let schema = schema_for::<T>();
            if let Err(error) = serde_path_to_error::deserialize::<_, T>(args) {
                let expected = error.path().to_string();
                let expected = if expected == "." {
                    String::new()
                } else {
                    expected
                };
                let found = locate(&schema, args).unwrap_or_default();
                assert_eq!(found, expected, "{args} ({})", error.inner());
            }
        }

        #[derive(Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Node {
            v: u8,
            child: Option<Box<Node>>,
        }

        /// A recursive schema nests `anyOf`s: each branch is walked once, so depth 200 is
        /// instant (walking the failing branch twice per level would be 2^200 steps).
        #[test]
        fn a_deep_recursive_value_is_located_at_once() {
            let mut args = json!({"v": "bad"});
            for _ in 0..200 {
                args = json!({"v": 1, "child": args});
            }
            same_path::<Node>(&args);
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn closed_params(args in value().prop_filter("an object", Value::is_object)) {
                same_path::<Closed>(&args);
            }

            #[test]
            fn open_params(args in value().prop_filter("an object", Value::is_object)) {
                same_path::<Open>(&args);
            }
        }
    }
}
