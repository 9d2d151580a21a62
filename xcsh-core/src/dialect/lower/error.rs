//! Why a schema cannot be lowered, and where: the field path and the error it names.

use std::fmt;

use crate::dialect::Dialect;

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

    pub(super) fn with(&self, segment: PathSegment) -> Self {
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
    pub(super) fn new(dialect: Dialect, field: &FieldPath, kind: LowerErrorKind) -> Self {
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
