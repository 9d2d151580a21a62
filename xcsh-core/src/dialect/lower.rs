//! Lowering a canonical JSON Schema to what one provider's API accepts.
//!
//! # Rules, and where they come from
//!
//! **Every dialect.** Local `$ref`s are inlined and `$defs` removed (clients and gateways
//! differ in `$ref` support, and an inlined schema reads the same everywhere); `$schema`,
//! `$id`, `$comment` and the root `title` are dropped. The root is one object schema with
//! `type: "object"` and `properties`: every API passes arguments as a JSON object, and
//! Anthropic refuses `oneOf`/`anyOf`/`allOf` at the top of `input_schema` ("input_schema does
//! not support oneOf, allOf, or anyOf at the top level"). An `Option<Args>` root is unwrapped;
//! an enum or a scalar root is a [`LowerError`]. `allOf` (and `$ref` with sibling keywords,
//! which 2020-12 gives the same meaning) is merged into one schema.
//!
//! **Recursive types.** Inlining a recursive type never ends. Anthropic (`input_schema` is
//! JSON Schema, <https://docs.anthropic.com/en/docs/build-with-claude/tool-use>), MCP
//! (`inputSchema` is JSON Schema, 2020-12 by default, spec 2025-11-25 "tools"), Bedrock
//! Converse (`inputSchema.json` is "a JSON schema", and Claude behind it is the same engine
//! as Anthropic's) and OpenAI strict mode (Structured Outputs documents "Recursive schemas
//! are supported" with `$ref: "#"` and `#/$defs/…`) accept references, so for those the
//! definitions that lie on a reference cycle — and only those — stay in a root `$defs`,
//! referenced as `#/$defs/Name`. Gemini's `Schema` (an OpenAPI 3.0 subset) has no `$ref`:
//! there a recursive type is a [`LowerErrorKind::Recursive`] naming the field where the
//! cycle closes.
//!
//! **Anthropic, MCP, Bedrock.** Otherwise faithful: every keyword schemars wrote is kept.
//!
//! **OpenAI strict** (Chat Completions and Responses, `strict: true`), from
//! <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>:
//! every object has `additionalProperties: false` and lists every property in `required`;
//! a field that was optional becomes nullable (`type: [T, "null"]` for scalars and arrays,
//! `anyOf: [T, {"type": "null"}]` otherwise, as the guide shows) — [`restore_arguments`]
//! turns the `null`s a model then sends back into omitted fields; `oneOf` becomes `anyOf`
//! (only `anyOf` is supported); kept keywords are `type`, `description`, `properties`,
//! `required`, `additionalProperties`, `items`, `anyOf`, `enum`, `const`, `$ref`, `$defs`,
//! and the documented constraints `pattern`, `format` (date-time, time, date, duration,
//! email, hostname, ipv4, ipv6, uuid), `minLength`, `maxLength`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minItems`, `maxItems`. Everything
//! else is dropped: `default` (refused by Azure OpenAI's strict mode), `uniqueItems`,
//! `title`, `examples`, unsupported formats (schemars' `uint8`, `int64`, … — the numeric
//! range stays in `minimum`/`maximum`). A default, a string format and uniqueness are
//! restated in the description so the model still learns them. A tuple of one element
//! type (`(u32, u32)`) becomes an array with `minItems` = `maxItems`; a tuple of mixed types
//! (`prefixItems`) cannot be expressed and is an error, here and for Gemini. A bare nested
//! `{"type": "object"}` is what schemars writes for `struct Empty {}`, and is closed as an
//! empty object. A map (`HashMap<String, V>`: `additionalProperties: {schema}`) and an
//! untyped value (`serde_json::Value`) cannot be expressed and are errors.
//!
//! **Gemini** (`FunctionDeclaration.parameters`, the `Schema` object of
//! <https://ai.google.dev/api/caching#Schema>, "a select subset of an OpenAPI 3.0 schema
//! object"): kept fields are `type` (one name, never an array), `format` (number: `float`,
//! `double`; integer: `int32`, `int64`; string: `enum`, `date-time`), `description`,
//! `nullable`, `enum` (strings only), `items`, `properties`, `required`, `anyOf`, `minItems`,
//! `maxItems`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `minProperties`,
//! `maxProperties`. Type arrays and `{"type": "null"}` branches become `nullable: true`;
//! `const` and `oneOf`-of-`const` unions (schemars' documented unit enums) become one string
//! `enum`, the variants' doc comments folded into the description; `oneOf` becomes `anyOf`.
//! Gemini refuses an object without properties ("properties: should be non-empty for OBJECT
//! type"), so a nested empty object is an error and an empty root is left without
//! `properties` (the definition then omits `parameters`, as Gemini's docs say to do for a
//! function without parameters). Maps and untyped values are errors, as for OpenAI.
//!
//! [`restore_arguments`]: super::restore_arguments

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::schema::JsonObject;

