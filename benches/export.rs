//! What exporting costs (`pvar::export`), in one run
//! (`cargo bench --bench export`).
//!
//! Group `export_update` — the update path with the exporter off and on
//! (the requirement: update costs unchanged with export on). Every case
//! updates one variable of a registry that also holds 999 other counters
//! (so each publish reads ~1,000 variables, as a real component's
//! registry would), once per iteration, on 1 and 2 threads, in three
//! modes: `off` (no exporter), `on10` (an [`Exporter`] on the same
//! registry publishing every 10 ms, to make any interference visible) and
//! `on200` (the default interval, 200 ms). The region goes to a temporary
//! directory. Bench ids are `<case>_<mode>/<threads>`.
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | a plain `thread_local!` `Cell<u64>` `+= 1`: the baseline of the ratios; with export on, what the exporter thread alone takes from the updating threads (it touches nothing they touch) |
//! | `counter` | [`pvar::Counter::inc`] (shared handle) |
//! | `local_counter` | [`pvar::LocalCounter::inc`] (`counter.local(0)`, thread-bound) |
//! | `counter_macro` | `pvar::counter!("…").inc()`: a use site (global registry, the exporter on it) |
//! | `level_inc_dec` | `Level<u64>`: an `inc` then a `dec` per loop pass (figures per update) |
//! | `watermark` | `HighWatermark<u64>::update(i & 63)`: with export on, the observer's mark reaches 63 within the first 64 updates, after which no update is a new maximum (steady state) |
//! | `watermark_rising` | `HighWatermark<u64>::update(v)` with `v` rising on every update (each thread: `base + 2i + k`): with export on every update is a new maximum and walks the marks (the observer's subscription) |
//! | `watermark_rising_1h` | the same with one started tool handle on the watermark in every mode: what one subscription costs without export (the reference of `watermark_rising_on*`) |
//!
//! Group `export_read` — what the outside read costs, for `N` counters
//! (100 and 1,000) touched by `T` threads (1, 2, 8; spawned together, each
//! updates every counter once, then they exit: their records persist and
//! are summed by every read). Bench ids are `<what>/<N>x<T>`:
//!
//! | what | |
//! |---|---|
//! | `snapshot` | [`Observer::snapshot`] (kept across iterations, as the exporter does): metadata copied and every cell summed over the thread records |
//! | `encode` | [`wire::encode`] of that snapshot into a cleared buffer |
//! | `checksum` | `pvar::export::testing::checksum` of the encoded payload: the writer computes it once per publish, the reader once per read |
//! | `publish` | [`Exporter::publish_now`]: snapshot + encode + checksum + `pwrite` to the region (what the exporter thread does per interval) |
//! | `read_payload` | the reader: [`Region::read_payload`] (header, `pread` of the slot, checksum) on a region file of this process |
//! | `read` | [`pvar::export::read`]: `read_payload` + [`wire::decode`] |
//!
//! After the criterion run, tables print (a) the update costs with their
//! ratios on/off and to `thread_local` (criterion's estimate); (b) an
//! interleaved pass: `ROUNDS` rounds, each running every case in every
//! mode for about 60 ms (the order of the modes rotating from round to
//! round), with each round's on/off ratio kept: the median and the range
//! of the ratios show the spread on a shared machine; (c) the read costs
//! per variable and per variable per thread record; (d) the exporter
//! thread's CPU time, measured from `/proc/self/task/<tid>/schedstat` over
//! a few seconds of publishing a 1,000-variable registry, at 200 ms and
//! 10 ms: CPU per publish and share of one core. Also printed: an
//! observer's first snapshot of 1,000 watermarks (it subscribes to each)
//! next to its later ones and to 1,000 counters.
//!
//! The update loops are the `counter` and `alternatives` benches' (`opaque`
//! on each iteration; threads lined up on a barrier, each timing its own
//! loop, the sample's time the slowest thread's: per update per thread).
//! They use wall time unless `PVAR_BENCH_CLOCK=cpu`; wall time is the
//! right clock here, since time slices the exporter thread takes from an
//! updating thread are part of what export costs it. Warm-up and
//! measurement times come from the command line, e.g.
//! `cargo bench --bench export -- --warm-up-time 1 --measurement-time 3`.
//! `PVAR_EXPORT_BENCH_ROUNDS` sets the rounds of the interleaved pass
//! (default 5).

