//! A zoo of parameter types, lowered for every dialect, checked by the validators, and
//! snapshotted as the tool definitions each API would receive (`tests/snapshots/`).

use std::collections::{BTreeMap, HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use xcsh_core::dialect::{
    Dialect, LowerError, LowerErrorKind, ToolMeta, lower_schema, restore_arguments,
    tool_definition, validate,
};
use xcsh_core::schema::{JsonObject, schema_for};

/// How a file is edited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    /// Replace the whole file.
    Overwrite,
    /// Add to the end.
    Append,
}

/// Undocumented unit variants come out as a plain string enum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Level {
    Low,
    High,
}

/// An edit, externally tagged (serde's default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Edit {
    /// Delete the file.
    Delete,
    /// Rename the file.
    Rename {
        /// New name.
        to: String,
    },
    /// Replace a line range.
    Replace(u32, u32),
    /// Insert text.
    Insert(String),
}

/// A step, internally tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Step {
    /// Stop here.
    Stop,
    /// Wait a while.
    Wait {
        /// Seconds to wait.
        seconds: u64,
        /// Why we wait.
        reason: Option<String>,
    },
    /// Run something described elsewhere.
    Run(Target),
}

/// A change, adjacently tagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", content = "args")]
enum Change {
    Clear,
    Set { key: String, value: i64 },
    Note(String),
}

/// A number, a word, or a flag object: untagged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Loose {
    Number(i64),
    Word(String),
    Flagged { flag: bool },
}

/// Where something runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Target {
    /// The host name.
    host_name: String,
    /// The port, if not the default.
    port: Option<u16>,
}

/// Paging, flattened into the parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Paging {
    /// Results per page.
    #[serde(default = "default_page_size")]
    page_size: u8,
    /// Page to return, from 0.
    #[serde(default)]
    page: u64,
}

fn default_page_size() -> u8 {
    20
}

/// Doc comments on nested structs become descriptions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Nested {
    /// Optional inside optional: `Option<Option<T>>` collapses to one nullable level.
    deep: Option<Option<i32>>,
    /// A list with holes.
    holes: Vec<Option<String>>,
    /// An optional struct.
    target: Option<Target>,
}

/// Everything a tool's parameters commonly use, and that every dialect can express.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Zoo {
    /// The file to work on.
    path: String,
    /// How to write it.
    mode: Mode,
    /// How hard to try, if it matters.
    level: Option<Level>,
    /// The edits, in order.
    edits: Vec<Edit>,
    /// Steps to run afterwards.
    steps: Vec<Step>,
    /// A change to record.
    change: Option<Change>,
    /// Anything loose.
    loose: Loose,
    /// Nested data.
    nested: Nested,
    /// Small count.
    small: u8,
    /// Signed big number.
    signed: i64,
    /// Unsigned big number.
    unsigned: u64,
    /// A ratio.
    ratio: f64,
    /// Flag that defaults to false.
    #[serde(default)]
    verbose: bool,
    /// Tags, unique.
    #[serde(default)]
    tags: HashSet<String>,
    /// Renamed on the wire.
    #[serde(rename = "LEGACY_name")]
    legacy: Option<String>,
    /// An optional list of optional numbers.
    maybe_numbers: Option<Vec<Option<u32>>>,
    /// A pair of equal types.
    range: (u32, u32),
    #[serde(flatten)]
    paging: Paging,
}

/// A map-bearing type: fine for JSON Schema dialects, not for strict mode or Gemini.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct WithMaps {
    /// Labels by name.
    labels: HashMap<String, String>,
    /// Targets by name, ordered.
    targets: BTreeMap<String, Target>,
}

/// A recursive outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Outline {
    /// The heading.
    title: String,
    /// Sub-sections.
    children: Vec<Outline>,
}

/// A type containing a recursive one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct WithTree {
    /// The document outline.
    tree: Outline,
    /// An optional second outline.
    draft: Option<Outline>,
}

/// A tuple of different types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct WithTuple {
    /// Name and age.
    pair: (String, u8),
}

/// Any JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct WithAny {
    /// Whatever the caller wants.
    payload: Value,
}

/// No parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct NoArgs {}

