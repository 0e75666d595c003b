//! The reading side: a region opened read-only, checked, and read with
//! work bounded by what the file holds.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::RegionError;
use super::dir::{UserDir, effective_uid, export_dir, owner_text, primary_name};
use super::layout::{
    HEADER_LEN, MAX_PAYLOAD, RegionHeader, SLOT_LEN, SlotDesc, checksum, parse_header,
};
use super::liveness::process_start_time;
use crate::sync::{Ordering, fence};

/// How often a reader tries both slots before it gives up (while the
/// region changes under it).
const READ_ATTEMPTS: u32 = 200;

/// The export region of another (or this) process, opened read-only.
///
/// It refuses a file that is not a regular file of the reader's, private
/// to it, whose header names the pid and uid asked for; its reads are
/// bounded by what the file holds (see [`Region::read_payload`]). The
/// guide (`docs/export.md`, "What a reader can trust") has the whole list
/// and the threat model.
#[derive(Debug)]
pub struct Region {
    file: File,
    path: PathBuf,
    pid: u32,
    header: RegionHeader,
    attempts: u32,
}

/// Why one slot could not be read.
enum SlotFailure {
    /// The writer is at work on it (or just was): worth another try.
    Busy(String),
    /// Its descriptor is wrong and stays wrong until the writer rewrites
    /// the slot: corrupt, out of bounds, a payload the file does not hold.
    Bad(String),
}

impl Region {
    /// Opens the region of process `pid` of the calling user, in the
    /// user's directory inside the export directory (`PVAR_EXPORT_DIR`,
    /// else `/dev/shm`). If more than one of the user's directories holds
    /// one (a fallback directory, see `docs/export.md`), the one whose
    /// writer still runs is taken.
    pub fn open(pid: u32) -> Result<Region, RegionError> {
        Region::open_in_base(&export_dir(), pid)
    }

    /// [`Region::open`] in export directory `base`.
    pub(crate) fn open_in_base(base: &Path, pid: u32) -> Result<Region, RegionError> {
        let (dirs, _) = UserDir::for_readers(base);
        let mut first_error = None;
        for dir in &dirs {
            match Region::open_in(dir, pid) {
                Ok(r) if r.check_alive().is_ok() => return Ok(r),
                Ok(r) => {
                    first_error.get_or_insert(Ok(r));
                }
                Err(RegionError::NotFound(_)) => {}
                Err(e) => {
                    first_error.get_or_insert(Err(e));
                }
            }
        }
        first_error.unwrap_or_else(|| {
            Err(RegionError::NotFound(
                base.join(primary_name(effective_uid()))
                    .join(pid.to_string()),
            ))
        })
    }

    /// Opens the region of `pid` in a checked user directory.
    pub(crate) fn open_in(dir: &UserDir, pid: u32) -> Result<Region, RegionError> {
        let path = dir.path().join(pid.to_string());
        let file = dir
            .open_file(&pid.to_string(), libc::O_RDONLY | libc::O_NONBLOCK, 0)
            .map_err(|e| open_error(&path, e))?;
        Region::checked(file, path, pid)
    }

