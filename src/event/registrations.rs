//! Event registrations (`MPI_T_event_registration`): generation-checked
//! slots whose release waits for nobody.
//!
//! A key is `(index + 1) << 40 | generation`, with generations drawn from
//! the process-wide counter every tool key uses, so a pvar handle's key or
//! a freed registration's key never names a live registration.
//!
//! Each slot's state word holds the generation (bits 0–39), `LIVE` (bit
//! 40), `RETIRING` (bit 41) and the number of deliveries in flight (bits
//! 42–63). A delivery enters with one compare-and-swap that checks the
//! generation and `LIVE` together ([`Registrations::enter`]) and leaves with
//! a subtraction. Freeing ([`Registrations::retire`]) clears `LIVE` and sets
//! `RETIRING` in one compare-and-swap: no new delivery can enter, and the
//! call returns at once — the standard lets a callback free its own
//! registration, so freeing must not wait for deliveries. Whoever brings
//! the slot to "retiring, nobody inside" — the free itself, or the last
//! delivery to leave — runs the free callback and makes the slot
//! allocatable. That can be a delivery in a signal handler, so finishing
//! allocates and frees nothing: the registration's data (its callbacks)
//! stays in the slot until the slot is allocated again, from normal code.

use crate::lockfree::append_vec::AppendVec;
use crate::lockfree::slot_table::{GEN_BITS, GEN_MASK, next_generation, split};
use crate::sync::{AtomicU64, Mutex, Ordering, UnsafeCell};

const LIVE: u64 = 1 << GEN_BITS;
const RETIRING: u64 = 1 << (GEN_BITS + 1);
const INSIDE: u64 = 1 << (GEN_BITS + 2);

/// What a slot's owner must do once it is retired and empty.
pub(crate) trait Retire {
    /// Called exactly once per retired allocation, by the free or by the
    /// last delivery to leave; must be async-signal-safe.
    fn finish(&self);
}

struct Slot<T> {
    state: AtomicU64,
    data: UnsafeCell<Option<T>>,
}

// SAFETY: `data` is written only by `alloc`, while the slot is neither
// LIVE nor RETIRING and has nobody inside (so no reader exists), under the
// allocation mutex; readers get shared references only while inside a
// LIVE or RETIRING slot. `T: Send + Sync` makes both sound across threads.
unsafe impl<T: Send + Sync> Sync for Slot<T> {}

/// See the module documentation.
pub(crate) struct Registrations<T> {
    slots: AppendVec<Slot<T>>,
    alloc: Mutex<()>,
    capacity: usize,
}

/// A delivery's reference to a registration; leaving it may finish a
/// retired slot.
pub(crate) struct Inside<'a, T: Retire> {
    slot: &'a Slot<T>,
    data: &'a T,
}

impl<T: Retire> core::ops::Deref for Inside<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.data
    }
}

impl<T: Retire> Inside<'_, T> {
    /// Whether the registration is still live (not retired). SeqCst, to
    /// order it against the retiring compare-and-swap.
    pub(crate) fn is_live(&self) -> bool {
        self.slot.state.load(Ordering::SeqCst) & LIVE != 0
    }
}

impl<T: Retire> Drop for Inside<'_, T> {
    fn drop(&mut self) {
        let before = self.slot.state.fetch_sub(INSIDE, Ordering::AcqRel);
        if before & RETIRING != 0 && before >> (GEN_BITS + 2) == 1 {
            // The last one out of a retired slot: nobody can enter (not
            // LIVE) and nobody else is inside.
            self.data.finish();
            let generation = before & GEN_MASK;
            self.slot.state.store(generation, Ordering::Release);
        }
    }
}

