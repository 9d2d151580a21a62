//! Files kept between calls: what a warm session reuses.
//!
//! An agent calls `ast_grep` and `ast_edit` many times over the same workspace. A cold call
//! walks the tree, reads every file of the language, filters, and parses the candidates;
//! parsing dominates. A [`ParseCache`] keeps, per file, its text, the words in it when it had
//! room for them (so that the prefilter can rule out a file that lacks an identifier without
//! searching its text; built when a later call first reuses the file) and (once a call needed it) its parse tree, so the next call over an
//! unchanged file neither reads nor parses it again.
//!
//! **Validated on every use.** An entry remembers the file's metadata (length, modification
//! and change times, inode) and the [`Fingerprint`] of the text it holds. A file whose metadata
//! is unchanged is reused without being read, unless it was modified less than
//! [`RACY_WINDOW`] before the entry was made (a write in the same timestamp tick could then
//! leave the metadata unchanged: git's "racy" files); such a file, and any file whose
//! metadata changed, is read again and its tree reused only if the fingerprint of what was
//! read is the one kept. An edit between two calls, by xcsh or by anything else, is therefore
//! always seen; apply re-checks every file itself, as it always did.
//!
//! **Bounded.** Each entry is charged its text, its words and an estimate of its tree
//! ([`TREE_BYTES_PER_NODE`] per node); past the budget the least recently used entries are
//! evicted, but never one that this call or the one before it used: a call over more files
//! than the budget holds keeps what fits and stops admitting (evicting the entries it or its
//! predecessor is using to admit the next would make every later call miss everything,
//! slower than no cache). A budget of 0 keeps nothing. A file whose tree would not be kept
//! is parsed as without a cache (a Rust file only around where a match can be), and only its
//! text is kept.
//!
//! **A file no call parsed is kept the second time it is read.** A file the prefilter ruled
//! out costs a later call one read, not a parse; keeping its text at first sight would make
//! every one-shot call (a replayed script, `xcsh session` over one change) pay for copies
//! nobody reuses (on the benchmark corpus, 67 MB of fresh pages: as much as the rest of a call
//! that matches nothing). So the first read of such a file only marks it seen, and the next
//! read keeps it. A file the call parsed is kept at once (its tree when whole, else its
//! text): a warm session's first call is most often a broad search that parses nearly every
//! file, and its next calls reuse those texts. Its tree is whole when the call parsed the file
//! whole anyway; a Rust file the call parsed only around its matches keeps its text, and the
//! next call that parses it parses it whole (when the matches are half of it or more) and
//! keeps that tree: a one-shot call does not pay for whole trees nobody reuses.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::fs::Metadata;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use super::Lang;
use super::matching::Root;
use super::prefilter::Words;
use crate::changeset::Fingerprint;

/// The budget of [`ParseCache::global`], the cache the built-in tools use when the session
/// registered none: 256 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// Bytes charged per node of a kept tree: what the process's resident memory grew by per
/// node when the whole benchmark corpus (3,633 files, 15 M nodes) was parsed and kept
/// (tree-sitter's subtrees and their child arrays, the allocator's share), rounded up. About
/// 38 bytes of cache per byte of Rust source (2.5 GB for the corpus's 67 MB).
pub const TREE_BYTES_PER_NODE: usize = 160;

/// Bytes of source per tree node, on average, to estimate a tree's cost before parsing: the
/// benchmark corpus has 15.3 M nodes in 67 MB of Rust (4.4 bytes each, rounded down so
/// that a tree is rather over- than underestimated).
const SOURCE_BYTES_PER_NODE: usize = 4;

