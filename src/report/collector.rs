//! A rank's side of a report: the [`Collector`] that follows watermark
//! marks and wall time from the start of the run, and the [`Source`]s a
//! rank's input can come from.

use std::time::{Duration, Instant};

use super::input::{RankInput, ReportOptions};
use super::partial::Partial;
use crate::export::snapshot::{Observer, Snapshot};
use crate::registry::Registry;

/// A rank's side of the report: an [`Observer`](crate::export::Observer) that follows watermark
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
/// since it was made), an [`Observer`](crate::export::Observer) (marks since its first snapshot)
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
