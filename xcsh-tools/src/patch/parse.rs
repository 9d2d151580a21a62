//! Reading patch text into [`Patch`]: the envelope, the file operations, their hunks.
//!
//! The grammar is Codex's (`apply_patch_tool_instructions.md`), with the leniency its parser
//! has: markers padded with whitespace, a patch wrapped in a `<<'EOF'` heredoc, a first hunk
//! without `@@`. Beyond it, and documented as such: several `@@` lines in a row narrow the
//! place step by step (the instructions show it, Codex's parser refuses it), a unified-diff
//! header `@@ -1,3 +1,4 @@ fn f()` is read as its trailing text, blank lines between file
//! operations are skipped, and an `*** Update File:` with only a `*** Move to:` is a rename.

use super::error::PatchError;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: its file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, in the order the patch gives them (and applies them).
    pub ops: Vec<FileOp>,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File: path`: the file gets `content` (created, or replaced if it exists).
    Add {
        /// The path as the patch names it.
        path: String,
        /// The new content: the `+` lines, each ended by `\n`.
        content: String,
        /// 1-based line of the header in the patch text.
        line: usize,
    },
    /// `*** Delete File: path`.
    Delete {
        /// The path as the patch names it.
        path: String,
        /// 1-based line of the header in the patch text.
        line: usize,
    },
    /// `*** Update File: path`, optionally `*** Move to: new_path`, then hunks.
    Update {
        /// The path as the patch names it.
        path: String,
        /// Where the result goes instead, when the file is moved.
        move_to: Option<String>,
        /// The hunks, in file order.
        hunks: Vec<Hunk>,
        /// 1-based line of the header in the patch text.
        line: usize,
    },
}

impl FileOp {
    /// The path the operation names first (the source of a move).
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. }
            | FileOp::Delete { path, .. }
            | FileOp::Update { path, .. } => path,
        }
    }

    /// 1-based line of its header in the patch.
    pub fn line(&self) -> usize {
        match self {
            FileOp::Add { line, .. }
            | FileOp::Delete { line, .. }
            | FileOp::Update { line, .. } => *line,
        }
    }

    /// `*** Update File: a.rs`, as the patch writes the header.
    pub fn header(&self) -> String {
        match self {
            FileOp::Add { path, .. } => format!("{ADD} {path}"),
            FileOp::Delete { path, .. } => format!("{DELETE} {path}"),
            FileOp::Update { path, .. } => format!("{UPDATE} {path}"),
        }
    }
}

/// One `@@` section of an update: where it goes and what it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The `@@ text` headers, in order: each is looked for after the previous one, and the
    /// hunk's lines after the last.
    pub contexts: Vec<String>,
    /// Its lines in order.
    pub lines: Vec<HunkLine>,
    /// `*** End of File`: the hunk's old lines must end the file.
    pub end_of_file: bool,
    /// 1-based line in the patch where the hunk starts (its first `@@`, or first line).
    pub line: usize,
}

/// A line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` text`: there before and after.
    Context(String),
    /// `-text`: removed.
    Delete(String),
    /// `+text`: added.
    Insert(String),
}

impl Hunk {
    /// The lines the file must hold where the hunk applies (context and removed lines).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(t) | HunkLine::Delete(t) => Some(t.as_str()),
                HunkLine::Insert(_) => None,
            })
            .collect()
    }

    /// Whether the hunk changes anything (has a `+` or `-` line).
    pub fn changes(&self) -> bool {
        self.lines
            .iter()
            .any(|l| !matches!(l, HunkLine::Context(_)))
    }
}

/// Parses patch text.
///
/// ```
/// use xcsh_tools::patch::{FileOp, HunkLine, parse};
///
/// let patch = parse("*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch\n")?;
/// let FileOp::Update { path, hunks, .. } = &patch.ops[0] else { unreachable!() };
/// assert_eq!(path, "a.py");
/// assert_eq!(hunks[0].contexts, ["def f():"]);
/// assert_eq!(hunks[0].lines[1], HunkLine::Insert("    return 1".into()));
///
/// let err = parse("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch").unwrap_err();
/// assert!(err.to_string().starts_with("patch line 2: `*** Frobnicate File: a` is not a file operation"));
/// # Ok::<(), xcsh_tools::patch::PatchError>(())
/// ```
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    // Lines with their 1-based numbers; `\r\n` ends a line like `\n`.
    let all: Vec<(usize, &str)> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    let first = all.iter().position(|(_, l)| !l.trim().is_empty());
    let last = all.iter().rposition(|(_, l)| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return Err(PatchError::syntax(
            1,
            "the patch is empty: it must start with `*** Begin Patch` and end with `*** End Patch`",
        ));
    };
    let mut lines = &all[first..=last];
    // A heredoc a shell would have unwrapped (`<<'EOF'` … `EOF`).
    if lines.len() >= 4
        && matches!(lines[0].1.trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines[lines.len() - 1].1.trim_end().ends_with("EOF")
    {
        lines = &lines[1..lines.len() - 1];
    }
    let (begin_no, begin) = lines[0];
    if begin.trim() != BEGIN {
        return Err(PatchError::syntax(
            begin_no,
            format!(
                "the patch must start with a line `{BEGIN}`, not `{}`",
                begin.trim()
            ),
        ));
    }
    let (end_no, end) = lines[lines.len() - 1];
    if lines.len() < 2 || end.trim() != END {
        return Err(PatchError::syntax(
            end_no,
            format!(
                "the patch must end with a line `{END}`; its last line is `{}` (was the patch cut short?)",
                end.trim()
            ),
        ));
    }
    let mut body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    while let Some(&(no, line)) = body.first() {
        let header = line.trim();
        if header.is_empty() {
            body = &body[1..];
            continue;
        }
        let (op, used) = if let Some(path) = header.strip_prefix(ADD) {
            parse_add(path, no, body)?
        } else if let Some(path) = header.strip_prefix(DELETE) {
            let path = file_path(path, no, DELETE)?;
            (FileOp::Delete { path, line: no }, 1)
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            parse_update(path, no, body)?
        } else {
            return Err(PatchError::syntax(
                no,
                format!(
                    "`{header}` is not a file operation: each starts with `{ADD} <path>`, `{DELETE} <path>` or `{UPDATE} <path>`"
                ),
            ));
        };
        ops.push(op);
        body = &body[used..];
    }
    if ops.is_empty() {
        return Err(PatchError::syntax(
            begin_no,
            "the patch has no file operations: nothing to do (add `*** Add File:`, `*** Delete File:` or `*** Update File:` sections)",
        ));
    }
    Ok(Patch { ops })
}

