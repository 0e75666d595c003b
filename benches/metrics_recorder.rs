//! `metrics::Counter::increment(1)` through `pvar::recorder` next to a
//! recorder backed by an `AtomicU64` (what `metrics-util`'s registry hands
//! out); `metrics::Histogram::record` through `pvar::recorder` next to
//! `metrics-exporter-prometheus`'s recorder and the pvar recorder before
//! histograms had buckets; gauge `set` and `increment` before (a LEVEL)
//! and after (a GENERIC); on 1 and 2 threads, with a thread-local `+= 1`
//! baseline in the same run (`cargo bench --features metrics --bench
//! metrics_recorder`).
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
//! Group `metrics_histogram` — one `record(v)` per iteration on a held
//! `metrics::Histogram`, `v` cycling through 16 values spread over the
//! default buckets (the same for every case):
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | the baseline |
//! | `pvar_recorder` | [`pvar::recorder::PvarRecorder`]'s histogram: the bucket (the bounds below the value counted over 16 padded bounds, without branches), `+1` in its per-thread cell, the value added to the per-thread sum |
//! | `pvar_recorder_before` | what it did before it had buckets: `+1` to a count and the value to a sum (both per-thread cells), through the same dynamic call |
//! | `prometheus_exporter` | `metrics-exporter-prometheus` 0.18's recorder with the same buckets (`set_buckets`): its histogram appends the value to a shared lock-free block list, aggregated at scrape time; a fresh recorder per sample (the values are kept until a scrape) |
//!
//! Group `metrics_gauge` — a held `metrics::Gauge`:
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | the baseline |
//! | `set`, `set_before` | `set(x)`: now one store to the GENERIC's shared value; before, a merged read of the LEVEL's per-thread cells and a compare-and-swap |
//! | `increment`, `increment_before` | `increment(1.0)`: now a compare-and-swap loop on the shared value; before, an add to the LEVEL's per-thread cell (which read 0 below zero) |
//! | `prometheus_exporter_set`, `prometheus_exporter_increment` | the same on `metrics-exporter-prometheus`'s gauge (an `AtomicU64`: a store, a compare-and-swap loop) |
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
const HISTOGRAM: &str = "metrics_histogram";
const HISTOGRAM_CASES: [&str; 4] = [
    "thread_local",
    "pvar_recorder",
    "pvar_recorder_before",
    "prometheus_exporter",
];
const GAUGE: &str = "metrics_gauge";
const GAUGE_CASES: [&str; 7] = [
    "thread_local",
    "set",
    "set_before",
    "prometheus_exporter_set",
    "increment",
    "increment_before",
    "prometheus_exporter_increment",
];
const THREADS: [usize; 2] = [1, 2];

/// The values histograms record: 16, over the default buckets.
const VALUES: [f64; 16] = [
    0.001, 0.007, 0.02, 0.04, 0.07, 0.2, 0.3, 0.8, 1.5, 3.0, 7.0, 20.0, 0.004, 0.09, 0.45, 2.0,
];

/// The pvar recorder's histogram before it had buckets: a count and a sum
/// (what `record` did until issue 30).
struct CountAndSum {
    count: pvar::Counter,
    sum: pvar::Aggregate<f64>,
}

impl metrics::HistogramFn for CountAndSum {
    #[inline]
    fn record(&self, value: f64) {
        if value.is_finite() {
            self.count.inc();
            self.sum.add(value);
        }
    }
}

/// The pvar recorder's gauge before it kept its sign: a LEVEL of `f64`.
struct LevelGauge(pvar::Level<f64>);

impl metrics::GaugeFn for LevelGauge {
    #[inline]
    fn increment(&self, value: f64) {
        if value.is_finite() {
            self.0.add(value);
        }
    }
    #[inline]
    fn decrement(&self, value: f64) {
        if value.is_finite() {
            self.0.sub(value);
        }
    }
    #[inline]
    fn set(&self, value: f64) {
        if value.is_finite() {
            self.0.set(value);
        }
    }
}