/// A file modified this shortly before its entry was made is read again before reuse.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Parsed files kept between calls under a byte budget, shared by every clone (cheap).
///
/// ```
/// use xcsh_tools::engine::{self, Control, Lang, ParseCache, Scope, SearchRequest};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.rs"), "fn f() { x.unwrap(); }\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let cache = ParseCache::new(64 << 20);
/// let request = SearchRequest {
///     patterns: vec!["$X.unwrap()".into()],
///     lang: Some(Lang::Rust),
///     cache: Some(cache.clone()),
///     ..SearchRequest::default()
/// };
/// engine::search(&Scope::root(&ws), &request, &Control::default())?;
/// let found = engine::search(&Scope::root(&ws), &request, &Control::default())?;
/// assert_eq!(found.matches.len(), 1);
/// let stats = cache.stats();
/// assert_eq!((stats.entries, stats.parsed_hits), (1, 1));
/// assert!(stats.bytes > 0 && stats.bytes <= cache.budget());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ParseCache {
    inner: Arc<Mutex<Inner>>,
    budget: usize,
}

/// What a cache holds and has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Files kept.
    pub entries: usize,
    /// Bytes charged for them (text, words and estimated trees), at most the budget.
    pub bytes: usize,
    /// Lookups that reused a kept tree.
    pub parsed_hits: u64,
    /// Lookups that reused a kept text only (the file was not parsed before).
    pub text_hits: u64,
    /// Lookups that found nothing usable (not kept, or changed).
    pub misses: u64,
    /// Entries dropped for the budget.
    pub evictions: u64,
}

impl fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseCache")
            .field("budget", &self.budget)
            .field("stats", &self.stats())
            .finish()
    }
}

/// An entry's key: the file's absolute path, as bytes (the walk spells each path one way),
/// shared by the map and the order of use.
type Key = Arc<OsStr>;

#[derive(Default)]
struct Inner {
    entries: foldhash::HashMap<Key, Entry>,
    /// Last use → key, oldest first.
    by_use: BTreeMap<u64, Key>,
    clock: u64,
    /// The clock when the current call began.
    call_began: u64,
    /// The clock when the call before it began: entries used since are not evicted.
    previous_began: u64,
    /// Hashes of the paths whose text was read once and not kept (see the module's doc): a
    /// collision only keeps a text one read early.
    seen: foldhash::HashSet<u64>,
    stats: CacheStats,
}

/// Paths marked seen at most (about 4 MB of marks): past it the marks start again (a text is
/// then kept one read later), so that walking ever new files does not grow the set without
/// bound. A path is unmarked when its text is kept.
const SEEN_LIMIT: usize = 1 << 18;

struct Entry {
    /// Its key again, for the order of use.
    key: Key,
    /// The language it was parsed as: a look-up as another one misses (and replaces it).
    lang: Lang,
    stat: Stat,
    fingerprint: Fingerprint,
    text: Arc<str>,
    /// Its words, once a later call reused the entry (see [`ParseCache::keep`]).
    words: Option<Arc<Words>>,
    /// Whether there was room for its words when it was kept: they are built at its first
    /// reuse ([`ParseCache::add_words`]).
    wordable: bool,
    root: Option<Arc<Root>>,
    cost: usize,
    last_use: u64,
    /// When the entry was made or last checked against the file's content.
    verified: SystemTime,
}

/// The metadata that changes when a file is written or replaced.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stat {
    len: u64,
    modified: Option<SystemTime>,
    changed: (i64, i64),
    inode: (u64, u64),
}

impl Stat {
    /// The file's length.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        let (changed, inode) = {
            use std::os::unix::fs::MetadataExt as _;
            ((meta.ctime(), meta.ctime_nsec()), (meta.dev(), meta.ino()))
        };
        #[cfg(not(unix))]
        let (changed, inode) = ((0, 0), (0, 0));
        Stat {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
            inode,
        }
    }
}

/// A kept file handed to a walk.
pub(crate) struct Hit {
    pub text: Arc<str>,
    /// The text's words, for the prefilter to rule literals out without searching the text.
    pub words: Option<Arc<Words>>,
    /// Whether the entry wants its words built now (its first reuse): the walk builds them,
    /// outside the lock, and hands them to [`ParseCache::add_words`].
    pub wants_words: bool,
    pub root: Option<Arc<Root>>,
}

