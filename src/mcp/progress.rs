//! `notifications/progress` for a call whose request carried a progress token.
//!
//! Tools report progress from any thread (the ast tools from the engine's blocking workers),
//! so the sink only queues; one task per call sends in order, and when several reports queued
//! up while a send was in flight it sends only the latest (a client wants the current state,
//! not a backlog). [`Forwarder::finish`] flushes before the call answers and stops the rest:
//! the protocol forbids progress after the response.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use xcsh_core::{Progress, ProgressSink};

/// The running forwarder of one call.
pub(crate) struct Forwarder {
    closed: Arc<AtomicBool>,
    done: CancellationToken,
    task: JoinHandle<()>,
}

/// A sink for the call's `CallOptions::progress`, and the task sending what it receives.
pub(crate) fn forward(peer: Peer<RoleServer>, token: ProgressToken) -> (ProgressSink, Forwarder) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let closed = Arc::new(AtomicBool::new(false));
    let done = CancellationToken::new();

    let sink: ProgressSink = {
        let closed = Arc::clone(&closed);
        Arc::new(move |progress| {
            if !closed.load(Ordering::Acquire) {
                // The receiver is gone only once the call has answered: nothing to tell.
                let _ = tx.send(progress);
            }
        })
    };

    let task = {
        let done = done.clone();
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    biased;
                    next = rx.recv() => next,
                    () = done.cancelled() => rx.try_recv().ok(),
                };
                let Some(mut latest) = next else { break };
                while let Ok(newer) = rx.try_recv() {
                    latest = newer;
                }
                let mut param = ProgressNotificationParam::new(token.clone(), latest.progress);
                param.total = latest.total;
                param.message = latest.message;
                if let Err(error) = peer.notify_progress(param).await {
                    tracing::debug!(%error, "progress notification not sent; stopping");
                    break;
                }
                if done.is_cancelled() && rx.is_empty() {
                    break;
                }
            }
        })
    };

    (sink, Forwarder { closed, done, task })
}

impl Forwarder {
    /// Sends what is queued, then stops: later reports (from a tool still winding down after
    /// a cancellation, say) are dropped.
    pub(crate) async fn finish(self) {
        self.closed.store(true, Ordering::Release);
        self.done.cancel();
        if let Err(error) = self.task.await {
            tracing::debug!(%error, "progress forwarder ended abnormally");
        }
    }
}
