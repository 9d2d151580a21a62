//! Unit tests of the dialect module: tool-choice shapes, names, every lowering error, the
//! definition shapes, the validators and argument restoring.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use xcsh_core::dialect::{
    Dialect, FieldPath, LowerError, LowerErrorKind, Provider, ToolMeta, gemini_tools, lower_schema,
    restore_arguments, tool_definition, validate,
};
use xcsh_core::schema::{JsonObject, schema_for};

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(map) => map,
        other => panic!("test schema must be an object, got {other}"),
    }
}

fn lower_err(dialect: Dialect, schema: Value) -> LowerError {
    match lower_schema(dialect, &obj(schema)) {
        Ok(l) => panic!("expected an error for {dialect}, got {}", Value::Object(l)),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------------
// Tool choice

#[test]
fn forced_tool_choice_has_each_apis_exact_shape() {
    let expected = [
        (
            Dialect::Anthropic,
            Some(json!({"type": "tool", "name": "resolve"})),
        ),
        (
            Dialect::OpenAiChat,
            Some(json!({"type": "function", "function": {"name": "resolve"}})),
        ),
        (
            Dialect::OpenAiResponses,
            Some(json!({"type": "function", "name": "resolve"})),
        ),
        (
            Dialect::Gemini,
            Some(json!({"function_calling_config": {
                "mode": "ANY",
                "allowed_function_names": ["resolve"],
            }})),
        ),
        (Dialect::Bedrock, Some(json!({"tool": {"name": "resolve"}}))),
        (Dialect::Mcp, None),
    ];
    assert_eq!(expected.len(), Dialect::ALL.len());
    for (dialect, shape) in expected {
        assert_eq!(dialect.forced_tool_choice("resolve"), shape, "{dialect}");
        // Serialised exactly: no extra keys, the name where the API reads it.
        assert_eq!(
            dialect.forced_tool_choice("resolve").map(|v| v.to_string()),
            shape.map(|v| v.to_string())
        );
    }
    assert_eq!(
        Dialect::OpenAiChat.forced_tool_choice("ast_edit"),
        Some(json!({"type": "function", "function": {"name": "ast_edit"}}))
    );
}

#[test]
fn a_provider_that_refuses_forced_choice_gets_none() {
    for dialect in Dialect::ALL {
        let provider = Provider::from(dialect);
        assert_eq!(provider.dialect, dialect);
        assert_eq!(
            provider.forced_tool_choice("resolve"),
            dialect.forced_tool_choice("resolve")
        );
        assert_eq!(provider.forced_choice, dialect != Dialect::Mcp);
        let refusing = provider.without_forced_choice();
        assert!(!refusing.forced_choice);
        assert_eq!(refusing.forced_tool_choice("resolve"), None);
    }
}

// ---------------------------------------------------------------------------------------
// Names

#[test]
fn dialect_names_round_trip_and_match_serde() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
        assert_eq!(dialect.to_string(), dialect.as_str());
        assert_eq!(
            serde_json::to_value(dialect).ok(),
            Some(json!(dialect.as_str()))
        );
        assert_eq!(
            serde_json::from_value::<Dialect>(json!(dialect.as_str())).ok(),
            Some(dialect)
        );
    }
    assert_eq!(" OpenAI-Chat ".parse::<Dialect>(), Ok(Dialect::OpenAiChat));
    let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
    assert_eq!(
        names,
        [
            "anthropic",
            "openai-chat",
            "openai-responses",
            "gemini",
            "bedrock",
            "mcp"
        ]
    );
}

#[test]
fn an_unknown_dialect_name_lists_the_valid_ones() {
    let err = "openai".parse::<Dialect>().expect_err("ambiguous");
    assert_eq!(err.given(), "openai");
    assert_eq!(
        err.to_string(),
        "unknown dialect `openai`; expected one of: anthropic, openai-chat, openai-responses, gemini, bedrock, mcp"
    );
}

// ---------------------------------------------------------------------------------------
// Lowering errors, one by one

#[test]
fn a_scalar_root_is_an_error_not_a_panic() {
    for dialect in Dialect::ALL {
        let err = lower_schema(dialect, &schema_for::<String>()).expect_err("string root");
        assert_eq!(
            err.kind(),
            &LowerErrorKind::RootNotObject {
                found: "a string".into()
            }
        );
        assert!(err.field().is_root());
        assert_eq!(err.dialect(), dialect);
    }
    let err = lower_schema(Dialect::Anthropic, &schema_for::<Vec<u8>>()).expect_err("array");
    assert_eq!(
        err.to_string(),
        "the parameters root is an array, not an object; anthropic passes tool arguments as \
         one JSON object: wrap the value in a struct, e.g. `struct Args { value: T }`"
    );
}