impl ParseCache {
    /// A cache holding at most `budget` bytes (0 keeps nothing).
    pub fn new(budget: usize) -> Self {
        Self {
            inner: Arc::default(),
            budget,
        }
    }

    /// The process-wide cache of [`DEFAULT_CACHE_BYTES`] that the built-in tools use when a
    /// session registered no `ParseCache` of its own (as an extension). Entries are keyed by
    /// absolute path, so sessions over different roots share it safely.
    pub fn global() -> &'static ParseCache {
        static GLOBAL: OnceLock<ParseCache> = OnceLock::new();
        GLOBAL.get_or_init(|| ParseCache::new(DEFAULT_CACHE_BYTES))
    }

    /// Its budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// What it holds and has done.
    pub fn stats(&self) -> CacheStats {
        self.lock().stats
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.entries.clear();
        inner.by_use.clear();
        inner.seen = foldhash::HashSet::default();
        inner.stats.entries = 0;
        inner.stats.bytes = 0;
    }

    /// Marks the start of a call (a search or a plan): what it uses from now on is not
    /// evicted to make room for what it reads later.
    pub(crate) fn begin_call(&self) {
        if self.budget > 0 {
            let mut inner = self.lock();
            inner.previous_began = inner.call_began;
            inner.call_began = inner.clock;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kept file at `path`, when its metadata says it is unchanged and it is not racy.
    pub(crate) fn fresh(&self, path: &Path, lang: Lang, stat: &Stat) -> Option<Hit> {
        if self.budget == 0 {
            return None;
        }
        let mut inner = self.lock();
        let key = path.as_os_str();
        let usable = inner.entries.get(key).is_some_and(|e| {
            e.lang == lang
                && e.stat == *stat
                && e.stat.modified.is_some_and(|m| {
                    e.verified
                        .duration_since(m)
                        .is_ok_and(|age| age >= RACY_WINDOW)
                })
        });
        if !usable {
            return None;
        }
        inner.touch(key)
    }

    /// The kept tree of `path` when `text`, read at `read_at`, has the fingerprint kept (its
    /// metadata changed, or it is racy): the entry is then renewed with `stat`, as verified
    /// then. The text is hashed only when there is a kept tree to compare it with, and
    /// outside the lock.
    pub(crate) fn same_content(
        &self,
        path: &Path,
        lang: Lang,
        stat: &Stat,
        text: &str,
        read_at: SystemTime,
    ) -> Option<Arc<Root>> {
        if self.budget == 0 {
            return None;
        }
        let key = path.as_os_str();
        {
            let mut inner = self.lock();
            let has_tree = inner
                .entries
                .get(key)
                .is_some_and(|e| e.lang == lang && e.root.is_some());
            if !has_tree {
                inner.stats.misses += 1;
                return None;
            }
        }
        let fingerprint = Fingerprint::of(text.as_bytes());
        let mut inner = self.lock();
        let same = inner.entries.get_mut(key).and_then(|entry| {
            let same = entry.lang == lang && entry.fingerprint == fingerprint;
            (same && entry.root.is_some()).then(|| {
                entry.stat = *stat;
                entry.verified = read_at;
            })
        });
        if same.is_none() {
            inner.stats.misses += 1;
            return None;
        }
        inner.touch(key).and_then(|hit| hit.root)
    }

    /// Keeps `text` (and `root`, when parsed whole) for `path`, evicting the least recently
    /// used entries past the budget. `verified` is when the text was read; `parsed`, whether
    /// the call parsed it (whole or in part). A text the call did not parse is kept only the
    /// second time (see the module's doc): the first time, the path is marked seen.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn keep(
        &self,
        path: &Path,
        lang: Lang,
        stat: Stat,
        verified: SystemTime,
        text: Arc<str>,
        root: Option<Arc<Root>>,
        parsed: bool,
    ) {
        if self.budget == 0 {
            return;
        }
        let seen = path_hash(path);
        if !parsed && self.first_sight(path, seen) {
            return;
        }
        let fingerprint = Fingerprint::of(text.as_bytes());
        // The words cost a pass over the text, paid back by the calls that reuse it. A cache
        // that is full evicts to admit, and a call over more files than it holds re-reads
        // most of them on every call: their words would be built each time and never
        // used (a fuller pass than the search they spare). So only a cache with room for
        // the entry builds them, and only when a later call reuses it: a session of one
        // call (a replayed script, a one-shot `xcsh session`) never pays for them.
        let cost = cost_of(&text, None, root.as_deref());
        let mut inner = self.lock();
        let wordable = cost <= self.budget.saturating_sub(inner.stats.bytes);
        inner.remove(path.as_os_str());
        if cost > self.budget {
            return;
        }
        let key = Key::from(path.as_os_str());
        inner.clock += 1;
        let last_use = inner.clock;
        inner.by_use.insert(last_use, Arc::clone(&key));
        inner.stats.bytes += cost;
        inner.stats.entries += 1;
        inner.entries.insert(
            Arc::clone(&key),
            Entry {
                key,
                lang,
                stat,
                fingerprint,
                text,
                words: None,
                wordable,
                root,
                cost,
                last_use,
                verified,
            },
        );
        inner.evict_to(self.budget);
        // Unmarked once kept: a text the budget turned away stays marked, so that it is kept
        // at the next read there is room for (not only every other one).
        if inner.entries.contains_key(path.as_os_str()) {
            inner.seen.remove(&seen);
        }
    }

    /// Whether this is the first time a text of `path` (whose [`path_hash`] is `hash`) is
    /// offered without a tree and nothing is kept for it: it is then marked seen.
    fn first_sight(&self, path: &Path, hash: u64) -> bool {
        let mut inner = self.lock();
        if inner.entries.contains_key(path.as_os_str()) || inner.seen.contains(&hash) {
            return false;
        }
        if inner.seen.len() >= SEEN_LIMIT {
            inner.seen = foldhash::HashSet::default();
        }
        inner.seen.insert(hash);
        true
    }

    /// Whether a parse of `text_len` bytes of source would be kept now: its estimated cost
    /// fits in the budget once every entry that may be evicted (one neither this call nor
    /// the one before used) is gone. A tree that would not be kept need not be whole.
    pub(crate) fn would_keep_tree(&self, text_len: usize) -> bool {
        let cost = charge(text_len, Some(text_len / SOURCE_BYTES_PER_NODE));
        if cost > self.budget {
            return false;
        }
        let inner = self.lock();
        let mut room = self.budget.saturating_sub(inner.stats.bytes);
        for (&used, key) in &inner.by_use {
            if room >= cost || used > inner.previous_began {
                break;
            }
            room += inner.entries.get(key).map_or(0, |e| e.cost);
        }
        room >= cost
    }

    /// Adds the words built from a kept text at its first reuse (a [`Hit`] that
    /// [`wants_words`](Hit::wants_words)), when the entry still holds that text.
    pub(crate) fn add_words(&self, path: &Path, text: &Arc<str>, words: Arc<Words>) {
        let mut inner = self.lock();
        let key = path.as_os_str();
        let Some(entry) = inner
            .entries
            .get_mut(key)
            .filter(|e| e.words.is_none() && Arc::ptr_eq(&e.text, text))
        else {
            return;
        };
        let grown = words.size();
        entry.words = Some(words);
        entry.cost = entry.cost.saturating_add(grown);
        let cost = entry.cost;
        inner.stats.bytes += grown;
        if cost > self.budget {
            inner.remove(key);
        }
        inner.evict_to(self.budget);
    }

    /// Adds the tree parsed from a kept text (its entry stays as verified before), when the
    /// entry still holds that `text`: another call may have kept a newer one meanwhile.
    pub(crate) fn add_root(&self, path: &Path, lang: Lang, text: &Arc<str>, root: Arc<Root>) {
        if self.budget == 0 {
            return;
        }
        let mut inner = self.lock();
        let key = path.as_os_str();
        let Some(entry) = inner
            .entries
            .get_mut(key)
            .filter(|e| e.lang == lang && Arc::ptr_eq(&e.text, text))
        else {
            return;
        };
        let cost = cost_of(&entry.text, entry.words.as_deref(), Some(&root));
        let grown = cost.saturating_sub(entry.cost);
        entry.root = Some(root);
        entry.cost = cost;
        inner.stats.bytes += grown;
        if cost > self.budget {
            inner.remove(key);
        }
        inner.evict_to(self.budget);
    }
}