mod common;
#[path = "common/criterion_results.rs"]
mod criterion_results;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Body, counter_inc, level_inc_dec, local_counter_inc, opaque, timed_i};
use criterion::{BenchmarkId, Criterion};
use criterion_results::{best_sample_ns, estimate_ns};
use pvar::export::{ExportOptions, Exporter, Observer, Region, wire};

const THREADS: [usize; 2] = [1, 2];
const UPDATE_GROUP: &str = "export_update";
const READ_GROUP: &str = "export_read";

const UPDATE_CASES: [&str; 8] = [
    "thread_local",
    "counter",
    "local_counter",
    "counter_macro",
    "level_inc_dec",
    "watermark",
    "watermark_rising",
    "watermark_rising_1h",
];

/// Other counters in the registry of the update cases.
const FILLER: usize = 999;

/// Variables and thread counts of the read cases.
const READ_VARS: [usize; 2] = [100, 1000];
const READ_THREADS: [usize; 3] = [1, 2, 8];
const READ_WHAT: [&str; 6] = [
    "snapshot",
    "encode",
    "checksum",
    "publish",
    "read_payload",
    "read",
];

/// An interval no publish is due in during a run: the exporter of the read
/// cases publishes only at start and on `publish_now`.
const NEVER: Duration = Duration::from_secs(3600);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Off,
    On10,
    On200,
}

const MODES: [Mode; 3] = [Mode::Off, Mode::On10, Mode::On200];

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::On10 => "on10",
            Mode::On200 => "on200",
        }
    }

    fn interval(self) -> Option<Duration> {
        match self {
            Mode::Off => None,
            Mode::On10 => Some(Duration::from_millis(10)),
            Mode::On200 => Some(pvar::export::DEFAULT_INTERVAL),
        }
    }
}

/// The directory of the bench's regions (removed at the end).
fn region_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pvar-export-bench.{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the region directory");
    dir
}

fn start_exporter(reg: &pvar::Registry, interval: Duration) -> Exporter {
    Exporter::start(
        reg,
        ExportOptions {
            interval,
            dir: region_dir(),
            ..ExportOptions::default()
        },
    )
    .expect("start the exporter")
}

fn register_fillers(reg: &pvar::Registry, prefix: &str) {
    for k in 0..FILLER {
        reg.counter(&format!("{prefix}_{k}")).register().unwrap();
    }
}

/// The global registry's other counters (once per process: names are
/// unique there).
fn global_fillers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| register_fillers(pvar::global(), "bench_export_global_filler"));
}

/// One update case in one mode: its per-thread loop, the exporter if on,
/// and what the case checks after each run.
struct UpdateEnv {
    body: Body,
    /// Before a run: the variable's total, to check its growth.
    total: Option<Box<dyn Fn() -> u64 + Send + Sync>>,
    /// The growth of the total per run of `threads` × `iters`.
    expect: fn(usize, u64) -> u64,
    /// Watermark rising: the next run's first value.
    rising: Option<Arc<AtomicU64>>,
    exporter: Option<Exporter>,
    /// The tool session of `watermark_rising_1h` (its handle started).
    _session: Option<pvar::Session>,
}

