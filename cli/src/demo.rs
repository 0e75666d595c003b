//! `pvar demo`: worker threads exchange messages all-to-all over in-process
//! channels, instrumented with a variable of every class in
//! [`pvar::global`]; a tool with one session shows them live, a `SIGPROF`
//! sampler reads them from its signal handler, and a final report gives
//! totals, rates, watermarks, the per-peer matrix, the sampled timeline and
//! the measured cost of the instrumentation.
//!
//! Unless `--no-export` is given, the demo also exports its registry (see
//! [`pvar::export`]) for the run: `pvar top <pid>`, `pvar read <pid>`,
//! `pvar export <pid>` and `pvar serve <pid>` watch it from another
//! terminal; the header names the command.
//!
//! - `vars`: the component's variables and control variables (shared with
//!   `pvar list`);
//! - `workload`: the hot loop, with and without pvar calls;
//! - `tool`: the session, its handles, snapshots;
//! - `sampler`: the signal-handler sampler;
//! - `view`: the live table; `report`: the final report.

mod report;
mod sampler;
mod tool;
pub mod vars;
mod view;
mod workload;

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use pvar::{CvarValue, Registry};

use report::{CvarValueOut, EventsOut, Inputs, Overhead, RunConfig};
use tool::{DeepListener, Handles, Snapshot};
use view::{Mode, View};
use workload::Config;

/// Options of `pvar demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds the instrumented run lasts, more than 0 and at most 3600
    /// (the overhead measurement adds about half as much again, at most
    /// 2 s).
    #[arg(long, default_value_t = 4.0, value_name = "SECONDS", allow_negative_numbers = true,
          value_parser = parse_duration)]
    duration: f64,
    /// Worker threads, 1 to 8.
    #[arg(long, default_value_t = 4, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u8).range(1..=vars::MAX_THREADS as i64))]
    threads: u8,
    /// Message payload in bytes, 1 to 1048576; written to the
    /// `demo_message_size` control variable through a tool handle
    /// (default: the variable's value, 256 unless `PVAR_DEMO_MESSAGE_SIZE`
    /// says otherwise).
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MESSAGE))]
    message_size: Option<u64>,
    /// Print one JSON document with every figure instead of the live view
    /// and the text report.
    #[arg(long)]
    json: bool,
    /// Do not export the variables. By default the demo publishes them for
    /// the run (in `PVAR_EXPORT_DIR`, default `/dev/shm`, every
    /// `PVAR_EXPORT_INTERVAL_MS`, default 200) so that `pvar top <pid>`
    /// can watch it from another terminal.
    #[arg(long)]
    no_export: bool,
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// SIGPROF period (wall time).
const SAMPLE_INTERVAL: Duration = Duration::from_millis(2);
/// Live view refresh period.
const REFRESH: Duration = Duration::from_millis(250);
/// Largest message the demo accepts.
const MAX_MESSAGE: u64 = 1 << 20;

/// Writes an unsigned control variable as a tool does: by name, through a
/// handle.
fn write_cvar(reg: &Registry, name: &str, value: u64) -> Res<()> {
    let index = reg.cvars().index(name)?;
    let (h, _) = reg.cvars().handle_alloc(index, None)?;
    let r = reg.cvars().write_value(h, &CvarValue::Unsigned(value));
    reg.cvars().handle_free(h)?;
    Ok(r?)
}

fn cvar_out(reg: &Registry, name: &str, value: u64) -> CvarValueOut {
    let from_env = reg
        .cvars()
        .index(name)
        .ok()
        .and_then(|i| reg.cvars().env_source(i).ok().flatten().map(str::to_string));
    CvarValueOut {
        name: name.to_string(),
        value: value.to_string(),
        from_env,
    }
}

