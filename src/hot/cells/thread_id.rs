//! Process-wide small thread ids, reused after a thread exits.
//!
//! A thread gets an id on its first update to any registry (not
//! async-signal-safe: it takes a mutex and registers a thread-local
//! destructor). When the thread exits the id goes back to a free list; the
//! next thread that takes it also takes over the per-thread records that
//! carry that id in every registry, so counts of exited threads are kept,
//! never lost and never counted twice (each record has one writer at a
//! time, and the hand-over goes through the free list's mutex).
//!
//! After a thread's exit destructor has run, its id reads [`EXITED`]; the
//! few updates made by later thread-local destructors go to a shared
//! "orphan" record with atomic read-modify-writes.
//!
//! Each thread that takes an id also gets an **incarnation**, unique in the
//! process. A record remembers the incarnation of the thread that last took
//! it over: what the record holds for its owner alone (a TIMER's start
//! ticks) is cleared when another thread takes it over (see
//! `CellSpace::claim`).
//!
//! This module owns the thread-locals of a thread's identity (its id, its
//! incarnation, its exit guard); the record cache is
//! [`record::cache`](super::record::cache)'s and the use-site caches are
//! [`site_cache`](super::site_cache)'s, which it clears at exit.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::record::cache as record_cache;
use super::site_cache;
use crate::sync::{Mutex, Ordering, compiler_fence, unmodelled};

/// No id assigned yet.
pub(crate) const UNASSIGNED: u32 = 0;
/// The thread has run its exit destructor.
pub(crate) const EXITED: u32 = u32::MAX;

struct Allocator {
    next: u32,
    free: BinaryHeap<Reverse<u32>>,
}

#[cfg(not(loom))]
static ALLOCATOR: Mutex<Allocator> = Mutex::new(Allocator {
    next: 1,
    free: BinaryHeap::new(),
});

// loom cannot create its mutex in a plain static. A loom lazy static is
// created afresh in every modelled execution (ids start at 1 each time) and
// its mutex makes the id hand-over a modelled synchronisation. A model's
// main thread must not take an id: loom drops lazy statics before the main
// thread's thread-locals, so its exit guard would find no allocator. Nor
// may any modelled thread leave its guard to loom's thread-local teardown,
// which runs after `join` has returned: models end each thread that took an
// id with `loom_api::thread_exit`.
#[cfg(loom)]
crate::sync::lazy_static! {
    static ref ALLOCATOR: Mutex<Allocator> = Mutex::new(Allocator {
        next: 1,
        free: BinaryHeap::new(),
    });
}

crate::sync::engine_thread_local! {
    static THREAD_ID: Cell<u32> = Cell::new(UNASSIGNED);
    static INCARNATION: Cell<u64> = Cell::new(0);
    static EXIT_GUARD: Cell<Option<ExitGuard>> = Cell::new(None);
}

/// The last incarnation handed out (see the module documentation).
static INCARNATIONS: unmodelled::AtomicU64 = unmodelled::AtomicU64::new(0);

/// Ids currently held, kept beside the allocator so that reading it needs
/// no lock (the engine's own `pvar_engine_live_threads` variable reads it,
/// possibly from a signal handler).
static LIVE: unmodelled::AtomicU32 = unmodelled::AtomicU32::new(0);

/// Runs at thread exit (owned by a thread-local): marks the thread
/// exited, clears the use-site caches and the record cache, and hands the
/// id back.
struct ExitGuard(u32);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        // First, so that no cache is filled again from here on (a later
        // update, or a signal handler's, goes to the orphan record).
        // `try_with`: this runs while the thread's TLS is torn down.
        let _ = THREAD_ID.try_with(|c| c.set(EXITED));
        compiler_fence(Ordering::SeqCst);
        site_cache::clear_all();
        site_cache::release_c_owner();
        record_cache::clear();
        compiler_fence(Ordering::SeqCst);
        ALLOCATOR.lock().free.push(Reverse(self.0));
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// This thread's raw id: [`UNASSIGNED`], [`EXITED`], or an id ≥ 1.
/// Async-signal-safe (a `const`-initialised thread-local).
#[inline]
pub(crate) fn current_raw() -> u32 {
    THREAD_ID.with(|c| c.get())
}

/// This thread's incarnation (0 before it has an id). Async-signal-safe.
#[inline]
pub(crate) fn incarnation() -> u64 {
    INCARNATION.with(|c| c.get())
}

/// This thread's id, assigning one on first use. Returns `None` once the
/// thread is exiting. Not async-signal-safe on first use.
pub(crate) fn current_or_assign() -> Option<u32> {
    match current_raw() {
        EXITED => None,
        UNASSIGNED => Some(assign()).filter(|&id| id != EXITED),
        id => Some(id),
    }
}

#[cold]
fn assign() -> u32 {
    let id = {
        let mut alloc = ALLOCATOR.lock();
        match alloc.free.pop() {
            Some(Reverse(id)) => id,
            None => {
                let id = alloc.next;
                assert!(id < EXITED - 1, "pvar: thread ids exhausted");
                alloc.next += 1;
                id
            }
        }
    };
    // Counted before the guard exists: the guard's drop uncounts it.
    LIVE.fetch_add(1, Ordering::Relaxed);
    let _ = INCARNATION.try_with(|c| c.set(INCARNATIONS.fetch_add(1, Ordering::Relaxed) + 1));
    // `try_with` fails only while this thread's TLS is being torn down;
    // the refused guard is then dropped, which hands the id back and marks
    // the thread exited.
    let mut guard = Some(ExitGuard(id));
    let installed = EXIT_GUARD.try_with(|g| g.set(guard.take())).is_ok();
    drop(guard);
    if !installed {
        return EXITED;
    }
    let _ = THREAD_ID.try_with(|c| c.set(id));
    id
}

/// Number of thread ids currently held by live threads.
/// Async-signal-safe: one atomic load (no lock).
pub(crate) fn live_threads() -> u32 {
    LIVE.load(Ordering::Relaxed)
}

/// Loom only: runs this thread's exit guard now, as thread exit would.
/// (loom runs thread-local destructors after `join` has returned, too late
/// for the guard's modelled mutex.)
#[cfg(loom)]
pub(crate) fn run_exit_guard() {
    let guard = EXIT_GUARD.with(|g| g.take());
    drop(guard);
}
