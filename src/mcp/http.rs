//! MCP over Streamable HTTP: one server process, many clients at once.
//!
//! Over stdio a process is one connection and so one session. Over HTTP, rmcp's
//! [`StreamableHttpService`] tells MCP sessions apart by their `Mcp-Session-Id`, and makes a
//! handler for each one from a factory; the factory here is [`McpServer::connection`], so
//! every MCP session (every `initialize`) gets a [`Session`](xcsh_core::Session) and a pending
//! stack of its own, and `resolve` applies only what that session previewed.
//!
//! Sessions exist on the `initialize` lifecycle (protocol versions before 2026-07-28). A
//! request that negotiates 2026-07-28 is served statelessly by rmcp, with a fresh handler each
//! time; its pending stack is the one its `handle` argument names (see `handles`): a call that
//! may push without one gets a new stack and handle, which the result gives the model.
//!
//! With a state directory ([`McpServer::serve_http_with_state`], `xcsh serve --http ADDR
//! --state DIR`) each MCP session's pending stack is kept on disk under its `Mcp-Session-Id`,
//! and a restarted server serves a client that presents its old id again, with the same
//! stack (see `http_state`); so is each handle's stack, under the handle.
//!
//! Every request first passes the checks of [`HttpOptions`] (set with
//! [`McpServer::with_http_options`]; see `http_guard`): its `Host` (`localhost`, an IP address,
//! or a name allowed), its `Origin` when it has one (loopback, or allowed), its bearer token
//! when one is set, and its body size; `initialize` sessions are capped (`limits`). A
//! listener other machines can reach is refused without a token, and with a
//! [`TlsIdentity`](super::TlsIdentity) the server speaks HTTPS. `docs/HTTP.md` says how to
//! expose a server safely.

use std::convert::Infallible;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::http_guard::{Form, Guard, Refusal};
use super::http_options::HttpOptions;
use super::http_state::{HttpConnection, SessionRecords, StateSessionManager, valid_session_id};
use super::limits::{self, SessionLimit};

pub(crate) type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

