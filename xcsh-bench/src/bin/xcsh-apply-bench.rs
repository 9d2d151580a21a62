//! Where a durable apply's time goes, against plain writes of the same bytes, as JSON.
//!
//! Usage: `xcsh-apply-bench --root DIR --lang LANG --pattern P --rewrite R [--runs N] [--trash DIR]`
//!
//! `DIR` must be a scratch copy: it is written to (and put back after every run). The edit is
//! planned once with the engine, as `xcsh ast-edit` plans it. Then, `N` times (default 5),
//! alternating which goes first:
//! * **apply**: the change set `xcsh ast-edit --yes` builds (`modify_splicing` per file, the
//!   default undo limits), applied with a timing [`FaultPlan`], which attributes the time
//!   between one numbered step (or marked phase) and the next to the first: syncs, directory
//!   syncs, backups, renames, journal writes, stale checks, reading and splicing, the undo
//!   record;
//! * **plain**: the same new contents written with `std::fs::write`, file after file (what
//!   `ast-grep --update-all` does), the contents computed before the clock starts.
//!
//! After each, the originals are written back, `.xcsh` is moved aside (see [`Trash`]; into
//! `--trash DIR`, left for the caller to remove, or into a directory of its own removed at
//! the end) and the disk is synced (`sync`), so neither pays for the other's writes. Prints
//! `{"files":…,"bytes":…,"apply":{"median_s":…},"plain":{…},"ratio":…,"phases":[…]}` with
//! each phase's median over the runs; `bench/apply_bench.py` tabulates it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use xcsh_tools::changeset::{ChangeSet, FaultPlan};
use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
use xcsh_tools::workspace::Workspace;

fn main() -> ExitCode {
    match run() {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("xcsh-apply-bench: {message}");
            ExitCode::from(2)
        }
    }
}

struct File {
    path: PathBuf,
    original: String,
    new: String,
}

fn run() -> Result<String, String> {
    let (mut root, mut lang, mut pattern, mut rewrite, mut runs) = (None, None, None, None, 5);
    let mut trash_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--root" => root = Some(value),
            "--lang" => lang = Some(value),
            "--pattern" => pattern = Some(value),
            "--rewrite" => rewrite = Some(value),
            "--trash" => trash_dir = Some(PathBuf::from(value)),
            "--runs" => {
                runs = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--runs {value}: expected a whole number ≥ 1"))?;
            }
            other => return Err(format!("unknown flag {other}; see the usage in the source")),
        }
    }
    let root = root.ok_or("--root DIR is required")?;
    let pattern = pattern.ok_or("--pattern P is required")?;
    let rewrite = rewrite.ok_or("--rewrite R is required")?;
    let lang = lang
        .map(|l| l.parse::<Lang>().map_err(|e| e.to_string()))
        .transpose()?;
    let ws = Workspace::new(&root).map_err(|e| format!("--root {root}: {e}"))?;
    let request = EditRequest {
        ops: vec![Op::new(pattern, rewrite)],
        lang,
        ..EditRequest::default()
    };
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
        .map_err(|e| e.to_string())?;
    if plan.files.is_empty() {
        return Err("the pattern changes no file: nothing to apply".to_owned());
    }
    let mut files = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        let original = f.read_original().map_err(|e| e.to_string())?;
        let new = f.new_contents(&original).map_err(|e| e.to_string())?;
        files.push(File {
            path: f.path.clone(),
            original,
            new,
        });
    }
    let bytes: usize = files.iter().map(|f| f.new.len()).sum();
    let state = ws.root().join(".xcsh");
    let trash = match trash_dir {
        Some(dir) => Trash::kept_in(dir)?,
        None => Trash::beside(ws.root())?,
    };
    let put_back = |files: &[File]| -> Result<(), String> {
        for f in files {
            std::fs::write(&f.path, &f.original)
                .map_err(|e| format!("cannot put back `{}`: {e}", f.path.display()))?;
        }
        // Moved aside, not removed: see `Trash`.
        trash.take(&state)?;
        sync()
    };
    sync()?;

    let (mut applies, mut plains) = (Vec::new(), Vec::new());
    let mut phases: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for i in 0..runs {
        let apply_first = i % 2 == 0;
        for apply in [apply_first, !apply_first] {
            if apply {
                let started = Instant::now();
                let mut changes = ChangeSet::new(ws.clone());
                for f in &plan.files {
                    changes
                        .modify_splicing(&f.path, f.fingerprint, f.splices())
                        .map_err(|e| e.to_string())?;
                }
                let staged = started.elapsed().as_secs_f64();
                let timed = FaultPlan::timed();
                changes
                    .apply_with_faults(&timed)
                    .map_err(|e| format!("the apply failed: {e}"))?;
                applies.push(started.elapsed().as_secs_f64());
                let mut run: BTreeMap<String, f64> = BTreeMap::new();
                run.insert("stage the change set (modify_splicing)".to_owned(), staged);
                for (what, seconds) in timed.timings() {
                    *run.entry(what).or_default() += seconds;
                }
                for (what, seconds) in run {
                    phases.entry(what).or_default().push(seconds);
                }
            } else {
                let started = Instant::now();
                for f in &files {
                    std::fs::write(&f.path, &f.new)
                        .map_err(|e| format!("cannot write `{}`: {e}", f.path.display()))?;
                }
                plains.push(started.elapsed().as_secs_f64());
            }
            check_written(&files)?;
            put_back(&files)?;
        }
    }
    let apply = median(&mut applies);
    let plain = median(&mut plains);
    let mut phase_list: Vec<(String, f64)> = phases
        .into_iter()
        .map(|(what, mut s)| (what, median(&mut s)))
        .collect();
    phase_list.sort_by(|a, b| b.1.total_cmp(&a.1));
    let phases_json: Vec<serde_json::Value> = phase_list
        .iter()
        .map(|(what, s)| serde_json::json!({"phase": what, "median_s": s}))
        .collect();
    Ok(serde_json::json!({
        "files": files.len(),
        "bytes": bytes,
        "runs": runs,
        "apply": {"median_s": apply, "runs_s": applies},
        "plain": {"median_s": plain, "runs_s": plains},
        "ratio": apply / plain,
        "phases": phases_json,
    })
    .to_string())
}