    /// Opens the region at `path`, expected to be written by `pid` (the
    /// file is checked as by [`Region::open`]; the directories on the way
    /// are the caller's choice).
    pub fn open_path(path: &Path, pid: u32) -> Result<Region, RegionError> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| open_error(path, e))?;
        Region::checked(file, path.to_path_buf(), pid)
    }

    /// The checks of an open file: a regular file of the reader's, private,
    /// whose header names `pid` and the reader's uid.
    fn checked(file: File, path: PathBuf, pid: u32) -> Result<Region, RegionError> {
        let meta = file.metadata()?;
        let me = effective_uid();
        if !meta.file_type().is_file() {
            return Err(RegionError::Refused(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        if meta.uid() != me {
            return Err(RegionError::Refused(format!(
                "{} belongs to {}, not to the reader ({})",
                path.display(),
                owner_text(meta.uid()),
                owner_text(me)
            )));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(RegionError::Refused(format!(
                "{} is open to other users (mode {:o})",
                path.display(),
                meta.mode() & 0o777
            )));
        }
        let header = read_header(&file)?;
        if header.pid != pid || header.uid != me {
            return Err(RegionError::Refused(format!(
                "{} was written by pid {} uid {}, not pid {pid} uid {me}",
                path.display(),
                header.pid,
                header.uid
            )));
        }
        Ok(Region {
            file,
            path,
            pid,
            header,
            attempts: READ_ATTEMPTS,
        })
    }

    /// How many times [`Region::read_payload`] tries both slots (1 ms
    /// apart) while the writer is changing them, before it reports the
    /// region inconsistent (default 200; at least 1). A slot that is
    /// wrong and not being rewritten is not tried again.
    pub fn with_attempts(mut self, attempts: u32) -> Region {
        self.attempts = attempts.max(1);
        self
    }

    /// The region's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The pid the region was opened for.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Reads the header again (e.g. to see whether the exporter closed).
    pub fn refresh_header(&mut self) -> Result<RegionHeader, RegionError> {
        self.header = read_header(&self.file)?;
        Ok(self.header)
    }

    /// The header as of opening (or the last read).
    pub fn header(&self) -> RegionHeader {
        self.header
    }

    /// The writer's publishing interval.
    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.header.interval_ns)
    }

    /// `Err(Stale)` if the writer is gone: no process `pid`, or one that
    /// started at another time than the writer (pid reuse).
    pub fn check_alive(&self) -> Result<(), RegionError> {
        match process_start_time(self.pid) {
            None => Err(RegionError::Stale(format!("process {} is gone", self.pid))),
            Some(t) if self.header.start_time != 0 && t != self.header.start_time => Err(
                RegionError::Stale(format!("pid {} now belongs to another process", self.pid)),
            ),
            Some(_) => Ok(()),
        }
    }

    /// The newest complete payload.
    ///
    /// Takes the newest slot, then the other, and tries again (1 ms
    /// apart, up to the attempts) only while a slot is being written or
    /// changed under the read; a slot whose descriptor is wrong and stays
    /// the same is not read twice. Nothing is allocated or read for a
    /// payload the file does not hold: a claim past the end of the file,
    /// over 256 MiB, or over a hole (a sparse file) is refused before the
    /// read.
    pub fn read_payload(&mut self) -> Result<Vec<u8>, RegionError> {
        // Why each slot could not be read, last seen.
        let mut why: [Option<String>; 2] = [None, None];
        let reasons = |why: &[Option<String>; 2]| {
            let w: Vec<&str> = why.iter().flatten().map(String::as_str).collect();
            if w.is_empty() {
                "nothing published yet".to_string()
            } else {
                w.join("; ")
            }
        };
        // The descriptor each slot was found bad with.
        let mut bad: [Option<SlotDesc>; 2] = [None, None];
        for attempt in 0..self.attempts {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            let header = read_header(&self.file)?;
            self.header = header;
            if header.closed {
                return Err(RegionError::Closed);
            }
            if header.published == 0 {
                continue;
            }
            let newest = (header.published % 2) as usize;
            let mut busy = false;
            for b in [newest, 1 - newest] {
                let desc = self.slot_desc(b)?;
                if bad[b] == Some(desc) {
                    continue;
                }
                match self.try_slot(b, desc) {
                    Ok(payload) => return Ok(payload),
                    Err(SlotFailure::Busy(w)) => {
                        busy = true;
                        why[b] = Some(w);
                    }
                    Err(SlotFailure::Bad(w)) => {
                        bad[b] = Some(desc);
                        why[b] = Some(w);
                    }
                }
            }
            if !busy {
                // Both slots are wrong and neither is being written: only
                // a new publish could change that, and the writer
                // alternates slots, so it would have shown as busy.
                return Err(RegionError::Inconsistent(reasons(&why)));
            }
        }
        Err(RegionError::Inconsistent(format!(
            "{} (after {} attempts)",
            reasons(&why),
            self.attempts
        )))
    }

    /// Waits until a snapshot taken after this call is published, up to
    /// `timeout`, and returns it: what a caller that has just changed
    /// variables (or wants current values) needs.
    pub fn read_fresh_payload(&mut self, timeout: Duration) -> Result<Vec<u8>, RegionError> {
        let start = std::time::Instant::now();
        let seen = read_header(&self.file)?.published;
        // The publish under way when we looked may have read the variables
        // before this call: wait for the one after it.
        while read_header(&self.file)?.published < seen + 2 {
            self.check_alive()?;
            if start.elapsed() > timeout {
                return Err(RegionError::Inconsistent(format!(
                    "no new snapshot within {timeout:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.read_payload()
    }

    fn slot_desc(&self, b: usize) -> Result<SlotDesc, RegionError> {
        let mut desc = [0u8; SLOT_LEN];
        self.file.read_exact_at(&mut desc, SlotDesc::at(b))?;
        Ok(SlotDesc::parse(&desc))
    }

    /// The seq word of slot `b` now.
    fn seq_now(&self, b: usize) -> Result<u64, SlotFailure> {
        let mut again = [0u8; 8];
        self.file
            .read_exact_at(&mut again, SlotDesc::at(b))
            .map_err(|e| SlotFailure::Bad(e.to_string()))?;
        Ok(u64::from_le_bytes(again))
    }

    fn try_slot(&self, b: usize, d: SlotDesc) -> Result<Vec<u8>, SlotFailure> {
        if d.seq == 0 {
            return Err(SlotFailure::Bad(format!("slot {b} was never written")));
        }
        if d.seq % 2 == 1 {
            return Err(SlotFailure::Busy(format!("slot {b} is being written")));
        }
        // Read after the descriptor: the writer grows the file before it
        // starts a slot, so a descriptor seen complete fits this size.
        let size = self
            .file
            .metadata()
            .map_err(|e| SlotFailure::Bad(e.to_string()))?
            .len();
        // A descriptor that changes under the read is the writer's doing;
        // one that stays is what the file says.
        let settled = |what: String| -> SlotFailure {
            match self.seq_now(b) {
                Ok(s) if s == d.seq => SlotFailure::Bad(what),
                Ok(_) => SlotFailure::Busy(format!("slot {b} changed while read")),
                Err(f) => f,
            }
        };
        if d.len > MAX_PAYLOAD {
            return Err(settled(format!(
                "slot {b} claims a payload of {} bytes, more than the {} a reader accepts",
                d.len, MAX_PAYLOAD
            )));
        }
        if d.offset < HEADER_LEN as u64 || d.offset.saturating_add(d.len) > size {
            return Err(settled(format!(
                "slot {b} points outside the region ({} bytes at {}, file of {size} bytes)",
                d.len, d.offset
            )));
        }
        if let Some(hole) = first_hole(&self.file, d.offset, d.len) {
            return Err(settled(format!(
                "slot {b} claims {} bytes at {}, but the file holds no data from {hole} \
                 (a sparse file: no writer leaves holes in a payload)",
                d.len, d.offset
            )));
        }
        fence(Ordering::SeqCst);
        let mut payload = vec![0u8; d.len as usize];
        self.file
            .read_exact_at(&mut payload, d.offset)
            .map_err(|e| settled(format!("slot {b}: {e}")))?;
        fence(Ordering::SeqCst);
        if self.seq_now(b)? != d.seq {
            return Err(SlotFailure::Busy(format!("slot {b} changed while read")));
        }
        if checksum(&payload) != d.checksum {
            return Err(SlotFailure::Bad(format!("slot {b}: checksum mismatch")));
        }
        Ok(payload)
    }
}

/// The first hole in `[offset, offset + len)` of `file`, if there is one
/// (`SEEK_HOLE`; a file system that cannot tell reports none).
fn first_hole(file: &File, offset: u64, len: u64) -> Option<u64> {
    if len == 0 {
        return None;
    }
    let at = libc::off_t::try_from(offset).ok()?;
    // SAFETY: lseek on an open descriptor has no memory effects; the
    // reader uses pread only, so moving the file position is harmless.
    let hole = unsafe { libc::lseek(file.as_raw_fd(), at, libc::SEEK_HOLE) };
    let hole = u64::try_from(hole).ok()?;
    (hole < offset + len).then_some(hole)
}

fn open_error(path: &Path, e: io::Error) -> RegionError {
    match e.kind() {
        io::ErrorKind::NotFound => RegionError::NotFound(path.to_path_buf()),
        _ if e.raw_os_error() == Some(libc::ELOOP) => {
            RegionError::Refused(format!("{} is a symbolic link", path.display()))
        }
        _ => RegionError::Io(e),
    }
}

pub(crate) fn read_header(file: &File) -> Result<RegionHeader, RegionError> {
    let mut b = [0u8; HEADER_LEN];
    file.read_exact_at(&mut b, 0).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => RegionError::Version("shorter than a region header".into()),
        _ => RegionError::Io(e),
    })?;
    parse_header(&b)
}