/// Most schema nodes one lowering may produce. Inlining can multiply a schema (a type used
/// in many places is copied to each); past this the tool's schema is unreasonable for any
/// model, and the limit keeps a pathological schema from exhausting memory.
const MAX_NODES: usize = 100_000;

/// Deepest nesting one lowering may produce (providers allow far less: OpenAI strict mode
/// 10 levels). Bounds the recursion of the lowering itself.
const MAX_DEPTH: usize = 96;

/// Keywords OpenAI strict mode accepts (Structured Outputs, "Supported schemas").
pub(crate) const OPENAI_KEYWORDS: &[&str] = &[
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
pub(crate) const OPENAI_FORMATS: &[&str] = &[
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

/// Fields of Gemini's `Schema` object that xcsh emits.
pub(crate) const GEMINI_KEYWORDS: &[&str] = &[
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
pub(crate) fn gemini_format_ok(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("number", "float" | "double")
            | ("integer", "int32" | "int64")
            | ("string", "enum" | "date-time")
    )
}

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

/// Where in the tool's arguments a schema applies: `tree.children[]`, `pair[1]`,
/// `labels.<key>`. The root (the arguments object itself) is the empty path.
///
/// ```
/// use xcsh_core::dialect::{Dialect, lower_schema};
///
/// #[derive(schemars::JsonSchema)]
/// struct Tree { children: Vec<Tree> }
/// #[derive(schemars::JsonSchema)]
/// struct Args { tree: Tree }
///
/// let err = lower_schema(Dialect::Gemini, &xcsh_core::schema::schema_for::<Args>()).unwrap_err();
/// assert_eq!(err.field().to_string(), "tree.children[]");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: Vec<PathSegment>,
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathSegment {
    /// An object property, by its JSON name.
    Field(String),
    /// Any element of an array.
    Item,
    /// The element at a fixed position of a tuple.
    Index(usize),
    /// The value under any key of a map.
    MapValue,
}

impl FieldPath {
    /// The arguments object itself.
    ///
    /// ```
    /// assert!(xcsh_core::dialect::FieldPath::root().is_root());
    /// ```
    pub fn root() -> Self {
        FieldPath::default()
    }

    /// Whether this is the arguments object itself.
    ///
    /// ```
    /// assert!(xcsh_core::dialect::FieldPath::root().is_root());
    /// ```
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The steps from the root.
    ///
    /// ```
    /// assert!(xcsh_core::dialect::FieldPath::root().segments().is_empty());
    /// ```
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    fn with(&self, segment: PathSegment) -> Self {
        let mut segments = Vec::with_capacity(self.segments.len() + 1);
        segments.extend_from_slice(&self.segments);
        segments.push(segment);
        FieldPath { segments }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                PathSegment::Field(name) if i == 0 => f.write_str(name)?,
                PathSegment::Field(name) => write!(f, ".{name}")?,
                PathSegment::Item => f.write_str("[]")?,
                PathSegment::Index(n) => write!(f, "[{n}]")?,
                PathSegment::MapValue if i == 0 => f.write_str("<key>")?,
                PathSegment::MapValue => f.write_str(".<key>")?,
            }
        }
        Ok(())
    }
}

