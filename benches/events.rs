//! What raising an MPI 4 event costs, next to the plain thread-local
//! `+= 1` measured in the same run, on 1, 2 and `nproc` threads
//! (`cargo bench --bench events`).
//!
//! Group `event_raise` — one raise of an `Event<u64>` per iteration:
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | a plain `thread_local!` `Cell<u64>` `+= 1` (the ratios' baseline; the same loop as in `alternatives` and `counter`) |
//! | `event_0cb` | [`pvar::Event::raise`] with no tool callback: one relaxed load of the type's subscriber count and a branch (goal: ≤ 1.5× `thread_local`) |
//! | `event_1cb` | the same with one tool registration whose `ThreadSafe` callback reads the record's element and adds it to a thread-local: the raise timestamps the event (source 0, `CLOCK_MONOTONIC`) and runs the callback on the raising thread |
//!
//! The loops are `event_raise` and `thread_local_inc` of `pvar bench`
//! (`cli/src/bench/loops.rs`): every iteration passes the event handle
//! through `opaque` (an empty `asm!` block taking its address in a
//! register, the crate's `black_box` without a stack store), so each raise
//! really reloads the handle's type pointer and the subscriber count; each
//! thread raises once untimed first. `event_1cb` checks the exact total
//! the callbacks saw; `event_0cb` checks that nothing was delivered.
//!
//! After the criterion run, an interleaved pass (every case once per
//! round, each case's fastest round kept) prints each case's time and its
//! ratio to `thread_local` with the same thread count: all cases see the
//! same background load, so these ratios hold up on a shared machine.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{event_raise, event_setup, quick, run_threads, thread_counts};
use criterion::{BenchmarkId, Criterion};

const CASES: [&str; 3] = ["thread_local", "event_0cb", "event_1cb"];
const GROUP: &str = "event_raise";

/// Runs `iters` raises of a fresh event on `threads` threads and checks
/// what its callback (if any) saw.
fn raise_case(callback: bool, threads: usize, iters: u64) -> Duration {
    let setup = std::sync::Arc::new(event_setup(callback));
    let s = setup.clone();
    let d = run_threads(threads, iters, move |iters| event_raise(&s, iters));
    let seen = setup.seen.load(Ordering::Relaxed);
    let expect = if callback {
        threads as u64 * (iters + 1)
    } else {
        0
    };
    assert_eq!(seen, expect, "exact total seen by the callback");
    d
}

fn measure(case: &str, threads: usize, iters: u64) -> Duration {
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "event_0cb" => raise_case(false, threads, iters),
        "event_1cb" => raise_case(true, threads, iters),
        _ => unreachable!("unknown case {case}"),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    quick(&mut group);
    for t in thread_counts() {
        for case in CASES {
            group.bench_with_input(BenchmarkId::new(case, t), &t, |b, &t| {
                b.iter_custom(|iters| measure(case, t, iters))
            });
        }
    }
    group.finish();
}

/// Rounds of the interleaved pass, and raises per thread in each.
const ROUNDS: usize = 15;
const ROUND_ITERS: u64 = 2_000_000;

/// Every case once per round, rounds interleaved, keeping each case's
/// fastest round (ns per raise per thread), then a table of the ratios to
/// `thread_local` with the same thread count.
fn summary() {
    let threads = thread_counts();
    let mut best = vec![f64::INFINITY; threads.len() * CASES.len()];
    for _ in 0..ROUNDS {
        for (k, &t) in threads.iter().enumerate() {
            for (j, case) in CASES.iter().enumerate() {
                // The callback case costs some 250× more: fewer raises keep a
                // round short.
                let iters = if *case == "event_1cb" {
                    ROUND_ITERS / 64
                } else {
                    ROUND_ITERS
                };
                let ns = measure(case, t, iters).as_nanos() as f64 / iters as f64;
                let b = &mut best[k * CASES.len() + j];
                *b = b.min(ns);
            }
        }
    }
    println!(
        "\nper raise per thread (interleaved, best of {ROUNDS} rounds), ratio to thread_local:"
    );
    let mut head = format!("{:<14}", "case");
    for &t in &threads {
        head += &format!(
            " {:>12} {:>8}",
            format!("{t} thread{}", if t == 1 { "" } else { "s" }),
            "ratio"
        );
    }
    println!("{head}");
    for (j, case) in CASES.iter().enumerate() {
        let mut line = format!("{case:<14}");
        for k in 0..threads.len() {
            let ns = best[k * CASES.len() + j];
            let base = best[k * CASES.len()];
            line += &format!(" {:>10.3}ns {:>7.2}x", ns, ns / base);
        }
        println!("{line}");
    }
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
    if common::benchmarking() {
        summary();
    }
}
