//! A thread that takes over an exited thread's id (and its per-thread
//! records) does not take over the exited thread's open TIMER intervals.
//!
//! The only test in its binary on purpose: thread ids are process-wide and
//! handed out smallest first, so with no other test's threads around, the
//! second thread here is certain to reuse the first one's id (the test
//! checks that it did, so it cannot pass vacuously).
//!
//! Found by an outside stress scenario: a TIMER interval left running by
//! an exited thread was stopped by the next thread that reused its id,
//! although that thread never called `start` (the start ticks lived in the
//! record, which survives the hand-over), and the timer read 1.0 s instead
//! of 0. Fixed in `cells`: start ticks are thread-owned cells, zeroed when
//! another thread takes the record over (`CellSpace::claim`); an interval
//! still open at thread exit is dropped. The loom model
//! `thread_reuse::open_interval_is_not_inherited` checks the hand-over on
//! every interleaving.

use std::time::Duration;

use pvar::{Datatype, Registry};

#[test]
fn timer_interval_of_an_exited_thread_is_not_stopped_by_its_successor() {
    let (clock, time) = pvar::Clock::mock();
    let reg = Registry::with_clock(clock);
    let t = reg
        .timer("t")
        .datatype(Datatype::UnsignedLongLong)
        .register()
        .unwrap();
    let c = reg.counter("c").register().unwrap();
    let first = {
        let t = t.clone();
        std::thread::spawn(move || {
            t.start(); // never stopped: the thread exits with it open
            pvar::live_threads()
        })
    };
    assert_eq!(
        first.join().unwrap(),
        1,
        "the first thread held the only id"
    );
    time.advance(Duration::from_secs(1));
    let second = {
        let (t, c) = (t.clone(), c.clone());
        std::thread::spawn(move || {
            c.inc(); // takes the free id, and with it the first thread's record
            t.stop(); // this thread never started it: nothing to add
            t.start();
            t.stop(); // its own, empty, interval
        })
    };
    second.join().unwrap();
    assert_eq!(
        reg.pvars().thread_records(),
        1,
        "the second thread reused the first one's id and record"
    );
    assert_eq!(t.get_seconds(), 0.0, "an inherited interval was stopped");
    // The successor's own intervals are timed as usual.
    std::thread::spawn(move || {
        t.start();
        time.advance(Duration::from_millis(250));
        t.stop();
        assert_eq!(t.get_seconds(), 0.25);
    })
    .join()
    .unwrap();
}