/// Why a schema cannot be lowered for a dialect. See [`LowerError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LowerErrorKind {
    /// The root is not an object (a string, an array, a unit struct, …).
    RootNotObject {
        /// The JSON type(s) the root has instead.
        found: String,
    },
    /// The root is a union (an enum, an untagged type).
    RootUnion,
    /// The type contains itself and the dialect has no references.
    Recursive {
        /// The name of the recursive type (`"the root type"` for the parameters type).
        type_name: String,
    },
    /// A map with free-form keys (`additionalProperties` with a schema).
    Map,
    /// A value of any JSON type (`serde_json::Value`, an empty schema).
    AnyValue,
    /// A tuple whose elements have different types.
    Tuple,
    /// A schema no value satisfies (`false`).
    Never,
    /// A value that can only be `null` (a unit `()` field).
    AlwaysNull,
    /// A nested object without properties.
    EmptyObject,
    /// A recursive `$ref` with keywords beside it, which strict mode cannot merge.
    RefWithKeywords,
    /// A `$ref` that does not resolve inside this schema.
    BadRef {
        /// The reference as written.
        reference: String,
        /// Why it does not resolve.
        reason: String,
    },
    /// Parts of an `allOf` (or a `$ref` and its siblings) that no value satisfies together.
    Contradiction {
        /// What contradicts what.
        detail: String,
    },
    /// Something that is not valid JSON Schema.
    Malformed {
        /// What is wrong.
        detail: String,
    },
    /// Inlining grows the schema past a sane size.
    TooLarge {
        /// The limit that was hit, in schema nodes.
        limit: usize,
    },
    /// Inlining nests the schema deeper than a sane depth.
    TooDeep {
        /// The limit that was hit, in nesting levels.
        limit: usize,
    },
}

/// A schema that cannot be expressed in a dialect, with the field where it happens.
///
/// The message says what, where, for which dialect and what to do:
///
/// ```
/// use xcsh_core::dialect::{Dialect, LowerErrorKind, lower_schema};
///
/// #[derive(schemars::JsonSchema)]
/// struct Tree { label: String, children: Vec<Tree> }
/// #[derive(schemars::JsonSchema)]
/// struct Args { tree: Tree }
///
/// let schema = xcsh_core::schema::schema_for::<Args>();
/// let err = lower_schema(Dialect::Gemini, &schema).unwrap_err().with_tool("outline");
/// assert!(matches!(err.kind(), LowerErrorKind::Recursive { .. }));
/// assert!(err.to_string().starts_with(
///     "tool `outline`: field `tree.children[]` is recursive (`Tree` contains itself), \
///      which gemini cannot express (no $ref support"
/// ));
/// // Dialects with references keep the recursive definition instead.
/// assert!(lower_schema(Dialect::Anthropic, &schema).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    dialect: Dialect,
    field: FieldPath,
    kind: LowerErrorKind,
    tool: Option<String>,
}

impl LowerError {
    fn new(dialect: Dialect, field: &FieldPath, kind: LowerErrorKind) -> Self {
        LowerError {
            dialect,
            field: field.clone(),
            kind,
            tool: None,
        }
    }

    /// The same error, naming the tool it belongs to in its message.
    ///
    /// ```
    /// # use xcsh_core::dialect::{Dialect, lower_schema};
    /// let schema = xcsh_core::schema::schema_for::<String>();
    /// let err = lower_schema(Dialect::Mcp, &schema).unwrap_err().with_tool("echo");
    /// assert_eq!(err.tool(), Some("echo"));
    /// assert!(err.to_string().starts_with("tool `echo`: the parameters root is a string"));
    /// ```
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// The tool named by [`with_tool`](Self::with_tool), if any.
    ///
    /// ```
    /// # use xcsh_core::dialect::{Dialect, lower_schema};
    /// let err = lower_schema(Dialect::Mcp, &xcsh_core::schema::schema_for::<u8>()).unwrap_err();
    /// assert_eq!(err.tool(), None);
    /// ```
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The dialect that cannot express the schema.
    ///
    /// ```
    /// # use xcsh_core::dialect::{Dialect, lower_schema};
    /// let err = lower_schema(Dialect::Bedrock, &xcsh_core::schema::schema_for::<u8>()).unwrap_err();
    /// assert_eq!(err.dialect(), Dialect::Bedrock);
    /// ```
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Where in the arguments the problem is.
    ///
    /// ```
    /// # use xcsh_core::dialect::{Dialect, lower_schema};
    /// let err = lower_schema(Dialect::Mcp, &xcsh_core::schema::schema_for::<u8>()).unwrap_err();
    /// assert!(err.field().is_root());
    /// ```
    pub fn field(&self) -> &FieldPath {
        &self.field
    }

