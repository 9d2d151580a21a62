//! MCP over Streamable HTTP: one server process, many clients at once.
//!
//! Over stdio a process is one connection and so one session. Over HTTP, rmcp's
//! [`StreamableHttpService`] tells MCP sessions apart by their `Mcp-Session-Id`, and makes a
//! handler for each one from a factory; the factory here is [`McpServer::connection`], so
//! every MCP session (every `initialize`) gets a [`Session`](xcsh_core::Session) and a pending
//! stack of its own, and `resolve` applies only what that session previewed.
//!
//! Sessions exist on the `initialize` lifecycle (protocol versions before 2026-07-28). A
//! request that negotiates 2026-07-28 per request is served statelessly by rmcp, with a fresh
//! handler each time: it can preview, but its pending action is gone with the request, so
//! `resolve` in a later request finds nothing to apply (and never another client's action).
//!
//! Only loopback `Host` headers are accepted (rmcp's default, against DNS rebinding).

use std::io;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServer;

impl McpServer {
    /// Serves MCP over Streamable HTTP on `listener` (any path) until `shutdown` is cancelled,
    /// with a new session — its own pending stack — for each MCP session.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// use xcsh::mcp::McpServer;
    /// let registry = xcsh::Session::builder()
    ///     .suite(xcsh::tools::builtin_suite())
    ///     .build_registry()
    ///     .unwrap();
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
    /// let shutdown = tokio_util::sync::CancellationToken::new();
    /// McpServer::new(registry).serve_http(listener, shutdown).await
    /// # }
    /// ```
    pub async fn serve_http(
        self,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> io::Result<()> {
        let template = Arc::new(self);
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
        let service = StreamableHttpService::new(
            move || Ok(template.connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        loop {
            let (stream, peer) = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors, a connection reset before accept: the
                        // listener itself is fine; keep serving the others.
                        tracing::warn!(%error, "accepting an HTTP connection failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                if let Err(error) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%peer, %error, "HTTP connection ended with an error");
                }
            });
        }
    }
}
