//! Pending stacks without protocol sessions: protocol 2026-07-28 over HTTP (SEP-2567).
//!
//! That revision has no `Mcp-Session-Id`: every request is served on its own. So a call that
//! may push a pending action, made without a handle, gets a stack named by a new **handle**
//! (`ph-` and 40 hex digits: 160 random bits, an unguessable capability), which the result
//! gives the model in its text and in `structuredContent.handle`. The model passes it back as
//! the `handle` argument of `resolve`, and of later edits so that one conversation keeps one
//! stack: LIFO, `resolve`'s texts and the reminders stay as with a session.
//!
//! * A handle this server did not mint, or that expired, is refused with
//!   [`ErrorKind::UnknownHandle`]: nothing is applied, no other stack is reached, and no file
//!   is created for it.
//! * A call that pushes nothing leaves nothing behind (its handle is never shown).
//! * At most `max` stacks are held in memory; beyond that the least recently used empty one
//!   is let go (it is served again, empty, when its handle comes back). When every one holds
//!   previews, a new conversation is refused, saying how to make room.
//! * With a state directory each handle's stack is durable (`DIR/<handle>.stack`, its record
//!   `DIR/<handle>.handle`): a restarted server serves it again, and records unused for
//!   longer than the session expiry go when the server starts, unless they hold previews.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use xcsh_core::{ErrorKind, Registry, Session, ToolError};

use super::http_state::{SessionRecords, valid_session_id};
use super::input_required::{hex, random_bytes};

/// The prefix of every handle.
const PREFIX: &str = "ph-";

/// How many let-go empty handles are remembered (to serve them again), at most.
const RETIRED: usize = 65_536;

/// The default number of stacks held in memory.
pub const DEFAULT_MAX_HANDLES: usize = 1024;

