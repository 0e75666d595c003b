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
//! Each slot's state word holds `generation` (bits 0–39), `LIVE` (bit 40),
//! `FREEING` (bit 41) and a reader count (bits 42–63). An operation takes a
//! *reader reference* with one compare-and-swap that checks generation and
//! `LIVE` together, uses the slot's data, and drops the reference with one
//! subtraction. This is lock-free and async-signal-safe: a handler that
//! interrupts any other operation on the same slot never waits for it.
//!
//! **Freeing never waits.** `free` takes a reader reference itself, then
//! swaps `LIVE` for `FREEING` in one compare-and-swap (no new reader can
//! enter, the key is dead), lets its caller look at the data, and drops
//! its reference. Whoever brings the slot to "freeing, nobody inside" — the
//! free, or the last reader to leave, maybe on another thread or in a
//! signal handler — does the last step, so a free never spins on another
//! thread's progress (a descheduled reader). The last step depends on who
//! takes it, since a reader may be a signal handler:
//!
//! - it runs [`Retire::finish`] (async-signal-safe: the event
//!   registrations' free callback), exactly once per freed allocation;
//! - the free, when it is the last, then takes the data out and gives the
//!   slot back to the *free* stack, as before: [`Freed::Now`];
//! - a reader, when it is the last, allocates and frees nothing: it leaves
//!   the data in the slot and pushes the slot on the *retired* stack. The
//!   free told its caller [`Freed::Later`]; the table's owner calls
//!   [`SlotTable::reclaim`] from normal code (its allocation and free
//!   paths) to take the data of retired slots out, clean it up, and give
//!   the slots back.
//!
//! Both stacks are lock-free [`IndexStack`]s linked through the slots, so
//! allocation is O(1): pop a free slot, or append one while the table is
//! below its capacity. `try_alloc` writes the data while the slot is not
//! `LIVE`, then publishes it with a Release store of `LIVE`. Slots live in
//! an [`AppendVec`]: never freed before the table, so a stale key always
//! names valid memory.
//!
//! This is the one slot table of the engine: tool keys (sessions, pvar
//! handles, cvar handles) and event registrations use it.

use super::append_vec::AppendVec;
use super::index_stack::IndexStack;
use crate::sync::unmodelled;
use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Ordering, UnsafeCell};

pub(crate) const GEN_BITS: u32 = 40;
pub(crate) const GEN_MASK: u64 = (1 << GEN_BITS) - 1;
const LIVE: u64 = 1 << GEN_BITS;
const FREEING: u64 = 1 << (GEN_BITS + 1);
const READER_SHIFT: u32 = GEN_BITS + 2;
const READER: u64 = 1 << READER_SHIFT;

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

/// What a slot's data does when the last one leaves its freed slot.
pub(crate) trait Retire {
    /// Runs exactly once per freed allocation, by the free or by the last
    /// reader to leave (maybe in a signal handler): must be
    /// async-signal-safe. Sees everything the free's caller did to the
    /// data before the free returned. Default: nothing.
    fn finish(&self) {}
}

/// What [`SlotTable::free`] did with the slot's data.
pub(crate) enum Freed<T> {
    /// Nobody else was inside: here is the data, the slot is free again.
    Now(T),
    /// Readers were inside: the last of them finishes the slot and leaves
    /// it, with its data, for [`SlotTable::reclaim`].
    Later,
}

/// One slot: its state word, its link on the free or retired stack, and
/// its data.
struct Entry<T> {
    state: AtomicU64,
    link: AtomicU32,
    data: UnsafeCell<Option<T>>,
}

// SAFETY: `data` is written only by `try_alloc` (a slot popped off the free
// stack: not LIVE, no readers, on no stack, so owned by the allocating
// thread), by `free` (when it left last: not LIVE, nobody inside, the slot
// on no stack yet) and by `reclaim` (a slot popped off the retired stack,
// owned likewise); readers get shared references only while inside a LIVE
// or FREEING slot. `T: Send + Sync` makes both sound across threads.
unsafe impl<T: Send + Sync> Sync for Entry<T> {}

