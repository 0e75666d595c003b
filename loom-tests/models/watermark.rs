//! Watermark handles (HIGHWATERMARK) through the public API: start / stop /
//! read / write / reset / free on the tool side against concurrent level
//! updates on another thread.
//!
//! What is promised (`hot/storage/watermark.rs`, `tool/handle.rs`): a started
//! mark covers every level stored after its start became visible; a stopped
//! handle is frozen exactly at its stop, even with an update in flight that
//! saw it started; a value written to a stopped handle, and the starting
//! value a reset gives it, stay until the next start. An update racing
//! with a start, reset or write lands in the period before it or the one
//! after it, never in neither — also for the first started handle, since
//! the updater no longer fences: the tool's heavy barrier (`membarrier`,
//! modelled as a `SeqCst` fence on both sides, see `sync::asymmetric`)
//! pairs with the updater's compiler fence.
//!
//! The walk gate (an update skips the subscriptions when its value passes
//! no started mark) is checked by `a_stop_does_not_settle_over_a_reset`:
//! a threshold computed before a reset lowered a mark must never land.
//!
//! The stop / write / reset models fail on the engine before the tagged
//! marks (commit ad7caea), where an in-flight push landed in a stopped
//! mark.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use pvar::{HandleId, HighWatermark, Registry, SessionId};

use crate::{model, read_u64, registry, spawn};

/// A registry with a HIGHWATERMARK (level 0) and `handles` handles on it in
/// one session.
fn watermark_handles(handles: usize) -> (Registry, HighWatermark<u64>, SessionId, Vec<HandleId>) {
    let reg = registry();
    let w = reg.high_watermark::<u64>("w").register().unwrap();
    let s = reg.tool().session_create().unwrap();
    let hs = (0..handles)
        .map(|_| reg.tool().handle_alloc(s, w.index(), None).unwrap().0)
        .collect();
    (reg, w, s, hs)
}

/// A thread updating `w` to each of `levels` in turn.
fn updater(w: &HighWatermark<u64>, levels: &'static [u64]) -> loom::thread::JoinHandle<()> {
    let w = w.clone();
    spawn(move || levels.iter().for_each(|&v| w.update(v)))
}

fn read(reg: &Registry, s: SessionId, h: HandleId) -> u64 {
    read_u64(reg.tool(), s, h).unwrap()
}

/// An update made after the updater saw the start complete (flag published
/// by the tool after `start` returned) is covered by the mark; the mark
/// never exceeds the highest level stored.
fn covers_after_start(already_started: bool) {
    model(move || {
        let (reg, w, s, hs) = watermark_handles(2);
        let (other, h) = (hs[0], hs[1]);
        if already_started {
            reg.tool().start(s, other).unwrap();
        }
        let started = Arc::new(AtomicBool::new(false));
        let tool = {
            let (reg, started) = (reg.clone(), started.clone());
            spawn(move || {
                reg.tool().start(s, h).unwrap();
                started.store(true, Ordering::Release);
            })
        };
        let seen = {
            let (w, started) = (w.clone(), started.clone());
            spawn(move || {
                w.update(5);
                let seen = started.load(Ordering::Acquire);
                w.update(1);
                seen
            })
        };
        tool.join().unwrap();
        let seen = seen.join().unwrap();
        reg.tool().stop(s, h).unwrap();
        let mark = read(&reg, s, h);
        assert!(mark <= 5, "mark {mark} above every level");
        if seen {
            // update(5) raced with the start and update(1) came after it:
            // either update(5) is before the start (the mark starts at 5)
            // or after it (the mark covers it). Before the asymmetric fence
            // the first started handle could lose it (the updater did not
            // fence with no handle started).
            assert_eq!(mark, 5, "update racing with the start lost (other started: {already_started})");
        }
    });
}

/// The first started handle.
#[test]
fn start_covers_later_levels_first_handle() {
    covers_after_start(false);
}

/// With another handle already started (the updater already walks the
/// marks).
#[test]
fn start_covers_later_levels_second_handle() {
    covers_after_start(true);
}

/// Stop against an update in flight: whatever the stop froze, every later
/// read returns it, after the updater has finished too.
#[test]
fn stop_vs_update_freezes() {
    model(|| {
        let (reg, w, s, hs) = watermark_handles(1);
        let h = hs[0];
        reg.tool().start(s, h).unwrap();
        let u = updater(&w, &[5, 7]);
        reg.tool().stop(s, h).unwrap();
        let frozen = read(&reg, s, h);
        let again = read(&reg, s, h);
        u.join().unwrap();
        let after = read(&reg, s, h);
        assert!(frozen <= 7, "mark {frozen} above every level");
        assert_eq!(frozen, again, "stopped handle moved between two reads");
        assert_eq!(frozen, after, "stopped handle moved after the updates");
    });
}

/// A value written to a stopped handle stays, whatever updates were in
/// flight, until the next start.
#[test]
fn write_vs_update_stays() {
    model(|| {
        let (reg, w, s, hs) = watermark_handles(1);
        let h = hs[0];
        reg.tool().start(s, h).unwrap();
        let u = updater(&w, &[5, 7]);
        reg.tool().stop(s, h).unwrap();
        reg.tool().write(s, h, 0, &[1]).unwrap();
        let written = read(&reg, s, h);
        u.join().unwrap();
        assert_eq!(written, 1);
        assert_eq!(read(&reg, s, h), 1, "write to a stopped handle overwritten");
        reg.tool().start(s, h).unwrap();
        assert_eq!(read(&reg, s, h), 7, "a start takes the level again");
    });
}

