//! Pending actions: previewed changes waiting for `resolve`, kept on a per-session LIFO stack.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{broadcast, watch};

pub use crate::action::{PendingId, PendingSummary};
use crate::approval::AuditSink;
use crate::effect::Effect;
use crate::error::{ErrorKind, ToolError, panic_message};
use crate::future::BoxFuture;
use crate::kept::{DurableState, StateError};
use crate::result::AgentToolResult;

/// The source tool name of an action that does not name one.
pub const DEFAULT_SOURCE_TOOL_NAME: &str = "custom_tool";

/// A previewed change that happens only when `resolve` applies it.
///
/// `apply` must be deterministic and safe to run once; `reason` is informational and must not
/// change what it does. When `apply` fails, the action goes back on the stack unchanged, so
/// leave `self` ready for a retry. `#[pending(apply, reject)]` writes this impl for you.
///
/// ```
/// use xcsh_core::{AgentToolResult, PendingAction, ToolError};
///
/// struct DeleteBranch { name: String }
///
/// impl PendingAction for DeleteBranch {
///     fn label(&self) -> String { format!("Delete branch: {}", self.name) }
///     async fn apply(&mut self, reason: &str) -> Result<AgentToolResult, ToolError> {
///         Ok(format!("Deleted {} ({reason}).", self.name).into())
///     }
///     async fn reject(&mut self, _reason: &str) -> Option<AgentToolResult> {
///         Some(format!("Kept {}.", self.name).into())
///     }
///     fn source_tool_name(&self) -> &str { "git_branch" }
/// }
/// ```
pub trait PendingAction: Send + 'static {
    /// Short and specific: what the person sees. `Tool: summary` renders as
    /// `Accept: summary [Tool]`.
    fn label(&self) -> String;

    /// Performs the change. A result without text makes `resolve` answer `Applied: <label>.`
    fn apply(
        &mut self,
        reason: &str,
    ) -> impl Future<Output = Result<AgentToolResult, ToolError>> + Send;

    /// Called on discard (clean-up, notifications). A returned result replaces the default
    /// `Discarded: <label>. Reason: <reason>`.
    fn reject(&mut self, _reason: &str) -> impl Future<Output = Option<AgentToolResult>> + Send {
        async { None }
    }

    /// Structured data about the action for user interfaces.
    fn details(&self) -> Option<Value> {
        None
    }

    /// What the action will do: the files it touches and how. Approval rules, the audit log
    /// and approval prompts judge the action by this, never by its details. The default,
    /// [`Effect::Unknown`], is judged as touching unknown files: under a rules policy such an
    /// action is asked about (denied when nobody can be asked), never allowed by the absence
    /// of a path rule. `#[pending]` derives it from a `ChangeSet` field, or takes
    /// `effect = field` / `effect_fn = method`. Like the digest, it must not change while the
    /// action waits.
    ///
    /// ```
    /// use xcsh_core::{AgentToolResult, Effect, FileEffect, PendingAction, ToolError};
    /// struct Rotate;
    /// impl PendingAction for Rotate {
    ///     fn label(&self) -> String { "Rotate: the key".into() }
    ///     async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
    ///     fn effect(&self) -> Effect { Effect::files([FileEffect::modify("secrets/key")]) }
    /// }
    /// assert_eq!(Rotate.effect().paths().collect::<Vec<_>>(), ["secrets/key"]);
    /// ```
    fn effect(&self) -> Effect {
        Effect::Unknown
    }

    /// The tool that produced the action.
    fn source_tool_name(&self) -> &str {
        DEFAULT_SOURCE_TOOL_NAME
    }

    /// A digest of the exact effect, which a person's approval carries and the apply checks
    /// (see [`approval`](crate::approval)). The default hashes the source tool, the label and
    /// the [`details`](Self::details); override it when the details do not describe the whole
    /// effect (hash the paths, the old fingerprints and the new contents). It must not change
    /// while the action waits.
    fn effect_digest(&self) -> String {
        crate::approval::default_effect_digest(
            self.source_tool_name(),
            &self.label(),
            self.details().as_ref(),
            &self.effect(),
        )
    }

    /// The action's kind and state, for a durable pending stack (see
    /// [`durable`](crate::durable)): `#[pending(durable)]` writes this for a
    /// `Serialize + Deserialize` struct. `None` (the default): the action lives only in
    /// memory, and a restarted process reports it lost.
    fn durable(&self) -> Option<DurableState> {
        None
    }

    /// Narrows the action to the part of its effect on `files` (root-relative paths, as its
    /// details name them), for a partial apply ([`resolve_files`](crate::resolve_files)).
    /// `#[pending(select_fn = method)]` routes it to a method. The default refuses: the
    /// action is applied or discarded whole. The error says why (e.g. a file the action does
    /// not touch), and the action must be unchanged then.
    fn select_files(&mut self, files: &[String]) -> Result<(), String> {
        let _ = files;
        Err(format!(
            "`{}` cannot be applied in part: apply or discard it whole",
            self.label()
        ))
    }
}

