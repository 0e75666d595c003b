//! Event registrations in the slot table (`src/lockfree/slot_table.rs`):
//! generation-checked slots whose free never waits. A delivery enters with
//! one compare-and-swap (generation and LIVE checked together) and leaves
//! with a subtraction; the free ("retire") enters too, swaps LIVE for
//! FREEING, runs its `before` and leaves; whoever leaves last from a
//! freeing slot runs `Retire::finish` (the free callback) and hands the
//! slot on: the free to the free stack, a delivery to the retired stack,
//! which the next allocation reclaims.
//!
//! The slots hold probes (`loom_api::EventRegs`): the retire's
//! `before_finish` marks the probe with a relaxed store (as `handle_free`
//! stores the free callback there), and `finish` asserts that it sees the
//! mark, then runs the model's closure, which counts finishes and asserts
//! that no delivery of the model is inside.
//!
//! Checked: `finish` runs exactly once per retired registration, never
//! while an `Inside` is alive, and after the retire's `before` (whose
//! writes it sees); an enter after retire returned fails; a second retire
//! fails; a retire from inside the registration (a callback freeing its
//! own registration) returns at once and `finish` runs when the last
//! `Inside` drops; the table has one slot, and once everybody left it is
//! allocated again (reclaimed if a delivery left last).
//!
//! Mutations caught (each verified by breaking the table when it was
//! `event/registrations.rs`; the protocol is the same):
//! - `Inside::drop` finishing whenever the slot is retiring, whatever the
//!   count: finish under a live delivery (`double_retire_vs_delivery`),
//!   under the retiring callback (`retire_from_inside_alone`);
//! - `Inside::drop` finishing whenever the count reaches zero, retiring or
//!   not: finish before the retire's `before_finish` (the three concurrent
//!   models);
//! - `Inside::drop`'s subtraction Relaxed instead of AcqRel: the last
//!   leaver does not see the retire's `before_finish` (the three
//!   concurrent models);
//! - `enter` not checking LIVE: an enter after retire succeeds (all four);
//! - `retire`'s compare-and-swap keeping LIVE: finish twice
//!   (`double_retire_vs_delivery`), a second retire succeeds
//!   (`retire_from_inside_alone`);
//! - `retire` not re-checking LIVE in its loop: both retires win
//!   (`double_retire_vs_delivery`);
//! - `retire` leaving (dropping its `Inside`) before `before_finish`:
//!   finish before `before_finish` (`retire_vs_delivery`,
//!   `double_retire_vs_delivery`).

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use pvar::loom_api::EventRegs;

use crate::{model, spawn};

/// A table with one registration, whose finish counts in `finished` and
/// checks that `inside` (the model's count of deliveries holding an
/// `Inside`) is zero.
struct Fixture {
    regs: Arc<EventRegs>,
    key: u64,
    finished: Arc<AtomicUsize>,
    inside: Arc<AtomicUsize>,
}

impl Fixture {
    fn new() -> Self {
        let regs = Arc::new(EventRegs::new(1));
        let finished = Arc::new(AtomicUsize::new(0));
        let inside = Arc::new(AtomicUsize::new(0));
        let key = {
            let (finished, inside) = (finished.clone(), inside.clone());
            regs.alloc(move || {
                assert_eq!(
                    inside.load(Ordering::Relaxed),
                    0,
                    "finish ran while a delivery was inside"
                );
                let before = finished.fetch_add(1, Ordering::Relaxed);
                assert_eq!(before, 0, "finish ran twice");
            })
            .expect("room")
        };
        Self {
            regs,
            key,
            finished,
            inside,
        }
    }

    fn finished(&self) -> usize {
        self.finished.load(Ordering::Relaxed)
    }

