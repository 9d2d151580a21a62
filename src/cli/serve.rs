//! `xcsh serve`: the built-in tools over MCP on stdin/stdout, or over Streamable HTTP.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use xcsh::mcp::McpServer;

use super::{Failure, approval, root, runtime};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The directory the tools work in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Serve MCP over Streamable HTTP on this address (e.g. 127.0.0.1:8931; port 0 picks
    /// one) instead of stdio: many clients at once, each MCP session with its own pending
    /// stack. The address is printed on stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    approval: approval::ApprovalArgs,
    #[command(flatten)]
    undo: super::undo::UndoArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    /// Keep pending stacks in this directory: a restarted server finds the previews its
    /// clients have not resolved yet, in order. Over stdio one stack (`session.stack`, shared
    /// with `xcsh session --state`); with --http one per MCP session, under its
    /// Mcp-Session-Id: a client that presents its old id after a restart is served again,
    /// stack included. An id never issued with this directory is refused and gets nothing;
    /// HTTP requests that negotiate protocol 2026-07-28 per request have no session and keep
    /// nothing.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// With --http --state: when the server starts, forget the MCP sessions unused for more
    /// than this many days whose stacks hold nothing (their ids then get 404, and the client
    /// starts a new session). A session with pending previews is never forgotten. 0 keeps
    /// every session.
    #[arg(
        long,
        value_name = "DAYS",
        default_value_t = 30,
        requires = "state",
        requires = "http"
    )]
    session_expiry_days: u64,
}

/// The key of the stack `serve` and `session` keep under `--state`: one conversation per
/// state directory, so either command can resolve what the other previewed.
pub(crate) const STATE_KEY: &str = "session";

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    let root = root::workspace_root(args.root.as_deref())?;
    // Under `human` (or a rule that says ask) each connection asks its client's user by MCP
    // elicitation; a client without that capability gets a `resolve` that refuses to apply,
    // saying how to proceed.
    let registry = root::build(args.approval.configure(
        root::builtin_builder(&root, args.undo.limits()).extension(args.cache.cache()),
        None,
    )?)?;
    if args.approval.may_ask() {
        eprintln!(
            "xcsh serve: --approval {}: a change that needs a person's approval is asked of the client's user by MCP elicitation; a client without that capability gets a refusal, and the change stays pending",
            args.approval.policy_text()
        );
    }
    if let Some(addr) = args.http {
        let expiry = (args.session_expiry_days > 0).then(|| {
            std::time::Duration::from_secs(args.session_expiry_days.saturating_mul(86_400))
        });
        let server = McpServer::new(registry).with_session_expiry(expiry);
        return serve_http(server, addr, &root, args.state.as_deref());
    }
    if std::io::stdin().is_terminal() {
        eprintln!(
            "xcsh serve: speaking MCP on stdin/stdout for {}; start it from an MCP client (Ctrl-D to quit)",
            root.display()
        );
    }
    tracing::info!(root = %root.display(), "serving MCP on stdio");

    let server = match &args.state {
        Some(dir) => McpServer::with_session(
            registry
                .durable_session(dir, STATE_KEY)
                .map_err(|e| Failure(format!("--state: {e}")))?,
        ),
        None => McpServer::new(registry),
    };
    let runtime = runtime()?;
    let outcome = runtime.block_on(server.serve_stdio());
    // A read of a blocking stdin cannot be cancelled; don't let it hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome.map_err(|e| Failure(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

fn serve_http(
    server: McpServer,
    addr: std::net::SocketAddr,
    root: &std::path::Path,
    state: Option<&std::path::Path>,
) -> Result<ExitCode, Failure> {
    if let Some(dir) = state {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure(format!("--state {}: cannot create it: {e}", dir.display())))?;
    }
    let runtime = runtime()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            Failure(format!(
                "--http {addr}: cannot listen there: {e}; pick a free port (0 picks one)"
            ))
        })?;
        let bound = listener
            .local_addr()
            .map_err(|e| Failure(format!("--http {addr}: {e}")))?;
        let kept = state.map_or_else(String::new, |dir| {
            format!("; pending stacks kept in {}", dir.display())
        });
        eprintln!(
            "xcsh serve: MCP over Streamable HTTP at http://{bound}/mcp for {}{kept}",
            root.display()
        );
        tracing::info!(%bound, root = %root.display(), "serving MCP over HTTP");
        let shutdown = tokio_util::sync::CancellationToken::new();
        let served = match state {
            Some(dir) => {
                tracing::info!(state = %dir.display(), "keeping each MCP session's pending stack");
                server.serve_http_with_state(listener, dir, shutdown).await
            }
            None => server.serve_http(listener, shutdown).await,
        };
        served.map_err(|e| Failure(format!("serving HTTP on {bound} failed: {e}")))
    })?;
    Ok(ExitCode::SUCCESS)
}