/// The path after a header, trimmed; refused when empty.
fn file_path(rest: &str, line: usize, marker: &str) -> Result<String, PatchError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(PatchError::syntax(
            line,
            format!("`{marker}` names no file: write `{marker} <path>`"),
        ));
    }
    Ok(path.to_owned())
}

/// Whether a line (of an update's body) starts the next file operation.
fn is_op_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE) || t == END
}

fn parse_add(rest: &str, no: usize, body: &[(usize, &str)]) -> Result<(FileOp, usize), PatchError> {
    let path = file_path(rest, no, ADD)?;
    let mut content = String::new();
    let mut used = 1;
    for &(line_no, line) in &body[1..] {
        if let Some(text) = line.strip_prefix('+') {
            content.push_str(text);
            content.push('\n');
            used += 1;
        } else if is_op_header(line) || line.trim().is_empty() {
            break;
        } else {
            return Err(PatchError::syntax(
                line_no,
                format!(
                    "`{line}` in `{ADD} {path}`: every line of a new file starts with `+` (write `+{line}`)"
                ),
            ));
        }
    }
    Ok((
        FileOp::Add {
            path,
            content,
            line: no,
        },
        used,
    ))
}

fn parse_update(
    rest: &str,
    no: usize,
    body: &[(usize, &str)],
) -> Result<(FileOp, usize), PatchError> {
    let path = file_path(rest, no, UPDATE)?;
    let mut used = 1;
    let mut move_to = None;
    if let Some(&(move_no, line)) = body.get(1)
        && let Some(dest) = line.trim().strip_prefix(MOVE)
    {
        move_to = Some(file_path(dest, move_no, MOVE)?);
        used += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    loop {
        let rest = &body[used..];
        let Some(&(line_no, line)) = rest.first() else {
            break;
        };
        if is_op_header(line) {
            break;
        }
        // Blank lines between hunks (before a hunk's first `@@`).
        if line.trim().is_empty()
            && (hunks.is_empty() || hunks.last().is_some_and(|h| h.end_of_file))
        {
            used += 1;
            continue;
        }
        let (hunk, n) = parse_hunk(rest, hunks.is_empty(), &path)?;
        debug_assert!(n > 0, "a hunk consumes a line at least (line {line_no})");
        hunks.push(hunk);
        used += n;
    }
    if hunks.is_empty() && move_to.is_none() {
        return Err(PatchError::syntax(
            no,
            format!(
                "`{UPDATE} {path}` has no hunks: give at least one `@@` section with `-`/`+` lines (or a `{MOVE} <path>` to rename it)"
            ),
        ));
    }
    Ok((
        FileOp::Update {
            path,
            move_to,
            hunks,
            line: no,
        },
        used,
    ))
}

/// The context a `@@` line gives (`None`: it gives none), or not a `@@` line at all.
fn hunk_header(line: &str) -> Option<Option<String>> {
    let t = line.trim_end();
    if t == "@@" {
        return Some(None);
    }
    let rest = t.strip_prefix("@@ ")?;
    // A unified-diff header, `@@ -12,3 +12,4 @@ fn f()`: its text after the numbers.
    if let Some(after) = rest.strip_prefix('-')
        && let Some(close) = after.find(" @@")
        && after[..close]
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | ' ' | '+'))
    {
        let tail = after[close + 3..].trim();
        return Some((!tail.is_empty()).then(|| tail.to_owned()));
    }
    Some((!rest.trim().is_empty()).then(|| rest.to_owned()))
}