/// Records `VALUES` in turn on `h`, `iters` times.
fn record_loop(h: &metrics::Histogram, iters: u64) -> Duration {
    let mut i = 0usize;
    timed(iters, || {
        opaque(h).record(VALUES[i & 15]);
        i = i.wrapping_add(1);
    })
}

fn measure_histogram(case: &str, threads: usize, iters: u64) -> Duration {
    let expect = threads as u64 * iters;
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "pvar_recorder" => {
            let rec = PvarRecorder::new(&pvar::Registry::new());
            let h = metrics::with_local_recorder(&rec, || metrics::histogram!("bench"));
            let d = run_threads(threads, iters, move |iters| {
                h.record(1e9); // the thread's first touch: its cells
                record_loop(&h, iters)
            });
            let snap = pvar::export::Snapshot::take(rec.registry());
            let total: f64 = snap
                .variable("bench_bucket")
                .unwrap()
                .values
                .iter()
                .map(|n| n.as_f64())
                .sum();
            assert_eq!(total as u64, expect + threads as u64, "exact count");
            d
        }
        "pvar_recorder_before" => {
            let reg = pvar::Registry::new();
            let h = metrics::Histogram::from_arc(Arc::new(CountAndSum {
                count: reg.counter("bench_count").register().unwrap(),
                sum: reg.aggregate::<f64>("bench_sum").register().unwrap(),
            }));
            let d = run_threads(threads, iters, move |iters| {
                h.record(1e9);
                record_loop(&h, iters)
            });
            let count = reg.counter("bench_count").register().unwrap();
            assert_eq!(count.get(), expect + threads as u64, "exact count");
            d
        }
        "prometheus_exporter" => {
            let rec = metrics_exporter_prometheus::PrometheusBuilder::new()
                .set_buckets(&pvar::recorder::DEFAULT_BUCKETS)
                .unwrap()
                .build_recorder();
            let handle = rec.handle();
            let h = metrics::with_local_recorder(&rec, || metrics::histogram!("bench"));
            let d = run_threads(threads, iters, move |iters| {
                h.record(1e9);
                record_loop(&h, iters)
            });
            let text = handle.render();
            let count = text
                .lines()
                .find_map(|l| l.strip_prefix("bench_count "))
                .and_then(|v| v.trim().parse::<u64>().ok());
            assert_eq!(count, Some(expect + threads as u64), "exact count");
            d
        }
        other => unreachable!("unknown case {other}"),
    }
}

fn measure_gauge(case: &str, threads: usize, iters: u64) -> Duration {
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "set" | "increment" => {
            let rec = PvarRecorder::new(&pvar::Registry::new());
            let g = metrics::with_local_recorder(&rec, || metrics::gauge!("bench"));
            let inc = case == "increment";
            let d = run_threads(threads, iters, move |iters| {
                g.increment(0.0);
                if inc {
                    timed(iters, || opaque(&g).increment(1.0))
                } else {
                    timed(iters, || opaque(&g).set(3.0))
                }
            });
            if inc {
                let v = rec.registry().generic::<f64>("bench").category("metrics");
                assert_eq!(v.register().unwrap().get(), (threads as u64 * iters) as f64);
            }
            d
        }
        "prometheus_exporter_set" | "prometheus_exporter_increment" => {
            let rec = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
            let g = metrics::with_local_recorder(&rec, || metrics::gauge!("bench"));
            let inc = case == "prometheus_exporter_increment";
            run_threads(threads, iters, move |iters| {
                g.increment(0.0);
                if inc {
                    timed(iters, || opaque(&g).increment(1.0))
                } else {
                    timed(iters, || opaque(&g).set(3.0))
                }
            })
        }
        "set_before" | "increment_before" => {
            let reg = pvar::Registry::new();
            let level = reg.level::<f64>("bench").register().unwrap();
            let g = metrics::Gauge::from_arc(Arc::new(LevelGauge(level.clone())));
            let inc = case == "increment_before";
            let d = run_threads(threads, iters, move |iters| {
                g.increment(0.0);
                if inc {
                    timed(iters, || opaque(&g).increment(1.0))
                } else {
                    timed(iters, || opaque(&g).set(3.0))
                }
            });
            if inc {
                assert_eq!(level.get(), (threads as u64 * iters) as f64);
            }
            d
        }
        other => unreachable!("unknown case {other}"),
    }
}

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
    type Measure = fn(&str, usize, u64) -> Duration;
    let groups: [(&str, &[&str], Measure); 3] = [
        (GROUP, &CASES, measure),
        (HISTOGRAM, &HISTOGRAM_CASES, measure_histogram),
        (GAUGE, &GAUGE_CASES, measure_gauge),
    ];
    for (name, cases, f) in groups {
        let mut group = c.benchmark_group(name);
        quick(&mut group);
        for t in THREADS {
            for &case in cases {
                group.bench_with_input(BenchmarkId::new(case, t), &t, |b, &t| {
                    b.iter_custom(|iters| f(case, t, iters))
                });
            }
        }
        group.finish();
    }
}

