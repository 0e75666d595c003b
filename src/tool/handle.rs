//! A performance-variable handle's state and the per-class semantics of
//! start / stop / read / write / reset / readreset.
//!
//! **SUM classes** (COUNTER, AGGREGATE, TIMER) keep, per element, one
//! 128-bit atomic word `(x, started)`: stopped, `x` is the accumulated
//! value; started, `x` is `accum − offset`, so the value is `x + current`.
//! This is MPICH's `accum / offset / current` scheme folded into one word,
//! so every operation is a single compare-and-swap computed from one merged
//! read of the hot cells: start `x −= current`, stop `x += current`, reset
//! `x = −current` (started) or `0`, readreset returns the value and resets
//! with the *same* `current`, so no update is lost or counted twice between
//! the read and the reset. The hot cells are never written by a tool. A
//! concurrent change makes the CAS fail and the operation retries with
//! fresh values: lock-free, and a signal handler never waits for the code it
//! interrupted.
//!
//! **WATERMARK classes** subscribe to their variable at allocation (see
//! `storage::watermark`); start / stop flip the subscription.
//!
//! **STATE, LEVEL, SIZE, PERCENTAGE, GENERIC** have no per-handle state:
//! every session reads the current value.

use std::sync::Arc;

use crate::callback::Notify;
use crate::error::{Error, ErrorCode, Result};
use crate::kinds::PvarClass;
use crate::storage::watermark::SubKey;
use crate::storage::{Kind, Storage};
use crate::sync::{AtomicBool, AtomicU128, Ordering};

const STARTED: u128 = 1 << 64;

#[inline]
fn pack(x: u64, started: bool) -> u128 {
    x as u128 | if started { STARTED } else { 0 }
}

#[inline]
fn unpack(w: u128) -> (u64, bool) {
    (w as u64, w & STARTED != 0)
}

pub(crate) enum HandleState {
    Sum(Box<[AtomicU128]>),
    Watermark(SubKey),
    Current { started: AtomicBool },
}

pub(crate) struct HandleData {
    pub(crate) session: u64,
    /// This handle's entry in its session's handle list.
    pub(crate) session_entry: usize,
    pub(crate) index: usize,
    pub(crate) storage: Arc<Storage>,
    pub(crate) count: usize,
    pub(crate) continuous: bool,
    pub(crate) readonly: bool,
    pub(crate) atomic: bool,
    pub(crate) state: HandleState,
}

impl HandleData {
    /// Builds a handle over `storage`; continuous variables start now (a
    /// callback variable is told [`Notify::Start`], after the
    /// [`Notify::Bind`] of `Variable::resolve`). Whoever builds one must end
    /// it with [`HandleData::release`], also when it is never stored (a
    /// watermark's subscription is taken here).
    pub(crate) fn new(
        session: u64,
        index: usize,
        storage: Arc<Storage>,
        continuous: bool,
        readonly: bool,
        atomic: bool,
    ) -> Self {
        let count = storage.count;
        let state = if storage.class.is_sum() {
            HandleState::Sum(
                (0..count)
                    .map(|_| AtomicU128::new(pack(0, false)))
                    .collect(),
            )
        } else if let Kind::Watermark(w) = &storage.kind {
            HandleState::Watermark(w.subscribe())
        } else {
            HandleState::Current {
                started: AtomicBool::new(continuous),
            }
        };
        let data = Self {
            session,
            session_entry: 0,
            index,
            storage,
            count,
            continuous,
            readonly,
            atomic,
            state,
        };
        if continuous {
            data.start();
        }
        data
    }

    fn notify(&self, event: Notify) {
        if let Kind::Callback { callbacks, object } = &self.storage.kind {
            callbacks.notify(event, *object);
        }
    }

    pub(crate) fn check_live(&self, active: bool) -> Result<()> {
        if active && self.storage.is_live() {
            Ok(())
        } else {
            Err(Error::Inactive)
        }
    }

