//! Per-thread event buffers: where an event waits when no callback may run
//! at the point it was raised.
//!
//! Each thread (by its engine thread id) has at most one [`Ring`], made the
//! first time the thread has to defer an event from normal code (or by
//! `prepare_thread`); a raise from a signal handler never makes one — it
//! drops and counts what it cannot deliver. A ring is a bounded queue of
//! fixed-size entries, one per (event, registration) awaiting delivery,
//! with a sequence word per entry (the classic bounded-queue design:
//! an entry is free for position `p` when its sequence is `p`, full when
//! it is `p + 1`).
//!
//! - **Producers** are the owning thread and signal handlers that interrupt
//!   it (and, after the thread exits, the next thread given its id). A
//!   producer claims a position with a compare-and-swap on `tail`, fills
//!   the entry with relaxed stores and publishes it with a Release store
//!   of the sequence. A handler that interrupts a producer between claim
//!   and publish claims the next position; it never waits.
//! - **One consumer** at a time: the holder of the registry's delivery
//!   token. It reads the entry at `head` only once its sequence says full
//!   (Acquire), and frees it with a Release store of `head + capacity`. An
//!   entry claimed but not yet published stops the consumer there (it
//!   retries at the next delivery point), so order per thread is kept.
//!
//! Nothing here locks or allocates after the ring exists; every field is
//! an atomic, so a consumer reading an entry a producer is about to reuse
//! is impossible (the sequence protocol) and not undefined behaviour
//! besides.

use crate::hot::cells::thread_id;
use crate::lockfree::append_vec::AppendVec;
use crate::sync::unmodelled::OnceLock;
use crate::sync::{AtomicPtr, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::vocabulary::event_info::MAX_RECORD_BYTES;

/// Default entries of a thread's event buffer (the `pvar_event_buffer_entries`
/// control variable of the process registry sets it).
pub const DEFAULT_BUFFER_ENTRIES: usize = 256;

/// The fewest entries a ring has: with one, the sequence value marking
/// position `p` full equals the one marking `p + 1` free, and a second
/// push would overwrite an unconsumed entry.
pub(crate) const MIN_ENTRIES: usize = 2;

/// Words of record data per entry.
pub(crate) const RECORD_WORDS: usize = MAX_RECORD_BYTES / 8;

/// One waiting event, as the consumer takes it out.
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    pub(crate) registration: u64,
    pub(crate) event: u64,
    pub(crate) timestamp: u64,
    pub(crate) object: u64,
    pub(crate) record: [u64; RECORD_WORDS],
}

struct Entry {
    seq: AtomicU64,
    registration: AtomicU64,
    event: AtomicU64,
    timestamp: AtomicU64,
    object: AtomicU64,
    record: [AtomicU64; RECORD_WORDS],
}

/// One thread's bounded queue. See the module documentation.
pub(crate) struct Ring {
    head: AtomicU64,
    tail: AtomicU64,
    entries: Box<[Entry]>,
}

impl Ring {
    /// A ring of `capacity` entries, at least [`MIN_ENTRIES`]. Allocates.
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(MIN_ENTRIES);
        Self {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            entries: (0..capacity)
                .map(|i| Entry {
                    seq: AtomicU64::new(i as u64),
                    registration: AtomicU64::new(0),
                    event: AtomicU64::new(0),
                    timestamp: AtomicU64::new(0),
                    object: AtomicU64::new(0),
                    record: core::array::from_fn(|_| AtomicU64::new(0)),
                })
                .collect(),
        }
    }

    fn entry(&self, pos: u64) -> &Entry {
        &self.entries[(pos % self.entries.len() as u64) as usize]
    }

    /// Queues `p`; `false` if the ring is full. Lock-free,
    /// async-signal-safe.
    pub(crate) fn push(&self, p: &Pending) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let e = self.entry(pos);
            let seq = e.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        e.registration.store(p.registration, Ordering::Relaxed);
                        e.event.store(p.event, Ordering::Relaxed);
                        e.timestamp.store(p.timestamp, Ordering::Relaxed);
                        e.object.store(p.object, Ordering::Relaxed);
                        for (w, v) in e.record.iter().zip(p.record.iter()) {
                            w.store(*v, Ordering::Relaxed);
                        }
                        e.seq.store(pos + 1, Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                // The entry still holds position `pos - capacity` (published
                // and not consumed, or still being written): full.
                return false;
            } else {
                // Another producer moved on; catch up.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// The oldest published entry, without taking it out; `None` if the
    /// ring is empty or its oldest entry is still being written. Only the
    /// delivery-token holder calls this.
    pub(crate) fn peek(&self) -> Option<Pending> {
        let pos = self.head.load(Ordering::Relaxed);
        let e = self.entry(pos);
        if e.seq.load(Ordering::Acquire) != pos + 1 {
            return None;
        }
        let mut record = [0u64; RECORD_WORDS];
        for (v, w) in record.iter_mut().zip(e.record.iter()) {
            *v = w.load(Ordering::Relaxed);
        }
        Some(Pending {
            registration: e.registration.load(Ordering::Relaxed),
            event: e.event.load(Ordering::Relaxed),
            timestamp: e.timestamp.load(Ordering::Relaxed),
            object: e.object.load(Ordering::Relaxed),
            record,
        })
    }

    /// Frees the entry [`Ring::peek`] returned. Only the token holder.
    pub(crate) fn pop(&self) {
        let pos = self.head.load(Ordering::Relaxed);
        let cap = self.entries.len() as u64;
        self.entry(pos).seq.store(pos + cap, Ordering::Release);
        self.head.store(pos + 1, Ordering::Relaxed);
    }
}

