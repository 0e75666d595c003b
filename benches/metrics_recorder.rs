//! `metrics::Counter::increment(1)` through `pvar::recorder` next to a
//! recorder backed by an `AtomicU64` (what `metrics-util`'s registry hands
//! out), on 1 and 2 threads, with a thread-local `+= 1` baseline in the
//! same run (`cargo bench --features metrics --bench metrics_recorder`).
//!
//! Group `metrics_counter` — one update per iteration:
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | a plain `thread_local!` `Cell<u64>` `+= 1` (the ratios' baseline) |
//! | `atomic_recorder` | a held `metrics::Counter` from a recorder whose counter is one `AtomicU64` shared by the threads: `increment(1)` is a dynamic call to `fetch_add` |
//! | `pvar_recorder` | a held `metrics::Counter` from [`pvar::recorder::PvarRecorder`]: a dynamic call to [`pvar::Counter::add`] |
//! | `pvar_counter` | [`pvar::Counter::add`]`(1)` called directly (what the dynamic call wraps) |
//! | `pvar_recorder_macro` | `metrics::counter!("…").increment(1)` every iteration, handle not held: the recorder's lookup (a mutex and a hash) each time |
//!
//! As in `alternatives`: every iteration passes the handle through
//! `opaque` (the macro case, whose key is a constant, through `clobber`), threads are spawned per sample and lined up on a barrier,
//! each times its own loop and the sample's time is the slowest thread's
//! (so estimates are per update per thread); the pvar and atomic cases
//! check the exact total. After a real run (`--bench`) the ratios to
//! `thread_local` are printed from criterion's medians.

#[path = "common/atomic_recorder.rs"]
mod atomic_recorder;
mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use atomic_recorder::AtomicRecorder;
use common::{clobber, opaque, quick, run_threads, timed};
use criterion::{BenchmarkId, Criterion};
use pvar::recorder::PvarRecorder;

const GROUP: &str = "metrics_counter";
const CASES: [&str; 5] = [
    "thread_local",
    "atomic_recorder",
    "pvar_recorder",
    "pvar_counter",
    "pvar_recorder_macro",
];
const THREADS: [usize; 2] = [1, 2];

/// The total of counter `name` of the recorder's registry.
fn pvar_total(rec: &PvarRecorder, name: &str) -> u64 {
    rec.registry()
        .counter(name)
        .category(rec.category())
        .register()
        .unwrap()
        .get()
}

fn measure(case: &str, threads: usize, iters: u64) -> Duration {
    let expect = threads as u64 * iters;
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "atomic_recorder" => {
            let cell = Arc::new(AtomicU64::new(0));
            let rec = AtomicRecorder(cell.clone());
            let c = metrics::with_local_recorder(&rec, || metrics::counter!("bench_total"));
            let d = run_threads(threads, iters, move |iters| {
                timed(iters, || opaque(&c).increment(1))
            });
            assert_eq!(cell.load(Ordering::Relaxed), expect, "exact total");
            d
        }
        "pvar_recorder" => {
            let rec = PvarRecorder::new(&pvar::Registry::new());
            let c = metrics::with_local_recorder(&rec, || metrics::counter!("bench_total"));
            let d = run_threads(threads, iters, move |iters| {
                c.increment(0); // the thread's first touch: its cell
                timed(iters, || opaque(&c).increment(1))
            });
            assert_eq!(pvar_total(&rec, "bench_total"), expect, "exact total");
            d
        }
        "pvar_counter" => {
            let reg = pvar::Registry::new();
            let c = reg.counter("bench_total").register().unwrap();
            let check = c.clone();
            let d = run_threads(threads, iters, move |iters| {
                c.add(0);
                timed(iters, || opaque(&c).add(1))
            });
            assert_eq!(check.get(), expect, "exact total");
            d
        }
        "pvar_recorder_macro" => {
            let rec = Arc::new(PvarRecorder::new(&pvar::Registry::new()));
            let shared = rec.clone();
            let d = run_threads(threads, iters, move |iters| {
                metrics::with_local_recorder(&*shared, || {
                    metrics::counter!("bench_macro").increment(0);
                    timed(iters, || {
                        clobber();
                        metrics::counter!("bench_macro").increment(1)
                    })
                })
            });
            assert_eq!(pvar_total(&rec, "bench_macro"), expect, "exact total");
            d
        }
        other => unreachable!("unknown case {other}"),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    quick(&mut group);
    for t in THREADS {
        for case in CASES {
            group.bench_with_input(BenchmarkId::new(case, t), &t, |b, &t| {
                b.iter_custom(|iters| measure(case, t, iters))
            });
        }
    }
    group.finish();
}

/// Criterion's output directory, found as criterion finds it (without
/// asking `cargo metadata`: the workspace's `target/` otherwise).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// The median (ns per update per thread) of one case, from criterion's
/// `estimates.json`.
fn median_ns(case: &str, threads: usize) -> Option<f64> {
    let path = criterion_dir()
        .join(GROUP)
        .join(case)
        .join(threads.to_string())
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let rest = &text[text.find("\"median\"")?..];
    let rest = &rest[rest.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = rest.find([',', '}'])?;
    rest[..end].trim().parse().ok()
}

/// Prints each case's median and its ratio to `thread_local`, per thread
/// count (and writes them to `$PVAR_BENCH_OUT/metrics_recorder.json`).
fn report_ratios() {
    println!("\n{GROUP}: median ns per update per thread (ratio to thread_local)");
    let mut json = String::from("{");
    for (k, t) in THREADS.into_iter().enumerate() {
        let Some(base) = median_ns("thread_local", t) else {
            println!("  no criterion results for {t} thread(s)");
            continue;
        };
        println!("  {t} thread(s):");
        if k > 0 {
            json.push(',');
        }
        json += &format!("\"{t}\":{{");
        for (i, case) in CASES.into_iter().enumerate() {
            if let Some(ns) = median_ns(case, t) {
                let ratio = ns / base;
                println!("    {case:<20} {ns:>8.2} ns  {ratio:>6.1}x");
                if i > 0 {
                    json.push(',');
                }
                json += &format!("\"{case}\":{{\"ns\":{ns:.3},\"ratio\":{ratio:.3}}}");
            }
        }
        json.push('}');
    }
    json.push('}');
    common::side_output("metrics_recorder.json", &json);
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
    if common::benchmarking() {
        report_ratios();
    }
}
