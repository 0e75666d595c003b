//! Why a region could not be read.

use std::io;
use std::path::PathBuf;

/// Why a region could not be opened or read.
#[derive(Debug)]
pub enum RegionError {
    /// No region for that process (it does not export, or never ran):
    /// where it was looked for.
    NotFound(PathBuf),
    /// The file is not one this reader may trust (owner, mode, kind).
    Refused(String),
    /// The writer is gone: the process ended, or its pid was reused.
    Stale(String),
    /// The exporter stopped publishing (the region is about to go).
    Closed,
    /// Not a region of a version this reader understands.
    Version(String),
    /// No consistent snapshot could be read: a corrupt or hostile region
    /// (a claim the file does not hold), or a writer that died
    /// mid-publish twice.
    Inconsistent(String),
    /// The operating system refused an operation.
    Io(io::Error),
}

impl std::fmt::Display for RegionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegionError::NotFound(p) => write!(
                f,
                "no export region at {} (is the process running with PVAR_EXPORT=1, \
                 or calling pvar::export::Exporter::start?)",
                p.display()
            ),
            RegionError::Refused(why) => write!(f, "refused: {why}"),
            RegionError::Stale(why) => write!(f, "stale region: {why}"),
            RegionError::Closed => write!(f, "the process stopped exporting"),
            RegionError::Version(why) => write!(f, "unsupported region: {why}"),
            RegionError::Inconsistent(why) => write!(f, "no consistent snapshot: {why}"),
            RegionError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RegionError {}

impl From<io::Error> for RegionError {
    fn from(e: io::Error) -> Self {
        RegionError::Io(e)
    }
}
