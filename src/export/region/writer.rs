//! The writing side of a region: creates the file in the user's private
//! directory, publishes payloads into its two slots, removes it when
//! dropped.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::RegionError;
use super::dir::{UserDir, effective_uid};
use super::layout::{FIRST_PAYLOAD, PUBLISHED, STATE, SlotDesc, checksum, new_header};
use super::liveness::process_start_time;
use super::reader::Region;
use crate::sync::{Ordering, fence};

/// The writing side: owns the file, publishes payloads, removes the file
/// when dropped.
#[derive(Debug)]
pub(crate) struct RegionWriter {
    dir: UserDir,
    name: String,
    file: File,
    published: u64,
    /// Per slot: seq, offset, capacity.
    slots: [(u64, u64, u64); 2],
    end: u64,
    removed: bool,
}

impl RegionWriter {
    /// Creates the region of this process in the user's directory inside
    /// `base` (removing the user's stale regions there first). The notice
    /// says what was in the way if the directory is a fallback.
    pub(crate) fn create(
        base: &std::path::Path,
        interval_ns: u64,
    ) -> io::Result<(RegionWriter, Option<String>)> {
        let (dir, notice) = UserDir::for_writer(base)?;
        remove_stale(&dir);
        let pid = std::process::id();
        let name = pid.to_string();
        // Written under a temporary name, then renamed into place: a reader
        // never sees a file without its header.
        let tmp = format!("{pid}.new");
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
        let file = match dir.open_file(&tmp, flags, 0o600) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Left by an earlier process with our pid that died while
                // creating its region; the directory is ours alone.
                dir.unlink(&tmp)?;
                dir.open_file(&tmp, flags, 0o600)?
            }
            r => r?,
        };
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        let start = process_start_time(pid).unwrap_or(0);
        let header = new_header(pid, effective_uid(), start, interval_ns);
        let placed = file
            .write_all_at(&header, 0)
            .and_then(|()| dir.rename(&tmp, &name));
        if let Err(e) = placed {
            let _ = dir.unlink(&tmp);
            return Err(e);
        }
        Ok((
            RegionWriter {
                dir,
                name,
                file,
                published: 0,
                slots: [(0, 0, 0); 2],
                end: FIRST_PAYLOAD,
                removed: false,
            },
            notice,
        ))
    }

    /// The region's file.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().join(&self.name)
    }

    /// What [`leak_for_process`](super::super::leak_for_process) needs to
    /// remove the file at exit: the directory and the name.
    pub(crate) fn removal(&self) -> io::Result<(OwnedFd, std::ffi::CString)> {
        let name = std::ffi::CString::new(self.name.clone())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a name"))?;
        Ok((self.dir.try_clone_fd()?, name))
    }

    /// Publishes `payload` as the newest snapshot (see the module
    /// documentation for the protocol).
    pub(crate) fn publish(&mut self, payload: &[u8]) -> io::Result<()> {
        let b = ((self.published + 1) % 2) as usize;
        let slot_at = SlotDesc::at(b);
        let (seq, mut offset, mut capacity) = self.slots[b];
        let len = payload.len() as u64;
        if len > capacity {
            // A new home at the end of the file; the old one is left unused.
            capacity = (len * 2).max(64 << 10).next_multiple_of(4096);
            offset = self.end;
            self.end += capacity;
            self.file.set_len(self.end)?;
        }
        let writing = seq + 1;
        self.file.write_all_at(&writing.to_le_bytes(), slot_at)?;
        fence(Ordering::SeqCst);
        self.file.write_all_at(payload, offset)?;
        let mut desc = [0u8; 24];
        desc[..8].copy_from_slice(&offset.to_le_bytes());
        desc[8..16].copy_from_slice(&len.to_le_bytes());
        desc[16..].copy_from_slice(&checksum(payload).to_le_bytes());
        self.file.write_all_at(&desc, slot_at + 8)?;
        fence(Ordering::SeqCst);
        let done = seq + 2;
        self.file.write_all_at(&done.to_le_bytes(), slot_at)?;
        fence(Ordering::SeqCst);
        self.published += 1;
        self.file
            .write_all_at(&self.published.to_le_bytes(), PUBLISHED)?;
        self.slots[b] = (done, offset, capacity);
        Ok(())
    }

    /// Marks the region closed (readers stop reading it).
    pub(crate) fn close(&mut self) -> io::Result<()> {
        self.file.write_all_at(&1u64.to_le_bytes(), STATE)
    }

    /// Marks the region closed and removes its file (once; dropping the
    /// writer does it too).
    pub(crate) fn remove(&mut self) {
        if !self.removed {
            self.removed = true;
            let _ = self.close();
            let _ = self.dir.unlink(&self.name);
        }
    }
}

impl Drop for RegionWriter {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the regions in `dir` whose writer is gone, and temporary files
/// of processes that are gone; the number of regions removed.
pub(crate) fn remove_stale(dir: &UserDir) -> usize {
    let mut removed = 0;
    for name in dir.entries() {
        if let Some(pid) = name
            .strip_suffix(".new")
            .and_then(|p| p.parse::<u32>().ok())
        {
            if process_start_time(pid).is_none() {
                let _ = dir.unlink(&name);
            }
            continue;
        }
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Ok(region) = Region::open_in(dir, pid) else {
            continue;
        };
        if matches!(region.check_alive(), Err(RegionError::Stale(_))) {
            removed += usize::from(dir.unlink(&name).is_ok());
        }
    }
    removed
}