/// The hash of a path that marks it seen (see [`ParseCache::keep`]).
fn path_hash(path: &Path) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::default().hash_one(path.as_os_str().as_encoded_bytes())
}

/// What an entry is charged: its text and its words, and a tree's own copy of the text and
/// its nodes.
fn cost_of(text: &str, words: Option<&Words>, root: Option<&Root>) -> usize {
    charge(
        text.len(),
        root.map(|r| r.root().get_inner_node().descendant_count()),
    )
    .saturating_add(words.map_or(0, Words::size))
}

/// The charge for `text_len` bytes of text and, when parsed, a tree of `nodes` nodes.
fn charge(text_len: usize, nodes: Option<usize>) -> usize {
    nodes.map_or(text_len, |nodes| {
        text_len
            .saturating_mul(2)
            .saturating_add(nodes.saturating_mul(TREE_BYTES_PER_NODE))
    })
}

impl Inner {
    /// Marks the entry at `key` used now and hands it out.
    fn touch(&mut self, key: &OsStr) -> Option<Hit> {
        self.clock += 1;
        let now = self.clock;
        let entry = self.entries.get_mut(key)?;
        let old = std::mem::replace(&mut entry.last_use, now);
        let hit = Hit {
            text: entry.text.clone(),
            words: entry.words.clone(),
            wants_words: entry.words.is_none() && entry.wordable,
            root: entry.root.clone(),
        };
        if hit.root.is_some() {
            self.stats.parsed_hits += 1;
        } else {
            self.stats.text_hits += 1;
        }
        self.by_use.remove(&old);
        self.by_use.insert(now, Arc::clone(&entry.key));
        Some(hit)
    }

