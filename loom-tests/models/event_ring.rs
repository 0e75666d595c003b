//! A thread's event buffer (`src/event/buffer.rs`): a bounded ring with a
//! sequence word per entry. Producers — the owning thread and signal
//! handlers interrupting it (here: a second thread, which is what a nested
//! handler looks like to the ring: it may run between any two steps of the
//! owner's push) — claim a position with a compare-and-swap on the tail,
//! write the entry with relaxed stores and publish it with a Release store
//! of its sequence; the one consumer (the delivery-token holder) peeks an
//! entry only once its sequence says full and pops it with a Release store
//! that frees it for the position one lap later.
//!
//! Checked: every accepted entry is consumed exactly once, whole (each of
//! its words was written from the same value: no torn entry), in each
//! producer's order; accepted + refused = attempts, consumed = accepted; a
//! refused push saw a really full ring (without a consumer, exactly
//! `capacity` pushes are accepted; with one, a refusal means `capacity`
//! entries had been accepted); the drained ring accepts again.
//!
//! Mutations caught (each verified by breaking `Ring`, at preemption
//! bounds 2 and 3):
//! - `push` publishing the sequence before writing the fields: a torn
//!   entry (`producers_vs_consumer`; `owner_vs_consumer` at bound 3);
//! - `push` claiming with a plain load + store of `tail` instead of the
//!   compare-and-swap: three entries accepted into two
//!   (`producers_only_overflow`), an entry lost (`producers_vs_consumer`);
//! - `push` publishing with a Relaxed store, or `peek` loading the
//!   sequence Relaxed: the consumer reads an older lap's entry again
//!   (`owner_vs_consumer`: consumed [1, 2, 1]);
//! - `pop` freeing with a Relaxed store: the same (`producers_vs_consumer`);
//! - `pop` freeing for the wrong lap (`pos + 1` instead of
//!   `pos + capacity`): "the drained ring refused" (`producers_vs_consumer`);
//! - `push` reporting "full" when it finds the entry claimed for its
//!   position by the other producer (`seq > pos`) instead of catching up:
//!   a refusal with room left (`producers_only_room`);
//! - `push` loading the sequence Relaxed: only as loom's "maximum number
//!   of branches" (the catch-up loop spins on a stale tail, nothing orders
//!   it after the other producer's claim); the overwrite-under-the-reader
//!   it allows is load buffering, which loom does not model.
//!
//! One-entry rings lost entries (fixed: at least two): `capacity_one_loses_nothing`.

use loom::sync::Arc;
use pvar::loom_api::{EventEntry, EventRing};

use crate::{model, spawn};

const CAPACITY: usize = 2;

/// The entry a producer pushes for value `v` (≥ 1): every word derives
/// from `v`, so a consumer can tell a whole entry from a torn one.
fn entry(v: u64) -> EventEntry {
    EventEntry {
        registration: v,
        event: v + 100,
        timestamp: v + 200,
        object: v + 300,
        record: core::array::from_fn(|i| v * 1000 + i as u64),
    }
}

/// Checks that `e` is a whole entry and returns its value.
fn whole(e: &EventEntry) -> u64 {
    let v = e.registration;
    assert!(v >= 1, "consumed an entry never written: {e:?}");
    assert_eq!(*e, entry(v), "torn entry");
    v
}

/// Pushes `values` in order; returns those accepted.
fn producer(ring: &Arc<EventRing>, values: &'static [u64]) -> loom::thread::JoinHandle<Vec<u64>> {
    let ring = ring.clone();
    spawn(move || {
        values
            .iter()
            .copied()
            .filter(|&v| ring.push(&entry(v)))
            .collect()
    })
}

/// The consumer's peek + pop of one entry, if one is published.
fn take(ring: &EventRing) -> Option<u64> {
    let e = ring.peek()?;
    // A second look before the pop sees the same entry (only the consumer
    // frees it, so producers cannot have reused it).
    assert_eq!(ring.peek(), Some(e), "the peeked entry changed");
    ring.pop();
    Some(whole(&e))
}

/// Checks the consumed values against the accepted ones: the same
/// multiset (exactly once each), each producer's values in its order.
fn check(accepted: &[Vec<u64>], consumed: &[u64]) {
    let mut all: Vec<u64> = accepted.iter().flatten().copied().collect();
    let mut got = consumed.to_vec();
    all.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, all, "consumed {consumed:?}, accepted {accepted:?}");
    for mine in accepted {
        let order: Vec<u64> = consumed
            .iter()
            .copied()
            .filter(|v| mine.contains(v))
            .collect();
        assert_eq!(&order, mine, "a producer's entries out of order");
    }
}

