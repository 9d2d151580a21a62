//! `xcsh session`: replays a JSONL script of tool calls against one session.
//!
//! Each line is `{"tool": "<name>", "args": {…}}` (`args` may be left out; blank lines and
//! lines starting with `#` are skipped). Each call prints one JSON line
//! `{"line": N, "tool": …, "result": …}`, or with `--pretty` a rendering for a person. A
//! malformed line is reported with its number (on stderr, and as `{"line": N, "error": …}`)
//! and the replay goes on; the exit code is then 2.
//!
//! A script of tool calls in a regular file is read whole before the first call (what the
//! calls write does not change the lines that run): one that calls the parsing tools
//! (`ast_grep`, `ast_edit`) at most once runs without a parse cache, since no later call
//! could reuse what it kept. A pipe (stdin, a FIFO) is read line by line.
//!
//! With `--dialect D`, for a host in any language: each line is one provider response, as
//! the provider's API returned it, and each prints one line
//! `{"messages": [...], "tool_choice": ...}`: what `Session::turn` returns (the messages that
//! answer the response's tool calls in that provider's request format, reminders included,
//! and the next request's tool choice, `null` when none).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Deserialize;
use serde_json::{Value, json};
use xcsh::approval::TerminalApprover;
use xcsh::pending::{RESOLVE_TOOL_NAME, ResolutionView};
use xcsh::tools::engine::ParseCache;
use xcsh::tools::{AST_EDIT, AST_GREP};
use xcsh::{AgentToolResult, Dialect, ResolveAction, Session};

use super::{EXIT_FAILURE, Failure, approval, root, runtime, style};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The script: one `{"tool": …, "args": {…}}` per line (default: stdin). A regular file
    /// is read whole before the first call; when at most one of its calls is to `ast_grep` or
    /// `ast_edit`, the session keeps no parsed files, whatever `--cache-mb` says (the cache is
    /// for later calls to reuse).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Render each result for a person instead of one JSON line per call.
    #[arg(long, conflicts_with = "dialect")]
    pretty: bool,
    /// Read one provider response per line (anthropic, openai-chat, openai-responses, gemini
    /// or bedrock) and answer each with `{"messages": [...], "tool_choice": ...}`: the
    /// messages to append to the next request, and its tool choice (null when none).
    #[arg(long, value_name = "D")]
    dialect: Option<Dialect>,
    #[command(flatten)]
    approval: approval::ApprovalArgs,
    #[command(flatten)]
    undo: super::undo::UndoArgs,
    #[command(flatten)]
    syntax: super::root::SyntaxGuardArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    /// Keep the pending stack in this directory: actions left pending stay there for a later
    /// `xcsh session --state DIR` (or `xcsh serve --state DIR`), which finds them in order.
    #[arg(long, value_name = "DIR")]
    state: Option<std::path::PathBuf>,
}

/// What a call prints: `{"line": N, "tool": …, "result": …}`, serialised from the result
/// itself (not copied into a JSON value first: a wide preview's details are megabytes).
#[derive(serde::Serialize)]
struct CallLine<'a> {
    line: usize,
    tool: &'a str,
    result: &'a AgentToolResult,
}

/// One line of the script.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    tool: String,
    #[serde(default, alias = "arguments")]
    args: Option<Value>,
}

