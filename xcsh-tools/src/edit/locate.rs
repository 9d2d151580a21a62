//! Where `old` is in a file: the exact occurrences, the occurrences when only line endings
//! differ (a CRLF file and an `old` written with `\n`), and, when there is none, the nearest
//! candidates with what differs, for a refusal a model can act on.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

/// Candidates a refusal names, at most.
const MAX_CANDIDATES: usize = 3;
/// Occurrences whose lines an ambiguity refusal names, at most.
const MAX_LINES: usize = 20;
/// File lines a candidate quotes, at most, and characters of each.
const QUOTED_LINES: usize = 4;
const QUOTED_CHARS: usize = 120;
/// Single-line candidates: least similarity to be named.
const MIN_RATIO: f32 = 0.6;
/// Lines compared by similarity for a single-line `old`, at most (a file of 20,000+ lines
/// still answers quickly: the prefilter on length keeps far fewer).
const MAX_RATIO_LINES: usize = 20_000;

/// Where the edit goes: byte ranges of the file to replace, and the text to put there.
#[derive(Debug)]
pub(crate) struct Located {
    /// Ascending, not overlapping.
    pub(crate) ranges: Vec<Range<usize>>,
    /// `new`, with its line endings converted to the file's when they were ignored to match.
    pub(crate) new: String,
    /// Said in the preview when the match ignored line endings.
    pub(crate) note: Option<String>,
}

/// Finds `old` in `text` (the file `file`). `Err` is the refusal's text.
pub(crate) fn locate(
    text: &str,
    file: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Located, String> {
    let exact = occurrences(text, old, replace_all);
    if !exact.is_empty() {
        check_unique(text, file, &exact, replace_all)?;
        return Ok(Located {
            ranges: exact,
            new: new.to_owned(),
            note: None,
        });
    }
    let endings_may_differ =
        (old.contains('\n') || old.contains('\r')) && (text.contains('\r') || old.contains('\r'));
    if endings_may_differ
        && let Some(found) = locate_ignoring_endings(text, file, old, new, replace_all)?
    {
        return Ok(found);
    }
    Err(not_found(text, file, old))
}

/// Occurrences of `old`: every one when `replace_all` (not overlapping), else the first two
/// (overlapping too), which is enough to tell unique from ambiguous.
fn occurrences(text: &str, old: &str, replace_all: bool) -> Vec<Range<usize>> {
    if replace_all {
        return text
            .match_indices(old)
            .map(|(at, m)| at..at + m.len())
            .collect();
    }
    let Some(first) = text.find(old) else {
        return Vec::new();
    };
    let mut found = Vec::with_capacity(2);
    found.push(first..first + old.len());
    let next = first + text[first..].chars().next().map_or(1, char::len_utf8);
    if let Some(second) = text[next..].find(old) {
        let at = next + second;
        found.push(at..at + old.len());
        // Every occurrence, for the refusal to list their lines.
        found.extend(
            text[at + old.len()..]
                .match_indices(old)
                .map(|(i, m)| at + old.len() + i..at + old.len() + i + m.len()),
        );
    }
    found
}

/// Refuses several occurrences without `replace_all`, naming their lines.
fn check_unique(
    text: &str,
    file: &str,
    found: &[Range<usize>],
    replace_all: bool,
) -> Result<(), String> {
    if replace_all || found.len() < 2 {
        return Ok(());
    }
    let lines = Lines::new(text);
    let mut listed: Vec<String> = found
        .iter()
        .take(MAX_LINES)
        .map(|r| lines.line_of(r.start).to_string())
        .collect();
    let more = found.len().saturating_sub(MAX_LINES);
    let last = listed.pop().unwrap_or_default();
    let at = if more > 0 {
        format!("{}, {last} and {more} more", listed.join(", "))
    } else {
        format!("{} and {last}", listed.join(", "))
    };
    Err(format!(
        "`old` occurs {} times in {file}, at lines {at}; include more of the surrounding lines in `old` to make it unique, or set `replace_all` to true to replace every occurrence.",
        found.len()
    ))
}

/// `old` found when `\r\n` and `\n` are taken as the same line break. `Ok(None)` when it is
/// not there either; `Err` when the lines matched mix both endings (which `new` could not
/// follow faithfully).
fn locate_ignoring_endings(
    text: &str,
    file: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Option<Located>, String> {
    let (norm, removed) = normalise(text);
    let (old_norm, _) = normalise(old);
    let found = occurrences(&norm, &old_norm, replace_all);
    if found.is_empty() {
        return Ok(None);
    }
    let orig = |p: usize| p + removed.partition_point(|&q| q < p);
    let ranges: Vec<Range<usize>> = found.iter().map(|r| orig(r.start)..orig(r.end)).collect();
    check_unique(text, file, &ranges, replace_all)?;
    let lines = Lines::new(text);
    let mut crlf = None;
    for range in &ranges {
        let part = &text[range.clone()];
        let crlfs = part.matches("\r\n").count();
        let lfs = part.matches('\n').count() - crlfs;
        let this = match (crlfs, lfs) {
            (_, 0) => true,
            (0, _) => false,
            _ => {
                let first = lines.line_of(range.start);
                let last = lines.line_of(range.end.saturating_sub(1));
                return Err(format!(
                    "`old` matches {file} at lines {first}-{last} only with line endings ignored, and those lines mix CRLF (\\r\\n) and LF (\\n) endings; give `old` and `new` with the file's exact line endings there."
                ));
            }
        };
        crlf = Some(crlf.unwrap_or(this) && this);
    }
    let crlf = crlf.unwrap_or(false);
    let (new_norm, _) = normalise(new);
    let new = if crlf {
        new_norm.replace('\n', "\r\n")
    } else {
        new_norm
    };
    let first = lines.line_of(ranges[0].start);
    let (file_has, old_has) = if crlf {
        ("CRLF (\\r\\n)", "LF (\\n)")
    } else {
        ("LF (\\n)", "CRLF (\\r\\n)")
    };
    Ok(Some(Located {
        ranges,
        new,
        note: Some(format!(
            "Line endings: `old` has {old_has} line breaks where {file} has {file_has} (from line {first}); it was matched ignoring line endings, and `new` is written with {file_has} to keep the file's."
        )),
    }))
}

/// `text` with every `\r\n` made `\n`, and the positions (in the result) where a `\r` was
/// removed, ascending.
fn normalise(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\r\n") {
        out.push_str(&rest[..at]);
        removed.push(out.len());
        out.push('\n');
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    (out, removed)
}

/// Line starts of a text, for byte → line.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// 1-based line of byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at)
    }
}

