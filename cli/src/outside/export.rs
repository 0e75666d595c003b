//! `pvar export <pid>`: one snapshot of another process, as OpenMetrics
//! text (the library's writer, [`pvar::export::openmetrics`]) or as the
//! JSON of `pvar read --json` — for scripts, cron jobs and the Prometheus
//! node exporter's textfile collector.

use super::{Res, json};

/// Output formats of `pvar export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OpenMetrics text, ending with `# EOF` (what `pvar serve` answers).
    Openmetrics,
    /// The JSON of `pvar read --json` (schema `pvar.snapshot.v1`).
    Json,
}

/// Options of `pvar export`.
#[derive(clap::Args)]
pub struct Args {
    /// The process to read (it must export: `PVAR_EXPORT=1`, or
    /// `pvar demo`).
    #[arg(value_name = "PID")]
    pid: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Openmetrics)]
    format: Format,
    /// Wait (up to 5 s) for a snapshot taken after this call.
    #[arg(long)]
    fresh: bool,
}

/// Runs `pvar export`.
pub fn run(args: Args) -> Res<()> {
    let mut region = super::open(args.pid)?;
    let snap = super::read(&mut region, args.pid, args.fresh)?;
    match args.format {
        Format::Openmetrics => print!("{}", pvar::export::openmetrics::write(&snap)),
        Format::Json => println!("{}", json::to_string(&snap)),
    }
    Ok(())
}
