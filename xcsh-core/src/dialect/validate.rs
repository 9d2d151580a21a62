//! Checks a finished tool definition against each provider's published rules.
//!
//! These validators are written from the providers' documentation, independently of
//! [`lower_schema`](super::lower_schema), so that a test can hold the lowering to the rules
//! rather than to itself. Each check cites where its rule comes from:
//!
//! - **Anthropic** (<https://docs.anthropic.com/en/api/messages>, `tools[]`): `name` matches
//!   `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` is required and is a JSON Schema object with
//!   `type: "object"`; the API answers "input_schema does not support oneOf, allOf, or anyOf
//!   at the top level".
//! - **OpenAI** (<https://platform.openai.com/docs/guides/function-calling>, Chat Completions
//!   `tools[].function` and Responses `tools[]`): `name` is a-z, A-Z, 0-9, `_` and `-`, at
//!   most 64 characters. With `strict: true`, the Structured Outputs subset
//!   (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the
//!   root is an object and not `anyOf`; every object has `additionalProperties: false` and
//!   lists every property in `required`; only the supported keywords and string formats;
//!   `$ref` only to `#` or `#/$defs/…` and alone; at most 10 levels of object nesting, 5000
//!   properties, 1000 enum values (and 15,000 characters for one enum of more than 250
//!   strings), 120,000 characters of property names, definition names, enum and const values.
//! - **Gemini** (<https://ai.google.dev/api/caching#FunctionDeclaration> and `#Schema`):
//!   `name` starts with a letter or `_`, then letters, digits, `_`, `.`, `:`, `-`, at most 64
//!   characters; `parameters` is a `Schema`: only its fields (no `$ref`, `$defs`,
//!   `additionalProperties`, `const`, `oneOf`, …), `type` one name (no arrays), `enum` only of
//!   strings on a string, formats `float`/`double` (number), `int32`/`int64` (integer),
//!   `enum`/`date-time` (string), an array has `items`, and an object has non-empty
//!   `properties` ("properties: should be non-empty for OBJECT type").
//! - **Bedrock Converse** (<https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html>):
//!   `name` matches `[a-zA-Z0-9_-]+`, 1–64 characters; `description`, when present, is not
//!   empty; `inputSchema.json` is a JSON Schema object; its root is `type: "object"` without
//!   top-level combinators (Claude models behind Bedrock apply Anthropic's rule).
//! - **MCP** (specification 2025-11-25, "Tools"): `name` should be 1–128 characters of
//!   A-Z, a-z, 0-9, `_`, `-`, `.`; `inputSchema` is a JSON Schema object with
//!   `type: "object"`; `$ref`s must resolve within the schema.
//!
//! ```
//! use serde_json::json;
//! use xcsh_core::Dialect;
//! use xcsh_core::dialect::validate;
//!
//! let def = json!({"name": "bad name", "input_schema": {"type": "object", "anyOf": []}});
//! let problems = validate::tool_definition(Dialect::Anthropic, &def);
//! let pointers: Vec<&str> = problems.iter().map(|v| v.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/name", "/input_schema/anyOf"]);
//! ```

use std::fmt;

use serde_json::{Map, Value};

use super::Dialect;
use super::lower::{GEMINI_KEYWORDS, OPENAI_FORMATS, OPENAI_KEYWORDS, gemini_format_ok};

/// One rule a definition breaks, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) to the offending value inside the checked document; `""` is
    /// the document itself.
    pub pointer: String,
    /// What is wrong and what the provider requires instead.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Checks a whole tool definition, in the shape [`tool_definition`](super::tool_definition)