/// Starts exporting the global registry for the demo's run; returns the
/// exporter (`None` if the environment's `PVAR_EXPORT` already exports it,
/// or exporting failed) and the header line that says how to watch.
fn start_export(reg: &Registry) -> (Option<pvar::export::Exporter>, String) {
    let options = pvar::export::ExportOptions::with_env();
    let pid = std::process::id();
    let watch = watch_command();
    match pvar::export::Exporter::start(reg, options) {
        Ok(e) => {
            let line = match e.notice() {
                // Another user's file or directory has the name of ours.
                Some(n) => format!(
                    "exporting: {watch} top {pid} (note: {})",
                    crate::format::terminal_safe(n)
                ),
                None => format!("exporting: {watch} top {pid}"),
            };
            (Some(e), line)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            (None, format!("exporting (PVAR_EXPORT): {watch} top {pid}"))
        }
        Err(e) => (None, format!("not exporting: {e}")),
    }
}

/// How to run `pvar` from another terminal, as the header prints it:
/// `pvar` if a `pvar` is on the `PATH` (`cargo install --path cli`);
/// else, run from a cargo build in the current directory's workspace,
/// `cargo run [--release] --`; else this executable's path.
fn watch_command() -> String {
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join("pvar"))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if on_path {
        return "pvar".into();
    }
    let Ok(exe) = std::env::current_exe() else {
        return "pvar".into();
    };
    let profile_dir = exe.parent();
    let target = profile_dir.and_then(|d| d.parent());
    let from_here = std::env::current_dir()
        .ok()
        .zip(target)
        .is_some_and(|(cwd, target)| target == cwd.join("target"));
    match profile_dir
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
    {
        Some("release") if from_here => "cargo run --release --".into(),
        Some("debug") if from_here => "cargo run --".into(),
        _ => exe.display().to_string(),
    }
}

/// Runs the same hot loop without and with pvar calls, alternating, and
/// keeps the best of each. Called after the main run's final snapshot, with
/// the session's handles stopped: the instrumented rounds update the same
/// variables, as a component does while no tool reads.
fn measure_overhead(
    cfg: Config,
    v: &vars::DemoVars,
    round: Duration,
    rounds: usize,
) -> Res<(f64, f64)> {
    let (mut base, mut instr) = (f64::INFINITY, f64::INFINITY);
    for r in 0..rounds {
        for k in 0..2 {
            let on = (r + k) % 2 == 1;
            let stop = AtomicBool::new(false);
            let during = || std::thread::sleep(round);
            if on {
                let st = workload::run::<true>(cfg, v, &stop, during);
                instr = instr.min(st.cpu_ns_per_msg());
            } else {
                let st = workload::run::<false>(cfg, v, &stop, during);
                base = base.min(st.cpu_ns_per_msg());
            }
        }
    }
    Ok((base, instr))
}

/// `--duration`: seconds, in (0, 3600].
fn parse_duration(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if d > 0.0 && d <= 3600.0 {
        Ok(d)
    } else {
        Err(format!("{s} is not in (0, 3600] seconds"))
    }
}