/// The thread buffers of one registry: thread id `t`'s [`Ring`] at index
/// `t - 1`, made on first need and freed with the registry.
pub(crate) struct Buffers {
    rings: AppendVec<AtomicPtr<Ring>>,
    rings_lock: Mutex<()>,
    entries: AtomicUsize,
    /// Where the entries of a new buffer come from when set (the
    /// `PVAR_EVENT_BUFFER_ENTRIES` control variable of the process
    /// registry); else `entries`.
    entries_from: OnceLock<Box<dyn Fn() -> usize + Send + Sync>>,
}

impl Buffers {
    pub(crate) fn new() -> Self {
        Self {
            rings: AppendVec::new(),
            rings_lock: Mutex::new(()),
            entries: AtomicUsize::new(DEFAULT_BUFFER_ENTRIES),
            entries_from: OnceLock::new(),
        }
    }

    /// Sets the entries of buffers made from now on (at least
    /// [`MIN_ENTRIES`]).
    pub(crate) fn set_entries(&self, n: usize) {
        self.entries.store(n.max(MIN_ENTRIES), Ordering::Relaxed);
    }

    /// Entries of buffers made from now on.
    pub(crate) fn entries(&self) -> usize {
        match self.entries_from.get() {
            Some(f) => f().max(MIN_ENTRIES),
            None => self.entries.load(Ordering::Relaxed),
        }
    }

    /// Takes the entries of new buffers from `f` from now on (once).
    pub(crate) fn set_entries_from(&self, f: Box<dyn Fn() -> usize + Send + Sync>) {
        let _ = self.entries_from.set(f);
    }

    /// The buffers made so far. Lock-free, allocation-free.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Ring> + '_ {
        self.rings.iter().filter_map(|(_, slot)| {
            let p = slot.load(Ordering::Acquire);
            // SAFETY: rings are freed only when the registry is dropped.
            (!p.is_null()).then(|| unsafe { &*p })
        })
    }

    /// This thread's buffer; made (allocating) if `may_make` and it does
    /// not exist yet. `None` if it does not exist and may not be made, or
    /// the thread is exiting. Without making, async-signal-safe.
    pub(crate) fn ring_for(&self, may_make: bool) -> Option<&Ring> {
        let id = match thread_id::current_raw() {
            thread_id::EXITED => return None,
            thread_id::UNASSIGNED if !may_make => return None,
            thread_id::UNASSIGNED => thread_id::current_or_assign()?,
            id => id,
        };
        let i = id as usize - 1;
        if let Some(slot) = self.rings.get(i) {
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: rings are freed only when the registry is dropped.
                return Some(unsafe { &*p });
            }
        }
        if !may_make {
            return None;
        }
        let _g = self.rings_lock.lock();
        while self.rings.len() <= i {
            self.rings.push(AtomicPtr::new(core::ptr::null_mut()));
        }
        let slot = self.rings.get(i).expect("pushed above");
        if slot.load(Ordering::Acquire).is_null() {
            let ring = Box::into_raw(Box::new(Ring::new(self.entries())));
            slot.store(ring, Ordering::Release);
        }
        // SAFETY: as above; we just made sure the slot holds a ring.
        Some(unsafe { &*slot.load(Ordering::Acquire) })
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        for (_, slot) in self.rings.iter() {
            let p = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: made by `Box::into_raw` in `ring_for`, and nothing
                // can reach the registry any more.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}
