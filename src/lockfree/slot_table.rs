//! A table of generation-checked slots: how every key a tool holds — a
//! pvar session, a pvar handle, a cvar handle — is looked up and validated
//! without locks.
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
//! generation. `try_alloc` writes the data while the slot is not `LIVE`,
//! then publishes it with a Release store of `LIVE`. Slots live in a
//! [`Recycler`]: a freed slot is handed out again, never freed before the
//! table, so a stale key always names valid memory.

use super::recycler::Recycler;
use crate::sync::unmodelled;
use crate::sync::{AtomicU64, AtomicUsize, Ordering, UnsafeCell, spin_hint};

pub(crate) const GEN_BITS: u32 = 40;
pub(crate) const GEN_MASK: u64 = (1 << GEN_BITS) - 1;
const LIVE: u64 = 1 << GEN_BITS;
const READER: u64 = 1 << (GEN_BITS + 1);

/// Upper bound on slots per table (`index + 1` fits the 24 bits above the
/// generation); beyond it allocation fails (`OUT_OF_HANDLES` /
/// `OUT_OF_SESSIONS` for the tool's tables).
pub(crate) const MAX_SLOTS: usize = (1 << (64 - GEN_BITS)) - 1;

/// The process-wide source of generations (see the module documentation).
static GENERATIONS: unmodelled::AtomicU64 = unmodelled::AtomicU64::new(1);

/// A generation no allocation in this process has had yet (never 0).
/// Taken on allocation paths only (not signal-safe ones).
pub(crate) fn next_generation() -> u64 {
    loop {
        let g = GENERATIONS.fetch_add(1, Ordering::Relaxed) & GEN_MASK;
        if g != 0 {
            return g;
        }
    }
}

/// One slot: its state word and its data.
struct Entry<T> {
    state: AtomicU64,
    data: UnsafeCell<Option<T>>,
}

impl<T> Entry<T> {
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

// SAFETY: `data` is written only by `try_alloc`/`free` while no reader can
// hold a reference (the LIVE/reader protocol above), and read through
// shared references by readers; `T: Send + Sync` makes both sound across
// threads.
unsafe impl<T: Send + Sync> Sync for Entry<T> {}

/// See the module documentation.
pub(crate) struct SlotTable<T> {
    slots: Recycler<Entry<T>>,
    in_use: AtomicUsize,
    /// Slots never exceed this many ([`MAX_SLOTS`] outside tests).
    capacity: usize,
}

/// A reader reference to a live slot's data; dropping it releases the slot.
pub(crate) struct Ref<'a, T> {
    entry: &'a Entry<T>,
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
        self.entry.state.fetch_sub(READER, Ordering::Release);
    }
}

/// A key's (index, generation); `None` for 0 and keys below `2^40`.
pub(crate) fn split(key: u64) -> Option<(usize, u64)> {
    let index = (key >> GEN_BITS).checked_sub(1)? as usize;
    let generation = key & GEN_MASK;
    (generation != 0).then_some((index, generation))
}

impl<T: Send + Sync> Default for SlotTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync> SlotTable<T> {
    /// A table of at most [`MAX_SLOTS`] slots.
    pub(crate) fn new() -> Self {
        Self::with_capacity(MAX_SLOTS)
    }

