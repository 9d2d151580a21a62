//! How the binary shows things to a person: styles, coloured diffs, section headings.
//!
//! Everything is written with ANSI styles to an `anstream` stream, which strips them when the
//! stream is not a terminal or `NO_COLOR` is set: one code path, plain or coloured output.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

pub(crate) const ADDED: Style = AnsiColor::Green.on_default();
pub(crate) const REMOVED: Style = AnsiColor::Red.on_default();
pub(crate) const HUNK: Style = AnsiColor::Cyan.on_default();
pub(crate) const FILE: Style = Style::new().bold();
pub(crate) const HEADING: Style = AnsiColor::Blue.on_default().bold();
pub(crate) const DIM: Style = Style::new().dimmed();
pub(crate) const ERROR: Style = AnsiColor::Red.on_default().bold();
pub(crate) const WARN: Style = AnsiColor::Yellow.on_default().bold();
pub(crate) const OK: Style = AnsiColor::Green.on_default().bold();

/// Writes `text` in `style`, then a newline.
pub(crate) fn line(out: &mut impl Write, style: Style, text: &str) -> io::Result<()> {
    writeln!(out, "{style}{text}{style:#}")
}

/// Writes one unified-diff line in the colour of its kind.
fn diff_line(out: &mut impl Write, text: &str) -> io::Result<()> {
    let style = if text.starts_with("+++") || text.starts_with("---") {
        FILE
    } else if text.starts_with("@@") {
        HUNK
    } else if text.starts_with('+') {
        ADDED
    } else if text.starts_with('-') {
        REMOVED
    } else {
        Style::new()
    };
    line(out, style, text)
}

/// Writes a unified diff, coloured.
pub(crate) fn diff(out: &mut impl Write, diff: &str) -> io::Result<()> {
    diff.lines().try_for_each(|l| diff_line(out, l))
}

/// Writes a tool's text, colouring the unified diffs inside it: a diff starts at a
/// `--- a/…` line followed by `+++ b/…`, and runs while lines look like diff lines.
pub(crate) fn text_with_diffs(out: &mut impl Write, text: &str) -> io::Result<()> {
    let lines: Vec<&str> = text.lines().collect();
    let mut in_diff = false;
    for (index, text_line) in lines.iter().enumerate() {
        let starts_diff = text_line.starts_with("--- a/")
            && lines
                .get(index + 1)
                .is_some_and(|next| next.starts_with("+++ b/"));
        // An empty context line is a single space, so an empty line ends the diff.
        in_diff = starts_diff || (in_diff && text_line.starts_with([' ', '+', '-', '@', '\\']));
        if in_diff {
            diff_line(out, text_line)?;
        } else {
            writeln!(out, "{text_line}")?;
        }
    }
    Ok(())
}

/// A section heading: `── title ──…`, padded to a steady width.
pub(crate) fn heading(out: &mut impl Write, title: &str) -> io::Result<()> {
    let rule = "─".repeat(72usize.saturating_sub(title.chars().count() + 4));
    writeln!(out)?;
    writeln!(out, "{HEADING}── {title} {rule}{HEADING:#}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> String {
        let mut out = Vec::new();
        text_with_diffs(&mut out, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn only_diff_lines_are_coloured() {
        let text = "Preview:\n- not a diff\n--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-old\n+new\n\nNothing is written yet.";
        let out = render(text);
        assert!(out.contains("- not a diff\n"), "{out:?}");
        assert!(
            out.contains(&format!("{REMOVED}-old{REMOVED:#}")),
            "{out:?}"
        );
        assert!(out.contains(&format!("{ADDED}+new{ADDED:#}")), "{out:?}");
        assert!(out.ends_with("\nNothing is written yet.\n"), "{out:?}");
    }
}
