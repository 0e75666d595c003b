//! A table of generation-checked slots: how sessions and handles are
//! looked up and validated without locks.
//!
//! A key is `(index + 1) << 40 | generation`; key 0 is never valid (the C
//! interface's NULL) and no key is below `2^40` (so `MPI_T_PVAR_ALL_HANDLES`
//! = 1 never collides).
//!
//! **Generations are unique in the process**, not per table: every
//! allocation in every table of every registry draws the next value of one
//! process-wide counter ([`next_generation`], 40 bits: a million
//! allocations a second for twelve days before it wraps). So a key names
//! exactly one allocation: a freed or stale key, a key of another table
//! (a session key used as a handle) and a key of another registry all fail
//! the generation check, never reaching a slot that happens to have the
//! same index.
//!
//! Each slot's state word holds `generation` (bits 0–39), `LIVE` (bit 40)
//! and a reader count (bits 41–63). An operation takes a *reader
//! reference* with one compare-and-swap that checks generation and `LIVE`
//! together, uses the slot's data, and drops the reference. This is
//! lock-free and async-signal-safe: a handler that interrupts any other
//! operation on the same slot never waits for it.
//!
//! `free` clears `LIVE` (no new readers), waits for the readers already
//! inside (only ever other threads' bounded operations: `free` itself is
//! never called from a signal handler), takes the data out, and bumps the
//! generation. `alloc` writes the data while the slot is not `LIVE`, then
//! publishes it with a Release store of `LIVE`.

use crate::error::{Error, ErrorCode};
use crate::sync::append_vec::AppendVec;
use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering, UnsafeCell, spin_hint};

const GEN_BITS: u32 = 40;
const GEN_MASK: u64 = (1 << GEN_BITS) - 1;
const LIVE: u64 = 1 << GEN_BITS;
const READER: u64 = 1 << (GEN_BITS + 1);

/// Upper bound on slots per table (`index + 1` fits the 24 bits above the
/// generation); beyond it allocation fails with `OUT_OF_HANDLES` /
/// `OUT_OF_SESSIONS`.
pub(crate) const MAX_SLOTS: usize = (1 << (64 - GEN_BITS)) - 1;

/// The process-wide source of generations (see the module documentation).
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A generation no allocation in this process has had yet (never 0).
/// Taken on allocation paths only (not signal-safe ones).
pub(crate) fn next_generation() -> u64 {
    loop {
        let g = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & GEN_MASK;
        if g != 0 {
            return g;
        }
    }
}

pub(crate) struct Slot<T> {
    state: AtomicU64,
    data: UnsafeCell<Option<T>>,
}

impl<T> Slot<T> {
    /// Moves the state word of this slot from `st` to `next(st)` with a CAS
    /// loop, as long as it is LIVE with `generation`; `false` (and no change)
    /// once it is not. Lock-free: a failed CAS means another thread changed
    /// the word, i.e. made progress.
    #[inline]
    fn cas_live(&self, generation: u64, next: impl Fn(u64) -> u64, success: Ordering) -> bool {
        let mut st = self.state.load(Ordering::Acquire);
        loop {
            if st & GEN_MASK != generation || st & LIVE == 0 {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(st, next(st), success, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => st = now,
            }
        }
    }
}

// SAFETY: `data` is written only by `alloc`/`free` while no reader can hold
// a reference (the LIVE/reader protocol above), and read through shared
// references by readers; `T: Send + Sync` makes both sound across threads.
unsafe impl<T: Send + Sync> Sync for Slot<T> {}

pub(crate) struct SlotTable<T> {
    slots: AppendVec<Slot<T>>,
    free: Mutex<Vec<usize>>,
    in_use: AtomicUsize,
    exhausted: ErrorCode,
    /// Slots never exceed this many ([`MAX_SLOTS`] outside tests).
    capacity: usize,
}

/// A reader reference to a live slot's data; dropping it releases the slot.
pub(crate) struct Ref<'a, T> {
    slot: &'a Slot<T>,
    data: &'a T,
}