    /// Drops the least recently used entries until at most `budget` bytes are charged; when
    /// only entries used by this call or the one before are left, the newest one goes
    /// instead (it is not admitted).
    fn evict_to(&mut self, budget: usize) {
        while self.stats.bytes > budget {
            let Some((&used, _)) = self.by_use.first_key_value() else {
                break;
            };
            let victim = if used > self.previous_began {
                self.by_use.pop_last()
            } else {
                self.by_use.pop_first()
            };
            let Some((_, oldest)) = victim else {
                break;
            };
            if let Some(gone) = self.entries.remove(&oldest) {
                self.stats.bytes -= gone.cost;
                self.stats.entries -= 1;
                self.stats.evictions += 1;
            }
        }
    }

    fn remove(&mut self, key: &OsStr) {
        if let Some(gone) = self.entries.remove(key) {
            self.by_use.remove(&gone.last_use);
            self.stats.bytes -= gone.cost;
            self.stats.entries -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offers `text` to `cache` as the walk does for a Rust file no call parsed.
    fn offer_text(cache: &ParseCache, path: &Path, stat: Stat, at: SystemTime, text: Arc<str>) {
        cache.keep(path, Lang::Rust, stat, at, text, None, false);
    }

    #[test]
    fn a_tree_would_be_kept_when_it_fits_once_evictable_entries_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "x".repeat(500)).unwrap();
        let stat = Stat::of(&std::fs::metadata(&path).unwrap());
        let text: Arc<str> = Arc::from("x".repeat(500));

        let cache = ParseCache::new(600);
        // 10 bytes: 20 of text and 2 nodes of 160 fit; 100 bytes (4,200) never do.
        assert!(cache.would_keep_tree(10));
        assert!(!cache.would_keep_tree(100));
        cache.begin_call();
        let now = SystemTime::now();
        // A text alone is kept the second time it is offered.
        offer_text(&cache, &path, stat, now, Arc::clone(&text));
        assert!(cache.would_keep_tree(10));
        offer_text(&cache, &path, stat, now, text);
        // 100 bytes of room left, and the entry this call used is not evicted.
        assert!(!cache.would_keep_tree(10));
        cache.begin_call();
        assert!(
            !cache.would_keep_tree(10),
            "the previous call's entry stays too"
        );
        cache.begin_call();
        assert!(cache.would_keep_tree(10), "an older entry can go");
        assert_eq!(cache.budget(), 600);
    }

