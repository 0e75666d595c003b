//! Loom only (`--cfg loom`): thin public wrappers over the engine's
//! internal concurrent structures, for the models in `loom-tests/`.
//!
//! Nothing here adds logic: every method forwards to the engine code that
//! the normal build runs, which under `--cfg loom` is built on loom's
//! atomics, mutexes, cells and thread-locals (see `sync`). The tool-side
//! protocols (sessions, handles and their run words, watermark
//! subscriptions, readreset, free) are driven through the public
//! [`Registry`](crate::Registry) API instead.
//!
//! Rule for models: a model's main thread must not update a sharded
//! variable (it would take a thread id, whose exit guard runs after loom has
//! dropped the id allocator); do updates on spawned, joined threads.

#![allow(missing_docs, clippy::new_without_default)]

use crate::cells::{self, CellSpace};

/// A registry's per-thread cell space.
pub struct Cells(CellSpace);

/// One cell address (the same in every thread's record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellSlot(cells::Slot);

impl Cells {
    pub fn new() -> Self {
        Self(CellSpace::new())
    }
    /// Reserves one cell.
    pub fn alloc(&self) -> CellSlot {
        CellSlot(self.0.alloc(1).expect("cell space"))
    }
    /// Reserves `len` consecutive cells; `slot.at(i)` names cell `i`.
    pub fn alloc_n(&self, len: usize) -> CellSlot {
        CellSlot(self.0.alloc(len).expect("cell space"))
    }
    /// Gives `len` cells at `slot` back, zeroing them in every record (the
    /// caller guarantees nobody updates them any more).
    pub fn release(&self, slot: CellSlot, len: usize) {
        self.0.release(slot.0, len)
    }
    /// The owning thread's update (relaxed load + relaxed store).
    pub fn add(&self, slot: CellSlot, n: u64) {
        self.0.update(slot.0, |v| v.wrapping_add(n));
    }
    /// Merged read over every thread's record and the orphan record.
    pub fn sum(&self, slot: CellSlot) -> u64 {
        self.0.sum(slot.0)
    }
    /// The calling thread's own cell value.
    pub fn load_local(&self, slot: CellSlot) -> u64 {
        self.0.load_local(slot.0)
    }
    pub fn thread_records(&self) -> usize {
        self.0.thread_records()
    }
    pub fn prepare_thread(&self) {
        self.0.prepare_thread()
    }
}

impl CellSlot {
    pub fn at(self, i: usize) -> CellSlot {
        CellSlot(self.0.at(i))
    }
}

/// The calling thread's raw pvar thread id (0 = none yet).
pub fn thread_id() -> u32 {
    cells::thread_id::current_raw()
}

/// Runs the calling thread's exit guard now, as thread exit would: the id
/// goes back to the free list (a later thread continues in its records) and
/// later updates from this thread go to the shared orphan record. Every
/// modelled thread that updated must call this last: loom runs thread-local
/// destructors only after `join` has returned.
pub fn thread_exit() {
    cells::tls::run_exit_guard()
}

/// Number of thread ids held by live threads.
pub fn live_threads() -> u32 {
    cells::live_threads()
}

/// The append-only vector behind the registry, records and slot tables.
pub struct AppendVec<T>(crate::sync::append_vec::AppendVec<T>);

impl<T> AppendVec<T> {
    pub fn new() -> Self {
        Self(crate::sync::append_vec::AppendVec::new())
    }
    pub fn push(&self, v: T) -> usize {
        self.0.push(v)
    }
    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
}

/// A modelled signal handler (see `sync::signal`).
pub mod signal {
    /// Runs `handler` on this thread at the `skip`-th signal point it
    /// passes (0 = the next one): at every merged read of a variable's
    /// current value (between the load of a handle's word and its
    /// compare-and-swap or re-check), and in a watermark start between the
    /// marks becoming started and the started count being raised.
    pub fn arm(skip: usize, handler: impl FnOnce() + 'static) {
        crate::sync::signal::arm(skip, Box::new(handler))
    }
    /// Whether the armed handler has not run yet.
    pub fn pending() -> bool {
        crate::sync::signal::pending()
    }
    /// Drops the armed handler if it has not run; returns whether it had
    /// not (so that it cannot fire in a later operation).
    pub fn disarm() -> bool {
        crate::sync::signal::disarm()
    }
}