/// The object-safe form the store keeps; blanket-implemented for every [`PendingAction`].
trait ErasedAction: Send {
    fn apply_boxed<'a>(
        &'a mut self,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>>;
    fn reject_boxed<'a>(&'a mut self, reason: &'a str) -> BoxFuture<'a, Option<AgentToolResult>>;
    fn effect_digest_dyn(&self) -> String;
    fn durable_dyn(&self) -> Option<DurableState>;
    fn select_files_dyn(&mut self, files: &[String]) -> Result<(), String>;
    fn label_dyn(&self) -> String;
    fn details_dyn(&self) -> Option<Value>;
    fn effect_dyn(&self) -> Effect;
}

impl<T: PendingAction> ErasedAction for T {
    fn apply_boxed<'a>(
        &'a mut self,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(self.apply(reason))
    }
    fn reject_boxed<'a>(&'a mut self, reason: &'a str) -> BoxFuture<'a, Option<AgentToolResult>> {
        Box::pin(self.reject(reason))
    }
    fn effect_digest_dyn(&self) -> String {
        self.effect_digest()
    }
    fn durable_dyn(&self) -> Option<DurableState> {
        self.durable()
    }
    fn select_files_dyn(&mut self, files: &[String]) -> Result<(), String> {
        self.select_files(files)
    }
    fn label_dyn(&self) -> String {
        self.label()
    }
    fn details_dyn(&self) -> Option<Value> {
        self.details()
    }
    fn effect_dyn(&self) -> Effect {
        self.effect()
    }
}

/// A pending action taken off the stack by `resolve`, ready to apply or discard.
pub(crate) struct PendingEntry {
    summary: PendingSummary,
    /// The effect digest taken at push time.
    effect_digest: String,
    action: Box<dyn ErasedAction>,
}

impl PendingEntry {
    /// The action's id, label, source and details.
    pub(crate) fn summary(&self) -> &PendingSummary {
        &self.summary
    }

    /// The effect digest taken at push time.
    pub(crate) fn effect_digest(&self) -> &str {
        &self.effect_digest
    }

    /// Narrows the action to its effect on `files`, and its summary and digest with it. A
    /// panic in the action's `select_files` is an error too.
    pub(crate) fn narrow(&mut self, files: &[String]) -> Result<(), String> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.action.select_files_dyn(files)))
            .unwrap_or_else(|payload| {
                Err(format!(
                    "selecting files panicked: {}",
                    panic_message(payload.as_ref())
                ))
            })?;
        self.summary.label = self.action.label_dyn();
        self.summary.details = self.action.details_dyn();
        self.summary.effect = self.action.effect_dyn();
        self.effect_digest = self.action.effect_digest_dyn();
        Ok(())
    }

    /// What a durable stack keeps of it.
    fn kept(&self) -> (PendingId, PendingSummary, Option<DurableState>) {
        (
            self.summary.id,
            self.summary.clone(),
            self.action.durable_dyn(),
        )
    }

    /// The effect digest now; a panic in it counts as a different effect.
    pub(crate) fn current_effect_digest(&self) -> Option<String> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.action.effect_digest_dyn())).ok()
    }

    /// Runs `apply`. A panic inside it is caught and reported as an error, and so is an
    /// `Ok` result marked as an error: either way the apply failed and the caller puts the
    /// entry back.
    pub(crate) async fn apply(&mut self, reason: &str) -> Result<AgentToolResult, ToolError> {
        match AssertUnwindSafe(self.action.apply_boxed(reason))
            .catch_unwind()
            .await
        {
            Ok(Ok(result)) if result.is_error() => {
                let kind = result
                    .error_kind()
                    .cloned()
                    .unwrap_or(ErrorKind::ApplyFailed);
                Err(ToolError::with_kind(kind, result.text_content()))
            }
            Ok(outcome) => outcome,
            Err(payload) => Err(ToolError::with_kind(
                ErrorKind::Panicked,
                format!("apply panicked: {}", panic_message(payload.as_ref())),
            )),
        }
    }

    /// Runs `reject`. A panic inside it is caught and reported as an error.
    pub(crate) async fn reject(
        &mut self,
        reason: &str,
    ) -> Result<Option<AgentToolResult>, ToolError> {
        AssertUnwindSafe(self.action.reject_boxed(reason))
            .catch_unwind()
            .await
            .map_err(|payload| {
                ToolError::with_kind(
                    ErrorKind::RejectFailed,
                    format!("reject panicked: {}", panic_message(payload.as_ref())),
                )
            })
    }
}