#[test]
fn a_unit_struct_root_is_refused_because_serde_reads_it_from_null() {
    #[derive(JsonSchema)]
    struct Unit;
    let err = lower_schema(Dialect::Mcp, &schema_for::<Unit>()).expect_err("null root");
    assert_eq!(
        err.kind(),
        &LowerErrorKind::RootNotObject {
            found: "null (a unit struct)".into()
        }
    );
}

#[test]
fn a_unit_enum_root_is_not_an_object() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Color {
        Red,
        Green,
    }
    let err = lower_schema(Dialect::Gemini, &schema_for::<Color>()).expect_err("enum root");
    assert_eq!(
        err.kind(),
        &LowerErrorKind::RootNotObject {
            found: "a string".into()
        }
    );
}

#[test]
fn a_data_enum_root_is_a_union_error_with_advice() {
    #[derive(JsonSchema)]
    #[serde(tag = "op")]
    #[allow(dead_code)]
    enum Op {
        Add { n: i32 },
        Clear,
    }
    for dialect in Dialect::ALL {
        let err = lower_schema(dialect, &schema_for::<Op>())
            .expect_err("a union root")
            .with_tool("calc");
        assert_eq!(err.kind(), &LowerErrorKind::RootUnion);
        assert_eq!(err.tool(), Some("calc"));
        let text = err.to_string();
        assert!(
            text.starts_with("tool `calc`: the parameters root is a union"),
            "{text}"
        );
        assert!(text.contains("`struct Args { op: Op }`"), "{text}");
    }
}

#[test]
fn an_optional_root_is_unwrapped() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        n: u8,
    }
    for dialect in Dialect::ALL {
        let lowered = lower_schema(dialect, &schema_for::<Option<Args>>()).expect("unwraps");
        assert_eq!(lowered["type"], json!("object"), "{dialect}");
        assert!(lowered["properties"]["n"].is_object());
        assert!(!lowered.contains_key("anyOf"));
    }
}

#[test]
fn recursion_error_names_the_field_the_dialect_and_what_to_do() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Node {
        next: Option<Box<Node>>,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        list: Vec<Node>,
    }
    let err = lower_schema(Dialect::Gemini, &schema_for::<Args>())
        .expect_err("recursive")
        .with_tool("walk");
    assert_eq!(err.field().to_string(), "list[].next");
    assert_eq!(
        err.to_string(),
        "tool `walk`: field `list[].next` is recursive (`Node` contains itself), which gemini \
         cannot express (no $ref support, and inlining a recursive type never ends); bound the \
         depth with distinct types, or take the value as a JSON string and parse it in the tool"
    );
}

#[test]
fn maps_are_refused_by_strict_mode_and_gemini_with_the_field_named() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        env: std::collections::HashMap<String, String>,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        jobs: Vec<Inner>,
    }
    let err = lower_schema(Dialect::OpenAiResponses, &schema_for::<Args>()).expect_err("map");
    assert_eq!(err.kind(), &LowerErrorKind::Map);
    assert_eq!(err.field().to_string(), "jobs[].env");
    assert_eq!(
        err.to_string(),
        "field `jobs[].env` is a map with free-form keys, which openai-responses strict mode \
         cannot express (every object must have `additionalProperties: false`); use a list of \
         entries instead, e.g. `Vec<Entry>` with `struct Entry { key: String, value: V }`, or a \
         struct with fixed fields"
    );
    let err = lower_schema(Dialect::Gemini, &schema_for::<Args>()).expect_err("map");
    assert!(
        err.to_string()
            .contains("which gemini cannot express (its Schema has no additionalProperties)")
    );
    // A serde_json::Map (an object of anything) is a map too.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Loose {
        extra: serde_json::Map<String, Value>,
    }
    let err = lower_schema(Dialect::OpenAiChat, &schema_for::<Loose>()).expect_err("map");
    assert_eq!(err.kind(), &LowerErrorKind::Map);
    assert_eq!(err.field().to_string(), "extra");
}

