//! `xcsh demo`: the whole preview → resolve flow on a bundled sample workspace, copied to a
//! temporary directory — what an agent does through the tools, shown to a person.
//!
//! The sample files are compiled into the binary, so the demo runs from any directory. Each
//! step also checks what it shows (the file on disk changed, or did not): a demo that went
//! wrong fails with exit code 2 instead of printing a story that is not true.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use tokio::runtime::Runtime;
use xcsh::pending::ResolutionView;
use xcsh::session::ResolveBias;
use xcsh::{AgentToolResult, Dialect, ResolveAction, Session};

use super::{Failure, root, runtime, style};

/// The sample workspace: path under the root, contents.
const SAMPLE: &[(&str, &str)] = &[
    (
        "src/config.rs",
        include_str!("../../examples/sample-workspace/src/config.rs"),
    ),
    (
        "app/report.py",
        include_str!("../../examples/sample-workspace/app/report.py"),
    ),
    (
        "web/api.ts",
        include_str!("../../examples/sample-workspace/web/api.ts"),
    ),
];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Keep the temporary workspace afterwards (its path is printed) to look at the files.
    #[arg(long)]
    keep: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let dir = tempfile::Builder::new()
        .prefix("xcsh-demo-")
        .tempdir()
        .map_err(|e| {
            Failure(format!(
                "cannot create a temporary directory: {e}; set TMPDIR to a writable directory"
            ))
        })?;
    let root = dir
        .path()
        .canonicalize()
        .map_err(|e| Failure(format!("cannot resolve the temporary directory: {e}")))?;
    for (path, contents) in SAMPLE {
        write_sample(&root, path, contents)?;
    }
    let demo = Demo {
        session: root::builtin_registry(&root)?.session(),
        runtime: runtime()?,
        root,
    };
    let mut out = anstream::stdout().lock();
    demo.show(&mut out)?;
    if args.keep {
        let kept = dir.keep();
        writeln!(out, "\nThe workspace is kept at {}.", kept.display()).map_err(write_failed)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_sample(root: &Path, path: &str, contents: &str) -> Result<(), Failure> {
    let target = root.join(path);
    let created = match target.parent() {
        Some(parent) => std::fs::create_dir_all(parent),
        None => Ok(()),
    };
    created
        .and_then(|()| std::fs::write(&target, contents))
        .map_err(|e| Failure(format!("cannot write the sample file `{path}`: {e}")))
}

fn write_failed(e: io::Error) -> Failure {
    Failure(format!("cannot write to stdout: {e}"))
}

struct Demo {
    session: Session,
    runtime: Runtime,
    root: PathBuf,
}

impl Demo {
    fn show(&self, out: &mut impl Write) -> Result<(), Failure> {
        self.intro(out).map_err(write_failed)?;
        self.search(out)?;
        let lines = self.preview_and_apply(out)?;
        self.preview_and_discard(out)?;
        self.final_state(out, &lines)?;
        Ok(())
    }

    fn intro(&self, out: &mut impl Write) -> io::Result<()> {
        style::line(
            out,
            style::FILE,
            "xcsh demo: an agent edits code through previews that change nothing until resolved.",
        )?;
        writeln!(
            out,
            "Workspace: {} (a temporary copy of examples/sample-workspace)",
            self.root.display()
        )?;
        for (path, contents) in SAMPLE {
            writeln!(out, "  {path:<16} {} lines", contents.lines().count())?;
        }
        writeln!(
            out,
            "Tools offered: {}",
            self.session.tool_names().join(", ")
        )
    }

    /// Calls a tool as an agent would, showing the call.
    fn call(
        &self,
        out: &mut impl Write,
        tool: &str,
        args: Value,
    ) -> Result<AgentToolResult, Failure> {
        style::line(out, style::DIM, &format!("→ {tool} {args}")).map_err(write_failed)?;
        let result = self.runtime.block_on(self.session.call(tool, args));
        Ok(result)
    }

    fn read(&self, path: &str) -> Result<String, Failure> {
        std::fs::read_to_string(self.root.join(path))
            .map_err(|e| Failure(format!("cannot read `{path}` back: {e}")))
    }

    fn search(&self, out: &mut impl Write) -> Result<(), Failure> {
        style::heading(out, "1. Search first: ast_grep (read-only)").map_err(write_failed)?;
        let found = self.call(
            out,
            "ast_grep",
            json!({"pat": "console.log($$$ARGS)", "lang": "typescript"}),
        )?;
        expect_ok(&found, "ast_grep")?;
        writeln!(out, "{}", found.text_content()).map_err(write_failed)
    }

    /// Steps 2–4; returns the numbers of the lines the applied edit changed.
    fn preview_and_apply(&self, out: &mut impl Write) -> Result<Vec<u64>, Failure> {
        let path = "src/config.rs";
        style::heading(out, "2. Preview an edit: ast_edit").map_err(write_failed)?;
        let preview = self.call(
            out,
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )?;
        expect_ok(&preview, "ast_edit")?;
        style::text_with_diffs(out, &preview.text_content()).map_err(write_failed)?;
        let unwraps = self.read(path)?.matches(".unwrap()").count();
        if unwraps == 0 {
            return Err(Failure(format!("the preview changed `{path}` on disk")));
        }
        style::line(
            out,
            style::OK,
            &format!("{path} on disk is unchanged: still {unwraps} `.unwrap()` calls."),
        )
        .map_err(write_failed)?;

        style::heading(out, "3. The pending stack steers the model to resolve")
            .map_err(write_failed)?;
        self.stack_and_choice(out).map_err(write_failed)?;

        style::heading(out, "4. Apply it through resolve").map_err(write_failed)?;
        let applied = self.call(
            out,
            "resolve",
            json!({"action": "apply", "reason": "Return config errors to the caller instead of panicking."}),
        )?;
        expect_ok(&applied, "resolve")?;
        show_resolution(out, &applied).map_err(write_failed)?;
        let now = self.read(path)?;
        if now.contains(".unwrap()") {
            return Err(Failure(format!(
                "resolve applied, but `{path}` still has `.unwrap()`"
            )));
        }
        let lines = changed_lines(&preview, path);
        style::line(out, style::OK, &format!("{path} on disk now:")).map_err(write_failed)?;
        for &number in &lines {
            let text = now
                .lines()
                .nth((number as usize).saturating_sub(1))
                .unwrap_or("");
            writeln!(out, "  {number:>3} │ {}", text.trim_end()).map_err(write_failed)?;
        }
        Ok(lines)
    }

    fn stack_and_choice(&self, out: &mut impl Write) -> io::Result<()> {
        let stack = self.session.pending().snapshot();
        writeln!(out, "Pending, top first:")?;
        for entry in &stack {
            writeln!(
                out,
                "  {} {}  (from {})",
                entry.id, entry.label, entry.source_tool_name
            )?;
        }
        writeln!(out, "Tool choice for the next request, per provider:")?;
        for dialect in Dialect::ALL {
            let shown = match self.session.resolve_bias(dialect) {
                Some(ResolveBias::ToolChoice(choice)) => choice.to_string(),
                Some(ResolveBias::Reminder(_)) => {
                    "(cannot force a tool: the reminder below goes with the result)".to_owned()
                }
                None => "(none)".to_owned(),
            };
            writeln!(out, "  {:<17} {shown}", dialect.as_str())?;
        }
        for reminder in self.session.take_reminders() {
            style::line(out, style::DIM, &reminder)?;
        }
        Ok(())
    }

    fn preview_and_discard(&self, out: &mut impl Write) -> Result<(), Failure> {
        let path = "app/report.py";
        style::heading(out, "5. Preview another edit, then discard it").map_err(write_failed)?;
        let preview = self.call(
            out,
            "ast_edit",
            json!({"ops": [{"pat": "print($$$ARGS)", "out": "logger.info($$$ARGS)"}], "lang": "python"}),
        )?;
        expect_ok(&preview, "ast_edit")?;
        style::text_with_diffs(out, &preview.text_content()).map_err(write_failed)?;
        self.session.take_reminders();
        let discarded = self.call(
            out,
            "resolve",
            json!({"action": "discard", "reason": "logger.info takes a format string, not print-style arguments: this rewrite would garble the messages."}),
        )?;
        expect_ok(&discarded, "resolve")?;
        show_resolution(out, &discarded).map_err(write_failed)?;
        let original = sample(path);
        if self.read(path)? != original {
            return Err(Failure(format!(
                "the discarded edit changed `{path}` on disk"
            )));
        }
        style::line(out, style::OK, &format!("{path} on disk is unchanged.")).map_err(write_failed)
    }

    fn final_state(&self, out: &mut impl Write, applied_lines: &[u64]) -> Result<(), Failure> {
        style::heading(out, "6. Final state").map_err(write_failed)?;
        if self.session.pending().has_pending() {
            return Err(Failure(
                "something is still pending after resolve".to_owned(),
            ));
        }
        writeln!(
            out,
            "Nothing is pending; no provider gets a forced tool choice:"
        )
        .map_err(write_failed)?;
        for dialect in Dialect::ALL {
            let choice = self.session.tool_choice(dialect);
            writeln!(
                out,
                "  {:<17} {}",
                dialect.as_str(),
                choice.map_or_else(|| "(none)".to_owned(), |c| c.to_string())
            )
            .map_err(write_failed)?;
        }
        let again = self.call(
            out,
            "resolve",
            json!({"action": "apply", "reason": "again"}),
        )?;
        style::line(
            out,
            if again.is_error() {
                style::WARN
            } else {
                style::ERROR
            },
            &format!(
                "resolve answers (isError: {}): {}",
                again.is_error(),
                again.text_content()
            ),
        )
        .map_err(write_failed)?;
        writeln!(out, "Files compared with the sample:").map_err(write_failed)?;
        for (path, original) in SAMPLE {
            let state = if self.read(path)? == *original {
                "unchanged".to_owned()
            } else {
                format!("changed on {} line(s)", applied_lines.len())
            };
            writeln!(out, "  {path:<16} {state}").map_err(write_failed)?;
        }
        writeln!(out).map_err(write_failed)?;
        writeln!(
            out,
            "Next: `xcsh serve --root DIR` gives these tools to an MCP client; `xcsh ast-edit -p '$X.unwrap()' -r '$X?' -l rust src/` edits from the terminal."
        )
        .map_err(write_failed)
    }
}

fn sample(path: &str) -> &'static str {
    SAMPLE
        .iter()
        .find(|(p, _)| *p == path)
        .map_or("", |(_, contents)| contents)
}