/// Rounds and updates per thread of the interleaved pass.
const ROUNDS: usize = 9;
const ROUND_ITERS: u64 = 2_000_000;

/// Every case of every group once per round, rounds interleaved; each
/// round's ratio to that round's `thread_local` is kept and the median
/// printed (with the range): all cases see the same load, so the ratios
/// hold on a shared machine.
fn interleaved() {
    type Measure = fn(&str, usize, u64) -> Duration;
    let groups: [(&str, &[&str], Measure); 3] = [
        (GROUP, &CASES, measure),
        (HISTOGRAM, &HISTOGRAM_CASES, measure_histogram),
        (GAUGE, &GAUGE_CASES, measure_gauge),
    ];
    println!(
        "\ninterleaved: {ROUNDS} rounds of {ROUND_ITERS} updates per thread; median [min-max] of each round's ratio to its thread_local"
    );
    for (name, cases, f) in groups {
        for t in THREADS {
            let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
            let mut best = vec![f64::INFINITY; cases.len()];
            for round in 0..ROUNDS {
                let base = common::thread_local_case(t, ROUND_ITERS).as_nanos() as f64
                    / ROUND_ITERS as f64;
                for k in 0..cases.len() {
                    let i = (k + round) % cases.len();
                    let ns = f(cases[i], t, ROUND_ITERS).as_nanos() as f64 / ROUND_ITERS as f64;
                    ratios[i].push(ns / base);
                    best[i] = best[i].min(ns);
                }
            }
            println!("  {name}, {t} thread(s):");
            for (i, case) in cases.iter().enumerate() {
                let r = &mut ratios[i];
                r.sort_by(f64::total_cmp);
                println!(
                    "    {case:<22} best {:>8.2} ns  {:>7.2}x [{:.2}-{:.2}]",
                    best[i],
                    r[r.len() / 2],
                    r[0],
                    r[r.len() - 1]
                );
            }
        }
    }
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
fn median_ns(group: &str, case: &str, threads: usize) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
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
/// count (and writes them to `$PVAR_BENCH_OUT/<group>.json`).
fn report_ratios(group: &str, cases: &[&str]) {
    println!("\n{group}: median ns per update per thread (ratio to thread_local)");
    let mut json = String::from("{");
    for (k, t) in THREADS.into_iter().enumerate() {
        let Some(base) = median_ns(group, "thread_local", t) else {
            println!("  no criterion results for {t} thread(s)");
            continue;
        };
        println!("  {t} thread(s):");
        if k > 0 {
            json.push(',');
        }
        json += &format!("\"{t}\":{{");
        for (i, &case) in cases.iter().enumerate() {
            if let Some(ns) = median_ns(group, case, t) {
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
    common::side_output(&format!("{group}.json"), &json);
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
    if common::benchmarking() {
        report_ratios(GROUP, &CASES);
        report_ratios(HISTOGRAM, &HISTOGRAM_CASES);
        report_ratios(GAUGE, &GAUGE_CASES);
        interleaved();
    }
}