const LINE_SHAPE: &str = r#"expected one JSON object per line: {"tool": "<name>", "args": {…}}"#;

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    if args.dialect == Some(Dialect::Mcp) {
        return Err(Failure(
            "--dialect mcp: an MCP client owns its model, so there are no responses to answer; use anthropic, openai-chat, openai-responses, gemini or bedrock (or `xcsh serve` for MCP)".into(),
        ));
    }
    let root = root::workspace_root(args.root.as_deref())?;
    // A person answers at the terminal: on stdin when the script comes from a file, else on
    // /dev/tty (stdin is the script).
    let approver = if args.file.is_some() {
        TerminalApprover::from_stdin()
    } else {
        TerminalApprover::new()
    };
    let script = Script::open(args.file.as_deref(), args.dialect.is_some())?;
    // A script read from a file is known whole before it runs: when at most one of its calls
    // parses files, no later call can reuse what that one would keep, and keeping it (the
    // trees of every file a broad change parsed, up to the budget) would cost only fresh
    // pages. That call then runs as `xcsh ast-edit` does, without a cache (its near-miss pass,
    // when it matches nothing, reads the files again rather than reusing their trees).
    let cache = if script.one_parsing_call {
        ParseCache::new(0)
    } else {
        args.cache.cache()
    };
    let builder = args.approval.configure(
        root::builtin_builder(&root, args.undo.limits(), args.syntax.syntax_guard)
            .extension(cache.clone()),
        Some(approval::with(approver)),
    )?;
    let registry = root::build(builder)?;
    let session = match &args.state {
        Some(dir) => registry
            .durable_session(dir, super::serve::STATE_KEY)
            .map_err(|e| Failure(format!("--state: {e}")))?,
        None => registry.session(),
    };
    // Actions a previous process left that could not be kept: said here, since a replay
    // delivers no reminders (a turn delivers them to the model).
    if args.dialect.is_none() {
        for lost in session.take_reminders() {
            eprintln!("xcsh session: {lost}");
        }
    }
    let input = script.input;
    let runtime = runtime()?;
    // JSON lines carry no escape codes (serde writes a control character as `\u001b`), so
    // only `--pretty` output goes through the stream that strips styles from a pipe: passing
    // a wide preview's megabytes through that filter byte by byte costs as much as its diff,
    // and it dropped the one character serde writes as is that it strips (DEL) from the text.
    let stdout = io::stdout();
    let choice = if args.pretty {
        anstream::AutoStream::choice(&stdout)
    } else {
        anstream::ColorChoice::AlwaysAnsi
    };
    let mut out = anstream::AutoStream::new(stdout.lock(), choice);
    let write_failed = |e: io::Error| Failure(format!("cannot write to stdout: {e}"));

    let mut malformed = 0usize;
    if let Some(dialect) = args.dialect {
        malformed = turns(&runtime, &session, dialect, input, &mut out)?;
    } else {
        for (index, line) in input.lines().enumerate() {
            let number = index + 1;
            let call = match line {
                Ok(line) if skipped(&line) => continue,
                Ok(line) => serde_json::from_str::<Call>(&line).map_err(|e| malformed_json(&e)),
                Err(e) => Err(format!("cannot read the line: {e}")),
            };
            let call = match call {
                Ok(call) => call,
                Err(problem) => {
                    malformed += 1;
                    eprintln!("xcsh session: line {number}: {problem}");
                    report_malformed(&mut out, args.pretty, number, &problem)
                        .map_err(write_failed)?;
                    continue;
                }
            };
            let result =
                runtime.block_on(session.call(&call.tool, call.args.unwrap_or(Value::Null)));
            // The reminders are for an agent loop; a replay has none to deliver them to.
            session.take_reminders();
            if args.pretty {
                pretty(&mut out, &session, number, &call.tool, &result)
            } else {
                json_line(
                    &mut out,
                    &CallLine {
                        line: number,
                        tool: &call.tool,
                        result: &result,
                    },
                )
            }
            .map_err(write_failed)?;
        }
    }

    let left = session.pending().snapshot();
    if let (Some(dir), false) = (&args.state, left.is_empty()) {
        eprintln!(
            "xcsh session: {} pending action(s) kept in `{}`; resolve them with a later `xcsh session --state` (or `xcsh serve --state`) on the same directory.",
            left.len(),
            dir.display()
        );
    } else if !left.is_empty() {
        let labels: Vec<&str> = left.iter().map(|s| s.label.as_str()).collect();
        eprintln!(
            "xcsh session: {} pending action(s) were never resolved and were dropped, nothing written: {}. End the script with a `resolve` call to apply them.",
            left.len(),
            labels.join("; ")
        );
    }
    // The kept files and trees (up to the budget: hundreds of MiB after a broad preview) go
    // with the process, not entry by entry (0.1 s): this clone is never dropped, so neither
    // is what the session's own clones shared.
    std::mem::forget(cache);
    if malformed > 0 {
        eprintln!("xcsh session: {malformed} malformed line(s) skipped; the other calls ran.");
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the lines come from. A script in a regular file (of tool calls, not `--dialect`
/// responses) is read whole before the first call runs, so what its calls write, to the
/// script or elsewhere, does not change the lines it runs; a pipe or a FIFO is read line by
/// line, since its writer may wait for each answer.
struct Script {
    input: Box<dyn BufRead>,
    /// The script was read ahead, and at most one of its lines calls `ast_grep` or
    /// `ast_edit` (a line that does not say which tool it calls counts as one).
    one_parsing_call: bool,
}

/// Just the tool a line calls (its `args` skipped unread).
#[derive(Deserialize)]
struct ToolOf {
    tool: String,
}

impl Script {
    fn open(file: Option<&Path>, dialect: bool) -> Result<Script, Failure> {
        let Some(path) = file else {
            return Ok(Script {
                input: Box::new(io::stdin().lock()),
                one_parsing_call: false,
            });
        };
        let cannot = |e: io::Error| {
            Failure(format!(
                "cannot open the script `{}`: {e}; pass a JSONL file, or pipe the script on stdin",
                path.display()
            ))
        };
        let line_by_line = |file: File| Script {
            input: Box::new(BufReader::new(file)),
            one_parsing_call: false,
        };
        let mut file = File::open(path).map_err(cannot)?;
        let kind = file.metadata().map_err(cannot)?.file_type();
        if kind.is_dir() {
            return Err(Failure(format!(
                "the script `{}` is a directory; pass a JSONL file of tool calls, or pipe the script on stdin",
                path.display()
            )));
        }
        if dialect || !kind.is_file() {
            return Ok(line_by_line(file));
        }
        let mut text = String::new();
        if io::Read::read_to_string(&mut file, &mut text).is_err() {
            // Not UTF-8: read line by line after all, each bad line reported as it comes.
            return Ok(line_by_line(File::open(path).map_err(cannot)?));
        }
        let one_parsing_call = text
            .lines()
            .filter(|line| !skipped(line))
            .filter(|line| {
                serde_json::from_str::<ToolOf>(line).map_or(true, |call| {
                    [AST_GREP, AST_EDIT].contains(&call.tool.as_str())
                })
            })
            .nth(1)
            .is_none();
        Ok(Script {
            input: Box::new(io::Cursor::new(text)),
            one_parsing_call,
        })
    }
}

/// `--dialect`: each line a provider response, each answered with one line
/// `{"messages": [...], "tool_choice": ...}`; a line that is not JSON, or not a response of
/// that dialect, with `{"line": N, "error": …}`. Returns how many lines were refused.
fn turns(
    runtime: &tokio::runtime::Runtime,
    session: &Session,
    dialect: Dialect,
    input: Box<dyn BufRead>,
    out: &mut impl Write,
) -> Result<usize, Failure> {
    let write_failed = |e: io::Error| Failure(format!("cannot write to stdout: {e}"));
    let mut refused = 0usize;
    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let turn = match line {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => match serde_json::from_str::<Value>(&line) {
                Ok(response) => runtime
                    .block_on(session.turn(dialect, &response))
                    .map_err(|e| e.to_string()),
                Err(e) => Err(format!(
                    "{} (column {}); expected one {dialect} response per line, as its API returns it",
                    e.to_string()
                        .rsplit_once(" at line ")
                        .map_or(e.to_string(), |(m, _)| m.to_owned()),
                    e.column()
                )),
            },
            Err(e) => Err(format!("cannot read the line: {e}")),
        };
        let line = match turn {
            Ok(turn) => json!({"messages": turn.messages, "tool_choice": turn.tool_choice}),
            Err(problem) => {
                refused += 1;
                eprintln!("xcsh session: line {number}: {problem}");
                json!({"line": number, "error": problem})
            }
        };
        json_line(out, &line).map_err(write_failed)?;
    }
    Ok(refused)
}

/// What is wrong with a line: serde's message, located by column (its "line 1" would mislead:
/// the script's line number is reported beside it).
fn malformed_json(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(m, _)| m);
    format!("{message} (column {}); {LINE_SHAPE}", error.column())
}

