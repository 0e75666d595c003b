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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::tls;

/// No id assigned yet.
pub(crate) const UNASSIGNED: u32 = 0;
/// The thread has run its exit destructor.
pub(crate) const EXITED: u32 = u32::MAX;

struct Allocator {
    next: u32,
    free: BinaryHeap<Reverse<u32>>,
}

#[cfg(not(loom))]
static ALLOCATOR: std::sync::Mutex<Allocator> = std::sync::Mutex::new(Allocator {
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
loom::lazy_static! {
    static ref ALLOCATOR: crate::sync::Mutex<Allocator> = crate::sync::Mutex::new(Allocator {
        next: 1,
        free: BinaryHeap::new(),
    });
}

/// Runs at thread exit (owned by a thread-local): clears the record cache,
/// marks the thread exited and hands the id back.
pub(crate) struct ExitGuard(pub(crate) u32);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        tls::clear_cache();
        tls::set_thread_id(EXITED);
        let mut alloc = ALLOCATOR.lock().unwrap_or_else(|e| e.into_inner());
        alloc.free.push(Reverse(self.0));
        LIVE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// This thread's raw id: [`UNASSIGNED`], [`EXITED`], or an id ≥ 1.
/// Async-signal-safe.
#[inline]
pub(crate) fn current_raw() -> u32 {
    tls::thread_id()
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
        let mut alloc = ALLOCATOR.lock().unwrap_or_else(|e| e.into_inner());
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
    LIVE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tls::set_incarnation(INCARNATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    // `try_with` fails only while this thread's TLS is being torn down; the
    // id then behaves as exited for this registry call.
    if !tls::install_exit_guard(ExitGuard(id)) {
        // This thread's TLS is being torn down. The refused guard was
        // dropped, which handed the id back and marked the thread exited.
        return EXITED;
    }
    tls::set_thread_id(id);
    id
}

/// Number of thread ids currently held by live threads.
/// Async-signal-safe: one atomic load (no lock).
pub(crate) fn live_threads() -> u32 {
    LIVE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The last incarnation handed out (see the module documentation).
static INCARNATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Ids currently held, kept beside the allocator so that reading it needs
/// no lock (the engine's own `pvar_engine_live_threads` variable reads it,
/// possibly from a signal handler).
static LIVE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
