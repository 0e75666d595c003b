//! A performance-variable handle's state and the per-class semantics of
//! start / stop / read / write / reset / readreset.
//!
//! **The run word.** Every handle has one 64-bit run word, a [`RunTag`]:
//! the epoch of its last start or stop and whether it is started. `start`
//! and `stop` move it with one compare-and-swap; only the caller that wins
//! the move applies it to the elements (and notifies a callback variable),
//! so starting a started handle does nothing and notifies nothing, however
//! many threads or signal handlers try at once. Each element's own state is
//! a [`TaggedWord`] (value and run tag in 128 bits) that moves to the new
//! epoch with its own compare-and-swap, and only forward: when a start and
//! a stop race, every element ends in the state of the later one.
//!
//! **SUM classes** (COUNTER, AGGREGATE, TIMER) keep, per element, `x` in
//! the word: stopped, the accumulated value; started, `accum − offset`, so
//! the value is `x + current`. This is MPICH's `accum / offset / current`
//! scheme folded into one word, so every operation is a single
//! compare-and-swap computed from one merged read of the hot cells: start
//! `x −= current`, stop `x += current`, reset `x = −current` (started) or
//! `0`, readreset returns the value and resets with the *same* `current`,
//! so no update is lost or counted twice between the read and the reset.
//! The hot cells are never written by a tool. A concurrent change makes the
//! CAS fail and the operation retries with fresh values: lock-free, and a
//! signal handler never waits for the code it interrupted.
//!
//! An engine TIMER also counts, per element, the clock ticks its
//! readresets have handed out: a value is converted to nanoseconds as
//! `ns(reported + v) − ns(reported)`, so the deltas of successive
//! readresets sum to exactly what a never-reset handle reads (converting
//! each delta on its own would drop up to a nanosecond each time).
//!
//! **WATERMARK classes** (engine storage) subscribe to their variable at
//! allocation; the element words are the subscription's marks, which
//! updaters push while started (see `hot::storage::watermark`).
//!
//! **Classes without history, not continuous** (GENERIC, and HIGH/LOW
//! watermarks computed by callback): the word holds a snapshot. While
//! started a read returns the current value; `stop` stores the current
//! value in the snapshot, and before the first start the snapshot is the
//! value at allocation: a stopped handle is frozen, as the standard says of
//! every non-continuous variable.
//!
//! **Continuous classes without history** (STATE, LEVEL, SIZE, PERCENTAGE,
//! continuous GENERIC and callback variables): no per-handle state; every
//! session reads the current value. These are read-only (see
//! [`PvarInfo::validate`]).

use crate::hot::storage::reader::Reader;
use crate::hot::storage::{Backing, Storage};
use crate::lockfree::striped::StripedCounter;
use crate::lockfree::tagged::{RunTag, TaggedWord};
use crate::sync::{Arc, AtomicU64, Ordering};
use crate::vocabulary::PvarInfo;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::PvarClass;

/// What a handle is (`MPI_T_pvar_handle_alloc`'s count, and what
/// `MPI_T_pvar_get_info` says of its variable), for one lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandleInfo {
    /// The variable's index.
    pub index: usize,
    /// The variable's class.
    pub class: PvarClass,
    /// The datatype of each element.
    pub datatype: Datatype,
    /// The element count (of the bound object's instance, for a bound
    /// variable).
    pub count: usize,
}

pub(crate) enum HandleState {
    /// COUNTER, AGGREGATE, TIMER: `x` per element; an engine TIMER also
    /// counts the ticks its readresets reported.
    Sum {
        words: Box<[TaggedWord]>,
        reported: Option<Box<[AtomicU64]>>,
    },
    /// Engine HIGH/LOWWATERMARK: the handle's marks, kept by its
    /// [`Reader`].
    Watermark,
    /// Not continuous, no history: the snapshot read while stopped.
    Snapshot(Box<[TaggedWord]>),
    /// Continuous, no history: the current value.
    Current,
}