/// Runs `pvar demo`.
pub fn run(args: Args) -> Res<()> {
    let threads = usize::from(args.threads);
    let duration = args.duration;

    // The tool interface, the component's variables, the tool's cvar write.
    let (_provided, guard) = pvar::process::init_thread(pvar::THREAD_MULTIPLE)?;
    let reg: &'static Registry = guard.registry();
    let v = vars::register(threads)?;
    if let Some(size) = args.message_size {
        write_cvar(reg, vars::MESSAGE_SIZE.name(), size)?;
    }
    let message_size = vars::MESSAGE_SIZE.get().min(MAX_MESSAGE);
    let eager_limit = vars::EAGER_LIMIT.get();
    let window = vars::EAGER_WINDOW.get().clamp(1, 1024);
    let eager = Config::eager(message_size, eager_limit);
    let cfg = Config {
        threads,
        message_size: message_size as usize,
        burst: if eager { window as usize } else { 1 },
        queue_cap: Config::queue_cap(message_size),
        deep_threshold: Config::deep_threshold(Config::queue_cap(message_size)),
    };
    v.msg_size.set(message_size);
    // Exported from here on (every variable is registered), until the end
    // of the run.
    let (exporter, export_line) = if args.no_export {
        (None, None)
    } else {
        let (e, line) = start_export(reg);
        (e, Some(line))
    };

    // One session with a handle per variable, started before the run.
    let session = reg.session()?;
    let handles = Handles::alloc(reg, &session)?;
    // An MPI 4 event listener, found by name as any tool would.
    let listener = DeepListener::attach(reg)?;
    session.start_all()?;
    sampler::start(reg, handles.keys, SAMPLE_INTERVAL)?;

    let mode = if args.json {
        Mode::Quiet
    } else if std::io::stdout().is_terminal() {
        Mode::Terminal
    } else {
        Mode::Plain
    };
    if let Some(line) = &export_line {
        // Standard output holds nothing but the JSON document with --json.
        if mode == Mode::Quiet {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    let mut view = View::new(mode, cfg, duration);
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    // The tool thread: snapshots of the session's handles, shown live,
    // until the run's time is up (then the workers are stopped).
    let tool = |view: &mut View| -> pvar::Result<()> {
        let end = t0 + Duration::from_secs_f64(duration);
        let mut prev = Snapshot::take(&handles, 0.0)?;
        loop {
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep(REFRESH.min(end - now));
            if mode == Mode::Quiet {
                continue;
            }
            let t = t0.elapsed().as_secs_f64().min(duration);
            let cur = Snapshot::take(&handles, t)?;
            view.show(&prev, &cur, sampler::taken(), eager_limit);
            prev = cur;
        }
    };
    let mut tool_result = Ok(());
    let stats = workload::run::<true>(cfg, &v, &stop, || {
        tool_result = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("demo-tool".into())
                .spawn_scoped(s, || tool(&mut view))
                .expect("spawn the tool thread")
                .join()
                .expect("the tool thread panicked")
        });
    });
    let samples = sampler::stop(SAMPLE_INTERVAL);
    tool_result?;
    // Every worker has finished: the final values.
    let fin = Snapshot::take(&handles, stats.elapsed.as_secs_f64())?;
    session.stop_all()?;
    // Every raise of the main run has been delivered or counted as
    // dropped; the overhead rounds below run without a listener.
    let events = EventsOut::new(listener.finish(), stats.deep_raised, cfg.deep_threshold);
    view.finish();

    if mode == Mode::Terminal {
        eprint!("measuring the overhead of instrumentation ...\r");
    }
    let round = Duration::from_secs_f64((duration / 12.0).clamp(0.1, 0.3));
    let rounds = 3;
    let (base, instr) = measure_overhead(cfg, &v, round, rounds)?;
    if mode == Mode::Terminal {
        eprint!("\x1b[2K");
    }

    let report = report::build(Inputs {
        config: RunConfig {
            threads,
            pattern: "all-to-all",
            duration_s: duration,
            elapsed_s: stats.elapsed.as_secs_f64(),
            message_size,
            eager_limit,
            eager_window: window,
            protocol: if eager { "eager" } else { "rendezvous" },
            messages_per_burst: cfg.burst,
            queue_capacity: cfg.queue_cap,
        },
        cvars: vec![
            cvar_out(reg, vars::MESSAGE_SIZE.name(), message_size),
            cvar_out(reg, vars::EAGER_LIMIT.name(), eager_limit),
            cvar_out(reg, vars::EAGER_WINDOW.name(), vars::EAGER_WINDOW.get()),
        ],
        fin: &fin,
        stats,
        samples: &samples,
        events,
        overhead: Overhead {
            baseline_ns_per_msg: base,
            instrumented_ns_per_msg: instr,
            ratio: instr / base,
            main_run_ns_per_msg: stats.cpu_ns_per_msg(),
            main_run_wall_ns_per_msg: stats.ns_per_msg(),
            rounds,
            seconds_per_round: round.as_secs_f64(),
        },
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        report::print_text(&report);
    }
    drop(handles);
    drop(session);
    drop(exporter);
    guard.finalize()?;
    if report.ok {
        Ok(())
    } else {
        Err("a consistency check failed (see the report)".into())
    }
}