/// Whether `text` has the shape of a handle minted here.
fn well_formed(text: &str) -> bool {
    text.len() == PREFIX.len() + 40
        && text.starts_with(PREFIX)
        && text[PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && valid_session_id(text)
}

struct Live {
    session: Session,
    used: Instant,
}

#[derive(Default)]
struct Table {
    live: HashMap<String, Live>,
    /// Handles let go with an empty stack (memory only), oldest first.
    retired: VecDeque<(String, Instant)>,
}

/// The server's handle-named stacks.
pub(crate) struct Handles {
    registry: Arc<Registry>,
    records: Option<Arc<SessionRecords>>,
    table: Mutex<Table>,
    max: usize,
    expiry: Option<Duration>,
}

impl std::fmt::Debug for Handles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handles")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

fn unknown(handle: &str) -> ToolError {
    let shown: String = handle.chars().take(80).collect();
    ToolError::with_kind(
        ErrorKind::UnknownHandle,
        format!(
            "Unknown handle `{shown}`: this server has no pending stack of that name (mistyped, expired, or minted by another server). Nothing was applied or discarded, and no other stack was touched. Pass `handle` exactly as a preview's result gave it, or call the tool without `handle` to start a new stack."
        ),
    )
}

impl Handles {
    /// Stacks over `registry`'s tools, durable under `state` (which must exist) when given.
    pub(crate) fn new(
        registry: Arc<Registry>,
        state: Option<PathBuf>,
        max: usize,
        expiry: Option<Duration>,
    ) -> Self {
        Handles {
            registry,
            records: state.map(|dir| Arc::new(SessionRecords::handles(dir))),
            table: Mutex::new(Table::default()),
            max: max.max(1),
            expiry,
        }
    }

    /// The records, for the expiry sweep at start.
    pub(crate) fn records(&self) -> Option<&Arc<SessionRecords>> {
        self.records.as_ref()
    }

    /// The stack `handle` names.
    pub(crate) async fn get(&self, handle: &str) -> Result<Session, ToolError> {
        if !well_formed(handle) {
            return Err(unknown(handle));
        }
        let mut table = self.table.lock().await;
        if let Some(live) = table.live.get_mut(handle) {
            live.used = Instant::now();
            return Ok(live.session.clone());
        }
        let session =
            match &self.records {
                Some(records) if records.knows(handle) => {
                    records.touch(handle);
                    self.open_durable(handle).await?
                }
                Some(_) => return Err(unknown(handle)),
                None => {
                    let expiry = self.expiry;
                    let Some(place) = table.retired.iter().position(|(h, at)| {
                        h == handle && expiry.is_none_or(|e| at.elapsed() <= e)
                    }) else {
                        return Err(unknown(handle));
                    };
                    table.retired.remove(place);
                    self.registry.session().with_handle(handle)
                }
            };
        self.insert(&mut table, handle, session.clone());
        Ok(session)
    }

    /// A new stack for a call made without a handle, durable when `durable` and the server
    /// keeps state. Held once [`keep`](Self::keep) says it pushed; otherwise
    /// [`forget`](Self::forget) it.
    pub(crate) async fn mint(&self, durable: bool) -> Result<(String, Session), ToolError> {
        {
            let table = self.table.lock().await;
            if table.live.len() >= self.max
                && table
                    .live
                    .values()
                    .all(|live| live.session.pending().has_pending())
            {
                return Err(ToolError::with_kind(
                    ErrorKind::Refused,
                    format!(
                        "Refused: this server already holds {} conversations with pending previews, its limit (`--max-handles`). Nothing was previewed. Resolve or discard the previews you have (pass their `handle` to `resolve`), then call again; or ask the operator to raise the limit.",
                        table.live.len()
                    ),
                ));
            }
        }
        let bytes = random_bytes(20).map_err(|e| ToolError::new(e.to_string()))?;
        let handle = format!("{PREFIX}{}", hex(&bytes));
        let session = match (&self.records, durable) {
            (Some(records), true) => {
                records.write_handle(&handle).map_err(|e| {
                    ToolError::new(format!(
                        "the pending stack cannot be kept: {e}; nothing was previewed"
                    ))
                })?;
                self.open_durable(&handle).await?
            }
            _ => self.registry.session().with_handle(&handle),
        };
        Ok((handle, session))
    }

    /// `session`, minted for a call, pushed: hold it under `handle`.
    pub(crate) async fn keep(&self, handle: &str, session: Session) {
        let mut table = self.table.lock().await;
        self.insert(&mut table, handle, session);
    }

    /// `handle`, minted for a call that pushed nothing: nothing of it stays.
    pub(crate) fn forget(&self, handle: &str, session: Session) {
        // The durable stack holds its lock until the session goes.
        drop(session);
        if let Some(records) = &self.records
            && records.knows(handle)
            && let Err(e) = records.remove(handle)
        {
            tracing::warn!(error = %e, "an unused pending-action handle's record could not be removed");
        }
    }

    fn insert(&self, table: &mut Table, handle: &str, session: Session) {
        table.live.insert(
            handle.to_owned(),
            Live {
                session,
                used: Instant::now(),
            },
        );
        while table.live.len() > self.max {
            // The least recently used stack that holds nothing goes; with none, all stay.
            let Some(oldest) = table
                .live
                .iter()
                .filter(|(_, live)| !live.session.pending().has_pending())
                .min_by_key(|(_, live)| live.used)
                .map(|(h, _)| h.clone())
            else {
                break;
            };
            table.live.remove(&oldest);
            if self.records.is_none() {
                table.retired.push_back((oldest, Instant::now()));
                if table.retired.len() > RETIRED {
                    table.retired.pop_front();
                }
            }
        }
    }

    async fn open_durable(&self, handle: &str) -> Result<Session, ToolError> {
        let Some(records) = &self.records else {
            return Err(unknown(handle));
        };
        let registry = Arc::clone(&self.registry);
        let dir = records.dir().to_path_buf();
        let key = handle.to_owned();
        let opened = tokio::task::spawn_blocking(move || registry.durable_session(&dir, &key))
            .await
            .map_err(|join| {
                ToolError::new(format!("the pending stack could not be opened: {join}"))
            })?;
        opened
            .map(|session| session.with_handle(handle))
            .map_err(|e| {
                ToolError::new(format!(
                    "This handle's pending stack cannot be opened: {e}. Nothing was applied; call the tool without `handle` to start a new stack."
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_minted_shapes_are_handles() {
        assert!(well_formed(&format!("ph-{}", "a1".repeat(20))));
        for bad in [
            "",
            "ph-",
            "ph-../../etc",
            &format!("ph-{}", "A1".repeat(20)),
            &"a".repeat(43),
        ] {
            assert!(!well_formed(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_handle_names_one_stack_and_a_forged_one_none() {
        let registry = Session::builder().build_registry().unwrap();
        let handles = Handles::new(registry, None, 2, None);
        let (h, session) = handles.mint(false).await.unwrap();
        assert!(well_formed(&h));
        session
            .pending()
            .push(xcsh_core::PendingFn::new("Step", |_| async {
                Ok::<_, String>("done")
            }));
        handles.keep(&h, session).await;
        assert_eq!(handles.get(&h).await.unwrap().pending().len(), 1);
        let forged = format!("ph-{}", "0".repeat(40));
        let err = handles.get(&forged).await.unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::UnknownHandle);
        // A call that pushed nothing leaves no handle.
        let (unused, session) = handles.mint(false).await.unwrap();
        handles.forget(&unused, session);
        assert!(handles.get(&unused).await.is_err());
    }

    #[tokio::test]
    async fn beyond_the_limit_empty_stacks_go_and_come_back_empty() {
        let registry = Session::builder().build_registry().unwrap();
        let handles = Handles::new(registry, None, 1, None);
        let (first, session) = handles.mint(false).await.unwrap();
        handles.keep(&first, session).await;
        let (second, session) = handles.mint(false).await.unwrap();
        session
            .pending()
            .push(xcsh_core::PendingFn::new("Step", |_| async {
                Ok::<_, String>("done")
            }));
        handles.keep(&second, session).await;
        // The first (empty) was let go, and is served again, empty.
        assert!(handles.get(&first).await.unwrap().pending().is_empty());
        // Only the stack with a preview is held, the limit: a new conversation is refused.
        assert_eq!(handles.table.lock().await.live.len(), 1);
        let err = handles.mint(false).await.unwrap_err();
        assert!(err.message().contains("--max-handles"), "{}", err.message());
    }

    #[tokio::test]
    async fn durable_stacks_survive_a_new_table_and_unknown_ones_create_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Session::builder().build_registry().unwrap();
        let handles = Handles::new(
            Arc::clone(&registry),
            Some(dir.path().to_path_buf()),
            8,
            None,
        );
        let (h, session) = handles.mint(true).await.unwrap();
        handles.keep(&h, session).await;
        drop(handles);
        let again = Handles::new(registry, Some(dir.path().to_path_buf()), 8, None);
        assert!(again.get(&h).await.is_ok());
        let before = std::fs::read_dir(dir.path()).unwrap().count();
        let forged = format!("ph-{}", "1".repeat(40));
        assert!(again.get(&forged).await.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before);
    }
}
