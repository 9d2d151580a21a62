//! The syntax guard at a terminal (`xcsh ast-edit`, `xcsh apply-patch`), opt-in: with
//! `--syntax-guard warn|refuse`, the same verdict the tools give, shown under the diff, and
//! under `refuse` nothing written. Off by default there: a person reads the diff, and a broad
//! rewrite over a thousand files would parse each of them once more (BENCHMARKS.md).

use std::io::Write;

use xcsh::changeset::ChangeSet;
use xcsh::tools::engine::EditPlan;
use xcsh::tools::syntax::{SyntaxGuard, SyntaxReport};

use super::{Failure, style};

/// `--syntax-guard` of the terminal commands: absent, no check.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct GuardArgs {
    /// Check that every changed file (in a language xcsh parses) still parses: `warn` names
    /// each syntax error the change introduces under the diff; `refuse` also refuses to
    /// apply, writing nothing (exit 2). Off unless given.
    #[arg(long, value_name = "POLICY", value_parser = parse_guard)]
    syntax_guard: Option<SyntaxGuard>,
}

fn parse_guard(s: &str) -> Result<SyntaxGuard, String> {
    s.parse()
}

impl GuardArgs {
    /// Whether `--syntax-guard` was given.
    pub(crate) fn enabled(self) -> bool {
        self.syntax_guard.is_some()
    }
}

/// For a reviewed change just before it is written (staged from `plan`, when it was): with
/// `--syntax-guard`, its verdict shown on `out` and, under `refuse`, the error that stops the
/// apply.
pub(crate) fn before_apply(
    changes: &ChangeSet,
    plan: Option<&EditPlan>,
    args: GuardArgs,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if !args.enabled() {
        return Ok(());
    }
    let verdict = Verdict::of(changes, plan, args);
    verdict
        .show(out)
        .map_err(|e| Failure(format!("cannot write to stdout: {e}")))?;
    verdict.refusal().map_or(Ok(()), Err)
}

/// What the guard said of one change.
pub(crate) struct Verdict {
    report: SyntaxReport,
    guard: SyntaxGuard,
}

impl Verdict {
    /// Judges every file `changes` writes (the files are read as they are now, but those
    /// whose result the `plan` they were staged from judged with its own tree), under the
    /// policy given (`warn` when none was: call it only when [`GuardArgs::enabled`]).
    pub(crate) fn of(changes: &ChangeSet, plan: Option<&EditPlan>, args: GuardArgs) -> Verdict {
        Verdict {
            report: match plan {
                Some(plan) => SyntaxReport::check_planned(changes, plan),
                None => SyntaxReport::check(changes),
            },
            guard: args.syntax_guard.unwrap_or_default(),
        }
    }

    /// The lines under the diff: only the files the change breaks (a terminal preview of a
    /// thousand files does not list the ones that parse), then what apply will do.
    pub(crate) fn show(&self, out: &mut impl Write) -> std::io::Result<()> {
        let broken = self.report.introduced();
        if broken.is_empty() {
            return Ok(());
        }
        for error in &broken {
            style::line(out, style::WARN, &format!("Syntax: the change {error}."))?;
        }
        let then = match self.guard {
            SyntaxGuard::Refuse => "--syntax-guard refuse: applying is refused.",
            _ => "Applying writes it anyway (--syntax-guard refuse would refuse it).",
        };
        style::line(out, style::WARN, then)
    }

    /// Under `--syntax-guard refuse`, when the change breaks a file: the command's error,
    /// before anything is written.
    pub(crate) fn refusal(&self) -> Option<Failure> {
        let broken = self.report.broken_files();
        (self.guard == SyntaxGuard::Refuse && !broken.is_empty()).then(|| {
            Failure(format!(
                "not applied: the change introduces a syntax error into {} (--syntax-guard refuse; see the preview). Nothing was written: change the edit so the file still parses, or pass --syntax-guard warn to write it anyway.",
                broken.join(", ")
            ))
        })
    }
}
