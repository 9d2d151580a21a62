//! Lowering a canonical JSON Schema to what one provider's API accepts.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::schema::JsonObject;

mod error;
mod gemini;
mod merge;
mod openai;
mod refs;
mod restricted;
mod root;
mod types;

pub use error::{FieldPath, LowerError, LowerErrorKind, PathSegment};
// The validators hold lowered schemas to the same keyword lists.
// The validators (test machinery) check definitions against the same keyword lists.
#[cfg(any(test, feature = "testing"))]
pub(super) use gemini::{GEMINI_KEYWORDS, gemini_format_ok};
#[cfg(any(test, feature = "testing"))]
pub(super) use openai::{OPENAI_FORMATS, OPENAI_KEYWORDS};

use refs::recursive_targets;
use types::is_null_only;

/// Most schema nodes one lowering may produce. Inlining can multiply a schema (a type used
/// in many places is copied to each); past this the tool's schema is unreasonable for any
/// model, and the limit keeps a pathological schema from exhausting memory.
const MAX_NODES: usize = 100_000;

/// Deepest nesting one lowering may produce (providers allow far less: OpenAI strict mode
/// 10 levels). Bounds the recursion of the lowering itself.
const MAX_DEPTH: usize = 96;

/// Keywords that only annotate: they never change which values a schema accepts.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that are bookkeeping of the document, not part of any one schema.
const DOCUMENT_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
];