fn expect_ok(result: &AgentToolResult, tool: &str) -> Result<(), Failure> {
    if result.is_error() {
        return Err(Failure(format!(
            "the demo's `{tool}` call failed: {}",
            result.text_content()
        )));
    }
    Ok(())
}

/// `Accept: …` / `Discard: …` with the reason beneath, then what resolve answered.
fn show_resolution(out: &mut impl Write, result: &AgentToolResult) -> io::Result<()> {
    let details = result.details.as_ref();
    let field = |name: &str| {
        details
            .and_then(|d| d.get(name))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let action = match field("action") {
        "discard" => ResolveAction::Discard,
        _ => ResolveAction::Apply,
    };
    let view = ResolutionView::new(action, field("label"), field("reason"));
    writeln!(out, "{}", view.to_ansi())?;
    writeln!(out, "{}", result.text_content())
}

/// The line numbers the preview's replacements start on in `path`, from its details.
fn changed_lines(preview: &AgentToolResult, path: &str) -> Vec<u64> {
    let Some(files) = preview
        .details
        .as_ref()
        .and_then(|d| d.get("files"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut lines: Vec<u64> = files
        .iter()
        .filter(|f| f.get("file").and_then(Value::as_str) == Some(path))
        .filter_map(|f| f.get("replacements").and_then(Value::as_array))
        .flatten()
        .filter_map(|r| r.get("line").and_then(Value::as_u64))
        .collect();
    lines.dedup();
    lines
}
