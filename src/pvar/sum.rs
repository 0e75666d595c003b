//! COUNTER, AGGREGATE and TIMER handles, and LEVEL: classes whose value is
//! a sum of per-thread cells.

use std::marker::PhantomData;
use std::time::Duration;

use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::cells::{CellRange, LocalCell, OwnedCell};
use crate::hot::clock::Clock;
use crate::hot::storage::{Backing, Storage};
use crate::sync::{Arc, Ordering};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::Magnitude;
use crate::vocabulary::datatype::Repr;
use crate::vocabulary::kinds::PvarClass;

/// What every handle over per-thread cells holds: the cells (which cache
/// their space's id and base address, so an update reads only the handle,
/// the thread's record cache, the record and the cell), the element count,
/// the storage (kept alive; reached on cold paths and reads), and which
/// variable it is.
///
/// Exactly one 64-byte cache line, aligned to it (asserted below on 64-bit
/// targets): the handle's fields never share a line with other data that
/// another thread may write (an `Arc` count, a neighbouring heap object, a
/// hot field of the user's struct). Measured: with the handle in an `Arc`
/// shared by two updating threads, `Counter::inc` per thread went from
/// 1.95 ns unaligned to 1.14-1.20 ns aligned (1 thread: 1.13 ns).
#[derive(Clone)]
#[repr(align(64))]
pub(crate) struct Sharded {
    cells: CellRange,
    count: usize,
    storage: Arc<Storage>,
    id: VarId,
}

// loom's `Arc` is larger than std's: the size holds in the real build.
#[cfg(all(target_pointer_width = "64", not(loom)))]
const _: () = assert!(std::mem::size_of::<Sharded>() == 64);

impl Sharded {
    fn new(id: VarId, storage: Arc<Storage>) -> Self {
        let Backing::Sharded { cells } = &storage.backing else {
            unreachable!("sharded class has sharded storage")
        };
        // Element 0 always exists, so `check(0)` can be skipped.
        assert!(storage.count >= 1, "sharded storage without elements");
        Self {
            cells: cells.clone(),
            count: storage.count,
            id,
            storage,
        }
    }

    /// Panics unless element `i` exists. Free for `i == 0` (a constant on
    /// the `inc`/`add` paths): every storage has at least one element.
    #[inline(always)]
    fn check(&self, i: usize) {
        if i != 0 && i >= self.count {
            out_of_range(i, self.count);
        }
    }

    #[inline(always)]
    fn update(&self, i: usize, f: impl Fn(u64) -> u64) {
        if ENABLED {
            self.check(i);
            self.cells.update(i, f);
        }
    }

    fn merged(&self, i: usize) -> u64 {
        self.check(i);
        self.storage.current(i)
    }

    fn local_cell(&self, i: usize) -> LocalCell<'_> {
        self.check(i);
        self.cells.local_cell(i)
    }

    fn owned_cell(&self, i: usize) -> Option<OwnedCell<'_>> {
        self.check(i);
        self.cells.owned_cell(i)
    }
}

/// A handle whose updates are applied to per-thread cells: what a use site
/// caches a cell of (see `super::site`).
pub(crate) trait CellHandle {
    /// The variable's cells.
    fn cells(&self) -> &CellRange;
    /// Number of elements.
    fn element_count(&self) -> usize;
}

macro_rules! cell_handle {
    ($($t:ty $(: $g:ident)?),*) => {$(
        impl$(<T: $g>)? CellHandle for $t {
            fn cells(&self) -> &CellRange {
                &self.core.cells
            }
            fn element_count(&self) -> usize {
                self.core.count
            }
        }
    )*};
}
cell_handle!(Counter, Aggregate<T>: Magnitude, Level<T>: Magnitude);

#[cold]
#[inline(never)]
fn out_of_range(i: usize, count: usize) -> ! {
    panic!("pvar element {i} out of range (count {count})")
}

macro_rules! common_methods {
    () => {
        /// The variable's index in its registry.
        pub fn index(&self) -> usize {
            self.core.id.index()
        }

        /// Number of elements.
        pub fn count(&self) -> usize {
            self.core.count
        }

        /// Deactivates the variable (component unloaded): tools' reads then
        /// fail; registering it again reactivates it.
        pub fn deactivate(&self) {
            self.core.id.deactivate()
        }

        /// The calling thread's cell of element `i` with its owner word,
        /// for the C interface (`pvar_site_fill_v2`, `pvar_local_cell`); `None`
        /// once the thread is exiting.
        #[allow(dead_code)]
        pub(crate) fn owned_cell_at(&self, i: usize) -> Option<OwnedCell<'_>> {
            self.core.owned_cell(i)
        }
    };
}

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

/// A TIMER: time spent in a section, summed over threads; starts at 0.
///
/// Ticks come from the registry's calibrated [`Clock`]; tools read seconds
/// (`MPI_DOUBLE`, the unit of `MPI_Wtime`) or nanoseconds (unsigned
/// datatypes). [`Timer::start`]/[`Timer::stop`] keep the start tick in a
/// per-thread cell; a [`TimerGuard`] keeps it on the stack. Elapsed time is
/// added when an interval ends; a tool reading during an interval sees the
/// time up to the last completed interval. An interval is its thread's: one
/// still open when its thread exits is dropped (a later thread that reuses
/// the exited thread's id never stops it).
///
/// Async-signal-safe: every method, once this thread has touched the
/// variable's cells (as [`Counter`]). Ticks are `rdtsc` or
/// `clock_gettime(CLOCK_MONOTONIC)`, converted with the factors calibrated
/// when the registry was created (no lazy calibration, no allocation). A
/// handler must not start or stop an element that the interrupted code is
/// timing on the same thread.
#[derive(Clone)]
pub struct Timer {
    core: Sharded,
    clock: Clock,
}