impl UpdateEnv {
    fn new(case: &str, mode: Mode) -> UpdateEnv {
        let reg = if case == "counter_macro" {
            global_fillers();
            // Registers the use site's variable before the first snapshot.
            common::counter_site().get();
            pvar::global().clone()
        } else {
            let reg = pvar::Registry::new();
            register_fillers(&reg, "filler");
            reg
        };
        let mut total: Option<Box<dyn Fn() -> u64 + Send + Sync>> = None;
        let mut expect: fn(usize, u64) -> u64 = |_, _| 0;
        let mut rising = None;
        let mut session = None;
        let body: Body = match case {
            "thread_local" => Arc::new(common::thread_local_inc),
            "counter" => {
                let c = reg.counter("measured").register().unwrap();
                let check = c.clone();
                total = Some(Box::new(move || check.get()));
                expect = |t, iters| t as u64 * (iters + 1);
                Arc::new(move |iters| counter_inc(&c, iters))
            }
            "local_counter" => {
                let c = reg.counter("measured").register().unwrap();
                let check = c.clone();
                total = Some(Box::new(move || check.get()));
                expect = |t, iters| t as u64 * iters;
                Arc::new(move |iters| local_counter_inc(&c, iters))
            }
            "counter_macro" => {
                total = Some(Box::new(|| common::counter_site().get()));
                expect = |t, iters| t as u64 * (iters + 1);
                Arc::new(common::counter_macro_inc)
            }
            "level_inc_dec" => {
                let l = reg.level::<u64>("measured").register().unwrap();
                Arc::new(move |iters| level_inc_dec(&l, iters))
            }
            "watermark" => {
                let w = reg.high_watermark::<u64>("measured").register().unwrap();
                Arc::new(move |iters| timed_i(iters, |i| opaque(&w).update(i & 63)))
            }
            "watermark_rising" | "watermark_rising_1h" => {
                let w = reg.high_watermark::<u64>("measured").register().unwrap();
                if case == "watermark_rising_1h" {
                    let s = reg.session().unwrap();
                    let (tool, id) = (s.tool(), s.id());
                    let (h, _) = tool.handle_alloc(id, w.index(), None).unwrap();
                    tool.start(id, h).unwrap();
                    session = Some(s);
                }
                let base = Arc::new(AtomicU64::new(1));
                let ticket = Arc::new(AtomicU64::new(0));
                rising = Some(base.clone());
                Arc::new(move |iters| {
                    let from =
                        base.load(Ordering::Relaxed) + (ticket.fetch_add(1, Ordering::Relaxed) & 1);
                    timed_i(iters, |i| opaque(&w).update(from + 2 * i))
                })
            }
            _ => unreachable!("unknown case {case}"),
        };
        let exporter = mode.interval().map(|i| start_exporter(&reg, i));
        UpdateEnv {
            body,
            total,
            expect,
            rising,
            exporter,
            _session: session,
        }
    }

    fn run(&self, threads: usize, iters: u64) -> Duration {
        let before = self.total.as_ref().map(|t| t());
        let d = common::run_body(&self.body, threads, iters);
        if let (Some(total), Some(before)) = (&self.total, before) {
            assert_eq!(
                total() - before,
                (self.expect)(threads, iters),
                "exact total"
            );
        }
        if let Some(base) = &self.rising {
            base.fetch_add(2 * iters + 2, Ordering::Relaxed);
        }
        d
    }
}

impl Drop for UpdateEnv {
    fn drop(&mut self) {
        if let Some(e) = &self.exporter {
            assert_eq!(e.failures(), 0, "publishes failed");
        }
    }
}

/// A registry of `vars` counters, each incremented once by each of
/// `threads` threads (exited), all alive together: `threads` distinct ids
/// and thread records.
fn touched_counters(vars: usize, threads: usize) -> pvar::Registry {
    let reg = pvar::Registry::new();
    let counters: Arc<Vec<pvar::Counter>> = Arc::new(
        (0..vars)
            .map(|k| reg.counter(&format!("var_{k}")).register().unwrap())
            .collect(),
    );
    let barrier = Arc::new(std::sync::Barrier::new(threads));
    let joins: Vec<_> = (0..threads)
        .map(|_| {
            let (counters, barrier) = (counters.clone(), barrier.clone());
            std::thread::spawn(move || {
                counters.iter().for_each(pvar::Counter::inc);
                barrier.wait();
            })
        })
        .collect();
    joins.into_iter().for_each(|j| j.join().unwrap());
    reg
}

/// One read case: `vars` counters touched by `threads` threads (exited),
/// the exporter (publishing only when asked), an observer, a snapshot and
/// the region opened for reading.
struct ReadEnv {
    reg: pvar::Registry,
    exporter: Exporter,
    observer: Observer,
    snapshot: pvar::export::Snapshot,
    region: Region,
}

impl ReadEnv {
    fn new(vars: usize, threads: usize) -> ReadEnv {
        let reg = touched_counters(vars, threads);
        let exporter = start_exporter(&reg, NEVER);
        let mut observer = Observer::new(&reg);
        let snapshot = observer.snapshot();
        assert_eq!(snapshot.variables.len(), vars);
        let total: u64 = snapshot
            .variables
            .iter()
            .map(|v| v.values[0].to_bits())
            .sum();
        assert_eq!(total, (vars * threads) as u64, "every touch counted");
        let region = Region::open_path(exporter.path(), std::process::id()).expect("open region");
        ReadEnv {
            reg,
            exporter,
            observer,
            snapshot,
            region,
        }
    }
}