/// Lowers a canonical parameter schema to the form `dialect` accepts.
///
/// `schema` is schemars' output for the parameter type ([`crate::schema::schema_for`]) or any
/// hand-written JSON Schema object. The rules per dialect are below; the result is meant to
/// be computed once per tool and dialect and cached.
///
/// # Rules, and where they come from
///
/// **Every dialect.** Local `$ref`s are inlined and `$defs` removed (clients and gateways
/// differ in `$ref` support, and an inlined schema reads the same everywhere); `$schema`,
/// `$id`, `$comment` and the root `title` are dropped. The root is one object schema with
/// `type: "object"` and `properties`: every API passes arguments as a JSON object, and
/// Anthropic refuses `oneOf`/`anyOf`/`allOf` at the top of `input_schema` ("input_schema does
/// not support oneOf, allOf, or anyOf at the top level"). An `Option<Args>` root is unwrapped;
/// an enum or a scalar root is a [`LowerError`]. `allOf` (and `$ref` with sibling keywords,
/// which 2020-12 gives the same meaning) is merged into one schema.
///
/// **Recursive types.** Inlining a recursive type never ends. Anthropic (`input_schema` is
/// JSON Schema, <https://docs.anthropic.com/en/docs/build-with-claude/tool-use>), MCP
/// (`inputSchema` is JSON Schema, 2020-12 by default, spec 2025-11-25 "tools"), Bedrock
/// Converse (`inputSchema.json` is "a JSON schema", and Claude behind it is the same engine
/// as Anthropic's) and OpenAI strict mode (Structured Outputs documents "Recursive schemas
/// are supported" with `$ref: "#"` and `#/$defs/…`) accept references, so for those the
/// definitions that lie on a reference cycle — and only those — stay in a root `$defs`,
/// referenced as `#/$defs/Name`. Gemini's `Schema` (an OpenAPI 3.0 subset) has no `$ref`:
/// there a recursive type is a [`LowerErrorKind::Recursive`] naming the field where the
/// cycle closes.
///
/// **Anthropic, MCP, Bedrock.** Otherwise faithful: every keyword schemars wrote is kept.
///
/// **OpenAI strict** (Chat Completions and Responses, `strict: true`), from
/// <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>:
/// every object has `additionalProperties: false` and lists every property in `required`;
/// a field that was optional becomes nullable (`type: [T, "null"]` for scalars and arrays,
/// `anyOf: [T, {"type": "null"}]` otherwise, as the guide shows) — [`restore_arguments`]
/// turns the `null`s a model then sends back into omitted fields; `oneOf` becomes `anyOf`
/// (only `anyOf` is supported); kept keywords are `type`, `description`, `properties`,
/// `required`, `additionalProperties`, `items`, `anyOf`, `enum`, `const`, `$ref`, `$defs`,
/// and the documented constraints `pattern`, `format` (date-time, time, date, duration,
/// email, hostname, ipv4, ipv6, uuid), `minLength`, `maxLength`, `minimum`, `maximum`,
/// `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minItems`, `maxItems`. Everything
/// else is dropped: `default` (refused by Azure OpenAI's strict mode), `uniqueItems`,
/// `title`, `examples`, unsupported formats (schemars' `uint8`, `int64`, … — the numeric
/// range stays in `minimum`/`maximum`). A default, a string format and uniqueness are
/// restated in the description so the model still learns them. A tuple of one element
/// type (`(u32, u32)`) becomes an array with `minItems` = `maxItems`; a tuple of mixed types
/// (`prefixItems`) cannot be expressed and is an error, here and for Gemini. A bare nested
/// `{"type": "object"}` is what schemars writes for `struct Empty {}`, and is closed as an
/// empty object. A map (`HashMap<String, V>`: `additionalProperties: {schema}`) and an
/// untyped value (`serde_json::Value`) cannot be expressed and are errors.
///
/// **Gemini** (`FunctionDeclaration.parameters`, the `Schema` object of
/// <https://ai.google.dev/api/caching#Schema>, "a select subset of an OpenAPI 3.0 schema
/// object"): kept fields are `type` (one name, never an array), `format` (number: `float`,
/// `double`; integer: `int32`, `int64`; string: `enum`, `date-time`), `description`,
/// `nullable`, `enum` (strings only), `items`, `properties`, `required`, `anyOf`, `minItems`,
/// `maxItems`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `minProperties`,
/// `maxProperties`. Type arrays and `{"type": "null"}` branches become `nullable: true`;
/// `const` and `oneOf`-of-`const` unions (schemars' documented unit enums) become one string
/// `enum`, the variants' doc comments folded into the description; `oneOf` becomes `anyOf`.
/// Gemini refuses an object without properties ("properties: should be non-empty for OBJECT
/// type"), so a nested empty object is an error and an empty root is left without
/// `properties` (the definition then omits `parameters`, as Gemini's docs say to do for a
/// function without parameters). Maps and untyped values are errors, as for OpenAI.
///
/// [`restore_arguments`]: super::restore_arguments
///
/// ```
/// use serde_json::json;
/// use xcsh_core::dialect::{Dialect, lower_schema};
///
/// /// Greps files.
/// #[derive(schemars::JsonSchema)]
/// struct Grep {
///     /// Pattern to look for.
///     pattern: String,
///     /// Stop after this many matches.
///     limit: Option<u32>,
/// }
/// let schema = xcsh_core::schema::schema_for::<Grep>();
///
/// let strict = lower_schema(Dialect::OpenAiChat, &schema)?;
/// assert_eq!(strict["required"], json!(["pattern", "limit"]));
/// assert_eq!(strict["additionalProperties"], json!(false));
/// assert_eq!(strict["properties"]["limit"]["type"], json!(["integer", "null"]));
///
/// let gemini = lower_schema(Dialect::Gemini, &schema)?;
/// assert_eq!(gemini["properties"]["limit"]["type"], json!("integer"));
/// assert_eq!(gemini["properties"]["limit"]["nullable"], json!(true));
/// assert_eq!(gemini["required"], json!(["pattern"]));
/// # Ok::<(), xcsh_core::dialect::LowerError>(())
/// ```
pub fn lower_schema(dialect: Dialect, schema: &JsonObject) -> Result<JsonObject, LowerError> {
    let root = Value::Object(schema.clone());
    let keep = if dialect == Dialect::Gemini {
        HashSet::new()
    } else {
        recursive_targets(&root)
    };
    let mut lowerer = Lowerer {
        dialect,
        root: &root,
        keep,
        kept: Vec::new(),
        kept_names: HashMap::new(),
        stack: Vec::new(),
        nodes: 0,
    };
    lowerer.lower_root(schema)
}