pub(crate) struct HandleData {
    pub(crate) session: u64,
    /// This handle's entry in its session's handle list.
    pub(crate) session_entry: usize,
    pub(crate) index: usize,
    /// The storage read, and what the handle holds in it (marks, a
    /// callback variable's notifications): the lifecycle every reader of a
    /// variable shares.
    reader: Reader,
    pub(crate) count: usize,
    pub(crate) continuous: bool,
    pub(crate) readonly: bool,
    pub(crate) atomic: bool,
    /// Allocated through the typed API: freed by dropping its owner, not
    /// by the keyed `handle_free`.
    pub(crate) owned: bool,
    /// The run word (a [`RunTag`]): see the module documentation.
    run: AtomicU64,
    pub(crate) state: HandleState,
}

fn words(count: usize, value: impl Fn(usize) -> u64) -> Box<[TaggedWord]> {
    (0..count)
        .map(|i| TaggedWord::new(value(i), RunTag::INITIAL))
        .collect()
}

/// A freed handle is released ([`HandleData::release`]) by whoever takes
/// its data out of the slot (the free, or the tool side's reclaim), from
/// normal code; nothing at the signal-safe finish.
impl crate::lockfree::slot_table::Retire for HandleData {}

impl HandleData {
    /// Builds a handle over `storage`; continuous variables start now (a
    /// callback variable is told [`Notify::Start`](crate::Notify::Start), after the
    /// [`Notify::Bind`](crate::Notify::Bind) of `Variable::resolve`). Whoever builds one must end
    /// it with [`HandleData::release`], also when it is never stored (a
    /// watermark's subscription is taken here).
    pub(crate) fn new(
        session: u64,
        index: usize,
        storage: Arc<Storage>,
        info: &PvarInfo,
        owned: bool,
    ) -> Self {
        let (continuous, readonly, atomic) = (info.continuous, info.readonly, info.atomic);
        let count = storage.count;
        let state = if storage.class.is_sum() {
            let engine_timer = storage.class == PvarClass::Timer
                && !matches!(storage.backing, Backing::Callback { .. });
            HandleState::Sum {
                words: words(count, |_| 0),
                reported: engine_timer.then(|| (0..count).map(|_| AtomicU64::new(0)).collect()),
            }
        } else if let Backing::Watermark(_) = &storage.backing {
            HandleState::Watermark
        } else if continuous {
            HandleState::Current
        } else {
            HandleState::Snapshot(words(count, |i| storage.current(i)))
        };
        let data = Self {
            session,
            session_entry: 0,
            index,
            reader: Reader::new(storage),
            count,
            continuous,
            readonly,
            atomic,
            owned,
            run: AtomicU64::new(RunTag::INITIAL.raw()),
            state,
        };
        if continuous {
            data.start_run();
        }
        data
    }

    /// The storage the handle reads.
    #[inline]
    pub(crate) fn storage(&self) -> &Arc<Storage> {
        self.reader.storage()
    }

    /// What the handle is.
    pub(crate) fn info(&self) -> HandleInfo {
        HandleInfo {
            index: self.index,
            class: self.storage().class,
            datatype: self.storage().datatype,
            count: self.count,
        }
    }

    pub(crate) fn is_started(&self) -> bool {
        RunTag::from_raw(self.run.load(Ordering::Acquire)).started()
    }

    /// Moves the run word to started (`true`) or stopped; returns the new
    /// tag if this call made the move, `None` if the handle was already in
    /// that state.
    fn transition(&self, started: bool) -> Option<RunTag> {
        let mut cur = self.run.load(Ordering::Acquire);
        loop {
            let tag = RunTag::from_raw(cur);
            if tag.started() == started {
                return None;
            }
            let next = tag.next(started);
            match self
                .run
                .compare_exchange(cur, next.raw(), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(next),
                Err(now) => cur = now,
            }
        }
    }