fn lowered(dialect: Dialect, schema: &JsonObject) -> Result<JsonObject, LowerError> {
    lower_schema(dialect, schema)
}

/// Lowers, builds the definition, and requires the validators to accept it.
fn definition(dialect: Dialect, name: &str, schema: &JsonObject) -> Value {
    let lowered = lowered(dialect, schema)
        .unwrap_or_else(|e| panic!("{name} should lower for {dialect}: {e}"));
    let meta = ToolMeta::new(format!("The {name} tool."));
    let def = tool_definition(dialect, name, &meta, &lowered);
    let violations = validate::tool_definition(dialect, &def);
    assert!(
        violations.is_empty(),
        "{name} for {dialect} breaks the provider's rules:\n{}\n{}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        serde_json::to_string_pretty(&def).unwrap_or_default()
    );
    def
}

fn snapshot(name: &str, dialect: Dialect, def: &Value) {
    let mut settings = insta::Settings::clone_current();
    // serde_json's key order depends on whether another crate in the build enables
    // `preserve_order`; sorted maps keep the snapshots identical either way.
    settings.set_sort_maps(true);
    settings.set_snapshot_suffix(dialect.as_str());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_description(format!("{name}: tool definition for {dialect}"));
    settings.bind(|| insta::assert_json_snapshot!(name, def));
}

#[test]
fn zoo_lowers_for_every_dialect_and_passes_the_validators() {
    let schema = schema_for::<Zoo>();
    for dialect in Dialect::ALL {
        let def = definition(dialect, "zoo", &schema);
        snapshot("zoo", dialect, &def);
    }
}

#[test]
fn maps_lower_where_json_schema_is_accepted_and_are_refused_elsewhere() {
    let schema = schema_for::<WithMaps>();
    for dialect in Dialect::ALL {
        match dialect {
            Dialect::Anthropic | Dialect::Mcp | Dialect::Bedrock => {
                let def = definition(dialect, "with_maps", &schema);
                snapshot("with_maps", dialect, &def);
            }
            Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Gemini => {
                let err = lowered(dialect, &schema).expect_err("maps are not expressible");
                assert_eq!(err.kind(), &LowerErrorKind::Map, "{dialect}");
                assert_eq!(err.field().to_string(), "labels");
                assert_eq!(err.dialect(), dialect);
            }
            other => panic!("a dialect this test does not know: {other}"),
        }
    }
}

#[test]
fn recursive_types_keep_a_definition_where_refs_are_accepted_and_fail_for_gemini() {
    let schema = schema_for::<WithTree>();
    for dialect in Dialect::ALL {
        if dialect == Dialect::Gemini {
            let err = lowered(dialect, &schema).expect_err("no refs in Gemini");
            assert_eq!(
                err.kind(),
                &LowerErrorKind::Recursive {
                    type_name: "Outline".into()
                }
            );
            assert_eq!(err.field().to_string(), "tree.children[]");
            continue;
        }
        let def = definition(dialect, "with_tree", &schema);
        snapshot("with_tree", dialect, &def);
        let lowered = lowered(dialect, &schema).expect("lowers");
        // Only the recursive type stays a definition.
        let defs = lowered["$defs"].as_object().expect("$defs kept");
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["Outline"], "{dialect}");
    }
}

