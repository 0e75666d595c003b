//! A report across the ranks of a parallel job, in the manner of mpiP:
//! per variable the total, min / mean / max with the ranks that hold
//! them and the imbalance; per communicator (bound variables, matched by
//! label); per-peer arrays as rank × rank matrices (binned beyond 256
//! ranks) with their largest pairs; per-rank profiles (time in timers,
//! what each rank sent). Written as text ([`JobReport::write_text`]) or as
//! JSON of schema `pvar.report.v2` ([`JobReport::write_json`]), always
//! complete on disk ([`write_atomically`]); `pvar report` draws it as an
//! HTML page.
//!
//! # Scale
//!
//! The report is a reduction, not a gather: each rank makes a
//! [`Partial`] of its own values ([`Partial::of_rank`]), partials merge
//! associatively ([`Partial::merge`]) along a binomial tree
//! ([`tree::reduce`]), and the root finishes the job's partial into a
//! [`JobReport`] ([`JobReport::from_partial`]). A partial's size depends
//! on the variables, the communicators and the [`ReportOptions`], not on
//! the number of ranks, so the root's memory and time are
//! O(variables + communicators + matrix blocks) and it receives
//! ⌈log2 ranks⌉ partials. The price: per-rank values are not in the
//! report, only their statistics (and per-rank profiles in blocks of
//! ranks beyond 1,024 ranks).
//!
//! The module knows nothing of MPI: a rank's contribution is a
//! [`RankInput`] — its [`Snapshot`](crate::export::Snapshot) plus *labels*, rank-independent names
//! of the objects its bound variables are bound to (`MPI_COMM_WORLD`,
//! `comm[0-3]`, …); partials travel as bytes ([`Partial::encode`] /
//! [`Partial::decode`]; the decoder treats its input as hostile) over a
//! [`tree::Link`]: MPI point-to-point (feature `rsmpi`:
//! `pvar::report::rsmpi::reduce` over rsmpi; the pvar interposer drives the
//! same tree from C), or anything else.
//!
//! - [`Collector`]: a rank's side — an [`Observer`](crate::export::Observer) (with watermark marks)
//!   created when the run starts, so that marks and the wall time cover
//!   the run;
//! - [`RankInput`], [`Partial`], [`tree`]: the reduction;
//! - [`JobReport`], [`VarReport`], [`ElementReport`], [`Stats`],
//!   [`PeerReport`], [`ProfileReport`]: the figures, with
//!   [`ReportOptions`] (all-zero variables, per-peer rule, element names,
//!   matrix blocks, profiles);
//! - [`JobReport::write_text`], [`JobReport::write_json`],
//!   [`write_atomically`]: rendering.
//!
//! # Matching and figures
//!
//! Variables are matched across ranks by name and class; an array is
//! reported per element. A bound variable is reported once per object
//! instance, matched by the object's label where the rank gave one, by
//! the object value otherwise (only meaningful where handles are equal
//! across ranks). The job's set of variables is the union of the ranks'
//! (no agreement step: merging partials unites their keys). Statistics
//! are over the ranks that report the value (a communicator's instance
//! exists only on its members):
//!
//! | class | value per rank | `total` | min / mean / max, imbalance |
//! |---|---|---|---|
//! | COUNTER, AGGREGATE | the total since registration | sum over ranks | yes |
//! | TIMER | seconds (nanosecond timers are converted) | sum over ranks | yes |
//! | LEVEL, SIZE | the current value | sum over ranks (e.g. memory held job-wide) | yes |
//! | PERCENTAGE | the current ratio (0 to 1) | — | yes |
//! | GENERIC, STATE | the current value | — | min / mean / max only |
//! | HIGH/LOWWATERMARK | the rank's mark (its level if it has none) | — | yes; the job's mark is the max (HIGH) or the min (LOW) |
//!
//! Imbalance is given two ways: `max / mean` (1 = balanced) and, as mpiP
//! shows it, `(max − mean) / max` (0 = balanced; the share of the busiest
//! rank's amount that a balanced job would not have had). Both are
//! undefined (`None`, JSON `null`, text `-`) when the mean or the max is 0.
//! Ties go to the lowest rank. Integer sums are exact (an `i128`
//! accumulates them); sums of doubles depend on the order of the merges
//! in the last bits.
//!
//! A variable (or bound instance) that is zero on every rank — values and
//! marks, every element — is left out unless
//! [`ReportOptions::include_zero`]; its name is listed in
//! [`JobReport::skipped_zero`]. One no rank reports values for (inactive
//! everywhere) is always left out.
//!
//! # Per-peer arrays
//!
//! An array variable whose element count equals the number of ranks is a
//! per-peer array — element `j` of rank `i`'s value is what rank `i` did
//! towards rank `j` — when its name is in
//! [`ReportOptions::peer_variables`], or (unless
//! [`ReportOptions::auto_peer`] is off) when its category's name ends in
//! `_peer` or `peer` is one of the `_`-separated words of its name
//! (`pvar_mpi_peer_send_bytes`, `msgs_to_peer`). It is reported as a
//! [`PeerReport`]: the rank × rank matrix (row = the sender, column = the
//! destination) summed into blocks of consecutive ranks, at most
//! [`ReportOptions::matrix_bins`] per side (so exact up to 256 ranks by
//! default), the largest elements with their (from, to) ranks, and the
//! statistics of the row totals (what each rank sent).
//!
//! # Example
//!
//! ```
//! use pvar::Registry;
//! use pvar::report::{Collector, JobReport};
//!
//! // Two "ranks" (in a real job: one per process, reduced over MPI).
//! let mut inputs = Vec::new();
//! for rank in 0..2u32 {
//!     let reg = Registry::new();
//!     let mut collector = Collector::new(&reg);
//!     reg.counter("msgs").register()?.add(10 * (u64::from(rank) + 1));
//!     inputs.push(collector.input(Some(rank), Vec::new()));
//! }
//! let report = JobReport::from_ranks(inputs)?;
//! let msgs = report.variable("msgs").unwrap().elements[0].stats.as_ref().unwrap();
//! assert_eq!(msgs.total, Some(pvar::export::Number::Unsigned(30)));
//! assert_eq!(msgs.max_rank, 1);
//! let mut text = Vec::new();
//! report.write_text(&mut text)?;
//! assert!(String::from_utf8(text)?.contains("msgs"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aggregate;
mod collector;
mod file;
mod input;
mod json;
mod partial;
#[cfg(feature = "rsmpi")]
pub mod rsmpi;
mod stats;
mod text;
pub mod tree;
mod wire;

pub use aggregate::{
    ElementReport, JobReport, MatrixCell, NameCount, PeerPair, PeerReport, ProfileBlock,
    ProfileReport, RanksSummary, VarReport,
};
pub use collector::{Collector, Source};
pub use file::write_atomically;
pub use input::{JSON_SCHEMA, ProfileSeries, RankInput, ReportError, ReportOptions};
pub use partial::{Instance, Partial};
pub use stats::Stats;
pub use wire::PARTIAL_VERSION;
