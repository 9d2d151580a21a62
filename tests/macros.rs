//! The macros through the facade, as a tool author uses them: schemas, argument decoding,
//! both tool forms, pending actions through `resolve`, and self-registration.

use serde_json::json;
use xcsh::pending::{PendingActionStore, resolve};
use xcsh::tool::{Suite, ToolAnnotations};
use xcsh::{
    AgentToolResult, CustomTool, ResolveAction, Session, Tool, ToolContext, ToolError, custom_tool,
    pending, suite, tool_param,
};

// ---------------------------------------------------------------------------------------
// The seed's example.

/// Previews renames and defers commit to resolve.
#[custom_tool(name = "batch_rename_preview", label = "Batch Rename Preview", pending)]
pub struct BatchRenamePreview {
    /// Files to rename.
    files: Vec<String>,
}

impl BatchRenamePreview {
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let count = self.files.len();
        ctx.push_pending_action(RenamePlan { files: self.files })?;
        Ok(
            format!("Prepared rename plan for {count} files. Call resolve to apply or discard.")
                .into(),
        )
    }
}

// The DESIGN.md form: a format string followed by arguments.
#[pending(apply, reject, label = "Batch rename: {} files", self.files.len(), source = BatchRenamePreview, details)]
struct RenamePlan {
    files: Vec<String>,
}

impl RenamePlan {
    async fn apply(&mut self, reason: &str) -> Result<String, ToolError> {
        Ok(format!(
            "Renamed {} files. Reason: {reason}",
            self.files.len()
        ))
    }

    async fn reject(&mut self, reason: &str) -> Option<String> {
        Some(format!("Kept {} names. Reason: {reason}", self.files.len()))
    }
}

#[test]
fn schema_of_the_example_is_exact() {
    let schema = serde_json::Value::Object((*BatchRenamePreview::parameters()).clone());
    assert_eq!(
        schema,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "BatchRenamePreview",
            "description": "Previews renames and defers commit to resolve.",
            "type": "object",
            "properties": {
                "files": {
                    "description": "Files to rename.",
                    "type": "array",
                    "items": {"type": "string"}
                }
            },
            "required": ["files"],
            "additionalProperties": false
        })
    );
    // Cached once per type.
    assert!(std::sync::Arc::ptr_eq(
        &BatchRenamePreview::parameters(),
        &BatchRenamePreview::parameters()
    ));
}

#[test]
fn constants_come_from_the_attribute_and_docs() {
    assert_eq!(BatchRenamePreview::NAME, "batch_rename_preview");
    assert_eq!(BatchRenamePreview::LABEL, "Batch Rename Preview");
    assert_eq!(
        BatchRenamePreview::DESCRIPTION,
        "Previews renames and defers commit to resolve."
    );
    const { assert!(BatchRenamePreview::PUSHES_PENDING_ACTIONS) };
    assert_eq!(BatchRenamePreview::ANNOTATIONS, ToolAnnotations::new());
}

#[tokio::test]
async fn the_example_runs_through_a_session() {
    let session = Session::builder()
        .custom::<BatchRenamePreview>()
        .build()
        .unwrap();
    assert_eq!(session.tool_names(), ["batch_rename_preview", "resolve"]);

    let bad = session
        .call(
            "batch_rename_preview",
            json!({"files": ["a.txt", "b.txt", 2]}),
        )
        .await;
    assert!(bad.is_error());
    assert!(
        bad.text_content()
            .contains("files[2]: invalid type: integer `2`, expected a string"),
        "{}",
        bad.text_content()
    );
    let missing = session.call("batch_rename_preview", json!({})).await;
    assert!(missing.text_content().contains("missing field `files`"));
    assert!(session.pending().is_empty());

    let preview = session
        .call("batch_rename_preview", json!({"files": ["a.txt", "b.txt"]}))
        .await;
    assert!(!preview.is_error());
    assert_eq!(
        preview.text_content(),
        "Prepared rename plan for 2 files. Call resolve to apply or discard."
    );
    let top = session.pending().peek().unwrap();
    assert_eq!(top.label, "Batch rename: 2 files");
    assert_eq!(top.source_tool_name, "batch_rename_preview");
    assert_eq!(top.details, Some(json!({"files": ["a.txt", "b.txt"]})));

    let applied = session
        .call(
            "resolve",
            json!({"action": "apply", "reason": "user approved"}),
        )
        .await;
    assert_eq!(
        applied.text_content(),
        "Renamed 2 files. Reason: user approved"
    );
    assert!(session.pending().is_empty());

    session
        .call("batch_rename_preview", json!({"files": ["c.txt"]}))
        .await;
    let discarded = session
        .call(
            "resolve",
            json!({"action": "discard", "reason": "wrong folder"}),
        )
        .await;
    assert_eq!(
        discarded.text_content(),
        "Kept 1 names. Reason: wrong folder"
    );
}