/// The owner pushes two entries, a "handler" one, while the consumer takes
/// up to two; the rest is drained after both producers ended.
#[test]
fn producers_vs_consumer() {
    model(|| {
        let ring = Arc::new(EventRing::new(CAPACITY));
        let owner = producer(&ring, &[1, 2]);
        let handler = producer(&ring, &[3]);
        let mut consumed = Vec::new();
        for _ in 0..2 {
            consumed.extend(take(&ring));
        }
        let accepted = [owner.join().unwrap(), handler.join().unwrap()];
        while let Some(v) = take(&ring) {
            consumed.push(v);
        }
        let n: usize = accepted.iter().map(Vec::len).sum();
        let refused = 3 - n;
        assert!(
            refused == 0 || n >= CAPACITY,
            "a push was refused with {n} of {CAPACITY} entries ever accepted"
        );
        check(&accepted, &consumed);
        // Drained: the ring takes `CAPACITY` more, in order.
        for v in 10..10 + CAPACITY as u64 {
            assert!(ring.push(&entry(v)), "the drained ring refused");
        }
        assert!(!ring.push(&entry(20)), "the full ring accepted");
        for v in 10..10 + CAPACITY as u64 {
            assert_eq!(take(&ring), Some(v));
        }
        assert_eq!(ring.peek(), None);
    });
}

/// The owner alone pushes three entries while the consumer takes up to
/// three. With one producer the tail is never stale for it (no catch-up
/// loop), so a missing Release / Acquire on the sequence shows as a torn
/// entry rather than as a producer spinning on a stale tail.
#[test]
fn owner_vs_consumer() {
    model(|| {
        let ring = Arc::new(EventRing::new(CAPACITY));
        let owner = producer(&ring, &[1, 2, 3]);
        let mut consumed = Vec::new();
        for _ in 0..3 {
            consumed.extend(take(&ring));
        }
        let accepted = [owner.join().unwrap()];
        while let Some(v) = take(&ring) {
            consumed.push(v);
        }
        let n = accepted[0].len();
        assert!(n == 3 || n >= CAPACITY, "refused with room: {accepted:?}");
        check(&accepted, &consumed);
    });
}

/// Two producers and no consumer, three pushes into `capacity` entries:
/// exactly `min(3, capacity)` are accepted whatever the interleaving (a
/// push is refused only when the ring is full, also when it had to catch
/// up with the other producer's claim).
fn producers_only(capacity: usize) {
    model(move || {
        let ring = Arc::new(EventRing::new(capacity));
        let owner = producer(&ring, &[1, 2]);
        let handler = producer(&ring, &[3]);
        let accepted = [owner.join().unwrap(), handler.join().unwrap()];
        let n: usize = accepted.iter().map(Vec::len).sum();
        assert_eq!(
            n,
            capacity.min(3),
            "accepted {accepted:?} into {capacity} entries"
        );
        let mut consumed = Vec::new();
        while let Some(v) = take(&ring) {
            consumed.push(v);
        }
        check(&accepted, &consumed);
    });
}

/// A full ring refuses the push that does not fit.
#[test]
fn producers_only_overflow() {
    producers_only(CAPACITY);
}

/// A ring with room for every push refuses none.
#[test]
fn producers_only_room() {
    producers_only(3);
}

/// A ring asked for one entry loses nothing. With a real one-entry ring
/// it did: the sequence value that publishes position p (p + 1) is also
/// the one that frees the entry for position p + 1 (p + capacity), so a
/// second push, before the first entry was consumed, claimed the entry
/// again and overwrote it, and the consumer never matched again. Fixed by
/// `Ring::new` making at least `MIN_ENTRIES` (2); this model fails if that
/// minimum is removed.
#[test]
fn capacity_one_loses_nothing() {
    model(|| {
        let ring = EventRing::new(1);
        let accepted: Vec<u64> = [1, 2]
            .into_iter()
            .filter(|&v| ring.push(&entry(v)))
            .collect();
        let mut consumed = Vec::new();
        while let Some(v) = take(&ring) {
            consumed.push(v);
        }
        check(&[accepted], &consumed);
        assert!(ring.push(&entry(3)), "the drained ring refused");
        assert_eq!(take(&ring), Some(3), "the drained ring lost an entry");
    });
}
