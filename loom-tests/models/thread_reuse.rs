//! Thread exit and reuse of its cells: a thread's exit guard hands its id
//! back (through the id allocator's mutex); a later thread takes the id and
//! continues in the same per-thread record; updates after the guard ran go
//! to the shared orphan record. Sums stay exact.

use loom::sync::Arc;
use pvar::loom_api::{self, Cells};

use crate::{model, spawn};

/// A exits, then B starts: B takes A's id and continues in A's record
/// (its own cell reads A's count), and the sum is exact.
#[test]
fn later_thread_continues_in_exited_record() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let a = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(slot, 1);
                cells.add(slot, 1);
                loom_api::thread_id()
            })
        };
        let id_a = a.join().unwrap();
        let b = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(slot, 1);
                (loom_api::thread_id(), cells.load_local(slot))
            })
        };
        let (id_b, local_b) = b.join().unwrap();
        assert_eq!(id_a, id_b, "id not reused");
        assert_eq!(local_b, 3, "B did not continue in A's record");
        assert_eq!(cells.sum(slot), 3);
        assert_eq!(cells.thread_records(), 1);
    });
}

/// A and B run concurrently; A exits at any point relative to B's first
/// update (so B may or may not reuse A's id), while the main thread merges.
/// Then C runs. Reads never go backwards; the final sum is exact; at most
/// two records exist.
#[test]
fn concurrent_exit_and_first_touch() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let a = {
            let cells = cells.clone();
            spawn(move || cells.add(slot, 1))
        };
        let b = {
            let cells = cells.clone();
            spawn(move || cells.add(slot, 10))
        };
        let r = cells.sum(slot);
        assert!([0, 1, 10, 11].contains(&r), "lost or torn: {r}");
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(cells.sum(slot), 11);
        let c = {
            let cells = cells.clone();
            spawn(move || cells.add(slot, 100))
        };
        c.join().unwrap();
        assert_eq!(cells.sum(slot), 111);
        assert!((1..=2).contains(&cells.thread_records()));
        assert_eq!(loom_api::live_threads(), 0);
    });
}

/// Updates after the thread's exit guard ran (as from a later thread-local
/// destructor) land in the orphan record with compare-and-swap, racing with
/// another exiting thread's orphan updates: nothing lost.
#[test]
fn orphan_updates_after_exit() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let ts: Vec<_> = [1u64, 10]
            .into_iter()
            .map(|n| {
                let cells = cells.clone();
                crate::spawn(move || {
                    cells.add(slot, n);
                    loom_api::thread_exit();
                    cells.add(slot, n); // after exit: orphan record
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        assert_eq!(cells.sum(slot), 22);
    });
}

/// A dropped variable's range is zeroed in every record and reused while
/// another thread, which may be continuing in the released range's owner's
/// record (its id reused), creates its record and chunk and updates the
/// neighbouring cell of the same line. The zeroing never loses the
/// neighbour's updates, and the range's next owner starts from exactly 0.
#[test]
fn released_range_is_zeroed_for_the_next_owner() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let old = cells.alloc();
        let neighbour = cells.alloc();
        let a = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(old, 5);
                cells.add(neighbour, 1);
            })
        };
        a.join().unwrap();
        let b = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(neighbour, 1);
                cells.add(neighbour, 1);
            })
        };
        // `old`'s storage is dropped: nobody updates it any more.
        cells.release(old);
        let new = cells.alloc();
        assert_eq!(cells.sum(new), 0, "a reused range starts at 0");
        b.join().unwrap();
        let c = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(new, 2);
                // Same cell: `new` is `old`'s range (checked on a thread
                // that has a record; the main thread must not take one).
                cells.same_cell(new, old)
            })
        };
        assert!(c.join().unwrap(), "the range is reused");
        assert_eq!(cells.sum(new), 2);
        assert_eq!(cells.sum(neighbour), 3);
    });
}

/// A starts a TIMER interval and exits with it open; B takes A's id and
/// record (concurrently with a tool reading the timer), calls `stop`
/// without having started, then times an interval of its own. B never
/// stops A's interval: it was zeroed when B took the record over.
#[test]
fn open_interval_is_not_inherited() {
    model(|| {
        let (clock, time) = pvar::Clock::mock();
        let reg = pvar::Registry::with_clock(clock);
        let t = reg
            .timer("t")
            .datatype(pvar::Datatype::UnsignedLongLong)
            .register()
            .unwrap();
        let c = reg.counter("c").register().unwrap();
        let a = {
            let t = t.clone();
            spawn(move || {
                t.start();
                loom_api::thread_id()
            })
        };
        let id_a = a.join().unwrap();
        time.advance(std::time::Duration::from_nanos(100));
        let b = {
            let (t, c, time) = (t.clone(), c.clone(), time.clone());
            spawn(move || {
                c.inc(); // takes A's id and record
                t.stop();
                t.start();
                time.advance(std::time::Duration::from_nanos(5));
                t.stop();
                loom_api::thread_id()
            })
        };
        let r = t.get_seconds();
        assert!(r == 0.0 || r == 5e-9, "read {r} s");
        assert_eq!(b.join().unwrap(), id_a, "id not reused");
        assert_eq!(t.get_seconds(), 5e-9, "A's open interval was stopped by B");
    });
}