impl fmt::Debug for PendingEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingEntry")
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

/// A change to a store's stack, as seen by [`PendingActionStore::subscribe`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PendingEvent {
    /// An action was pushed on top.
    Pushed(PendingSummary),
    /// The top action was taken off by `resolve` (to be applied or discarded).
    Popped(PendingSummary),
    /// An action whose apply failed was put back where it was: on top, or under the actions
    /// pushed while it was being applied.
    Restored(PendingSummary),
}

/// Where a durable session keeps its stack, told of each change before the change counts:
/// the store observes through this, and `durable`'s stack file implements it, so the two
/// meet here without calling each other.
pub(crate) trait Keeper: Send + Sync {
    /// `id` was pushed on top.
    fn push(
        &self,
        id: PendingId,
        summary: &PendingSummary,
        state: Option<DurableState>,
    ) -> Result<(), StateError>;
    /// `id` changed (narrowed by a partial apply).
    fn update(
        &self,
        id: PendingId,
        summary: &PendingSummary,
        state: Option<DurableState>,
    ) -> Result<(), StateError>;
    /// `id` was resolved: it goes.
    fn remove(&self, id: PendingId) -> Result<(), StateError>;
    /// The notices of actions lost in a restart were delivered: they go.
    fn forget_lost(&self) -> Result<(), StateError>;
}

/// A per-session LIFO stack of pending actions, safe to share across tasks (`Arc` it).
///
/// Anyone may push and look; only [`resolve`](crate::resolve()) takes an action off, always
/// the top one, so the stack stays last-in, first-out: a failed apply puts its action back
/// where it was, under anything pushed meanwhile.
///
/// ```
/// use xcsh_core::{AgentToolResult, PendingAction, PendingActionStore, ToolError};
///
/// struct Step(u32);
/// impl PendingAction for Step {
///     fn label(&self) -> String { format!("Step: {}", self.0) }
///     async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
/// }
///
/// let store = PendingActionStore::new();
/// store.push(Step(1));
/// store.push(Step(2));
/// assert_eq!(store.len(), 2);
/// assert_eq!(store.peek().unwrap().label, "Step: 2");
/// let labels: Vec<_> = store.snapshot().into_iter().map(|s| s.label).collect();
/// assert_eq!(labels, ["Step: 2", "Step: 1"]); // top first
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let done = xcsh_core::resolve(&store, xcsh_core::ResolveAction::Discard, "not now").await.unwrap();
/// assert_eq!(done.summary.label, "Step: 2");
/// assert_eq!(store.peek().unwrap().label, "Step: 1");
/// # });
/// ```
pub struct PendingActionStore {
    stack: Mutex<Vec<PendingEntry>>,
    next_id: AtomicU64,
    events: broadcast::Sender<PendingEvent>,
    /// How many times the stack changed: for those who need to know that, not how.
    changes: watch::Sender<u64>,
    /// Serialises `resolve` calls so that "the top" means the same thing for the whole of
    /// one apply or discard, and a failed apply goes back exactly where it was.
    pub(crate) resolving: tokio::sync::Mutex<()>,
    /// Where pushes and resolves are recorded, when the session keeps an audit log.
    audit: OnceLock<AuditSink>,
    /// Where the stack is kept, when the session is durable.
    kept: OnceLock<Box<dyn Keeper>>,
    /// One push at a time, so that the kept stack and the stack in memory get pushes in the
    /// same order.
    pushing: Mutex<()>,
    /// The action `resolve` has taken off the stack and is applying or discarding: still
    /// pending until it is done (it goes back if the apply fails).
    out: Mutex<Option<PendingId>>,
}

impl Default for PendingActionStore {
    fn default() -> Self {
        Self::new()
    }
}