    pub(crate) fn is_started(&self) -> bool {
        match &self.state {
            HandleState::Sum(s) => unpack(s[0].load(Ordering::Acquire)).1,
            HandleState::Watermark(k) => match &self.storage.kind {
                Kind::Watermark(w) => w.is_started(*k),
                _ => false,
            },
            HandleState::Current { started } => started.load(Ordering::Acquire),
        }
    }

    /// Applies `f(x, started, current) -> new word` to element `i` with a
    /// CAS loop; returns what `f` computed alongside the word. The merged
    /// read `current` is made only when `started == read_when` (0 is
    /// passed otherwise): while started for stop, write and reset, while
    /// stopped for start.
    #[inline]
    fn cas_element<R>(
        &self,
        cells: &[AtomicU128],
        i: usize,
        read_when: bool,
        f: impl Fn(u64, bool, u64) -> (u128, R),
    ) -> R {
        let mut w = cells[i].load(Ordering::Acquire);
        loop {
            let (x, started) = unpack(w);
            let current = if started == read_when {
                self.storage.current(i)
            } else {
                0
            };
            let (new, r) = f(x, started, current);
            if new == w {
                return r;
            }
            match cells[i].compare_exchange(w, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return r,
                Err(now) => w = now,
            }
        }
    }

    /// Starts the handle and tells a callback variable [`Notify::Start`].
    /// The caller has refused continuous handles (the registry's `start`
    /// and `start_all`), except [`HandleData::new`] starting one.
    /// Async-signal-safe (the notify callback of a callback variable is
    /// the component's).
    pub(crate) fn start(&self) {
        let repr = self.storage.repr;
        match &self.state {
            HandleState::Sum(cells) => {
                for i in 0..self.count {
                    self.cas_element(cells, i, false, |x, started, current| {
                        // Started already: the word stays as it is.
                        let x = if started { x } else { repr.sub(x, current) };
                        (pack(x, true), ())
                    });
                }
            }
            HandleState::Watermark(k) => {
                if let Kind::Watermark(w) = &self.storage.kind {
                    w.start(*k, repr);
                }
            }
            HandleState::Current { started } => started.store(true, Ordering::Release),
        }
        self.notify(Notify::Start);
    }

    /// Stops the handle (the caller has refused continuous handles).
    /// Async-signal-safe.
    pub(crate) fn stop(&self) {
        let repr = self.storage.repr;
        match &self.state {
            HandleState::Sum(cells) => {
                for i in 0..self.count {
                    self.cas_element(cells, i, true, |x, started, current| {
                        (
                            if started {
                                pack(repr.add(x, current), false)
                            } else {
                                pack(x, false)
                            },
                            (),
                        )
                    });
                }
            }
            HandleState::Watermark(k) => {
                if let Kind::Watermark(w) = &self.storage.kind {
                    w.stop(*k);
                }
            }
            HandleState::Current { started } => started.store(false, Ordering::Release),
        }
        self.notify(Notify::Stop);
    }

    /// Reads elements `first..first + out.len()` into `out` (values in the
    /// variable's datatype, as `u64` bits). The caller checks the range.
    /// Async-signal-safe.
    pub(crate) fn read(&self, first: usize, out: &mut [u64]) {
        let repr = self.storage.repr;
        match &self.state {
            HandleState::Sum(cells) => {
                for (i, o) in (first..self.count).zip(out.iter_mut()) {
                    // Value from one consistent (word, current) pair: re-check
                    // the word after reading the cells.
                    let mut w = cells[i].load(Ordering::Acquire);
                    let v = loop {
                        let (x, started) = unpack(w);
                        if !started {
                            break x;
                        }
                        let current = self.storage.current(i);
                        let again = cells[i].load(Ordering::Acquire);
                        if again == w {
                            break repr.add(x, current);
                        }
                        w = again;
                    };
                    *o = self.storage.to_output(v);
                }
            }
            HandleState::Watermark(k) => {
                if let Kind::Watermark(w) = &self.storage.kind {
                    for (i, o) in (first..self.count).zip(out.iter_mut()) {
                        *o = w.read(*k, i, repr);
                    }
                }
            }
            HandleState::Current { .. } => {
                for (i, o) in (first..self.count).zip(out.iter_mut()) {
                    *o = self.storage.to_output(self.storage.current(i));
                }
            }
        }
    }

