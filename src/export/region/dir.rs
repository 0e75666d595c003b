//! Where regions live: one private directory per user inside the export
//! directory (`/dev/shm` unless `PVAR_EXPORT_DIR` says otherwise), so that
//! another local user can neither block an export nor put a file where a
//! reader looks.
//!
//! The directory is `pvar-<uid>`, owned by the user, mode 0700, and not a
//! symbolic link; regions are the files `<pid>` in it. If something else
//! already has that name — another user's directory, file, FIFO or link,
//! planted to block the export — the writer leaves it alone and makes
//! (or reuses) a directory of its own with an unpredictable name,
//! `pvar-<uid>.<16 hex digits>`, and says so. Readers look in every
//! directory named `pvar-<uid>` or `pvar-<uid>.*` that passes the same
//! checks, and report the ones they ignore with the path and its owner.
//!
//! Every check is made on an open descriptor (`openat` with
//! `O_NOFOLLOW | O_DIRECTORY`, then `fstat`), and files are then opened,
//! renamed and removed relative to it, so nothing can be swapped between
//! the check and the use, even in a directory that is not sticky.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The directory regions are created in: `$PVAR_EXPORT_DIR`, else
/// `/dev/shm` (memory, never written to disk), else the temporary
/// directory. Each user's regions are in a private directory inside it.
pub(crate) fn export_dir() -> PathBuf {
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

/// The caller's effective uid.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The name of the user directory of `uid` (before any fallback).
pub(crate) fn primary_name(uid: u32) -> String {
    format!("pvar-{uid}")
}

/// Something in the export directory with a name readers look at, that
/// they do not use: another user's directory planted under this user's
/// name, a file or link in its place, a directory open to others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// What is there.
    pub path: PathBuf,
    /// Why it is not used, naming its kind and owner.
    pub why: String,
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.why)
    }
}

