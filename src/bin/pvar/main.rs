//! `pvar`: the command-line program — the demo, the variable list, and the
//! overhead report.

mod bench;
mod demo;
mod list;

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    // Die quietly on a closed pipe (`pvar list | head`) like other Unix
    // tools, instead of panicking on the failed write.
    // SAFETY: called first thing in `main`, before any other thread exists;
    // SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::List(args) => list::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pvar: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