/// Blank lines and `#` comments.
fn skipped(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

fn json_line(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    // Serialised whole, then written once: a wide preview's line runs to megabytes, which
    // written piece by piece through the line-buffered standard output would be thousands of
    // system calls.
    let mut line = serde_json::to_vec(value).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    // A consumer reading a pipe sees each result as soon as its call is done.
    out.flush()
}

fn report_malformed(
    out: &mut impl Write,
    pretty: bool,
    number: usize,
    problem: &str,
) -> io::Result<()> {
    if pretty {
        style::heading(out, &format!("line {number}"))?;
        style::line(out, style::ERROR, &format!("malformed line: {problem}"))
    } else {
        json_line(out, &json!({"line": number, "error": problem}))
    }
}

/// A call for a person: the result's text (diffs coloured), a resolve as `Accept: …` /
/// `Discard: …`, and what is still pending.
fn pretty(
    out: &mut impl Write,
    session: &Session,
    number: usize,
    tool: &str,
    result: &AgentToolResult,
) -> io::Result<()> {
    style::heading(out, &format!("line {number} · {tool}"))?;
    if tool == RESOLVE_TOOL_NAME
        && !result.is_error()
        && let Some(view) = resolution(result)
    {
        writeln!(out, "{}", view.to_ansi())?;
    }
    let text = result.text_content();
    if result.is_error() {
        style::line(out, style::ERROR, &format!("error: {text}"))?;
    } else {
        style::text_with_diffs(out, &text)?;
    }
    let stack = session.pending().snapshot();
    if let Some(top) = stack.first() {
        style::line(
            out,
            style::DIM,
            &format!("pending: {} (top: {})", stack.len(), top.label),
        )?;
    }
    out.flush()
}

/// The `Accept: …` / `Discard: …` view of a resolve result, from its details.
fn resolution(result: &AgentToolResult) -> Option<ResolutionView<'_>> {
    let details = result.details.as_ref()?;
    let action = match details.get("action")?.as_str()? {
        "apply" => ResolveAction::Apply,
        "discard" => ResolveAction::Discard,
        _ => return None,
    };
    let label = details.get("label")?.as_str()?;
    let reason = details.get("reason").and_then(Value::as_str).unwrap_or("");
    Some(ResolutionView::new(action, label, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_parsing_call(text: impl AsRef<[u8]>) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.jsonl");
        std::fs::write(&path, text).unwrap();
        Script::open(Some(&path), false).unwrap().one_parsing_call
    }

    #[test]
    fn a_script_in_a_file_is_known_ahead_by_its_parsing_calls() {
        let one = concat!(
            "# one preview, then apply\n",
            r#"{"tool": "ast_edit", "args": {"ops": [{"pat": "a", "out": "b"}]}}"#,
            "\n\n",
            r#"{"tool": "resolve", "args": {"action": "apply"}}"#,
            "\n",
        );
        assert!(one_parsing_call(one));
        let two = format!(
            "{one}{}\n",
            r#"{"tool": "ast_grep", "args": {"pattern": "a"}}"#
        );
        assert!(!one_parsing_call(two));
        // A line that does not say which tool it calls may be any: counted as parsing.
        assert!(!one_parsing_call(format!("{one}not json\n")));
        // Not UTF-8: read line by line, each bad line reported as it comes.
        assert!(!one_parsing_call(b"{\"tool\": \"undo\"}\n\xff\n"));
    }

    #[test]
    fn a_script_not_read_ahead_is_not_known() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("responses.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        // Provider responses are not tool calls.
        assert!(!Script::open(Some(&path), true).unwrap().one_parsing_call);
        // A FIFO's writer may wait for each answer: it is read line by line.
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
            let writer = std::thread::spawn({
                let fifo = fifo.clone();
                move || std::fs::write(fifo, "{}\n")
            });
            assert!(!Script::open(Some(&fifo), false).unwrap().one_parsing_call);
            let _ = writer.join();
        }
    }

    #[test]
    fn a_directory_is_not_a_script() {
        let dir = tempfile::tempdir().unwrap();
        let Err(Failure(message)) = Script::open(Some(dir.path()), false) else {
            panic!("a directory was taken for a script");
        };
        assert!(
            message.contains("is a directory; pass a JSONL file"),
            "{message}"
        );
    }
}