impl<T: Retire + Send + Sync> Registrations<T> {
    /// A table of at most `capacity` registrations.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            slots: AppendVec::new(),
            alloc: Mutex::new(()),
            capacity: capacity.min((1 << (64 - GEN_BITS - 2)) - 1),
        }
    }

    /// Stores `value` in a free slot and returns its key, or gives it back
    /// when the table is full. The data a reused slot held is dropped here.
    /// Not signal-safe.
    pub(crate) fn alloc(&self, value: T) -> Result<u64, T> {
        let _g = self.alloc.lock();
        let index = self
            .slots
            .iter()
            .find(|(_, s)| s.state.load(Ordering::Acquire) & !GEN_MASK == 0)
            .map(|(i, _)| i);
        let index = match index {
            Some(i) => i,
            None if self.slots.len() < self.capacity => self.slots.push(Slot {
                state: AtomicU64::new(0),
                data: UnsafeCell::new(None),
            }),
            None => return Err(value),
        };
        let slot = self.slots.get(index).expect("slot exists");
        let generation = next_generation();
        // SAFETY: the slot is neither LIVE nor RETIRING and nobody is
        // inside (checked above; only `alloc`, under the mutex we hold,
        // makes such a slot LIVE again), so nobody else accesses `data`.
        slot.data.with_mut(|d| unsafe { *d = Some(value) });
        slot.state.store(generation | LIVE, Ordering::Release);
        Ok(((index as u64 + 1) << GEN_BITS) | generation)
    }

    /// Enters the live registration `key`; `None` if it is stale, freed,
    /// of another table or never issued. Lock-free, async-signal-safe.
    #[inline]
    pub(crate) fn enter(&self, key: u64) -> Option<Inside<'_, T>> {
        let (index, generation) = split(key)?;
        let slot = self.slots.get(index)?;
        let mut st = slot.state.load(Ordering::Acquire);
        loop {
            if st & GEN_MASK != generation || st & LIVE == 0 {
                return None;
            }
            match slot.state.compare_exchange_weak(
                st,
                st + INSIDE,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => st = now,
            }
        }
        // SAFETY: we are inside a LIVE slot: `alloc` does not write it
        // until it is retired and empty, which needs us to leave. The
        // Acquire CAS synchronises with the Release store in `alloc`.
        let data = slot
            .data
            .with(|d| unsafe { (*d).as_ref() })
            .expect("a live slot has data");
        Some(Inside { slot, data })
    }

    /// Retires registration `key`: no delivery enters it again. Runs
    /// `before_finish` on its data first (still as the only retirer), and
    /// finishes the slot now if nobody is inside, else the last delivery
    /// to leave does. `false` if `key` is not live. Never waits.
    pub(crate) fn retire(&self, key: u64, before_finish: impl FnOnce(&T)) -> bool {
        let Some((index, generation)) = split(key) else {
            return false;
        };
        let Some(slot) = self.slots.get(index) else {
            return false;
        };
        // Enter first, so that the slot cannot finish under `before_finish`.
        let Some(inside) = self.enter(key) else {
            return false;
        };
        let mut st = slot.state.load(Ordering::Acquire);
        loop {
            if st & GEN_MASK != generation || st & LIVE == 0 {
                return false; // another free won
            }
            match slot.state.compare_exchange_weak(
                st,
                (st & !LIVE) | RETIRING,
                Ordering::SeqCst,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => st = now,
            }
        }
        before_finish(&inside);
        drop(inside); // finishes the slot if nobody else is inside
        true
    }

    /// Every live registration's key, with a reference inside it. Used by
    /// tool-side walks (not signal handlers' hot paths). Lock-free.
    pub(crate) fn for_each_live(&self, mut f: impl FnMut(u64, &T)) {
        for (index, slot) in self.slots.iter() {
            let st = slot.state.load(Ordering::Acquire);
            if st & LIVE == 0 {
                continue;
            }
            let key = ((index as u64 + 1) << GEN_BITS) | (st & GEN_MASK);
            if let Some(inside) = self.enter(key) {
                f(key, &inside);
            }
        }
    }
}
