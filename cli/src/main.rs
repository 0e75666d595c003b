//! `pvar`: the command-line program — the demo, the variable list, the
//! overhead report, the outside view of another process's variables
//! (`read`, `top`, `export`, `serve`: see `outside`), and the cross-rank
//! report of an MPI job drawn as a page or simulated at scale (`report`).

mod bench;
mod demo;
mod format;
mod list;
mod outside;
mod report;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

/// pvar: a lock-free MPI_T performance-variable engine.
#[derive(Parser)]
#[command(name = "pvar", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an instrumented communication hot loop with a live tool view and
    /// a signal sampler, then print a report.
    Demo(demo::Args),
    /// List every variable of the process-wide registry: pvars, cvars,
    /// categories and enumerations.
    List(list::Args),
    /// Measure what variables cost on this machine, next to baselines.
    Bench(bench::Args),
    /// Print one snapshot of another process's variables (a table, or
    /// JSON); without a pid, list the processes of this user that export.
    ///
    /// The process must export its variables: `PVAR_EXPORT=1` in its
    /// environment (for `pvar::global()`), or `pvar::export::Exporter::start`
    /// in its code; `pvar demo` does by default. Regions live in a
    /// directory private to the user inside `PVAR_EXPORT_DIR` (default
    /// `/dev/shm/pvar-<uid>`); only the same user's are read. Exit status 1
    /// if the process has no region, it is refused (another owner, open
    /// permissions), unreadable or stale (the process is gone).
    Read(outside::read::Args),
    /// Watch another process's variables live: values, rates per second,
    /// watermark marks, arrays and bound instances.
    ///
    /// On a terminal: full screen, redrawn every interval. Keys: q or
    /// Ctrl-C quit; s cycles the order (name, value, rate, class); r
    /// reverses it; / edits the name filter (Enter applies, Esc cancels);
    /// c cycles the categories; arrows, PgUp/PgDn, Home/End scroll.
    /// Otherwise (or with --plain): frames of plain text separated by a
    /// line of dashes. Rates are per second between two snapshots of the
    /// process (COUNTER, AGGREGATE, TIMER; a TIMER's in seconds per second,
    /// the busy fraction summed over threads). When the process ends,
    /// prints "process <pid> ended" and exits with status 0.
    Top(outside::top::Args),
    /// Print one snapshot of another process as OpenMetrics text, the
    /// classic Prometheus text format, or the JSON of `pvar read --json`.
    ///
    /// On a terminal, control characters in names and values are shown
    /// escaped; into a pipe or a file the text is exact.
    Export(outside::export::Args),
    /// Serve another process's variables (or, with --all, those of every
    /// process of this user that exports) to Prometheus over HTTP.
    ///
    /// GET /metrics answers the newest snapshot as OpenMetrics or as the
    /// classic text format, as the Accept header asks (Prometheus gets
    /// OpenMetrics, curl the classic format); with a pid, 503 once the
    /// snapshot is older than --max-age (default 5 publishing intervals,
    /// at least 2 s: a stopped process shows as down). Every exposition
    /// carries pvar_export_snapshot_age_seconds. GET / a page pointing to
    /// it; other paths 404, other methods 405, malformed requests 400, a
    /// request head not received within 5 s 408. Connections are served
    /// concurrently (slow clients hold up no scrape), one request per
    /// connection. The first line printed is "listening on
    /// http://ADDR/metrics" with the address actually bound (so --listen
    /// 127.0.0.1:0 picks a free port). With a pid, when the process ends
    /// (checked every 0.5 s and at every scrape), a scrape in progress gets
    /// 503, "process <pid> ended" is printed and the server exits with
    /// status 0. With --all, series carry pid, program and rank labels and
    /// the server runs until stopped.
    Serve(outside::serve::Args),
    /// The cross-rank report of an MPI job: an HTML page of a JSON report
    /// (`html`), or what the report costs at a given number of ranks
    /// (`simulate`).
    Report(report::Args),
}

fn main() -> std::process::ExitCode {
    // Die quietly on a closed pipe (`pvar list | head`) like other Unix
    // tools, instead of panicking on the failed write.
    // SAFETY: called first thing in `main`, before any other thread exists;
    // SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::List(args) => list::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Read(args) => outside::read::run(args),
        Command::Top(args) => outside::top::run(args),
        Command::Export(args) => outside::export::run(args),
        Command::Serve(args) => outside::serve::run(args),
        Command::Report(args) => report::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Messages can carry names from other processes.
            eprintln!("pvar: {}", format::terminal_safe(&e.to_string()));
            std::process::ExitCode::FAILURE
        }
    }
}

/// Exits on a command line clap refused: help and version as clap prints
/// them (status 0); a usage error with clap's message and the usage line
/// of the (sub)command it concerns, status 2, as clap does for the errors
/// whose message carries the usage already.
fn usage_error(e: clap::Error) -> ! {
    let shows_usage = matches!(
        e.kind(),
        ErrorKind::UnknownArgument
            | ErrorKind::MissingRequiredArgument
            | ErrorKind::MissingSubcommand
            | ErrorKind::InvalidSubcommand
            | ErrorKind::ArgumentConflict
            | ErrorKind::NoEquals
    );
    if !e.use_stderr() || shows_usage {
        e.exit();
    }
    let mut cmd = Cli::command();
    cmd.build();
    let sub = std::env::args().nth(1);
    let usage = match sub.as_deref().and_then(|s| cmd.find_subcommand_mut(s)) {
        Some(sub) => sub.render_usage(),
        None => cmd.render_usage(),
    };
    // clap's layout: the message, the usage, the tip.
    let text = e.render().to_string();
    let (message, tip) = text.split_at(text.find("\n\nFor more").unwrap_or(text.len()));
    eprint!("{}\n\n{usage}{tip}", message.trim_end());
    if !tip.ends_with('\n') {
        eprintln!();
    }
    std::process::exit(2);
}
