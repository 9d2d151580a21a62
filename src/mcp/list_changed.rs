//! `notifications/tools/list_changed` when the pending stack changes: `resolve`'s
//! description lists the stack, so a client that re-lists sees what is waiting.
//!
//! A burst of changes (a failed apply pops and restores at once) becomes one notification.
//! The server watches the stack's count of changes ([`PendingActionStore::changes`]), not its
//! events, which would copy each preview's details only to be dropped here.
//!
//! [`PendingActionStore::changes`]: xcsh_core::PendingActionStore::changes

use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// Waits for the next change (the ones made since the last wait count as one). `false` when
/// the stack is gone (its session was dropped).
async fn next_change(changes: &mut watch::Receiver<u64>) -> bool {
    changes.changed().await.is_ok()
}

/// The `initialize` lifecycle: tells the client directly, until it is gone.
pub(crate) fn forward_to_peer(
    peer: Peer<RoleServer>,
    mut changes: watch::Receiver<u64>,
) -> AbortHandle {
    tokio::spawn(async move {
        while next_change(&mut changes).await {
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
    mut changes: watch::Receiver<u64>,
) {
    loop {
        tokio::select! {
            () = context.cancelled() => return,
            changed = next_change(&mut changes) => {
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