#[test]
fn any_value_error_says_what_to_do() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        data: Value,
    }
    let err = lower_schema(Dialect::OpenAiChat, &schema_for::<Args>()).expect_err("any");
    assert_eq!(
        err.to_string(),
        "field `data` accepts any JSON value, which openai-chat strict mode cannot express \
         (every schema needs a `type`); give it a concrete type, or take it as a JSON string and \
         parse it in the tool"
    );
}

#[test]
fn mixed_tuples_are_refused_where_there_is_no_prefix_items() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        spans: Vec<(String, u32)>,
    }
    for dialect in [Dialect::OpenAiChat, Dialect::Gemini] {
        let err = lower_schema(dialect, &schema_for::<Args>()).expect_err("tuple");
        assert_eq!(err.kind(), &LowerErrorKind::Tuple);
        assert_eq!(err.field().to_string(), "spans[]");
        assert!(err.to_string().ends_with("use a struct with named fields"));
    }
}

#[test]
fn a_false_schema_is_refused_where_it_cannot_be_written() {
    let schema = json!({"type": "object", "properties": {"never": false}});
    for dialect in [Dialect::OpenAiChat, Dialect::Gemini] {
        let err = lower_err(dialect, schema.clone());
        assert_eq!(err.kind(), &LowerErrorKind::Never);
        assert_eq!(err.field().to_string(), "never");
    }
    // JSON Schema dialects keep it, in its object form.
    let lowered = lower_schema(Dialect::Mcp, &obj(schema)).expect("lowers");
    assert_eq!(lowered["properties"]["never"], json!({"not": {}}));
}

#[test]
fn a_unit_field_is_always_null_which_gemini_cannot_say() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        nothing: (),
        n: u8,
    }
    let err = lower_schema(Dialect::Gemini, &schema_for::<Args>()).expect_err("null field");
    assert_eq!(err.kind(), &LowerErrorKind::AlwaysNull);
    assert_eq!(err.field().to_string(), "nothing");
    assert!(lower_schema(Dialect::OpenAiChat, &schema_for::<Args>()).is_ok());
}

#[test]
fn gemini_refuses_a_nested_object_without_properties() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Empty {}
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        marker: Empty,
    }
    let err = lower_schema(Dialect::Gemini, &schema_for::<Args>()).expect_err("empty");
    assert_eq!(err.kind(), &LowerErrorKind::EmptyObject);
    assert_eq!(err.field().to_string(), "marker");
    assert!(
        err.to_string()
            .contains("\"properties: should be non-empty for OBJECT type\"")
    );
    // Strict mode closes it: the model must send `{}`.
    let strict = lower_schema(Dialect::OpenAiChat, &schema_for::<Args>()).expect("lowers");
    assert_eq!(
        strict["properties"]["marker"],
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn a_recursive_ref_with_extra_keywords_cannot_be_strict() {
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/T"}},
        "required": ["root"],
        "$defs": {"T": {
            "type": "object",
            "properties": {
                "kids": {"type": "array", "items": {"$ref": "#/$defs/T", "properties": {"x": {"type": "string"}}}}
            }
        }}
    });
    let err = lower_err(Dialect::OpenAiChat, schema.clone());
    assert_eq!(err.kind(), &LowerErrorKind::RefWithKeywords);
    assert_eq!(err.field().to_string(), "root.kids[]");
    // 2020-12 dialects keep the keywords beside the reference.
    let lowered = lower_schema(Dialect::Anthropic, &obj(schema)).expect("lowers");
    assert_eq!(
        lowered["$defs"]["T"]["properties"]["kids"]["items"],
        json!({"$ref": "#/$defs/T", "properties": {"x": {"type": "string"}}})
    );
}

#[test]
fn unresolvable_references_are_errors_naming_the_reference() {
    let external = json!({"type": "object", "properties": {
        "a": {"$ref": "https://example.com/schema.json"}
    }});
    let err = lower_err(Dialect::Anthropic, external);
    assert_eq!(
        err.kind(),
        &LowerErrorKind::BadRef {
            reference: "https://example.com/schema.json".into(),
            reason: "it points outside this schema".into(),
        }
    );
    assert_eq!(err.field().to_string(), "a");
    let missing = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}});
    let err = lower_err(Dialect::Bedrock, missing);
    assert_eq!(
        err.to_string(),
        "field `a` has `$ref: \"#/$defs/Nope\"`, which cannot be resolved (nothing at \
         `/$defs/Nope`); only references into the same schema (`#`, `#/$defs/Name`) are \
         supported: put the definition under the root's `$defs`"
    );
    let anchor = json!({"type": "object", "properties": {"a": {"$ref": "#node"}}});
    assert!(matches!(
        lower_err(Dialect::Mcp, anchor).kind(),
        LowerErrorKind::BadRef { reason, .. } if reason.contains("anchors")
    ));
}

