//! A one-line progress indicator on stderr for long previews.
//!
//! Shown only when stderr is a terminal, only once a run has taken long enough to be worth
//! it, and redrawn at most a few times a second: the engine reports after every file, from
//! several threads, and printing each report would cost more than the scan.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use xcsh::tools::engine::Progress;

/// Quiet for this long: a fast run shows nothing.
const GRACE: Duration = Duration::from_millis(300);
/// At most one redraw per this interval.
const EVERY: Duration = Duration::from_millis(100);

/// Draws `scanning… N files, M with matches` on stderr, and erases it when dropped.
pub(crate) struct StderrProgress {
    enabled: bool,
    started: Instant,
    /// The highest counts reported: worker threads report their own snapshots, which may
    /// arrive out of order, and a count that goes backwards looks broken.
    scanned: AtomicUsize,
    matched: AtomicUsize,
    /// When the line was last drawn (`None`: never drawn).
    drawn: Mutex<Option<Instant>>,
}

impl StderrProgress {
    /// An indicator that draws only if stderr is a terminal.
    pub(crate) fn new() -> Self {
        StderrProgress {
            enabled: std::io::stderr().is_terminal(),
            started: Instant::now(),
            scanned: AtomicUsize::new(0),
            matched: AtomicUsize::new(0),
            drawn: Mutex::new(None),
        }
    }

    /// Takes one report; cheap when nothing is drawn.
    pub(crate) fn report(&self, progress: Progress) {
        if !self.enabled {
            return;
        }
        let scanned = self
            .scanned
            .fetch_max(progress.files_scanned, Ordering::Relaxed)
            .max(progress.files_scanned);
        let matched = self
            .matched
            .fetch_max(progress.files_matched, Ordering::Relaxed)
            .max(progress.files_matched);
        if self.started.elapsed() < GRACE {
            return;
        }
        // Another thread drawing right now is as good as this report.
        let Ok(mut drawn) = self.drawn.try_lock() else {
            return;
        };
        if drawn.is_some_and(|at| at.elapsed() < EVERY) {
            return;
        }
        *drawn = Some(Instant::now());
        let mut stderr = std::io::stderr().lock();
        let _ = write!(
            stderr,
            "\r\x1b[2Kscanning… {scanned} files, {matched} with matches"
        );
        let _ = stderr.flush();
    }
}

impl Drop for StderrProgress {
    fn drop(&mut self) {
        let drawn = self.drawn.get_mut().map(|d| d.is_some()).unwrap_or(true);
        if self.enabled && drawn {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}