/// Parses one hunk from the start of `lines`; returns it and how many lines it used.
fn parse_hunk(
    lines: &[(usize, &str)],
    first_of_file: bool,
    path: &str,
) -> Result<(Hunk, usize), PatchError> {
    let start_no = lines[0].0;
    let mut used = 0;
    let mut contexts = Vec::new();
    while let Some(&(_, line)) = lines.get(used)
        && let Some(context) = hunk_header(line)
    {
        contexts.extend(context);
        used += 1;
    }
    if used == 0 && !first_of_file {
        let (no, line) = lines[0];
        return Err(PatchError::syntax(
            no,
            format!(
                "`{line}` in `{UPDATE} {path}`: a hunk's lines start with ` ` (context), `-` (removed) or `+` (added), and each further hunk starts with `@@`"
            ),
        ));
    }
    let mut hunk = Hunk {
        contexts,
        lines: Vec::new(),
        end_of_file: false,
        line: start_no,
    };
    while let Some(&(no, line)) = lines.get(used) {
        if line.trim() == END_OF_FILE {
            if hunk.lines.is_empty() {
                return Err(empty_hunk(no, path));
            }
            hunk.end_of_file = true;
            used += 1;
            break;
        }
        if is_op_header(line) || hunk_header(line).is_some() {
            break;
        }
        let parsed = match line.chars().next() {
            None => HunkLine::Context(String::new()),
            Some(' ') => HunkLine::Context(line[1..].to_owned()),
            Some('-') => HunkLine::Delete(line[1..].to_owned()),
            Some('+') => HunkLine::Insert(line[1..].to_owned()),
            Some(_) if hunk.lines.is_empty() => {
                return Err(PatchError::syntax(
                    no,
                    format!(
                        "`{line}` in `{UPDATE} {path}`: every line of a hunk starts with ` ` (context), `-` (removed) or `+` (added)"
                    ),
                ));
            }
            // The next hunk (which must start with `@@`, and says so if it does not).
            Some(_) => break,
        };
        hunk.lines.push(parsed);
        used += 1;
    }
    if hunk.lines.is_empty() {
        let no = lines.get(used).map_or(start_no, |l| l.0);
        return Err(empty_hunk(no, path));
    }
    Ok((hunk, used))
}

