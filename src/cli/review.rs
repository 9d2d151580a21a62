//! `xcsh ast-edit -i`: the preview file by file, answered `y/n/a/q` as in `git add -p` and
//! `ast-grep -i`; what was accepted is applied as one atomic change, and `q` writes nothing.

use std::io::Write;

use xcsh::tools::engine::{EditPlan, preview};

use super::{Failure, confirm, style};

/// What the person chose.
pub(crate) enum Review {
    /// Apply these files (indices into the plan's files, in order).
    Apply(Vec<usize>),
    /// They quit (or the input ended): write nothing.
    Quit,
}

const HELP: &str = "y - apply this file\nn - skip this file\na - apply this file and all the rest\nq - quit, writing nothing at all";

/// Shows each file's diff and asks; `a` takes the rest unseen, `q` (or end of input) stops
/// with nothing chosen.
pub(crate) fn review(plan: &EditPlan) -> Result<Review, Failure> {
    let total = plan.files.len();
    let mut chosen = Vec::new();
    let mut rest = false;
    for (index, file) in plan.files.iter().enumerate() {
        if rest {
            chosen.push(index);
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
        let question = format!(
            "({}/{total}) Apply {} in {}? [y,n,a,q,?] ",
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
                    chosen.push(index);
                    break;
                }
                Some("n") => break,
                Some("a") => {
                    chosen.push(index);
                    rest = true;
                    break;
                }
                Some(_) => eprintln!("{HELP}"),
            }
        }
    }
    Ok(Review::Apply(chosen))
}
