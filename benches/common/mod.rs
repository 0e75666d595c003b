//! Helpers shared by the benches (`alternatives`, `counter`, `events`,
//! `tool`, `compile_out`, `memory`): the timed loops, clock and thread fan-out of
//! `pvar bench` (its `loops` module, included by path), the thread
//! counts, criterion settings, the cases `alternatives` and `counter` both
//! run, and the side-output directory that `scripts/bench.sh` reads.
//! Two more files here are included by path by the benches that need
//! them: `criterion_results.rs` (reading criterion's saved estimates, for
//! ratios from the same run) and `atomic_recorder.rs` (a `metrics`
//! recorder backed by `AtomicU64`s, the baseline of the recorder benches).

#![allow(dead_code)] // each bench uses a subset

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};

#[path = "../../cli/src/bench/loops.rs"]
mod loops;

pub use loops::*;

/// 1, 2 and `nproc` updating threads (deduplicated, in order).
pub fn thread_counts() -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut v = vec![1, 2, n];
    v.sort_unstable();
    v.dedup();
    v
}

/// Quick settings: the whole suite runs in a few minutes.
pub fn quick(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
}

/// Runs `body(iters)` on `threads` threads spawned together and lined up
/// on a barrier; each thread times its own loop; returns the slowest
/// thread's time. So a criterion estimate is *per operation per thread*:
/// flat from 1 to n threads means no contention.
pub fn run_threads<F>(threads: usize, iters: u64, body: F) -> Duration
where
    F: Fn(u64) -> Duration + Send + Sync + 'static,
{
    run_body(&(Arc::new(body) as Body), threads, iters)
}

/// Whether this run is a real benchmark run (`cargo bench`), not
/// `cargo test --benches` (criterion's test mode) or `--list`.
pub fn benchmarking() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}

/// Where side outputs (lost counts, memory figures) go: `$PVAR_BENCH_OUT`
/// if set (scripts/bench.sh sets it), else nowhere.
pub fn side_output(name: &str, json: &str) {
    if let Some(dir) = std::env::var_os("PVAR_BENCH_OUT") {
        let dir = PathBuf::from(dir);
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, json) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}

/// A criterion instance with the command line applied, and the clock of
/// the timed loops selected: wall time (`Instant`, the default) or, with
/// `PVAR_BENCH_CLOCK=cpu`, the calling thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time slices a thread
/// loses to other processes on a shared, oversubscribed machine. Call it
/// before anything is timed.
pub fn criterion() -> Criterion {
    set_cpu_clock(std::env::var("PVAR_BENCH_CLOCK").is_ok_and(|v| v == "cpu"));
    Criterion::default().configure_from_args()
}

// The cases `alternatives` (group `update`) and `counter` both run: each
// returns the slowest of `threads` threads' time for `iters` updates; the
// pvar cases check the exact total.

/// A plain `thread_local!` `Cell<u64>` `+= 1`.
pub fn thread_local_case(threads: usize, iters: u64) -> Duration {
    run_threads(threads, iters, thread_local_inc)
}

/// `AtomicU64::fetch_add` on an atomic private to each thread (own cache
/// lines).
pub fn atomic_owned_case(threads: usize, iters: u64) -> Duration {
    run_threads(threads, iters, |iters| {
        let a = Padded(AtomicU64::new(0));
        atomic_inc(&a.0, iters)
    })
}

/// `AtomicU64::fetch_add` on one atomic shared by all threads.
pub fn atomic_shared_case(threads: usize, iters: u64) -> Duration {
    let shared = Arc::new(Padded(AtomicU64::new(0)));
    run_threads(threads, iters, move |iters| atomic_inc(&shared.0, iters))
}

/// [`pvar::Counter::inc`].
pub fn counter_case(threads: usize, iters: u64) -> Duration {
    let reg = pvar::Registry::new();
    let c = reg.counter("bench_counter").register().unwrap();
    let check = c.clone();
    let d = run_threads(threads, iters, move |iters| counter_inc(&c, iters));
    assert_eq!(check.get(), threads as u64 * (iters + 1), "exact total");
    d
}

/// [`pvar::LocalCounter::inc`] (`counter.local(0)` fetched once per thread).
pub fn local_counter_case(threads: usize, iters: u64) -> Duration {
    let reg = pvar::Registry::new();
    let c = reg.counter("bench_local").register().unwrap();
    let check = c.clone();
    let d = run_threads(threads, iters, move |iters| local_counter_inc(&c, iters));
    assert_eq!(check.get(), threads as u64 * iters, "exact total");
    d
}
