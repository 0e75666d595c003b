//! Re-entrancy: a sampling tool's signal handler runs tool operations on the
//! thread it interrupted, between two steps of the interrupted operation.
//!
//! loom has no signals, so the engine (under `--cfg loom` only) has signal
//! points between the load of a SUM handle's word and its compare-and-swap
//! (start, stop, reset, readreset, write) or its re-check (read): the merged
//! read of the cells; and in a watermark start, after it won the handle's
//! transition and made the marks started, before it raises the started
//! count. A model arms a handler with `loom_api::signal::arm(k,
//! ..)`; it runs at the k-th point the thread passes, on that thread (same
//! thread-locals), while loom interleaves the other threads around it. We
//! run each scenario with k = 0, 1, 2 (k > 0 is reached only when the
//! interrupted operation retries).
//!
//! The record cache's switch in `hot/cells/record.rs` (its `cache` module) has two signal
//! points too (between its thread-local writes), for a handler that updates
//! a counter.
//!
//! Not modelled: a handler interrupting a component *update* of the same
//! cell on the same thread, between the load and the store of the thread's
//! own cell (the handler's update would be overwritten; updates from
//! handlers are promised async-signal-safe, not atomic with an interrupted
//! update of the same cell).

use std::cell::Cell;
use std::rc::Rc;

use loom::sync::Arc;
use pvar::loom_api::{Cells, signal};
use pvar::{HandleId, Registry, SessionId};

use crate::{N, counter_handle, model, read_u64, readreset, spawn, updater};

const POINTS: usize = 3;

/// Arms a handler running `op` at signal point `k`; returns where its
/// result will be (None if it never ran).
fn arm_readreset(k: usize, reg: &Registry, s: SessionId, h: HandleId) -> Rc<Cell<Option<u64>>> {
    let got = Rc::new(Cell::new(None));
    let (reg, got2) = (reg.clone(), got.clone());
    signal::arm(k, move || got2.set(Some(readreset(&reg, s, h))));
    got
}

/// Disarms the handler armed at signal point `k`, which must have run if
/// `k` is 0 (later points are reached only when the operation retries).
fn disarm(k: usize) {
    let missed = signal::disarm();
    assert!(k > 0 || !missed, "the handler did not run");
}

/// For each signal point k, a model of a counter handle (started or not)
/// with N updates on one thread and `tool(k, ..)` (which arms a handler at
/// point k and runs the interrupted operation) on another; `check(k, ..,
/// what tool returned)` runs once both threads ended.
fn interrupted<R: 'static>(
    started: bool,
    tool: fn(usize, &Registry, SessionId, HandleId) -> R,
    check: fn(usize, &Registry, SessionId, HandleId, R),
) {
    for k in 0..POINTS {
        model(move || {
            let (reg, c, s, h) = counter_handle(started);
            let u = updater(&c);
            let t = {
                let reg = reg.clone();
                spawn(move || tool(k, &reg, s, h))
            };
            let r = t.join().unwrap();
            u.join().unwrap();
            check(k, &reg, s, h, r);
        });
    }
}

/// readreset interrupted by a readreset: the two deltas plus the final read
/// add up to exactly N.
#[test]
fn readreset_inside_readreset() {
    interrupted(
        true,
        |k, reg, s, h| {
            let inner = arm_readreset(k, reg, s, h);
            let outer = readreset(reg, s, h);
            disarm(k);
            inner.get().unwrap_or(0) + outer
        },
        |k, reg, s, h, deltas| {
            let last = read_u64(reg.tool(), s, h).unwrap();
            assert_eq!(deltas + last, N, "k={k}: deltas {deltas} + final {last}");
        },
    );
}

/// read interrupted by a readreset: the read returns a value of the handle
/// after the readreset (it re-checks its word), and the readreset plus the
/// final read add up to N.
#[test]
fn readreset_inside_read() {
    interrupted(
        true,
        |k, reg, s, h| {
            let inner = arm_readreset(k, reg, s, h);
            let r = read_u64(reg.tool(), s, h).unwrap();
            disarm(k);
            let d = inner.get().unwrap_or(0);
            assert!(
                d + r <= N,
                "k={k}: read {r} counts updates the handler reset ({d})"
            );
            d
        },
        |k, reg, s, h, d| {
            let last = read_u64(reg.tool(), s, h).unwrap();
            assert_eq!(d + last, N, "k={k}: delta {d} + final {last}");
        },
    );
}

/// stop interrupted by a readreset: the handle ends stopped and frozen; the
/// handler's delta plus the frozen value never exceed N.
#[test]
fn readreset_inside_stop() {
    interrupted(
        true,
        |k, reg, s, h| {
            let inner = arm_readreset(k, reg, s, h);
            reg.tool().stop(s, h).unwrap();
            disarm(k);
            let frozen = read_u64(reg.tool(), s, h).unwrap();
            (inner.get().unwrap_or(0), frozen)
        },
        |k, reg, s, h, (d, frozen)| {
            assert!(!reg.tool().is_started(s, h).unwrap());
            assert_eq!(
                read_u64(reg.tool(), s, h).unwrap(),
                frozen,
                "k={k}: stopped handle moved"
            );
            assert!(d + frozen <= N, "k={k}: {d} + {frozen} > {N}");
        },
    );
}

