//! The export region: a file in shared memory (`/dev/shm`) owned by the
//! exporting process's user, mode 0600, holding the latest encoded
//! snapshot in one of two slots, and the code that writes it
//! ([`RegionWriter`]) and reads it from another process ([`Region`]).
//!
//! ```text
//! offset  size  field
//!      0     8  magic "PVAREXP\0"
//!      8     4  region version (REGION_VERSION)
//!     12     4  header length (256)
//!     16     4  pid of the writer
//!     20     4  uid of the writer
//!     24     8  the writer's start time (/proc/<pid>/stat field 22, clock ticks after boot)
//!     32     8  publishing interval, nanoseconds
//!     40     8  published: number of complete publishes (the newest is in slot published % 2)
//!     48     8  state: 0 publishing, 1 closed (the exporter stopped)
//!     64    32  slot 0: seq, offset, length, checksum of the payload
//!     96    32  slot 1
//!    128   128  reserved (zero)
//! offset(s)     payloads (see `wire.rs`), each slot's at its own offset
//! ```
//!
//! **Publishing** is a seqlock per slot with two slots: the writer fills
//! the slot that does *not* hold the newest snapshot — its `seq` odd while
//! it writes the payload, then the payload's offset, length and checksum,
//! then `seq` even again, then `published + 1`. A reader takes the newest
//! slot, reads `seq`, the payload, `seq` again, and keeps the payload only
//! if both `seq`s are the same even number and the checksum matches;
//! otherwise it tries the other slot (complete from the publish before)
//! and then again, a bounded number of times. A reader never waits for the
//! writer and the writer never waits for a reader.
//!
//! Both sides use `pread`/`pwrite` on the file, not a mapping: a reader of
//! a region that is truncated under it gets a short read (an error), never
//! a `SIGBUS`; it opens the file read-only, so it cannot write to the
//! process. Each side puts a fence between its system calls so that the
//! kernel's copies keep the seqlock's order; the checksum also catches a
//! torn `seq` word (the kernel may copy it bytewise) and any corruption.
//!
//! **Who may read.** The file is created `O_EXCL | O_NOFOLLOW`, mode 0600.
//! A reader refuses a file that is not a regular file, not owned by its
//! own effective uid, readable by others, or whose header names another
//! pid or uid; and a region whose writer is gone (no such process, or the
//! pid now belongs to a process started at another time) is *stale*.
//! Stale regions of the same user are removed by the next exporter.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::sync::{Ordering, fence};

/// The region layout's version. A reader refuses any other.
pub const REGION_VERSION: u32 = 1;

const MAGIC: [u8; 8] = *b"PVAREXP\0";
const HEADER_LEN: usize = 256;
const PUBLISHED: u64 = 40;
const STATE: u64 = 48;
const SLOTS: u64 = 64;
const SLOT_LEN: usize = 32;
/// Payloads larger than this are refused by a reader (a snapshot of a
/// million variables is ~64 MiB).
pub const MAX_PAYLOAD: u64 = 256 << 20;
/// How often a reader tries both slots before it gives up.
const READ_ATTEMPTS: u32 = 200;

/// The directory regions are created in: `$PVAR_EXPORT_DIR`, else
/// `/dev/shm` (memory, never written to disk), else the temporary
/// directory.
pub fn export_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PVAR_EXPORT_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// The region file of process `pid` of user `uid` in `dir`.
pub fn region_path(dir: &Path, uid: u32, pid: u32) -> PathBuf {
    dir.join(format!("pvar.{uid}.{pid}"))
}

