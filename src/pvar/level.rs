//! LEVEL handles: per-thread cells whose sum is the current level (each
//! thread adds and subtracts its own part).

use std::marker::PhantomData;

use super::sharded::{Sharded, cell_handle, common_methods};
use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::storage::Storage;
use crate::sync::Arc;
use crate::vocabulary::datatype::{Datatype, Magnitude, Repr};
use crate::vocabulary::kinds::PvarClass;

cell_handle!(Level<T>: Magnitude);

/// A LEVEL: current utilisation of a resource (queue length, bytes in use).
///
/// Kept as per-thread deltas, so `inc`/`dec` are as cheap as a counter
/// update and exact across threads; a tool reads their sum (clamped at 0:
/// a sum of per-thread snapshots can be transiently negative when one thread
/// removes what another has just added). `set` writes one shared cell per
/// element (the cell space's orphan cell) with a compare-and-swap, so that
/// the sum becomes the value set; see [`Level::set_at`] for its exact
/// guarantees.
///
/// Async-signal-safe: as [`Counter`](crate::Counter); `set`/`set_at` too (a lock-free
/// compare-and-swap loop; the shared cell is allocated when the handle is
/// created), also when the handler interrupts a `set` of the same element.
pub struct Level<T: Magnitude> {
    core: Sharded,
    _t: PhantomData<T>,
}

impl<T: Magnitude> Clone for Level<T> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Magnitude> ClassHandle for Level<T> {
    const CLASS: PvarClass = PvarClass::Level;
    const DATATYPE: Datatype = T::DATATYPE;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl<T: Magnitude> FromStorage for Level<T> {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        debug_assert_eq!(storage.repr == Repr::Float, T::IS_FLOAT, "cells fit T");
        let core = Sharded::new(id, storage);
        if ENABLED {
            // `set` writes the orphan record's cell: allocate its chunk now
            // (registration may allocate), so that `set` never does. The
            // storage's elements never straddle a chunk: one call covers all.
            core.cells.prepare_orphan();
        }
        Self {
            core,
            _t: PhantomData,
        }
    }
}

impl<T: Magnitude> Level<T> {
    #[inline(always)]
    fn delta(&self, i: usize, amount: f64, int: u64) {
        if T::IS_FLOAT {
            self.core
                .update(i, move |v| (f64::from_bits(v) + amount).to_bits());
        } else {
            self.core.update(i, move |v| v.wrapping_add(int));
        }
    }

    /// Adds 1 to element 0.
    #[inline(always)]
    pub fn inc(&self) {
        self.delta(0, 1.0, 1);
    }

    /// Subtracts 1 from element 0.
    #[inline(always)]
    pub fn dec(&self) {
        self.delta(0, -1.0, u64::MAX);
    }

    /// Adds 1 to element `i`.
    #[inline(always)]
    pub fn inc_at(&self, i: usize) {
        self.delta(i, 1.0, 1);
    }

    /// Subtracts 1 from element `i`.
    #[inline(always)]
    pub fn dec_at(&self, i: usize) {
        self.delta(i, -1.0, u64::MAX);
    }

    /// Adds `x` to element 0: as exact and as cheap as [`Level::inc`].
    /// For `f64` the amount joins the calling thread's delta, so
    /// [`Level::set_at`]'s bit-exactness then holds only where that sum of
    /// deltas is exact (as for any `f64` sum).
    #[inline(always)]
    pub fn add(&self, x: T) {
        self.add_at(0, x);
    }

    /// Subtracts `x` from element 0 (see [`Level::add`]).
    #[inline(always)]
    pub fn sub(&self, x: T) {
        self.sub_at(0, x);
    }

    /// Adds `x` to element `i` (see [`Level::add`]).
    #[inline(always)]
    pub fn add_at(&self, i: usize, x: T) {
        let bits = x.to_bits();
        self.delta(i, f64::from_bits(bits), bits);
    }

    /// Subtracts `x` from element `i` (see [`Level::add`]).
    #[inline(always)]
    pub fn sub_at(&self, i: usize, x: T) {
        let bits = x.to_bits();
        self.delta(i, -f64::from_bits(bits), bits.wrapping_neg());
    }

    /// Sets element 0 to `x`. See [`Level::set_at`].
    pub fn set(&self, x: T) {
        self.set_at(0, x);
    }

    /// Sets element `i` to `x`.
    ///
    /// The level is the sum of every thread's delta cell (written only by
    /// its own thread's `inc`/`dec`) and of one shared cell per element
    /// (the cell space's orphan cell, which also takes the updates of
    /// exiting threads). `set_at` stores `x − (sum of the thread cells)`
    /// into the shared cell with a compare-and-swap loop that re-reads the
    /// thread cells on each attempt. It writes no thread's delta.
    ///
    /// Guarantees:
    /// - **Sets are last-writer-wins, also when they race**: every set ends
    ///   with a CAS on the same cell whose new value does not depend on the
    ///   old one, so the set whose CAS comes last in that cell's
    ///   modification order determines the level. With no `inc`/`dec`
    ///   running at the same time, the level is then exactly that set's
    ///   `x`: two threads setting 100 and 200 at once leave 100 or 200,
    ///   never 300. Sets ordered by the component (one setting thread, or
    ///   sets under the component's lock) therefore leave the last value
    ///   set in that order.
    /// - **`inc`/`dec` are always exact**: each one counts once. One that
    ///   races with a set counts as if it came before the set (the set saw
    ///   it and cancels it) or after it (added on top); which is
    ///   unspecified. One that happens-before the set (same thread, or
    ///   ordered by a lock or another release/acquire) is always before it.
    /// - **`f64` precision**: the thread cells hold integers (±1 steps,
    ///   exact below 2^53), so the only rounding is `x − (their sum)`:
    ///   none when no thread holds a nonzero delta (then any `x` is read
    ///   back bit-exactly, e.g. `set(1e17)` then `set(3.0)` reads 3.0), nor
    ///   when the difference is representable (e.g. deltas summing to 5,
    ///   `set(2.5)` reads 2.5).
    ///
    /// Cost: O(thread records) loads and one CAS (more if sets race).
    /// Async-signal-safe once the handle exists (its creation allocated the
    /// shared cell): no lock, no allocation, no thread-local; a handler that
    /// interrupts a set of the same element on the same thread makes the
    /// interrupted CAS fail and retry, so the set that completes last wins.
    /// Works on an exiting thread as well (it needs no thread id).
    pub fn set_at(&self, i: usize, x: T) {
        if ENABLED {
            self.core.check(i);
            self.core.cells.set_total(i, x.to_bits(), T::IS_FLOAT);
        }
    }

    /// [`Level::set_at`] with a 64-bit pattern (the C interface's
    /// `pvar_set` of an `MPI_UNSIGNED` level): the level is kept whole and
    /// fitted to the datatype when read.
    #[cfg_attr(not(feature = "ffi"), allow(dead_code))]
    pub(crate) fn set_bits_at(&self, i: usize, bits: u64) {
        if ENABLED {
            self.core.check(i);
            self.core.cells.set_total(i, bits, T::IS_FLOAT);
        }
    }

    /// The current level of element 0.
    pub fn get(&self) -> T {
        self.get_at(0)
    }

    /// The current level of element `i`.
    pub fn get_at(&self, i: usize) -> T {
        T::from_bits(self.core.storage.to_output(self.core.merged(i)))
    }

    common_methods!();
}