// ---------------------------------------------------------------------------------------
// Parameter shapes: docs, serde renames, Option, default, enums.

/// How to order results.
#[tool_param]
#[serde(rename_all = "snake_case")]
// Undocumented variants on purpose: with docs schemars would describe each (`oneOf`), and the
// schema checked below is the plain `enum`.
#[allow(missing_docs)]
pub enum Order {
    OldestFirst,
    NewestFirst,
}

/// Searches the notes.
///
/// Matches are case-insensitive unless asked otherwise.
#[custom_tool(read_only, idempotent, open_world = false)]
pub struct SearchNotes {
    /// What to look for.
    query: String,
    /// At most this many results.
    #[serde(rename = "maxResults")]
    max_results: Option<u32>,
    /// Match case exactly.
    #[serde(default)]
    case_sensitive: bool,
    /// Result order.
    order: Order,
}

impl SearchNotes {
    async fn execute(self, _ctx: &ToolContext) -> String {
        let order = match self.order {
            Order::OldestFirst => "oldest first",
            Order::NewestFirst => "newest first",
        };
        format!(
            "{} (max {:?}, case {}, {order})",
            self.query, self.max_results, self.case_sensitive
        )
    }
}

#[test]
fn parameter_shapes_follow_serde_and_docs() {
    let schema = SearchNotes::parameters();
    assert_eq!(
        SearchNotes::DESCRIPTION,
        "Searches the notes.\n\nMatches are case-insensitive unless asked otherwise."
    );
    assert_eq!(schema["description"], SearchNotes::DESCRIPTION);
    let properties = schema["properties"].as_object().unwrap();
    let mut names: Vec<_> = properties.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["case_sensitive", "maxResults", "order", "query"]);
    assert_eq!(properties["query"]["description"], "What to look for.");
    assert_eq!(
        properties["maxResults"]["description"],
        "At most this many results."
    );
    assert_eq!(properties["maxResults"]["type"], json!(["integer", "null"]));
    assert_eq!(properties["case_sensitive"]["default"], false);
    // Option and #[serde(default)] fields are not required.
    assert_eq!(schema["required"], json!(["query", "order"]));
    // The enum's allowed values, through a reference to its definition.
    assert_eq!(properties["order"]["$ref"], "#/$defs/Order");
    assert_eq!(
        schema["$defs"]["Order"],
        json!({
            "description": "How to order results.",
            "type": "string",
            "enum": ["oldest_first", "newest_first"]
        })
    );
    assert_eq!(
        SearchNotes::ANNOTATIONS,
        ToolAnnotations::new()
            .read_only(true)
            .idempotent(true)
            .open_world(false)
    );
    assert_eq!(SearchNotes::NAME, "search_notes");
    assert_eq!(SearchNotes::LABEL, "Search Notes");
}

#[tokio::test]
async fn parameter_shapes_decode() {
    let session = Session::builder().custom::<SearchNotes>().build().unwrap();
    let ok = session
        .call(
            "search_notes",
            json!({"query": "rust", "maxResults": 3, "order": "newest_first"}),
        )
        .await;
    assert_eq!(
        ok.text_content(),
        "rust (max Some(3), case false, newest first)"
    );
    let bad = session
        .call(
            "search_notes",
            json!({"query": "rust", "order": "sideways"}),
        )
        .await;
    assert!(bad.is_error());
    assert!(
        bad.text_content().contains(
            "order: unknown variant `sideways`, expected `oldest_first` or `newest_first`"
        ),
        "{}",
        bad.text_content()
    );
    assert!(!session.tool_names().contains(&"resolve"));
    let tool = &session.tools()[0];
    assert_eq!(tool.annotations().read_only, Some(true));
}