/// produces for `dialect`, and returns every violation (empty when it is acceptable).
///
/// ```
/// use serde_json::json;
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// let def = json!({"type": "function", "function": {
///     "name": "grep", "description": "Greps.", "strict": true,
///     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
/// }});
/// let v = validate::tool_definition(Dialect::OpenAiChat, &def);
/// assert_eq!(v.len(), 2);
/// assert_eq!(v[0].pointer, "/function/parameters");
/// assert!(v[0].message.contains("additionalProperties: false"));
/// assert!(v[1].message.contains("`required` must list every property"));
/// ```
pub fn tool_definition(dialect: Dialect, definition: &Value) -> Vec<Violation> {
    let mut out = Checker::default();
    let Value::Object(def) = definition else {
        out.push("", "a tool definition must be a JSON object");
        return out.violations;
    };
    match dialect {
        Dialect::Anthropic => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            out.schema_at(dialect, def.get("input_schema"), "/input_schema", false);
        }
        Dialect::OpenAiChat => {
            if def.get("type") != Some(&Value::String("function".into())) {
                out.push("/type", "must be \"function\"");
            }
            match def.get("function") {
                Some(Value::Object(function)) => {
                    out.name_at(dialect, function.get("name"), "/function/name");
                    out.optional_string(function.get("description"), "/function/description");
                    let strict = out.strict_flag(function.get("strict"), "/function/strict");
                    out.openai_parameters(
                        function.get("parameters"),
                        "/function/parameters",
                        strict,
                    );
                }
                _ => out.push(
                    "/function",
                    "is required: {name, description, parameters, strict}",
                ),
            }
        }
        Dialect::OpenAiResponses => {
            if def.get("type") != Some(&Value::String("function".into())) {
                out.push("/type", "must be \"function\"");
            }
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            let strict = out.strict_flag(def.get("strict"), "/strict");
            out.openai_parameters(def.get("parameters"), "/parameters", strict);
        }
        Dialect::Gemini => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            if let Some(parameters) = def.get("parameters") {
                out.schema_at(dialect, Some(parameters), "/parameters", false);
            }
        }
        Dialect::Bedrock => match def.get("toolSpec") {
            Some(Value::Object(spec)) => {
                out.name_at(dialect, spec.get("name"), "/toolSpec/name");
                match spec.get("description") {
                    None => {}
                    Some(Value::String(d)) if !d.is_empty() => {}
                    Some(Value::String(_)) => out.push(
                        "/toolSpec/description",
                        "must not be empty (minimum length 1); leave it out instead",
                    ),
                    Some(_) => out.push("/toolSpec/description", "must be a string"),
                }
                match spec.get("inputSchema") {
                    Some(Value::Object(input)) => {
                        out.schema_at(
                            dialect,
                            input.get("json"),
                            "/toolSpec/inputSchema/json",
                            false,
                        );
                    }
                    _ => out.push(
                        "/toolSpec/inputSchema",
                        "is required: {\"json\": <JSON Schema>}",
                    ),
                }
            }
            _ => out.push("/toolSpec", "is required: {name, description, inputSchema}"),
        },
        Dialect::Mcp => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("title"), "/title");
            out.optional_string(def.get("description"), "/description");
            if let Some(a) = def.get("annotations")
                && !a.is_object()
            {
                out.push("/annotations", "must be an object");
            }
            out.schema_at(dialect, def.get("inputSchema"), "/inputSchema", false);
        }
    }
    out.violations
}

/// Checks a tool name against `dialect`'s rule; violations point at `""` (the name).
///
/// ```
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// assert!(validate::tool_name(Dialect::Gemini, "fs.read").is_empty());
/// assert_eq!(validate::tool_name(Dialect::Anthropic, "fs.read").len(), 1);
/// assert!(validate::tool_name(Dialect::Mcp, &"x".repeat(100)).is_empty());
/// assert_eq!(validate::tool_name(Dialect::OpenAiChat, &"x".repeat(100)).len(), 1);
/// ```
pub fn tool_name(dialect: Dialect, name: &str) -> Vec<Violation> {
    let mut out = Checker::default();
    out.name(dialect, name, "");
    out.violations
}

