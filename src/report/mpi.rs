//! The cross-rank report over MPI (feature `mpi`: the rsmpi `mpi` crate):
//! every rank of a communicator sends its payload to a root rank, which
//! decodes them and makes the [`JobReport`].
//!
//! Two collectives, both called by every rank of the communicator: an
//! all-gather of the payload lengths (so that every rank sees the same
//! sizes and refuses the same way if they do not fit MPI's `int` counts),
//! then a variable-count gather of the payloads to the root.
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
//! if let Some(report) = pvar::report::mpi::gather(&mut collector, &world, &labels, 0)? {
//!     report.write_text(&mut std::io::stdout())?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use mpi::Count;
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, Rank};

use super::{JobReport, ReportError, ReportOptions, Source, decode_concatenated};

/// Gathers every rank's input (from `source`, with this rank's `labels`)
/// on `root` and returns the report there (`None` on the other ranks),
/// with the default [`ReportOptions`]. Collective: every rank of `comm`
/// calls it with the same `root`.
pub fn gather<S: Source, C: Communicator>(
    source: S,
    comm: &C,
    labels: &[(u64, String)],
    root: Rank,
) -> Result<Option<JobReport>, ReportError> {
    gather_with(source, comm, labels, root, ReportOptions::default())
}

/// [`gather`] with `options`.
pub fn gather_with<S: Source, C: Communicator>(
    mut source: S,
    comm: &C,
    labels: &[(u64, String)],
    root: Rank,
    options: ReportOptions,
) -> Result<Option<JobReport>, ReportError> {
    check_root(comm, root)?;
    let rank = u32::try_from(comm.rank()).ok();
    let payload = super::encode_payload(&source.rank_input(rank, labels.to_vec()));
    match gather_payloads(&payload, comm, root)? {
        Some(Gathered { all, lens }) => {
            let inputs = decode_concatenated(&all, &lens)?;
            JobReport::from_ranks_with(inputs, options).map(Some)
        }
        None => Ok(None),
    }
}

/// The payloads of every rank, gathered on the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gathered {
    /// The payloads end to end, rank 0 first.
    pub all: Vec<u8>,
    /// Their lengths in rank order.
    pub lens: Vec<usize>,
}

/// Gathers `payload` (any bytes) from every rank of `comm` on `root`:
/// there, the payloads and their lengths in rank order (ready for
/// [`decode_concatenated`]); `None` on the other ranks. Collective.
/// Refused on every rank alike if the payloads add up to more than
/// `i32::MAX` bytes.
pub fn gather_payloads<C: Communicator>(
    payload: &[u8],
    comm: &C,
    root: Rank,
) -> Result<Option<Gathered>, ReportError> {
    check_root(comm, root)?;
    let size = usize::try_from(comm.size()).unwrap_or(0);
    let mine = payload.len() as u64;
    let mut lens = vec![0u64; size];
    comm.all_gather_into(&mine, &mut lens[..]);
    // The same check on every rank, so that all skip the gather together.
    let total: u64 = lens.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if total > Count::MAX as u64 {
        return Err(ReportError::Transport(format!(
            "the payloads total {total} bytes, more than an MPI count can say"
        )));
    }
    let root_process = comm.process_at_rank(root);
    if comm.rank() != root {
        root_process.gather_varcount_into(payload);
        return Ok(None);
    }
    // Every length fits a Count since their sum does.
    let counts: Vec<Count> = lens.iter().map(|&l| l as Count).collect();
    let displs: Vec<Count> = counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u8; total as usize];
    {
        let mut partition = PartitionMut::new(&mut all[..], counts, &displs[..]);
        root_process.gather_varcount_into_root(payload, &mut partition);
    }
    Ok(Some(Gathered {
        all,
        lens: lens.iter().map(|&l| l as usize).collect(),
    }))
}

fn check_root<C: Communicator>(comm: &C, root: Rank) -> Result<(), ReportError> {
    if (0..comm.size()).contains(&root) {
        Ok(())
    } else {
        Err(ReportError::Transport(format!(
            "root {root} is not a rank of a communicator of {} ranks",
            comm.size()
        )))
    }
}
