//! Component-side update costs next to the alternatives, on 1, 2 and
//! `nproc` threads, in one run (`cargo bench --bench alternatives`).
//!
//! Group `update` — one update of one variable per iteration:
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | a plain `thread_local!` `Cell<u64>` `+= 1` (the physical limit; the ratios' baseline) |
//! | `thread_local_f64` | the same with a `Cell<f64>` `+= 1.5` (the baseline of `aggregate_f64` and `aggregate_macro_f64`) |
//! | `thread_local_crate` | the `thread_local` crate: `ThreadLocal<Cell<u64>>::get_or_default()` then `+= 1` (one `ThreadLocal` shared by the threads) |
//! | `atomic_owned` | `AtomicU64::fetch_add` on an atomic private to the thread (own cache lines) |
//! | `atomic_shared` | `AtomicU64::fetch_add` on one atomic shared by all threads |
//! | `prometheus` | `prometheus::IntCounter::inc` on one counter shared by all threads |
//! | `metrics` | a `metrics::Counter` (handle held, from a recorder backed by an `AtomicU64`, as `metrics-util` does) `.increment(1)` |
//! | `racy_global` | MPICH-style plain global `+=`: relaxed load + store on one shared `AtomicU64` — loses counts under threads (printed, and written to `$PVAR_BENCH_OUT/racy.json`) |
//! | `counter` | [`pvar::Counter::inc`] |
//! | `local_counter` | [`pvar::LocalCounter::inc`] (`counter.local(0)` fetched once per thread) |
//! | `aggregate_u64` | `Aggregate<u64>::add(3)` |
//! | `aggregate_f64` | `Aggregate<f64>::add(1.5)` |
//! | `level_inc_dec` | `Level<u64>`: an `inc` then a `dec` per loop pass (figures per update) |
//! | `watermark_0h` / `_1h` / `_16h` | `HighWatermark<u64>::update(i & 63)` with 0, 1 and 16 started tool handles |
//! | `counter_1000h` | `Counter::inc` with 1,000 started handles in 10 sessions (990 on other counters, 10 on the measured one) |
//! | `counter_macro` | `pvar::counter!("…").inc()`: a use site (global registry; cached cell) |
//! | `aggregate_macro_u64` | `pvar::aggregate!("…").add(3)` |
//! | `aggregate_macro_f64` | `pvar::aggregate!("…": f64).add(1.5)` |
//! | `level_macro` | `pvar::level!("…")`: an `inc` then a `dec` per loop pass |
//! | `watermark_macro_0h` | `pvar::high_watermark!("…").update(i & 63)`, no tool handle |
//!
//! Group `timer` — one interval per iteration: `quanta_pair` (two
//! `quanta::Clock::raw()`), `instant_pair` (`Instant::now()` + `elapsed()`),
//! `timer_start_stop` ([`pvar::Timer::start`] + `stop`), `timer_scoped`
//! (a [`pvar::TimerGuard`] made and dropped).
//!
//! Every iteration passes the updated object through `opaque` (an empty
//! `asm!` block taking its address in a register; the use-site macro
//! cases, whose addresses are constants, through `clobber`, the same block
//! without an operand) so each update really loads and stores (no
//! hoisting, no merging) for every case alike, with no stack store (see
//! `cli/src/bench/loops.rs`). The use-site cases run the macro at one
//! call site, inside the timed loop's body, and update once untimed first
//! (registration, the thread's cache). Threads are spawned once per
//! sample, lined up on a barrier, and each times its own loop; the
//! sample's time is the slowest thread's, so estimates are per update per
//! thread. pvar cases check the exact total (the use-site cases, whose
//! variables live in the global registry for the whole run, the growth of
//! their total over the sample), and so does `thread_local_crate`. Loops
//! are timed with wall time, or with each thread's CPU time when
//! `PVAR_BENCH_CLOCK=cpu` (what `scripts/bench.sh` uses by default).

#[path = "common/atomic_recorder.rs"]
mod atomic_recorder;
mod common;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_recorder::AtomicRecorder;
use common::{
    Padded, aggregate_add, counter_inc, instant_pair, level_inc_dec, opaque, quanta_pair, quick,
    run_threads, thread_counts, timed, timer_start_stop, watermark_update,
};
use criterion::{BenchmarkId, Criterion};

const UPDATE_CASES: [&str; 23] = [
    "thread_local",
    "thread_local_f64",
    "thread_local_crate",
    "atomic_owned",
    "atomic_shared",
    "prometheus",
    "metrics",
    "racy_global",
    "counter",
    "local_counter",
    "aggregate_u64",
    "aggregate_f64",
    "level_inc_dec",
    "watermark_0h",
    "watermark_1h",
    "watermark_16h",
    "counter_1000h",
    "counter_macro",
    "aggregate_macro_u64",
    "aggregate_macro_f64",
    "level_macro",
    "watermark_macro_0h",
    // Last: same as `counter`, to show drift over the run.
    "counter_again",
];

const TIMER_CASES: [&str; 4] = [
    "quanta_pair",
    "instant_pair",
    "timer_start_stop",
    "timer_scoped",
];

/// Lost increments of `racy_global`, per thread count: (lost, expected).
static LOST: Mutex<BTreeMap<usize, (u64, u64)>> = Mutex::new(BTreeMap::new());

/// A registry with 1,000 started handles in 10 sessions: in each session
/// 99 handles on other counters and one on `counter`.
fn with_1000_handles() -> (pvar::Registry, pvar::Counter, Vec<pvar::Session>) {
    let reg = pvar::Registry::new();
    let counter = reg.counter("measured").register().unwrap();
    let mut sessions = Vec::new();
    for s in 0..10 {
        let session = reg.session().unwrap();
        let (tool, id) = (session.tool(), session.id());
        for k in 0..99 {
            let other = reg.counter(&format!("other_{s}_{k}")).register().unwrap();
            tool.handle_alloc(id, other.index(), None).unwrap();
        }
        tool.handle_alloc(id, counter.index(), None).unwrap();
        session.start_all().unwrap();
        sessions.push(session);
    }
    assert_eq!(reg.tool().stats().handles, 1000);
    (reg, counter, sessions)
}

fn watermark_with(handles: usize) -> (pvar::HighWatermark<u64>, Option<pvar::Session>) {
    let reg = pvar::Registry::new();
    let w = reg.high_watermark::<u64>("wm").register().unwrap();
    if handles == 0 {
        return (w, None);
    }
    let session = reg.session().unwrap();
    let (tool, s) = (session.tool(), session.id());
    for _ in 0..handles {
        let (h, _) = tool.handle_alloc(s, w.index(), None).unwrap();
        tool.start(s, h).unwrap();
    }
    (w, Some(session))
}

fn measure_update(case: &str, threads: usize, iters: u64) -> Duration {
    let expect = threads as u64 * iters;
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "thread_local_f64" => run_threads(threads, iters, common::thread_local_f64_add),
        "thread_local_crate" => {
            let tl = Arc::new(thread_local::ThreadLocal::<Cell<u64>>::new());
            let shared = tl.clone();
            let d = run_threads(threads, iters, move |iters| {
                let tl = &*shared;
                tl.get_or_default(); // first touch: the thread's slot
                timed(iters, || {
                    let c = opaque(tl).get_or_default();
                    c.set(c.get() + 1);
                })
            });
            let tl = Arc::try_unwrap(tl).expect("the bench threads are joined");
            assert_eq!(tl.into_iter().map(Cell::into_inner).sum::<u64>(), expect);
            d
        }
        "atomic_owned" => common::atomic_owned_case(threads, iters),
        "atomic_shared" => common::atomic_shared_case(threads, iters),
        "prometheus" => {
            let c = prometheus::IntCounter::new("bench_total", "bench").unwrap();
            let check = c.clone();
            let d = run_threads(threads, iters, move |iters| {
                timed(iters, || opaque(&c).inc())
            });
            assert_eq!(check.get(), expect);
            d
        }
        "metrics" => {
            let cell = Arc::new(AtomicU64::new(0));
            let rec = AtomicRecorder(cell.clone());
            let c = metrics::with_local_recorder(&rec, || metrics::counter!("bench_total"));
            let d = run_threads(threads, iters, move |iters| {
                timed(iters, || opaque(&c).increment(1))
            });
            assert_eq!(cell.load(Ordering::Relaxed), expect);
            d
        }
        "racy_global" => {
            let shared = Arc::new(Padded(AtomicU64::new(0)));
            let check = shared.clone();
            let d = run_threads(threads, iters, move |iters| {
                let a = &shared.0;
                timed(iters, || {
                    let a = opaque(a);
                    a.store(a.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                })
            });
            let got = check.0.load(Ordering::Relaxed);
            let mut lost = LOST.lock().unwrap();
            let e = lost.entry(threads).or_default();
            e.0 += expect - got;
            e.1 += expect;
            d
        }
        "counter" | "counter_again" => common::counter_case(threads, iters),
        "local_counter" => common::local_counter_case(threads, iters),
        "aggregate_u64" => {
            let reg = pvar::Registry::new();
            let a = reg.aggregate::<u64>("bytes").register().unwrap();
            let check = a.clone();
            let d = run_threads(threads, iters, move |iters| aggregate_add(&a, 3, iters));
            assert_eq!(check.get(), 3 * expect, "exact total");
            d
        }
        "aggregate_f64" => {
            let reg = pvar::Registry::new();
            let a = reg.aggregate::<f64>("secs").register().unwrap();
            let check = a.clone();
            let d = run_threads(threads, iters, move |iters| aggregate_add(&a, 1.5, iters));
            assert_eq!(check.get(), 1.5 * expect as f64, "exact total");
            d
        }
        "level_inc_dec" => {
            let reg = pvar::Registry::new();
            let l = reg.level::<u64>("queue").register().unwrap();
            let check = l.clone();
            let d = run_threads(threads, iters, move |iters| level_inc_dec(&l, iters));
            // Each thread's updates come in inc/dec pairs (`timed_pairs`).
            assert_eq!(check.get(), 0, "exact total");
            d
        }
        "watermark_0h" | "watermark_1h" | "watermark_16h" => {
            let handles = match case {
                "watermark_0h" => 0,
                "watermark_1h" => 1,
                _ => 16,
            };
            let (w, session) = watermark_with(handles);
            let d = run_threads(threads, iters, move |iters| watermark_update(&w, iters));
            drop(session);
            d
        }
        "counter_1000h" => {
            let (_reg, c, sessions) = with_1000_handles();
            let check = c.clone();
            let d = run_threads(threads, iters, move |iters| counter_inc(&c, iters));
            assert_eq!(check.get(), expect + threads as u64, "exact total");
            drop(sessions); // the handles stayed started throughout
            d
        }
        "counter_macro" => {
            let before = common::counter_site().get();
            let d = run_threads(threads, iters, common::counter_macro_inc);
            let after = common::counter_site().get();
            assert_eq!(after - before, expect + threads as u64, "exact total");
            d
        }
        "aggregate_macro_u64" => {
            let before = common::aggregate_u64_site().get();
            let d = run_threads(threads, iters, common::aggregate_macro_u64_add);
            let after = common::aggregate_u64_site().get();
            assert_eq!(after - before, 3 * expect, "exact total");
            d
        }
        "aggregate_macro_f64" => {
            // Sums of 1.5 stay exact in an f64 below 2^52.
            let before = common::aggregate_f64_site().get();
            let d = run_threads(threads, iters, common::aggregate_macro_f64_add);
            let after = common::aggregate_f64_site().get();
            assert_eq!(after - before, 1.5 * expect as f64, "exact total");
            d
        }
        "level_macro" => {
            let before = common::level_site().get();
            let d = run_threads(threads, iters, common::level_macro_inc_dec);
            let after = common::level_site().get();
            assert_eq!(after, before, "exact total: inc/dec pairs");
            d
        }
        "watermark_macro_0h" => run_threads(threads, iters, common::high_watermark_macro_update),
        _ => unreachable!("unknown case {case}"),
    }
}

fn measure_timer(case: &str, threads: usize, iters: u64) -> Duration {
    match case {
        "quanta_pair" => {
            let clock = quanta::Clock::new();
            clock.raw();
            run_threads(threads, iters, move |iters| quanta_pair(&clock, iters))
        }
        "instant_pair" => run_threads(threads, iters, instant_pair),
        "timer_start_stop" => {
            let reg = pvar::Registry::new();
            let t = reg.timer("section").register().unwrap();
            run_threads(threads, iters, move |iters| timer_start_stop(&t, iters))
        }
        "timer_scoped" => {
            let reg = pvar::Registry::new();
            let t = reg.timer("section").register().unwrap();
            run_threads(threads, iters, move |iters| {
                drop(t.scoped());
                timed(iters, || drop(opaque(&t).scoped()))
            })
        }
        _ => unreachable!("unknown case {case}"),
    }
}

/// One criterion group: every case on every thread count, as
/// `<group>/<case>/<threads>`.
fn group(
    c: &mut Criterion,
    name: &str,
    cases: &[&'static str],
    measure: fn(&str, usize, u64) -> Duration,
) {
    let mut group = c.benchmark_group(name);
    quick(&mut group);
    for t in thread_counts() {
        for &case in cases {
            group.bench_with_input(BenchmarkId::new(case, t), &t, |b, &t| {
                b.iter_custom(|iters| measure(case, t, iters))
            });
        }
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    group(c, "update", &UPDATE_CASES, measure_update);
    group(c, "timer", &TIMER_CASES, measure_timer);
}

fn report_lost() {
    let lost = LOST.lock().unwrap();
    let mut json = String::from("{");
    println!("\nracy_global (relaxed load + store on one shared u64): updates lost");
    for (k, (t, (l, e))) in lost.iter().enumerate() {
        let pct = if *e == 0 {
            0.0
        } else {
            100.0 * *l as f64 / *e as f64
        };
        println!("  {t} thread(s): {l} of {e} ({pct:.2}%)");
        if k > 0 {
            json.push(',');
        }
        json += &format!("\"{t}\":{{\"lost\":{l},\"expected\":{e}}}");
    }
    json.push('}');
    common::side_output("racy.json", &json);
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
    if common::benchmarking() {
        report_lost();
    }
}
