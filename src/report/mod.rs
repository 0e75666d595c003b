//! A report across the ranks of a parallel job: every rank's variables
//! gathered on one rank and summarised per variable — total, min / mean /
//! max with the ranks that hold them, imbalance — per communicator (bound
//! variables, matched by label), and per-peer arrays as rank × rank
//! matrices; written as mpiP-like text ([`JobReport::write_text`]) or as
//! JSON of schema `pvar.report.v1` ([`JobReport::write_json`]).
//!
//! The module knows nothing of MPI: a rank's contribution is a
//! [`RankInput`] — its [`Snapshot`] plus *labels*, rank-independent names
//! of the objects its bound variables are bound to (`MPI_COMM_WORLD`,
//! `comm[0-3]`, …) — which travels as bytes ([`encode_payload`] /
//! [`decode_payload`]; the decoder treats its input as hostile). Moving
//! the bytes is the caller's: an MPI gather (feature `mpi`:
//! `pvar::report::mpi::gather` over rsmpi; the pvar interposer does it in
//! C), files, anything. [`JobReport::from_ranks`] then matches the ranks' variables
//! and computes the figures.
//!
//! - [`Collector`]: a rank's side — an [`Observer`] (with watermark marks)
//!   created when the run starts, so that marks and the wall time cover
//!   the run;
//! - [`RankInput`], [`encode_payload`], [`decode_payload`],
//!   [`decode_concatenated`]: a rank's payload;
//! - [`JobReport`], [`VarReport`], [`ElementReport`], [`Stats`]: the
//!   figures, with [`ReportOptions`] (all-zero variables, per-peer rule,
//!   element names);
//! - [`JobReport::write_text`], [`JobReport::write_json`]: rendering.
//!
//! # Matching and figures
//!
//! Variables are matched across ranks by name and class; an array is
//! reported per element. A bound variable is reported once per object
//! instance, matched by the object's label where the rank gave one, by
//! the object value otherwise (only meaningful where handles are equal
//! across ranks). Statistics are over the ranks that report the value (a
//! communicator's instance exists only on its members):
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
//! Ties go to the lowest rank.
//!
//! A variable (or bound instance) that is zero on every rank — values and
//! marks, every element — is left out unless
//! [`ReportOptions::include_zero`]; its name is listed in
//! [`JobReport::skipped_zero`]. One no rank reports values for (inactive
//! everywhere) is always left out.
//!
//! # Per-peer matrices
//!
//! An array variable whose element count equals the number of ranks is a
//! per-peer array — element `j` of rank `i`'s value is what rank `i` did
//! towards rank `j` — when its name is in
//! [`ReportOptions::peer_variables`], or (unless
//! [`ReportOptions::auto_peer`] is off) when its category's name ends in
//! `_peer` or `peer` is one of the `_`-separated words of its name
//! (`pvar_mpi_peer_send_bytes`, `msgs_to_peer`). It is shown as a matrix,
//! row = rank (the sender), column = element (the destination).
//!
//! # Example
//!
//! ```
//! use pvar::Registry;
//! use pvar::report::{Collector, JobReport, decode_payload, encode_payload};
//!
//! // Two "ranks" (in a real job: one per process, the bytes gathered by MPI).
//! let mut payloads = Vec::new();
//! for rank in 0..2u32 {
//!     let reg = Registry::new();
//!     let mut collector = Collector::new(&reg);
//!     reg.counter("msgs").register()?.add(10 * (u64::from(rank) + 1));
//!     let input = collector.input(Some(rank), Vec::new());
//!     payloads.push(encode_payload(&input));
//! }
//! let inputs = payloads
//!     .iter()
//!     .map(|p| decode_payload(p))
//!     .collect::<Result<Vec<_>, _>>()?;
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
mod json;
#[cfg(feature = "mpi")]
pub mod mpi;
mod text;
mod wire;

use std::time::{Duration, Instant};

use crate::export::snapshot::{Observer, Snapshot};
use crate::registry::Registry;

pub use aggregate::{ElementReport, Instance, JobReport, RankInfo, Stats, VarReport};
pub use wire::{ENVELOPE_VERSION, decode_concatenated, decode_payload, encode_payload};

/// The name of the JSON schema [`JobReport::write_json`] writes.
pub const JSON_SCHEMA: &str = "pvar.report.v1";

/// One rank's contribution to a [`JobReport`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankInput {
    /// The rank, if the producer knew it. [`JobReport::from_ranks`] takes
    /// the inputs in rank order and refuses one whose rank is given and
    /// differs from its position.
    pub rank: Option<u32>,
    /// Its variables, taken with an [`Observer`] that follows watermark
    /// marks (see [`Collector`]).
    pub snapshot: Snapshot,
    /// Names of bound objects, `(object, label)`: the label must name the
    /// object the same way on every rank (`MPI_COMM_WORLD`, the world
    /// ranks of a communicator's members, …). An object listed twice keeps
    /// its first label.
    pub labels: Vec<(u64, String)>,
    /// How long the rank had been running when the snapshot was taken
    /// (since its [`Collector`] was made), if known.
    pub elapsed: Option<Duration>,
}

