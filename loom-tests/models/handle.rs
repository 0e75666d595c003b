//! SUM handles (COUNTER): start / stop / read / reset / readreset on the
//! tool side against concurrent component updates, through the public API.
//! A handle element is one 128-bit word `(accum - offset, started)` updated
//! by compare-and-swap from one merged read of the per-thread cells.

use crate::{N, counter_handle, model, read_u64, readreset, updater};

/// A started handle, N updates on one thread, two readresets on another:
/// the deltas plus the final read add up to exactly N (nothing lost between
/// a read and its reset, nothing counted twice).
#[test]
fn readreset_twice_vs_updates() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen2 = seen.clone();
    model(move || {
        let (reg, c, s, h) = counter_handle(true);
        let u = updater(&c);
        let d1 = readreset(&reg, s, h);
        let d2 = readreset(&reg, s, h);
        u.join().unwrap();
        let last = read_u64(reg.tool(), s, h).unwrap();
        assert_eq!(d1 + d2 + last, N, "deltas {d1} + {d2} + final {last}");
        seen2.lock().unwrap().insert((d1, d2, last));
    });
    // Not vacuous: loom split the N updates between the two readresets and
    // the final read in every possible way.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "outcomes explored: {seen:?}");
}

/// Start, read, stop, read against updates: reads between start and stop
/// never go backwards; a stopped handle is frozen; nothing beyond the
/// updates made is ever counted.
#[test]
fn start_read_stop_vs_updates() {
    model(|| {
        let (reg, c, s, h) = counter_handle(false);
        let u = updater(&c);
        reg.tool().start(s, h).unwrap();
        let r1 = read_u64(reg.tool(), s, h).unwrap();
        reg.tool().stop(s, h).unwrap();
        let r2 = read_u64(reg.tool(), s, h).unwrap();
        u.join().unwrap();
        let r3 = read_u64(reg.tool(), s, h).unwrap();
        assert!(r1 <= r2, "read went backwards: {r1} then {r2}");
        assert!(r2 <= N);
        assert_eq!(r2, r3, "a stopped handle moved");
    });
}

/// Reset of a started handle against updates, then a readreset: the value
/// after the reset counts only updates made after it, and the readreset
/// plus the final read never exceed what was counted since the reset.
#[test]
fn reset_then_readreset_vs_updates() {
    model(|| {
        let (reg, c, s, h) = counter_handle(true);
        let u = updater(&c);
        reg.tool().reset(s, h).unwrap();
        let r = read_u64(reg.tool(), s, h).unwrap();
        let d = readreset(&reg, s, h);
        u.join().unwrap();
        let last = read_u64(reg.tool(), s, h).unwrap();
        assert!(r <= d, "read {r} after reset, then readreset {d}");
        assert!(d + last <= N);
        // The updates the reset discarded are exactly those the counter saw
        // before it: N = discarded + d + last, with discarded >= 0.
        assert_eq!(c.get(), N);
    });
}

/// Two sessions' handles on the same counter, one stopped and restarted
/// while the other is read: handles are independent.
#[test]
fn two_sessions_independent() {
    model(|| {
        let (reg, c, s, h) = counter_handle(true);
        let s2 = reg.tool().session_create().unwrap();
        let (h2, _) = reg.tool().handle_alloc(s2, c.index(), None).unwrap();
        reg.tool().start(s2, h2).unwrap();
        let u = updater(&c);
        reg.tool().stop(s, h).unwrap();
        let frozen = read_u64(reg.tool(), s, h).unwrap();
        let other = read_u64(reg.tool(), s2, h2).unwrap();
        u.join().unwrap();
        assert_eq!(read_u64(reg.tool(), s, h).unwrap(), frozen);
        assert!(other <= N);
        assert_eq!(read_u64(reg.tool(), s2, h2).unwrap(), N);
    });
}