    /// Words are built at an entry's first reuse, not when it is kept (a one-call session
    /// never pays for them), and charged then.
    #[test]
    fn words_are_built_and_charged_when_an_entry_is_first_reused() {
        let dir = tempfile::tempdir().unwrap();
        let keep = |cache: &ParseCache, name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let stat = Stat::of(&std::fs::metadata(&path).unwrap());
            let text: Arc<str> = Arc::from(text);
            let old = SystemTime::now() + RACY_WINDOW;
            offer_text(cache, &path, stat, old, Arc::clone(&text));
            offer_text(cache, &path, stat, old, text);
            (path, stat)
        };
        let cache = ParseCache::new(1 << 20);
        let text = "fn alpha() { beta(gamma) }";
        let (path, stat) = keep(&cache, "a.rs", text);
        assert_eq!(cache.stats().bytes, text.len(), "no words yet");
        let hit = cache.fresh(&path, Lang::Rust, &stat).unwrap();
        assert!(hit.words.is_none() && hit.wants_words);
        let words = Arc::new(Words::of(hit.text.as_bytes()));
        cache.add_words(&path, &hit.text, Arc::clone(&words));
        assert_eq!(cache.stats().bytes, text.len() + words.size());
        let again = cache.fresh(&path, Lang::Rust, &stat).unwrap();
        assert!(again.words.is_some() && !again.wants_words);

