//! Every thread-local the engine uses, in one place.
//!
//! In the normal build these are `std` thread-locals with `const`
//! initialisers and no destructor (except the exit guard), so reading them
//! is a plain `fs`-relative load: no lazy initialisation, no registration,
//! nothing a signal handler could trip on. Under `--cfg loom` they are
//! loom's thread-locals, which give each modelled thread its own slot.
//!
//! The record cache is two words: the id of the cell space the cached
//! record belongs to, and the record pointer. Ids are never reused, so a
//! pointer whose cell space has been dropped is never dereferenced: its id
//! no longer matches anything. `UPDATING` keeps a signal handler that
//! interrupts a cache update from interleaving its own (see
//! [`set_cached_record`]).

use std::cell::Cell;

use super::record::ThreadRecord;
use super::thread_id::ExitGuard;
use crate::sync::{Ordering, compiler_fence};

#[cfg(not(loom))]
std::thread_local! {
    static THREAD_ID: Cell<u32> = const { Cell::new(0) };
    static INCARNATION: Cell<u64> = const { Cell::new(0) };
    static CACHE_SPACE: Cell<u64> = const { Cell::new(0) };
    static CACHE_RECORD: Cell<*const ThreadRecord> = const { Cell::new(core::ptr::null()) };
    static UPDATING: Cell<bool> = const { Cell::new(false) };
    static EXIT_GUARD: Cell<Option<ExitGuard>> = const { Cell::new(None) };
}

#[cfg(loom)]
loom::thread_local! {
    static THREAD_ID: Cell<u32> = Cell::new(0);
    static INCARNATION: Cell<u64> = Cell::new(0);
    static CACHE_SPACE: Cell<u64> = Cell::new(0);
    static CACHE_RECORD: Cell<*const ThreadRecord> = Cell::new(core::ptr::null());
    static UPDATING: Cell<bool> = Cell::new(false);
    static EXIT_GUARD: Cell<Option<ExitGuard>> = Cell::new(None);
}

#[inline]
pub(crate) fn thread_id() -> u32 {
    THREAD_ID.with(|c| c.get())
}

pub(crate) fn set_thread_id(id: u32) {
    // `try_with`: may run from the exit guard while TLS is torn down.
    let _ = THREAD_ID.try_with(|c| c.set(id));
}

/// This thread's incarnation (0 before it has an id). Async-signal-safe.
#[inline]
pub(crate) fn incarnation() -> u64 {
    INCARNATION.with(|c| c.get())
}

pub(crate) fn set_incarnation(n: u64) {
    let _ = INCARNATION.try_with(|c| c.set(n));
}

/// The cached record if it belongs to cell space `space`. Async-signal-safe.
#[inline(always)]
pub(crate) fn cached_record(space: u64) -> Option<*const ThreadRecord> {
    if CACHE_SPACE.with(|c| c.get()) == space {
        Some(CACHE_RECORD.with(|c| c.get()))
    } else {
        None
    }
}

/// Caches `record` as this thread's record for `space`.
///
/// Async-signal-safe. If a signal handler interrupts this function and
/// calls it again, the handler's call sees `UPDATING` and leaves the cache
/// alone, so the pair can never end up mixing two updates; the handler still
/// gets a correct record (it looked it up itself).
pub(crate) fn set_cached_record(space: u64, record: *const ThreadRecord) {
    if UPDATING.with(|u| u.get()) {
        return;
    }
    UPDATING.with(|u| u.set(true));
    compiler_fence(Ordering::SeqCst);
    CACHE_SPACE.with(|c| c.set(0));
    compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    crate::sync::signal::point();
    CACHE_RECORD.with(|c| c.set(record));
    compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    crate::sync::signal::point();
    CACHE_SPACE.with(|c| c.set(space));
    compiler_fence(Ordering::SeqCst);
    UPDATING.with(|u| u.set(false));
}

/// Forgets the cached record (at thread exit).
pub(crate) fn clear_cache() {
    let _ = CACHE_SPACE.try_with(|c| c.set(0));
}

/// Installs the guard whose destructor runs at thread exit. Returns `false`
/// (dropping the guard) if this thread's thread-locals are being destroyed.
pub(crate) fn install_exit_guard(guard: ExitGuard) -> bool {
    let mut guard = Some(guard);
    let installed = EXIT_GUARD
        .try_with(|g| {
            g.set(guard.take());
        })
        .is_ok();
    drop(guard);
    installed
}

/// Loom only: runs this thread's exit guard now, as thread exit would.
/// (loom runs thread-local destructors after `join` has returned, too late
/// for the guard's modelled mutex.)
#[cfg(loom)]
pub(crate) fn run_exit_guard() {
    let guard = EXIT_GUARD.with(|g| g.take());
    drop(guard);
}
