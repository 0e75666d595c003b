//! `pvar`: the command-line program — the demo, the variable list, and the
//! overhead report.

mod bench;
mod demo;
mod list;

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
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pvar: {e}");
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
