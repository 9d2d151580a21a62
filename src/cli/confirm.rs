//! Asking a person before a change is written: `--yes`, or a question on the terminal.

use std::io::{BufRead, IsTerminal, Write};

use super::{Failure, style};

/// Exit code of a preview that was not applied (declined, or no terminal to ask on).
pub(crate) const NOT_APPLIED: u8 = 1;

/// Whether to write what was just shown: yes with `--yes`; otherwise `question` is asked on
/// the terminal, and without one nothing is written (the message says to pass `--yes`).
pub(crate) fn go_ahead(yes: bool, question: &str) -> Result<bool, Failure> {
    if yes {
        return Ok(true);
    }
    if !at_a_terminal() {
        eprintln!(
            "Preview only: nothing was written, since there is no terminal to ask on. Re-run with --yes to apply."
        );
        return Ok(false);
    }
    if !ask(question)? {
        eprintln!("Not applied; nothing was written.");
        return Ok(false);
    }
    Ok(true)
}

fn ask(question: &str) -> Result<bool, Failure> {
    let answer = answer(question)?.unwrap_or_default();
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Asks `question` on stderr and reads one line of stdin, lower-cased; `None` at the end of
/// the input.
pub(crate) fn answer(question: &str) -> Result<Option<String>, Failure> {
    let mut stderr = anstream::stderr().lock();
    let _ = write!(stderr, "{}{question}{:#}", style::FILE, style::FILE);
    let _ = stderr.flush();
    let mut answer = String::new();
    let read = std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure(format!("cannot read the answer from stdin: {e}")))?;
    Ok((read > 0).then(|| answer.to_ascii_lowercase()))
}

/// Whether a person is at the terminal (stdin and stdout both one).
pub(crate) fn at_a_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// `-i`'s precondition: a terminal to ask on, else the error saying what to do instead.
pub(crate) fn terminal_for_review() -> Result<(), Failure> {
    if at_a_terminal() {
        Ok(())
    } else {
        Err(Failure(
            "-i reviews file by file on a terminal, and there is none here: run it in a terminal, or drop -i (and add --yes to apply everything)".to_owned(),
        ))
    }
}

/// ` (1 file skipped)`, ` (3 files skipped)`, or nothing: after `Applied …` of a review.
pub(crate) fn skipped(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (1 file skipped)".to_owned(),
        n => format!(" ({n} files skipped)"),
    }
}
