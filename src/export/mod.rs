//! Seen from outside the process: snapshots of a registry's variables, a
//! shared-memory region another process reads them from, and the
//! OpenMetrics or classic text a Prometheus server scrapes.
//!
//! MPI_T is an in-process interface. To let `pvar top <pid>` (and
//! `pvar read`, `pvar export`, `pvar serve`) see a running process's
//! variables, the process opts in — `PVAR_EXPORT=1` in its environment
//! for the global registry, or [`Exporter::start`] for any registry — and
//! an exporter thread publishes a [`Snapshot`] every interval (200 ms by
//! default, `PVAR_EXPORT_INTERVAL_MS`) in a file under `/dev/shm` owned by
//! the process's user, mode 0600, in a directory of the user's, mode
//! 0700 (`/dev/shm/pvar-<uid>/<pid>`), removed when the exporter stops or
//! the process exits, and removed as stale by the next exporter if the
//! process was killed.
//!
//! - [`Snapshot`] (variables with metadata and values,
//!   categories, enumerations) and the [`Observer`] that takes them
//!   without being a tool (no session, no handle, no event);
//! - [`wire`]: the versioned, self-describing encoding of a snapshot and
//!   its decoder, which treats its input as hostile;
//! - [`Region`]: the file — a seqlock over two slots, written and read
//!   with `pwrite`/`pread` — with the reader's ownership and staleness
//!   checks and work bounded by what the file holds; [`list_exporting`]:
//!   the processes of this user that export;
//! - the exporter thread ([`Exporter`]);
//! - [`exposition`]: snapshots as OpenMetrics or classic Prometheus
//!   text, with names that cannot collide.
//!
//! **The update path is unchanged**: nothing a component calls knows an
//! exporter exists. The exporter reads variables as a tool does — a
//! summed element merged over every thread's record, a shared element
//! loaded, a callback variable asked — at a low rate; the only thing it
//! adds to the process is one subscription per watermark (see
//! [`Observer`]). `docs/export.md` has the layout, the guarantees and the
//! measured costs.
//!
//! ```no_run
//! // In the process (or PVAR_EXPORT=1 for pvar::global()):
//! let reg = pvar::Registry::new();
//! let _exporter = pvar::export::Exporter::start(&reg, Default::default())?;
//!
//! // In another process of the same user:
//! let mut region = pvar::export::Region::open(1234)?;
//! let snap = pvar::export::read(&mut region)?;
//! for v in &snap.variables {
//!     println!("{} = {:?}", v.name, v.values);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod exposition;
mod publisher;
mod region;
pub(crate) mod snapshot;
pub mod wire;

pub use publisher::{DEFAULT_INTERVAL, ExportOptions, Exporter, leak_for_process};
pub use region::{
    Ignored, Listed, Listing, Region, RegionError, RegionHeader, list_exporting, process_runs,
};

/// Hooks for tests and fuzzing that craft region files, hostile ones
/// included, where readers look. Not API.
#[doc(hidden)]
pub mod testing {
    pub use super::region::testing::*;
}
pub use snapshot::{
    CategorySnapshot, EnumSnapshot, Number, Observer, ProcessInfo, Snapshot, VarSnapshot,
};

/// Reads the newest snapshot of `region` (at most one interval old).
pub fn read(region: &mut Region) -> Result<Snapshot, RegionError> {
    let payload = region.read_payload()?;
    wire::decode(&payload).map_err(|e| RegionError::Inconsistent(e.to_string()))
}

/// Reads a snapshot taken after this call (waits up to `timeout`).
pub fn read_fresh(
    region: &mut Region,
    timeout: std::time::Duration,
) -> Result<Snapshot, RegionError> {
    let payload = region.read_fresh_payload(timeout)?;
    wire::decode(&payload).map_err(|e| RegionError::Inconsistent(e.to_string()))
}