#[test]
fn a_recursive_root_refers_to_itself_with_hash() {
    let schema = schema_for::<Outline>();
    for dialect in [Dialect::Anthropic, Dialect::OpenAiResponses] {
        let def = definition(dialect, "outline", &schema);
        snapshot("outline", dialect, &def);
    }
    let strict = lowered(Dialect::OpenAiChat, &schema).expect("lowers");
    assert_eq!(
        strict["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    assert!(!strict.contains_key("$defs"));
    let err = lowered(Dialect::Gemini, &schema).expect_err("recursive");
    assert_eq!(err.field().to_string(), "children[]");
    assert_eq!(
        err.kind(),
        &LowerErrorKind::Recursive {
            type_name: "the root type".into()
        }
    );
}

#[test]
fn tuples_of_one_type_become_fixed_length_arrays_and_mixed_tuples_fail_where_unsupported() {
    let zoo = lowered(Dialect::Gemini, &schema_for::<Zoo>()).expect("lowers");
    assert_eq!(
        zoo["properties"]["range"],
        json!({
            "description": "A pair of equal types.",
            "type": "array",
            "items": {"type": "integer", "minimum": 0},
            "minItems": 2,
            "maxItems": 2,
        })
    );
    let schema = schema_for::<WithTuple>();
    for dialect in Dialect::ALL {
        match lowered(dialect, &schema) {
            Ok(l) => {
                assert!(matches!(
                    dialect,
                    Dialect::Anthropic | Dialect::Mcp | Dialect::Bedrock
                ));
                assert!(l["properties"]["pair"]["prefixItems"].is_array());
            }
            Err(e) => {
                assert_eq!(e.kind(), &LowerErrorKind::Tuple, "{dialect}");
                assert_eq!(e.field().to_string(), "pair");
            }
        }
    }
}

#[test]
fn any_json_value_is_refused_by_strict_mode_and_gemini() {
    let schema = schema_for::<WithAny>();
    for dialect in Dialect::ALL {
        let result = lowered(dialect, &schema);
        if matches!(
            dialect,
            Dialect::Anthropic | Dialect::Mcp | Dialect::Bedrock
        ) {
            let l = result.expect("JSON Schema dialects take any value");
            assert_eq!(
                l["properties"]["payload"],
                json!({"description": "Whatever the caller wants."})
            );
        } else {
            let e = result.expect_err("needs a type");
            assert_eq!(e.kind(), &LowerErrorKind::AnyValue, "{dialect}");
            assert_eq!(e.field().to_string(), "payload");
        }
    }
}

#[test]
fn a_tool_without_parameters_is_valid_everywhere() {
    let schema = schema_for::<NoArgs>();
    for dialect in Dialect::ALL {
        let def = definition(dialect, "no_args", &schema);
        snapshot("no_args", dialect, &def);
    }
    let gemini = tool_definition(
        Dialect::Gemini,
        "no_args",
        &ToolMeta::new("Nothing."),
        &lowered(Dialect::Gemini, &schema).expect("lowers"),
    );
    assert!(gemini.get("parameters").is_none(), "{gemini}");
}

/// A Zoo value exercising every variant and optional, with nothing left at its default.
fn full_zoo() -> Zoo {
    Zoo {
        path: "src/lib.rs".into(),
        mode: Mode::Append,
        level: Some(Level::High),
        edits: vec![
            Edit::Delete,
            Edit::Rename { to: "b.rs".into() },
            Edit::Replace(1, 2),
            Edit::Insert("x".into()),
        ],
        steps: vec![
            Step::Stop,
            Step::Wait {
                seconds: 3,
                reason: Some("rate limit".into()),
            },
            Step::Run(Target {
                host_name: "h".into(),
                port: Some(8080),
            }),
        ],
        change: Some(Change::Set {
            key: "k".into(),
            value: -1,
        }),
        loose: Loose::Flagged { flag: true },
        nested: Nested {
            deep: Some(Some(-5)),
            holes: vec![Some("a".into()), None],
            target: Some(Target {
                host_name: "n".into(),
                port: None,
            }),
        },
        small: 255,
        signed: i64::MIN,
        unsigned: u64::MAX,
        ratio: 0.5,
        verbose: true,
        tags: HashSet::from(["t".to_owned()]),
        legacy: Some("old".into()),
        maybe_numbers: Some(vec![Some(1), None]),
        range: (1, 9),
        paging: Paging {
            page_size: 50,
            page: 2,
        },
    }
}

/// The smallest Zoo: every optional field left out.
fn sparse_zoo() -> Zoo {
    Zoo {
        path: "a".into(),
        mode: Mode::Overwrite,
        level: None,
        edits: vec![],
        steps: vec![Step::Wait {
            seconds: 1,
            reason: None,
        }],
        change: None,
        loose: Loose::Number(7),
        nested: Nested {
            deep: None,
            holes: vec![],
            target: None,
        },
        small: 0,
        signed: 0,
        unsigned: 0,
        ratio: 1.0,
        verbose: false,
        tags: HashSet::new(),
        legacy: None,
        maybe_numbers: None,
        range: (0, 0),
        paging: Paging {
            page_size: 20,
            page: 0,
        },
    }
}

/// The sparse Zoo as a person (or a non-strict model) writes it: optional fields omitted.
fn sparse_plain() -> Value {
    json!({
        "path": "a",
        "mode": "overwrite",
        "edits": [],
        "steps": [{"kind": "wait", "seconds": 1}],
        "loose": 7,
        "nested": {"holes": []},
        "small": 0,
        "signed": 0,
        "unsigned": 0,
        "ratio": 1.0,
        "range": [0, 0],
    })
}

/// The sparse Zoo as a strict-mode model must write it: every property present, `null` for
/// each one it leaves out, at every depth.
fn sparse_strict() -> Value {
    json!({
        "path": "a",
        "mode": "overwrite",
        "level": null,
        "edits": [],
        "steps": [{"kind": "wait", "seconds": 1, "reason": null}],
        "change": null,
        "loose": 7,
        "nested": {"deep": null, "holes": [], "target": null},
        "small": 0,
        "signed": 0,
        "unsigned": 0,
        "ratio": 1.0,
        "verbose": null,
        "tags": null,
        "LEGACY_name": null,
        "maybeNumbers": null,
        "range": [0, 0],
        "page_size": null,
        "page": null,
    })
}

#[test]
fn strict_arguments_with_explicit_nulls_decode_to_the_same_value_as_plain_ones() {
    let canonical = schema_for::<Zoo>();
    let plain: Zoo = serde_json::from_value(sparse_plain()).expect("plain form decodes");
    assert_eq!(plain, sparse_zoo());

    // Without restoring, serde refuses `null` for `#[serde(default)]` fields: the reason
    // restore_arguments exists.
    let raw = serde_json::from_value::<Zoo>(sparse_strict());
    assert!(raw.is_err(), "{raw:?}");

    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses] {
        let mut args = sparse_strict();
        restore_arguments(dialect, &canonical, &mut args);
        assert_eq!(args, sparse_plain(), "{dialect}");
        let strict: Zoo = serde_json::from_value(args).expect("restored form decodes");
        assert_eq!(strict, plain);
    }

    // Other dialects never make a model send those nulls, and leave arguments alone.
    let mut args = sparse_strict();
    restore_arguments(Dialect::Anthropic, &canonical, &mut args);
    assert_eq!(args, sparse_strict());
}

#[test]
fn restoring_keeps_values_that_are_given() {
    let canonical = schema_for::<Zoo>();
    let full = serde_json::to_value(full_zoo()).expect("serialises");
    let mut args = full.clone();
    restore_arguments(Dialect::OpenAiChat, &canonical, &mut args);
    // The one `None` in the full Zoo is an optional field; the nulls that are values (in a
    // list of options, in an internally tagged variant's required field) stay.
    let mut expected = full.clone();
    if let Some(target) = expected["nested"]["target"].as_object_mut() {
        target.remove("port");
    }
    assert_eq!(args, expected);
    assert_eq!(args["nested"]["holes"], json!(["a", null]));
    assert_eq!(args["maybeNumbers"], json!([1, null]));
    let back: Zoo = serde_json::from_value(args).expect("decodes");
    assert_eq!(back, full_zoo());
}

#[test]
fn strict_schema_makes_every_property_required_and_optional_ones_nullable() {
    let l = lowered(Dialect::OpenAiChat, &schema_for::<Zoo>()).expect("lowers");
    let props = l["properties"].as_object().expect("properties");
    let required: Vec<&str> = l["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut sorted = required.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, names);
    // Declaration order first, then the formerly optional ones.
    assert_eq!(&required[..3], ["path", "mode", "edits"]);
    assert_eq!(l["additionalProperties"], json!(false));
    assert_eq!(
        props["verbose"],
        json!({"type": ["boolean", "null"], "description": "Flag that defaults to false. Default: false."})
    );
    assert_eq!(
        props["level"],
        json!({
            "description": "How hard to try, if it matters.",
            "anyOf": [
                {
                    "type": "string",
                    "enum": ["Low", "High"],
                    "description": "Undocumented unit variants come out as a plain string enum.",
                },
                {"type": "null"},
            ],
        })
    );
}

#[test]
fn gemini_turns_documented_unit_enums_into_one_string_enum() {
    let l = lowered(Dialect::Gemini, &schema_for::<Zoo>()).expect("lowers");
    assert_eq!(
        l["properties"]["mode"],
        json!({
            "type": "string",
            "enum": ["overwrite", "append"],
            "description": "How to write it.\n- `overwrite`: Replace the whole file.\n- `append`: Add to the end.",
        })
    );
    assert_eq!(
        l["properties"]["level"],
        json!({
            "type": "string",
            "enum": ["Low", "High"],
            "nullable": true,
            "description": "How hard to try, if it matters.",
        })
    );
}

/// Whether `instance` is valid under `schema`, by an independent JSON Schema validator.
fn check(schema: &JsonObject, instance: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(&Value::Object(schema.clone()))
        .map_err(|e| format!("not a valid JSON Schema: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Gemini's OpenAPI-style `nullable` restated as JSON Schema, so the JSON Schema validator
/// can judge what a Gemini schema accepts.
fn gemini_as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: JsonObject = map
                .iter()
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "properties" => Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, s)| (n.clone(), gemini_as_json_schema(s)))
                                .collect(),
                        ),
                        "items" => gemini_as_json_schema(v),
                        "anyOf" => Value::Array(
                            v.as_array()
                                .into_iter()
                                .flatten()
                                .map(gemini_as_json_schema)
                                .collect(),
                        ),
                        _ => v.clone(),
                    };
                    (k.clone(), v)
                })
                .collect();
            if out.remove("nullable") == Some(Value::Bool(true)) {
                let inner = Value::Object(out);
                return json!({"anyOf": [inner, {"type": "null"}]});
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// The lowered schema as a JSON Schema any validator understands.
fn as_json_schema(dialect: Dialect, schema: &JsonObject) -> JsonObject {
    if dialect == Dialect::Gemini {
        match gemini_as_json_schema(&Value::Object(schema.clone())) {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    } else {
        schema.clone()
    }
}

#[test]
fn lowered_schemas_accept_the_arguments_the_canonical_schema_accepts() {
    let canonical = schema_for::<Zoo>();
    let full = serde_json::to_value(full_zoo()).expect("serialises");
    check(&canonical, &full).expect("canonical accepts the full zoo");
    check(&canonical, &sparse_plain()).expect("canonical accepts the sparse zoo");
    for dialect in Dialect::ALL {
        let lowered = as_json_schema(dialect, &lowered(dialect, &canonical).expect("lowers"));
        // A serialised value has every field, with `null` for `None`: valid everywhere.
        check(&lowered, &full).unwrap_or_else(|e| panic!("{dialect} refuses the full zoo: {e}"));
        if dialect.is_openai_strict() {
            // Strict mode makes the model send every field...
            let missing = check(&lowered, &sparse_plain());
            assert!(missing.is_err(), "{dialect} must require every field");
            check(&lowered, &sparse_strict())
                .unwrap_or_else(|e| panic!("{dialect} refuses the strict form: {e}"));
        } else {
            check(&lowered, &sparse_plain())
                .unwrap_or_else(|e| panic!("{dialect} refuses the plain form: {e}"));
        }
    }
    // ...and those nulls are what the canonical schema refuses until they are restored.
    assert!(check(&canonical, &sparse_strict()).is_err());
    let mut restored = sparse_strict();
    restore_arguments(Dialect::OpenAiResponses, &canonical, &mut restored);
    check(&canonical, &restored).expect("restored arguments fit the canonical schema");
}

#[test]
fn lowered_schemas_still_refuse_what_the_canonical_schema_refuses() {
    let canonical = schema_for::<Zoo>();
    let mut bad_mode = sparse_strict();
    bad_mode["mode"] = json!("sideways");
    let mut extra = sparse_strict();
    extra["unexpected"] = json!(1);
    let mut bad_tag = sparse_strict();
    bad_tag["steps"] = json!([{"kind": "jump"}]);
    let mut too_big = sparse_strict();
    too_big["small"] = json!(256);
    for dialect in Dialect::ALL {
        let lowered = as_json_schema(dialect, &lowered(dialect, &canonical).expect("lowers"));
        for (what, args) in [
            ("an unknown enum value", &bad_mode),
            ("an unknown tag", &bad_tag),
            ("an out-of-range u8", &too_big),
        ] {
            // The plain dialects see the strict form's nulls too; only the named fault
            // should matter, so judge it on the form each dialect accepts.
            let mut args = args.clone();
            if !dialect.is_openai_strict() {
                restore_arguments(Dialect::OpenAiChat, &canonical, &mut args);
            }
            assert!(check(&lowered, &args).is_err(), "{dialect} accepts {what}");
        }
        if dialect.is_openai_strict() {
            assert!(
                check(&lowered, &extra).is_err(),
                "{dialect} accepts an unknown field"
            );
        }
    }
}

mod round_trip {
    use proptest::prelude::*;

    use super::*;

    /// Optional and defaulted fields at several depths.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct Options {
        name: Option<String>,
        #[serde(default)]
        count: u8,
        #[serde(default = "yes")]
        enabled: bool,
        inner: Option<Inner>,
        list: Vec<Option<u32>>,
        #[serde(default)]
        words: Vec<String>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    struct Inner {
        level: Option<i64>,
        #[serde(default)]
        tag: String,
    }

    fn yes() -> bool {
        true
    }

    /// A value, and for each optional or defaulted field whether the model "left it out".
    fn arb() -> impl Strategy<Value = (Options, [bool; 4])> {
        (
            proptest::option::of("[a-z]{0,4}"),
            any::<u8>(),
            any::<bool>(),
            proptest::option::of((proptest::option::of(any::<i64>()), "[a-z]{0,3}")),
            proptest::collection::vec(proptest::option::of(any::<u32>()), 0..4),
            proptest::collection::vec("[a-z]{1,3}", 0..3),
            any::<[bool; 4]>(),
        )
            .prop_map(|(name, count, enabled, inner, list, words, omit)| {
                let inner = inner.map(|(level, tag)| Inner { level, tag });
                (
                    Options {
                        name,
                        count,
                        enabled,
                        inner,
                        list,
                        words,
                    },
                    omit,
                )
            })
    }

    /// The value as the plain form (defaulted fields omitted when `omit` says so) and the
    /// strict form (the same fields sent as `null`), and what serde will decode.
    fn forms(value: &Options, omit: [bool; 4]) -> (Value, Value, Options) {
        let mut expected = value.clone();
        let mut plain = serde_json::to_value(value).unwrap_or_default();
        let mut strict = plain.clone();
        let fields = ["count", "enabled", "words", "name"];
        for (field, gone) in fields.iter().zip(omit) {
            if gone {
                if let Some(map) = plain.as_object_mut() {
                    map.remove(*field);
                }
                strict[*field] = Value::Null;
                match *field {
                    "count" => expected.count = 0,
                    "enabled" => expected.enabled = true,
                    "words" => expected.words = Vec::new(),
                    _ => expected.name = None,
                }
            }
        }
        // Nested optional fields that are `None` are omitted in the plain form.
        if let Some(inner) = plain.get_mut("inner").and_then(Value::as_object_mut)
            && inner.get("level") == Some(&Value::Null)
        {
            inner.remove("level");
        }
        (plain, strict, expected)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn strict_and_plain_arguments_decode_to_the_same_value((value, omit) in arb()) {
            let canonical = schema_for::<Options>();
            let (plain, strict, expected) = forms(&value, omit);
            for dialect in [Dialect::OpenAiChat, Dialect::OpenAiResponses] {
                let lowered = lower_schema(dialect, &canonical).expect("lowers");
                prop_assert!(check(&lowered, &strict).is_ok(), "{}", check(&lowered, &strict).unwrap_err_or_default());
                let mut restored = strict.clone();
                restore_arguments(dialect, &canonical, &mut restored);
                prop_assert!(check(&canonical, &restored).is_ok());
                let from_strict: Options = serde_json::from_value(restored).expect("decodes");
                let from_plain: Options = serde_json::from_value(plain.clone()).expect("decodes");
                prop_assert_eq!(&from_strict, &expected);
                prop_assert_eq!(&from_plain, &expected);
            }
        }
    }

    trait ErrOrDefault {
        fn unwrap_err_or_default(self) -> String;
    }

    impl ErrOrDefault for Result<(), String> {
        fn unwrap_err_or_default(self) -> String {
            self.err().unwrap_or_default()
        }
    }
}
