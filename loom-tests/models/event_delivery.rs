//! Raise → deliver now / defer / drop, through the public event API
//! (`src/event/delivery.rs`). A registration with only a `NONE` callback
//! cannot run at an `ASYNC_SIGNAL_SAFE` raise point (as in a signal
//! handler), so the raise defers the event into the raising thread's
//! buffer (made beforehand by `prepare_thread`, as a raise there may not
//! allocate) or, if the buffer is full, drops it; a delivery point on
//! another thread takes the delivery token without waiting and runs the
//! waiting events' callbacks. A `NONE` raise point runs the callback at
//! once if it gets the token, else defers and tries a delivery point.
//!
//! Checked: after a final delivery point, every raise is accounted for
//! exactly once — delivered + dropped + discarded == raised, nothing
//! waits, the callback ran `delivered` times with whole records (the
//! timestamp raised with each value), none twice, the deferred ones of a
//! thread in raise order; `NONE` callbacks never overlap (the token
//! serialises them); a freed registration's free callback runs exactly
//! once, and no callback of it after that; a thread's raises reach a
//! `THREAD_SAFE` callback in raise order when an earlier one is being
//! delivered from the thread's buffer — by a delivery point on another
//! thread (`taken_out_vs_thread_safe_raise`) or by one that a signal
//! handler interrupts on the same thread (`handler_raise_inside_delivery`);
//! a registration's observer count follows its callbacks and dropped
//! handler, also against a concurrent free (`observed_vs_free`) and a
//! concurrent change (`observed_vs_change`).
//!
//! Mutations caught (each verified by breaking the delivery code, then in
//! `raise.rs` and `mod.rs`, now `delivery.rs` and `events.rs`,
//! `buffer.rs` or the slot table):
//! - `take_token` always succeeding (a plain store): the entry popped by
//!   two consumers, delivered 3 of 2 raised (`raise_none_vs_deliver`);
//! - the token's compare-and-swap / release store Relaxed: the same (the
//!   next holder reads a stale ring head: the token carries the consumer
//!   side of the rings);
//! - `deliver` not giving the token back: events stay waiting (all);
//! - `deliver_holding_token` not popping before the callback: loom's
//!   branch limit (the same entry delivered forever);
//! - the ring's sequence published before the entry is written: a torn
//!   record, or deferred events out of order;
//! - `Inside::drop` finishing whatever the count: the free callback runs
//!   twice (`free_vs_deliver`);
//! - `Inside::drop`'s subtraction Relaxed: the free callback never runs
//!   (the finisher does not see the pointer `handle_free` stored)
//!   (`free_vs_deliver`);
//! - `deliver_or_defer` counting `waiting` only after the push succeeded
//!   (as before the fix in b924f28): `waiting` reads `u64::MAX` for a
//!   moment (`waiting_never_wraps`);
//! - the registration's waiting count lowered when its entry is taken out
//!   of the buffer instead of after its callback ran (as up to 6ca10e8):
//!   delivered `[2, 1]` (`taken_out_vs_thread_safe_raise`,
//!   `handler_raise_inside_delivery`);
//! - `resubscribe` not re-checking liveness after subscribing: the event
//!   stays observed after the free (`observed_vs_free`);
//! - the tool's changes not holding the registration's change lock: a
//!   registration with a callback left unobserved (`observed_vs_change`).

use std::sync::Mutex;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use pvar::{CbSafety, Event, EventRegistration, Registry};

use crate::{model, spawn};

const ASYNC: CbSafety = CbSafety::AsyncSignalSafe;

/// A registry whose buffers have `entries` entries, one `u64` event with a
/// registration holding one callback at `level`, which records each value
/// it is given (and, at `NONE`, checks that no other callback runs at
/// once).
struct Fixture {
    reg: Registry,
    ev: Event<u64>,
    r: Option<EventRegistration>,
    seen: Arc<Mutex<Vec<u64>>>,
    /// Set by the registration's free callback (`free`).
    freed: Arc<AtomicUsize>,
}