#[test]
fn contradicting_all_of_is_an_error() {
    let schema = json!({"type": "object", "properties": {
        "x": {"allOf": [{"type": "string"}, {"type": "integer"}]}
    }});
    let err = lower_err(Dialect::Anthropic, schema);
    assert!(matches!(err.kind(), LowerErrorKind::Contradiction { .. }));
    assert_eq!(err.field().to_string(), "x");
    assert!(
        err.to_string()
            .contains("type \"string\" and type \"integer\" have nothing in common")
    );
}

#[test]
fn malformed_schemas_are_errors() {
    let err = lower_err(
        Dialect::OpenAiChat,
        json!({"type": "object", "properties": ["a"]}),
    );
    assert_eq!(
        err.kind(),
        &LowerErrorKind::Malformed {
            detail: "`properties` is not an object".into()
        }
    );
    let err = lower_err(
        Dialect::Mcp,
        json!({"type": "object", "properties": {"a": 3}}),
    );
    assert!(matches!(err.kind(), LowerErrorKind::Malformed { .. }));
    assert_eq!(err.field().to_string(), "a");
}

#[test]
fn an_exponential_schema_stops_at_the_size_limit() {
    // D0 has two fields of D1, D1 two of D2, …: inlined, 2^25 nodes.
    let mut defs = serde_json::Map::new();
    for i in 0..25 {
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {
                "a": {"$ref": format!("#/$defs/D{}", i + 1)},
                "b": {"$ref": format!("#/$defs/D{}", i + 1)},
            }}),
        );
    }
    defs.insert("D25".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let started = std::time::Instant::now();
    let err = lower_err(Dialect::Anthropic, schema);
    assert_eq!(err.kind(), &LowerErrorKind::TooLarge { limit: 100_000 });
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_very_deep_schema_stops_at_the_depth_limit() {
    let mut defs = serde_json::Map::new();
    for i in 0..200 {
        defs.insert(
            format!("L{i}"),
            json!({"type": "object", "properties": {"down": {"$ref": format!("#/$defs/L{}", i + 1)}}}),
        );
    }
    defs.insert("L200".into(), json!({"type": "integer"}));
    let schema =
        json!({"type": "object", "properties": {"top": {"$ref": "#/$defs/L0"}}, "$defs": defs});
    let err = lower_err(Dialect::Mcp, schema);
    assert!(
        matches!(err.kind(), LowerErrorKind::TooDeep { .. }),
        "{err}"
    );
}

#[test]
fn field_paths_render_items_indexes_and_map_values() {
    assert_eq!(FieldPath::root().to_string(), "");
    let schema = json!({"type": "object", "properties": {
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "t": {"type": "array", "prefixItems": [{"type": "string"}, {}]}
        }}}
    }});
    // The map is fine for MCP; for strict mode both the map and the untyped tuple element
    // are not, and the outer problem is the one reported.
    let err = lower_err(Dialect::OpenAiChat, schema.clone());
    assert_eq!(err.field().to_string(), "m");
    assert_eq!(err.kind(), &LowerErrorKind::Map);
    let err = lower_err(
        Dialect::Anthropic,
        json!({"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/Gone"}}}
        }}),
    );
    assert_eq!(err.field().to_string(), "m.<key>[]");
    let err = lower_err(
        Dialect::OpenAiChat,
        json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}, {}]}}}),
    );
    assert_eq!(err.field().to_string(), "t[1]");
    assert_eq!(err.kind(), &LowerErrorKind::AnyValue);
    assert!(lower_schema(Dialect::Mcp, &obj(schema)).is_ok());
}

// ---------------------------------------------------------------------------------------
// Hand-written schemas