fn update_group(c: &mut Criterion) {
    let mut group = c.benchmark_group(UPDATE_GROUP);
    // Warm-up and measurement times: criterion's, or the command line's.
    group.sample_size(10);
    for threads in THREADS {
        for case in UPDATE_CASES {
            for mode in MODES {
                let env = UpdateEnv::new(case, mode);
                group.bench_with_input(
                    BenchmarkId::new(format!("{case}_{}", mode.name()), threads),
                    &threads,
                    |b, &t| b.iter_custom(|iters| env.run(t, iters)),
                );
            }
        }
    }
    group.finish();
}

/// Per read case: variables, threads, thread records, payload bytes.
static RECORDS: Mutex<Vec<(usize, usize, usize, u64)>> = Mutex::new(Vec::new());

fn read_group(c: &mut Criterion) {
    let mut group = c.benchmark_group(READ_GROUP);
    group.sample_size(10);
    for vars in READ_VARS {
        for threads in READ_THREADS {
            let mut env = ReadEnv::new(vars, threads);
            let id = |what: &str| BenchmarkId::new(what, format!("{vars}x{threads}"));
            group.bench_function(id("snapshot"), |b| b.iter(|| env.observer.snapshot()));
            let mut buf = Vec::new();
            group.bench_function(id("encode"), |b| {
                b.iter(|| {
                    buf.clear();
                    wire::encode(&env.snapshot, &mut buf);
                    buf.len()
                })
            });
            buf.clear();
            wire::encode(&env.snapshot, &mut buf);
            group.bench_function(id("checksum"), |b| {
                b.iter(|| pvar::export::testing::checksum(&buf))
            });
            group.bench_function(id("publish"), |b| b.iter(|| env.exporter.publish_now()));
            group.bench_function(id("read_payload"), |b| {
                b.iter(|| env.region.read_payload().unwrap())
            });
            group.bench_function(id("read"), |b| {
                b.iter(|| pvar::export::read(&mut env.region).unwrap())
            });
            RECORDS.lock().unwrap().push((
                vars,
                threads,
                env.reg.pvars().thread_records(),
                env.exporter.last_bytes(),
            ));
        }
    }
    group.finish();
}

// ---------------------------------------------------------------------------
// Summary tables (after the criterion run).

fn update_ns(case: &str, mode: Mode, threads: usize) -> Option<f64> {
    estimate_ns(
        UPDATE_GROUP,
        &format!("{case}_{}", mode.name()),
        &threads.to_string(),
    )
}

fn fmt_ns(ns: Option<f64>) -> String {
    ns.map_or("n/a".into(), |ns| format!("{ns:.3}"))
}

fn fmt_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "n/a".into(),
    }
}

fn print_update_table() {
    println!(
        "\nupdate per thread, criterion estimate (ns); ratios on/off and to thread_local (off):"
    );
    println!(
        "{:<17} {:>2} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "case", "T", "off", "on10", "on200", "on10/off", "on200/of", "off/tl", "on10/tl"
    );
    for threads in THREADS {
        let tl = update_ns("thread_local", Mode::Off, threads);
        for case in UPDATE_CASES {
            let [off, on10, on200] = MODES.map(|m| update_ns(case, m, threads));
            println!(
                "{case:<17} {threads:>2} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}",
                fmt_ns(off),
                fmt_ns(on10),
                fmt_ns(on200),
                fmt_ratio(on10, off),
                fmt_ratio(on200, off),
                fmt_ratio(off, tl),
                fmt_ratio(on10, tl),
            );
        }
    }
}

/// Time per measurement of the interleaved pass.
const ROUND_TARGET: Duration = Duration::from_millis(60);