/// Reset of a stopped handle sets the starting value (the level then) and
/// keeps it against updates in flight; reset of a started handle hands the
/// replaced value out and the new period covers the levels after it.
#[test]
fn reset_vs_update() {
    for started in [false, true] {
        model(move || {
            let (reg, w, s, hs) = watermark_handles(1);
            let h = hs[0];
            reg.tool().start(s, h).unwrap();
            // The level goes back down after 5: a reset that missed the
            // update in both periods cannot hide it behind a read's push.
            let u = updater(&w, &[5, 1]);
            if !started {
                reg.tool().stop(s, h).unwrap();
            }
            let mut old = [0u64];
            reg.tool().readreset(s, h, 0, &mut old).unwrap();
            let start = read(&reg, s, h);
            u.join().unwrap();
            let now = read(&reg, s, h);
            assert!(old[0] <= 5 && start <= 5);
            if started {
                assert_eq!(old[0].max(now), 5, "update lost by reset");
            } else {
                assert_eq!(now, start, "stopped handle moved after its reset");
            }
        });
    }
}

/// A reset that lowers a started mark (9 down to the level 2) while the
/// component stores 5: the walk gate's threshold was 9, so the updater may
/// skip its walk, and then the reset must see the level 5 after its heavy
/// barrier. Whichever side of the reset the update falls, the new period
/// holds 5 once the level has gone down to 1. Fails without the heavy
/// barrier (or without the updater's light one).
#[test]
fn reset_lowering_a_mark_vs_update() {
    model(|| {
        let (reg, w, s, hs) = watermark_handles(1);
        let h = hs[0];
        w.update(9);
        reg.tool().start(s, h).unwrap();
        w.update(2);
        let u = updater(&w, &[5]);
        let mut old = [0u64];
        reg.tool().readreset(s, h, 0, &mut old).unwrap();
        assert_eq!(old[0], 9);
        u.join().unwrap();
        w.update(1);
        assert_eq!(read(&reg, s, h), 5, "update concurrent with the reset in neither period");
    });
}

/// A tool allocates a watermark handle, starts, reads and frees it
/// (unsubscribe) while a component updates; then a new handle recycles the
/// subscription slot. Reads stay within the levels stored, the freed handle
/// is INVALID_HANDLE, nothing leaks.
#[test]
fn handle_alloc_start_free_vs_updates() {
    model(|| {
        let (reg, w, s, _) = watermark_handles(0);
        let u = updater(&w, &[5, 1]);
        let (h, _) = reg.tool().handle_alloc(s, w.index(), None).unwrap();
        reg.tool().start(s, h).unwrap();
        let r = read(&reg, s, h);
        assert!(r <= 5, "read {r} above every level");
        reg.tool().handle_free(s, h).unwrap();
        let (h2, _) = reg.tool().handle_alloc(s, w.index(), None).unwrap();
        u.join().unwrap();
        assert_eq!(
            read_u64(reg.tool(), s, h).unwrap_err().code(),
            pvar::ErrorCode::InvalidHandle
        );
        reg.tool().start(s, h2).unwrap();
        assert_eq!(read(&reg, s, h2), 1, "started at the level");
        reg.tool().session_free(s).unwrap();
        assert_eq!(reg.tool().stats().handles, 0);
    });
}

/// Start and stop of one handle racing on two threads, with an update on
/// a third: the handle ends in the state of whichever transition came
/// last, and a stopped end state is frozen.
#[test]
fn start_vs_stop_race() {
    model(|| {
        let (reg, w, s, hs) = watermark_handles(1);
        let h = hs[0];
        reg.tool().start(s, h).unwrap();
        let stopper = {
            let reg = reg.clone();
            spawn(move || reg.tool().stop(s, h).unwrap())
        };
        let u = updater(&w, &[3]);
        reg.tool().stop(s, h).unwrap();
        reg.tool().start(s, h).unwrap();
        stopper.join().unwrap();
        u.join().unwrap();
        let started = reg.tool().is_started(s, h).unwrap();
        let r = read(&reg, s, h);
        w.update(9);
        let r2 = read(&reg, s, h);
        if started {
            assert_eq!(r2, 9, "a started handle follows the level");
        } else {
            assert_eq!(r, r2, "a stopped handle moved");
        }
    });
}

/// Two started handles on one element. A tool resets the first (its mark
/// drops from 9 to the level 2) while another stops the second (which
/// recomputes the walk gate's threshold from the started marks, possibly
/// from the first handle's mark before the reset lowered it). Then the
/// component stores 5 and 1: the first handle's new period must hold 5.
/// Fails if a threshold computed before the reset can land after it (a
/// settle that ignores the gate's generation), since the update of 5
/// would then skip the walk.
#[test]
fn a_stop_does_not_settle_over_a_reset() {
    model(|| {
        let (reg, w, s, hs) = watermark_handles(2);
        let (h1, h2) = (hs[0], hs[1]);
        w.update(9);
        reg.tool().start(s, h1).unwrap();
        reg.tool().start(s, h2).unwrap();
        w.update(2);
        let stopper = {
            let reg = reg.clone();
            spawn(move || reg.tool().stop(s, h2).unwrap())
        };
        let mut old = [0u64];
        reg.tool().readreset(s, h1, 0, &mut old).unwrap();
        assert_eq!(old[0], 9);
        w.update(5);
        w.update(1);
        stopper.join().unwrap();
        assert_eq!(read(&reg, s, h1), 5, "update after the reset skipped its walk");
        assert_eq!(read(&reg, s, h2), 9, "the stopped handle froze at its mark");
    });
}