impl McpServer {
    /// Serves MCP over Streamable HTTP on `listener` (any path) until `shutdown` is cancelled,
    /// with a new session — its own pending stack — for each MCP session.
    ///
    /// Requests are checked as [`with_http_options`](Self::with_http_options) says (by
    /// default: loopback origins, 4 MiB bodies, 256 live sessions, no token). A `listener`
    /// on an address other machines can reach is refused with
    /// [`io::ErrorKind::PermissionDenied`] unless a token is set.
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
        self.use_handles(None);
        let options = self.http.clone();
        let template = Arc::new(self);
        let config = rmcp_config(&options, shutdown.child_token());
        let service = StreamableHttpService::new(
            move || Ok(template.connection()),
            Arc::new(SessionLimit::new(
                LocalSessionManager::default(),
                options.max_sessions,
            )),
            config,
        );
        accept(listener, shutdown, options, move |request| {
            let service = service.clone();
            async move { service.handle(request).await }
        })
        .await
    }

    /// Like [`serve_http`](Self::serve_http), with each MCP session's pending stack kept in
    /// `state_dir` under its `Mcp-Session-Id`: a push is on disk before its preview is
    /// returned, and after a restart a client that presents its old session id is served
    /// again, with the same stack in the same order (rmcp replays the session's recorded
    /// `initialize`; the client does nothing special).
    ///
    /// `state_dir` holds, per session, `<id>.session` (the record that the id was issued
    /// here, with the client's `initialize` parameters), and while the session has a stack,
    /// `<id>.stack` and `<id>.lock`. An id that was never issued here is answered
    /// `404 Not Found` (an id that is not lowercase letters, digits and `-`: `400 Bad Request`), and no
    /// file is created for it. A session's stack files go when it ends with nothing pending;
    /// a DELETE removes its record too (a stack that still holds previews then stays, unused,
    /// for a person to look at). When the server starts, the records of sessions unused for
    /// longer than [`with_session_expiry`](Self::with_session_expiry) (30 days by default)
    /// whose stacks hold nothing are removed. Requests that negotiate 2026-07-28 have no
    /// session: their stacks, named by handles, are kept as `<handle>.stack` beside the
    /// record `<handle>.handle`, and expire the same way.
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
    /// McpServer::new(registry)
    ///     .serve_http_with_state(listener, std::path::Path::new(".xcsh-state"), shutdown)
    ///     .await
    /// # }
    /// ```
    pub async fn serve_http_with_state(
        self,
        listener: TcpListener,
        state_dir: &Path,
        shutdown: CancellationToken,
    ) -> io::Result<()> {
        // Before anything is written to the state directory.
        check_listener(&self.http, &listener)?;
        std::fs::create_dir_all(state_dir).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create the state directory `{}`: {e}",
                    state_dir.display()
                ),
            )
        })?;
        let records = Arc::new(SessionRecords::new(state_dir.to_path_buf()));
        self.use_handles(Some(state_dir.to_path_buf()));
        if let Some(max_idle) = self.session_expiry {
            // Before any session exists, so none of the records looked at is in use here.
            let sweeps = [
                ("MCP sessions", Some(Arc::clone(&records))),
                (
                    "pending-action handles",
                    self.handles().and_then(|h| h.records()).cloned(),
                ),
            ];
            for (what, sweep) in sweeps {
                let Some(sweep) = sweep else { continue };
                let expired = tokio::task::spawn_blocking(move || sweep.expire(max_idle))
                    .await
                    .map_err(io::Error::other)??;
                if expired > 0 {
                    tracing::info!(
                        expired,
                        "removed the records of {what} unused for longer than {:.1} day(s) with nothing pending",
                        max_idle.as_secs_f64() / 86_400.0
                    );
                }
            }
        }
        let options = self.http.clone();
        let template = Arc::new(self);
        let mut config = rmcp_config(&options, shutdown.child_token());
        config.session_store = Some(Arc::clone(&records) as _);
        let factory_records = Arc::clone(&records);
        let service = StreamableHttpService::new(
            move || {
                Ok(HttpConnection::new(
                    Arc::clone(&template),
                    Arc::clone(&factory_records),
                ))
            },
            Arc::new(SessionLimit::new(
                StateSessionManager::new(records),
                options.max_sessions,
            )),
            config,
        );
        accept(listener, shutdown, options, move |request| {
            let service = service.clone();
            async move {
                let id = match session_id(&request) {
                    Ok(id) => id,
                    Err(refusal) => return plain(StatusCode::BAD_REQUEST, refusal),
                };
                let response = service.handle(request).await;
                match id {
                    Some(id) if response.status() == StatusCode::NOT_FOUND => {
                        explain_not_found(response, &id).await
                    }
                    _ => response,
                }
            }
        })
        .await
    }
}

/// rmcp's configuration under `options`. Its own `Host` check is off: [`Guard`] checks
/// `Host` first, and also accepts IP addresses and the hosts given with `allow_host` (see
/// [`HttpOptions::allow_host`](super::HttpOptions::allow_host)); rmcp's only knows loopback
/// names, so it would refuse every remote client. Its body limit is the guard's, which has
/// already refused a larger body with a clearer answer.
fn rmcp_config(options: &HttpOptions, cancel: CancellationToken) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel)
        .disable_allowed_hosts()
        .with_max_request_body_bytes(options.max_body_bytes)
        // An answer with nothing before it (no progress) goes as plain JSON: clients cap one
        // SSE event (the Python SDK at 1 MiB), not a JSON body, and a whole preview read as a
        // resource can be larger.
        .with_json_response(true)
}

/// Refuses a listener that other machines can reach when no token is set.
fn check_listener(options: &HttpOptions, listener: &TcpListener) -> io::Result<()> {
    Ok(options.check_exposure(listener.local_addr()?)?)
}