/// The caller's effective uid.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why a region could not be read.
#[derive(Debug)]
pub enum RegionError {
    /// No region for that process (it does not export, or never ran).
    NotFound(PathBuf),
    /// The file is not one this reader may trust (owner, mode, kind).
    Refused(String),
    /// The writer is gone: the process ended, or its pid was reused.
    Stale(String),
    /// The exporter stopped publishing (the region is about to go).
    Closed,
    /// Not a region of a version this reader understands.
    Version(String),
    /// No consistent snapshot could be read (a corrupt region, or a writer
    /// that died mid-publish twice).
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

/// The header fields a reader uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The writer's pid.
    pub pid: u32,
    /// The writer's uid.
    pub uid: u32,
    /// The writer's start time (clock ticks after boot).
    pub start_time: u64,
    /// The publishing interval, nanoseconds.
    pub interval_ns: u64,
    /// Complete publishes so far.
    pub published: u64,
    /// Whether the exporter stopped.
    pub closed: bool,
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Parses and checks a header (its first 256 bytes or more).
pub fn parse_header(b: &[u8]) -> Result<Header, RegionError> {
    if b.len() < HEADER_LEN {
        return Err(RegionError::Version(format!(
            "{} bytes, shorter than a region header",
            b.len()
        )));
    }
    if b[..8] != MAGIC {
        return Err(RegionError::Version("not a pvar export region".into()));
    }
    let version = le32(b, 8);
    if version != REGION_VERSION {
        return Err(RegionError::Version(format!(
            "region version {version}, this reader understands {REGION_VERSION}"
        )));
    }
    if le32(b, 12) as usize != HEADER_LEN {
        return Err(RegionError::Version("unexpected header length".into()));
    }
    Ok(Header {
        pid: le32(b, 16),
        uid: le32(b, 20),
        start_time: le64(b, 24),
        interval_ns: le64(b, 32),
        published: le64(b, PUBLISHED as usize),
        closed: le64(b, STATE as usize) != 0,
    })
}

/// The payload checksum: a multiply-rotate hash over 8-byte words (the
/// length mixed in first), against torn and corrupt payloads — not
/// against a malicious writer, who owns the file anyway. About 8× faster
/// than a bytewise hash: it was most of a reader's `read_payload`.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let step = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(31);
    let mut words = bytes.chunks_exact(8);
    let mut h = step(0xcbf2_9ce4_8422_2325, bytes.len() as u64);
    for w in &mut words {
        h = step(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = step(h, u64::from_le_bytes(w));
    }
    h ^ (h >> 29)
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), or
/// `None` if there is no such process or it has ended (a zombie waiting
/// for its parent counts as ended).
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// The writing side: owns the file, publishes payloads, removes the file
/// when dropped.
#[derive(Debug)]
pub struct RegionWriter {
    file: File,
    path: PathBuf,
    published: u64,
    /// Per slot: seq, offset, capacity.
    slots: [(u64, u64, u64); 2],
    end: u64,
    removed: bool,
}

impl RegionWriter {
    /// Creates the region of this process in `dir` (removing stale regions
    /// of the same user there first).
    pub fn create(dir: &Path, interval_ns: u64) -> io::Result<RegionWriter> {
        let uid = effective_uid();
        let pid = std::process::id();
        remove_stale(dir, uid);
        let path = region_path(dir, uid, pid);
        // Written under a temporary name, then renamed into place: a reader
        // never sees a file without its header. In a sticky directory such
        // as /dev/shm the rename cannot replace another user's file.
        let tmp = dir.join(format!("pvar.{uid}.{pid}.new"));
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&tmp)
        };
        let file = match open() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Left by an earlier process with our pid that died while
                // creating its region: ours to replace if it is our user's.
                let meta = std::fs::symlink_metadata(&tmp)?;
                if meta.uid() != uid || !meta.file_type().is_file() {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!("{} exists and is not ours", tmp.display()),
                    ));
                }
                std::fs::remove_file(&tmp)?;
                open()?
            }
            r => r?,
        };
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        let mut header = vec![0u8; HEADER_LEN];
        header[..8].copy_from_slice(&MAGIC);
        header[8..12].copy_from_slice(&REGION_VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        header[16..20].copy_from_slice(&pid.to_le_bytes());
        header[20..24].copy_from_slice(&uid.to_le_bytes());
        let start = process_start_time(pid).unwrap_or(0);
        header[24..32].copy_from_slice(&start.to_le_bytes());
        header[32..40].copy_from_slice(&interval_ns.to_le_bytes());
        let placed = file
            .write_all_at(&header, 0)
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = placed {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(RegionWriter {
            file,
            path,
            published: 0,
            slots: [(0, 0, 0); 2],
            end: 4096,
            removed: false,
        })
    }

    /// The region's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Complete publishes so far.
    pub fn published(&self) -> u64 {
        self.published
    }

    /// Publishes `payload` as the newest snapshot (see the module
    /// documentation for the protocol).
    pub fn publish(&mut self, payload: &[u8]) -> io::Result<()> {
        let b = ((self.published + 1) % 2) as usize;
        let slot_at = SLOTS + (b * SLOT_LEN) as u64;
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
    pub fn close(&mut self) -> io::Result<()> {
        self.file.write_all_at(&1u64.to_le_bytes(), STATE)
    }

    /// Marks the region closed and removes its file (once; dropping the
    /// writer does it too).
    pub fn remove(&mut self) {
        if !self.removed {
            self.removed = true;
            let _ = self.close();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for RegionWriter {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the regions of user `uid` in `dir` whose writer is gone.
pub fn remove_stale(dir: &Path, uid: u32) -> usize {
    let mut removed = 0;
    for (pid, path) in list_regions_of(dir, uid) {
        let Ok(region) = Region::open_path(&path, pid) else {
            continue;
        };
        if matches!(region.check_alive(), Err(RegionError::Stale(_))) {
            removed += usize::from(std::fs::remove_file(&path).is_ok());
        }
    }
    removed
}

/// The regions of user `uid` in `dir`: `(pid, path)`, by pid.
pub fn list_regions_of(dir: &Path, uid: u32) -> Vec<(u32, PathBuf)> {
    let prefix = format!("pvar.{uid}.");
    let mut out: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let pid = name.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((pid, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// The region of another (or this) process, opened read-only.
#[derive(Debug)]
pub struct Region {
    file: File,
    pid: u32,
    header: Header,
    attempts: u32,
}

impl Region {
    /// Opens the region of process `pid` of the calling user in
    /// [`export_dir`].
    pub fn open(pid: u32) -> Result<Region, RegionError> {
        Self::open_path(&region_path(&export_dir(), effective_uid(), pid), pid)
    }

    /// Opens the region at `path`, expected to be written by `pid`. See
    /// the module documentation for what is refused.
    pub fn open_path(path: &Path, pid: u32) -> Result<Region, RegionError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => RegionError::NotFound(path.to_path_buf()),
                _ if e.raw_os_error() == Some(libc::ELOOP) => {
                    RegionError::Refused(format!("{} is a symbolic link", path.display()))
                }
                _ => RegionError::Io(e),
            })?;
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
                "{} belongs to uid {}, not to the reader (uid {me})",
                path.display(),
                meta.uid()
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
            pid,
            header,
            attempts: READ_ATTEMPTS,
        })
    }

    /// How many times [`Region::read_payload`] tries both slots (1 ms
    /// apart) before it reports the region inconsistent (default 200; at
    /// least 1).
    pub fn with_attempts(mut self, attempts: u32) -> Region {
        self.attempts = attempts.max(1);
        self
    }

    /// Reads the header again (e.g. to see whether the exporter closed).
    pub fn refresh_header(&mut self) -> Result<Header, RegionError> {
        self.header = read_header(&self.file)?;
        Ok(self.header)
    }

    /// The header as of opening (or the last read).
    pub fn header(&self) -> Header {
        self.header
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

    /// The newest complete payload (see the module documentation).
    pub fn read_payload(&mut self) -> Result<Vec<u8>, RegionError> {
        let mut why = String::from("nothing published yet");
        for attempt in 0..self.attempts {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let header = read_header(&self.file)?;
            self.header = header;
            if header.closed {
                return Err(RegionError::Closed);
            }
            if header.published == 0 {
                continue;
            }
            let size = self.file.metadata()?.len();
            let newest = (header.published % 2) as usize;
            for b in [newest, 1 - newest] {
                match self.try_slot(b, size) {
                    Ok(payload) => return Ok(payload),
                    Err(w) => why = w,
                }
            }
        }
        Err(RegionError::Inconsistent(format!(
            "{why} (after {} attempts)",
            self.attempts
        )))
    }

    /// Waits until a snapshot taken after this call is published, up to
    /// `timeout`, and returns it: what a caller that has just changed
    /// variables (or wants current values) needs.
    pub fn read_fresh_payload(
        &mut self,
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, RegionError> {
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
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.read_payload()
    }

    fn try_slot(&self, b: usize, size: u64) -> Result<Vec<u8>, String> {
        let at = SLOTS + (b * SLOT_LEN) as u64;
        let mut desc = [0u8; SLOT_LEN];
        self.file
            .read_exact_at(&mut desc, at)
            .map_err(|e| e.to_string())?;
        let seq = le64(&desc, 0);
        let (offset, len, sum) = (le64(&desc, 8), le64(&desc, 16), le64(&desc, 24));
        if seq == 0 || seq % 2 == 1 {
            return Err(format!("slot {b} is being written"));
        }
        if len > MAX_PAYLOAD || offset < HEADER_LEN as u64 || offset.saturating_add(len) > size {
            return Err(format!("slot {b} points outside the region"));
        }
        fence(Ordering::SeqCst);
        let mut payload = vec![0u8; len as usize];
        self.file
            .read_exact_at(&mut payload, offset)
            .map_err(|e| format!("slot {b}: {e}"))?;
        fence(Ordering::SeqCst);
        let mut again = [0u8; 8];
        self.file
            .read_exact_at(&mut again, at)
            .map_err(|e| e.to_string())?;
        if u64::from_le_bytes(again) != seq {
            return Err(format!("slot {b} changed while read"));
        }
        if checksum(&payload) != sum {
            return Err(format!("slot {b}: checksum mismatch"));
        }
        Ok(payload)
    }
}

fn read_header(file: &File) -> Result<Header, RegionError> {
    let mut b = [0u8; HEADER_LEN];
    file.read_exact_at(&mut b, 0).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => RegionError::Version("shorter than a region header".into()),
        _ => RegionError::Io(e),
    })?;
    parse_header(&b)
}