#[test]
fn draft_07_definitions_root_refs_and_all_of_are_inlined() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/Args",
        "definitions": {
            "Args": {
                "title": "Args",
                "allOf": [
                    {"$ref": "#/definitions/Base"},
                    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}
                ]
            },
            "Base": {"type": "object", "properties": {"a": {"type": "string", "description": "A."}}, "required": ["a"]}
        }
    });
    for dialect in Dialect::ALL {
        let lowered = lower_schema(dialect, &obj(schema.clone())).expect("lowers");
        assert_eq!(lowered["type"], json!("object"));
        assert_eq!(lowered["properties"]["a"]["description"], json!("A."));
        assert_eq!(lowered["properties"]["b"]["type"], json!("integer"));
        assert_eq!(lowered["required"], json!(["a", "b"]), "{dialect}");
        for gone in ["$schema", "$ref", "definitions", "$defs", "allOf", "title"] {
            assert!(!lowered.contains_key(gone), "{dialect} kept {gone}");
        }
        let def = tool_definition(dialect, "t", &ToolMeta::new("T."), &lowered);
        assert_eq!(
            validate::tool_definition(dialect, &def),
            vec![],
            "{dialect}"
        );
    }
}

#[test]
fn an_empty_schema_means_a_tool_without_parameters() {
    for dialect in Dialect::ALL {
        let lowered = lower_schema(dialect, &JsonObject::new()).expect("lowers");
        assert_eq!(lowered["type"], json!("object"));
        let def = tool_definition(dialect, "ping", &ToolMeta::new("Pings."), &lowered);
        assert_eq!(
            validate::tool_definition(dialect, &def),
            vec![],
            "{dialect}"
        );
    }
}

