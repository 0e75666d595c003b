//! What a report is made from and how: a rank's input ([`RankInput`]),
//! the options ([`ReportOptions`]) and the errors ([`ReportError`]).

use std::time::Duration;

use crate::export::snapshot::Snapshot;
use crate::vocabulary::kinds::PvarClass;

/// The name of the JSON schema [`JobReport::write_json`](super::JobReport::write_json) writes.
pub const JSON_SCHEMA: &str = "pvar.report.v2";

/// One rank's contribution to a report: what [`Partial::of_rank`](super::Partial::of_rank) is
/// made from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankInput {
    /// The rank, if the producer knew it. [`JobReport::from_ranks`](super::JobReport::from_ranks) takes
    /// the inputs in rank order and refuses one whose rank is given and
    /// differs from its position.
    pub rank: Option<u32>,
    /// Its variables, taken with an [`Observer`](crate::export::Observer) that follows watermark
    /// marks (see [`Collector`](super::Collector)).
    pub snapshot: Snapshot,
    /// Names of bound objects, `(object, label)`: the label must name the
    /// object the same way on every rank (`MPI_COMM_WORLD`, the world
    /// ranks of a communicator's members, …). An object listed twice keeps
    /// its first label.
    pub labels: Vec<(u64, String)>,
    /// How long the rank had been running when the snapshot was taken
    /// (since its [`Collector`](super::Collector) was made), if known.
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
/// [`Partial`](super::Partial) (the per-peer rule, `matrix_bins`, `top_pairs`,
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
    pub(super) fn is_peer(&self, name: &str, category: Option<&str>) -> bool {
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
    pub(super) fn for_rank(self, rank: usize) -> ReportError {
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