fn empty_hunk(line: usize, path: &str) -> PatchError {
    PatchError::syntax(
        line,
        format!(
            "a hunk of `{UPDATE} {path}` has no lines: after `@@` give the context (` `), removed (`-`) and added (`+`) lines"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(patch: &Patch) -> (&str, Option<&str>, &[Hunk]) {
        match &patch.ops[0] {
            FileOp::Update {
                path,
                move_to,
                hunks,
                ..
            } => (path, move_to.as_deref(), hunks),
            other => panic!("not an update: {other:?}"),
        }
    }

    #[test]
    fn reads_every_operation_with_line_numbers() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a/new.py\n+abc\n+def\n*** Delete File: old.py\n*** Update File: u.py\n*** Move to: v.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch",
        )
        .unwrap();
        assert_eq!(
            p.ops[0],
            FileOp::Add {
                path: "a/new.py".into(),
                content: "abc\ndef\n".into(),
                line: 2
            }
        );
        assert_eq!(
            p.ops[1],
            FileOp::Delete {
                path: "old.py".into(),
                line: 5
            }
        );
        let FileOp::Update {
            move_to,
            hunks,
            line,
            ..
        } = &p.ops[2]
        else {
            panic!()
        };
        assert_eq!((move_to.as_deref(), *line), (Some("v.py"), 6));
        assert_eq!(hunks[0].line, 8);
        assert_eq!(hunks[0].old_lines(), ["    pass"]);
    }

    #[test]
    fn padded_markers_crlf_and_heredoc_are_tolerated() {
        for text in [
            "  *** Begin Patch  \r\n  *** Update File: f.txt \r\n@@\r\n-one\r\n+two\r\n *** End Patch \r\n",
            "<<'EOF'\n*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+two\n*** End Patch\nEOF\n",
            "\n\n*** Begin Patch\n*** Update File: f.txt\n-one\n+two\n*** End Patch\n\n",
        ] {
            let p = parse(text).unwrap();
            let (path, _, hunks) = update(&p);
            assert_eq!(path, "f.txt");
            assert_eq!(
                hunks[0].lines,
                [
                    HunkLine::Delete("one".into()),
                    HunkLine::Insert("two".into())
                ],
                "{text:?}"
            );
        }
    }

    #[test]
    fn nested_and_unified_headers_and_end_of_file() {
        let p = parse("*** Begin Patch\n*** Update File: f.py\n@@ class A\n@@     def m(self):\n-        a\n+        b\n@@ -10,2 +10,2 @@ def g():\n-x\n+y\n*** End of File\n*** End Patch").unwrap();
        let (_, _, hunks) = update(&p);
        assert_eq!(hunks[0].contexts, ["class A", "    def m(self):"]);
        assert_eq!(hunks[1].contexts, ["def g():"]);
        assert!(hunks[1].end_of_file && !hunks[0].end_of_file);
    }

    #[test]
    fn refusals_name_the_line() {
        let cases = [
            (
                "bad",
                "patch line 1: the patch must start with a line `*** Begin Patch`, not `bad`",
            ),
            (
                "*** Begin Patch\n*** Add File: a\n+x",
                "patch line 3: the patch must end with a line `*** End Patch`; its last line is `+x` (was the patch cut short?)",
            ),
            (
                "*** Begin Patch\n*** End Patch",
                "patch line 1: the patch has no file operations",
            ),
            (
                "*** Begin Patch\n*** Update File: t.py\n*** End Patch",
                "patch line 2: `*** Update File: t.py` has no hunks",
            ),
            (
                "*** Begin Patch\n*** Update File: t.py\n@@\nbad\n*** End Patch",
                "patch line 4: `bad` in `*** Update File: t.py`: every line of a hunk starts with",
            ),
            (
                "*** Begin Patch\n*** Update File: t.py\n@@\n-a\nbad\n*** End Patch",
                "patch line 5: `bad` in `*** Update File: t.py`: a hunk's lines start with",
            ),
            (
                "*** Begin Patch\n*** Update File: t.py\n@@\n*** End of File\n*** End Patch",
                "patch line 4: a hunk of `*** Update File: t.py` has no lines",
            ),
            (
                "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
                "patch line 3: `no plus` in `*** Add File: a`: every line of a new file starts with `+`",
            ),
            (
                "*** Begin Patch\n*** Delete File:\n*** End Patch",
                "patch line 2: `*** Delete File:` names no file",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).unwrap_err().to_string();
            assert!(got.starts_with(want), "{text:?}\n got: {got}\nwant: {want}");
        }
    }

    #[test]
    fn a_move_alone_is_a_rename_and_blank_lines_are_context_inside_a_hunk() {
        let p =
            parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch").unwrap();
        assert_eq!(update(&p), ("a", Some("b"), &[][..]));
        let p = parse("*** Begin Patch\n*** Update File: a\n@@\n x\n\n-y\n*** End Patch").unwrap();
        assert_eq!(update(&p).2[0].old_lines(), ["x", "", "y"]);
    }
}
