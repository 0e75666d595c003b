//! The export region: a file in shared memory holding the newest encoded
//! snapshot of a process in one of two slots, in a directory private to
//! the process's user; the code that writes it and the code that reads
//! it from another process.
//!
//! - `layout`: the bytes of the file (header, slot descriptors,
//!   checksum);
//! - `dir`: the user's private directory (`/dev/shm/pvar-<uid>`, 0700),
//!   checked on an open descriptor, and the fallback when another user
//!   has put something under that name;
//! - `writer`: creating the file, publishing, removing;
//! - `reader`: [`Region`], the read-only side and its bounded checks;
//! - `listing`: [`list_exporting`], the processes of this user that
//!   export;
//! - `liveness`: whether a region's writer still runs;
//! - `error`: [`RegionError`].
//!
//! **Publishing** is a seqlock per slot with two slots: the writer fills
//! the slot that does *not* hold the newest snapshot — its `seq` odd while
//! it writes the payload, then the payload's offset, length and checksum,
//! then `seq` even again, then `published + 1`. A reader takes the newest
//! slot, reads `seq`, the payload, `seq` again, and keeps the payload only
//! if both `seq`s are the same even number and the checksum matches;
//! otherwise it tries the other slot (complete from the publish before),
//! and tries again only while a slot is being rewritten. A reader never
//! waits for the writer and the writer never waits for a reader.
//!
//! Both sides use `pread`/`pwrite` on the file, not a mapping: a reader of
//! a region that is truncated under it gets a short read (an error), never
//! a `SIGBUS`; it opens the file read-only, so it cannot write to the
//! process. Each side puts a fence between its system calls so that the
//! kernel's copies keep the seqlock's order; the checksum also catches a
//! torn `seq` word (the kernel may copy it bytewise) and any corruption.

mod dir;
mod error;
mod layout;
mod listing;
mod liveness;
mod reader;
mod writer;

pub use dir::Ignored;
pub(crate) use dir::{export_dir, unlink_in};
pub use error::RegionError;
pub use layout::RegionHeader;
pub use listing::{Listed, Listing, list_exporting};
pub use liveness::process_runs;
pub use reader::Region;
pub(crate) use writer::RegionWriter;

/// Test hooks: crafting region files (hostile ones included) where
/// readers look. Not API.
pub(crate) mod testing {
    use std::io;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};

    pub use super::dir::effective_uid;
    pub use super::layout::{FIRST_PAYLOAD, HEADER_LEN, MAX_PAYLOAD, REGION_VERSION, checksum};

    /// A region file as a test wants it: a header, two slot descriptors,
    /// payload bytes at chosen offsets, and a file size (larger than the
    /// bytes written: a sparse file).
    #[derive(Debug, Clone, Default)]
    pub struct RegionFile {
        /// The writer's pid and uid in the header.
        pub pid: u32,
        /// See [`RegionFile::pid`].
        pub uid: u32,
        /// The writer's start time (0: unknown, not compared).
        pub start_time: u64,
        /// Publishing interval, ns.
        pub interval_ns: u64,
        /// Complete publishes (the newest in slot `published % 2`).
        pub published: u64,
        /// The closed flag.
        pub closed: bool,
        /// `(seq, offset, len, checksum)` of each slot.
        pub slots: [(u64, u64, u64, u64); 2],
        /// Bytes written at offsets.
        pub data: Vec<(u64, Vec<u8>)>,
        /// The file's size if larger than what is written (a hole).
        pub size: Option<u64>,
    }

    impl RegionFile {
        /// A region of `pid`/`uid` whose newest slot (1) holds `payload`
        /// at [`FIRST_PAYLOAD`] with its right checksum.
        pub fn with_payload(pid: u32, uid: u32, payload: &[u8]) -> RegionFile {
            RegionFile {
                pid,
                uid,
                published: 1,
                slots: [
                    (0, 0, 0, 0),
                    (2, FIRST_PAYLOAD, payload.len() as u64, checksum(payload)),
                ],
                data: vec![(FIRST_PAYLOAD, payload.to_vec())],
                ..RegionFile::default()
            }
        }

        /// The header bytes.
        pub fn header(&self) -> Vec<u8> {
            let mut h =
                super::layout::new_header(self.pid, self.uid, self.start_time, self.interval_ns);
            h[40..48].copy_from_slice(&self.published.to_le_bytes());
            h[48..56].copy_from_slice(&u64::from(self.closed).to_le_bytes());
            for (i, (seq, offset, len, sum)) in self.slots.iter().enumerate() {
                let at = super::layout::SlotDesc::at(i) as usize;
                for (k, v) in [seq, offset, len, sum].into_iter().enumerate() {
                    h[at + 8 * k..at + 8 * k + 8].copy_from_slice(&v.to_le_bytes());
                }
            }
            h
        }

        /// Writes the file at `path` (replacing one there), mode 0600.
        pub fn write(&self, path: &Path) -> io::Result<()> {
            let _ = std::fs::remove_file(path);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)?;
            f.write_all_at(&self.header(), 0)?;
            for (at, bytes) in &self.data {
                f.write_all_at(bytes, *at)?;
            }
            if let Some(size) = self.size {
                f.set_len(size)?;
            }
            Ok(())
        }
    }

    /// The directory an exporter of this user in `base` writes its region
    /// in (made if missing), where [`Region::open`](super::Region::open)
    /// looks when `PVAR_EXPORT_DIR` is `base`.
    pub fn user_dir(base: &Path) -> io::Result<PathBuf> {
        Ok(super::dir::UserDir::for_writer(base)?
            .0
            .path()
            .to_path_buf())
    }

    /// [`Region::open`](super::Region::open) with `base` as the export
    /// directory.
    pub fn open_in(base: &Path, pid: u32) -> Result<super::Region, super::RegionError> {
        super::Region::open_in_base(base, pid)
    }

    /// [`list_exporting`](super::list_exporting) with `base` as the export
    /// directory.
    pub fn list_in(base: &Path) -> super::Listing {
        super::listing::list_in(base.to_path_buf())
    }

    /// Removes this user's stale regions in `base`; how many.
    pub fn remove_stale(base: &Path) -> io::Result<usize> {
        let (dir, _) = super::dir::UserDir::for_writer(base)?;
        Ok(super::writer::remove_stale(&dir))
    }
}