#[test]
fn gemini_keeps_only_its_formats_and_restates_what_it_drops() {
    let schema = json!({"type": "object", "properties": {
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string", "format": "uri"},
        "n": {"type": "integer", "format": "uint16", "exclusiveMinimum": 0, "default": 5},
        "x": {"type": "number", "format": "float"},
        "k": {"type": "integer", "enum": [1, 2, 3]},
        "c": {"const": "only"},
    }});
    let lowered = lower_schema(Dialect::Gemini, &obj(schema)).expect("lowers");
    let p = &lowered["properties"];
    assert_eq!(p["when"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(
        p["site"],
        json!({"type": "string", "description": "Format: uri."})
    );
    assert_eq!(
        p["n"],
        json!({"type": "integer", "description": "Default: 5. Must be greater than 0."})
    );
    assert_eq!(p["x"], json!({"type": "number", "format": "float"}));
    assert_eq!(
        p["k"],
        json!({"type": "integer", "description": "Allowed values: 1, 2, 3."})
    );
    assert_eq!(p["c"], json!({"type": "string", "enum": ["only"]}));
    assert_eq!(
        validate::schema(Dialect::Gemini, &Value::Object(lowered)),
        vec![]
    );
}

#[test]
fn strict_mode_drops_unsupported_keywords_and_keeps_supported_constraints() {
    let schema = json!({"type": "object", "properties": {
        "id": {"type": "string", "format": "uuid", "pattern": "^[0-9a-f-]+$", "minLength": 36},
        "site": {"type": "string", "format": "uri", "title": "Site"},
        "n": {"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 3, "examples": [3]},
        "xs": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": true, "deprecated": true},
    }, "required": ["id", "site", "n", "xs"]});
    let lowered = lower_schema(Dialect::OpenAiChat, &obj(schema)).expect("lowers");
    let p = &lowered["properties"];
    assert_eq!(
        p["id"],
        json!({"type": "string", "format": "uuid", "pattern": "^[0-9a-f-]+$", "minLength": 36})
    );
    assert_eq!(
        p["site"],
        json!({"type": "string", "description": "Site. Format: uri."})
    );
    assert_eq!(
        p["n"],
        json!({"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 3})
    );
    assert_eq!(
        p["xs"],
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Items must be unique."})
    );
    assert_eq!(
        validate::schema(Dialect::OpenAiChat, &Value::Object(lowered)),
        vec![]
    );
}

#[test]
fn strict_mode_makes_optional_enums_and_objects_nullable_with_any_of() {
    let schema = json!({"type": "object", "properties": {
        "e": {"type": "string", "enum": ["a", "b"], "description": "E."},
        "o": {"type": "object", "properties": {"z": {"type": "boolean"}}},
        "s": {"type": "string"},
    }});
    let lowered = lower_schema(Dialect::OpenAiResponses, &obj(schema)).expect("lowers");
    let p = &lowered["properties"];
    assert_eq!(
        p["e"],
        json!({"description": "E.", "anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]})
    );
    assert_eq!(
        p["o"],
        json!({"anyOf": [
            {"type": "object", "properties": {"z": {"type": ["boolean", "null"]}}, "required": ["z"], "additionalProperties": false},
            {"type": "null"}
        ]})
    );
    assert_eq!(p["s"], json!({"type": ["string", "null"]}));
    assert_eq!(lowered["required"], json!(["e", "o", "s"]));
}

// ---------------------------------------------------------------------------------------
// Definitions

#[test]
fn definitions_have_each_apis_request_shape() {
    let schema =
        obj(json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}));
    let meta = ToolMeta::new("Searches.");
    let cases = [
        (
            Dialect::Anthropic,
            json!({"name": "search", "description": "Searches.", "input_schema": schema}),
        ),
        (
            Dialect::OpenAiChat,
            json!({"type": "function", "function": {
                "name": "search", "description": "Searches.", "parameters": schema, "strict": true
            }}),
        ),
        (
            Dialect::OpenAiResponses,
            json!({"type": "function", "name": "search", "description": "Searches.",
                   "parameters": schema, "strict": true}),
        ),
        (
            Dialect::Gemini,
            json!({"name": "search", "description": "Searches.", "parameters": schema}),
        ),
        (
            Dialect::Bedrock,
            json!({"toolSpec": {"name": "search", "description": "Searches.",
                   "inputSchema": {"json": schema}}}),
        ),
        (
            Dialect::Mcp,
            json!({"name": "search", "description": "Searches.", "inputSchema": schema}),
        ),
    ];
    for (dialect, expected) in cases {
        assert_eq!(
            tool_definition(dialect, "search", &meta, &schema),
            expected,
            "{dialect}"
        );
    }
}

#[test]
fn mcp_definitions_carry_title_and_annotations_and_others_ignore_them() {
    let schema = obj(json!({"type": "object", "properties": {}}));
    let meta = ToolMeta::new("Edits.")
        .with_title("AST Edit")
        .with_annotations(json!({"destructiveHint": true}));
    assert_eq!(
        tool_definition(Dialect::Mcp, "ast_edit", &meta, &schema),
        json!({"name": "ast_edit", "title": "AST Edit", "description": "Edits.",
               "inputSchema": {"type": "object", "properties": {}},
               "annotations": {"destructiveHint": true}})
    );
    let anthropic = tool_definition(Dialect::Anthropic, "ast_edit", &meta, &schema);
    assert!(anthropic.get("title").is_none() && anthropic.get("annotations").is_none());
}

#[test]
fn bedrock_leaves_out_an_empty_description_and_gemini_wraps_declarations() {
    let schema = obj(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    let def = tool_definition(Dialect::Bedrock, "x", &ToolMeta::new(""), &schema);
    assert!(def["toolSpec"].get("description").is_none());
    assert_eq!(validate::tool_definition(Dialect::Bedrock, &def), vec![]);

    let a = tool_definition(Dialect::Gemini, "a", &ToolMeta::new("A."), &schema);
    let b = tool_definition(Dialect::Gemini, "b", &ToolMeta::new("B."), &schema);
    assert_eq!(
        gemini_tools([a.clone(), b.clone()]),
        json!({"functionDeclarations": [a, b]})
    );
}

#[test]
fn a_root_description_equal_to_the_tool_description_is_sent_once() {
    /// Lists files.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct List {
        dir: String,
    }
    let schema = schema_for::<List>();
    for dialect in Dialect::ALL {
        let lowered = lower_schema(dialect, &schema).expect("lowers");
        assert_eq!(lowered["description"], json!("Lists files."));
        let same = tool_definition(dialect, "list", &ToolMeta::new("Lists files."), &lowered);
        assert_eq!(
            same.to_string().matches("Lists files.").count(),
            1,
            "{dialect}"
        );
        let other = tool_definition(dialect, "list", &ToolMeta::new("Other."), &lowered);
        assert!(other.to_string().contains("Lists files."), "{dialect}");
    }
}

// ---------------------------------------------------------------------------------------
// Validators

fn pointers(v: &[validate::Violation]) -> Vec<&str> {
    v.iter().map(|v| v.pointer.as_str()).collect()
}

#[test]
fn name_rules_follow_each_provider() {
    let cases: [(&str, [bool; 6]); 7] = [
        // name: anthropic, openai-chat, openai-responses, gemini, bedrock, mcp
        ("ast_edit", [true; 6]),
        ("ast-edit", [true; 6]),
        ("fs.read", [false, false, false, true, false, true]),
        ("ns:tool", [false, false, false, true, false, false]),
        ("9lives", [true, true, true, false, true, true]),
        ("has space", [false; 6]),
        ("", [false; 6]),
    ];
    for (name, ok) in cases {
        for (dialect, ok) in Dialect::ALL.into_iter().zip(ok) {
            let v = validate::tool_name(dialect, name);
            assert_eq!(v.is_empty(), ok, "{name:?} for {dialect}: {v:?}");
        }
    }
    let long = "a".repeat(65);
    for dialect in Dialect::ALL {
        let v = validate::tool_name(dialect, &long);
        assert_eq!(v.is_empty(), dialect == Dialect::Mcp, "{dialect}");
    }
    assert!(!validate::tool_name(Dialect::Mcp, &"a".repeat(129)).is_empty());
    let v = validate::tool_name(Dialect::Anthropic, "fs.read");
    assert_eq!(
        v[0].message,
        "tool name `fs.read` contains '.'; anthropic requires 1–64 characters of A-Z, a-z, 0-9, `_` and `-`"
    );
}

#[test]
fn strict_validator_reports_every_rule_with_pointers() {
    let def = json!({"type": "function", "function": {
        "name": "t", "description": "T.", "strict": true,
        "parameters": {
            "type": "object",
            "additionalProperties": false,
            "required": ["a", "ghost"],
            "properties": {
                "a": {"type": "string", "format": "uri", "default": "x"},
                "b": {"description": "untyped"},
                "c": {"$ref": "#/$defs/C", "description": "beside"},
                "d": {"type": "object", "properties": {"e": {"type": "integer"}}, "required": ["e"]},
                "f": {"oneOf": [{"type": "string"}]},
            },
            "$defs": {"C": {"type": "string"}},
        }
    }});
    let v = validate::tool_definition(Dialect::OpenAiChat, &def);
    let mut got = pointers(&v);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "/function/parameters",
            "/function/parameters/properties/a/default",
            "/function/parameters/properties/a/format",
            "/function/parameters/properties/b",
            "/function/parameters/properties/c",
            "/function/parameters/properties/d",
            "/function/parameters/properties/f",
            "/function/parameters/properties/f/oneOf",
            "/function/parameters/required",
        ],
        "{v:#?}"
    );
    // Without strict mode only the basic rules apply.
    let mut loose = def.clone();
    loose["function"]["strict"] = json!(false);
    assert_eq!(
        validate::tool_definition(Dialect::OpenAiChat, &loose),
        vec![]
    );
}

#[test]
fn strict_validator_checks_nesting_and_size_limits() {
    let mut inner = json!({"type": "string"});
    for i in 0..11 {
        inner = json!({"type": "object", "properties": {format!("l{i}"): inner},
                       "required": [format!("l{i}")], "additionalProperties": false});
    }
    let v = validate::schema(Dialect::OpenAiResponses, &inner);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].message.contains("deeper than 10 levels"));

    let many: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let schema = json!({"type": "object", "properties": {"e": {"type": "string", "enum": many}},
                        "required": ["e"], "additionalProperties": false});
    let v = validate::schema(Dialect::OpenAiChat, &schema);
    assert!(
        v.iter().any(|v| v.message.contains("1001 enum values")),
        "{v:?}"
    );
}

#[test]
fn gemini_validator_reports_each_unsupported_construct() {
    let def = json!({"name": "t", "description": "T.", "parameters": {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"$ref": "#/$defs/B"},
            "c": {"type": "object", "additionalProperties": {"type": "string"}},
            "d": {"type": "integer", "enum": [1, 2]},
            "e": {"type": "array"},
            "f": {"type": "integer", "format": "uint8"},
            "g": {"type": "string", "const": "x"},
        },
        "required": ["a", "zz"],
    }});
    let v = validate::tool_definition(Dialect::Gemini, &def);
    let mut got = pointers(&v);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "/parameters/properties/a/type",
            "/parameters/properties/b",
            "/parameters/properties/b/$ref",
            "/parameters/properties/c",
            "/parameters/properties/c/additionalProperties",
            "/parameters/properties/d/enum",
            "/parameters/properties/d/enum",
            "/parameters/properties/e",
            "/parameters/properties/f/format",
            "/parameters/properties/g/const",
            "/parameters/required/1",
        ],
        "{v:#?}"
    );
    let empty = json!({"name": "t", "parameters": {"type": "object", "properties": {}}});
    let v = validate::tool_definition(Dialect::Gemini, &empty);
    assert_eq!(pointers(&v), ["/parameters"]);
    assert!(v[0].message.contains("leave `parameters` out"));
}

