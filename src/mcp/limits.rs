//! A cap on live MCP sessions of the `initialize` lifecycle: [`SessionLimit`] wraps any of
//! rmcp's session managers (the in-memory one, or `--state`'s) and refuses a new session, or a
//! restored one, while the cap is reached.
//!
//! rmcp answers a session manager's error with `500` and the error's text; the HTTP layer
//! turns a refusal of this module (found by [`REFUSAL`] in that text) into a `503` that says
//! what happened (`http::explain_refusal`).

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// How a refusal of this module begins; the HTTP layer looks for it.
pub(crate) const REFUSAL: &str = "Service Unavailable: this server already serves";

/// The text of a refusal at `max` live sessions.
fn refusal(max: usize) -> String {
    format!(
        "{REFUSAL} {max} live MCP session(s), its limit (`--max-sessions`, `HttpOptions::max_sessions`). No session was started and nothing was done. End a session you no longer use (DELETE with its Mcp-Session-Id; an unused one ends by itself after 5 minutes) and try again, or ask whoever runs the server to raise the limit"
    )
}

/// The sessions counted: those live in the inner manager, and those being made.
#[derive(Debug, Default)]
struct Count {
    live: HashSet<SessionId>,
    starting: usize,
}

/// A session manager that lets at most `max` sessions live at once.
#[derive(Debug)]
pub(crate) struct SessionLimit<M> {
    inner: M,
    max: usize,
    count: Mutex<Count>,
}

impl<M> SessionLimit<M> {
    pub(crate) fn new(inner: M, max: usize) -> Self {
        SessionLimit {
            inner,
            max,
            count: Mutex::new(Count::default()),
        }
    }

    fn count(&self) -> std::sync::MutexGuard<'_, Count> {
        self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place for a session about to be made, or refuses.
    fn reserve(&self) -> io::Result<Reservation<'_, M>> {
        let mut count = self.count();
        if count.live.len() + count.starting >= self.max {
            tracing::warn!(
                max = self.max,
                "refused a new MCP session: the live-session limit is reached"
            );
            return Err(io::Error::other(refusal(self.max)));
        }
        count.starting += 1;
        Ok(Reservation {
            limit: self,
            id: None,
        })
    }
}

/// A place taken by [`SessionLimit::reserve`]: it becomes a live session with
/// [`keep`](Self::keep), or is given back when dropped (the session could not be made, or the
/// request was abandoned half-way).
struct Reservation<'a, M> {
    limit: &'a SessionLimit<M>,
    id: Option<SessionId>,
}

impl<M> Reservation<'_, M> {
    fn keep(mut self, id: SessionId) {
        self.id = Some(id);
    }
}

impl<M> Drop for Reservation<'_, M> {
    fn drop(&mut self) {
        let mut count = self.limit.count();
        count.starting -= 1;
        if let Some(id) = self.id.take() {
            count.live.insert(id);
        }
    }
}

fn other<E: std::fmt::Display>(error: E) -> io::Error {
    io::Error::other(error.to_string())
}

impl<M: SessionManager> SessionManager for SessionLimit<M> {
    type Error = io::Error;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let reservation = self.reserve()?;
        let (id, transport) = self.inner.create_session().await.map_err(other)?;
        reservation.keep(id.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner
            .initialize_session(id, message)
            .await
            .map_err(other)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await.map_err(other)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // rmcp closes a session twice when a DELETE ends it (the DELETE, then its worker):
        // counted once either way.
        self.count().live.remove(id);
        self.inner.close_session(id).await.map_err(other)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await.map_err(other)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await.map_err(other)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await.map_err(other)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await.map_err(other)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let reservation = self.reserve()?;
        let outcome = self
            .inner
            .restore_session(id.clone())
            .await
            .map_err(other)?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            reservation.keep(id);
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

    use super::*;

    #[tokio::test]
    async fn a_closed_session_frees_its_place_once() {
        let limit = SessionLimit::new(LocalSessionManager::default(), 2);
        let (first, _t1) = limit.create_session().await.expect("first");
        let (_second, _t2) = limit.create_session().await.expect("second");
        let refused = limit.create_session().await.map(|_| ()).unwrap_err();
        assert!(refused.to_string().starts_with(REFUSAL), "{refused}");
        assert!(
            refused.to_string().contains("2 live MCP session(s)"),
            "{refused}"
        );
        limit.close_session(&first).await.expect("close");
        limit.close_session(&first).await.expect("closed again");
        let (_third, _t3) = limit.create_session().await.expect("a place again");
        assert!(limit.create_session().await.is_err(), "one place, not two");
    }

    #[tokio::test]
    async fn no_place_means_no_session_at_all() {
        let limit = SessionLimit::new(LocalSessionManager::default(), 0);
        assert!(limit.create_session().await.is_err());
        assert!(limit.inner.sessions.read().await.is_empty());
    }
}
