//! `notifications/tools/list_changed` when the pending stack changes: `resolve`'s
//! description lists the stack, so a client that re-lists sees what is waiting.
//!
//! A burst of events (a failed apply pops and restores at once) becomes one notification.

use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};
use tokio::task::AbortHandle;
use xcsh_core::PendingEvent;

/// Waits for the next change and swallows the ones already queued behind it. `false` when
/// the stack is gone (its session was dropped).
async fn next_change(events: &mut broadcast::Receiver<PendingEvent>) -> bool {
    match events.recv().await {
        // A lagged receiver missed events: the stack changed all the same.
        Ok(_) | Err(RecvError::Lagged(_)) => {}
        Err(RecvError::Closed) => return false,
    }
    loop {
        match events.try_recv() {
            Ok(_) | Err(TryRecvError::Lagged(_)) => {}
            Err(TryRecvError::Empty) => return true,
            Err(TryRecvError::Closed) => return false,
        }
    }
}

/// The `initialize` lifecycle: tells the client directly, until it is gone.
pub(crate) fn forward_to_peer(
    peer: Peer<RoleServer>,
    mut events: broadcast::Receiver<PendingEvent>,
) -> AbortHandle {
    tokio::spawn(async move {
        while next_change(&mut events).await {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "tools/list_changed not sent; the client is gone");
                break;
            }
        }
    })
    .abort_handle()
}

/// The 2026-07-28 lifecycle: tells one `subscriptions/listen` subscriber, until it cancels.
pub(crate) async fn serve_subscription(
    context: SubscriptionContext,
    mut events: broadcast::Receiver<PendingEvent>,
) {
    loop {
        tokio::select! {
            () = context.cancelled() => return,
            changed = next_change(&mut events) => {
                if !changed {
                    return;
                }
                if let Err(error) = context.sink().notify_tool_list_changed().await {
                    tracing::debug!(%error, "tools/list_changed not sent to the subscriber");
                    return;
                }
            }
        }
    }
}