        // Words that do not fit in the budget take their entry out, charging nothing.
        let small = ParseCache::new(text.len() + 1);
        let (path, stat) = keep(&small, "b.rs", text);
        let hit = small.fresh(&path, Lang::Rust, &stat).unwrap();
        assert!(hit.wants_words);
        small.add_words(&path, &hit.text, words);
        assert_eq!((small.stats().bytes, small.stats().entries), (0, 0));
        assert!(small.fresh(&path, Lang::Rust, &stat).is_none());
    }

    /// A text no call parsed is only marked seen the first time (a one-shot call keeps none);
    /// the second read keeps it; a tree, or a text the call parsed, is kept at once.
    #[test]
    fn a_text_alone_is_kept_at_its_second_read_and_a_tree_at_its_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        let src = "fn alpha() {}\n";
        std::fs::write(&path, src).unwrap();
        let stat = Stat::of(&std::fs::metadata(&path).unwrap());
        let old = SystemTime::now() + RACY_WINDOW;
        let cache = ParseCache::new(1 << 20);
        offer_text(&cache, &path, stat, old, Arc::from(src));
        assert_eq!(cache.stats().entries, 0);
        assert!(cache.fresh(&path, Lang::Rust, &stat).is_none());
        offer_text(&cache, &path, stat, old, Arc::from(src));
        assert_eq!(cache.stats().entries, 1);
        assert!(cache.fresh(&path, Lang::Rust, &stat).is_some());

        let other = dir.path().join("b.rs");
        std::fs::write(&other, src).unwrap();
        let stat = Stat::of(&std::fs::metadata(&other).unwrap());
        let root = Arc::new(super::super::matching::parse(src, Lang::Rust).unwrap());
        let old = SystemTime::now() + RACY_WINDOW;
        cache.keep(
            &other,
            Lang::Rust,
            stat,
            old,
            Arc::from(src),
            Some(root),
            true,
        );
        assert!(
            cache
                .fresh(&other, Lang::Rust, &stat)
                .unwrap()
                .root
                .is_some()
        );

        // A text the call parsed (around its matches only) is kept at once too.
        let parsed = dir.path().join("c.rs");
        std::fs::write(&parsed, src).unwrap();
        let parsed_stat = Stat::of(&std::fs::metadata(&parsed).unwrap());
        let old = SystemTime::now() + RACY_WINDOW;
        cache.keep(
            &parsed,
            Lang::Rust,
            parsed_stat,
            old,
            Arc::from(src),
            None,
            true,
        );
        assert!(cache.fresh(&parsed, Lang::Rust, &parsed_stat).is_some());

        cache.clear();
        offer_text(&cache, &path, stat, old, Arc::from(src));
        assert_eq!(cache.stats().entries, 0, "clearing forgets what was seen");
    }

    /// A tree parsed from a text another call has since replaced (the file was edited, and
    /// read again) is not added to the newer entry.
    #[test]
    fn a_tree_of_a_replaced_text_is_not_added() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rs");
        std::fs::write(&path, "fn a() {}\n").unwrap();
        let stat = Stat::of(&std::fs::metadata(&path).unwrap());
        let old = SystemTime::now() + RACY_WINDOW;
        let cache = ParseCache::new(1 << 20);
        let first: Arc<str> = Arc::from("fn a() {}\n");
        offer_text(&cache, &path, stat, old, Arc::clone(&first));
        offer_text(&cache, &path, stat, old, Arc::clone(&first));
        let hit = cache.fresh(&path, Lang::Rust, &stat).unwrap();
        // Meanwhile the file is edited and another call keeps its new text.
        std::fs::write(&path, "fn b() {}\n").unwrap();
        let now = Stat::of(&std::fs::metadata(&path).unwrap());
        let old = SystemTime::now() + RACY_WINDOW;
        offer_text(&cache, &path, now, old, Arc::from("fn b() {}\n"));
        let root = Arc::new(super::super::matching::parse(&hit.text, Lang::Rust).unwrap());
        cache.add_root(&path, Lang::Rust, &hit.text, root);
        let kept = cache.fresh(&path, Lang::Rust, &now).unwrap();
        assert_eq!(&*kept.text, "fn b() {}\n");
        assert!(
            kept.root.is_none(),
            "the old text's tree was added to the new text"
        );
    }

    /// A text the budget turned away at its second read stays marked seen: it is kept at the
    /// next read that finds room, not every other one.
    #[test]
    fn a_text_turned_away_by_the_budget_is_kept_when_there_is_room() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, len: usize| {
            let path = dir.path().join(name);
            std::fs::write(&path, "x".repeat(len)).unwrap();
            let stat = Stat::of(&std::fs::metadata(&path).unwrap());
            let text: Arc<str> = Arc::from("x".repeat(len));
            (path, stat, text)
        };
        let (a, a_stat, a_text) = file("a.rs", 200);
        let (b, b_stat, b_text) = file("b.rs", 500);
        let old = SystemTime::now() + RACY_WINDOW;
        let cache = ParseCache::new(600);
        cache.begin_call();
        for _ in 0..2 {
            offer_text(&cache, &b, b_stat, old, Arc::clone(&b_text));
        }
        // This call's own entry is not evicted for it: turned away, twice.
        for _ in 0..2 {
            offer_text(&cache, &a, a_stat, old, Arc::clone(&a_text));
        }
        assert!(cache.fresh(&a, Lang::Rust, &a_stat).is_none());
        cache.begin_call();
        cache.begin_call();
        // `b` is two calls old now: `a` is kept at its first read of this call.
        offer_text(&cache, &a, a_stat, old, a_text);
        assert!(cache.fresh(&a, Lang::Rust, &a_stat).is_some());
        assert!(
            cache.fresh(&b, Lang::Rust, &b_stat).is_none(),
            "evicted for it"
        );
    }
}