    /// A table of at most `capacity` slots (tests use small ones).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            slots: Recycler::new(),
            in_use: AtomicUsize::new(0),
            capacity: capacity.min(MAX_SLOTS),
        }
    }

    /// Stores `value` in a free slot and returns its key; the value back
    /// if the table is full (the caller may have to clean it up: a
    /// handle's watermark subscription). Not signal-safe.
    pub(crate) fn try_alloc(&self, value: T) -> Result<u64, T> {
        let Some(index) = self.slots.take(self.capacity, || Entry {
            state: AtomicU64::new(0),
            data: UnsafeCell::new(None),
        }) else {
            return Err(value);
        };
        let entry = self.slots.items.get(index).expect("slot exists");
        let old = entry.state.load(Ordering::Acquire);
        debug_assert_eq!(old & !GEN_MASK, 0, "a free slot is neither live nor read");
        let generation = next_generation();
        // SAFETY: the slot is not LIVE and has no readers (it is fresh or
        // was given back by `free` after its readers left), so nobody else
        // accesses `data`.
        entry.data.with_mut(|d| unsafe { *d = Some(value) });
        entry.state.store(generation | LIVE, Ordering::Release);
        self.in_use.fetch_add(1, Ordering::Relaxed);
        Ok(((index as u64 + 1) << GEN_BITS) | generation)
    }

    /// A reader reference to the live slot `key`, or `None` if the key is
    /// stale, freed, of another table, or was never issued. Lock-free,
    /// async-signal-safe.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<Ref<'_, T>> {
        let (index, generation) = split(key)?;
        let entry = self.slots.items.get(index)?;
        if !entry.cas_live(generation, |st| st + READER, Ordering::Acquire) {
            return None;
        }
        // SAFETY: we hold a reader reference on a LIVE slot: `free` cannot
        // take the data out until we drop it, and `try_alloc` only writes
        // non-LIVE slots. The Acquire CAS synchronises with the Release
        // store in `try_alloc` that published the data.
        let data = entry
            .data
            .with(|d| unsafe { (*d).as_ref() })
            .expect("a live slot has data");
        Some(Ref { entry, data })
    }

    /// Whether `key` names a live slot: one load, no reader reference (for
    /// checks that need no access to the data). Async-signal-safe.
    #[inline]
    pub(crate) fn is_live(&self, key: u64) -> bool {
        split(key).is_some_and(|(index, generation)| {
            self.slots.items.get(index).is_some_and(|entry| {
                let st = entry.state.load(Ordering::Acquire);
                st & GEN_MASK == generation && st & LIVE != 0
            })
        })
    }

    /// Frees slot `key` and returns its data. `None` if the key is not live.
    /// Waits for readers on other threads to finish. Not signal-safe.
    pub(crate) fn free(&self, key: u64) -> Option<T> {
        let (index, generation) = split(key)?;
        let entry = self.slots.items.get(index)?;
        if !entry.cas_live(generation, |st| st & !LIVE, Ordering::AcqRel) {
            return None;
        }
        // Readers that got in before LIVE was cleared finish their bounded
        // operation; no new reader can enter.
        while entry.state.load(Ordering::Acquire) >> (GEN_BITS + 1) != 0 {
            spin_hint();
        }
        // SAFETY: not LIVE and no readers: we have exclusive access.
        let data = entry.data.with_mut(|d| unsafe { (*d).take() });
        // Keep the generation: this key stays invalid, and `try_alloc`
        // gives the slot a new one.
        entry.state.store(generation, Ordering::Release);
        self.slots.give_back(index);
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
        let t: SlotTable<u32> = SlotTable::new();
        assert!(t.get(0).is_none());
        assert!(t.get(1).is_none());
        let k = t.try_alloc(7).unwrap();
        assert_eq!(*t.get(k).unwrap(), 7);
        assert_eq!(t.free(k), Some(7));
        assert!(t.get(k).is_none(), "freed key");
        assert!(t.free(k).is_none(), "double free");
        let k2 = t.try_alloc(8).unwrap();
        assert_ne!(k, k2, "reused slot gets a new generation");
        assert!(t.get(k).is_none());
        assert_eq!(*t.get(k2).unwrap(), 8);
        assert!(t.get(k2 + 1).is_none(), "wrong generation");
        assert!(t.get(u64::MAX).is_none());
        assert_eq!(t.in_use(), 1);
    }

    #[test]
    fn a_full_table_refuses_and_free_makes_room() {
        let t: SlotTable<u32> = SlotTable::with_capacity(2);
        let a = t.try_alloc(1).unwrap();
        let _b = t.try_alloc(2).unwrap();
        assert_eq!(t.try_alloc(3), Err(3), "full: the value comes back");
        assert_eq!(t.in_use(), 2, "a refused alloc takes nothing");
        assert_eq!(t.free(a), Some(1));
        let c = t.try_alloc(3).unwrap();
        assert_eq!(*t.get(c).unwrap(), 3);
        assert!(t.get(a).is_none(), "the reused slot's old key stays dead");
    }

    #[test]
    fn free_waits_for_readers_on_other_threads() {
        let t = std::sync::Arc::new(SlotTable::<Vec<u64>>::new());
        let key = t.try_alloc(vec![1; 64]).unwrap();
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
