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
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !interactive {
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
    let mut stderr = anstream::stderr().lock();
    let _ = write!(stderr, "{}{question}{:#}", style::FILE, style::FILE);
    let _ = stderr.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure(format!("cannot read the answer from stdin: {e}")))?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