/// How long a client has to finish the TLS handshake, and to send a request's headers.
#[cfg(feature = "tls")]
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Accepts connections on `listener` until `shutdown`, over TLS when `options` say so, and
/// answers each request that passes the [`Guard`] (its body read, within the limit) with
/// `handle`.
async fn accept<H, F>(
    listener: TcpListener,
    shutdown: CancellationToken,
    options: HttpOptions,
    handle: H,
) -> io::Result<()>
where
    H: Fn(Request<Full<Bytes>>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = HttpResponse> + Send + 'static,
{
    check_listener(&options, &listener)?;
    #[cfg(feature = "tls")]
    let tls = options.tls.as_ref().map(super::tls::TlsIdentity::acceptor);
    let guard = Arc::new(Guard::new(options));
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
        let handle = handle.clone();
        let guard = Arc::clone(&guard);
        let service = hyper::service::service_fn(move |request| {
            let answer = guarded(Arc::clone(&guard), request, handle.clone());
            async move { Ok::<_, Infallible>(answer.await) }
        });
        #[cfg(feature = "tls")]
        let tls = tls.clone();
        tokio::spawn(async move {
            #[cfg(feature = "tls")]
            if let Some(tls) = tls {
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                    Ok(Ok(stream)) => serve_connection(stream, peer, service).await,
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, %error, "TLS handshake failed");
                    }
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                }
                return;
            }
            serve_connection(stream, peer, service).await;
        });
    }
}

/// Serves HTTP/1.1 on one connection until it ends.
async fn serve_connection<I, S>(io: I, peer: std::net::SocketAddr, service: S)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<Request<Incoming>, Response = HttpResponse, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(io), service)
        .await;
    if let Err(error) = served {
        tracing::debug!(%peer, %error, "HTTP connection ended with an error");
    }
}

/// One request through the guard: refused with its answer, or its body read (within the
/// limit, however it is sent) and handed to `handle`.
async fn guarded<H, F>(guard: Arc<Guard>, request: Request<Incoming>, handle: H) -> HttpResponse
where
    H: Fn(Request<Full<Bytes>>) -> F,
    F: Future<Output = HttpResponse>,
{
    let form = Form::of(&request);
    if let Err(refusal) = guard.check(&request) {
        return refusal.into_response(form);
    }
    let (parts, body) = request.into_parts();
    let max = guard.max_body_bytes();
    let body = match Limited::new(body, max).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => {
            return Refusal::too_large(None, max).into_response(form);
        }
        Err(error) => {
            return Refusal::new(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: the request body could not be read: {error}"),
            )
            .into_response(form);
        }
    };
    let response = handle(Request::from_parts(parts, Full::new(body))).await;
    explain_refusal(response, form).await
}

/// rmcp's `500` for a session the [`SessionLimit`] refused, as the `503` it is, with the
/// limit's own text.
async fn explain_refusal(response: HttpResponse, form: Form) -> HttpResponse {
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let text = String::from_utf8_lossy(&bytes);
    match text.find(limits::REFUSAL) {
        Some(at) => {
            Refusal::new(StatusCode::SERVICE_UNAVAILABLE, text[at..].to_owned()).into_response(form)
        }
        None => Response::from_parts(parts, Full::new(bytes).boxed()),
    }
}

/// The request's `Mcp-Session-Id`, if any; one that cannot be a session id issued here (so
/// cannot name a file in the state directory) is refused (the error is the 400's text) before
/// anything reads it.
fn session_id<B>(request: &Request<B>) -> Result<Option<String>, String> {
    let Some(value) = request.headers().get("mcp-session-id") else {
        return Ok(None);
    };
    match value.to_str() {
        Ok(id) if valid_session_id(id) => Ok(Some(id.to_owned())),
        _ => {
            let shown: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(80)
                .collect();
            Err(format!(
                "Bad Request: `Mcp-Session-Id: {shown}` is not a session id this server issues (lowercase letters, digits and `-`, at most 64); send the id from the `initialize` answer, or initialize without one"
            ))
        }
    }
}

/// rmcp's 404 for an unknown session, with why: the id was never issued by this state
/// directory, or its session was deleted. The status stays 404, which tells a client to
/// start a new session.
async fn explain_not_found(response: HttpResponse, id: &str) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    if bytes.as_ref() != b"Not Found: Session not found" {
        return Response::from_parts(parts, Full::new(bytes).boxed());
    }
    let mut response = plain(
        StatusCode::NOT_FOUND,
        format!(
            "Not Found: MCP session `{id}` is not known to this server: it was never issued with this state directory, or it was ended (DELETE). Nothing was done; send `initialize` without a session id to start a new session"
        ),
    );
    for (name, value) in &parts.headers {
        if name != hyper::header::CONTENT_LENGTH {
            response.headers_mut().insert(name, value.clone());
        }
    }
    response
}

pub(crate) fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
