//! COUNTER and AGGREGATE handles: sums of per-thread cells that only
//! grow (a counter by one or more, an aggregate by any amount).

use std::marker::PhantomData;

use super::sharded::{Sharded, cell_handle, common_methods};
use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::cells::LocalCell;
use crate::hot::storage::Storage;
use crate::sync::{Arc, Ordering};
use crate::vocabulary::datatype::{Datatype, Magnitude, Repr};
use crate::vocabulary::kinds::PvarClass;

cell_handle!(Counter, Aggregate<T>: Magnitude);

/// A COUNTER: counts occurrences of an event; starts at 0.
///
/// `inc` and `add` are a relaxed load and a relaxed store of the calling
/// thread's own cell: no lock, no read-modify-write, no shared cache line.
/// Async-signal-safe: `inc`, `add`, `inc_at`, `add_at` yes, once this
/// thread has touched the variable's cells (an earlier update, or
/// [`Registry::prepare_thread`](crate::Registry::prepare_thread) after
/// registration), and provided the
/// interrupted code is not updating the same element on this thread; `get`
/// yes; `local` only after its first call on this thread.
#[derive(Clone)]
pub struct Counter {
    core: Sharded,
}

impl ClassHandle for Counter {
    const CLASS: PvarClass = PvarClass::Counter;
    const DATATYPE: Datatype = Datatype::UnsignedLongLong;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl FromStorage for Counter {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        Self {
            core: Sharded::new(id, storage),
        }
    }
}

impl Counter {
    /// Adds 1 to element 0.
    #[inline(always)]
    pub fn inc(&self) {
        self.core.update(0, move |v| v.wrapping_add(1));
    }

    /// Adds `n` to element 0.
    #[inline(always)]
    pub fn add(&self, n: u64) {
        self.core.update(0, move |v| v.wrapping_add(n));
    }

    /// Adds 1 to element `i`. Panics if `i >= count`.
    #[inline(always)]
    pub fn inc_at(&self, i: usize) {
        self.core.update(i, move |v| v.wrapping_add(1));
    }

    /// Adds `n` to element `i`. Panics if `i >= count`.
    #[inline(always)]
    pub fn add_at(&self, i: usize, n: u64) {
        self.core.update(i, move |v| v.wrapping_add(n));
    }

    /// The total of element 0 over all threads (since registration).
    pub fn get(&self) -> u64 {
        self.core.merged(0)
    }

    /// The total of element `i` over all threads.
    pub fn get_at(&self, i: usize) -> u64 {
        self.core.merged(i)
    }

    /// A handle to element `i` bound to the calling thread: fetch it once,
    /// then each `inc` is one relaxed load and one relaxed store of a cell
    /// whose address is already known. Not `Send`: it must stay on the
    /// thread that made it. Made on a thread whose exit has begun (in a
    /// thread-local destructor), it updates the variable's shared record
    /// for exited threads with atomic adds instead.
    ///
    /// Do not keep one past the start of the thread's exit (in a
    /// thread-local whose destructor runs after pvar's): the thread's cells
    /// may then pass to a new thread, and both would write them.
    pub fn local(&self, i: usize) -> LocalCounter<'_> {
        LocalCounter {
            cell: self.core.local_cell(i),
            _not_send: PhantomData,
        }
    }

    common_methods!();
}

/// A counter element bound to the calling thread; see [`Counter::local`].
///
/// Async-signal-safe: yes (a load and a store of this thread's existing
/// cell), except against an update of the same element it interrupted.
pub struct LocalCounter<'a> {
    cell: LocalCell<'a>,
    _not_send: PhantomData<*const ()>,
}

impl LocalCounter<'_> {
    /// Adds 1.
    #[inline(always)]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Adds `n`.
    #[inline(always)]
    pub fn add(&self, n: u64) {
        if ENABLED {
            let cell = self.cell.cell;
            if self.cell.shared {
                cell.fetch_add(n, Ordering::Relaxed);
            } else {
                // Single writer: the cell belongs to this thread.
                cell.store(
                    cell.load(Ordering::Relaxed).wrapping_add(n),
                    Ordering::Relaxed,
                );
            }
        }
    }
}

/// An AGGREGATE: a sum of non-negative amounts (bytes, …); starts at 0.
/// `T` is `u32`, `u64` or `f64`. Updates cost what [`Counter`] updates do.
///
/// Async-signal-safe: as [`Counter`].
pub struct Aggregate<T: Magnitude> {
    core: Sharded,
    _t: PhantomData<T>,
}

impl<T: Magnitude> Clone for Aggregate<T> {
    fn clone(&self) -> Self {
        Self {
            core: self.core.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Magnitude> ClassHandle for Aggregate<T> {
    const CLASS: PvarClass = PvarClass::Aggregate;
    const DATATYPE: Datatype = T::DATATYPE;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl<T: Magnitude> FromStorage for Aggregate<T> {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        debug_assert_eq!(storage.repr == Repr::Float, T::IS_FLOAT, "cells fit T");
        Self {
            core: Sharded::new(id, storage),
            _t: PhantomData,
        }
    }
}

impl<T: Magnitude> Aggregate<T> {
    /// Adds `x` to element 0.
    #[inline(always)]
    pub fn add(&self, x: T) {
        self.add_at(0, x);
    }

    /// Adds `x` to element `i`. Panics if `i >= count`.
    #[inline(always)]
    pub fn add_at(&self, i: usize, x: T) {
        let bits = x.to_bits();
        // A constant per `T` (see `Value::IS_FLOAT`): no branch at run time.
        if T::IS_FLOAT {
            self.core.update(i, move |v| {
                (f64::from_bits(v) + f64::from_bits(bits)).to_bits()
            });
        } else {
            self.core.update(i, move |v| v.wrapping_add(bits));
        }
    }

    /// The total of element 0 over all threads.
    pub fn get(&self) -> T {
        T::from_bits(self.core.merged(0))
    }

    /// The total of element `i` over all threads.
    pub fn get_at(&self, i: usize) -> T {
        T::from_bits(self.core.merged(i))
    }

    common_methods!();
}