/// start interrupted by a stop: the start is linearised at its transition
/// of the handle's run word, which comes before every signal point, so the
/// handler's stop follows it and the handle ends stopped, frozen, whatever
/// order the two operations' element steps ran in; it never counts more
/// than the updates made.
#[test]
fn stop_inside_start() {
    interrupted(
        false,
        |k, reg, s, h| {
            let reg2 = reg.clone();
            signal::arm(k, move || reg2.tool().stop(s, h).unwrap());
            reg.tool().start(s, h).unwrap();
            let ran = !signal::disarm();
            assert!(k > 0 || ran, "the handler did not run");
            (read_u64(reg.tool(), s, h).unwrap(), ran)
        },
        |k, reg, s, h, (r, ran)| {
            let last = read_u64(reg.tool(), s, h).unwrap();
            assert!(r <= last && last <= N, "k={k}: {r} then {last}");
            if ran {
                assert!(
                    !reg.tool().is_started(s, h).unwrap(),
                    "k={k}: the later stop lost"
                );
                assert_eq!(r, last, "k={k}: stopped handle moved");
            } else {
                assert!(reg.tool().is_started(s, h).unwrap(), "k={k}: start lost");
            }
        },
    );
}

/// Watermark start interrupted (after it won the handle's transition and
/// made the marks started, before it raised the started count) by a
/// handler that starts, stops or resets the same handle, against updates
/// on another thread. The interrupted start is linearised at its
/// transition, so the handler's start finds the handle started and does
/// nothing, and its stop comes after the start: the handle ends stopped,
/// frozen. Started, the mark covers the levels stored after it.
fn watermark_op_inside_start(op: fn(&Registry, SessionId, HandleId), ends_started: bool) {
    model(move || {
        let reg = crate::registry();
        let w = reg.high_watermark::<u64>("w").register().unwrap();
        let s = reg.tool().session_create().unwrap();
        let (h, _) = reg.tool().handle_alloc(s, w.index(), None).unwrap();
        let u = {
            let w = w.clone();
            spawn(move || {
                w.update(5);
                w.update(1);
            })
        };
        let tool = {
            let reg = reg.clone();
            spawn(move || {
                let inner = reg.clone();
                signal::arm(0, move || op(&inner, s, h));
                reg.tool().start(s, h).unwrap();
                assert!(!signal::disarm(), "the handler did not run");
            })
        };
        tool.join().unwrap();
        u.join().unwrap();
        assert_eq!(reg.tool().is_started(s, h).unwrap(), ends_started);
        let r = read_u64(reg.tool(), s, h).unwrap();
        assert!(r <= 5, "mark {r} above the levels stored");
        w.update(7);
        let r2 = read_u64(reg.tool(), s, h).unwrap();
        if ends_started {
            assert!((1..=5).contains(&r), "mark {r} outside the levels stored");
            assert_eq!(r2, 7);
            reg.tool().stop(s, h).unwrap();
        } else {
            assert_eq!(r2, r, "stopped mark moved");
        }
        w.update(9);
        let frozen = read_u64(reg.tool(), s, h).unwrap();
        assert_ne!(frozen, 9, "stopped mark moved");
    });
}

#[test]
fn watermark_start_inside_start() {
    watermark_op_inside_start(|reg, s, h| reg.tool().start(s, h).unwrap(), true);
}

#[test]
fn watermark_stop_inside_start() {
    watermark_op_inside_start(|reg, s, h| reg.tool().stop(s, h).unwrap(), false);
}

#[test]
fn watermark_reset_inside_start() {
    watermark_op_inside_start(|reg, s, h| reg.tool().reset(s, h).unwrap(), true);
}

/// The thread's record cache (two thread-local words,
/// `hot/cells/record.rs` (its `cache` module)) being switched to another cell space when a handler interrupts it, at
/// either of its two inner steps, and updates a counter of the first space
/// (which looks its record up and must leave the half-written cache alone:
/// the `UPDATING` flag). Afterwards each space's updates land in its own
/// records: both sums exact. A concurrent merging reader runs alongside.
#[test]
fn record_cache_switch_interrupted_by_update() {
    for k in 0..2 {
        model(move || {
            let s1 = Arc::new(Cells::new());
            let s2 = Arc::new(Cells::new());
            let (a, b) = (s1.alloc(), s2.alloc());
            let t = {
                let (s1, s2) = (s1.clone(), s2.clone());
                spawn(move || {
                    s1.add(a, 1); // cache: space 1
                    let h1 = s1.clone();
                    signal::arm(k, move || h1.add(a, 10));
                    s2.add(b, 1); // cache switch to space 2, interrupted
                    assert!(!signal::disarm(), "k={k}: the handler did not run");
                    // Through the cache the switch left behind.
                    s2.add(b, 1000);
                    s1.add(a, 100);
                })
            };
            let r = s1.sum(a);
            assert!([0, 1, 11, 111].contains(&r), "k={k}: space 1 read {r}");
            t.join().unwrap();
            assert_eq!(s1.sum(a), 111, "k={k}: space 1");
            assert_eq!(s2.sum(b), 1001, "k={k}: space 2");
        });
    }
}