    /// A delivery: enters (if still live), stays inside across a few
    /// modelled steps (checking the registration is not finished under it),
    /// leaves. Returns whether it entered.
    fn delivery(&self) -> loom::thread::JoinHandle<bool> {
        let (regs, key) = (self.regs.clone(), self.key);
        let (finished, inside) = (self.finished.clone(), self.inside.clone());
        spawn(move || {
            let Some(i) = regs.enter(key) else {
                return false;
            };
            inside.fetch_add(1, Ordering::Relaxed);
            assert_eq!(
                finished.load(Ordering::Relaxed),
                0,
                "finished under a delivery"
            );
            loom::thread::yield_now();
            assert_eq!(
                finished.load(Ordering::Relaxed),
                0,
                "finished under a delivery"
            );
            inside.fetch_sub(1, Ordering::Relaxed);
            drop(i);
            true
        })
    }

    /// What holds once everybody is done: finished once, the key dead,
    /// and the one slot allocatable again (from the retired stack if a
    /// delivery left last).
    fn check_end(&self) {
        assert_eq!(self.finished(), 1, "finish did not run exactly once");
        assert!(self.regs.enter(self.key).is_none(), "entered a freed key");
        assert!(!self.regs.retire(self.key), "freed a freed key");
        let again = self.regs.alloc(|| {}).expect("the finished slot is reused");
        assert_ne!(again, self.key, "a reused slot gets a new generation");
        assert!(!self.regs.has_retired(), "the allocation reclaimed it");
        assert!(self.regs.enter(self.key).is_none(), "the old key stays dead");
        assert!(self.regs.enter(again).is_some());
    }
}

/// A delivery enters and leaves while the main thread retires the
/// registration: finish runs once, by whichever leaves last, never under
/// the delivery; no enter succeeds after retire returned.
#[test]
fn retire_vs_delivery() {
    model(|| {
        let f = Fixture::new();
        let d = f.delivery();
        assert!(f.regs.retire(f.key), "the live key did not retire");
        assert!(f.regs.enter(f.key).is_none(), "entered after retire");
        d.join().unwrap();
        f.check_end();
    });
}

/// Two threads retire the same key while a delivery runs: one retire wins,
/// finish runs once.
#[test]
fn double_retire_vs_delivery() {
    model(|| {
        let f = Fixture::new();
        let d = f.delivery();
        let other = {
            let (regs, key) = (f.regs.clone(), f.key);
            spawn(move || regs.retire(key))
        };
        let mine = f.regs.retire(f.key);
        let theirs = other.join().unwrap();
        assert!(mine ^ theirs, "retires won: {mine}, {theirs}");
        d.join().unwrap();
        f.check_end();
    });
}

/// A callback frees its own registration: the thread holds an `Inside`
/// while it retires. The retire returns at once, nothing finishes while
/// the `Inside` lives, and dropping it (the callback returning) finishes.
/// Another delivery runs concurrently: finish runs in whichever leaves
/// last, exactly once.
#[test]
fn retire_from_inside_own_callback() {
    model(|| {
        let f = Fixture::new();
        let d = f.delivery();
        let own = f.regs.enter(f.key).expect("live");
        f.inside.fetch_add(1, Ordering::Relaxed);
        assert!(f.regs.retire(f.key), "the live key did not retire");
        assert_eq!(f.finished(), 0, "finished under the retiring callback");
        assert!(f.regs.enter(f.key).is_none(), "entered after retire");
        f.inside.fetch_sub(1, Ordering::Relaxed);
        drop(own);
        d.join().unwrap();
        f.check_end();
    });
}

/// The same without another thread: finish runs exactly when the
/// callback's `Inside` drops.
#[test]
fn retire_from_inside_alone() {
    model(|| {
        let f = Fixture::new();
        let own = f.regs.enter(f.key).expect("live");
        f.inside.fetch_add(1, Ordering::Relaxed);
        assert!(f.regs.retire(f.key));
        assert_eq!(f.finished(), 0, "finished under the retiring callback");
        assert!(!f.regs.retire(f.key), "retired twice");
        f.inside.fetch_sub(1, Ordering::Relaxed);
        drop(own);
        assert_eq!(
            f.finished(),
            1,
            "finish did not run when the Inside dropped"
        );
        f.check_end();
    });
}