// ---------------------------------------------------------------------------------------
// The fn form.

/// Counts occurrences of a word in a text.
#[custom_tool(read_only)]
pub async fn count_word(
    /// The text to search.
    text: String,
    ctx: &ToolContext,
    /// The word to count.
    word: String,
    /// Ignore case.
    #[serde(default)]
    ignore_case: bool,
) -> Result<String, ToolError> {
    if word.is_empty() {
        return Err(ToolError::new("`word` is empty; give the word to count"));
    }
    let (text, word) = if ignore_case {
        (text.to_lowercase(), word.to_lowercase())
    } else {
        (text, word)
    };
    Ok(format!(
        "{} (call {})",
        text.matches(&word).count(),
        ctx.call_id()
    ))
}

/// Says hello.
#[custom_tool(name = "hello", struct_name = HelloTool)]
async fn say_hello() -> &'static str {
    "hello"
}

#[test]
fn fn_form_generates_a_parameter_struct() {
    let schema = CountWord::parameters();
    assert_eq!(schema["title"], "CountWord");
    assert_eq!(
        schema["description"],
        "Counts occurrences of a word in a text."
    );
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(
        properties.len(),
        3,
        "the context is not a parameter: {schema:?}"
    );
    assert_eq!(properties["text"]["description"], "The text to search.");
    assert_eq!(properties["word"]["description"], "The word to count.");
    assert_eq!(schema["required"], json!(["text", "word"]));
    assert_eq!(CountWord::NAME, "count_word");

    assert_eq!(HelloTool::NAME, "hello");
    let hello = HelloTool::parameters();
    assert_eq!(hello["type"], "object", "{hello:?}");
    assert!(hello.get("required").is_none(), "{hello:?}");
    // The struct can be built directly, and the fn stays callable.
    let _ = CountWord {
        text: String::new(),
        word: String::new(),
        ignore_case: false,
    };
}

#[tokio::test]
async fn fn_form_runs() {
    let session = Session::builder()
        .custom::<CountWord>()
        .custom::<HelloTool>()
        .build()
        .unwrap();
    let counted = session
        .call_with(
            "count_word",
            json!({"text": "A a b A", "word": "a", "ignore_case": true}),
            xcsh::session::CallOptions {
                call_id: Some("c1".into()),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(counted.text_content(), "3 (call c1)");
    let failed = session
        .call("count_word", json!({"text": "x", "word": ""}))
        .await;
    assert!(failed.is_error());
    assert_eq!(
        failed.text_content(),
        "`word` is empty; give the word to count"
    );
    let bad = session
        .call("count_word", json!({"text": 1, "word": "a"}))
        .await;
    assert!(
        bad.text_content()
            .contains("text: invalid type: integer `1`, expected a string")
    );
    // `null` arguments count as `{}` for a tool without parameters.
    assert_eq!(
        session
            .call("hello", serde_json::Value::Null)
            .await
            .text_content(),
        "hello"
    );
    assert_eq!(say_hello().await, "hello");
}

// ---------------------------------------------------------------------------------------
// #[pending] details.

#[pending(apply = commit, label = "Write: {path} ({bytes} bytes)", source = "write_file", details_fn = summary)]
struct WriteFile {
    path: String,
    bytes: usize,
    fail_first: bool,
}

impl WriteFile {
    async fn commit(&mut self, _reason: &str) -> Result<(), std::io::Error> {
        if std::mem::take(&mut self.fail_first) {
            return Err(std::io::Error::other("disk full"));
        }
        Ok(())
    }

    fn summary(&self) -> serde_json::Value {
        json!({"path": self.path, "bytes": self.bytes})
    }
}

#[pending(apply, label_fn = describe, details = paths)]
struct Cleanup {
    paths: Vec<String>,
}

impl Cleanup {
    async fn apply(&mut self, _reason: &str) -> AgentToolResult {
        AgentToolResult::text(format!("Removed {}.", self.paths.join(", ")))
    }

    fn describe(&self) -> String {
        format!("Cleanup: {} paths", self.paths.len())
    }
}

#[tokio::test]
async fn pending_keys_reach_resolve() {
    let store = PendingActionStore::new();
    store.push(WriteFile {
        path: "a.txt".into(),
        bytes: 12,
        fail_first: true,
    });
    let top = store.peek().unwrap();
    assert_eq!(top.label, "Write: a.txt (12 bytes)");
    assert_eq!(top.source_tool_name, "write_file");
    assert_eq!(top.details, Some(json!({"path": "a.txt", "bytes": 12})));

    // A failing apply keeps the action; `()` from apply means "Applied: <label>.".
    let failed = resolve(&store, ResolveAction::Apply, "go")
        .await
        .unwrap_err();
    assert!(failed.to_string().starts_with("Apply failed: disk full"));
    assert_eq!(store.len(), 1);
    let done = resolve(&store, ResolveAction::Apply, "go").await.unwrap();
    assert_eq!(
        done.result.text_content(),
        "Applied: Write: a.txt (12 bytes)."
    );

    // No reject hook: the default discard message.
    store.push(Cleanup {
        paths: vec!["x".into(), "y".into()],
    });
    let top = store.peek().unwrap();
    assert_eq!(top.label, "Cleanup: 2 paths");
    assert_eq!(top.source_tool_name, "custom_tool");
    assert_eq!(top.details, Some(json!(["x", "y"])));
    let dropped = resolve(&store, ResolveAction::Discard, "not now")
        .await
        .unwrap();
    assert_eq!(
        dropped.result.text_content(),
        "Discarded: Cleanup: 2 paths. Reason: not now"
    );
}

// ---------------------------------------------------------------------------------------
// Registration and suites.

/// Says goodbye. Registered by hand only, as the built-in tools are.
#[custom_tool(register = false)]
struct Farewell {
    /// Who.
    name: String,
}

impl Farewell {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("Bye, {}.", self.name)
    }
}

/// Waves. `register` as a flag is the default: the tool registers itself.
#[custom_tool(register)]
async fn wave(_ctx: &ToolContext) -> &'static str {
    "*waves*"
}

