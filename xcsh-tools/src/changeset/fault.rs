//! Fault injection for the apply protocol, so tests can prove "every file as before" for a
//! failure at every single step instead of hoping.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which filesystem steps of an apply should fail, for tests.
///
/// Every mutating filesystem step of
/// [`ChangeSet::apply_with_faults`](super::ChangeSet::apply_with_faults) — creating a
/// directory, creating, writing, chmod-ing or fsync-ing a temporary file, linking a backup,
/// each rename, each directory fsync, each removal, and every step of a rollback — is
/// numbered from 1 in the order it runs, as is every write of the apply journal. A plan makes chosen steps fail with an I/O error
/// instead of running, or stops the apply dead before one (as a SIGKILL would: no rollback,
/// no clean-up). Use a fresh plan per apply: the count carries on.
///
/// ```
/// use xcsh_tools::changeset::{ChangeSet, FaultPlan};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.txt"), "old")?;
/// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
/// cs.modify("a.txt", "new")?;
///
/// // Make the fourth step (writing the temporary file, after the journal's two) fail:
/// // nothing changes.
/// let plan = FaultPlan::fail_at(4);
/// let err = cs.apply_with_faults(&plan).unwrap_err();
/// assert!(err.to_string().starts_with("nothing was changed"));
/// assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "old");
/// assert!(plan.steps()[3].starts_with("4: write the new content of `a.txt`"));
///
/// // A clean run, counted: every k in 1..=steps_taken() is worth a fault.
/// let plan = FaultPlan::none();
/// cs.apply_with_faults(&plan)?;
/// assert!(plan.steps_taken() >= 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[doc(hidden)]
#[derive(Default)]
pub struct FaultPlan {
    fail: BTreeSet<usize>,
    crash_at: Option<usize>,
    no_hard_links: bool,
    /// Code to run just before a step, to play a concurrent writer.
    hooks: Vec<(usize, Hook)>,
    taken: AtomicUsize,
    log: Mutex<Vec<String>>,
}

type Hook = Box<dyn Fn() + Send + Sync>;

impl fmt::Debug for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultPlan")
            .field("fail", &self.fail)
            .field("crash_at", &self.crash_at)
            .field("no_hard_links", &self.no_hard_links)
            .field(
                "hooks_at",
                &self.hooks.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("taken", &self.taken)
            .finish()
    }
}

/// What the plan says about the step about to run.
pub(crate) enum Gate {
    Run,
    Fail(usize),
    Crash(usize),
}

// Only `none` is used outside the `testing` feature; the rest is test machinery.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl FaultPlan {
    /// A plan that injects nothing; it still counts and logs the steps.
    pub fn none() -> Self {
        Self::default()
    }

    /// A plan whose `k`-th step (from 1) fails.
    pub fn fail_at(k: usize) -> Self {
        Self::none().and_fail_at(k)
    }

    /// Makes step `k` fail as well (to fail a rollback step after a first failure).
    pub fn and_fail_at(mut self, k: usize) -> Self {
        self.fail.insert(k);
        self
    }

    /// A plan that stops the apply before its `k`-th step, leaving everything as a SIGKILL
    /// at that moment would.
    pub fn crash_at(k: usize) -> Self {
        Self {
            crash_at: Some(k),
            ..Self::default()
        }
    }

    /// Makes backups by copying instead of hard-linking, as on filesystems without hard links.
    pub fn without_hard_links(mut self) -> Self {
        self.no_hard_links = true;
        self
    }

    /// Runs `f` just before step `k` (whether or not that step then fails), to change the
    /// files under an apply at a chosen moment, as another process could.
    pub fn before_step(mut self, k: usize, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.hooks.push((k, Box::new(f)));
        self
    }

    /// How many steps were reached so far (including a failed or crashed one).
    pub fn steps_taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }

    /// A description of every step reached, in order ("3: write the new content of `a.rs`").
    pub fn steps(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub(crate) fn hard_links_allowed(&self) -> bool {
        !self.no_hard_links
    }

    /// Numbers the next step and says whether it may run.
    pub(crate) fn gate(&self, what: &str, path: &str) -> Gate {
        let k = self.taken.fetch_add(1, Ordering::SeqCst) + 1;
        if let Ok(mut log) = self.log.lock() {
            log.push(format!("{k}: {what} `{path}`"));
        }
        for (_, hook) in self.hooks.iter().filter(|(at, _)| *at == k) {
            hook();
        }
        if self.crash_at == Some(k) {
            Gate::Crash(k)
        } else if self.fail.contains(&k) {
            Gate::Fail(k)
        } else {
            Gate::Run
        }
    }
}