#[test]
fn root_rules_apply_to_every_dialect() {
    let bad_root = json!({"anyOf": [{"type": "object"}], "type": "string"});
    for dialect in Dialect::ALL {
        let v = validate::schema(dialect, &bad_root);
        let got = pointers(&v);
        assert!(got.contains(&"/type"), "{dialect}: {v:?}");
        assert!(got.contains(&"/anyOf"), "{dialect}: {v:?}");
    }
    let v = validate::tool_definition(Dialect::Anthropic, &json!({"name": "x"}));
    assert_eq!(pointers(&v), ["/input_schema"]);
    let v = validate::tool_definition(
        Dialect::Mcp,
        &json!({"name": "x", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}),
    );
    assert_eq!(pointers(&v), ["/inputSchema/properties/a/$ref"]);
    let v = validate::tool_definition(
        Dialect::Bedrock,
        &json!({"toolSpec": {"name": "x", "description": "", "inputSchema": {"json": {"type": "object"}}}}),
    );
    assert_eq!(pointers(&v), ["/toolSpec/description"]);
    let v = validate::tool_definition(Dialect::OpenAiResponses, &json!([]));
    assert_eq!(pointers(&v), [""]);
    assert_eq!(
        v[0].to_string(),
        "/: a tool definition must be a JSON object"
    );
}

