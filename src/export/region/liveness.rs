//! Whether a region's writer still runs: its pid names a live process
//! that started when the writer did (a pid can be reused).

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`, clock
/// ticks after boot), or `None` if there is no such process or it has
/// ended (a zombie waiting for its parent counts as ended).
pub(crate) fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(fields.next(), Some("Z" | "X")) {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Whether process `pid` runs (not a zombie).
pub fn process_runs(pid: u32) -> bool {
    process_start_time(pid).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_reaped_one_does_not() {
        assert!(process_start_time(std::process::id()).is_some_and(|t| t > 0));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_runs(pid));
    }
}
