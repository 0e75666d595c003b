//! How the engine's generation-checked slot tables scale (issue 28,
//! items 3 and 4), measured through the public API:
//!
//! - `registrations`: the wall time to allocate the documented limit of
//!   event registrations ([`pvar::MAX_REGISTRATIONS`], 65,536) on one
//!   event type, and spread over 256 types, then to free them all; each
//!   allocation past the limit must fail with `OUT_OF_HANDLES`;
//! - `churn`: session churn (create a session, allocate and free a handle
//!   in it, free the session) on one thread while a second thread
//!   reads a handle of its own session in a loop and a third reads the
//!   churned handle (a callback variable whose read takes microseconds)
//!   and stops its session's handles: reader references on the slots
//!   being freed, for a fixed time; printed as cycles per
//!   second. With `--spinners N`, N more threads spin meanwhile, so
//!   that the machine is oversubscribed (a reader can be descheduled
//!   while it holds a slot).
//!
//! ```text
//! cargo run --release --example slot_scaling -- [registrations] [churn] [--secs S] [--spinners N] [--reps R]
//! ```
//!
//! Timings are one-shot wall times (the old quadratic allocation took a
//! minute for one run, too long for criterion's sampling); run old and
//! new builds back to back on the same machine and compare the ratios.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pvar::{Callbacks, Datatype, ErrorCode, HandleId, PvarClass, Registry, SessionId};

fn registrations(types: usize) -> (Duration, Duration) {
    let reg = Registry::new();
    let events: Vec<_> = (0..types)
        .map(|t| reg.event::<u64>(&format!("ev{t}")).register().unwrap())
        .collect();
    let ev = reg.events();
    let start = Instant::now();
    let keys: Vec<u64> = (0..pvar::MAX_REGISTRATIONS)
        .map(|i| ev.handle_alloc(events[i % types].index(), None).unwrap())
        .collect();
    let alloc = start.elapsed();
    let refused = ev.handle_alloc(events[0].index(), None).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::OutOfHandles);
    let start = Instant::now();
    for k in keys {
        ev.handle_free(k, None).unwrap();
    }
    let free = start.elapsed();
    assert_eq!(ev.registrations(), 0);
    (alloc, free)
}

fn churn(secs: f64, spinners: usize) -> f64 {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    // The churned handles' variable: a callback variable whose read takes
    // a few microseconds (a component walking a queue), so that a reader
    // holds its reference long enough to be descheduled inside it.
    let slow = reg
        .callback_pvar(
            "slow",
            PvarClass::Size,
            Datatype::UnsignedLongLong,
            Callbacks::new(|_obj, _i| {
                let mut x = 0u64;
                for i in 0..10_000u64 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                x
            }),
        )
        .register()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let tool = reg.tool();
    // The reader's own session and handle: its references are on the same
    // handle table the churn allocates from and frees into.
    let rs = tool.session_create().unwrap();
    let (rh, _) = tool.handle_alloc(rs, c.index(), None).unwrap();
    let reader = {
        let (reg, stop) = (reg.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut v = [0u64];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                reg.tool().read(rs, rh, 0, &mut v).unwrap();
                n += 1;
            }
            n
        })
    };
    // The churned handle is read by a second reader thread that grabs
    // whatever key was last published: the reader references that a free
    // has to deal with.
    let current = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let grabber = {
        let (reg, stop, current) = (reg.clone(), stop.clone(), current.clone());
        std::thread::spawn(move || {
            let mut v = [0u64];
            while !stop.load(Ordering::Relaxed) {
                let s = SessionId::from_raw(current[0].load(Ordering::Acquire));
                let h = HandleId::from_raw(current[1].load(Ordering::Acquire));
                // Either succeeds or finds the handle or session freed.
                let _ = reg.tool().read(s, h, 0, &mut v);
                let _ = reg.tool().stop_all(s);
            }
        })
    };
    let spin: Vec<_> = (0..spinners)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        })
        .collect();
    let start = Instant::now();
    let mut cycles = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        let s = tool.session_create().unwrap();
        let (h, _) = tool.handle_alloc(s, slow.index(), None).unwrap();
        current[0].store(s.to_raw(), Ordering::Release);
        current[1].store(h.to_raw(), Ordering::Release);
        // The churn's own read: the window in which the grabber enters.
        let mut v = [0u64];
        tool.read(s, h, 0, &mut v).unwrap();
        tool.handle_free(s, h).unwrap();
        tool.session_free(s).unwrap();
        cycles += 1;
    }
    let rate = cycles as f64 / start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    grabber.join().unwrap();
    for s in spin {
        s.join().unwrap();
    }
    rate
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let all = !args.iter().any(|a| a == "registrations" || a == "churn");
    let reps = flag("--reps", 3.0) as usize;
    if all || args.iter().any(|a| a == "registrations") {
        for types in [1, 256] {
            for _ in 0..reps {
                let (alloc, free) = registrations(types);
                println!(
                    "registrations: {} on {types} type(s): alloc {:.3} s, free {:.3} s",
                    pvar::MAX_REGISTRATIONS,
                    alloc.as_secs_f64(),
                    free.as_secs_f64()
                );
            }
        }
    }
    if all || args.iter().any(|a| a == "churn") {
        let secs = flag("--secs", 2.0);
        let spinners = flag("--spinners", 0.0) as usize;
        for _ in 0..reps {
            println!(
                "churn: {:.0} cycles/s ({secs} s, reader + grabber threads, {spinners} spinners)",
                churn(secs, spinners)
            );
        }
    }
}
