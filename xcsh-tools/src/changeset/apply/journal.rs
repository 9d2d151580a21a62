//! The journal of one apply: every filesystem step numbered and gated by the fault plan,
//! why the forward pass stopped, and what each operation has done so it can be undone.

use std::io;
use std::path::{Path, PathBuf};

use super::Run;
use crate::changeset::StaleFile;
use crate::changeset::fault::{Effect, Gate};

/// What has been done for one operation, so it can be undone.
#[derive(Clone, Debug, Default)]
pub(super) struct Progress {
    /// A temporary file holding the new content, not yet renamed into place.
    pub(super) temp: Option<PathBuf>,
    /// The original, kept for rollback (modify: a link or copy; delete: the moved file).
    pub(super) backup: Option<PathBuf>,
    /// The visible change has happened.
    pub(super) committed: bool,
    /// The fingerprint of the new content written to `temp`.
    pub(super) new_fp: Option<crate::changeset::Fingerprint>,
    /// `temp` is made durable by a `syncfs` of its filesystem (see
    /// [`FsSync`](super::atomic_fs::FsSync)), not by its own fsync.
    pub(super) fs_synced: bool,
}

/// Why the forward pass stopped.
pub(super) enum Stop {
    Failed(Failure),
    Stale(Vec<StaleFile>),
    Crash(usize),
}

/// A simulated SIGKILL during rollback.
pub(super) struct Crashed(pub(super) usize);

pub(super) struct Failure {
    pub(super) what: &'static str,
    pub(super) path: String,
    pub(super) source: io::Error,
    /// Injected by a fault plan rather than reported by the
    /// system.
    pub(super) injected: bool,
}

impl Run<'_> {
    /// Runs one numbered filesystem step, unless the fault plan says otherwise. `effects`
    /// lists what `f` does to the disk (the real paths); only a plan simulating a power loss
    /// calls it.
    pub(super) fn step<T>(
        &self,
        what: &'static str,
        path: &Path,
        effects: impl FnOnce() -> Vec<Effect>,
        f: impl FnOnce() -> io::Result<T>,
    ) -> Result<T, Stop> {
        let shown = || self.cs.ws.display(path);
        match self.plan.gate(what, shown, effects) {
            Gate::Crash(k) => Err(Stop::Crash(k)),
            Gate::Fail(k) => Err(Stop::Failed(Failure {
                what,
                path: shown(),
                source: io::Error::other(format!("injected fault at step {k}")),
                injected: true,
            })),
            Gate::Run => f().map_err(|source| {
                Stop::Failed(Failure {
                    what,
                    path: shown(),
                    source,
                    injected: false,
                })
            }),
        }
    }

    pub(super) fn fail(&self, what: &'static str, path: &Path, source: io::Error) -> Stop {
        Stop::Failed(Failure {
            what,
            path: self.cs.ws.display(path),
            source,
            injected: false,
        })
    }
}