/// Both contestants must have written exactly the new contents.
fn check_written(files: &[File]) -> Result<(), String> {
    for f in files {
        let now = std::fs::read_to_string(&f.path)
            .map_err(|e| format!("cannot read `{}`: {e}", f.path.display()))?;
        if now != f.new {
            return Err(format!(
                "`{}` does not hold the new contents after the run",
                f.path.display()
            ));
        }
    }
    Ok(())
}

/// Everything written so far on disk, so that the next run does not pay for it.
fn sync() -> Result<(), String> {
    let status = std::process::Command::new("sync")
        .status()
        .map_err(|e| format!("cannot run `sync`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`sync` failed: {status}"))
    }
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    }
}

/// Where each run's `.xcsh` goes between runs, removed when the benchmark ends.
///
/// Removing a run's `.xcsh` frees one inode per file the apply replaced (its undo record's
/// link to the original is the last one). On ext4 without a journal, the kind of disk these
/// machines have, the inode allocator then skips every inode freed in the last minute
/// (`recently_deleted` in `fs/ext4/ialloc.c`), one buffer look-up each: the next run's
/// temporary files would cost 100–200 µs apiece to create instead of ~20. That is the
/// benchmark's own clean-up taxing the next contestant, so the state is moved aside (a rename,
/// which frees nothing) and only removed once every run is done.
struct Trash {
    dir: PathBuf,
    taken: std::cell::Cell<usize>,
    /// Removed when the benchmark ends (else the caller's to remove).
    own: bool,
}

impl Trash {
    /// A fresh directory beside `root`, on its filesystem.
    fn beside(root: &std::path::Path) -> Result<Self, String> {
        let name = format!(
            "{}.xcsh-apply-bench-trash-{}",
            root.file_name()
                .map_or("root".into(), |n| n.to_string_lossy()),
            std::process::id()
        );
        let dir = root.with_file_name(name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        Ok(Trash {
            dir,
            taken: std::cell::Cell::new(0),
            own: true,
        })
    }

    /// The caller's `dir`, which it empties when all its runs are done.
    fn kept_in(dir: PathBuf) -> Result<Self, String> {
        if !dir.is_dir() {
            return Err(format!("--trash {}: not a directory", dir.display()));
        }
        Ok(Trash {
            dir,
            taken: std::cell::Cell::new(0),
            own: false,
        })
    }

    /// Moves `path`, if it exists, into the trash.
    fn take(&self, path: &std::path::Path) -> Result<(), String> {
        if std::fs::symlink_metadata(path).is_err() {
            return Ok(());
        }
        let mut n = self.taken.get();
        let name = |n: usize| {
            self.dir
                .join(format!("apply-bench-{}-{n}", std::process::id()))
        };
        while std::fs::symlink_metadata(name(n)).is_ok() {
            n += 1;
        }
        match std::fs::rename(path, name(n)) {
            Ok(()) => {
                self.taken.set(n + 1);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot move `{}` aside: {e}", path.display())),
        }
    }
}

impl Drop for Trash {
    fn drop(&mut self) {
        if self.own {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