impl<T> core::ops::Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.data
    }
}

impl<T> Drop for Ref<'_, T> {
    fn drop(&mut self) {
        self.slot.state.fetch_sub(READER, Ordering::Release);
    }
}

fn split(key: u64) -> Option<(usize, u64)> {
    let index = (key >> GEN_BITS).checked_sub(1)? as usize;
    let generation = key & GEN_MASK;
    (generation != 0).then_some((index, generation))
}

impl<T: Send + Sync> SlotTable<T> {
    /// A table of at most [`MAX_SLOTS`] slots whose exhaustion is reported
    /// as `exhausted`.
    pub(crate) fn new(exhausted: ErrorCode) -> Self {
        Self::with_capacity(exhausted, MAX_SLOTS)
    }

    /// A table of at most `capacity` slots (tests only, outside this
    /// module: [`ToolState::with_handle_capacity`](super::ToolState)).
    pub(super) fn with_capacity(exhausted: ErrorCode, capacity: usize) -> Self {
        Self {
            slots: AppendVec::new(),
            free: Mutex::new(Vec::new()),
            in_use: AtomicUsize::new(0),
            exhausted,
            capacity: capacity.min(MAX_SLOTS),
        }
    }

    /// Stores `value` in a free slot and returns its key. Not signal-safe.
    pub(crate) fn alloc(&self, value: T) -> Result<u64, Error> {
        self.try_alloc(value).map_err(|(e, _)| e)
    }

    /// As [`SlotTable::alloc`], but a refused value is handed back, for
    /// values that must be cleaned up (a handle's watermark subscription).
    pub(crate) fn try_alloc(&self, value: T) -> Result<u64, (Error, T)> {
        let reuse = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let index = match reuse {
            Some(i) => i,
            None => {
                if self.slots.len() >= self.capacity {
                    return Err((Error::Code(self.exhausted), value));
                }
                self.slots.push(Slot {
                    state: AtomicU64::new(0),
                    data: UnsafeCell::new(None),
                })
            }
        };
        let slot = self.slots.get(index).expect("slot exists");
        let old = slot.state.load(Ordering::Acquire);
        debug_assert_eq!(old & !GEN_MASK, 0, "a free slot is neither live nor read");
        let generation = next_generation();
        // SAFETY: the slot is not LIVE and has no readers (it is on the free
        // list or fresh), so nobody else accesses `data`.
        slot.data.with_mut(|d| unsafe { *d = Some(value) });
        slot.state.store(generation | LIVE, Ordering::Release);
        self.in_use.fetch_add(1, Ordering::Relaxed);
        Ok(((index as u64 + 1) << GEN_BITS) | generation)
    }