/// What a candidate's text differs in.
#[derive(Debug, PartialEq)]
enum Difference {
    LineEndings,
    Indentation {
        line: usize,
        file: String,
        old: String,
    },
    Whitespace {
        line: usize,
    },
    LetterCase {
        line: usize,
    },
    Changed(Vec<(usize, String, String)>),
}

struct Candidate {
    /// 1-based first and last line.
    first: usize,
    last: usize,
    difference: Difference,
    score: f32,
}

/// The refusal for an `old` that is nowhere in the file.
fn not_found(text: &str, file: &str, old: &str) -> String {
    let file_lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut old_lines: Vec<&str> = old
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if old_lines.len() > 1 && old_lines.last() == Some(&"") {
        old_lines.pop();
    }
    let candidates = if old_lines.len() == 1 {
        single_line_candidates(&file_lines, old_lines[0])
    } else {
        window_candidates(&file_lines, &old_lines)
    };
    let crlf = text.contains("\r\n");
    let mut out = format!("`old` was not found in {file}");
    if crlf {
        out.push_str(" (a file with CRLF (\\r\\n) line endings; `old` may use either ending)");
    }
    if candidates.is_empty() {
        out.push_str(
            ", and no text there is close to it. Read the file again (it may have changed) and copy `old` exactly from it.",
        );
        return out;
    }
    out.push_str(if candidates.len() == 1 {
        ". The nearest candidate:"
    } else {
        ". The nearest candidates:"
    });
    for c in &candidates {
        let lines = if c.first == c.last {
            format!("line {}", c.first)
        } else {
            format!("lines {}-{}", c.first, c.last)
        };
        let what = match &c.difference {
            Difference::LineEndings => "differs only in line endings".to_owned(),
            Difference::Indentation { line, file, old } => format!(
                "differs only in indentation (line {line} is indented with {file} in the file, with {old} in `old`)"
            ),
            Difference::Whitespace { line } => {
                format!("differs only in whitespace (first at line {line})")
            }
            Difference::LetterCase { line } => {
                format!("differs only in letter case (first at line {line})")
            }
            Difference::Changed(changed) if c.first == c.last => {
                let (_, in_file, in_old) = &changed[0];
                let _ = write!(
                    out,
                    "\n- {lines}: the file has `{}` where `old` has `{}`",
                    shorten(in_file.trim()),
                    shorten(in_old.trim())
                );
                continue;
            }
            Difference::Changed(changed) => {
                let mut s = if changed.len() == 1 {
                    "differs in 1 changed line (".to_owned()
                } else {
                    format!("differs in {} changed lines (", changed.len())
                };
                let shown: Vec<String> = changed
                    .iter()
                    .take(2)
                    .map(|(line, in_file, in_old)| {
                        format!(
                            "line {line}: the file has `{}`, `old` has `{}`",
                            shorten(in_file.trim()),
                            shorten(in_old.trim())
                        )
                    })
                    .collect();
                s.push_str(&shown.join("; "));
                if changed.len() > 2 {
                    s.push_str("; …");
                }
                s.push(')');
                s
            }
        };
        let _ = write!(out, "\n- {lines}: {what}:");
        let exact = matches!(
            c.difference,
            Difference::Whitespace { .. } | Difference::Indentation { .. }
        );
        for n in c.first..=c.last.min(c.first + QUOTED_LINES - 1) {
            let line = file_lines.get(n - 1).copied().unwrap_or_default();
            if exact {
                // Whitespace is what differs: show it exactly.
                let _ = write!(out, "\n    {n:>5} | {:?}", shorten(line));
            } else {
                let _ = write!(out, "\n    {n:>5} | {}", shorten(line));
            }
        }
        if c.last >= c.first + QUOTED_LINES {
            let _ = write!(out, "\n          | …");
        }
    }
    out.push_str(
        "\nCopy `old` exactly as the file has it (indentation, whitespace and all), or read the file again: it may have changed.",
    );
    out
}

