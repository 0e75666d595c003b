//! Reports written whole: a temporary file beside the target, synced,
//! then renamed over it.

use crate::sync::Ordering;
use crate::sync::unmodelled::AtomicU64;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::aggregate::JobReport;

impl JobReport {
    /// Writes the JSON report ([`JobReport::write_json`]) to the file at
    /// `path` with [`write_atomically`]: a reader sees the previous report
    /// or this one, whole.
    pub fn write_json_file(&self, path: &Path) -> io::Result<()> {
        write_atomically(path, |mut w| self.write_json(&mut w))
    }
}

/// Writes the file at `path` with `write`, so that a reader never sees it
/// empty or half-written: `write` fills a new temporary file in the same
/// directory (`.<name>.<pid>.<n>.tmp`, created exclusively), which is
/// flushed, synced to disk and renamed over `path`; the directory is
/// synced too. Until the rename `path` keeps its previous contents, so a
/// process killed while writing leaves the last complete file (and at
/// most its temporary file). On error the temporary file is removed and
/// `path` is unchanged.
///
/// The rename needs `path`'s directory to be writable and on one file
/// system with the temporary file (which it is: same directory).
///
/// ```
/// let dir = std::env::temp_dir().join(format!("pvar-doc-atomic-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("report.json");
/// pvar::report::write_atomically(&path, |w| w.write_all(b"{}\n"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "{}\n");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let result = (|| {
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // The rename itself on disk. A directory that cannot be opened
        // or synced (some file systems refuse) leaves the rename done.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_previous_file_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("pvar-atomic-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        write_atomically(&path, |w| w.write_all(b"first")).unwrap();
        let err = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(write_atomically(&dir.join(".."), |_| Ok(())).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
