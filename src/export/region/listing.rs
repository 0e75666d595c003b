//! Which processes of this user export: the regions in the user's
//! directories, and what readers ignored on the way.

use std::path::PathBuf;

use super::dir::{Ignored, UserDir, export_dir};

/// One region found by [`list_exporting`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The process that wrote it (its file name).
    pub pid: u32,
    /// The file; open it with [`Region::open_path`](super::Region::open_path).
    pub path: PathBuf,
}

/// The regions of the calling user (see [`list_exporting`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// The export directory looked in (`PVAR_EXPORT_DIR`, else
    /// `/dev/shm`).
    pub dir: PathBuf,
    /// The regions, by pid (a pid twice only if two of the user's
    /// directories hold one: the stale one is then reported stale on
    /// opening).
    pub regions: Vec<Listed>,
    /// Names readers look at that they did not use, with the reason (the
    /// path and its owner): another user's directory planted under this
    /// user's name, a link, a directory open to others.
    pub ignored: Vec<Ignored>,
}

/// The regions of the calling user in the export directory: the
/// processes that export (or did, until killed: open each to tell).
pub fn list_exporting() -> Listing {
    list_in(export_dir())
}

/// [`list_exporting`] in export directory `dir`.
pub(crate) fn list_in(dir: PathBuf) -> Listing {
    let (dirs, ignored) = UserDir::for_readers(&dir);
    let mut regions: Vec<Listed> = dirs
        .iter()
        .flat_map(|d| {
            d.entries().into_iter().filter_map(move |name| {
                let pid = name.parse::<u32>().ok().filter(|p| p.to_string() == name)?;
                Some(Listed {
                    pid,
                    path: d.path().join(name),
                })
            })
        })
        .collect();
    regions.sort_by(|a, b| (a.pid, &a.path).cmp(&(b.pid, &b.path)));
    Listing {
        dir,
        regions,
        ignored,
    }
}