    /// Starts the handle (if stopped) and tells a callback variable
    /// [`Notify::Start`](crate::Notify::Start). The caller has refused continuous handles
    /// ([`HandleData::start`] and `start_all`), except [`HandleData::new`]
    /// starting one. Async-signal-safe (the notify callback of a callback
    /// variable is the component's).
    fn start_run(&self) {
        let Some(tag) = self.transition(true) else {
            return;
        };
        let (storage, repr) = (self.storage(), self.storage().repr);
        match &self.state {
            HandleState::Sum { words, .. } => {
                for (i, w) in words.iter().enumerate() {
                    w.advance(tag, |w| {
                        if w.tag.started() {
                            w.value
                        } else {
                            repr.sub(w.value, storage.current(i))
                        }
                    });
                }
            }
            HandleState::Snapshot(words) => {
                for w in words.iter() {
                    w.advance(tag, |w| w.value);
                }
            }
            HandleState::Watermark | HandleState::Current => {}
        }
        self.reader.started(tag);
    }

    /// Stops the handle (if started); the caller has refused continuous
    /// handles. Async-signal-safe.
    fn stop_run(&self) {
        if let Some(tag) = self.transition(false) {
            self.apply_stop(tag);
        }
    }

    /// The run moved to stopped with `tag`: the elements keep what they
    /// read now, the reader's marks stop, a callback variable hears
    /// `Stop`.
    fn apply_stop(&self, tag: RunTag) {
        let (storage, repr) = (self.storage(), self.storage().repr);
        match &self.state {
            HandleState::Sum { words, .. } => {
                for (i, w) in words.iter().enumerate() {
                    w.advance(tag, |w| {
                        if w.tag.started() {
                            repr.add(w.value, storage.current(i))
                        } else {
                            w.value
                        }
                    });
                }
            }
            HandleState::Snapshot(words) => {
                for (i, w) in words.iter().enumerate() {
                    w.advance(tag, |w| {
                        if w.tag.started() {
                            storage.current(i)
                        } else {
                            w.value
                        }
                    });
                }
            }
            HandleState::Watermark | HandleState::Current => {}
        }
        self.reader.stopped(tag);
    }

    /// Element `i`'s value in cell representation, from one consistent
    /// (word, current) pair: the word is checked again after the merged read.
    fn sum_value(&self, words: &[TaggedWord], i: usize) -> u64 {
        let mut w = words[i].load();
        loop {
            if !w.tag.started() {
                return w.value;
            }
            let current = self.storage().current(i);
            let again = words[i].load();
            if again == w {
                return self.storage().repr.add(w.value, current);
            }
            w = again;
        }
    }

    /// The value a tool reads for a SUM element whose cell value is `v`.
    fn sum_output(&self, reported: Option<&[AtomicU64]>, i: usize, v: u64) -> u64 {
        match reported {
            Some(r) => self
                .storage()
                .timer_output_after(r[i].load(Ordering::Relaxed), v),
            None => self.storage().to_output(v),
        }
    }

    /// Reads elements `first..first + out.len()` into `out` (values in the
    /// variable's datatype, as `u64` bits). The caller checks the range.
    /// Async-signal-safe.
    fn read_values(&self, first: usize, out: &mut [u64]) {
        let storage = self.storage();
        let elements = (first..self.count).zip(out.iter_mut());
        match &self.state {
            HandleState::Sum { words, reported } => {
                for (i, o) in elements {
                    *o = self.sum_output(reported.as_deref(), i, self.sum_value(words, i));
                }
            }
            HandleState::Watermark => {
                for (i, o) in elements {
                    *o = storage.to_output(self.reader.mark(i).unwrap_or(0));
                }
            }
            HandleState::Snapshot(words) => {
                for (i, o) in elements {
                    let w = words[i].load();
                    let v = if w.tag.started() {
                        storage.current(i)
                    } else {
                        w.value
                    };
                    *o = storage.to_output(v);
                }
            }
            HandleState::Current => {
                for (i, o) in elements {
                    *o = storage.to_output(storage.current(i));
                }
            }
        }
    }

