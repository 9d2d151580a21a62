//! The patch format of Codex's `apply_patch`, applied all or nothing.
//!
//! A patch is text between `*** Begin Patch` and `*** End Patch` holding file operations:
//! `*** Add File: path` (then `+` lines), `*** Delete File: path`, and `*** Update File: path`,
//! optionally followed by `*** Move to: new_path`, then hunks. A hunk starts with `@@`
//! (optionally `@@ text` naming a line above the change, such as `@@ class Foo`; several in a
//! row narrow step by step), holds ` ` context, `-` removed and `+` added lines, and may end
//! with `*** End of File` when its lines end the file.
//!
//! * [`parse`] reads the text ([`Patch`]); markers padded with whitespace are accepted.
//! * [`plan`] plays it over a workspace ([`PatchPlan`]): each hunk is found after the
//!   previous one, exactly first, then ignoring trailing whitespace, then surrounding
//!   whitespace, then Unicode punctuation look-alikes ([`Leniency`]); a hunk found in several
//!   places is refused with each place, and one found nowhere with the closest place, what
//!   differs there and, when only context or spacing differs, the hunk rewritten to match.
//!   Line endings are kept per line. The result is a [`ChangeSet`](crate::changeset::ChangeSet):
//!   stale-safe, journalled, all or nothing.
//!
//! Unlike Codex, a patch that fails anywhere writes nothing: there is no partial result.
//!
//! ```
//! use xcsh_tools::patch::{parse, plan};
//! use xcsh_tools::workspace::Workspace;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("app.py"), "def greet():\n    print(\"Hi\")\n")?;
//! let ws = Workspace::new(dir.path())?;
//! let patch = parse(
//!     "*** Begin Patch\n*** Update File: app.py\n*** Move to: main.py\n@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello, world!\")\n*** End Patch\n",
//! )?;
//! let planned = plan(&ws, &patch)?;
//! assert!(planned.changes.diff().contains("+    print(\"Hello, world!\")"));
//! planned.changes.apply()?;
//! assert!(!dir.path().join("app.py").exists());
//! assert!(std::fs::read_to_string(dir.path().join("main.py"))?.contains("Hello, world!"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod apply;
mod diagnose;
mod error;
mod parse;
mod plan;
mod seek;

pub use error::{PatchError, PatchErrorKind};
pub use parse::{FileOp, Hunk, HunkLine, Patch, parse};
pub use plan::{FileAction, PatchPlan, PlannedFile, plan, summary};
pub use seek::Leniency;

/// `n thing` / `n things`.
fn plural(n: usize, singular: &str) -> String {
    if n == 1 {
        format!("{n} {singular}")
    } else {
        format!("{n} {singular}s")
    }
}