/// See the module documentation.
pub(crate) struct SlotTable<T> {
    slots: AppendVec<Entry<T>>,
    /// Slots that hold no data and can be allocated.
    free: IndexStack,
    /// Freed slots whose last reader left their data for `reclaim`.
    retired: IndexStack,
    in_use: AtomicUsize,
    /// Slots never exceed this many ([`MAX_SLOTS`] outside tests).
    capacity: usize,
}

/// A reader reference to a live slot's data; dropping it releases the
/// slot, and finishes it if it was freed meanwhile and this was the last
/// reference.
pub(crate) struct Ref<'a, T: Retire> {
    table: &'a SlotTable<T>,
    index: usize,
    entry: &'a Entry<T>,
    data: &'a T,
}

impl<T: Retire> core::ops::Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.data
    }
}

impl<T: Retire> Ref<'_, T> {
    /// Whether the slot is still live (not freed). SeqCst, to order it
    /// against the free's compare-and-swap (see `Events::register_callback`).
    pub(crate) fn is_live(&self) -> bool {
        self.entry.state.load(Ordering::SeqCst) & LIVE != 0
    }
}

impl<T: Retire> Drop for Ref<'_, T> {
    fn drop(&mut self) {
        let before = self.entry.state.fetch_sub(READER, Ordering::AcqRel);
        if before & FREEING != 0 && before >> READER_SHIFT == 1 {
            // The last one out of a freed slot: nobody can enter (not LIVE)
            // and nobody else is inside. We may be a signal handler: leave
            // the data for `reclaim`. The AcqRel subtraction saw the
            // free's (and every earlier reader's) work.
            self.data.finish();
            self.entry.state.store(before & GEN_MASK, Ordering::Relaxed);
            self.table.retired.push(self.index, &self.entry.link);
        }
    }
}

/// A key's (index, generation); `None` for 0 and keys below `2^40`.
pub(crate) fn split(key: u64) -> Option<(usize, u64)> {
    let index = (key >> GEN_BITS).checked_sub(1)? as usize;
    let generation = key & GEN_MASK;
    (generation != 0).then_some((index, generation))
}

fn key_of(index: usize, generation: u64) -> u64 {
    ((index as u64 + 1) << GEN_BITS) | generation
}

impl<T: Retire + Send + Sync> Default for SlotTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Retire + Send + Sync> SlotTable<T> {
    /// A table of at most [`MAX_SLOTS`] slots.
    pub(crate) fn new() -> Self {
        Self::with_capacity(MAX_SLOTS)
    }