/// Checks a parameter schema (already lowered) against `dialect`'s rules: for OpenAI, those
/// of strict mode. Pointers are relative to the schema.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// let schema = json!({"type": "object", "properties": {
///     "n": {"type": ["integer", "null"], "format": "uint8"}
/// }});
/// let v = validate::schema(Dialect::Gemini, &schema);
/// let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
/// assert_eq!(pointers, ["/properties/n/type"]);
/// ```
pub fn schema(dialect: Dialect, schema: &Value) -> Vec<Violation> {
    let mut out = Checker::default();
    out.schema_at(dialect, Some(schema), "", dialect.is_openai_strict());
    out.violations
}

/// JSON Pointer token escaping (RFC 6901).
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// One provider's tool-name rule.
struct NameRule {
    max: usize,
    punctuation: &'static str,
    first_letter_or_underscore: bool,
    text: &'static str,
}

fn name_rule(dialect: Dialect) -> NameRule {
    match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Bedrock => {
            NameRule {
                max: 64,
                punctuation: "_-",
                first_letter_or_underscore: false,
                text: "1–64 characters of A-Z, a-z, 0-9, `_` and `-`",
            }
        }
        Dialect::Gemini => NameRule {
            max: 64,
            punctuation: "_.:-",
            first_letter_or_underscore: true,
            text: "a letter or `_`, then A-Z, a-z, 0-9, `_`, `.`, `:` and `-`, at most 64 characters",
        },
        Dialect::Mcp => NameRule {
            max: 128,
            punctuation: "_.-",
            first_letter_or_underscore: false,
            text: "1–128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`",
        },
    }
}

/// Fields of Gemini's Schema object that only annotate, beyond those the lowering emits.
const GEMINI_ANNOTATIONS: &[&str] = &["title", "default", "example"];

/// OpenAI strict mode's documented size limits.
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_STRING_BUDGET: usize = 120_000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_LARGE_ENUM_CHARS: usize = 15_000;

#[derive(Default)]
struct Checker {
    violations: Vec<Violation>,
    // OpenAI strict-mode totals over one schema.
    properties: usize,
    enum_values: usize,
    string_budget: usize,
    deepest: usize,
}

impl Checker {
    fn push(&mut self, pointer: &str, message: impl Into<String>) {
        self.violations.push(Violation {
            pointer: pointer.to_owned(),
            message: message.into(),
        });
    }

    fn optional_string(&mut self, value: Option<&Value>, pointer: &str) {
        if let Some(v) = value
            && !v.is_string()
        {
            self.push(pointer, "must be a string");
        }
    }

    fn name_at(&mut self, dialect: Dialect, value: Option<&Value>, pointer: &str) {
        match value {
            Some(Value::String(name)) => self.name(dialect, name, pointer),
            Some(_) => self.push(pointer, "the tool name must be a string"),
            None => self.push(pointer, "the tool name is required"),
        }
    }

