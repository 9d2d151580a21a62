//! `xcsh ast-edit -i`: the preview file by file, answered `y/n/a/q` as in `git add -p` and
//! `ast-grep -i` (`s` splits a file into its replacements, each answered on its own); what
//! was accepted is applied as one atomic change, and `q` writes nothing.

use std::io::Write;

use xcsh::tools::engine::{EditPlan, FileEdit, preview};

use super::{Failure, confirm, style};

/// What the person chose.
/// A file of the plan to apply (its index), whole (`None`) or only the replacements listed
/// (indices into the file's replacements).
pub(crate) type Accepted = (usize, Option<Vec<usize>>);

pub(crate) enum Review {
    /// Apply these files (indices into the plan's files, in order), each whole (`None`) or
    /// only the replacements listed (indices into the file's replacements).
    Apply(Vec<Accepted>),
    /// They quit (or the input ended): write nothing.
    Quit,
}

const HELP: &str = "y - apply this file\nn - skip this file\na - apply this file and all the rest\ns - split this file into its replacements\nq - quit, writing nothing at all";

const SPLIT_HELP: &str = "y - apply this replacement\nn - skip it\na - apply it and the rest of this file\nd - skip it and the rest of this file\nq - quit, writing nothing at all";

/// What to do with one file's replacements, asked one by one.
enum Split {
    Some(Vec<usize>),
    Quit,
}

/// Shows each file's diff and asks; `a` takes the rest unseen, `q` (or end of input) stops
/// with nothing chosen.
pub(crate) fn review(plan: &EditPlan) -> Result<Review, Failure> {
    let total = plan.files.len();
    let mut chosen = Vec::new();
    let mut rest = false;
    for (index, file) in plan.files.iter().enumerate() {
        if rest {
            chosen.push((index, None));
            continue;
        }
        {
            let mut out = anstream::stdout().lock();
            let shown = match preview::try_unified_diff(file) {
                Ok(diff) => style::diff(&mut out, &diff),
                Err(stale) => style::line(
                    &mut out,
                    style::WARN,
                    &format!(
                        "{stale} is no longer what this preview read: applying it will be refused; answer n, or q and run the command again"
                    ),
                ),
            };
            shown
                .and_then(|()| out.flush())
                .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
        }
        let n = file.replacements.len();
        let split_key = if n > 1 { ",s" } else { "" };
        let question = format!(
            "({}/{total}) Apply {} in {}? [y,n,a{split_key},q,?] ",
            index + 1,
            if n == 1 {
                "1 replacement".to_owned()
            } else {
                format!("{n} replacements")
            },
            file.display
        );
        loop {
            match confirm::answer(&question)?.as_deref().map(str::trim) {
                None | Some("q") => return Ok(Review::Quit),
                Some("y") => {
                    chosen.push((index, None));
                    break;
                }
                Some("n") => break,
                Some("a") => {
                    chosen.push((index, None));
                    rest = true;
                    break;
                }
                Some("s") if n > 1 => {
                    match split(file)? {
                        Split::Quit => return Ok(Review::Quit),
                        Split::Some(some) if some.is_empty() => {}
                        Split::Some(some) if some.len() == n => chosen.push((index, None)),
                        Split::Some(some) => chosen.push((index, Some(some))),
                    }
                    break;
                }
                Some(_) => eprintln!("{HELP}"),
            }
        }
    }
    Ok(Review::Apply(chosen))
}

/// Asks about each replacement of `file`: its line, and the text it replaces and puts.
fn split(file: &FileEdit) -> Result<Split, Failure> {
    let original = file.read_original().map_err(|stale| {
        Failure(format!(
            "{stale}: its replacements cannot be shown. Nothing was written: run the command again."
        ))
    })?;
    let n = file.replacements.len();
    let mut chosen = Vec::new();
    for (i, r) in file.replacements.iter().enumerate() {
        {
            let mut out = anstream::stdout().lock();
            let mut hunk = format!("@@ {}:{} @@\n", file.display, r.line);
            for line in file.before(r, &original).lines() {
                hunk.push_str(&format!("-{line}\n"));
            }
            for line in file.after(r, &original).lines() {
                hunk.push_str(&format!("+{line}\n"));
            }
            style::diff(&mut out, &hunk)
                .and_then(|()| out.flush())
                .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
        }
        let question = format!(
            "  ({}/{n}) Apply this replacement at line {}? [y,n,a,d,q,?] ",
            i + 1,
            r.line
        );
        loop {
            match confirm::answer(&question)?.as_deref().map(str::trim) {
                None | Some("q") => return Ok(Split::Quit),
                Some("y") => {
                    chosen.push(i);
                    break;
                }
                Some("n") => break,
                Some("a") => {
                    chosen.extend(i..n);
                    return Ok(Split::Some(chosen));
                }
                Some("d") => return Ok(Split::Some(chosen)),
                Some(_) => eprintln!("{SPLIT_HELP}"),
            }
        }
    }
    Ok(Split::Some(chosen))
}