    /// What the problem is.
    ///
    /// ```
    /// # use xcsh_core::dialect::{Dialect, LowerErrorKind, lower_schema};
    /// let err = lower_schema(Dialect::Mcp, &xcsh_core::schema::schema_for::<u8>()).unwrap_err();
    /// assert!(matches!(err.kind(), LowerErrorKind::RootNotObject { .. }));
    /// ```
    pub fn kind(&self) -> &LowerErrorKind {
        &self.kind
    }
}

/// How the dialect is named in messages: strict mode is what restricts OpenAI's schemas.
fn dialect_phrase(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat => "openai-chat strict mode",
        Dialect::OpenAiResponses => "openai-responses strict mode",
        other => other.as_str(),
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(tool) = &self.tool {
            write!(f, "tool `{tool}`: ")?;
        }
        if self.field.is_root() {
            f.write_str("the parameters root")?;
        } else {
            write!(f, "field `{}`", self.field)?;
        }
        let d = dialect_phrase(self.dialect);
        match &self.kind {
            LowerErrorKind::RootNotObject { found } => write!(
                f,
                " is {found}, not an object; {d} passes tool arguments as one JSON object: \
                 wrap the value in a struct, e.g. `struct Args {{ value: T }}`"
            ),
            LowerErrorKind::RootUnion => write!(
                f,
                " is a union (oneOf/anyOf: an enum or an untagged type), which {d} cannot \
                 express (tool parameters must be one object, and unions are refused at the \
                 top level); wrap it in a struct field, e.g. `struct Args {{ op: Op }}`"
            ),
            LowerErrorKind::Recursive { type_name } => write!(
                f,
                " is recursive (`{type_name}` contains itself), which {d} cannot express \
                 (no $ref support, and inlining a recursive type never ends); bound the depth \
                 with distinct types, or take the value as a JSON string and parse it in the tool"
            ),
            LowerErrorKind::Map => {
                let why = if self.dialect == Dialect::Gemini {
                    "its Schema has no additionalProperties"
                } else {
                    "every object must have `additionalProperties: false`"
                };
                write!(
                    f,
                    " is a map with free-form keys, which {d} cannot express ({why}); use a \
                     list of entries instead, e.g. `Vec<Entry>` with \
                     `struct Entry {{ key: String, value: V }}`, or a struct with fixed fields"
                )
            }
            LowerErrorKind::AnyValue => write!(
                f,
                " accepts any JSON value, which {d} cannot express (every schema needs a \
                 `type`); give it a concrete type, or take it as a JSON string and parse it \
                 in the tool"
            ),
            LowerErrorKind::Tuple => write!(
                f,
                " is a tuple of differently typed elements, which {d} cannot express (no \
                 `prefixItems`); use a struct with named fields"
            ),
            LowerErrorKind::Never => write!(
                f,
                " accepts no value at all (a `false` schema), which {d} cannot express; \
                 remove the field or fix its schema"
            ),
            LowerErrorKind::AlwaysNull => write!(
                f,
                " can only be null, which {d} cannot express (no null type); remove the field"
            ),
            LowerErrorKind::EmptyObject => write!(
                f,
                " is an object without properties, which {d} refuses (\"properties: should \
                 be non-empty for OBJECT type\"); give it a field, or use a `bool` or a unit \
                 enum variant instead"
            ),
            LowerErrorKind::RefWithKeywords => write!(
                f,
                " is a recursive reference combined with other keywords, which {d} cannot \
                 express ($ref must stand alone and a recursive type cannot be inlined); \
                 move the extra fields into the recursive type"
            ),
            LowerErrorKind::BadRef { reference, reason } => write!(
                f,
                " has `$ref: {reference:?}`, which cannot be resolved ({reason}); only \
                 references into the same schema (`#`, `#/$defs/Name`) are supported: put \
                 the definition under the root's `$defs`"
            ),
            LowerErrorKind::Contradiction { detail } => write!(
                f,
                " combines schemas that contradict each other ({detail}), so no value fits \
                 it; fix the schema"
            ),
            LowerErrorKind::Malformed { detail } => {
                write!(f, " is not a valid JSON Schema ({detail}); fix the schema")
            }
            LowerErrorKind::TooLarge { limit } => write!(
                f,
                " grows past {limit} schema nodes when its $refs are inlined for {d}; \
                 split the tool or simplify its parameter types"
            ),
            LowerErrorKind::TooDeep { limit } => write!(
                f,
                " nests deeper than {limit} levels when its $refs are inlined for {d}; \
                 flatten the parameter types"
            ),
        }
    }
}