impl PendingActionStore {
    /// An empty store.
    pub fn new() -> Self {
        PendingActionStore {
            stack: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            events: broadcast::channel(256).0,
            changes: watch::Sender::new(0),
            resolving: tokio::sync::Mutex::new(()),
            audit: OnceLock::new(),
            kept: OnceLock::new(),
            pushing: Mutex::new(()),
            out: Mutex::new(None),
        }
    }

    fn out(&self) -> MutexGuard<'_, Option<PendingId>> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stack(&self) -> MutexGuard<'_, Vec<PendingEntry>> {
        // A panic while holding this lock cannot leave the Vec half-modified (every critical
        // section is a single push, pop, insert or clone), so a poisoned lock is still consistent.
        self.stack.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pushes an action on top and returns its id. In a durable session a push that cannot
    /// be written to the state directory is still kept in memory (and logged); tools push
    /// through [`ToolContext::push_pending_action`](crate::ToolContext::push_pending_action),
    /// which refuses it instead ([`try_push`](Self::try_push)).
    pub fn push(&self, action: impl PendingAction) -> PendingId {
        let (id, kept) = self.push_inner(action, false);
        if let Err(e) = kept {
            tracing::error!(error = %e, "a pending action could not be kept on disk");
        }
        id
    }

    /// Pushes an action on top, first writing it to the state directory when the session is
    /// durable; if that fails, nothing is pushed and the error says why.
    pub fn try_push(&self, action: impl PendingAction) -> Result<PendingId, StateError> {
        let (id, kept) = self.push_inner(action, true);
        kept.map(|()| id)
    }

    /// What a durable stack must hold of this store now, bottom first: each action's id,
    /// summary and kept state.
    pub(crate) fn kept_now(&self) -> Vec<(PendingId, PendingSummary, Option<DurableState>)> {
        self.stack().iter().map(PendingEntry::kept).collect()
    }

    /// Tells `keeper` of every change from now on (once; later calls are ignored): the
    /// durable session's stack file, which already holds [`kept_now`](Self::kept_now).
    pub(crate) fn keep_with(&self, keeper: Box<dyn Keeper>) {
        let _ = self.kept.set(keeper);
    }

    /// The notices of lost actions have been handed out: the kept stack drops them.
    pub(crate) fn lost_delivered(&self) {
        if let Some(kept) = self.kept.get()
            && let Err(e) = kept.forget_lost()
        {
            tracing::error!(error = %e, "the kept stack could not drop its lost actions");
        }
    }

    /// `entry` was narrowed (a partial apply): the kept stack holds it as it is now.
    pub(crate) fn narrowed(&self, entry: &PendingEntry) {
        if let Some(kept) = self.kept.get()
            && let Err(e) = {
                let (id, summary, state) = entry.kept();
                kept.update(id, &summary, state)
            }
        {
            tracing::error!(error = %e, "a narrowed action could not be kept on disk");
        }
    }

    /// `resolve` is done with action `id` (applied or discarded): it leaves the kept stack.
    pub(crate) fn resolved(&self, id: PendingId) {
        self.out().take();
        if let Some(kept) = self.kept.get()
            && let Err(e) = kept.remove(id)
        {
            tracing::error!(error = %e, "a resolved action could not be removed from the kept stack");
        }
    }

    fn push_inner(
        &self,
        action: impl PendingAction,
        refuse_unkept: bool,
    ) -> (PendingId, Result<(), StateError>) {
        let id = PendingId::new(self.next_id.fetch_add(1, Ordering::Relaxed));
        let summary = PendingSummary {
            id,
            label: action.label(),
            source_tool_name: action.source_tool_name().to_owned(),
            details: action.details(),
            effect: action.effect(),
        };
        let _one_at_a_time = self.pushing.lock().unwrap_or_else(PoisonError::into_inner);
        // Durable before anyone hears of it: the preview is returned after this.
        let kept = match self.kept.get() {
            Some(keeper) => keeper.push(id, &summary, action.durable()),
            None => Ok(()),
        };
        if kept.is_err() && refuse_unkept {
            return (id, kept);
        }
        let effect_digest = action.effect_digest();
        if let Some(audit) = self.audit() {
            audit.push(&summary, &effect_digest);
        }
        // A summary holds the preview's details (megabytes for a wide edit): copied only for
        // a subscriber to hear of it.
        let event = self.hears().then(|| PendingEvent::Pushed(summary.clone()));
        let entry = PendingEntry {
            summary,
            effect_digest,
            action: Box::new(action),
        };
        self.stack().push(entry);
        self.changed(event);
        (id, kept)
    }

    /// Records pushes and resolves in an audit log from now on (once; later calls are ignored).
    pub(crate) fn set_audit(&self, sink: AuditSink) {
        let _ = self.audit.set(sink);
    }

    /// The audit sink, if any.
    pub(crate) fn audit(&self) -> Option<&AuditSink> {
        self.audit.get()
    }

    /// The top action's summary, without taking it.
    pub fn peek(&self) -> Option<PendingSummary> {
        self.stack().last().map(|entry| entry.summary.clone())
    }

    /// Takes the top action, with its place (its index from the bottom). Only `resolve`
    /// calls this, one at a time, so nothing under that place changes until it is restored
    /// or dropped.
    pub(crate) fn pop(&self) -> Option<(usize, PendingEntry)> {
        let (place, entry) = {
            let mut stack = self.stack();
            let entry = stack.pop()?;
            (stack.len(), entry)
        };
        *self.out() = Some(entry.summary.id);
        let event = self
            .hears()
            .then(|| PendingEvent::Popped(entry.summary.clone()));
        self.changed(event);
        Some((place, entry))
    }

    /// Puts an entry back at its place (after a failed apply), keeping its id: actions pushed
    /// while it was out stay above it, so the stack is still last-in, first-out.
    pub(crate) fn restore(&self, place: usize, entry: PendingEntry) {
        let event = self
            .hears()
            .then(|| PendingEvent::Restored(entry.summary.clone()));
        {
            let mut stack = self.stack();
            let place = place.min(stack.len());
            stack.insert(place, entry);
        }
        self.out().take();
        self.changed(event);
    }

    /// Whether anyone [subscribed](Self::subscribe) to events (and a summary is worth copying).
    fn hears(&self) -> bool {
        self.events.receiver_count() > 0
    }

    /// Tells the subscribers (when there is an event for them) and the watchers of
    /// [`changes`](Self::changes) that the stack changed.
    fn changed(&self, event: Option<PendingEvent>) {
        // No subscriber is fine: events are best-effort notifications.
        if let Some(event) = event {
            let _ = self.events.send(event);
        }
        self.changes.send_modify(|n| *n += 1);
    }

    /// Whether action `id` is still pending: on the stack, or being applied by `resolve` now
    /// (it goes back if the apply fails).
    ///
    /// ```
    /// let store = xcsh_core::PendingActionStore::new();
    /// let id = store.push(xcsh_core::PendingFn::new("Step", |_| async { Ok::<_, String>("done") }));
    /// assert!(store.contains(id));
    /// ```
    pub fn contains(&self, id: PendingId) -> bool {
        *self.out() == Some(id) || self.stack().iter().any(|entry| entry.summary.id == id)
    }

    /// Whether any action is pending.
    pub fn has_pending(&self) -> bool {
        !self.stack().is_empty()
    }

    /// How many actions are pending.
    pub fn len(&self) -> usize {
        self.stack().len()
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        !self.has_pending()
    }

    /// Summaries of every pending action, top first (the order `resolve` takes them).
    pub fn snapshot(&self) -> Vec<PendingSummary> {
        self.stack()
            .iter()
            .rev()
            .map(|entry| entry.summary.clone())
            .collect()
    }

    /// Push, pop and restore events from now on. A slow receiver may miss events
    /// (`RecvError::Lagged`); [`snapshot`](Self::snapshot) always tells the current state.
    pub fn subscribe(&self) -> broadcast::Receiver<PendingEvent> {
        self.events.subscribe()
    }

    /// The number of changes to the stack (pushes, pops, restores) so far, watched: for a
    /// receiver that needs to know that the stack changed, not how, such as an MCP server's
    /// `tools/list_changed`. It never lags, a burst of changes wakes it once, and unlike
    /// [`subscribe`](Self::subscribe) it costs no copy of a summary (whose details can be
    /// megabytes). `changed()` fails once the store is dropped.
    ///
    /// ```
    /// use xcsh_core::{PendingFn, PendingActionStore};
    ///
    /// let step = || PendingFn::new("Step", |_reason| async { Ok::<_, std::io::Error>("done") });
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = PendingActionStore::new();
    /// let mut changes = store.changes();
    /// store.push(step());
    /// store.push(step());
    /// changes.changed().await.unwrap(); // woken once for both
    /// assert_eq!(*changes.borrow_and_update(), 2);
    /// assert!(!changes.has_changed().unwrap());
    /// # });
    /// ```
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

impl fmt::Debug for PendingActionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingActionStore")
            .field("pending", &self.snapshot())
            .finish()
    }
}