/// What [`JobReport::from_ranks_with`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Report variables that are zero on every rank too (default `false`).
    pub include_zero: bool,
    /// Names of array variables to show as per-peer matrices (whatever
    /// their names), if their element count equals the number of ranks.
    pub peer_variables: Vec<String>,
    /// Also recognise per-peer arrays by name and category (see the
    /// module documentation; default `true`).
    pub auto_peer: bool,
    /// Names of the elements of array variables, `(variable, names)`:
    /// element `i` is shown as `variable[names[i]]` instead of
    /// `variable[i]`.
    pub element_names: Vec<(String, Vec<String>)>,
    /// The text report draws matrices of at most this many ranks (the
    /// JSON has them all; default 32).
    pub max_matrix_ranks: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            include_zero: false,
            peer_variables: Vec::new(),
            auto_peer: true,
            element_names: Vec::new(),
            max_matrix_ranks: 32,
        }
    }
}

/// Why a report could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// A rank's payload was malformed.
    Payload {
        /// The rank (position) whose payload it was, if known.
        rank: Option<usize>,
        /// Byte offset in that payload where decoding stopped.
        at: usize,
        /// What was wrong there.
        what: String,
    },
    /// The inputs are not the ranks `0..n` in order (or there are none).
    Ranks(String),
    /// The transport failed (an MPI gather, a length that does not fit).
    Transport(String),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Payload {
                rank: Some(r),
                at,
                what,
            } => write!(f, "rank {r}'s payload is malformed at byte {at}: {what}"),
            ReportError::Payload {
                rank: None,
                at,
                what,
            } => {
                write!(f, "malformed rank payload at byte {at}: {what}")
            }
            ReportError::Ranks(what) => write!(f, "bad rank inputs: {what}"),
            ReportError::Transport(what) => write!(f, "gathering the payloads failed: {what}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// A rank's side of the report: an [`Observer`] that follows watermark
/// marks from its creation on, and the time it was made.
///
/// Make it when the run starts (at `MPI_Init`) and take the input at the
/// end: the marks are the extremes since then (for variables registered
/// later, since the first input taken after their registration) and
/// [`RankInput::elapsed`] is the time in between.
///
/// Not async-signal-safe (it allocates).
///
/// ```
/// let reg = pvar::Registry::new();
/// let mut collector = pvar::report::Collector::new(&reg);
/// let peak = reg.high_watermark::<u64>("queue_peak").register()?;
/// let _ = collector.input(None, Vec::new()); // starts following the new watermark
/// peak.update(7);
/// peak.update(2);
/// let input = collector.input(Some(0), vec![]);
/// let v = input.snapshot.variable("queue_peak").unwrap();
/// assert_eq!(v.marks.as_ref().unwrap()[0], pvar::export::Number::Unsigned(7));
/// # Ok::<(), pvar::Error>(())
/// ```
#[derive(Debug)]
pub struct Collector {
    observer: Observer,
    started: Instant,
}

impl Collector {
    /// A collector of `registry`; takes a first snapshot so that the
    /// watermarks that exist now are followed from now on.
    pub fn new(registry: &Registry) -> Collector {
        let mut observer = Observer::new(registry).with_marks(true);
        let _ = observer.snapshot();
        Collector {
            observer,
            started: Instant::now(),
        }
    }

    /// Time since the collector was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// This rank's input now.
    pub fn input(&mut self, rank: Option<u32>, labels: Vec<(u64, String)>) -> RankInput {
        RankInput {
            rank,
            snapshot: self.observer.snapshot(),
            labels,
            elapsed: Some(self.elapsed()),
        }
    }

    /// This rank's payload now ([`Collector::input`] encoded).
    pub fn payload(&mut self, rank: Option<u32>, labels: &[(u64, String)]) -> Vec<u8> {
        encode_payload(&self.input(rank, labels.to_vec()))
    }
}

/// Where a rank's input comes from: a [`Collector`] (marks and wall time
/// since it was made), an [`Observer`] (marks since its first snapshot)
/// or a [`Registry`] (a one-off snapshot: marks equal levels, no wall
/// time). Implemented for `&mut Collector`, `&mut Observer` and
/// `&Registry`.
pub trait Source {
    /// This rank's input now.
    fn rank_input(&mut self, rank: Option<u32>, labels: Vec<(u64, String)>) -> RankInput;
}

impl Source for &mut Collector {
    fn rank_input(&mut self, rank: Option<u32>, labels: Vec<(u64, String)>) -> RankInput {
        self.input(rank, labels)
    }
}

impl Source for &mut Observer {
    fn rank_input(&mut self, rank: Option<u32>, labels: Vec<(u64, String)>) -> RankInput {
        RankInput {
            rank,
            snapshot: self.snapshot(),
            labels,
            elapsed: None,
        }
    }
}

impl Source for &Registry {
    fn rank_input(&mut self, rank: Option<u32>, labels: Vec<(u64, String)>) -> RankInput {
        RankInput {
            rank,
            snapshot: Snapshot::take(self),
            labels,
            elapsed: None,
        }
    }
}
