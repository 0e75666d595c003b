//! `pvar bench`: what variables cost on this machine, next to baselines
//! measured in the same run, in well under 20 seconds.
//!
//! Every case is a simple timing loop (`Instant` around `iters` calls, each
//! passing its object through an empty `asm!` block, see `loops`), run on
//! 1 thread and on all threads (threads spawned per run and lined up on a
//! barrier; each times its own loop; a run's time is the slowest thread's), the median of
//! several runs. Figures are nanoseconds per operation per thread; ratios
//! are to the plain thread-local `+= 1` and to a shared
//! `AtomicU64::fetch_add` with the same thread count. For the tool-side
//! read, "threads" is the number of registered threads (that updated the
//! variable, then wait) while one thread reads.
//!
//! Each update row also has a floor: the baseline whose loop has the row's
//! shape with a plain thread-local in place of the variable (`loops`; the
//! shapes can be compared with `scripts/bench-shapes.sh`). prometheus and
//! metrics-rs counters are measured in the same run, so their ratios are
//! this host's. For the full comparison (handles, memory, criterion) run
//! `scripts/bench.sh`.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use serde::Serialize;

mod loops;

use loops::{Body, Padded, run_body, set_cpu_clock};

/// Options of `pvar bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Print the results as JSON on stdout (progress still goes to stderr).
    #[arg(long)]
    json: bool,
    /// Thread count of the "all threads" column, 1 to 256 (default:
    /// available parallelism).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
    /// Runs per case and thread count, 1 to 1000; the median is reported.
    #[arg(long, default_value_t = 9, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    runs: u16,
    /// Target duration of one run, in milliseconds (1 to 60000).
    #[arg(long, default_value_t = 15, value_name = "MS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    run_ms: u64,
    /// Time loops with each thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`)
    /// instead of wall time: leaves out time slices lost to other
    /// processes on a busy machine.
    #[arg(long)]
    cpu_time: bool,
}

/// What a case measures with a given thread count.
enum Plan {
    /// Run `Body` on every thread.
    Parallel(Body),
    /// Run `Body` on one thread while the others stay registered (keeps
    /// the guard alive during the runs).
    Single { body: Body, _keep: Box<dyn Send> },
}

struct Case {
    key: &'static str,
    label: &'static str,
    group: &'static str,
    /// The key of the case whose loop has this one's shape with a plain
    /// thread-local in place of the variable (itself for a floor), or ""
    /// (a tool-side read: no update floor means anything).
    floor: &'static str,
    /// Builds the plan for a thread count (fresh variables each time).
    make: fn(usize) -> Plan,
}

