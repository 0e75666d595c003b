//! What a COUNTER update costs, next to the alternatives, on 1 and 2
//! threads, in one run (`cargo bench --bench counter`).
//!
//! Cases (every one does one update of a 64-bit count per iteration):
//!
//! - `thread_local`: a plain `thread_local!` `Cell<u64>` `+= 1`: the
//!   physical limit, and the baseline of the ratios;
//! - `atomic_owned`: `AtomicU64::fetch_add` on an atomic owned by the
//!   thread (its own cache line): the cost of the locked instruction alone;
//! - `atomic_shared`: `AtomicU64::fetch_add` on one atomic shared by all
//!   threads: what a naive global counter costs (cache-line ping-pong);
//! - `pvar_counter`: [`pvar::Counter::inc`];
//! - `pvar_local`: [`pvar::LocalCounter::inc`] (`counter.local(0)`, fetched
//!   once per thread).
//!
//! Every iteration passes the updated object through `black_box`, whose
//! memory clobber forces the compiler to really load and store the value
//! on each iteration (no hoisting, no merging of increments) for every
//! case alike.
//!
//! Each sample starts its threads (1 or 2), lines them up on a barrier,
//! and each thread times its own `iters` updates; the sample's time is the
//! slowest thread's. So the reported time is **per update per thread**:
//! flat from 1 to 2 threads means no contention.
//!
//! After the criterion run, summary tables print each case's time and its
//! ratio to `thread_local` with the same thread count: criterion's
//! estimate; criterion's fastest sample; and a short interleaved pass (every
//! case once per round, best round kept), whose ratios hold up best when the
//! machine is shared with other work, since every case sees the same load.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion};

mod common;
#[path = "common/criterion_results.rs"]
mod criterion_results;

const THREADS: [usize; 2] = [1, 2];
const CASES: [&str; 5] = [
    "thread_local",
    "atomic_owned",
    "atomic_shared",
    "pvar_counter",
    "pvar_local",
];
const GROUP: &str = "counter_update";

fn measure(case: &str, threads: usize, iters: u64) -> Duration {
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "atomic_owned" => common::atomic_owned_case(threads, iters),
        "atomic_shared" => common::atomic_shared_case(threads, iters),
        "pvar_counter" => common::counter_case(threads, iters),
        "pvar_local" => common::local_counter_case(threads, iters),
        _ => unreachable!("unknown case {case}"),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for threads in THREADS {
        for case in CASES {
            group.bench_with_input(BenchmarkId::new(case, threads), &threads, |b, &t| {
                b.iter_custom(|iters| measure(case, t, iters))
            });
        }
    }
    group.finish();
}

/// Criterion's point estimate (ns per update per thread) of `case` on
/// `threads` threads.
fn estimate_ns(case: &str, threads: usize) -> Option<f64> {
    criterion_results::estimate_ns(GROUP, case, &threads.to_string())
}

/// Criterion's fastest sample (ns per update per thread) of `case` on
/// `threads` threads.
fn best_sample_ns(case: &str, threads: usize) -> Option<f64> {
    criterion_results::best_sample_ns(GROUP, case, &threads.to_string())
}

/// Rounds and updates per thread of the interleaved pass.
const ROUNDS: usize = 15;
const ROUND_ITERS: u64 = 5_000_000;

/// Every case once per round, rounds interleaved, keeping each case's
/// fastest round: all cases see the same background load, so the ratios
/// hold up on a machine shared with other work. About 2 s.
fn interleaved_best_ns() -> Vec<(&'static str, usize, f64)> {
    let mut best: Vec<(&'static str, usize, f64)> = THREADS
        .iter()
        .flat_map(|&t| CASES.iter().map(move |&c| (c, t, f64::INFINITY)))
        .collect();
    for _ in 0..ROUNDS {
        for (case, t, min) in best.iter_mut() {
            let ns = measure(case, *t, ROUND_ITERS).as_nanos() as f64 / ROUND_ITERS as f64;
            *min = min.min(ns);
        }
    }
    best
}

fn print_table(what: &str, ns_of: &dyn Fn(&str, usize) -> Option<f64>) {
    println!("\nper update per thread ({what}), ratio to thread_local:");
    println!(
        "{:<15} {:>10} {:>8} {:>10} {:>8}",
        "case", "1 thread", "ratio", "2 threads", "ratio"
    );
    let base: Vec<Option<f64>> = THREADS.iter().map(|&t| ns_of(CASES[0], t)).collect();
    for case in CASES {
        let mut line = format!("{case:<15}");
        for (k, &t) in THREADS.iter().enumerate() {
            match (ns_of(case, t), base[k]) {
                (Some(ns), Some(b)) => {
                    line += &format!(" {:>8.3}ns {:>7.2}x", ns, ns / b);
                }
                _ => line += &format!(" {:>10} {:>8}", "n/a", ""),
            }
        }
        println!("{line}");
    }
}

fn summary() {
    print_table("criterion estimate", &estimate_ns);
    print_table("criterion, best sample", &best_sample_ns);
    let best = interleaved_best_ns();
    print_table(
        &format!("interleaved, best of {ROUNDS} rounds of {ROUND_ITERS}"),
        &|case, t| {
            best.iter()
                .find(|(c, n, _)| *c == case && *n == t)
                .map(|b| b.2)
        },
    );
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
    // `cargo test --benches` runs this binary in test mode: no estimates.
    if !std::env::args().any(|a| a == "--test" || a == "--list") {
        summary();
    }
}