    /// Writes `values` (datatype bits) to elements `first..`: the value
    /// this handle reads from now on (the caller has refused read-only
    /// handles). `PVAR_NO_WRITE` for classes without per-handle state.
    /// Async-signal-safe.
    fn write_values(&self, first: usize, values: &[u64]) -> Result<()> {
        let (storage, repr) = (self.storage(), self.storage().repr);
        match &self.state {
            HandleState::Sum { words, reported } => {
                for (i, &v) in (first..self.count).zip(values.iter()) {
                    let v = storage.to_cells(v);
                    words[i].set_value(|w| {
                        let x = if w.tag.started() {
                            repr.sub(v, storage.current(i))
                        } else {
                            v
                        };
                        (x, ())
                    });
                    if let Some(r) = reported {
                        // The written value reads back as written: its
                        // conversion starts afresh.
                        r[i].store(0, Ordering::Relaxed);
                    }
                }
            }
            HandleState::Watermark => {
                for (i, &v) in (first..self.count).zip(values.iter()) {
                    self.reader.write_mark(i, v);
                }
            }
            HandleState::Snapshot(_) | HandleState::Current => {
                return Err(Error::PvarNoWrite);
            }
        }
        Ok(())
    }

    /// Resets to the starting value; with `out`, also returns the value
    /// reset from, atomically per element (readreset). Async-signal-safe.
    /// `first..first + len` is the element range (all elements for a plain
    /// reset). The caller has refused read-only handles, and non-atomic
    /// ones for a readreset; `PVAR_NO_WRITE` for classes without
    /// per-handle state.
    fn reset_values(&self, first: usize, len: usize, mut out: Option<&mut [u64]>) -> Result<()> {
        let (storage, repr) = (self.storage(), self.storage().repr);
        let range = first..(first + len).min(self.count);
        match &self.state {
            HandleState::Sum { words, reported } => {
                for i in range {
                    let old = words[i].set_value(|w| {
                        if w.tag.started() {
                            let current = storage.current(i);
                            (repr.sub(0, current), repr.add(w.value, current))
                        } else {
                            (0, w.value)
                        }
                    });
                    if let Some(out) = out.as_deref_mut() {
                        out[i - first] = match reported {
                            // Hand out the next `old` ticks of this
                            // element's reported total.
                            Some(r) => storage
                                .timer_output_after(r[i].fetch_add(old, Ordering::Relaxed), old),
                            None => storage.to_output(old),
                        };
                    }
                }
            }
            HandleState::Watermark => {
                for i in range {
                    let old = self.reader.reset_mark(i).unwrap_or(0);
                    if let Some(out) = out.as_deref_mut() {
                        out[i - first] = storage.to_output(old);
                    }
                }
            }
            HandleState::Snapshot(_) | HandleState::Current => {
                return Err(Error::PvarNoWrite);
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------
    // The MPI_T operations, with the standard's checks in one order for
    // both faces (keyed and typed): class flags (`PVAR_NO_STARTSTOP`,
    // `PVAR_NO_ATOMIC`, `PVAR_NO_WRITE`), then the variable or instance
    // gone (`INVALID_INDEX`), then the element range (`INVALID`). Reads
    // that start at element 0 are counted in `served` (the tool side's
    // statistics). All async-signal-safe (a callback variable's functions
    // must be too).

    /// `MPI_T_ERR_INVALID_INDEX` unless the variable is active and (bound)
    /// its instance not dropped.
    #[inline]
    fn check_live(&self) -> Result<()> {
        if self.storage().is_live() {
            Ok(())
        } else {
            Err(Error::inactive())
        }
    }

    /// `MPI_T_ERR_INVALID` unless `first..first + len` lies within the
    /// handle.
    #[inline]
    fn check_range(&self, first: usize, len: usize) -> Result<()> {
        match first.checked_add(len) {
            Some(end) if end <= self.count => Ok(()),
            _ => Err(Error::invalid("element range past the handle's count")),
        }
    }

    /// `MPI_T_pvar_start`: starting a started handle does nothing.
    pub(crate) fn start(&self) -> Result<()> {
        if self.continuous {
            return Err(Error::PvarNoStartstop);
        }
        self.check_live()?;
        self.start_run();
        Ok(())
    }

    /// `MPI_T_pvar_stop`: stopping a stopped handle does nothing.
    pub(crate) fn stop(&self) -> Result<()> {
        if self.continuous {
            return Err(Error::PvarNoStartstop);
        }
        self.check_live()?;
        self.stop_run();
        Ok(())
    }

    /// Starts (`true`) or stops the handle for `start_all` / `stop_all`:
    /// continuous handles and handles already in that state are skipped;
    /// `PVAR_NO_STARTSTOP` if the variable is gone.
    pub(crate) fn start_or_stop_for_all(&self, start: bool) -> Result<()> {
        if self.continuous || self.is_started() == start {
            return Ok(());
        }
        self.check_live().map_err(|_| Error::PvarNoStartstop)?;
        if start {
            self.start_run()
        } else {
            self.stop_run()
        }
        Ok(())
    }

    /// `MPI_T_pvar_read` of elements `first..first + out.len()`.
    pub(crate) fn read(
        &self,
        first: usize,
        out: &mut [u64],
        served: &StripedCounter,
    ) -> Result<()> {
        self.check_live()?;
        self.check_range(first, out.len())?;
        self.read_values(first, out);
        if first == 0 {
            served.inc();
        }
        Ok(())
    }

    /// `MPI_T_pvar_write` of elements `first..first + values.len()`.
    pub(crate) fn write(&self, first: usize, values: &[u64]) -> Result<()> {
        if self.readonly {
            return Err(Error::PvarNoWrite);
        }
        self.check_live()?;
        self.check_range(first, values.len())?;
        self.write_values(first, values)
    }

    /// `MPI_T_pvar_reset` of every element.
    pub(crate) fn reset(&self) -> Result<()> {
        if self.readonly {
            return Err(Error::PvarNoWrite);
        }
        self.check_live()?;
        self.reset_values(0, self.count, None)
    }

    /// Resets the handle for `reset_all`: read-only handles are skipped;
    /// `PVAR_NO_WRITE` if the variable is gone or has no handle state.
    pub(crate) fn reset_for_all(&self) -> Result<()> {
        if self.readonly {
            return Ok(());
        }
        self.check_live()
            .and_then(|_| self.reset_values(0, self.count, None))
            .map_err(|_| Error::PvarNoWrite)
    }

    /// `MPI_T_pvar_readreset` of elements `first..first + out.len()`.
    pub(crate) fn readreset(
        &self,
        first: usize,
        out: &mut [u64],
        served: &StripedCounter,
    ) -> Result<()> {
        if !self.atomic {
            return Err(Error::PvarNoAtomic);
        }
        if self.readonly {
            return Err(Error::PvarNoWrite);
        }
        self.check_live()?;
        self.check_range(first, out.len())?;
        let len = out.len();
        self.reset_values(first, len, Some(out))?;
        if first == 0 {
            served.inc();
        }
        Ok(())
    }

    /// Ends the handle: stops it if it is started (always for a continuous
    /// one), telling a callback variable [`Notify::Stop`](crate::Notify::Stop), then ends its
    /// [`Reader`] (a watermark's subscription given back, [`Notify::Free`](crate::Notify::Free)).
    pub(crate) fn release(&self) {
        if let Some(tag) = self.transition(false) {
            self.apply_stop(tag);
        }
        self.reader.release();
    }
}
