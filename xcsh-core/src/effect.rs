//! [`Effect`]: what a pending action will do to the workspace, as data — the files it
//! touches and how. Approval rules, the audit log, approval prompts and the effect digest
//! read it, never the action's free-form details, so a rule cannot be dodged by how the
//! details are named.
//!
//! An action declares its effect ([`PendingAction::effect`](crate::PendingAction::effect);
//! `#[pending]` derives it from a `ChangeSet` field, or takes `effect = field` /
//! `effect_fn = method`). One that declares none has [`Effect::Unknown`], and is judged as
//! touching files nobody knows: under a rules policy it is never allowed by the absence of a
//! path rule (see docs/APPROVALS.md).

use serde::{Deserialize, Serialize};

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum EffectKind {
    /// The file is created.
    Create,
    /// The file's content changes.
    Modify,
    /// The file is deleted.
    Delete,
    /// The file is moved to `to` (root-relative).
    Move {
        /// Where it goes.
        to: String,
    },
}

/// One file an action touches.
///
/// ```
/// use xcsh_core::{EffectKind, FileEffect};
/// let edit = FileEffect::modify("src/lib.rs").with_changed_lines(3);
/// assert_eq!(edit.kind, EffectKind::Modify);
/// assert_eq!(FileEffect::moved("a.rs", "b.rs").paths().collect::<Vec<_>>(), ["a.rs", "b.rs"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FileEffect {
    /// Root-relative path, `/`-separated (for a move, where the file is now).
    pub path: String,
    /// What happens to it.
    #[serde(flatten)]
    pub kind: EffectKind,
    /// Lines changed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_lines: Option<usize>,
}

impl FileEffect {
    fn new(path: impl Into<String>, kind: EffectKind) -> Self {
        FileEffect {
            path: path.into(),
            kind,
            changed_lines: None,
        }
    }

    /// `path` is created.
    pub fn create(path: impl Into<String>) -> Self {
        Self::new(path, EffectKind::Create)
    }

    /// `path`'s content changes.
    pub fn modify(path: impl Into<String>) -> Self {
        Self::new(path, EffectKind::Modify)
    }

    /// `path` is deleted.
    pub fn delete(path: impl Into<String>) -> Self {
        Self::new(path, EffectKind::Delete)
    }

    /// `from` is moved to `to`.
    pub fn moved(from: impl Into<String>, to: impl Into<String>) -> Self {
        Self::new(from, EffectKind::Move { to: to.into() })
    }

    /// With the count of lines changed.
    #[must_use]
    pub fn with_changed_lines(mut self, lines: usize) -> Self {
        self.changed_lines = Some(lines);
        self
    }

    /// Every path it touches: the file, and for a move where it goes too.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let to = match &self.kind {
            EffectKind::Move { to } => Some(to.as_str()),
            _ => None,
        };
        std::iter::once(self.path.as_str()).chain(to)
    }

    /// `create`, `modify`, `delete` or `move`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            EffectKind::Create => "create",
            EffectKind::Modify => "modify",
            EffectKind::Delete => "delete",
            EffectKind::Move { .. } => "move",
        }
    }
}

/// What a pending action will do.
///
/// ```
/// use xcsh_core::{Effect, FileEffect};
/// let effect = Effect::files([FileEffect::modify("a.rs").with_changed_lines(2), FileEffect::delete("b.rs")]);
/// assert_eq!(effect.paths().collect::<Vec<_>>(), ["a.rs", "b.rs"]);
/// assert_eq!(effect.changed_lines(), None); // not known for b.rs
/// assert!(!Effect::Unknown.is_known());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "effect", content = "files")]
#[non_exhaustive]
pub enum Effect {
    /// The action does not say what it touches: judged as touching unknown files.
    #[default]
    Unknown,
    /// These files, and nothing else.
    Files(Vec<FileEffect>),
}

impl Effect {
    /// An effect on these files.
    pub fn files(files: impl IntoIterator<Item = FileEffect>) -> Self {
        Effect::Files(files.into_iter().collect())
    }

    /// Whether the action said what it touches.
    pub fn is_known(&self) -> bool {
        matches!(self, Effect::Files(_))
    }

    /// The files, empty when unknown.
    pub fn file_effects(&self) -> &[FileEffect] {
        match self {
            Effect::Files(files) => files,
            Effect::Unknown => &[],
        }
    }

    /// Every path touched (move targets included), in order; none when unknown.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.file_effects().iter().flat_map(FileEffect::paths)
    }

    /// Lines changed in all, when known for every file.
    pub fn changed_lines(&self) -> Option<usize> {
        match self {
            Effect::Files(files) => files.iter().map(|f| f.changed_lines).sum(),
            Effect::Unknown => None,
        }
    }
}

/// A value an action's effect can be read from: `#[pending(effect = field)]` reads its field
/// through this, and a `ChangeSet` field is read without being named.
#[diagnostic::on_unimplemented(
    message = "`#[pending(effect = …)]` needs `{Self}` to say what it touches",
    label = "not an effect",
    note = "give a field of type `Effect` or `ChangeSet`, or `effect_fn = method` with `fn(&self) -> Effect`"
)]
pub trait EffectSource {
    /// The effect.
    fn effect(&self) -> Effect;
}

impl EffectSource for Effect {
    fn effect(&self) -> Effect {
        self.clone()
    }
}

impl EffectSource for Vec<FileEffect> {
    fn effect(&self) -> Effect {
        Effect::Files(self.clone())
    }
}