/// Candidates for a one-line `old`: lines that hold it up to whitespace or case, else the
/// most similar lines.
fn single_line_candidates(file_lines: &[&str], old: &str) -> Vec<Candidate> {
    let collapsed_old = collapse(old);
    if collapsed_old.is_empty() {
        return Vec::new();
    }
    let lower_old = old.to_lowercase();
    let mut found = Vec::new();
    for (i, line) in file_lines.iter().enumerate() {
        let n = i + 1;
        if collapse(line).contains(&collapsed_old) {
            let difference = if line.trim() == old.trim() && indent(line) != indent(old) {
                Difference::Indentation {
                    line: n,
                    file: describe_indent(indent(line)),
                    old: describe_indent(indent(old)),
                }
            } else {
                Difference::Whitespace { line: n }
            };
            found.push(Candidate {
                first: n,
                last: n,
                difference,
                score: 1.0,
            });
        } else if line.to_lowercase().contains(&lower_old) {
            found.push(Candidate {
                first: n,
                last: n,
                difference: Difference::LetterCase { line: n },
                score: 0.99,
            });
        }
        if found.len() >= MAX_CANDIDATES {
            return found;
        }
    }
    if !found.is_empty() {
        return found;
    }
    let target = old.trim();
    let len = target.chars().count();
    let mut scored: Vec<Candidate> = file_lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let n = l.trim().chars().count();
            n * 2 >= len && n <= len * 2 + 8
        })
        .take(MAX_RATIO_LINES)
        .filter_map(|(i, l)| {
            let score = similar::TextDiff::from_chars(target, l.trim()).ratio();
            (score >= MIN_RATIO).then(|| Candidate {
                first: i + 1,
                last: i + 1,
                difference: Difference::Changed(vec![(i + 1, l.to_string(), old.to_owned())]),
                score,
            })
        })
        .collect();
    best(&mut scored);
    scored
}