#[tokio::test]
async fn register_false_leaves_a_tool_to_explicit_registration() {
    let registry = Session::builder().registered().build_registry().unwrap();
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert!(!names.contains(&"farewell"), "{names:?}");
    assert!(names.contains(&"wave"), "{names:?}");

    let session = Session::builder().custom::<Farewell>().build().unwrap();
    let result = session.call("farewell", json!({"name": "Ann"})).await;
    assert_eq!(result.text_content(), "Bye, Ann.");
    let tools = suite![Farewell];
    assert_eq!(tools.tools()[0].name(), "farewell");
}

#[test]
fn tools_register_themselves() {
    let registry = Session::builder().registered().build_registry().unwrap();
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    for name in [
        "batch_rename_preview",
        "count_word",
        "hello",
        "search_notes",
        "wave",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(registry.offers_resolve());

    let mine = xcsh::tool::registered_suite(module_path!());
    let names: Vec<String> = mine.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        names,
        [
            "batch_rename_preview",
            "count_word",
            "hello",
            "search_notes",
            "wave"
        ]
    );
    assert!(
        xcsh::tool::registered_suite("some_other_crate")
            .tools()
            .is_empty()
    );
}

#[test]
fn suite_lists_tools_explicitly() {
    let tools = suite![SearchNotes, CountWord];
    let names: Vec<String> = tools.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["search_notes", "count_word"]);
    let session = Session::builder().suite(tools).build().unwrap();
    assert_eq!(session.tool_names(), ["search_notes", "count_word"]);
}

// ---------------------------------------------------------------------------------------
// A declared structured output: its schema from the type, its value on each result.

/// What `count_files` returns besides its text.
#[tool_param(serialize)]
struct CountSummary {
    /// How many files.
    files: usize,
}

/// Counts files.
#[custom_tool(read_only, output = CountSummary, register = false)]
struct CountFiles {
    /// Where to count.
    dir: String,
}

impl CountFiles {
    async fn execute(self, _ctx: &ToolContext) -> AgentToolResult {
        let summary = CountSummary {
            files: self.dir.len(),
        };
        AgentToolResult::text(format!("{} files", summary.files)).with_output(&summary)
    }
}