/// One lowering: the document, the dialect, and what has been produced so far.
///
/// The traversal is here; its other steps are `impl` blocks beside it: the root (`root`),
/// `$ref`s (`refs`), `allOf` (`merge`), and the dialects' rules (`restricted`, `openai`,
/// `gemini`).
struct Lowerer<'a> {
    dialect: Dialect,
    root: &'a Value,
    /// Reference targets that stay references (cycles); empty for Gemini.
    keep: HashSet<String>,
    /// Lowered kept definitions, in the order first referenced: (name, schema).
    kept: Vec<(String, Value)>,
    /// Reference target → name under the output `$defs`.
    kept_names: HashMap<String, String>,
    /// Reference targets being inlined right now (a repeat means a cycle).
    stack: Vec<String>,
    /// Schema nodes produced so far.
    nodes: usize,
}

impl Lowerer<'_> {
    fn err(&self, path: &FieldPath, kind: LowerErrorKind) -> LowerError {
        LowerError::new(self.dialect, path, kind)
    }

    fn strict(&self) -> bool {
        self.dialect.is_openai_strict()
    }

    fn gemini(&self) -> bool {
        self.dialect == Dialect::Gemini
    }

    fn count_node(&mut self, path: &FieldPath, depth: usize) -> Result<(), LowerError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self.err(path, LowerErrorKind::TooLarge { limit: MAX_NODES }));
        }
        if depth > MAX_DEPTH {
            return Err(self.err(path, LowerErrorKind::TooDeep { limit: MAX_DEPTH }));
        }
        Ok(())
    }

    fn lower(
        &mut self,
        schema: &Value,
        path: &FieldPath,
        depth: usize,
    ) -> Result<Value, LowerError> {
        match schema {
            Value::Object(map) => self.lower_map(map, path, depth),
            Value::Bool(true) => self.lower_map(&Map::new(), path, depth),
            Value::Bool(false) => {
                if self.strict() || self.gemini() {
                    Err(self.err(path, LowerErrorKind::Never))
                } else {
                    self.count_node(path, depth)?;
                    Ok(json!({"not": {}}))
                }
            }
            _ => Err(self.err(
                path,
                LowerErrorKind::Malformed {
                    detail: format!("a schema must be an object or a boolean, found {schema}"),
                },
            )),
        }
    }

    fn lower_map(
        &mut self,
        schema: &JsonObject,
        path: &FieldPath,
        depth: usize,
    ) -> Result<Value, LowerError> {
        self.count_node(path, depth)?;
        if let Some(reference) = schema.get("$ref") {
            let Value::String(reference) = reference else {
                return Err(self.err(
                    path,
                    LowerErrorKind::Malformed {
                        detail: "`$ref` is not a string".into(),
                    },
                ));
            };
            return self.lower_ref(reference, schema, path, depth);
        }
        if schema.contains_key("allOf") {
            let merged = self.flatten_all_of(schema, path)?;
            if !merged.contains_key("allOf") {
                return self.lower_map(&merged, path, depth);
            }
            // A residual allOf (recursive parts) is lowered keyword by keyword below.
            return self.lower_keywords(&merged, path, depth);
        }
        self.lower_keywords(schema, path, depth)
    }

    /// Lowers a tuple's element schemas (`prefixItems`, draft-07 array `items`), each at
    /// `depth` and at its index under `path`; the first error wins.
    fn lower_each(
        &mut self,
        items: &[Value],
        path: &FieldPath,
        depth: usize,
    ) -> Result<Vec<Value>, LowerError> {
        let mut lowered = Vec::with_capacity(items.len());
        for (i, sub) in items.iter().enumerate() {
            lowered.push(self.lower(sub, &path.with(PathSegment::Index(i)), depth)?);
        }
        Ok(lowered)
    }

    /// Lowers every subschema of a `$ref`-free, `allOf`-free schema, then applies the
    /// dialect's rules to the node itself.
    fn lower_keywords(
        &mut self,
        schema: &JsonObject,
        path: &FieldPath,
        depth: usize,
    ) -> Result<Value, LowerError> {
        // The outermost problem first: a map whose values are also inexpressible is reported
        // as the map, which has to change anyway.
        if self.strict() || self.gemini() {
            self.refuse_map(schema, path)?;
        }
        let malformed = |this: &Self, key: &str, what: &str| {
            this.err(
                path,
                LowerErrorKind::Malformed {
                    detail: format!("`{key}` is not {what}"),
                },
            )
        };
        let mut out = Map::new();
        for (key, value) in schema {
            let k = key.as_str();
            if DOCUMENT_KEYWORDS.contains(&k) {
                continue;
            }
            let lowered = match k {
                "properties" | "patternProperties" | "dependentSchemas" => {
                    let Value::Object(map) = value else {
                        return Err(malformed(self, k, "an object"));
                    };
                    // Lower in a fixed order (required ones as declared, then the rest by
                    // name) so the first error reported does not depend on serde_json's
                    // map order; the output keeps the input's order.
                    let mut done: HashMap<&str, Value> = HashMap::with_capacity(map.len());
                    for name in canonical_order(map, &required_names(schema)) {
                        let child = match k {
                            "properties" => path.with(PathSegment::Field(name.to_owned())),
                            "patternProperties" => path.with(PathSegment::MapValue),
                            _ => path.clone(),
                        };
                        if let Some(sub) = map.get(name) {
                            let lowered = self.lower(sub, &child, depth + 1)?;
                            if self.gemini() && k == "properties" && is_null_only(&lowered) {
                                return Err(self.err(&child, LowerErrorKind::AlwaysNull));
                            }
                            done.insert(name, lowered);
                        }
                    }
                    Value::Object(
                        map.keys()
                            .filter_map(|name| Some((name.clone(), done.remove(name.as_str())?)))
                            .collect(),
                    )
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let Value::Array(items) = value else {
                        return Err(malformed(self, k, "an array"));
                    };
                    let mut lowered = Vec::with_capacity(items.len());
                    for sub in items {
                        lowered.push(self.lower(sub, path, depth + 1)?);
                    }
                    Value::Array(lowered)
                }
                "prefixItems" => {
                    let Value::Array(items) = value else {
                        return Err(malformed(self, k, "an array"));
                    };
                    Value::Array(self.lower_each(items, path, depth + 1)?)
                }
                "items" => match value {
                    // Draft-07 tuples: the same thing as 2020-12 `prefixItems`.
                    Value::Array(items) => {
                        let lowered = self.lower_each(items, path, depth + 1)?;
                        out.insert("prefixItems".into(), Value::Array(lowered));
                        continue;
                    }
                    Value::Bool(false) => Value::Bool(false),
                    other => self.lower(other, &path.with(PathSegment::Item), depth + 1)?,
                },
                "additionalProperties" | "unevaluatedProperties" => match value {
                    Value::Bool(b) => Value::Bool(*b),
                    other => self.lower(other, &path.with(PathSegment::MapValue), depth + 1)?,
                },
                "additionalItems" | "unevaluatedItems" => match value {
                    Value::Bool(b) => Value::Bool(*b),
                    other => self.lower(other, &path.with(PathSegment::Item), depth + 1)?,
                },
                "contains" | "propertyNames" | "not" | "if" | "then" | "else" => {
                    self.lower(value, path, depth + 1)?
                }
                _ => value.clone(),
            };
            out.insert(key.clone(), lowered);
        }
        if self.strict() {
            self.finish_openai(out, path)
        } else if self.gemini() {
            self.finish_gemini(out, path)
        } else {
            Ok(Value::Object(out))
        }
    }
}

/// The names in a schema's `required`.
fn required_names(schema: &JsonObject) -> Vec<String> {
    match schema.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Property names in a fixed order: the required ones as listed, then the rest by name.
fn canonical_order<'m>(properties: &'m JsonObject, required: &[String]) -> Vec<&'m str> {
    let mut names: Vec<&str> = required
        .iter()
        .filter_map(|r| {
            properties
                .get_key_value(r.as_str())
                .map(|(k, _)| k.as_str())
        })
        .collect();
    let mut rest: Vec<&str> = properties
        .keys()
        .map(String::as_str)
        .filter(|k| !required.iter().any(|r| r == k))
        .collect();
    rest.sort_unstable();
    names.extend(rest);
    names
}