fn rounds() -> usize {
    std::env::var("PVAR_EXPORT_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Every (case, threads) in every mode once per round, the modes' order
/// rotating, each in a fresh environment for about `ROUND_TARGET`; prints
/// the best round's ns per mode and the median and range of the rounds'
/// on/off ratios.
fn interleaved_pass() {
    let rounds = rounds();
    // ns[threads][case][mode][round]
    let mut ns = vec![vec![vec![Vec::new(); MODES.len()]; UPDATE_CASES.len()]; THREADS.len()];
    let mut iters_of = vec![vec![[0u64; 3]; UPDATE_CASES.len()]; THREADS.len()];
    for round in 0..rounds {
        for (ti, &threads) in THREADS.iter().enumerate() {
            for (ci, &case) in UPDATE_CASES.iter().enumerate() {
                for k in 0..MODES.len() {
                    let mi = (k + round) % MODES.len();
                    let env = UpdateEnv::new(case, MODES[mi]);
                    let iters = &mut iters_of[ti][ci][mi];
                    if *iters == 0 {
                        let probe = 1_000_000;
                        let d = env.run(threads, probe).as_secs_f64();
                        *iters = ((ROUND_TARGET.as_secs_f64() / d) * probe as f64) as u64;
                        *iters = (*iters).max(probe);
                    }
                    let d = env.run(threads, *iters);
                    ns[ti][ci][mi].push(d.as_nanos() as f64 / *iters as f64);
                }
            }
        }
    }
    println!(
        "\ninterleaved pass: {rounds} rounds of ~{} ms per case and mode, fresh environment each;",
        ROUND_TARGET.as_millis()
    );
    println!(
        "best round (ns per update per thread), and each round's on/off ratio: median [min-max]"
    );
    println!(
        "{:<17} {:>2} {:>8} {:>8} {:>8} {:>22} {:>22} {:>7}",
        "case", "T", "off", "on10", "on200", "on10/off", "on200/off", "off/tl"
    );
    for (ti, &threads) in THREADS.iter().enumerate() {
        let best =
            |ci: usize, mi: usize| ns[ti][ci][mi].iter().copied().fold(f64::INFINITY, f64::min);
        let tl = best(0, 0);
        for (ci, case) in UPDATE_CASES.iter().enumerate() {
            let ratio = |mi: usize| {
                let mut r: Vec<f64> = ns[ti][ci][mi]
                    .iter()
                    .zip(&ns[ti][ci][0])
                    .map(|(on, off)| on / off)
                    .collect();
                let med = median(&mut r);
                format!("{med:.2}x [{:.2}-{:.2}]", r[0], r[r.len() - 1])
            };
            println!(
                "{case:<17} {threads:>2} {:>8.3} {:>8.3} {:>8.3} {:>22} {:>22} {:>6.2}x",
                best(ci, 0),
                best(ci, 1),
                best(ci, 2),
                ratio(1),
                ratio(2),
                best(ci, 0) / tl
            );
        }
    }
}

fn print_read_table() {
    let records = RECORDS.lock().unwrap().clone();
    if records.is_empty() {
        return; // the read group did not run (filtered out)
    }
    println!(
        "\nexport reads (criterion estimate; fastest sample), total and per variable; \
         decode = read - read_payload"
    );
    println!(
        "{:<13} {:>5} {:>2} {:>4} {:>8} {:>11} {:>11} {:>9} {:>9}",
        "what", "N", "T", "recs", "bytes", "est. µs", "best µs", "est/var", "best/var"
    );
    let both = |what: &str, param: &str| -> Option<(f64, f64)> {
        if what == "decode" {
            let (r, rb) = both_ns("read", param)?;
            let (p, pb) = both_ns("read_payload", param)?;
            return Some((r - p, rb - pb));
        }
        both_ns(what, param)
    };
    for what in READ_WHAT.iter().copied().chain(["decode"]) {
        for &(vars, threads, recs, bytes) in &records {
            let Some((est, best)) = both(what, &format!("{vars}x{threads}")) else {
                continue;
            };
            println!(
                "{what:<13} {vars:>5} {threads:>2} {recs:>4} {bytes:>8} {:>11.2} {:>11.2} {:>9.1} {:>9.1}",
                est / 1e3,
                best / 1e3,
                est / vars as f64,
                best / vars as f64
            );
        }
    }
    // The part of a snapshot that grows with the thread records: the slope
    // from the fewest to the most records (fastest samples).
    for vars in READ_VARS {
        let of = |t: usize| {
            let recs = records
                .iter()
                .find(|r| r.0 == vars && r.1 == t)
                .map(|r| r.2)?;
            Some((recs, both_ns("snapshot", &format!("{vars}x{t}"))?.1))
        };
        if let (Some((r1, one)), Some((r8, eight))) = (of(READ_THREADS[0]), of(8))
            && r8 > r1
        {
            println!(
                "snapshot, N={vars}: {:.2} ns per variable at {r1} record(s), \
                 +{:.2} ns per variable per additional thread record ({r1} -> {r8})",
                one / vars as f64,
                (eight - one) / (vars * (r8 - r1)) as f64
            );
        }
    }
}

/// Criterion's estimate and fastest sample (ns) of a read case.
fn both_ns(what: &str, param: &str) -> Option<(f64, f64)> {
    Some((
        estimate_ns(READ_GROUP, what, param)?,
        best_sample_ns(READ_GROUP, what, param)?,
    ))
}

/// A fresh observer's first snapshot and the next one, of a registry of
/// 1,000 counters or 1,000 high watermarks (each updated once by this
/// thread): the first snapshot of a watermark subscribes to it, which
/// starts the subscription with the heavy side of the asymmetric fence
/// (`membarrier`, once per watermark). Best of 3, µs.
fn print_first_snapshot() {
    println!("\nobserver's first snapshot vs the next (1,000 variables, best of 3):");
    for kind in ["counters", "watermarks"] {
        let (mut first, mut next) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            let reg = pvar::Registry::new();
            for k in 0..1000 {
                let name = format!("var_{k}");
                if kind == "counters" {
                    reg.counter(&name).register().unwrap().inc();
                } else {
                    let w = reg.high_watermark::<u64>(&name).register().unwrap();
                    w.update(k);
                }
            }
            let t = Instant::now();
            let mut observer = Observer::new(&reg);
            std::hint::black_box(observer.snapshot());
            first = first.min(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            std::hint::black_box(observer.snapshot());
            next = next.min(t.elapsed().as_secs_f64() * 1e6);
        }
        println!("  1,000 {kind:<10}: first {first:>9.1} µs, next {next:>7.1} µs");
    }
}

/// CPU time (ns) the thread named `name` of this process has run, from
/// `/proc/self/task/<tid>/schedstat` (its first field).
fn thread_cpu_ns(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            return stat.split_whitespace().next()?.parse().ok();
        }
    }
    None
}