impl std::error::Error for LowerError {}

/// Lowers a canonical parameter schema to the form `dialect` accepts.
///
/// `schema` is schemars' output for the parameter type ([`crate::schema::schema_for`]) or any
/// hand-written JSON Schema object. The rules per dialect are in the
/// [module documentation](self); the result is meant to be computed once per tool and
/// dialect and cached.
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

/// Where a `$ref` points.
fn resolve_pointer<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err("it points outside this schema".into());
    };
    let fragment = percent_decode(fragment);
    if fragment.is_empty() {
        return Ok(root);
    }
    let Some(pointer) = fragment.strip_prefix('/') else {
        return Err("anchors (`#name`) are not supported".into());
    };
    let mut at = root;
    for raw in pointer.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("nothing at `{fragment}`"))?;
    }
    Ok(at)
}

/// Decodes `%XX` escapes (URI fragments may carry them); anything malformed stays as is.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// Calls `f` on every direct subschema of `schema`, in keyword order. Definitions
/// (`$defs`) are not subschemas: they are reached only through references.
fn for_each_subschema<'a>(schema: &'a JsonObject, mut f: impl FnMut(&'a Value)) {
    for (key, value) in schema {
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(map) = value {
                    map.values().for_each(&mut f);
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter().for_each(&mut f);
                }
            }
            "items" => match value {
                Value::Array(items) => items.iter().for_each(&mut f),
                other => f(other),
            },
            "additionalProperties"
            | "unevaluatedProperties"
            | "additionalItems"
            | "unevaluatedItems"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else" => f(value),
            _ => {}
        }
    }
}

/// The `$ref`s that appear in `schema` itself or its subschemas (not through other refs).
fn refs_in(schema: &Value, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::String(r)) = map.get("$ref") {
        out.push(r.clone());
    }
    for_each_subschema(map, |sub| refs_in(sub, out));
}

/// The reference targets to keep as `$ref` so that no reference cycle is inlined: the
/// targets of back edges of a depth-first walk from the root. Every cycle has at least one
/// back edge in any depth-first walk, so cutting those cuts every cycle; acyclic targets
/// (the vast majority) are still inlined. Linear in the size of the schema.
fn recursive_targets(root: &Value) -> HashSet<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Open,
        Done,
    }
    let mut state: HashMap<String, State> = HashMap::new();
    let mut keep = HashSet::new();
    // Explicit stack: a long chain of definitions must not overflow the thread's stack.
    let mut stack: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut first = Vec::new();
    refs_in(root, &mut first);
    state.insert("#".into(), State::Open);
    stack.push(("#".into(), first, 0));
    while let Some((_, children, next)) = stack.last_mut() {
        let Some(child) = children.get(*next).cloned() else {
            if let Some((done, _, _)) = stack.pop() {
                state.insert(done, State::Done);
            }
            continue;
        };
        *next += 1;
        match state.get(&child) {
            Some(State::Open) => {
                keep.insert(child);
            }
            Some(State::Done) => {}
            None => {
                let mut grand = Vec::new();
                if let Ok(target) = resolve_pointer(root, &child) {
                    refs_in(target, &mut grand);
                }
                state.insert(child.clone(), State::Open);
                stack.push((child, grand, 0));
            }
        }
    }
    keep
}

