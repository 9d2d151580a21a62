//! Support for xcsh's benchmarks (see `BENCHMARKS.md` at the repository root).
//!
//! * [`CountingAlloc`]: a global allocator wrapper that counts allocations per thread, so a
//!   benchmark or test can assert that a path allocates nothing.
//! * `xcsh-apply-bench` (a binary): a durable `ChangeSet` apply against plain writes of the
//!   same bytes, with where the apply's time goes, for `bench/apply_bench.py`.
//! * `xcsh-plan-stats` (a binary): the engine's own counts (files scanned and parsed,
//!   replacements) for a pattern, which `bench/cli_bench.py` puts beside the timings.
//! * `benches/dispatch.rs`: `Session::call` against rmcp's tool router, the pending round
//!   trip, and schema retrieval.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    // `const` and without a destructor: reading it never allocates, which an allocator needs.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Wraps a global allocator and counts the allocations (and reallocations) of each thread.
///
/// ```
/// use xcsh_bench::{CountingAlloc, allocations_in};
///
/// #[global_allocator]
/// static ALLOC: CountingAlloc<std::alloc::System> = CountingAlloc::new(std::alloc::System);
///
/// let (n, _) = allocations_in(|| 1 + 1);
/// assert_eq!(n, 0);
/// let (n, v) = allocations_in(|| vec![1u8; 16]);
/// assert_eq!((n, v.len()), (1, 16));
/// ```
pub struct CountingAlloc<A> {
    inner: A,
}

impl<A> CountingAlloc<A> {
    /// Counts the allocations made through `inner`.
    pub const fn new(inner: A) -> Self {
        CountingAlloc { inner }
    }
}

fn count_one() {
    // `try_with`: during thread teardown the slot may be gone; such allocations are not ours.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to the wrapped allocator with the same arguments; counting
// touches only a thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { self.inner.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as for `alloc`; `ptr` came from this allocator, which is `inner`.
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `realloc`.
        unsafe { self.inner.dealloc(ptr, layout) }
    }
}

/// Allocations made so far by the current thread (only under a [`CountingAlloc`]).
pub fn thread_allocations() -> u64 {
    ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}

/// Runs `f` and returns how many allocations the current thread made meanwhile.
pub fn allocations_in<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = thread_allocations();
    let value = f();
    (thread_allocations() - before, value)
}