/// The exporter thread's CPU time while it publishes a 1,000-counter
/// registry (touched by 2 threads) at `interval` for `window`.
fn exporter_cpu(interval: Duration, window: Duration) -> Option<(f64, f64, u64)> {
    let reg = touched_counters(1000, 2);
    let exporter = start_exporter(&reg, interval);
    // Past the first publishes (buffer growth, first-touch of the file).
    std::thread::sleep(interval * 3);
    let (cpu0, pub0, t0) = (
        thread_cpu_ns("pvar-export")?,
        exporter.published(),
        Instant::now(),
    );
    std::thread::sleep(window);
    let (cpu1, pub1, elapsed) = (
        thread_cpu_ns("pvar-export")?,
        exporter.published(),
        t0.elapsed(),
    );
    let cpu = (cpu1 - cpu0) as f64;
    let publishes = pub1 - pub0;
    Some((
        cpu / publishes.max(1) as f64,
        100.0 * cpu / elapsed.as_nanos() as f64,
        publishes,
    ))
}

fn print_exporter_cpu() {
    println!("\nexporter thread CPU (schedstat), 1,000 counters x 2 thread records:");
    let publish = estimate_ns(READ_GROUP, "publish", "1000x2");
    for (interval, window) in [
        (pvar::export::DEFAULT_INTERVAL, Duration::from_secs(4)),
        (Duration::from_millis(10), Duration::from_secs(2)),
    ] {
        match exporter_cpu(interval, window) {
            Some((per, pct, n)) => {
                let rate = 1e9 / interval.as_nanos() as f64;
                let est =
                    publish.map_or("n/a".into(), |p| format!("{:.3}%", 100.0 * p * rate / 1e9));
                println!(
                    "  interval {:>4} ms: {n} publishes, {:.1} µs CPU each, {pct:.3}% of one core \
                     (criterion publish x rate: {est})",
                    interval.as_millis(),
                    per / 1e3
                );
            }
            None => println!("  interval {} ms: no schedstat", interval.as_millis()),
        }
    }
}

fn main() {
    let mut c = common::criterion();
    update_group(&mut c);
    read_group(&mut c);
    c.final_summary();
    if common::benchmarking() {
        print_update_table();
        interleaved_pass();
        print_read_table();
        print_first_snapshot();
        print_exporter_cpu();
    }
    let _ = std::fs::remove_dir_all(region_dir());
}
