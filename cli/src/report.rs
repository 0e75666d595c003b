//! `pvar report`: the cross-rank report of an MPI job, after the job.
//!
//! - `pvar report html REPORT.json` draws a `pvar.report.v2` JSON report
//!   (`PVAR_MPI_REPORT_JSON`, or `JobReport::write_json`) as one
//!   self-contained HTML page ([`html`]);
//! - `pvar report simulate RANKS…` measures what the report costs rank 0
//!   in a job of that many ranks, by running the reduction and the
//!   writers over synthetic ranks in this process ([`simulate`]).

mod html;
mod simulate;

use clap::Subcommand;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Options of `pvar report`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Write a self-contained HTML page of a JSON report (schema
    /// pvar.report.v2): the communication matrices as heatmaps (bytes and
    /// messages, log colour scale, blocks of ranks beyond 256 ranks), the
    /// per-rank time in MPI and what each rank sent as bars with their
    /// imbalance, the time per collective kind, and the table of every
    /// variable. No network access is needed to view it.
    Html(html::Args),
    /// Measure the report's cost at rank 0 for jobs of RANKS ranks: the
    /// partials of synthetic ranks (the interposer's variables on five
    /// communicators, a 2-D halo exchange) are reduced along the same tree
    /// as in a job, in this process, and rank 0's part — its own partial,
    /// the partials it receives, the report, the text and JSON written —
    /// is timed and its peak memory measured.
    Simulate(simulate::Args),
}

/// Runs `pvar report`.
pub fn run(args: Args) -> Res<()> {
    match args.command {
        ReportCommand::Html(a) => html::run(a),
        ReportCommand::Simulate(a) => simulate::run(a),
    }
}
