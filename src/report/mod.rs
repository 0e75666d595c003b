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
//! [`RankInput`] — its [`Snapshot`] plus *labels*, rank-independent names
//! of the objects its bound variables are bound to (`MPI_COMM_WORLD`,
//! `comm[0-3]`, …); partials travel as bytes ([`Partial::encode`] /
//! [`Partial::decode`]; the decoder treats its input as hostile) over a
//! [`tree::Link`]: MPI point-to-point (feature `rsmpi`:
//! `pvar::report::rsmpi::reduce` over rsmpi; the pvar interposer drives the
//! same tree from C), or anything else.
//!
//! - [`Collector`]: a rank's side — an [`Observer`] (with watermark marks)
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
mod file;
mod json;
mod partial;
#[cfg(feature = "rsmpi")]
pub mod rsmpi;
mod stats;
mod text;
pub mod tree;
mod wire;

use std::time::{Duration, Instant};

use crate::export::snapshot::{Observer, Snapshot};
use crate::registry::Registry;
use crate::vocabulary::kinds::PvarClass;

pub use aggregate::{
    ElementReport, Instance, JobReport, MatrixCell, NameCount, PeerPair, PeerReport, ProfileBlock,
    ProfileReport, RanksSummary, VarReport,
};
pub use file::write_atomically;
pub use partial::Partial;
pub use stats::Stats;
pub use wire::PARTIAL_VERSION;

/// The name of the JSON schema [`JobReport::write_json`] writes.
pub const JSON_SCHEMA: &str = "pvar.report.v2";

/// One rank's contribution to a report: what [`Partial::of_rank`] is
/// made from.
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

/// A per-rank sum the report profiles over the ranks (the per-rank bars
/// of `pvar report`'s page): the sum of every element of every variable
/// of `class` (any class if `None`) whose name starts with `prefix`
/// (TIMER in seconds; watermarks: their levels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSeries {
    /// Its name in the report.
    pub name: String,
    /// The class of the variables summed, or any.
    pub class: Option<PvarClass>,
    /// The prefix of their names (`""`: every name).
    pub prefix: String,
}

/// What a report holds and how it is shaped. The fields that shape a
/// [`Partial`] (the per-peer rule, `matrix_bins`, `top_pairs`,
/// `profile_bins`, `profile`) must be the same on every rank; partials
/// made with others do not merge (their ranks are reported as a problem).
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
    /// The text report draws exact matrices of at most this many ranks
    /// (default 32); larger ones are shown by their largest pairs and the
    /// rank totals.
    pub max_matrix_ranks: usize,
    /// Per-peer matrices are summed into at most this many blocks of
    /// consecutive ranks per side (default 256): exact up to that many
    /// ranks, `bins²` blocks beyond.
    pub matrix_bins: usize,
    /// The largest (from, to) elements kept per per-peer array (default
    /// 16).
    pub top_pairs: usize,
    /// Profile series are kept per block of consecutive ranks, at most
    /// this many blocks (default 1024: one rank each up to 1,024 ranks).
    pub profile_bins: usize,
    /// The per-rank sums profiled (default: `time in timers`, every
    /// TIMER). Every per-peer array's row totals are profiled too, under
    /// its name.
    pub profile: Vec<ProfileSeries>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            include_zero: false,
            peer_variables: Vec::new(),
            auto_peer: true,
            element_names: Vec::new(),
            max_matrix_ranks: 32,
            matrix_bins: 256,
            top_pairs: 16,
            profile_bins: 1024,
            profile: vec![ProfileSeries {
                name: "time in timers".into(),
                class: Some(PvarClass::Timer),
                prefix: String::new(),
            }],
        }
    }
}

impl ReportOptions {
    /// Whether an array of as many elements as ranks named `name`, in
    /// `category`, is a per-peer array (see the module documentation).
    fn is_peer(&self, name: &str, category: Option<&str>) -> bool {
        self.peer_variables.iter().any(|p| p == name)
            || (self.auto_peer
                && (category.is_some_and(|c| c.ends_with("_peer"))
                    || name.split('_').any(|w| w == "peer")))
    }
}

/// Why a report could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// A rank's partial was malformed.
    Payload {
        /// The rank whose partial it was, if known.
        rank: Option<usize>,
        /// Byte offset in that partial where decoding stopped.
        at: usize,
        /// What was wrong there.
        what: String,
    },
    /// The inputs are not the ranks `0..n` in order (or there are none),
    /// or a rank is outside the job.
    Ranks(String),
    /// The transport failed (an MPI call, a length that does not fit).
    Transport(String),
}

impl ReportError {
    /// The error, said of rank `rank`'s partial.
    fn for_rank(self, rank: usize) -> ReportError {
        match self {
            ReportError::Payload { at, what, .. } => ReportError::Payload {
                rank: Some(rank),
                at,
                what,
            },
            other => other,
        }
    }
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Payload {
                rank: Some(r),
                at,
                what,
            } => write!(f, "rank {r}'s partial is malformed at byte {at}: {what}"),
            ReportError::Payload {
                rank: None,
                at,
                what,
            } => {
                write!(f, "malformed partial at byte {at}: {what}")
            }
            ReportError::Ranks(what) => write!(f, "bad rank inputs: {what}"),
            ReportError::Transport(what) => write!(f, "moving the partials failed: {what}"),
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

    /// This rank's [`Partial`] now, as rank `rank` of a job of `nranks`
    /// ranks.
    pub fn partial(
        &mut self,
        rank: u32,
        nranks: u32,
        labels: Vec<(u64, String)>,
        options: &ReportOptions,
    ) -> Partial {
        Partial::of_rank(&self.input(Some(rank), labels), rank, nranks, options)
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
