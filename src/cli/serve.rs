//! `xcsh serve`: the built-in tools over MCP on stdin/stdout, or over Streamable HTTP.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use xcsh::mcp::{HttpOptions, McpServer, TlsIdentity};

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
    syntax: super::root::SyntaxGuardArgs,
    #[command(flatten)]
    cache: super::cache::CacheArgs,
    /// Keep pending stacks in this directory: a restarted server finds the previews its
    /// clients have not resolved yet, in order. Over stdio one stack (`session.stack`, shared
    /// with `xcsh session --state`); with --http one per MCP session, under its
    /// Mcp-Session-Id: a client that presents its old id after a restart is served again,
    /// stack included. An id never issued with this directory is refused and gets nothing.
    /// Clients on protocol 2026-07-28 (no sessions) keep their stacks here under the handles
    /// their previews returned, and get them back after a restart.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// With --http --state: when the server starts, forget the MCP sessions and handles
    /// unused for more than this many days whose stacks hold nothing (their ids then get 404,
    /// and the client starts a new session; a handle is then unknown). A stack with pending
    /// previews is never forgotten. 0 keeps every one.
    #[arg(
        long,
        value_name = "DAYS",
        default_value_t = 30,
        requires = "state",
        requires = "http"
    )]
    session_expiry_days: u64,
    #[command(flatten)]
    guard: HttpGuardArgs,
}

/// Who may use `serve --http`, and how much (docs/HTTP.md).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "HTTP exposure (with --http)")]
struct HttpGuardArgs {
    /// Require `Authorization: Bearer <token>` on every HTTP request, the token being this
    /// file's content (trimmed, at least 16 characters; make one with
    /// `head -c 32 /dev/urandom | base64 > token`). Needed to bind an address other than
    /// loopback.
    #[arg(long, value_name = "FILE", requires = "http")]
    auth_token_file: Option<PathBuf>,
    /// Also accept requests from web pages of this origin (`https://app.example.com`,
    /// `http://host:8080`, `https://host:*` for any port, or `null`); repeatable. Loopback
    /// origins are always accepted, requests without `Origin` (clients that are not
    /// browsers) too; any other origin gets 403.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Also answer requests for this host name (`mcp.example.com`, or `name:port`; `*` for
    /// any); repeatable. `localhost` and IP addresses are always answered; another name gets
    /// 403 (against DNS rebinding). Give the name clients or a reverse proxy use.
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
    /// The largest request body accepted, in bytes; a larger one gets 413.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = xcsh::mcp::DEFAULT_MAX_BODY_BYTES,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        requires = "http"
    )]
    max_body_bytes: usize,
    /// How many MCP sessions (of the `initialize` lifecycle) may be live at once; a new
    /// `initialize` beyond it gets 503. Clients on protocol 2026-07-28 have no session and
    /// are not counted.
    #[arg(long, value_name = "N", default_value_t = xcsh::mcp::DEFAULT_MAX_SESSIONS, requires = "http")]
    max_sessions: usize,
    /// How many pending stacks named by handles (protocol 2026-07-28, which has no sessions)
    /// are held at once; beyond it the least recently used empty one is let go, and when all
    /// hold previews a new conversation's preview is refused, saying how to make room.
    #[arg(long, value_name = "N", default_value_t = xcsh::mcp::DEFAULT_MAX_HANDLES, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), requires = "http")]
    max_handles: usize,
    /// Serve HTTPS with this certificate chain (PEM, the server's certificate first); with
    /// --tls-key.
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_cert"])]
    tls_key: Option<PathBuf>,
}

impl HttpGuardArgs {
    /// The options, every file read and checked: a bad token, origin, host or certificate
    /// stops the command before anything listens.
    fn options(&self) -> Result<HttpOptions, Failure> {
        let mut options = HttpOptions::new()
            .max_body_bytes(self.max_body_bytes)
            .max_sessions(self.max_sessions);
        if let Some(file) = &self.auth_token_file {
            options = options
                .auth_token_file(file)
                .map_err(|e| Failure(format!("--auth-token-file: {e}")))?;
        }
        for origin in &self.allow_origin {
            options = options
                .allow_origin(origin)
                .map_err(|e| Failure(format!("--allow-origin: {e}")))?;
        }
        for host in &self.allow_host {
            options = options
                .allow_host(host)
                .map_err(|e| Failure(format!("--allow-host: {e}")))?;
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            let identity = TlsIdentity::from_pem_files(cert, key)
                .map_err(|e| Failure(format!("--tls-cert/--tls-key: {e}")))?;
            options = options.tls(identity);
        }
        Ok(options)
    }
}

/// A token file others can read is a token others can use: said, not refused (a container's
/// secret mount may not let the server change it).
fn warn_if_readable_by_others(file: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(file)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(
                "--auth-token-file {}: other users can read it; `chmod 600 {}`",
                file.display(),
                file.display()
            );
        }
    }
}

/// The key of the stack `serve` and `session` keep under `--state`: one conversation per
/// state directory, so either command can resolve what the other previewed.
pub(crate) const STATE_KEY: &str = "session";

pub(crate) fn run(args: Args) -> Result<ExitCode, Failure> {
    // First: a bad token file, or an exposed address without a token, stops the command
    // before anything is built or listens.
    let http = match args.http {
        Some(addr) => {
            let options = args.guard.options()?;
            options
                .check_exposure(addr)
                .map_err(|e| Failure(e.to_string()))?;
            Some((addr, options))
        }
        None => None,
    };
    let root = root::workspace_root(args.root.as_deref())?;
    // Under `human` (or a rule that says ask) each connection asks its client's user by MCP
    // elicitation; a client without that capability gets a `resolve` that refuses to apply,
    // saying how to proceed.
    let registry = root::build(
        args.approval.configure(
            root::builtin_builder(&root, args.undo.limits(), args.syntax.syntax_guard)
                .extension(args.cache.cache()),
            None,
        )?,
    )?;
    if args.approval.may_ask() {
        eprintln!(
            "xcsh serve: --approval {}: a change that needs a person's approval is asked of the client's user by MCP elicitation; a client without that capability gets a refusal, and the change stays pending",
            args.approval.policy_text()
        );
    }
    if let Some((addr, options)) = http {
        let expiry = (args.session_expiry_days > 0).then(|| {
            std::time::Duration::from_secs(args.session_expiry_days.saturating_mul(86_400))
        });
        let shown = Shown {
            tls: options.is_tls(),
            token_file: args.guard.auth_token_file.clone(),
        };
        let server = McpServer::new(registry)
            .with_session_expiry(expiry)
            .with_max_handles(args.guard.max_handles)
            .with_http_options(options);
        return serve_http(server, addr, &root, args.state.as_deref(), shown);
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

/// What the line that gives the URL says about the server's options.
struct Shown {
    tls: bool,
    token_file: Option<PathBuf>,
}

fn serve_http(
    server: McpServer,
    addr: std::net::SocketAddr,
    root: &std::path::Path,
    state: Option<&std::path::Path>,
    Shown { tls, token_file }: Shown,
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
        let scheme = if tls { "https" } else { "http" };
        let token = if token_file.is_some() {
            "; every request needs its bearer token"
        } else {
            ""
        };
        eprintln!(
            "xcsh serve: MCP over Streamable HTTP at {scheme}://{bound}/mcp for {}{kept}{token}",
            root.display()
        );
        // After the line that gives the URL, which clients read first.
        if let Some(file) = &token_file {
            warn_if_readable_by_others(file);
        }
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