impl Fixture {
    fn new(entries: usize, level: CbSafety) -> Self {
        let reg = crate::registry();
        reg.events().set_buffer_entries(entries);
        let ev = reg.event::<u64>("e").register().unwrap();
        let r = reg.event_registration(ev.index(), None).unwrap();
        // `std` mutex: the model's bookkeeping, not part of the protocol.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let running = Arc::new(AtomicUsize::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        {
            let (seen, freed) = (seen.clone(), freed.clone());
            r.on_event(level, move |inst, _| {
                let others = running.fetch_add(1, Ordering::Relaxed);
                assert!(
                    level != CbSafety::None || others == 0,
                    "NONE callbacks overlap"
                );
                assert_eq!(
                    freed.load(Ordering::Relaxed),
                    0,
                    "a callback after the free callback"
                );
                let v: u64 = inst.read(0).unwrap();
                assert_eq!(inst.timestamp(), v * 10, "torn record");
                seen.lock().unwrap().push(v);
                running.fetch_sub(1, Ordering::Relaxed);
            })
            .unwrap();
        }
        Self {
            reg,
            ev,
            r: Some(r),
            seen,
            freed,
        }
    }

    /// Frees the registration (`MPI_T_event_handle_free`) with a free
    /// callback that counts its runs.
    fn free(&mut self) {
        let freed = self.freed.clone();
        let r = self.r.take().expect("not freed yet");
        r.free_with(move |_| {
            assert_eq!(
                freed.fetch_add(1, Ordering::Relaxed),
                0,
                "free callback ran twice"
            );
        });
    }

    /// A thread raising each value (timestamp 10 × value) at its point,
    /// after making its buffer (`prepare_thread`: a raise at an
    /// async-signal-safe point never makes one).
    fn raiser(&self, raises: &'static [(CbSafety, u64)]) -> loom::thread::JoinHandle<()> {
        let (reg, ev) = (self.reg.clone(), self.ev.clone());
        spawn(move || {
            reg.prepare_thread();
            for &(point, v) in raises {
                ev.raise_at(v * 10, point, None, &v);
            }
        })
    }

    /// A thread running one delivery point.
    fn deliverer(&self) -> loom::thread::JoinHandle<usize> {
        let reg = self.reg.clone();
        spawn(move || reg.events().deliver(CbSafety::None))
    }

    /// After every thread ended: a last delivery point, then the books.
    /// Returns the values delivered, in delivery order.
    fn settle(&self, raised: u64) -> Vec<u64> {
        self.reg.events().deliver(CbSafety::None);
        let s = self.reg.events().stats();
        assert_eq!(s.raised, raised, "{s:?}");
        assert_eq!(s.delivered + s.dropped + s.discarded, s.raised, "{s:?}");
        assert_eq!(self.reg.events().waiting(), 0, "{s:?}");
        let seen = self.seen.lock().unwrap().clone();
        assert_eq!(seen.len() as u64, s.delivered, "{s:?}, seen {seen:?}");
        let mut once = seen.clone();
        once.sort_unstable();
        once.dedup();
        assert_eq!(once.len(), seen.len(), "delivered twice: {seen:?}");
        seen
    }
}

/// Two events raised at an async-signal-safe point (deferred: the only
/// callback is `NONE`) into a buffer of 2 while another thread runs a
/// delivery point: all delivered, in raise order.
#[test]
fn deferred_vs_deliver() {
    model(|| {
        let f = Fixture::new(2, CbSafety::None);
        let raiser = f.raiser(&[(ASYNC, 1), (ASYNC, 2)]);
        let d = f.deliverer();
        raiser.join().unwrap();
        let early = d.join().unwrap();
        let seen = f.settle(2);
        assert!(early <= 2);
        assert_eq!(seen, [1, 2], "deferred events out of order");
        let s = f.reg.events().stats();
        assert_eq!((s.deferred, s.dropped), (2, 0), "{s:?}");
    });
}

