//! The cross-rank report over MPI (feature `rsmpi`: the rsmpi `mpi` crate):
//! every rank of a communicator makes its [`Partial`] and the partials are
//! reduced to a root rank along the binomial tree of
//! [`tree`](super::tree), which finishes the [`JobReport`].
//!
//! The partials travel as point-to-point messages on a duplicate of the
//! communicator (made and freed by each call, so no message of the
//! program can match them). The root receives ⌈log2 size⌉ of them, one at
//! a time; its memory does not grow with the number of ranks.
//!
//! ```no_run
//! use mpi::traits::*;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let reg = pvar::Registry::new();
//! let mut collector = pvar::report::Collector::new(&reg);
//! // ... the run ...
//! let labels = vec![(1, "MPI_COMM_WORLD".to_string())];
//! if let Some(report) = pvar::report::rsmpi::reduce(&mut collector, &world, &labels, 0)? {
//!     report.write_text(&mut std::io::stdout())?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use mpi::point_to_point::{Destination, Source as _};
use mpi::topology::{Communicator, Rank, SimpleCommunicator};

use super::aggregate::JobReport;
use super::collector::Source;
use super::input::{ReportError, ReportOptions};
use super::partial::Partial;
use super::tree::{self, Link};

/// The tag of the partials on the duplicated communicator.
const TAG: i32 = 0x7076;

/// Reduces every rank's input (from `source`, with this rank's `labels`)
/// to `root` and returns the report there (`None` on the other ranks),
/// with the default [`ReportOptions`]. Collective: every rank of `comm`
/// calls it with the same `root`.
pub fn reduce<S: Source, C: Communicator>(
    source: S,
    comm: &C,
    labels: &[(u64, String)],
    root: Rank,
) -> Result<Option<JobReport>, ReportError> {
    reduce_with(source, comm, labels, root, ReportOptions::default())
}

/// [`reduce`] with `options` (the same on every rank).
pub fn reduce_with<S: Source, C: Communicator>(
    mut source: S,
    comm: &C,
    labels: &[(u64, String)],
    root: Rank,
    options: ReportOptions,
) -> Result<Option<JobReport>, ReportError> {
    let (rank, size) = (comm.rank(), comm.size());
    if !(0..size).contains(&root) {
        return Err(ReportError::Transport(format!(
            "root {root} is not a rank of a communicator of {size} ranks"
        )));
    }
    let (rank, size, root) = (rank as u32, size as u32, root as u32);
    let input = source.rank_input(Some(rank), labels.to_vec());
    let mine = Partial::of_rank(&input, rank, size, &options);
    drop(input);
    let private = comm.duplicate();
    let mut link = MpiLink { comm: &private };
    Ok(tree::reduce(rank, size, root, mine, &options, &mut link)?
        .map(|job| JobReport::from_partial(job, options)))
}

/// Point-to-point messages on the private communicator.
struct MpiLink<'a> {
    comm: &'a SimpleCommunicator,
}

impl Link for MpiLink<'_> {
    fn send(&mut self, to: u32, bytes: &[u8]) -> Result<(), ReportError> {
        if bytes.len() > i32::MAX as usize {
            // The parent waits for a message: an empty one, which it
            // reports as this rank's malformed partial.
            self.comm
                .process_at_rank(to as Rank)
                .send_with_tag(&[] as &[u8], TAG);
            return Err(ReportError::Transport(format!(
                "a partial of {} bytes is more than an MPI count can say",
                bytes.len()
            )));
        }
        self.comm
            .process_at_rank(to as Rank)
            .send_with_tag(bytes, TAG);
        Ok(())
    }

    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError> {
        let (bytes, _status) = self
            .comm
            .process_at_rank(from as Rank)
            .receive_vec_with_tag::<u8>(TAG);
        Ok(bytes)
    }
}