#[tokio::test]
async fn a_declared_output_type_gives_the_output_schema_and_the_structured_value() {
    let schema = <CountFiles as CustomTool>::output_schema().expect("declared");
    assert_eq!(
        schema["properties"]["files"]["type"], "integer",
        "{schema:?}"
    );
    let session = Session::builder().custom::<CountFiles>().build().unwrap();
    let listed = session.registry().get("count_files").unwrap();
    assert_eq!(listed.output_schema(), Some(&schema));
    let result = session.call("count_files", json!({"dir": "src"})).await;
    assert_eq!(result.structured, Some(json!({"files": 3})));
    // A tool without `output` declares none.
    assert!(<BatchRenamePreview as CustomTool>::output_schema().is_none());
}

// ---------------------------------------------------------------------------------------
// Arguments a tool does not know are refused by default, naming the field.

/// Cleans a directory, after a preview.
#[custom_tool(pending, register = false)]
struct CleanDir {
    /// The directory.
    dir: String,
}

impl CleanDir {
    async fn execute(self, ctx: &ToolContext) -> Result<String, ToolError> {
        ctx.push_pending_action(xcsh::pending::PendingFn::new("Clean", |_| async {
            Ok::<_, String>("cleaned")
        }))?;
        Ok(format!("Will clean {}.", self.dir))
    }
}

/// Lists a directory, ignoring arguments it does not know.
#[custom_tool(read_only, allow_unknown_fields, register = false)]
struct LaxList {
    /// The directory.
    dir: String,
}

impl LaxList {
    async fn execute(self, _ctx: &ToolContext) -> String {
        format!("listed {}", self.dir)
    }
}

#[tokio::test]
async fn an_unknown_argument_is_refused_naming_it_and_nothing_is_pushed() {
    let session = Session::builder()
        .custom::<CleanDir>()
        .custom::<LaxList>()
        .build()
        .unwrap();
    let result = session
        .call("clean_dir", json!({"dir": "src", "limit": 3}))
        .await;
    assert!(result.is_error(), "{}", result.text_content());
    assert!(
        result.text_content().contains("unknown field `limit`"),
        "{}",
        result.text_content()
    );
    assert!(session.pending().is_empty(), "a refused call pushed");
    let schema = <CleanDir as CustomTool>::parameters();
    assert_eq!(schema["additionalProperties"], json!(false), "{schema:?}");

    // Opted out: ignored, as serde does by default.
    let lax = session
        .call("lax_list", json!({"dir": "src", "limit": 3}))
        .await;
    assert_eq!(lax.text_content(), "listed src");
}

// ---------------------------------------------------------------------------------------
// A pending action's declared effect: from a field, a method, or a ChangeSet field unnamed.

#[pending(apply, label = "Rotate", effect = touches)]
struct RotateByField {
    touches: xcsh::pending::Effect,
}

impl RotateByField {
    async fn apply(&mut self, _reason: &str) {}
}

#[pending(apply, label = "Rotate", effect_fn = touched)]
struct RotateByMethod {
    key: String,
}

impl RotateByMethod {
    fn touched(&self) -> xcsh::pending::Effect {
        xcsh::pending::Effect::files([xcsh::pending::FileEffect::modify(self.key.clone())])
    }
    async fn apply(&mut self, _reason: &str) {}
}

#[pending(apply, label = "Nothing declared")]
struct Undeclared {}

impl Undeclared {
    async fn apply(&mut self, _reason: &str) {}
}

#[test]
fn a_pending_action_declares_its_effect_from_a_field_or_a_method() {
    use xcsh::PendingAction as _;
    use xcsh::pending::{Effect, FileEffect};
    let by_field = RotateByField {
        touches: Effect::files([FileEffect::delete("secrets/old")]),
    };
    assert_eq!(
        by_field.effect().paths().collect::<Vec<_>>(),
        ["secrets/old"]
    );
    let by_method = RotateByMethod {
        key: "secrets/key".into(),
    };
    assert_eq!(
        by_method.effect(),
        Effect::files([FileEffect::modify("secrets/key")])
    );
    assert_eq!(Undeclared {}.effect(), Effect::Unknown);
}