    /// A reader reference to the live slot `key`, or `None` if the key is
    /// stale, freed or was never issued. Lock-free, async-signal-safe.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<Ref<'_, T>> {
        let (index, generation) = split(key)?;
        let slot = self.slots.get(index)?;
        if !slot.cas_live(generation, |st| st + READER, Ordering::Acquire) {
            return None;
        }
        // SAFETY: we hold a reader reference on a LIVE slot: `free` cannot
        // take the data out until we drop it, and `alloc` only writes
        // non-LIVE slots. The Acquire CAS synchronises with the Release
        // store in `alloc` that published the data.
        let data = slot
            .data
            .with(|d| unsafe { (*d).as_ref() })
            .expect("a live slot has data");
        Some(Ref { slot, data })
    }

    /// Whether `key` names a live slot: one load, no reader reference (for
    /// checks that need no access to the data). Async-signal-safe.
    #[inline]
    pub(crate) fn is_live(&self, key: u64) -> bool {
        split(key).is_some_and(|(index, generation)| {
            self.slots.get(index).is_some_and(|slot| {
                let st = slot.state.load(Ordering::Acquire);
                st & GEN_MASK == generation && st & LIVE != 0
            })
        })
    }

    /// Frees slot `key` and returns its data. `None` if the key is not live.
    /// Waits for readers on other threads to finish. Not signal-safe.
    pub(crate) fn free(&self, key: u64) -> Option<T> {
        let (index, generation) = split(key)?;
        let slot = self.slots.get(index)?;
        if !slot.cas_live(generation, |st| st & !LIVE, Ordering::AcqRel) {
            return None;
        }
        // Readers that got in before LIVE was cleared finish their bounded
        // operation; no new reader can enter.
        while slot.state.load(Ordering::Acquire) >> (GEN_BITS + 1) != 0 {
            spin_hint();
        }
        // SAFETY: not LIVE and no readers: we have exclusive access.
        let data = slot.data.with_mut(|d| unsafe { (*d).take() });
        // Keep the generation: `alloc` bumps it when it reuses the slot, so
        // this key stays invalid from now on.
        slot.state.store(generation, Ordering::Release);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(index);
        self.in_use.fetch_sub(1, Ordering::Relaxed);
        data
    }

    /// Number of live slots.
    pub(crate) fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn stale_keys_and_null_are_rejected() {
        let t: SlotTable<u32> = SlotTable::new(ErrorCode::OutOfHandles);
        assert!(t.get(0).is_none());
        assert!(t.get(1).is_none());
        let k = t.alloc(7).unwrap();
        assert_eq!(*t.get(k).unwrap(), 7);
        assert_eq!(t.free(k), Some(7));
        assert!(t.get(k).is_none(), "freed key");
        assert!(t.free(k).is_none(), "double free");
        let k2 = t.alloc(8).unwrap();
        assert_ne!(k, k2, "reused slot gets a new generation");
        assert!(t.get(k).is_none());
        assert_eq!(*t.get(k2).unwrap(), 8);
        assert!(t.get(k2 + 1).is_none(), "wrong generation");
        assert!(t.get(u64::MAX).is_none());
        assert_eq!(t.in_use(), 1);
    }

    #[test]
    fn exhaustion_reports_the_tables_code_and_free_makes_room() {
        let t: SlotTable<u32> = SlotTable::with_capacity(ErrorCode::OutOfSessions, 2);
        let a = t.alloc(1).unwrap();
        let _b = t.alloc(2).unwrap();
        let err = t.alloc(3).unwrap_err();
        assert_eq!(err.code(), ErrorCode::OutOfSessions);
        assert_eq!(t.in_use(), 2, "a refused alloc takes nothing");
        assert_eq!(t.free(a), Some(1));
        let c = t.alloc(3).unwrap();
        assert_eq!(*t.get(c).unwrap(), 3);
        assert!(t.get(a).is_none(), "the reused slot's old key stays dead");
    }

    #[test]
    fn free_waits_for_readers_on_other_threads() {
        let t = std::sync::Arc::new(SlotTable::<Vec<u64>>::new(ErrorCode::OutOfHandles));
        let key = t.alloc(vec![1; 64]).unwrap();
        // Readers that have read once: the free waits for both (or for one
        // to have ended, by panicking), so it overlaps their reads on any
        // schedule.
        let reading = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (t, reading) = (t.clone(), reading.clone());
                std::thread::spawn(move || {
                    let mut reads = 0u64;
                    while let Some(r) = t.get(key) {
                        assert_eq!(r.iter().sum::<u64>(), 64);
                        reads += 1;
                        if reads == 1 {
                            reading.fetch_add(1, std::sync::atomic::Ordering::Release);
                        }
                    }
                    reads
                })
            })
            .collect();
        while reading.load(std::sync::atomic::Ordering::Acquire) < 2
            && !readers.iter().any(|r| r.is_finished())
        {
            std::thread::yield_now();
        }
        assert_eq!(t.free(key).map(|v| v.len()), Some(64));
        for r in readers {
            assert!(r.join().unwrap() >= 1, "each reader read before the free");
        }
    }
}
