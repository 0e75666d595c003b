//! Helpers shared by the comparison benches (`alternatives`, `tool`,
//! `compile_out`, `memory`): thread fan-out with a barrier, timed loops,
//! the thread counts, criterion settings and the side-output directory
//! that `scripts/bench.sh` reads.

#![allow(dead_code)] // each bench uses a subset

use std::path::PathBuf;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};

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
    let body = Arc::new(body);
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let body = body.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                body(iters)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("bench thread panicked"))
        .max()
        .unwrap_or_default()
}

/// Which clock the timed loops read: wall time (`Instant`, the default)
/// or, with `PVAR_BENCH_CLOCK=cpu`, the calling thread's CPU time
/// (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time slices a thread
/// loses to other processes on a shared, oversubscribed machine.
pub fn cpu_clock() -> bool {
    static MODE: OnceLock<bool> = OnceLock::new();
    *MODE.get_or_init(|| std::env::var("PVAR_BENCH_CLOCK").is_ok_and(|v| v == "cpu"))
}

/// A start stamp of the selected clock.
#[derive(Clone, Copy)]
pub enum Stamp {
    Wall(Instant),
    Cpu(Duration),
}

fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Stamp {
    #[inline(always)]
    pub fn now() -> Self {
        if cpu_clock() {
            Stamp::Cpu(thread_cpu_time())
        } else {
            Stamp::Wall(Instant::now())
        }
    }

    #[inline(always)]
    pub fn elapsed(self) -> Duration {
        match self {
            Stamp::Wall(i) => i.elapsed(),
            Stamp::Cpu(c) => thread_cpu_time().saturating_sub(c),
        }
    }
}

/// Times `iters` calls of `op` on the calling thread.
#[inline(always)]
pub fn timed(iters: u64, mut op: impl FnMut()) -> Duration {
    let start = Stamp::now();
    for _ in 0..iters {
        op();
    }
    start.elapsed()
}

/// Times `iters` calls of `op(i)` on the calling thread.
#[inline(always)]
pub fn timed_i(iters: u64, mut op: impl FnMut(u64)) -> Duration {
    let start = Stamp::now();
    for i in 0..iters {
        op(i);
    }
    start.elapsed()
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

/// A criterion instance with the command line applied.
pub fn criterion() -> Criterion {
    Criterion::default().configure_from_args()
}

/// An atomic alone on its cache lines (two, for the adjacent-line
/// prefetcher).
#[repr(align(128))]
pub struct Padded<T>(pub T);