    /// A table of at most `capacity` slots.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            slots: AppendVec::new(),
            free: IndexStack::new(),
            retired: IndexStack::new(),
            in_use: AtomicUsize::new(0),
            capacity: capacity.min(MAX_SLOTS),
        }
    }

    fn link(&self, index: usize) -> &AtomicU32 {
        &self.slots.get(index).expect("a stacked slot exists").link
    }

    /// Stores `value` in a free slot and returns its key; the value back
    /// if the table is full (the caller may have to clean it up: a
    /// handle's watermark subscription). Slots waiting for [`reclaim`]
    /// are not free: owners reclaim before allocating. O(1): a pop, or an
    /// append. Not signal-safe (an append may allocate).
    ///
    /// [`reclaim`]: SlotTable::reclaim
    pub(crate) fn try_alloc(&self, value: T) -> Result<u64, T> {
        let index = match self.free.pop(|i| self.link(i)) {
            Some(index) => index,
            None => {
                let capacity = self.capacity;
                let pushed = self.slots.push_with(|index| {
                    if index < capacity {
                        let entry = Entry {
                            state: AtomicU64::new(0),
                            link: AtomicU32::new(0),
                            data: UnsafeCell::new(None),
                        };
                        (Some(entry), Some(index))
                    } else {
                        (None, None)
                    }
                });
                match pushed {
                    Some(index) => index,
                    None => return Err(value),
                }
            }
        };
        let entry = self.slots.get(index).expect("slot exists");
        let old = entry.state.load(Ordering::Acquire);
        debug_assert_eq!(old & !GEN_MASK, 0, "a free slot is neither live nor read");
        let generation = next_generation();
        // SAFETY: the slot was popped off the free stack (or just made): it
        // is not LIVE, has no readers and is on no stack, so this thread
        // alone accesses `data`. The pop's Acquire saw the take-out of the
        // data the slot held.
        entry.data.with_mut(|d| unsafe {
            debug_assert!((*d).is_none(), "a free slot holds no data");
            *d = Some(value);
        });
        entry.state.store(generation | LIVE, Ordering::Release);
        self.in_use.fetch_add(1, Ordering::Relaxed);
        Ok(key_of(index, generation))
    }

    /// A reader reference to the live slot `key`, or `None` if the key is
    /// stale, freed, of another table, or was never issued. Lock-free,
    /// async-signal-safe (and so is dropping the reference).
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<Ref<'_, T>> {
        let (index, generation) = split(key)?;
        let entry = self.slots.get(index)?;
        let mut st = entry.state.load(Ordering::Acquire);
        loop {
            if st & GEN_MASK != generation || st & LIVE == 0 {
                return None;
            }
            // Lock-free: a failed CAS means another thread changed the
            // word, i.e. made progress.
            match entry.state.compare_exchange_weak(
                st,
                st + READER,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => st = now,
            }
        }
        // SAFETY: we hold a reader reference on a LIVE slot: nobody takes
        // the data out until the last reference is dropped, and
        // `try_alloc` only writes slots that are off the free stack (not
        // LIVE, nobody inside). The Acquire CAS synchronises with the
        // Release store in `try_alloc` that published the data.
        let data = entry
            .data
            .with(|d| unsafe { (*d).as_ref() })
            .expect("a live slot has data");
        Some(Ref {
            table: self,
            index,
            entry,
            data,
        })
    }

    /// Whether `key` names a live slot: one load, no reader reference (for
    /// checks that need no access to the data). Async-signal-safe.
    #[inline]
    pub(crate) fn is_live(&self, key: u64) -> bool {
        split(key).is_some_and(|(index, generation)| {
            self.slots.get(index).is_some_and(|entry| {
                let st = entry.state.load(Ordering::Acquire);
                st & GEN_MASK == generation && st & LIVE != 0
            })
        })
    }

    /// Frees slot `key`: no reader enters it again. Runs `before` on its
    /// data first (as the only freer, with readers maybe still inside),
    /// then finishes the slot if nobody else is inside ([`Freed::Now`]:
    /// the data, the slot free again), else leaves that to the last reader
    /// ([`Freed::Later`]). `None` if the key is not live (or another free
    /// of it won). Never waits. Not signal-safe (when it finishes, it
    /// hands the data to the caller, who drops it).
    pub(crate) fn free(&self, key: u64, before: impl FnOnce(&T)) -> Option<Freed<T>> {
        let (_, generation) = split(key)?;
        // Enter first, so that the slot cannot finish under `before`.
        let inside = self.get(key)?;
        let mut st = inside.entry.state.load(Ordering::Acquire);
        loop {
            if st & GEN_MASK != generation || st & LIVE == 0 {
                return None; // another free won; dropping `inside` is ours
            }
            match inside.entry.state.compare_exchange_weak(
                st,
                (st & !LIVE) | FREEING,
                Ordering::SeqCst,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => st = now,
            }
        }
        self.in_use.fetch_sub(1, Ordering::Relaxed);
        before(inside.data);
        let (index, entry, data) = (inside.index, inside.entry, inside.data);
        core::mem::forget(inside); // we leave by hand, below
        let was = entry.state.fetch_sub(READER, Ordering::AcqRel);
        if was >> READER_SHIFT != 1 {
            return Some(Freed::Later);
        }
        // The last one out, and not a signal handler: finish and take the
        // data now.
        data.finish();
        // SAFETY: not LIVE, nobody inside, and the slot is on no stack
        // (we have not pushed it): this thread alone accesses `data`; the
        // AcqRel subtraction saw every reader's accesses end.
        let value = entry.data.with_mut(|d| unsafe { (*d).take() });
        entry.state.store(generation, Ordering::Relaxed);
        self.free.push(index, &entry.link);
        value.map(Freed::Now)
    }

    /// The data of one freed slot whose last reader left it (see
    /// [`Freed::Later`]), taken out; the slot is free again. `None` when
    /// none waits. The owner cleans the data up. Lock-free; not
    /// signal-safe (the caller drops the data).
    pub(crate) fn reclaim(&self) -> Option<T> {
        let index = self.retired.pop(|i| self.link(i))?;
        let entry = self.slots.get(index).expect("slot exists");
        // SAFETY: a retired slot is not LIVE, nobody is inside, and we
        // popped it off the retired stack, so this thread alone accesses
        // `data`; the pop's Acquire synchronises with the last reader's
        // Release push.
        let value = entry.data.with_mut(|d| unsafe { (*d).take() });
        self.free.push(index, &entry.link);
        value
    }

    /// Whether some freed slot waits for [`SlotTable::reclaim`] (a racy
    /// hint: one load). Async-signal-safe.
    pub(crate) fn has_retired(&self) -> bool {
        !self.retired.is_empty()
    }

    /// Runs `f` on every slot live at the time it is visited, with its key,
    /// inside a reader reference (so the data stays valid; a slot freed
    /// meanwhile is skipped). Lock-free, allocation-free.
    pub(crate) fn for_each_live(&self, mut f: impl FnMut(u64, &T)) {
        for (index, entry) in self.slots.iter() {
            let st = entry.state.load(Ordering::Acquire);
            if st & LIVE == 0 {
                continue;
            }
            let key = ((index as u64 + 1) << GEN_BITS) | (st & GEN_MASK);
            if let Some(inside) = self.get(key) {
                f(key, &inside);
            }
        }
    }

    /// Number of live slots (allocated, not freed).
    pub(crate) fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    impl Retire for u32 {}
    impl Retire for Vec<u64> {}

    fn now<T>(f: Option<Freed<T>>) -> Option<T> {
        match f? {
            Freed::Now(v) => Some(v),
            Freed::Later => panic!("nobody was inside"),
        }
    }

    #[test]
    fn stale_keys_and_null_are_rejected() {
        let t: SlotTable<u32> = SlotTable::new();
        assert!(t.get(0).is_none());
        assert!(t.get(1).is_none());
        let k = t.try_alloc(7).unwrap();
        assert_eq!(*t.get(k).unwrap(), 7);
        assert_eq!(now(t.free(k, |_| ())), Some(7));
        assert!(t.get(k).is_none(), "freed key");
        assert!(t.free(k, |_| ()).is_none(), "double free");
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
        assert_eq!(now(t.free(a, |_| ())), Some(1));
        let c = t.try_alloc(3).unwrap();
        assert_eq!(*t.get(c).unwrap(), 3);
        assert!(t.get(a).is_none(), "the reused slot's old key stays dead");
    }

    /// Freeing while a reader is inside returns at once; the reader's
    /// leaving retires the slot, `reclaim` gives the data back and makes
    /// the slot allocatable again.
    #[test]
    fn the_last_reader_hands_the_slot_to_reclaim() {
        let t: SlotTable<u32> = SlotTable::with_capacity(1);
        let k = t.try_alloc(5).unwrap();
        let r = t.get(k).unwrap();
        let mut seen = None;
        assert!(matches!(t.free(k, |v| seen = Some(*v)), Some(Freed::Later)));
        assert_eq!(seen, Some(5), "`before` ran on the data");
        assert!(t.get(k).is_none(), "no reader enters a freed slot");
        assert_eq!(t.in_use(), 0, "the key is dead at once");
        assert_eq!(*r, 5, "the reader inside still reads the data");
        assert!(
            !t.has_retired() && t.reclaim().is_none(),
            "a reader is inside"
        );
        assert!(t.try_alloc(6).is_err(), "the slot is not free yet");
        drop(r);
        assert!(t.has_retired());
        assert_eq!(t.reclaim(), Some(5));
        assert!(t.reclaim().is_none(), "reclaimed once");
        let k2 = t.try_alloc(6).unwrap();
        assert_eq!(*t.get(k2).unwrap(), 6);
    }

    /// Allocation takes O(1): filling a large table and refilling it after
    /// freeing every other slot reuses the freed slots without a scan.
    /// (Its speed is measured by `examples/slot_scaling.rs`; here, that
    /// the free stack hands out exactly the freed slots.)
    #[test]
    fn freed_slots_are_reused_exactly() {
        let t: SlotTable<u32> = SlotTable::with_capacity(1000);
        let keys: Vec<u64> = (0..1000).map(|i| t.try_alloc(i).unwrap()).collect();
        assert!(t.try_alloc(0).is_err());
        for &k in keys.iter().step_by(2) {
            assert!(now(t.free(k, |_| ())).is_some());
        }
        let mut again: Vec<usize> = (0..500)
            .map(|i| split(t.try_alloc(i).unwrap()).unwrap().0)
            .collect();
        again.sort_unstable();
        let freed: Vec<usize> = keys
            .iter()
            .step_by(2)
            .map(|&k| split(k).unwrap().0)
            .collect();
        assert_eq!(again, freed);
        assert!(t.try_alloc(0).is_err());
    }

    /// What a free does while readers on other threads are inside: it
    /// never waits for them. Two readers park inside the slot (holding
    /// their references until a flag is set); the free runs on a third
    /// thread, and the flag is set only once the free has returned or 10 s
    /// have passed (a free that waited for the readers would wait for
    /// ever: the bound keeps the failure from hanging the suite). Every
    /// slot is finished by whoever left last and reclaimed once.
    #[test]
    fn free_does_not_wait_for_readers_on_other_threads() {
        const ROUNDS: usize = 100;
        let t = Arc::new(SlotTable::<Vec<u64>>::with_capacity(4));
        for round in 0..ROUNDS {
            let key = t.try_alloc(vec![round as u64; 64]).unwrap();
            let inside = Arc::new(AtomicUsize::new(0));
            let go = Arc::new(AtomicBool::new(false));
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let (t, inside, go) = (t.clone(), inside.clone(), go.clone());
                    std::thread::spawn(move || {
                        let r = t.get(key).expect("live until freed");
                        inside.fetch_add(1, std::sync::atomic::Ordering::Release);
                        while !go.load(std::sync::atomic::Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                        assert_eq!(r.iter().sum::<u64>(), 64 * round as u64);
                    })
                })
                .collect();
            while inside.load(std::sync::atomic::Ordering::Acquire) < 2 {
                std::thread::yield_now();
            }
            let freer = {
                let t = t.clone();
                std::thread::spawn(move || {
                    matches!(t.free(key, |v| assert_eq!(v.len(), 64)), Some(Freed::Later))
                })
            };
            let start = std::time::Instant::now();
            while !freer.is_finished() && start.elapsed() < std::time::Duration::from_secs(10) {
                std::thread::yield_now();
            }
            let returned = freer.is_finished();
            go.store(true, std::sync::atomic::Ordering::Release);
            assert!(returned, "the free waited for the readers inside");
            assert!(freer.join().unwrap(), "readers were inside: Freed::Later");
            assert!(t.get(key).is_none());
            for r in readers {
                r.join().unwrap();
            }
            assert_eq!(t.reclaim().map(|v| v[0]), Some(round as u64));
            assert!(t.reclaim().is_none());
        }
        assert_eq!(t.in_use(), 0);
    }
}