fn body(f: impl Fn(u64) -> Duration + Send + Sync + 'static) -> Plan {
    Plan::Parallel(Arc::new(f))
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            key: "thread_local",
            label: "thread-local `+= 1`",
            group: "baseline",
            floor: "thread_local",
            make: |_| body(loops::thread_local_inc),
        },
        Case {
            key: "thread_local_f64",
            label: "thread-local f64 `+= 1.5`",
            group: "baseline",
            floor: "thread_local_f64",
            make: |_| body(loops::thread_local_f64_add),
        },
        Case {
            key: "thread_local_clobber",
            label: "thread-local `+= 1`, fixed address",
            group: "baseline",
            floor: "thread_local_clobber",
            make: |_| body(loops::thread_local_clobber_inc),
        },
        Case {
            key: "thread_local_add",
            label: "thread-local `+= n`",
            group: "baseline",
            floor: "thread_local_add",
            make: |_| body(loops::thread_local_add),
        },
        Case {
            key: "thread_local_clobber_add",
            label: "thread-local `+= n`, fixed address",
            group: "baseline",
            floor: "thread_local_clobber_add",
            make: |_| body(loops::thread_local_clobber_add),
        },
        Case {
            key: "thread_local_inc_dec",
            label: "thread-local `+= 1; -= 1`",
            group: "baseline",
            floor: "thread_local_inc_dec",
            make: |_| body(loops::thread_local_inc_dec),
        },
        Case {
            key: "thread_local_clobber_inc_dec",
            label: "thread-local `+= 1; -= 1`, fixed address",
            group: "baseline",
            floor: "thread_local_clobber_inc_dec",
            make: |_| body(loops::thread_local_clobber_inc_dec),
        },
        Case {
            key: "thread_local_clobber_f64",
            label: "thread-local f64 `+= 1.5`, fixed address",
            group: "baseline",
            floor: "thread_local_clobber_f64",
            make: |_| body(loops::thread_local_clobber_f64_add),
        },
        Case {
            key: "atomic_shared",
            label: "shared AtomicU64::fetch_add",
            group: "baseline",
            floor: "atomic_shared",
            make: |_| {
                let a = Arc::new(Padded(AtomicU64::new(0)));
                body(move |iters| loops::atomic_inc(&a.0, iters))
            },
        },
        Case {
            key: "counter",
            label: "COUNTER inc",
            group: "update",
            floor: "thread_local",
            make: |_| {
                let c = pvar::Registry::new().counter("c").register().unwrap();
                body(move |iters| loops::counter_inc(&c, iters))
            },
        },
        Case {
            key: "local_counter",
            label: "COUNTER inc, thread-bound handle",
            group: "update",
            floor: "thread_local_clobber",
            make: |_| {
                let c = pvar::Registry::new().counter("c").register().unwrap();
                body(move |iters| loops::local_counter_inc(&c, iters))
            },
        },
        Case {
            key: "aggregate_u64",
            label: "AGGREGATE<u64> add",
            group: "update",
            floor: "thread_local_add",
            make: |_| {
                let reg = pvar::Registry::new();
                let a = reg.aggregate::<u64>("a").register().unwrap();
                body(move |iters| loops::aggregate_add(&a, 3, iters))
            },
        },
        Case {
            key: "aggregate_f64",
            label: "AGGREGATE<f64> add",
            group: "update",
            floor: "thread_local_f64",
            make: |_| {
                let reg = pvar::Registry::new();
                let a = reg.aggregate::<f64>("a").register().unwrap();
                body(move |iters| loops::aggregate_add(&a, 1.5, iters))
            },
        },
        Case {
            key: "level",
            label: "LEVEL inc/dec",
            group: "update",
            floor: "thread_local_inc_dec",
            make: |_| {
                let l = pvar::Registry::new().level::<u64>("l").register().unwrap();
                body(move |iters| loops::level_inc_dec(&l, iters))
            },
        },
        Case {
            key: "watermark_0h",
            label: "HIGHWATERMARK update, no handle",
            group: "update",
            floor: "thread_local",
            make: |_| {
                let reg = pvar::Registry::new();
                let w = reg.high_watermark::<u64>("w").register().unwrap();
                body(move |iters| loops::watermark_update(&w, iters))
            },
        },
        Case {
            key: "watermark_1h",
            label: "HIGHWATERMARK update, 1 started handle",
            group: "update",
            floor: "thread_local",
            make: |_| {
                let reg = pvar::Registry::new();
                let w = reg.high_watermark::<u64>("w").register().unwrap();
                let tool = reg.tool();
                let s = tool.session_create().unwrap();
                let (h, _) = tool.handle_alloc(s, w.index(), None).unwrap();
                tool.start(s, h).unwrap();
                body(move |iters| {
                    let _keep = &reg;
                    loops::watermark_update(&w, iters)
                })
            },
        },
        Case {
            key: "watermark_16h",
            label: "HIGHWATERMARK update, 16 started handles",
            group: "update",
            floor: "thread_local",
            make: |_| {
                let reg = pvar::Registry::new();
                let w = reg.high_watermark::<u64>("w").register().unwrap();
                let tool = reg.tool();
                let s = tool.session_create().unwrap();
                for _ in 0..16 {
                    let (h, _) = tool.handle_alloc(s, w.index(), None).unwrap();
                    tool.start(s, h).unwrap();
                }
                body(move |iters| {
                    let _keep = &reg;
                    loops::watermark_update(&w, iters)
                })
            },
        },
        Case {
            key: "counter_macro",
            label: "COUNTER inc, `counter!` use site",
            group: "use site (macro)",
            floor: "thread_local_clobber",
            make: |_| body(loops::counter_macro_inc),
        },
        Case {
            key: "aggregate_macro_u64",
            label: "AGGREGATE<u64> add, `aggregate!`",
            group: "use site (macro)",
            floor: "thread_local_clobber_add",
            make: |_| body(loops::aggregate_macro_u64_add),
        },
        Case {
            key: "aggregate_macro_f64",
            label: "AGGREGATE<f64> add, `aggregate!`",
            group: "use site (macro)",
            floor: "thread_local_clobber_f64",
            make: |_| body(loops::aggregate_macro_f64_add),
        },
        Case {
            key: "level_macro",
            label: "LEVEL inc/dec, `level!`",
            group: "use site (macro)",
            floor: "thread_local_clobber_inc_dec",
            make: |_| body(loops::level_macro_inc_dec),
        },
        Case {
            key: "watermark_macro_0h",
            label: "HIGHWATERMARK update, `high_watermark!`",
            group: "use site (macro)",
            floor: "thread_local_clobber",
            make: |_| body(loops::high_watermark_macro_update),
        },
        Case {
            key: "prometheus",
            label: "prometheus IntCounter inc (shared)",
            group: "other libraries, on this host",
            floor: "thread_local",
            make: |_| {
                let c = prometheus::IntCounter::new("bench_total", "pvar bench").unwrap();
                body(move |iters| loops::prometheus_inc(&c, iters))
            },
        },
        Case {
            key: "metrics",
            label: "metrics-rs Counter increment (shared)",
            group: "other libraries, on this host",
            floor: "thread_local",
            make: |_| {
                let c = metrics::Counter::from_arc(Arc::new(AtomicU64::new(0)));
                body(move |iters| loops::metrics_inc(&c, iters))
            },
        },
        Case {
            key: "event_0cb",
            label: "event raise, no callback",
            group: "event",
            floor: "thread_local",
            make: |_| {
                let s = Arc::new(loops::event_setup(false));
                body(move |iters| loops::event_raise(&s, iters))
            },
        },
        Case {
            key: "event_1cb",
            label: "event raise, 1 callback",
            group: "event",
            floor: "thread_local",
            make: |_| {
                let s = Arc::new(loops::event_setup(true));
                body(move |iters| loops::event_raise(&s, iters))
            },
        },
        Case {
            key: "quanta_pair",
            label: "raw quanta tick pair",
            group: "timer",
            floor: "quanta_pair",
            make: |_| {
                let clock = quanta::Clock::new();
                body(move |iters| loops::quanta_pair(&clock, iters))
            },
        },
        Case {
            key: "instant_pair",
            label: "std Instant pair",
            group: "timer",
            floor: "instant_pair",
            make: |_| body(loops::instant_pair),
        },
        Case {
            key: "timer",
            label: "TIMER start+stop",
            group: "timer",
            floor: "quanta_pair",
            make: |_| {
                let t = pvar::Registry::new().timer("t").register().unwrap();
                body(move |iters| loops::timer_start_stop(&t, iters))
            },
        },
        Case {
            key: "read",
            label: "read one handle (tool)",
            group: "read",
            floor: "",
            make: |threads| {
                let loops::ReadSetup {
                    session,
                    handle,
                    parked,
                } = loops::read_setup(threads);
                let read: Body = Arc::new(move |iters| loops::read_handle(&session, handle, iters));
                Plan::Single {
                    body: read,
                    _keep: Box::new(parked),
                }
            },
        },
    ]
}