/// A directory of this user, open and checked: owned by the effective
/// uid, mode 0700, reached without following a link.
#[derive(Debug)]
pub(crate) struct UserDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// Why a name in the export directory is not a usable user directory.
enum Unusable {
    /// Nothing has that name.
    Missing,
    /// Something else is there: what, and whose.
    InTheWay(String),
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a name"))
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Opens directory `path` (following links: the export directory is the
/// user's or the system's choice).
fn open_base(path: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the
    // call; the flags ask for a read-only directory descriptor.
    let fd = cvt(unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: `fd` was just returned by open and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor and `st` a valid, writable stat.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st)
}

/// `lstat` of `name` in `dir`, not following a link.
fn lstat_at(dir: &OwnedFd, name: &str) -> io::Result<libc::stat> {
    let c = c_name(name)?;
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open directory, `c` a valid NUL-terminated name
    // and `st` a valid, writable stat.
    cvt(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(st)
}

/// The kind of file a mode describes, in words.
pub(crate) fn kind_of(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => "a directory",
        libc::S_IFREG => "a regular file",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFCHR | libc::S_IFBLK => "a device",
        _ => "a file of unknown kind",
    }
}

/// `uid 1001 (alice)`, or `uid 1001` if the name cannot be found.
pub(crate) fn owner_text(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("uid {uid} ({name})"),
        None => format!("uid {uid}"),
    }
}

/// The login name of `uid` (only for messages).
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: an all-zero `passwd` is a valid value (null pointers).
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pw`, `buf` (with its length) and `found` are valid for
        // writes for the duration of the call; getpwuid_r fills `pw` with
        // pointers into `buf`.
        let r = unsafe {
            libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        if r == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if r != 0 || found.is_null() || pw.pw_name.is_null() {
            return None;
        }
        // SAFETY: on success `pw_name` points to a NUL-terminated string
        // in `buf`, which is alive here.
        let name = unsafe { std::ffi::CStr::from_ptr(pw.pw_name) };
        return Some(name.to_string_lossy().into_owned());
    }
}

/// Eight random bytes for a fallback directory's name.
fn random_suffix() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: `b` is valid for 8 bytes of writes.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == 8 {
        return u64::from_le_bytes(b);
    }
    // No getrandom: not secret, but not guessable ahead of time either.
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t.rotate_left(17) ^ (u64::from(std::process::id()) << 32) ^ (&b as *const _ as u64)
}

impl UserDir {
    /// The directory's path (for messages and for readers that print it).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` in `base` as a user directory of the effective uid:
    /// not a link, a directory, ours. `fix_mode`: a directory of ours
    /// that is open to others is made 0700 (the writer's case); otherwise
    /// it is refused.
    fn verify(
        base_fd: &OwnedFd,
        base: &Path,
        name: &str,
        fix_mode: bool,
    ) -> Result<UserDir, Unusable> {
        let path = base.join(name);
        let in_the_way = |what: String| Unusable::InTheWay(what);
        let describe = || match lstat_at(base_fd, name) {
            Ok(st) => format!("{} of {}", kind_of(st.st_mode), owner_text(st.st_uid)),
            Err(e) => e.to_string(),
        };
        let c = c_name(name).map_err(|e| in_the_way(e.to_string()))?;
        // SAFETY: `base_fd` is an open directory and `c` a valid
        // NUL-terminated name; O_NOFOLLOW | O_DIRECTORY refuse a link or a
        // non-directory, O_NONBLOCK keeps a FIFO from blocking the open.
        let fd = unsafe {
            libc::openat(
                base_fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY
                    | libc::O_DIRECTORY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOENT) => Unusable::Missing,
                Some(libc::ELOOP | libc::ENOTDIR) => in_the_way(format!(
                    "{}, not a directory of {}",
                    describe(),
                    owner_text(effective_uid())
                )),
                _ => in_the_way(format!("{} that cannot be opened: {e}", describe())),
            });
        }
        // SAFETY: `fd` was just returned by openat and is owned by nobody
        // else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = fstat(&fd).map_err(|e| in_the_way(e.to_string()))?;
        let me = effective_uid();
        if st.st_uid != me {
            return Err(in_the_way(format!(
                "a directory of {}, not of {}",
                owner_text(st.st_uid),
                owner_text(me)
            )));
        }
        if st.st_mode & 0o077 != 0 {
            if !fix_mode {
                return Err(in_the_way(format!(
                    "open to other users (mode {:o}); regions are read only from a directory \
                     of mode 700",
                    st.st_mode & 0o777
                )));
            }
            // SAFETY: `fd` is an open directory of ours.
            cvt(unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) })
                .map_err(|e| in_the_way(format!("cannot make it private: {e}")))?;
        }
        Ok(UserDir { fd, path })
    }

    /// The directory an exporter of this user writes its region in,
    /// inside `base`: `pvar-<uid>`, made if missing; if something else
    /// has that name, an earlier fallback directory of this user or a new
    /// one with an unpredictable name. The second value is the notice to
    /// give when a fallback was needed (it names what is in the way and
    /// its owner).
    pub(crate) fn for_writer(base: &Path) -> io::Result<(UserDir, Option<String>)> {
        let base_fd = open_base(base).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open the export directory {}: {e}", base.display()),
            )
        })?;
        let uid = effective_uid();
        let primary = primary_name(uid);
        let made = mkdir_at(&base_fd, &primary);
        let why = match Self::verify(&base_fd, base, &primary, true) {
            Ok(d) => return Ok((d, None)),
            Err(Unusable::InTheWay(why)) => why,
            Err(Unusable::Missing) => match made {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                    format!("cannot be created: {e}")
                }
                _ => "vanished after it was created".to_string(),
            },
        };
        let notice = |d: &UserDir| {
            format!(
                "{} is in the way ({why}): exporting to {} instead",
                base.join(&primary).display(),
                d.path.display()
            )
        };
        for name in fallback_names(base, uid) {
            if let Ok(d) = Self::verify(&base_fd, base, &name, true) {
                let n = notice(&d);
                return Ok((d, Some(n)));
            }
        }
        let mut last = None;
        for _ in 0..16 {
            let name = format!("{primary}.{:016x}", random_suffix());
            match mkdir_at(&base_fd, &name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
            if let Ok(d) = Self::verify(&base_fd, base, &name, true) {
                let n = notice(&d);
                return Ok((d, Some(n)));
            }
        }
        let also = last.map_or_else(String::new, |e| format!(" ({e})"));
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "cannot export: {} {why}, and no private directory could be made in {}{also}",
                base.join(&primary).display(),
                base.display()
            ),
        ))
    }

    /// The directories readers of this user look in, inside `base`
    /// (`pvar-<uid>` first), and the names they ignore with the reason.
    pub(crate) fn for_readers(base: &Path) -> (Vec<UserDir>, Vec<Ignored>) {
        let base_fd = match open_base(base) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
            Err(e) => {
                return (
                    Vec::new(),
                    vec![Ignored {
                        path: base.to_path_buf(),
                        why: format!("the export directory cannot be opened: {e}"),
                    }],
                );
            }
        };
        let uid = effective_uid();
        let mut names = vec![primary_name(uid)];
        names.extend(fallback_names(base, uid));
        let (mut dirs, mut ignored) = (Vec::new(), Vec::new());
        for name in names {
            match Self::verify(&base_fd, base, &name, false) {
                Ok(d) => dirs.push(d),
                Err(Unusable::Missing) => {}
                Err(Unusable::InTheWay(why)) => ignored.push(Ignored {
                    path: base.join(&name),
                    why,
                }),
            }
        }
        (dirs, ignored)
    }

    /// The names of the entries in the directory (those that are UTF-8).
    pub(crate) fn entries(&self) -> Vec<String> {
        // The descriptor's own path under /proc: the directory checked,
        // whatever happened to its name since.
        let fd_path = format!("/proc/self/fd/{}", self.fd.as_raw_fd());
        std::fs::read_dir(fd_path)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect()
    }

    /// Opens `name` in the directory with `flags` (`O_CLOEXEC` and
    /// `O_NOFOLLOW` added) and, when creating, `mode`.
    pub(crate) fn open_file(
        &self,
        name: &str,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> io::Result<File> {
        let c = c_name(name)?;
        // SAFETY: `self.fd` is an open directory, `c` a valid
        // NUL-terminated name; `mode` is passed as the variadic argument
        // openat reads when O_CREAT is given.
        let fd = cvt(unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                libc::c_uint::from(mode),
            )
        })?;
        // SAFETY: `fd` was just returned by openat and is owned by nobody
        // else.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Renames `from` to `to` inside the directory.
    pub(crate) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (f, t) = (c_name(from)?, c_name(to)?);
        // SAFETY: both names are valid NUL-terminated strings and both
        // directory descriptors are the same open directory.
        cvt(unsafe {
            libc::renameat(
                self.fd.as_raw_fd(),
                f.as_ptr(),
                self.fd.as_raw_fd(),
                t.as_ptr(),
            )
        })
        .map(drop)
    }

    /// Removes file `name` from the directory.
    pub(crate) fn unlink(&self, name: &str) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: `self.fd` is an open directory and `c` a valid
        // NUL-terminated name.
        cvt(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(drop)
    }

    /// A second descriptor of the directory (for removing a region at
    /// process exit).
    pub(crate) fn try_clone_fd(&self) -> io::Result<OwnedFd> {
        self.fd.try_clone()
    }
}

/// Removes `name` from the directory open as `dir` (at process exit,
/// where only the descriptor is kept).
pub(crate) fn unlink_in(dir: &OwnedFd, name: &CString) {
    // SAFETY: `dir` is an open directory and `name` a valid NUL-terminated
    // name; a failure is of no consequence at exit.
    unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
}

/// Makes directory `name` in `base_fd`, mode 0700 (before the umask).
fn mkdir_at(base_fd: &OwnedFd, name: &str) -> io::Result<()> {
    let c = c_name(name)?;
    // SAFETY: `base_fd` is an open directory and `c` a valid
    // NUL-terminated name.
    cvt(unsafe { libc::mkdirat(base_fd.as_raw_fd(), c.as_ptr(), 0o700) }).map(drop)
}

/// The names of `base` that look like fallback directories of `uid`,
/// `pvar-<uid>.<suffix>`, sorted.
fn fallback_names(base: &Path, uid: u32) -> Vec<String> {
    let prefix = format!("{}.", primary_name(uid));
    let mut names: Vec<String> = std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.len() > prefix.len() && n.starts_with(&prefix))
        .collect();
    names.sort();
    names
}