    /// Writes `values` (datatype bits) to elements `first..` (the caller
    /// has refused read-only handles). Async-signal-safe.
    pub(crate) fn write(&self, first: usize, values: &[u64]) -> Result<()> {
        let repr = self.storage.repr;
        match &self.state {
            HandleState::Sum(cells) => {
                for (i, &v) in (first..self.count).zip(values.iter()) {
                    let v = self.storage.to_cells(v);
                    self.cas_element(cells, i, true, |_, started, current| {
                        (
                            if started {
                                pack(repr.sub(v, current), true)
                            } else {
                                pack(v, false)
                            },
                            (),
                        )
                    });
                }
            }
            HandleState::Watermark(k) => {
                if let Kind::Watermark(w) = &self.storage.kind {
                    for (i, &v) in (first..self.count).zip(values.iter()) {
                        w.write(*k, i, v);
                        // While started, the level at the time of the write
                        // is a level "since the write": cover it now, as a
                        // read would, so what the handle reads later does
                        // not depend on whether the tool read in between.
                        let _ = w.read(*k, i, repr);
                    }
                }
            }
            HandleState::Current { .. } => match &self.storage.kind {
                Kind::Callback { callbacks, object } => match &callbacks.write {
                    Some(write) => {
                        for (i, &v) in (first..self.count).zip(values.iter()) {
                            write(*object, i, v);
                        }
                    }
                    None => return Err(ErrorCode::PvarNoWrite.into()),
                },
                _ => return Err(ErrorCode::PvarNoWrite.into()),
            },
        }
        Ok(())
    }

    /// Resets to the starting value; with `out`, also returns the value
    /// reset from, atomically per element (readreset). Async-signal-safe.
    /// `first..first + len` is the element range (all elements for a plain
    /// reset). The caller has refused read-only handles, and non-atomic
    /// ones for a readreset.
    pub(crate) fn reset(&self, first: usize, len: usize, mut out: Option<&mut [u64]>) {
        let repr = self.storage.repr;
        match &self.state {
            HandleState::Sum(cells) => {
                for i in first..(first + len).min(self.count) {
                    let v = self.cas_element(cells, i, true, |x, started, current| {
                        if started {
                            (pack(repr.sub(0, current), true), repr.add(x, current))
                        } else {
                            (pack(0, false), x)
                        }
                    });
                    if let Some(out) = out.as_deref_mut() {
                        out[i - first] = self.storage.to_output(v);
                    }
                }
            }
            HandleState::Watermark(k) => {
                if let Kind::Watermark(w) = &self.storage.kind {
                    for i in first..(first + len).min(self.count) {
                        let v = w.reset(*k, i, repr);
                        if let Some(out) = out.as_deref_mut() {
                            out[i - first] = v;
                        }
                    }
                }
            }
            HandleState::Current { .. } => {
                // No history: the starting value is the current value, so a
                // reset of a writable memoryless variable changes nothing.
                if let Some(out) = out {
                    self.read(first, out);
                }
            }
        }
    }

    /// Ends the handle: unsubscribes a watermark, and tells a callback
    /// variable [`Notify::Stop`] if the handle is still started (always for
    /// a continuous one), then [`Notify::Free`].
    pub(crate) fn release(&self) {
        let started = self.is_started();
        if let (HandleState::Watermark(k), Kind::Watermark(w)) = (&self.state, &self.storage.kind) {
            w.unsubscribe(*k);
        }
        if started {
            self.notify(Notify::Stop);
        }
        self.notify(Notify::Free);
    }

    pub(crate) fn class(&self) -> PvarClass {
        self.storage.class
    }
}
