//! A unified diff of a change set, for previews.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use similar::TextDiff;

use super::splice::Splices;
use super::{ChangeSet, Fingerprint, NewContent, Op, Tracked};

/// How long one file's diff may search for a minimal edit script before settling for a
/// coarser (still correct) one: a preview must not hang on a pathological file.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

impl ChangeSet {
    /// A git-style unified diff of every operation, in order, for showing to a person or a
    /// model before [`apply`](Self::apply).
    ///
    /// Originals are not kept in memory, so they are read from disk now, one at a time (and
    /// the edits of [`modify_splicing`](Self::modify_splicing) spliced into them). If a file
    /// no longer matches what was recorded, or cannot be read, its section says so in a
    /// `# note:` line (apply would refuse it); a spliced file then shows no diff, since its
    /// edits fit only the content they were made for. Content that is not UTF-8 is shown as
    /// `Binary files … differ`.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "one\ntwo\n")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "one\n2\n")?;
    /// cs.create("b.txt", "new\n")?;
    /// let diff = cs.diff();
    /// assert!(diff.contains("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"));
    /// assert!(diff.contains("--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for op in &self.ops {
            match op {
                Op::Modify { file, content } => {
                    let path = self.ws.display(&file.entry.target);
                    let _ = writeln!(out, "diff --git a/{path} b/{path}");
                    let Some((old, as_recorded)) =
                        self.read_original(&mut out, &path, &file.entry.target, file.expect)
                    else {
                        continue;
                    };
                    let (a, b) = (format!("a/{path}"), format!("b/{path}"));
                    match content {
                        NewContent::Bytes(new) => text_diff(&mut out, &old, new, &a, &b),
                        // Edits fit only the content they were made for.
                        NewContent::Splices(_) if !as_recorded => {}
                        // Only the lines around the edits are diffed: a few small edits
                        // of a large file must not cost a whole-file diff.
                        NewContent::Splices(splices) => match splices.check(&old) {
                            Ok(old) => spliced_diff(&mut out, old, splices, &a, &b),
                            Err(problem) => {
                                let _ = writeln!(
                                    out,
                                    "# note: the edits of `{path}` cannot be spliced in: {problem}; apply will refuse them"
                                );
                            }
                        },
                    }
                }
                Op::Create {
                    file,
                    content,
                    perms,
                } => {
                    let path = self.ws.display(&file.entry.named);
                    let _ = writeln!(out, "diff --git a/{path} b/{path}\nnew file");
                    // The mode it is given (an undo's recreated file), as git shows one.
                    if let Some(mode) = perms.as_ref().and_then(super::kept::mode_of) {
                        let _ = writeln!(out, "new file mode {:06o}", 0o100_000 | mode);
                    }
                    text_diff(&mut out, b"", content, "/dev/null", &format!("b/{path}"));
                }
                Op::Delete { file } => {
                    let path = self.ws.display(&file.entry.named);
                    let _ = writeln!(out, "diff --git a/{path} b/{path}\ndeleted file");
                    if let Some((old, _)) =
                        self.read_original(&mut out, &path, &file.entry.target, file.expect)
                    {
                        text_diff(&mut out, &old, b"", &format!("a/{path}"), "/dev/null");
                    }
                }
                Op::Rename { from, to } => {
                    let (a, b) = (
                        self.ws.display(&from.entry.named),
                        self.ws.display(&to.entry.named),
                    );
                    let _ = writeln!(
                        out,
                        "diff --git a/{a} b/{b}\nrename from {a}\nrename to {b}"
                    );
                }
            }
        }
        out
    }

    /// The root-relative paths the change set leaves holding new content (modified and
    /// created files, rename targets), in order: what [`contents_after`](Self::contents_after)
    /// answers for.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "a")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "b")?;
    /// cs.create("new/c.txt", "c")?;
    /// assert_eq!(cs.written_files(), ["a.txt", "new/c.txt"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn written_files(&self) -> Vec<String> {
        self.ops
            .iter()
            .filter_map(|op| match op {
                Op::Modify { file, .. } => Some(self.ws.display(&file.entry.target)),
                Op::Create { file, .. } => Some(self.ws.display(&file.entry.named)),
                Op::Rename { to, .. } => Some(self.ws.display(&to.entry.named)),
                Op::Delete { .. } => None,
            })
            .collect()
    }

    /// What the change set does, file by file, as an action's declared
    /// [`Effect`](xcsh_core::Effect): what approval rules, the audit log and prompts judge.
    /// A `#[pending]` action with a `ChangeSet` field declares this without being told.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// use xcsh_core::{Effect, FileEffect};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "a")?;
    /// std::fs::write(dir.path().join("b.txt"), "b")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "A")?;
    /// cs.rename("b.txt", "docs/b.txt")?;
    /// cs.create("c.txt", "c")?;
    /// assert_eq!(cs.effect(), Effect::files([
    ///     FileEffect::modify("a.txt"),
    ///     FileEffect::moved("b.txt", "docs/b.txt"),
    ///     FileEffect::create("c.txt"),
    /// ]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn effect(&self) -> xcsh_core::Effect {
        use xcsh_core::FileEffect;
        xcsh_core::Effect::files(self.ops.iter().map(|op| match op {
            Op::Modify { file, .. } => FileEffect::modify(self.ws.display(&file.entry.target)),
            Op::Create { file, .. } => FileEffect::create(self.ws.display(&file.entry.named)),
            Op::Delete { file } => FileEffect::delete(self.ws.display(&file.entry.named)),
            Op::Rename { from, to } => FileEffect::moved(
                self.ws.display(&from.entry.named),
                self.ws.display(&to.entry.named),
            ),
        }))
    }

    /// The exact bytes [`apply`](Self::apply) would leave at `path` (root-relative, as
    /// [`written_files`](Self::written_files) names it), made now from the files as they are:
    /// `Ok(None)` when the change set writes nothing there, an error (in words for a model)
    /// when a file it reads is no longer what was recorded, which apply would refuse too.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "one\n")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "two\n")?;
    /// assert_eq!(cs.contents_after("a.txt")?, Some(b"two\n".to_vec()));
    /// assert_eq!(cs.contents_after("b.txt")?, None);
    /// cs.apply()?;
    /// assert_eq!(std::fs::read(dir.path().join("a.txt"))?, b"two\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contents_after(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let current = |shown: &str, at: &Path, expect: Fingerprint| {
            let (bytes, _) = crate::workspace::read_no_follow(at, None)
                .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
            if Fingerprint::of(&bytes) != expect {
                return Err(format!(
                    "`{shown}` changed on disk since the preview; apply will refuse it: preview again"
                ));
            }
            Ok(bytes)
        };
        for op in &self.ops {
            match op {
                Op::Modify { file, content } if self.ws.display(&file.entry.target) == path => {
                    return match content {
                        NewContent::Bytes(new) => Ok(Some(new.to_vec())),
                        NewContent::Splices(splices) => {
                            let old = current(path, &file.entry.target, file.expect)?;
                            splices.apply(&old).map(Some)
                        }
                    };
                }
                Op::Create { file, content, .. } if self.ws.display(&file.entry.named) == path => {
                    return Ok(Some(content.to_vec()));
                }
                Op::Rename { from, to } if self.ws.display(&to.entry.named) == path => {
                    let shown = self.ws.display(&from.entry.named);
                    return current(&shown, &from.entry.target, from.expect).map(Some);
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The files it writes, as [`written_files`](Self::written_files) names them, each with
    /// its contents before and after: [`contents_before`](Self::contents_before) and
    /// [`contents_after`](Self::contents_after) of each, in one pass, each current file read
    /// once (the syntax guard over thousands of files; asked name by name, every lookup walks
    /// the whole change set).
    pub(crate) fn written_contents(&self) -> Vec<WrittenFile<'_>> {
        self.ops
            .iter()
            .filter_map(|op| {
                let (shown, read) = match op {
                    Op::Modify { file, .. } => (self.ws.display(&file.entry.target), Some(file)),
                    Op::Create { file, .. } => (self.ws.display(&file.entry.named), None),
                    Op::Rename { from, to } => (self.ws.display(&to.entry.named), Some(from)),
                    Op::Delete { .. } => return None,
                };
                Some(WrittenFile {
                    shown,
                    op,
                    read,
                    cs: self,
                })
            })
            .collect()
    }

    /// What is at `path` now that the change replaces (root-relative, as
    /// [`written_files`](Self::written_files) names it): the current bytes of a modified
    /// file or of a rename's source, `Ok(None)` for a created file or a path the change set
    /// does not write. An error (in words for a model) when the file is no longer what was
    /// recorded, which apply would refuse too. With [`contents_after`](Self::contents_after),
    /// what a check of the change's result against the original (the syntax guard) needs.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "one\n")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "two\n")?;
    /// cs.create("b.txt", "new\n")?;
    /// assert_eq!(cs.contents_before("a.txt")?, Some(b"one\n".to_vec()));
    /// assert_eq!(cs.contents_before("b.txt")?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contents_before(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        let current = |shown: &str, at: &Path, expect: Fingerprint| {
            let (bytes, _) = crate::workspace::read_no_follow(at, None)
                .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
            if Fingerprint::of(&bytes) != expect {
                return Err(format!(
                    "`{shown}` changed on disk since the preview; apply will refuse it: preview again"
                ));
            }
            Ok(Some(bytes))
        };
        for op in &self.ops {
            match op {
                Op::Modify { file, .. } if self.ws.display(&file.entry.target) == path => {
                    return current(path, &file.entry.target, file.expect);
                }
                Op::Rename { from, to } if self.ws.display(&to.entry.named) == path => {
                    let shown = self.ws.display(&from.entry.named);
                    return current(&shown, &from.entry.target, from.expect);
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// Reads a file's current content for the diff, and whether it is still what was
    /// recorded, noting in `out` when it is unreadable or no longer what was recorded.
    fn read_original(
        &self,
        out: &mut String,
        shown: &str,
        path: &Path,
        expect: Fingerprint,
    ) -> Option<(Vec<u8>, bool)> {
        // Not following a link: one swapped in since the recording must not show what it
        // points to (apply refuses it the same way).
        match crate::workspace::read_no_follow(path, None) {
            Ok((old, _)) => {
                let as_recorded = Fingerprint::of(&old) == expect;
                if !as_recorded {
                    let _ = writeln!(
                        out,
                        "# note: `{shown}` changed on disk since it was recorded; apply will refuse it"
                    );
                }
                Some((old, as_recorded))
            }
            Err(e) => {
                let _ = writeln!(out, "# note: cannot read `{shown}`: {e}");
                None
            }
        }
    }
}

/// Appends the unified diff of `old` → `new` (nothing when they are equal).
fn text_diff(out: &mut String, old: &[u8], new: &[u8], a: &str, b: &str) {
    match (std::str::from_utf8(old), std::str::from_utf8(new)) {
        (Ok(old), Ok(new)) => {
            let diff = TextDiff::configure()
                .timeout(DIFF_TIMEOUT)
                .diff_lines(old, new);
            let _ = write!(out, "{}", diff.unified_diff().header(a, b));
        }
        _ if old != new => {
            let _ = writeln!(out, "Binary files {a} and {b} differ");
        }
        _ => {}
    }
}

/// Appends the unified diff of `old` with `splices` made, diffing only the lines around
/// each group of edits: the hunks a whole-file diff prints (see
/// [`write_hunks`](super::hunks::write_hunks)), nothing when no line changes.
fn spliced_diff(out: &mut String, old: &str, splices: &Splices, a: &str, b: &str) {
    let mut hunks = String::new();
    let edits = splices
        .edits()
        .iter()
        .map(|s| (s.range.clone(), s.text.as_str()));
    super::hunks::write_hunks(&mut hunks, old, edits, CONTEXT_LINES);
    if !hunks.is_empty() {
        let _ = writeln!(out, "--- {a}\n+++ {b}");
        out.push_str(&hunks);
    }
}

/// Lines of context around each change, as `similar` (and `diff -u`) show by default.
const CONTEXT_LINES: usize = 3;

impl xcsh_core::EffectSource for ChangeSet {
    fn effect(&self) -> xcsh_core::Effect {
        ChangeSet::effect(self)
    }
}

/// One file a change set writes ([`ChangeSet::written_contents`]).
pub(crate) struct WrittenFile<'a> {
    /// Root-relative, `/`-separated.
    pub(crate) shown: String,
    op: &'a Op,
    read: Option<&'a Tracked>,
    cs: &'a ChangeSet,
}

impl WrittenFile<'_> {
    /// Its contents before and after the change (before: `None` for a created file), the
    /// current file read once; an error (in words for a model) when it is no longer what was
    /// recorded.
    pub(crate) fn contents(&self) -> Result<(Option<Vec<u8>>, Vec<u8>), String> {
        let before = match self.read {
            Some(file) => {
                let shown = self.cs.ws.display(&file.entry.named);
                let (bytes, _) = crate::workspace::read_no_follow(&file.entry.target, None)
                    .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
                if Fingerprint::of(&bytes) != file.expect {
                    return Err(format!(
                        "`{shown}` changed on disk since the preview; apply will refuse it: preview again"
                    ));
                }
                Some(bytes)
            }
            None => None,
        };
        let after = match self.op {
            Op::Modify { content, .. } => match content {
                NewContent::Bytes(new) => new.to_vec(),
                NewContent::Splices(splices) => {
                    splices.apply(before.as_deref().unwrap_or_default())?
                }
            },
            Op::Create { content, .. } => content.to_vec(),
            Op::Rename { .. } => before.clone().unwrap_or_default(),
            Op::Delete { .. } => Vec::new(),
        };
        Ok((before, after))
    }

    /// For a modification by splicing: the fingerprint of the original it expects and the
    /// edits it splices in, what a producer that judged the result itself
    /// ([`SyntaxHints`](crate::syntax::SyntaxHints)) knows the file by.
    pub(crate) fn spliced(&self) -> Option<(Fingerprint, &[super::Splice])> {
        match (self.op, self.read) {
            (
                Op::Modify {
                    content: NewContent::Splices(splices),
                    ..
                },
                Some(file),
            ) => Some((file.expect, splices.edits())),
            _ => None,
        }
    }

    /// Where the change replaced text, in order, for [`contents`](Self::contents)'
    /// `before` and `after`: each spliced edit, or for whole new content the one span between
    /// the longest common prefix and suffix (everything changed lies in it).
    pub(crate) fn replaced(&self, before: &[u8], after: &[u8]) -> Vec<Replaced> {
        if let Op::Modify {
            content: NewContent::Splices(splices),
            ..
        } = self.op
        {
            return splices
                .edits()
                .iter()
                .map(|s| Replaced {
                    before: s.range.clone(),
                    after_len: s.text.len(),
                })
                .collect();
        }
        let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        let suffix = before[prefix..]
            .iter()
            .rev()
            .zip(after[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        if prefix == before.len() && prefix == after.len() {
            return Vec::new();
        }
        vec![Replaced {
            before: prefix..before.len() - suffix,
            after_len: after.len() - suffix - prefix,
        }]
    }
}

/// One place a change replaced text: the bytes `before` of the original became `after_len`
/// bytes of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replaced {
    pub(crate) before: std::ops::Range<usize>,
    pub(crate) after_len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::Splice;
    use crate::workspace::Workspace;

    /// The diff of `original` with `edits` made, as spliced edits and as whole new content.
    fn both(original: &str, edits: &[(std::ops::Range<usize>, &str)]) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), original).unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let splices: Vec<Splice> = edits
            .iter()
            .map(|(r, t)| Splice::new(r.clone(), *t))
            .collect();
        let mut spliced = ChangeSet::new(ws.clone());
        spliced
            .modify_splicing("f.txt", Fingerprint::of(original.as_bytes()), splices)
            .unwrap();
        let mut new = String::new();
        let mut at = 0;
        for (r, t) in edits {
            new.push_str(&original[at..r.start]);
            new.push_str(t);
            at = r.end;
        }
        new.push_str(&original[at..]);
        let mut whole = ChangeSet::new(ws);
        whole.modify("f.txt", new).unwrap();
        (spliced.diff(), whole.diff())
    }

    #[test]
    fn spliced_edits_diff_as_the_whole_file_does() {
        let long: String = (0..2000).map(|n| format!("line {n}\n")).collect();
        let at = |n: usize| long.find(&format!("line {n}\n")).unwrap();
        let crlf = "a\r\nb\r\nc\r\nd\r\n";
        for (original, edits) in [
            (
                long.as_str(),
                vec![
                    (at(0)..at(1), "first\n"),
                    (at(5)..at(6), ""),
                    (at(9)..at(9), "inserted\n"),
                    (at(1000)..at(1002), "x\ny\nz\n"),
                    (at(1999)..long.len(), "last, unterminated"),
                ],
            ),
            (crlf, vec![(3..4, "B")]),
            ("no end", vec![(0..2, "an")]),
            ("same\n", vec![(0..4, "same")]),
        ] {
            let (spliced, whole) = both(original, &edits);
            assert_eq!(spliced, whole, "{original:?} {edits:?}");
        }
        let (spliced, _) = both(&long, &[(at(1000)..at(1001), "changed\n")]);
        assert!(
            spliced.contains("@@ -998,7 +998,7 @@\n line 997\n"),
            "{spliced}"
        );
    }

    #[test]
    fn edits_that_split_a_character_are_noted_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "é\n").unwrap();
        let mut cs = ChangeSet::new(Workspace::new(dir.path()).unwrap());
        cs.modify_splicing(
            "f.txt",
            Fingerprint::of("é\n".as_bytes()),
            [Splice::new(1..2, "x")],
        )
        .unwrap();
        assert_eq!(
            cs.diff(),
            "diff --git a/f.txt b/f.txt\n# note: the edits of `f.txt` cannot be spliced in: edits[0] (bytes 1..2) splits a UTF-8 character: ranges must start and end on character boundaries; apply will refuse them\n"
        );
    }
}
