//! Rendering resolve outcomes for a person at a terminal.

use std::fmt;

use crate::resolve::ResolveAction;

/// A resolve outcome as a person sees it: `Accept: 2 replacements in 1 file [AST Edit]`, the
/// reason beneath.
///
/// The label splits at its first `": "`: the part before names the tool (shown in brackets),
/// the part after says what happens. A label without `": "` is shown whole.
///
/// ```
/// use xcsh_core::{ResolveAction, ResolutionView};
/// let view = ResolutionView::new(ResolveAction::Apply, "AST Edit: 2 replacements in 1 file", "tests pass");
/// assert_eq!(view.to_string(), "Accept: 2 replacements in 1 file [AST Edit]\n  tests pass");
/// let view = ResolutionView::new(ResolveAction::Discard, "Drop cache", "");
/// assert_eq!(view.to_string(), "Discard: Drop cache");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolutionView<'a> {
    /// `Accept` or `Discard`.
    pub verb: &'static str,
    /// What happens (the label after its first `": "`).
    pub summary: &'a str,
    /// The tool part of the label, if it had one.
    pub source: Option<&'a str>,
    /// The reason given.
    pub reason: &'a str,
}

impl<'a> ResolutionView<'a> {
    /// The view of resolving `label` with `action` for `reason`.
    pub fn new(action: ResolveAction, label: &'a str, reason: &'a str) -> Self {
        let verb = match action {
            ResolveAction::Apply => "Accept",
            ResolveAction::Discard => "Discard",
        };
        let (source, summary) = match label.split_once(": ") {
            Some((source, summary)) => (Some(source), summary),
            None => (None, label),
        };
        ResolutionView {
            verb,
            summary,
            source,
            reason,
        }
    }

    /// The same text with ANSI styles: the verb bold and coloured (green accept, yellow
    /// discard), the source dimmed.
    pub fn to_ansi(&self) -> String {
        let colour = if self.verb == "Accept" { "32" } else { "33" };
        let mut out = format!("\x1b[1;{colour}m{}:\x1b[0m {}", self.verb, self.summary);
        if let Some(source) = self.source {
            out.push_str(&format!(" \x1b[2m[{source}]\x1b[0m"));
        }
        for line in self.reason.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("\n  \x1b[2m{line}\x1b[0m"));
        }
        out
    }
}

impl fmt::Display for ResolutionView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.verb, self.summary)?;
        if let Some(source) = self.source {
            write!(f, " [{source}]")?;
        }
        for line in self.reason.lines().filter(|l| !l.trim().is_empty()) {
            write!(f, "\n  {line}")?;
        }
        Ok(())
    }
}