/// Candidates for a multi-line `old`: windows of as many lines, voted for by the lines they
/// share with `old` (trimmed) at the same offset, then judged line by line.
fn window_candidates(file_lines: &[&str], old_lines: &[&str]) -> Vec<Candidate> {
    let n = old_lines.len();
    if file_lines.len() < n {
        return Vec::new();
    }
    let mut offsets: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, line) in old_lines.iter().enumerate() {
        let t = line.trim();
        if !t.is_empty() {
            offsets.entry(t).or_default().push(k);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for (j, line) in file_lines.iter().enumerate() {
        if let Some(ks) = offsets.get(line.trim()) {
            for &k in ks {
                if j >= k && j - k + n <= file_lines.len() {
                    *votes.entry(j - k).or_default() += 1;
                }
            }
        }
    }
    let need = n.div_ceil(2).max(1);
    let mut scored: Vec<Candidate> = votes
        .into_iter()
        .filter(|&(_, v)| v >= need)
        .map(|(start, v)| {
            let window = &file_lines[start..start + n];
            Candidate {
                first: start + 1,
                last: start + n,
                difference: difference(window, old_lines, start + 1),
                score: v as f32 / n as f32,
            }
        })
        .collect();
    if scored.is_empty() {
        // No window shares enough lines: the first line of `old` alone, by similarity.
        let Some(first) = old_lines.iter().find(|l| !l.trim().is_empty()) else {
            return Vec::new();
        };
        return single_line_candidates(file_lines, first);
    }
    best(&mut scored);
    scored
}

/// What a window of the file differs in from `old`, its first line being `first`.
fn difference(window: &[&str], old: &[&str], first: usize) -> Difference {
    let pairs = || {
        window
            .iter()
            .zip(old)
            .enumerate()
            .map(|(i, (f, o))| (first + i, *f, *o))
    };
    if pairs().all(|(_, f, o)| f == o) {
        return Difference::LineEndings;
    }
    if pairs().all(|(_, f, o)| f.trim() == o.trim())
        && let Some((line, f, o)) = pairs().find(|(_, f, o)| indent(f) != indent(o))
    {
        return Difference::Indentation {
            line,
            file: describe_indent(indent(f)),
            old: describe_indent(indent(o)),
        };
    }
    if pairs().all(|(_, f, o)| collapse(f) == collapse(o)) {
        let line = pairs().find(|(_, f, o)| f != o).map_or(first, |p| p.0);
        return Difference::Whitespace { line };
    }
    Difference::Changed(
        pairs()
            .filter(|(_, f, o)| collapse(f) != collapse(o))
            .map(|(line, f, o)| (line, f.to_owned(), o.to_owned()))
            .collect(),
    )
}

/// Best first, then in file order; at most [`MAX_CANDIDATES`], and only those about as close
/// as the best (a clearly nearer one is named alone).
fn best(scored: &mut Vec<Candidate>) {
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.first.cmp(&b.first)));
    if let Some(top) = scored.first().map(|c| c.score) {
        scored.retain(|c| c.score >= top - 0.05);
    }
    scored.truncate(MAX_CANDIDATES);
}

/// The text with every run of whitespace removed.
fn collapse(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn indent(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// `8 spaces`, `1 tab`, `1 tab and 4 spaces`, `no indentation`.
fn describe_indent(ws: &str) -> String {
    let tabs = ws.chars().filter(|&c| c == '\t').count();
    let spaces = ws.chars().filter(|&c| c == ' ').count();
    let other = ws.chars().count() - tabs - spaces;
    let mut parts = Vec::new();
    let count = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    if tabs > 0 {
        parts.push(count(tabs, "tab", "tabs"));
    }
    if spaces > 0 {
        parts.push(count(spaces, "space", "spaces"));
    }
    if other > 0 {
        parts.push(count(
            other,
            "other whitespace character",
            "other whitespace characters",
        ));
    }
    if parts.is_empty() {
        "no indentation".to_owned()
    } else {
        parts.join(" and ")
    }
}

fn shorten(s: &str) -> String {
    crate::engine::shorten(s, QUOTED_CHARS)
}
