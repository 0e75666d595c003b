//! What `/metrics` answers: the newest snapshot of one process, or of
//! every process of this user that exports (`--all`), with the freshness
//! rules.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use pvar::export::exposition::{self, Format, Source};
use pvar::export::{Region, Snapshot, list_exporting};

use super::super::open::{describe, is_gone, writer_gone};

/// A snapshot older than this many publishing intervals is not served...
pub const STALE_INTERVALS: u32 = 5;
/// ... nor one older than this, whatever the interval.
pub const STALE_FLOOR: Duration = Duration::from_secs(2);

/// The age past which a snapshot of a process publishing every
/// `interval` is too old: `max_age`, else 5 intervals and at least 2 s.
pub fn stale_after(interval: Duration, max_age: Option<Duration>) -> Duration {
    max_age.unwrap_or_else(|| (interval * STALE_INTERVALS).max(STALE_FLOOR))
}

/// What a scrape of one process gave.
pub enum Scrape {
    /// The exposition.
    Text(String),
    /// The snapshot is too old: the process stopped publishing (frozen,
    /// or busy past its interval). The message.
    TooOld(String),
    /// No snapshot could be read (a corrupt region); the message.
    Unreadable(String),
    /// The process ended or stopped exporting.
    Gone,
}

/// Reads the newest snapshot of `region` and writes it in `format`,
/// unless it is too old.
pub fn scrape_one(
    region: &mut Region,
    pid: u32,
    format: Format,
    max_age: Option<Duration>,
) -> Scrape {
    if writer_gone(region) {
        return Scrape::Gone;
    }
    match pvar::export::read(region) {
        Ok(snap) => {
            let limit = stale_after(region.interval(), max_age);
            let age = snap.process.age();
            if age > limit {
                Scrape::TooOld(format!(
                    "the snapshot of process {pid} is {:.1} s old, more than {:.1} s: the \
                     process has stopped publishing (stopped or frozen?)\n",
                    age.as_secs_f64(),
                    limit.as_secs_f64()
                ))
            } else {
                Scrape::Text(exposition::write(&snap, format))
            }
        }
        Err(e) if is_gone(&e) => Scrape::Gone,
        Err(e) => Scrape::Unreadable(format!("{}\n", describe(pid, e))),
    }
}

/// One process followed by `--all`.
struct Followed {
    region: Region,
    /// Its MPI rank, if its environment says it.
    rank: Option<u32>,
    /// Its program, from the last snapshot read.
    program: String,
}

/// The processes `--all` follows, by region file.
#[derive(Default)]
pub struct All {
    followed: HashMap<PathBuf, Followed>,
}

/// One process as `--all` saw it at a scrape.
pub struct Seen {
    pub pid: u32,
    pub program: String,
    pub rank: Option<u32>,
    pub snapshot: Option<Snapshot>,
}

impl All {
    /// Every process of this user that exports, read now: the ones that
    /// ended (or stopped exporting) are dropped; the ones whose snapshot
    /// is too old or unreadable are kept without a snapshot (they show as
    /// `pvar_export_up 0`).
    pub fn scan(&mut self, max_age: Option<Duration>) -> Vec<Seen> {
        let listing = list_exporting();
        let mut seen = Vec::new();
        let mut live: HashMap<PathBuf, Followed> = HashMap::new();
        for l in listing.regions {
            let mut f = match self.followed.remove(&l.path) {
                Some(f) => f,
                None => match Region::open_path(&l.path, l.pid) {
                    Ok(region) => Followed {
                        region,
                        rank: mpi_rank(l.pid),
                        program: String::new(),
                    },
                    Err(_) => continue,
                },
            };
            if writer_gone(&f.region) {
                continue;
            }
            let snapshot = match pvar::export::read(&mut f.region) {
                Ok(s) => {
                    f.program = s.process.program.clone();
                    let limit = stale_after(f.region.interval(), max_age);
                    (s.process.age() <= limit).then_some(s)
                }
                Err(e) if is_gone(&e) => continue,
                Err(_) => None,
            };
            seen.push(Seen {
                pid: l.pid,
                program: f.program.clone(),
                rank: f.rank,
                snapshot,
            });
            live.insert(l.path, f);
        }
        self.followed = live;
        seen
    }
}

/// The exposition of every process `seen`, labelled `pid`, `program` and
/// `rank` (where known).
pub fn write_all(seen: &[Seen], format: Format) -> String {
    let sources: Vec<Source<'_>> = seen
        .iter()
        .map(|s| {
            let mut labels = vec![
                ("pid".to_string(), s.pid.to_string()),
                ("program".to_string(), s.program.clone()),
            ];
            if let Some(r) = s.rank {
                labels.push(("rank".to_string(), r.to_string()));
            }
            Source {
                labels,
                snapshot: s.snapshot.as_ref(),
            }
        })
        .collect();
    exposition::write_sources(&sources, format)
}

/// The MPI rank of process `pid` as its launcher set it in its
/// environment (`OMPI_COMM_WORLD_RANK` for Open MPI, `PMI_RANK` for
/// MPICH's Hydra, `PMIX_RANK`, `PALS_RANKID`, `SLURM_PROCID` under
/// `srun`), read from `/proc/<pid>/environ` (a process of this user).
pub fn mpi_rank(pid: u32) -> Option<u32> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    rank_in(&env)
}

fn rank_in(environ: &[u8]) -> Option<u32> {
    const KEYS: [&str; 5] = [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "PALS_RANKID",
        "SLURM_PROCID",
    ];
    let vars: HashMap<&[u8], &[u8]> = environ
        .split(|&b| b == 0)
        .filter_map(|kv| {
            let eq = kv.iter().position(|&b| b == b'=')?;
            Some((&kv[..eq], &kv[eq + 1..]))
        })
        .collect();
    KEYS.iter().find_map(|k| {
        let v = vars.get(k.as_bytes())?;
        std::str::from_utf8(v).ok()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_come_from_the_launchers_variables() {
        assert_eq!(rank_in(b"A=1\0PMI_RANK=3\0B=2\0"), Some(3));
        assert_eq!(
            rank_in(b"OMPI_COMM_WORLD_RANK=7\0SLURM_PROCID=1\0"),
            Some(7)
        );
        assert_eq!(rank_in(b"PMI_RANK=x\0"), None);
        assert_eq!(rank_in(b""), None);
    }

    #[test]
    fn snapshots_go_stale_after_five_intervals_or_two_seconds() {
        assert_eq!(stale_after(Duration::from_millis(200), None), STALE_FLOOR);
        assert_eq!(
            stale_after(Duration::from_secs(1), None),
            Duration::from_secs(5)
        );
        assert_eq!(
            stale_after(Duration::from_secs(1), Some(Duration::from_millis(300))),
            Duration::from_millis(300)
        );
    }
}