/// One run of `iters` iterations of `plan` on `threads` threads.
fn run_once(plan: &Plan, threads: usize, iters: u64) -> Duration {
    match plan {
        Plan::Parallel(b) => run_body(b, threads, iters),
        Plan::Single { body, .. } => body(iters),
    }
}

/// The iteration count for a run of about `run`: grows until a run takes
/// at least `run / 4`, then scales.
fn calibrate(plan: &Plan, threads: usize, run: Duration) -> u64 {
    let mut iters = 1_000u64;
    loop {
        let d = run_once(plan, threads, iters);
        if d >= run / 4 || iters >= 1 << 34 {
            let scale = run.as_secs_f64() / d.as_secs_f64().max(1e-9);
            return ((iters as f64 * scale) as u64).max(1);
        }
        iters *= 4;
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[derive(Serialize)]
struct Row {
    key: &'static str,
    label: &'static str,
    group: &'static str,
    /// ns per operation per thread, by thread count (same order as
    /// `Report::threads`).
    ns: Vec<f64>,
    /// The key of the row whose loop has this row's shape with a plain
    /// thread-local in place of the variable (`loops`); "" for none.
    floor: &'static str,
    /// Ratio to `floor`'s row with the same thread count (empty for none).
    vs_floor: Vec<f64>,
    /// Ratio to `thread_local` with the same thread count.
    vs_thread_local: Vec<f64>,
    /// Ratio to `atomic_shared` with the same thread count.
    vs_atomic: Vec<f64>,
}

#[derive(Serialize)]
struct Report {
    cpus: usize,
    threads: Vec<usize>,
    runs: usize,
    /// "wall" or "thread-cpu".
    clock: &'static str,
    /// 1-minute load average when the run ended (Linux), if known.
    load: Option<f64>,
    unit: &'static str,
    rows: Vec<Row>,
    /// TIMER start+stop / raw quanta pair, by thread count.
    timer_vs_quanta: Vec<f64>,
    /// TIMER start+stop / Instant pair, by thread count.
    timer_vs_instant: Vec<f64>,
    /// AGGREGATE<f64> add (handle) / thread-local f64 `+=`, by thread count.
    aggregate_f64_vs_thread_local_f64: Vec<f64>,
    /// `aggregate!(…: f64)` add / thread-local f64 `+=`, by thread count.
    aggregate_macro_f64_vs_thread_local_f64: Vec<f64>,
    /// prometheus `IntCounter::inc` / `counter!` inc, by thread count: as
    /// measured on this host (it moves with the host's cost of a contended
    /// atomic add).
    prometheus_vs_counter_macro: Vec<f64>,
    /// metrics-rs `Counter::increment` / `counter!` inc, by thread count.
    metrics_vs_counter_macro: Vec<f64>,
    /// Read cost per extra registered thread (ns), from the two columns.
    read_ns_per_thread: Option<f64>,
    seconds: f64,
}

struct Progress {
    tty: bool,
    total: usize,
    done: usize,
}

impl Progress {
    fn step(&mut self, what: &str, threads: usize) {
        self.done += 1;
        let line = format!(
            "pvar bench [{:>2}/{}] {what}, {threads} thread{}",
            self.done,
            self.total,
            if threads == 1 { "" } else { "s" }
        );
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Runs `pvar bench`.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let began = Instant::now();
    set_cpu_clock(args.cpu_time);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all = args.threads.map_or(cpus, usize::from);
    let mut threads = vec![1, all];
    threads.dedup();
    let run = Duration::from_millis(args.run_ms);
    let cases = cases();
    let mut progress = Progress {
        tty: std::io::stderr().is_terminal(),
        total: (cases.len() + usize::from(args.runs)) * threads.len(),
        done: 0,
    };
    // Calibrate the clocks before timing anything.
    drop(pvar::Registry::new());

    // Per thread count: build every case, calibrate each, then take the
    // runs round-robin (run r of every case, then run r + 1), so that a
    // burst of load from other processes hits all cases alike and the
    // ratios stay meaningful on a busy machine.
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for &t in &threads {
        let plans: Vec<Plan> = cases.iter().map(|c| (c.make)(t)).collect();
        let iters: Vec<u64> = cases
            .iter()
            .zip(&plans)
            .map(|(c, p)| {
                progress.step(&format!("calibrating {}", c.label), t);
                calibrate(p, t, run)
            })
            .collect();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
        for r in 0..usize::from(args.runs) {
            progress.step(&format!("run {}/{}", r + 1, args.runs), t);
            for (k, p) in plans.iter().enumerate() {
                let d = run_once(p, t, iters[k]);
                samples[k].push(d.as_secs_f64() * 1e9 / iters[k] as f64);
            }
        }
        for (k, v) in samples.into_iter().enumerate() {
            ns[k].push(median(v));
        }
    }
    progress.finish();

    let col = |key: &str| -> Vec<f64> {
        cases
            .iter()
            .position(|c| c.key == key)
            .map(|k| ns[k].clone())
            .unwrap_or_default()
    };
    let (tl, at) = (col("thread_local"), col("atomic_shared"));
    let ratio = |a: &[f64], b: &[f64]| -> Vec<f64> {
        a.iter().zip(b).map(|(x, y)| x / y.max(1e-12)).collect()
    };
    let rows: Vec<Row> = cases
        .iter()
        .zip(&ns)
        .map(|(c, v)| Row {
            key: c.key,
            label: c.label,
            group: c.group,
            ns: v.clone(),
            floor: c.floor,
            vs_floor: if c.floor.is_empty() {
                Vec::new()
            } else {
                ratio(v, &col(c.floor))
            },
            vs_thread_local: ratio(v, &tl),
            vs_atomic: ratio(v, &at),
        })
        .collect();
    let read = col("read");
    let report = Report {
        cpus,
        threads: threads.clone(),
        runs: usize::from(args.runs),
        clock: if args.cpu_time { "thread-cpu" } else { "wall" },
        load: load_average(),
        unit: "ns per operation per thread (median)",
        timer_vs_quanta: ratio(&col("timer"), &col("quanta_pair")),
        timer_vs_instant: ratio(&col("timer"), &col("instant_pair")),
        aggregate_f64_vs_thread_local_f64: ratio(&col("aggregate_f64"), &col("thread_local_f64")),
        aggregate_macro_f64_vs_thread_local_f64: ratio(
            &col("aggregate_macro_f64"),
            &col("thread_local_f64"),
        ),
        prometheus_vs_counter_macro: ratio(&col("prometheus"), &col("counter_macro")),
        metrics_vs_counter_macro: ratio(&col("metrics"), &col("counter_macro")),
        read_ns_per_thread: (threads.len() == 2)
            .then(|| (read[1] - read[0]) / (threads[1] - threads[0]) as f64),
        rows,
        seconds: began.elapsed().as_secs_f64(),
    };

    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &Report) {
    let mut out = String::new();
    out += &format!(
        "pvar bench: {} CPU(s), ns per operation per thread, median of {} runs, {} clock\n",
        r.cpus, r.runs, r.clock
    );
    out += "ratios, same thread count: ×floor = / the row's floor (the baseline whose loop has the row's\n\
            shape with a thread-local in place of the variable: [a] [b] ... below), ×atomic = / shared fetch_add\n\n";
    let mark = |key: &str| -> String {
        r.rows
            .iter()
            .filter(|x| x.group == "baseline" && x.key != "atomic_shared")
            .position(|x| x.key == key)
            .map(|k| format!("[{}]", (b'a' + k as u8) as char))
            .unwrap_or_default()
    };
    let mut head = format!("{:<48}", "operation");
    for &t in &r.threads {
        let th = format!("{t} thread{}", if t == 1 { "" } else { "s" });
        head += &format!(" {th:>10} {:>7} {:>7}", "×floor", "×atomic");
    }
    out += &head;
    out.push('\n');
    let mut group = "";
    for row in &r.rows {
        if row.group != group {
            group = row.group;
            out += &format!("{group}\n");
        }
        let floor = if row.group == "baseline" || row.floor.is_empty() {
            String::new()
        } else {
            format!(" {}", mark(row.floor))
        };
        let name = if row.group == "baseline" && row.key != "atomic_shared" {
            format!("{} {}", mark(row.key), row.label)
        } else {
            format!("{}{floor}", row.label)
        };
        let mut line = format!("  {name:<46}");
        for k in 0..r.threads.len() {
            // Ratios of a tool-side read to update baselines mean nothing.
            let (tl, at) = if row.group == "read" {
                ("-".to_string(), "-".to_string())
            } else {
                (
                    row.vs_floor
                        .get(k)
                        .map_or("-".to_string(), |x| format!("{x:.2}")),
                    format!("{:.2}", row.vs_atomic[k]),
                )
            };
            line += &format!(" {:>10} {tl:>7} {at:>7}", fmt_ns(row.ns[k]));
        }
        out += &line;
        out.push('\n');
    }
    out.push('\n');
    let list = |v: &[f64]| {
        v.iter()
            .zip(&r.threads)
            .map(|(x, t)| format!("{x:.2}× ({t}t)"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out += &format!(
        "TIMER start+stop vs raw quanta pair: {}; vs Instant pair: {}\n",
        list(&r.timer_vs_quanta),
        list(&r.timer_vs_instant)
    );
    out += &format!(
        "AGGREGATE<f64> add vs thread-local f64 `+= 1.5` (the float add's latency): handle {}; `aggregate!` {}\n",
        list(&r.aggregate_f64_vs_thread_local_f64),
        list(&r.aggregate_macro_f64_vs_thread_local_f64)
    );
    out += &format!(
        "on this host, prometheus / `counter!`: {}; metrics-rs / `counter!`: {} (a shared atomic add's cost, which varies by host)\n",
        list(&r.prometheus_vs_counter_macro),
        list(&r.metrics_vs_counter_macro)
    );
    match r.read_ns_per_thread {
        Some(per) if per >= 0.0 => {
            out += &format!("read: ≈ {per:.1} ns per registered thread (from the two columns)\n");
        }
        // The two columns differ by less than their noise: a negative
        // slope means nothing, so say so rather than print it.
        Some(_) => out += "read: the per-thread cost is below this run's noise\n",
        None => {}
    }
    if let Some(load) = r.load.filter(|&l| l > r.cpus as f64 * 0.75) {
        out += &format!(
            "note: load average {load:.1} on {} CPU(s): other processes took time slices{}\n",
            r.cpus,
            if r.clock == "wall" {
                "; --cpu-time leaves them out"
            } else {
                " (left out by the CPU-time clock; contention may be under-represented)"
            }
        );
    }
    out += &format!(
        "({:.1} s; the read row's threads are registered threads, one reader. Full suite: scripts/bench.sh)\n",
        r.seconds
    );
    print!("{out}");
}

/// The 1-minute load average from `/proc/loadavg` (Linux only).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn fmt_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2} ns")
    } else if ns < 1000.0 {
        format!("{ns:.1} ns")
    } else {
        format!("{:.2} µs", ns / 1000.0)
    }
}