/// A readable name for a reference target: `Tree` for `#/$defs/Tree`.
fn type_name_of(reference: &str) -> String {
    if reference == "#" {
        return "the root type".into();
    }
    percent_decode(reference)
        .rsplit('/')
        .next()
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| reference.to_owned())
}

fn escape_pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The JSON types a `type` keyword allows, or `None` when it has none.
fn types_of(schema: &JsonObject) -> Option<Vec<String>> {
    types_in(schema.get("type")?)
}

/// The JSON types in the value of a `type` keyword.
fn types_in(ty: &Value) -> Option<Vec<String>> {
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

fn type_value(types: &[String]) -> Value {
    match types {
        [one] => Value::String(one.clone()),
        many => Value::Array(many.iter().cloned().map(Value::String).collect()),
    }
}

/// Whether a schema admits `null` (on its face: `{}` does, a `$ref` is not followed).
fn admits_null(schema: &Value) -> bool {
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
fn is_null_only(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type") == Some(&json!("null"))
        && map
            .keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
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

/// Merges `overlay` into `base` as `allOf` would: properties and `required` are united,
/// types intersected, anything else taken from `overlay` (the outer schema, whose
/// annotations are the more specific).
fn merge_into(base: &mut JsonObject, overlay: &JsonObject) -> Result<(), String> {
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

/// The types both lists allow (`integer` is also a `number`).
fn intersect_types(a: &[String], b: &[String]) -> Vec<String> {
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

/// One lowering: the document, the dialect, and what has been produced so far.
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

    fn lower_root(&mut self, schema: &JsonObject) -> Result<JsonObject, LowerError> {
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

    /// The object a reference points to, for inlining.
    fn resolve_object(&self, reference: &str, path: &FieldPath) -> Result<JsonObject, LowerError> {
        let bad = |reason: String| {
            self.err(
                path,
                LowerErrorKind::BadRef {
                    reference: reference.to_owned(),
                    reason,
                },
            )
        };
        match resolve_pointer(self.root, reference).map_err(bad)? {
            Value::Object(map) => Ok(map
                .iter()
                .filter(|(k, _)| !DOCUMENT_KEYWORDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()),
            Value::Bool(true) => Ok(Map::new()),
            Value::Bool(false) => Ok(Map::from_iter([("not".to_owned(), json!({}))])),
            _ => Err(bad("the target is not a schema".into())),
        }
    }

    /// Merges an `allOf` into its schema. Parts that reference a kept (recursive) target
    /// cannot be merged and stay in a residual `allOf`.
    fn flatten_all_of(
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

    fn lower_ref(
        &mut self,
        reference: &str,
        schema: &JsonObject,
        path: &FieldPath,
        depth: usize,
    ) -> Result<Value, LowerError> {
        let siblings: JsonObject = schema
            .iter()
            .filter(|(k, _)| k.as_str() != "$ref" && !DOCUMENT_KEYWORDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if self.keep.contains(reference) {
            let target = self.keep_target(reference, path, depth)?;
            if siblings.is_empty() {
                return Ok(json!({"$ref": target}));
            }
            if self.strict() {
                // OpenAI refuses keywords beside `$ref` (its own SDK unravels such refs, which
                // a recursive one cannot be); a one-branch anyOf carries the field's
                // description instead.
                if !siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
                    return Err(self.err(path, LowerErrorKind::RefWithKeywords));
                }
                let mut out = siblings;
                let notes = Self::default_note(&out).into_iter().collect();
                Self::restate(&mut out, notes);
                out.retain(|k, _| k == "description");
                out.insert("anyOf".into(), json!([{"$ref": target}]));
                return Ok(Value::Object(out));
            }
            // JSON Schema 2020-12 applies keywords beside `$ref` together with it.
            let Value::Object(mut rest) = self.lower_keywords(&siblings, path, depth)? else {
                return Err(self.err(path, LowerErrorKind::RefWithKeywords));
            };
            rest.insert("$ref".into(), Value::String(target));
            return Ok(Value::Object(rest));
        }
        if self.stack.iter().any(|r| r == reference) {
            return Err(self.err(
                path,
                LowerErrorKind::Recursive {
                    type_name: type_name_of(reference),
                },
            ));
        }
        let mut merged = self.resolve_object(reference, path)?;
        merge_into(&mut merged, &siblings)
            .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
        self.stack.push(reference.to_owned());
        // The inlined body stands where the `$ref` stood: same path, same depth.
        self.nodes -= 1;
        let result = self.lower_map(&merged, path, depth);
        self.stack.pop();
        result
    }

    /// Lowers a kept (recursive) definition once, and returns the reference to use for it.
    fn keep_target(
        &mut self,
        reference: &str,
        path: &FieldPath,
        depth: usize,
    ) -> Result<String, LowerError> {
        if reference == "#" {
            return Ok("#".into());
        }
        if let Some(name) = self.kept_names.get(reference) {
            return Ok(format!("#/$defs/{}", escape_pointer_token(name)));
        }
        let base = type_name_of(reference);
        let mut name = base.clone();
        let mut n = 2;
        while self.kept_names.values().any(|taken| taken == &name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.kept_names.insert(reference.to_owned(), name.clone());
        let mut body = self.resolve_object(reference, path)?;
        body.remove("title");
        // Inline-cycle detection starts afresh inside a definition: its own refs to kept
        // targets stay references.
        let saved = std::mem::take(&mut self.stack);
        let lowered = self.lower_map(&body, path, depth + 1);
        self.stack = saved;
        self.kept.push((name.clone(), lowered?));
        Ok(format!("#/$defs/{}", escape_pointer_token(&name)))
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
                    let mut lowered = Vec::with_capacity(items.len());
                    for (i, sub) in items.iter().enumerate() {
                        lowered.push(self.lower(
                            sub,
                            &path.with(PathSegment::Index(i)),
                            depth + 1,
                        )?);
                    }
                    Value::Array(lowered)
                }
                "items" => match value {
                    // Draft-07 tuples: the same thing as 2020-12 `prefixItems`.
                    Value::Array(items) => {
                        let mut lowered = Vec::with_capacity(items.len());
                        for (i, sub) in items.iter().enumerate() {
                            lowered.push(self.lower(
                                sub,
                                &path.with(PathSegment::Index(i)),
                                depth + 1,
                            )?);
                        }
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

    /// Homogeneous tuples become arrays with a fixed length; others cannot be expressed.
    fn untuple(&self, out: &mut JsonObject, path: &FieldPath) -> Result<(), LowerError> {
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
    fn refuse_map(&self, out: &JsonObject, path: &FieldPath) -> Result<(), LowerError> {
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
    fn restate(out: &mut JsonObject, notes: Vec<String>) {
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

    fn default_note(out: &JsonObject) -> Option<String> {
        out.get("default").map(|d| format!("Default: {d}."))
    }

    fn finish_openai(
        &mut self,
        mut out: JsonObject,
        path: &FieldPath,
    ) -> Result<Value, LowerError> {
        if out.get("not") == Some(&json!({})) {
            return Err(self.err(path, LowerErrorKind::Never));
        }
        // Only anyOf is supported; a schemars oneOf is disjoint anyway (distinct tags).
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

    fn finish_gemini(
        &mut self,
        mut out: JsonObject,
        path: &FieldPath,
    ) -> Result<Value, LowerError> {
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

/// Replaces `type: ["string", "integer"]` (several non-null types) by an `anyOf` of one
/// type each, since neither OpenAI strict mode nor Gemini documents multi-type arrays beyond
/// `[T, "null"]`.
fn split_type_union(out: &mut JsonObject) {
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
fn flatten_nested_any_of(out: &mut JsonObject) {
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
fn flatten_branches(branches: Vec<Value>) -> Vec<Value> {
    let mut holder = Map::from_iter([("anyOf".to_owned(), Value::Array(branches))]);
    flatten_nested_any_of(&mut holder);
    match holder.remove("anyOf") {
        Some(Value::Array(b)) => b,
        _ => Vec::new(),
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