impl ClassHandle for Timer {
    const CLASS: PvarClass = PvarClass::Timer;
    const DATATYPE: Datatype = Datatype::Double;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl FromStorage for Timer {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        Self {
            clock: storage.hot.clock.clone(),
            core: Sharded::new(id, storage),
        }
    }
}

impl Timer {
    /// The cell of element `i`'s start ticks (after the sums).
    #[inline(always)]
    fn start_cell(&self, i: usize) -> usize {
        self.core.count + i
    }

    /// Starts timing element 0 on the calling thread (restarts if running).
    #[inline(always)]
    pub fn start(&self) {
        self.start_at(0);
    }

    /// Stops timing element 0 on the calling thread and adds the elapsed
    /// time. Does nothing if this thread had not started it (also when
    /// another thread, since exited, had started it).
    #[inline(always)]
    pub fn stop(&self) {
        self.stop_at(0);
    }

    /// [`Timer::start`] for element `i`.
    #[inline(always)]
    pub fn start_at(&self, i: usize) {
        if ENABLED {
            self.core.check(i);
            // Store tick + 1 so that 0 keeps meaning "not started".
            let now = self.clock.ticks().wrapping_add(1);
            self.core
                .cells
                .update_owned(self.start_cell(i), move |_| now);
        }
    }

    /// [`Timer::stop`] for element `i`.
    #[inline(always)]
    pub fn stop_at(&self, i: usize) {
        if ENABLED {
            self.core.check(i);
            let now = self.clock.ticks();
            match self.core.cells.cached_local_cell(self.start_cell(i)) {
                Some(start) => {
                    // Single writer: the start cell is this thread's.
                    let started = start.load(Ordering::Relaxed);
                    if started != 0 {
                        start.store(0, Ordering::Relaxed);
                        self.add_elapsed_since(i, now, started);
                    }
                }
                None => self.stop_cold(i, now),
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn stop_cold(&self, i: usize, now: u64) {
        let started = self.core.cells.load_local(self.start_cell(i));
        if started != 0 {
            self.core.cells.update_owned(self.start_cell(i), move |_| 0);
            self.add_elapsed_since(i, now, started);
        }
    }

    /// Adds `now - (started - 1)` ticks (`started` is a start cell's tick + 1).
    #[inline(always)]
    fn add_elapsed_since(&self, i: usize, now: u64, started: u64) {
        let elapsed = now.saturating_sub(started - 1);
        self.core.cells.update(i, move |v| v.wrapping_add(elapsed));
    }

    /// Times element 0 until the guard is dropped.
    ///
    /// ```
    /// let reg = pvar::Registry::new();
    /// let t = reg.timer("section").register().unwrap();
    /// {
    ///     let _g = t.scoped();
    ///     std::hint::black_box(0); // the timed section
    /// }
    /// assert!(t.get_seconds() >= 0.0);
    /// ```
    #[inline(always)]
    pub fn scoped(&self) -> TimerGuard<'_> {
        self.scoped_at(0)
    }

    /// Times element `i` until the guard is dropped.
    #[inline(always)]
    pub fn scoped_at(&self, i: usize) -> TimerGuard<'_> {
        self.core.check(i);
        TimerGuard {
            timer: self,
            element: i,
            start: if ENABLED { self.clock.ticks() } else { 0 },
        }
    }

    /// Adds an externally measured duration to element 0.
    pub fn add_elapsed(&self, d: Duration) {
        self.add_ticks_at(0, self.clock.duration_to_ticks(d));
    }

    /// Adds raw clock ticks (a difference of [`Clock::ticks`]) to element `i`.
    #[inline(always)]
    pub fn add_ticks_at(&self, i: usize, ticks: u64) {
        self.core.update(i, move |v| v.wrapping_add(ticks));
    }

    /// Total time of element 0 over all threads, in seconds.
    pub fn get_seconds(&self) -> f64 {
        self.get_seconds_at(0)
    }

    /// Total time of element `i` over all threads, in seconds.
    pub fn get_seconds_at(&self, i: usize) -> f64 {
        self.clock.ticks_to_nanos(self.core.merged(i)) as f64 / 1e9
    }

    /// The timer's clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    common_methods!();
}

/// Times a section of a [`Timer`] element until dropped.
///
/// Async-signal-safe: as [`Timer`] (the start tick is on the stack).
#[must_use = "the section ends when the guard is dropped"]
pub struct TimerGuard<'a> {
    timer: &'a Timer,
    element: usize,
    start: u64,
}

impl Drop for TimerGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if ENABLED {
            let elapsed = self.timer.clock.ticks().saturating_sub(self.start);
            self.timer.add_ticks_at(self.element, elapsed);
        }
    }
}

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
/// Async-signal-safe: as [`Counter`]; `set`/`set_at` too (a lock-free
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