    fn name(&mut self, dialect: Dialect, name: &str, pointer: &str) {
        let rule = name_rule(dialect);
        let len = name.chars().count();
        let bad_char = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || rule.punctuation.contains(*c)));
        let bad_first = rule.first_letter_or_underscore
            && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        let problem = if len == 0 {
            Some("is empty".to_owned())
        } else if len > rule.max {
            Some(format!("is {len} characters long"))
        } else if let Some(c) = bad_char {
            Some(format!("contains {c:?}"))
        } else if bad_first {
            Some("does not start with a letter or `_`".to_owned())
        } else {
            None
        };
        if let Some(problem) = problem {
            self.push(
                pointer,
                format!(
                    "tool name `{name}` {problem}; {dialect} requires {}",
                    rule.text
                ),
            );
        }
    }

    fn strict_flag(&mut self, value: Option<&Value>, pointer: &str) -> bool {
        match value {
            Some(Value::Bool(b)) => *b,
            None => false,
            Some(_) => {
                self.push(pointer, "must be a boolean");
                false
            }
        }
    }

    fn openai_parameters(&mut self, value: Option<&Value>, pointer: &str, strict: bool) {
        if value.is_none() && !strict {
            return; // a function without parameters
        }
        self.schema_at(Dialect::OpenAiChat, value, pointer, strict);
    }

    /// Root rules shared by every dialect, then the dialect's own walk.
    fn schema_at(&mut self, dialect: Dialect, value: Option<&Value>, pointer: &str, strict: bool) {
        let Some(value) = value else {
            self.push(pointer, "the parameter schema is required");
            return;
        };
        let Value::Object(root) = value else {
            self.push(pointer, "the parameter schema must be a JSON object");
            return;
        };
        match root.get("type") {
            Some(Value::String(t)) if t.eq_ignore_ascii_case("object") => {}
            _ => self.push(
                &format!("{pointer}/type"),
                "the parameter schema's root must have `type: \"object\"` (tool arguments are one JSON object)",
            ),
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if root.contains_key(key) {
                self.push(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` at the root of the parameter schema is refused (Anthropic: \"input_schema does not support oneOf, allOf, or anyOf at the top level\"; OpenAI: the root must not be anyOf); put the union in a property"),
                );
            }
        }
        match dialect {
            Dialect::Gemini => self.gemini(value, pointer, true),
            Dialect::OpenAiChat | Dialect::OpenAiResponses if strict => {
                self.openai(value, value, pointer, 0, true);
                self.openai_totals(pointer);
            }
            _ => self.refs(value, value, pointer),
        }
    }

    /// Every `$ref` must resolve inside the document (no external or anchor references).
    fn refs(&mut self, root: &Value, schema: &Value, pointer: &str) {
        let Value::Object(map) = schema else { return };
        if let Some(r) = map.get("$ref") {
            match r.as_str() {
                Some(r) if resolves(root, r) => {}
                Some(r) => self.push(
                    &format!("{pointer}/$ref"),
                    format!("`$ref: {r:?}` does not resolve inside this schema; inline the definition or put it under the root's `$defs`"),
                ),
                None => self.push(&format!("{pointer}/$ref"), "`$ref` must be a string"),
            }
        }
        for (suffix, sub) in subschemas(map, true) {
            self.refs(root, sub, &format!("{pointer}{suffix}"));
        }
    }

    fn openai(
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

    fn openai_totals(&mut self, pointer: &str) {
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

    fn gemini(&mut self, schema: &Value, pointer: &str, is_root: bool) {
        let Value::Object(map) = schema else {
            self.push(
                pointer,
                "a Gemini Schema must be an object (no boolean schemas)",
            );
            return;
        };
        for key in map.keys() {
            // The lowering emits fewer fields than the Schema object documents (it restates
            // `title`, `default` and `example` in the description); the check allows them all.
            let documented = GEMINI_KEYWORDS.contains(&key.as_str())
                || GEMINI_ANNOTATIONS.contains(&key.as_str());
            if !documented {
                self.push(
                    &format!("{pointer}/{}", token(key)),
                    format!("`{key}` is not a field of Gemini's Schema object; the API refuses unknown fields"),
                );
            }
        }
        let ty = match map.get("type") {
            Some(Value::String(t)) => {
                let t = t.to_ascii_lowercase();
                if !matches!(
                    t.as_str(),
                    "string" | "number" | "integer" | "boolean" | "array" | "object"
                ) {
                    self.push(&format!("{pointer}/type"), format!("`{t}` is not a Gemini type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT)"));
                }
                Some(t)
            }
            Some(Value::Array(_)) => {
                self.push(
                    &format!("{pointer}/type"),
                    "type arrays are not supported; use one type and `nullable: true`",
                );
                None
            }
            Some(_) => {
                self.push(&format!("{pointer}/type"), "`type` must be a string");
                None
            }
            None => {
                if !map.contains_key("anyOf") {
                    self.push(pointer, "every Gemini Schema needs a `type` (or `anyOf`)");
                }
                None
            }
        };
        if let Some(n) = map.get("nullable")
            && !n.is_boolean()
        {
            self.push(&format!("{pointer}/nullable"), "must be a boolean");
        }
        if let Some(values) = map.get("enum") {
            let strings = matches!(values, Value::Array(v) if !v.is_empty() && v.iter().all(Value::is_string));
            if !strings {
                self.push(
                    &format!("{pointer}/enum"),
                    "`enum` must be a non-empty array of strings",
                );
            }
            if ty.as_deref() != Some("string") {
                self.push(
                    &format!("{pointer}/enum"),
                    "`enum` is only for `type: \"string\"`",
                );
            }
        }
        // Without a (valid) type the format cannot be judged; the type is reported already.
        if let (Some(t), Some(format)) = (ty.as_deref(), map.get("format")) {
            let ok = format.as_str().is_some_and(|f| gemini_format_ok(t, f));
            if !ok {
                self.push(
                    &format!("{pointer}/format"),
                    format!("format {format} is not supported for this type (number: float, double; integer: int32, int64; string: enum, date-time)"),
                );
            }
        }
        if ty.as_deref() == Some("array") && !map.contains_key("items") {
            self.push(pointer, "an array needs `items`");
        }
        if ty.as_deref() == Some("object") || map.contains_key("properties") {
            let props = match map.get("properties") {
                Some(Value::Object(p)) => Some(p),
                _ => None,
            };
            if props.is_none_or(Map::is_empty) {
                let hint = if is_root {
                    " (leave `parameters` out for a tool without parameters)"
                } else {
                    ""
                };
                self.push(
                    pointer,
                    format!("\"properties: should be non-empty for OBJECT type\"{hint}"),
                );
            }
            if let Some(Value::Array(required)) = map.get("required") {
                for (i, name) in required.iter().enumerate() {
                    let declared = name
                        .as_str()
                        .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)));
                    if !declared {
                        self.push(
                            &format!("{pointer}/required/{i}"),
                            format!("{name} is required but not a property"),
                        );
                    }
                }
            }
        }
        if let Some(Value::Array(branches)) = map.get("anyOf")
            && branches.is_empty()
        {
            self.push(&format!("{pointer}/anyOf"), "`anyOf` must not be empty");
        }
        for (suffix, sub) in subschemas(map, false) {
            self.gemini(sub, &format!("{pointer}{suffix}"), false);
        }
    }
}

