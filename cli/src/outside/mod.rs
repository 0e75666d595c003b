//! The outside view: `pvar read`, `pvar top`, `pvar export` and
//! `pvar serve` read the variables of *another* process through the
//! shared-memory region its exporter publishes (see [`pvar::export`]);
//! the process opts in with `PVAR_EXPORT=1` (or calls
//! `pvar::export::Exporter::start`; `pvar demo` does by default).
//!
//! - this module: opening a process's region with messages that say what
//!   to do about a failure, telling "the process ended" apart from other
//!   errors, and the number formats every command shares;
//! - `json`: the JSON form of a snapshot (`pvar read --json`,
//!   `pvar export --format json`), a documented, versioned schema;
//! - `read`: one snapshot as a table or JSON, or the list of processes
//!   that export;
//! - `top`: the live view;
//! - `export`: one snapshot as OpenMetrics text or JSON;
//! - `serve`: a minimal HTTP server for Prometheus scrapes.

pub mod export;
pub mod json;
pub mod read;
pub mod serve;
pub mod top;

use std::time::Duration;

use pvar::export::region::{effective_uid, export_dir, process_start_time};
use pvar::export::{Number, Region, RegionError, Snapshot, VarSnapshot};

use crate::format::{group, group_signed};

/// The commands' result: an error is printed as `pvar: <message>` and
/// the exit status is 1.
pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// How long `--fresh` waits for a snapshot taken after the call.
pub const FRESH_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens the region of process `pid` (in `PVAR_EXPORT_DIR`, else
/// `/dev/shm`) and checks that its writer is still running: every failure
/// is a message that names the process and says why.
pub fn open(pid: u32) -> Res<Region> {
    let region = Region::open(pid).map_err(|e| describe(pid, e))?;
    region.check_alive().map_err(|e| describe(pid, e))?;
    Ok(region)
}

/// Reads the newest snapshot of `region` (`fresh`: one taken after the
/// call, waiting up to [`FRESH_TIMEOUT`]).
pub fn read(region: &mut Region, pid: u32, fresh: bool) -> Res<Snapshot> {
    let r = if fresh {
        pvar::export::read_fresh(region, FRESH_TIMEOUT)
    } else {
        pvar::export::read(region)
    };
    r.map_err(|e| describe(pid, e))
}

/// A region error as a message about process `pid`.
pub fn describe(pid: u32, e: RegionError) -> Box<dyn std::error::Error> {
    match e {
        RegionError::NotFound(path) => {
            let why = if process_start_time(pid).is_none() {
                "there is no such process".to_string()
            } else {
                format!(
                    "it runs but does not export its variables to {} (start it with \
                     PVAR_EXPORT=1, or have it call pvar::export::Exporter::start; a \
                     process of another user, or one exporting to another \
                     PVAR_EXPORT_DIR, is not visible)",
                    path.parent().unwrap_or(&path).display()
                )
            };
            format!(
                "process {pid}: no export region at {}: {why}",
                path.display()
            )
            .into()
        }
        RegionError::Closed => format!("process {pid} stopped exporting").into(),
        other => format!("process {pid}: {other}").into(),
    }
}

/// Whether `e` means the process is gone or stopped exporting (as
/// opposed to a region this reader cannot use).
pub fn is_gone(e: &RegionError) -> bool {
    matches!(
        e,
        RegionError::Stale(_) | RegionError::Closed | RegionError::NotFound(_)
    )
}

/// Whether the writer of `region` is gone: no such process, its pid
/// reused, or a zombie waiting for its parent.
pub fn writer_gone(region: &Region) -> bool {
    region.check_alive().is_err()
}

/// What to say when the region of `pid` says its exporter stopped or is
/// gone: `process <pid> ended`, or, if the process still runs a second
/// later (an exporter dropped while the process goes on), that it stopped
/// exporting.
pub fn ended_message(region: &Region, pid: u32) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        if writer_gone(region) {
            return format!("process {pid} ended");
        }
        if std::time::Instant::now() >= deadline {
            return format!("process {pid} stopped exporting (it still runs)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The regions of this user in the export directory: `(pid, path)`.
pub fn list_regions() -> (std::path::PathBuf, Vec<(u32, std::path::PathBuf)>) {
    let dir = export_dir();
    let regions = pvar::export::region::list_regions_of(&dir, effective_uid());
    (dir, regions)
}

/// How old `snap` is, seconds (see `ProcessInfo::age`).
pub fn age_s(snap: &Snapshot) -> f64 {
    snap.process.age().as_secs_f64()
}

/// `MPI_T_BIND_MPI_COMM` → `comm`, `MPI_T_BIND_NO_OBJECT` → `no_object`.
pub fn bind_name(v: &VarSnapshot) -> String {
    let n = v.bind.c_name();
    n.strip_prefix("MPI_T_BIND_MPI_")
        .or_else(|| n.strip_prefix("MPI_T_BIND_"))
        .unwrap_or(n)
        .to_ascii_lowercase()
}

/// The object of a bound instance as `comm 0x101`.
pub fn object_text(v: &VarSnapshot) -> Option<String> {
    v.object.map(|o| format!("{} {o:#x}", bind_name(v)))
}

/// The enumeration item name of `n` for a STATE variable with an
/// enumeration, if it names one.
pub fn item_name<'s>(snap: &'s Snapshot, v: &VarSnapshot, n: Number) -> Option<&'s str> {
    let e = snap.enumerations.get(v.enumeration?)?;
    let value = match n {
        Number::Signed(s) => s,
        Number::Unsigned(u) => i64::try_from(u).ok()?,
        Number::Double(_) => return None,
    };
    e.items
        .iter()
        .find(|(item, _)| i64::from(*item) == value)
        .map(|(_, name)| name.as_str())
}

/// A float in at most about 4 significant digits (integral values with
/// separators), for columns.
pub fn short_float(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a >= 1e15 {
        format!("{x:.3e}")
    } else if a >= 1000.0 {
        group_signed(x.round() as i64)
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".into()
    } else if a >= 0.001 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// A number for a column: integers with separators, doubles short.
pub fn number_text(n: Number) -> String {
    match n {
        Number::Unsigned(u) => group(u),
        Number::Signed(i) => group_signed(i),
        Number::Double(d) => short_float(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_shortened() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(group_signed(-1234), "-1,234");
        assert_eq!(short_float(0.5321), "0.532");
        assert_eq!(short_float(12.345), "12.35");
        assert_eq!(short_float(123456.7), "123,457");
        assert_eq!(short_float(0.0), "0");
    }

    #[test]
    fn a_missing_process_is_named_in_the_message() {
        let e = describe(
            999_999_999,
            RegionError::NotFound("/nowhere/pvar.0.999999999".into()),
        );
        let m = e.to_string();
        assert!(m.contains("999999999"), "{m}");
        assert!(m.contains("no such process"), "{m}");
    }
}
