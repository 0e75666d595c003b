//! TIMER handles: per-thread cells of clock ticks, started and stopped.

use std::time::Duration;

use super::sharded::{Sharded, common_methods};
use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::clock::Clock;
use crate::hot::storage::Storage;
use crate::sync::{Arc, Ordering};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::PvarClass;

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
/// variable's cells (as [`Counter`](crate::Counter)). Ticks are `rdtsc` or
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
