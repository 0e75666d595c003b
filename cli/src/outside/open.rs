//! Opening another process's export region: messages that name the
//! process and say what to do, "the process ended" told apart from other
//! errors, the list of processes that export.

use std::time::Duration;

use pvar::export::{Listing, Region, RegionError, Snapshot, list_exporting, process_runs};

use crate::format::terminal_safe;

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

/// The caller's effective uid.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A region error as a message about process `pid` (made safe for a
/// terminal: paths and reasons can carry names from other processes).
pub fn describe(pid: u32, e: RegionError) -> Box<dyn std::error::Error> {
    terminal_safe(&describe_text(pid, e)).into_owned().into()
}

fn describe_text(pid: u32, e: RegionError) -> String {
    match e {
        RegionError::NotFound(path) => {
            let why = if !process_runs(pid) {
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
            let mut text = format!(
                "process {pid}: no export region at {}: {why}",
                path.display()
            );
            for i in list_exporting().ignored {
                text.push_str(&format!("; ignored {i}"));
            }
            text
        }
        RegionError::Closed => format!("process {pid} stopped exporting"),
        other => format!("process {pid}: {other}"),
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

/// The regions of this user in the export directory, and what was
/// ignored there.
pub fn list_regions() -> Listing {
    list_exporting()
}

#[cfg(test)]
mod tests {
    use super::*;

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