// ---------------------------------------------------------------------------------------
// Restoring strict-mode arguments

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    Move {
        to: String,
        #[serde(default)]
        force: bool,
    },
    Stop,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type")]
enum Shape {
    Circle {
        r: f64,
        #[serde(default)]
        label: String,
    },
    Square {
        side: f64,
    },
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Plan {
    actions: Vec<Action>,
    shape: Shape,
    required_but_nullable: Option<u8>,
    #[serde(default)]
    tries: u8,
}

#[test]
fn restore_follows_enum_variants_and_keeps_required_nulls() {
    let canonical = schema_for::<Plan>();
    let strict = lower_schema(Dialect::OpenAiChat, &canonical).expect("lowers");
    // `required_but_nullable` is an Option without a default: schemars leaves it optional
    // (serde reads a missing Option as None), so its null goes too.
    let mut args = json!({
        "actions": [{"move": {"to": "b", "force": null}}, "stop"],
        "shape": {"type": "Circle", "r": 1.0, "label": null},
        "required_but_nullable": null,
        "tries": null,
    });
    let validator = jsonschema::validator_for(&Value::Object(strict)).expect("valid schema");
    assert!(
        validator.is_valid(&args),
        "strict schema accepts the model's arguments"
    );
    restore_arguments(Dialect::OpenAiChat, &canonical, &mut args);
    assert_eq!(
        args,
        json!({
            "actions": [{"move": {"to": "b"}}, "stop"],
            "shape": {"type": "Circle", "r": 1.0},
        })
    );
    let plan: Plan = serde_json::from_value(args).expect("decodes");
    assert_eq!(
        plan,
        Plan {
            actions: vec![
                Action::Move {
                    to: "b".into(),
                    force: false
                },
                Action::Stop
            ],
            shape: Shape::Circle {
                r: 1.0,
                label: String::new()
            },
            required_but_nullable: None,
            tries: 0,
        }
    );
}

#[test]
fn restore_leaves_values_it_does_not_understand_alone() {
    let canonical = schema_for::<Plan>();
    let mut odd =
        json!({"unknown": null, "shape": {"type": "Hexagon", "label": null}, "actions": "no"});
    let before = odd.clone();
    restore_arguments(Dialect::OpenAiResponses, &canonical, &mut odd);
    assert_eq!(
        odd, before,
        "undeclared keys and unmatched variants stay as sent"
    );
    let mut scalar = json!(3);
    restore_arguments(Dialect::OpenAiResponses, &canonical, &mut scalar);
    assert_eq!(scalar, json!(3));
}
