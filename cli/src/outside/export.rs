//! `pvar export <pid>`: one snapshot of another process, as OpenMetrics
//! text or the classic Prometheus text format (the library's writer,
//! [`pvar::export::exposition`]), or as the JSON of `pvar read --json` —
//! for scripts, cron jobs, the Pushgateway and the Prometheus
//! node exporter's textfile collector.

use std::io::{IsTerminal, Write};

use super::{Res, json};
use crate::format::terminal_safe_lines;

/// Output formats of `pvar export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// OpenMetrics text, ending with `# EOF` (what `pvar serve` answers
    /// Prometheus).
    Openmetrics,
    /// The classic Prometheus text format 0.0.4 (for `promtool check
    /// metrics`, the Pushgateway, the node exporter's textfile
    /// collector).
    Prometheus,
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
    use pvar::export::exposition::{self, Format as Text};
    let mut region = super::open(args.pid)?;
    let snap = super::read(&mut region, args.pid, args.fresh)?;
    let out = match args.format {
        Format::Openmetrics => exposition::write(&snap, Text::OpenMetrics),
        Format::Prometheus => exposition::write(&snap, Text::Prometheus),
        Format::Json => json::to_string(&snap) + "\n",
    };
    // The text is exact for a pipe or a file; on a terminal, names and
    // label values from the process are shown with their control
    // characters escaped (they could drive the terminal).
    let mut stdout = std::io::stdout().lock();
    if stdout.is_terminal() {
        stdout.write_all(terminal_safe_lines(&out).as_bytes())?;
    } else {
        stdout.write_all(out.as_bytes())?;
    }
    Ok(())
}