/// Three such raises into a buffer of 2 entries, the third racing with a
/// delivery point (started by the raising thread after its first two
/// raises, to keep the model small: `deferred_vs_deliver` races those):
/// the third finds the buffer full (and is dropped) unless the delivery
/// point took an entry out first; delivered + dropped == raised, at most
/// one drop, the delivered ones in raise order.
#[test]
fn deferred_overflow_vs_deliver() {
    model(|| {
        let f = Fixture::new(2, CbSafety::None);
        let raiser = {
            let (reg, ev) = (f.reg.clone(), f.ev.clone());
            spawn(move || {
                reg.prepare_thread();
                for v in 1..=2u64 {
                    ev.raise_at(v * 10, ASYNC, None, &v);
                }
                let d = {
                    let reg = reg.clone();
                    spawn(move || reg.events().deliver(CbSafety::None))
                };
                ev.raise_at(30, ASYNC, None, &3);
                d.join().unwrap();
            })
        };
        raiser.join().unwrap();
        let seen = f.settle(3);
        let s = f.reg.events().stats();
        assert_eq!(s.deferred + s.dropped, 3, "{s:?}");
        assert!(s.dropped <= 1, "{s:?}");
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "out of order: {seen:?}"
        );
    });
}

/// A raise at a `NONE` point — it runs the callback at once if it gets
/// the token and nothing of the registration waits, else defers and tries
/// a delivery point — after one deferred raise (so that something waits),
/// against a delivery point on another thread that may hold the token:
/// the `NONE` callbacks never overlap and each event is delivered once, in
/// raise order (the second waits behind the first while that waits in the
/// buffer or is being delivered from it).
#[test]
fn raise_none_vs_deliver() {
    model(|| {
        let f = Fixture::new(2, CbSafety::None);
        let raiser = f.raiser(&[(ASYNC, 1), (CbSafety::None, 2)]);
        let d = f.deliverer();
        raiser.join().unwrap();
        d.join().unwrap();
        let seen = f.settle(2);
        assert_eq!(seen, [1, 2], "a thread's events out of order");
    });
}

/// The registration is freed (on the main thread) while one event waits
/// or is being delivered on another thread: the waiting event is
/// delivered or discarded, the free callback runs exactly once, and no
/// callback runs after it.
#[test]
fn free_vs_deliver() {
    model(|| {
        let mut f = Fixture::new(2, CbSafety::None);
        let raiser = f.raiser(&[(ASYNC, 1)]);
        let d = f.deliverer();
        f.free();
        raiser.join().unwrap();
        d.join().unwrap();
        // Raised 0 or 1 times: a raise after the free finds no subscriber.
        let raised = f.reg.events().stats().raised;
        assert!(raised <= 1);
        f.settle(raised);
        assert_eq!(
            f.freed.load(Ordering::Relaxed),
            1,
            "free callback did not run"
        );
        assert_eq!(f.reg.events().registrations(), 0);
    });
}

/// `Events::waiting` (also the engine's `waiting` pvar) never exceeds
/// what was raised: a raise counts its entry before the push makes it
/// visible, so a delivery point that pops it at once never brings the
/// count below zero (it would wrap to `u64::MAX`).
#[test]
fn waiting_never_wraps() {
    model(|| {
        let f = Fixture::new(2, CbSafety::None);
        let raiser = f.raiser(&[(ASYNC, 1), (ASYNC, 2)]);
        let d = {
            let reg = f.reg.clone();
            spawn(move || {
                reg.events().deliver(CbSafety::None);
                let w = reg.events().waiting();
                assert!(w <= 2, "waiting = {w}");
            })
        };
        raiser.join().unwrap();
        d.join().unwrap();
        f.settle(2);
    });
}

/// A `THREAD_SAFE` callback, so a raise at a `THREAD_SAFE` point could run
/// it at once. The raising thread's first event waits (no callback may run
/// at an async-signal-safe point); a delivery point on another thread
/// takes it out of the buffer and runs its callback while the raising
/// thread raises its second at a `THREAD_SAFE` point: the second waits
/// until the first's callback has run, so they arrive in raise order (up
/// to 6ca10e8 the registration stopped counting the first as soon as it
/// was taken out, and the second could run before it: `[2, 1]`).
#[test]
fn taken_out_vs_thread_safe_raise() {
    model(|| {
        let f = Fixture::new(2, CbSafety::ThreadSafe);
        let raiser = f.raiser(&[(ASYNC, 1), (CbSafety::ThreadSafe, 2)]);
        let d = f.deliverer();
        raiser.join().unwrap();
        d.join().unwrap();
        let seen = f.settle(2);
        assert_eq!(seen, [1, 2], "a thread's events out of order");
    });
}