/// Whether a `$ref` resolves inside `root`.
fn resolves(root: &Value, reference: &str) -> bool {
    let Some(fragment) = reference.strip_prefix('#') else {
        return false;
    };
    if fragment.is_empty() {
        return true;
    }
    fragment.starts_with('/') && root.pointer(fragment).is_some()
}

/// The subschemas of a schema with their pointer suffixes. With `defs`, the schemas under
/// `$defs`/`definitions` are included.
fn subschemas(map: &Map<String, Value>, defs: bool) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (key, value) in map {
        let k = token(key);
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(m) = value {
                    out.extend(m.iter().map(|(n, s)| (format!("/{k}/{}", token(n)), s)));
                }
            }
            "$defs" | "definitions" if defs => {
                if let Value::Object(m) = value {
                    out.extend(m.iter().map(|(n, s)| (format!("/{k}/{}", token(n)), s)));
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    out.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, s)| (format!("/{k}/{i}"), s)),
                    );
                }
            }
            "items" => match value {
                Value::Array(items) => {
                    out.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, s)| (format!("/{k}/{i}"), s)),
                    );
                }
                other => out.push((format!("/{k}"), other)),
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
            // `additionalProperties: false` is a boolean, not a schema to walk.
            | "else"
                if value.is_object() =>
            {
                out.push((format!("/{k}"), value));
            }
            _ => {}
        }
    }
    out
}