/// The same on one thread, through a signal handler: the thread's first
/// event waits; then the tool adds an `ASYNC_SIGNAL_SAFE` callback, and
/// the thread runs a delivery point, which takes the event out and, before
/// its callback runs, is interrupted by a handler that raises the second
/// (at an async-signal-safe point, where the new callback could run at
/// once). The handler's event waits behind the first and the delivery
/// point delivers it after it: `[1, 2]`. Both threads of the model race
/// with a delivery point on another thread too.
#[test]
fn handler_raise_inside_delivery() {
    use pvar::loom_api::signal;
    model(|| {
        let f = Fixture::new(2, CbSafety::ThreadSafe);
        let key = f.r.as_ref().unwrap().key();
        let t = {
            let (reg, ev, seen) = (f.reg.clone(), f.ev.clone(), f.seen.clone());
            spawn(move || {
                reg.prepare_thread();
                ev.raise_at(10, ASYNC, None, &1); // waits
                let s = seen.clone();
                reg.events()
                    .register_callback(
                        key,
                        ASYNC,
                        Some(Box::new(move |inst, _| {
                            let v: u64 = inst.read(0).unwrap();
                            assert_eq!(inst.timestamp(), v * 10, "torn record");
                            s.lock().unwrap().push(v);
                        })),
                        0,
                    )
                    .unwrap();
                let ev2 = ev.clone();
                signal::arm(0, move || ev2.raise_at(20, ASYNC, None, &2));
                reg.events().deliver(CbSafety::None);
                // The handler ran unless another thread's delivery point
                // took the first event out.
                signal::disarm();
            })
        };
        let d = f.deliverer();
        t.join().unwrap();
        d.join().unwrap();
        let seen = f.settle(f.reg.events().stats().raised);
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "a thread's events out of order: {seen:?}"
        );
    });
}

/// A registration counts in its event's observers (the raise's one load)
/// exactly while it has a callback or a dropped handler and is not freed:
/// a tool thread sets and removes a dropped handler (the only thing the
/// registration ever has) while the main thread frees the registration.
/// Afterwards the event is not observed, whatever the interleaving.
#[test]
fn observed_vs_free() {
    model(|| {
        let reg = crate::registry();
        let ev = reg.event::<u64>("e").register().unwrap();
        let r = reg.event_registration(ev.index(), None).unwrap();
        let key = r.key();
        r.on_dropped(|_, _| {}).unwrap();
        assert!(ev.is_observed(), "a dropped handler observes the event");
        r.on_dropped(|_, _| {}).unwrap(); // replaced: still counted once
        let tool = {
            let reg = reg.clone();
            spawn(move || {
                let events = reg.events();
                let _ = events.set_dropped_handler(key, None);
                let _ = events.set_dropped_handler(key, Some(Box::new(|_, _, _, _| {})));
            })
        };
        drop(r); // MPI_T_event_handle_free
        tool.join().unwrap();
        assert!(!ev.is_observed(), "observed after the free");
    });
}

/// Two tool threads change one registration at once: one adds a callback
/// while the other removes the dropped handler, the only thing it had.
/// Whatever the interleaving, the registration then has a callback and
/// counts once in the observers; after the free, in none.
#[test]
fn observed_vs_change() {
    model(|| {
        let reg = crate::registry();
        let ev = reg.event::<u64>("e").register().unwrap();
        let r = reg.event_registration(ev.index(), None).unwrap();
        let key = r.key();
        r.on_dropped(|_, _| {}).unwrap();
        let tool = {
            let reg = reg.clone();
            spawn(move || {
                reg.events()
                    .register_callback(key, CbSafety::ThreadSafe, Some(Box::new(|_, _| {})), 0)
                    .unwrap();
            })
        };
        reg.events().set_dropped_handler(key, None).unwrap();
        tool.join().unwrap();
        assert!(
            ev.is_observed(),
            "a registration with a callback is not observed"
        );
        drop(r);
        assert!(!ev.is_observed(), "observed after the free (counted twice)");
    });
}
