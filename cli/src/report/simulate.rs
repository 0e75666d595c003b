//! `pvar report simulate`: the report's reduction and writers over
//! synthetic ranks in one process, rank 0's side timed and measured.
//!
//! Each synthetic rank looks like a rank of an MPI job under the pvar
//! interposer: its unbound variables (waits, tests, probes, requests, the
//! two per-peer arrays of one element per rank) and the eight
//! communicator-bound ones on five communicators — `MPI_COMM_WORLD`,
//! `MPI_COMM_SELF`, a duplicate of the world, and the rank's row and
//! column of a √n × √n grid (so the job has 2√n + 3 communicators, whose
//! labels list their members as the interposer does). Rank `r` sends
//! `100 + r mod 13` messages of 4 KiB to each of its four grid neighbours.
//!
//! The ranks but 0 run from the highest down, each through
//! [`pvar::report::tree::reduce`] over in-memory mailboxes (every partial
//! is encoded and decoded, exactly as over MPI). The partials they send
//! rank 0 are written to files, and rank 0 runs alone in a fresh process
//! (this command again, with the hidden `--rank0 DIR`): its own input and
//! partial, the ⌈log2 n⌉ partials it receives (read one at a time, as MPI
//! delivers them), the finished report, the text and the JSON written
//! beside them. Its memory is that process's peak resident set (`VmHWM`)
//! less what it held before rank 0's part began (`VmRSS`).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pvar::export::{CategorySnapshot, Number, ProcessInfo, Snapshot, VarSnapshot};
use pvar::report::tree::{self, Link};
use pvar::report::{JobReport, Partial, ProfileSeries, RankInput, ReportError, ReportOptions};
use pvar::{BindKind, Datatype, PvarClass, Verbosity};

use super::Res;
use crate::format::group;

/// Options of `pvar report simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// Numbers of ranks to simulate, one job each.
    #[arg(value_name = "RANKS", default_values_t = [1_000u32, 10_000, 100_000])]
    ranks: Vec<u32>,
    /// Keep each job's reports here (`report-<ranks>.json` and `.txt`);
    /// by default they go to a temporary directory, removed at the end.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Internal: run rank 0's part of the job of RANKS ranks whose
    /// partials for rank 0 are in DIR, and print what it measured.
    #[arg(long, value_name = "DIR", hide = true)]
    rank0: Option<PathBuf>,
}

/// The collective kinds, as the interposer names its arrays' elements.
const COLL_KINDS: [&str; 15] = [
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "scatter",
    "scatterv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
    "scan",
    "exscan",
];

/// Runs `pvar report simulate`.
pub fn run(args: Args) -> Res<()> {
    if args.ranks.iter().any(|&n| n < 2) {
        return Err("a simulated job has at least 2 ranks".into());
    }
    if let Some(dir) = &args.rank0 {
        let &[n] = args.ranks.as_slice() else {
            return Err("--rank0 takes one number of ranks".into());
        };
        return rank0(n, dir);
    }
    let temporary = args.out.is_none();
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("pvar-report-simulate-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir)?;
    println!(
        "{:>8}  {:>12}  {:>11}  {:>9}  {:>11}  {:>9}  {:>11}  {:>10}  {:>9}  {:>14}",
        "ranks",
        "rank 0 time",
        "own input",
        "receive",
        "finish",
        "write",
        "rank 0 peak",
        "received",
        "JSON",
        "all ranks CPU"
    );
    let result = (|| -> Res<()> {
        for &n in &args.ranks {
            let m = simulate(n, &dir)?;
            println!(
                "{:>8}  {:>12}  {:>11}  {:>9}  {:>11}  {:>9}  {:>11}  {:>10}  {:>9}  {:>14}",
                group(u64::from(n)),
                ms(m.rank0_total()),
                ms(m.own),
                ms(m.receive),
                ms(m.finish),
                ms(m.write),
                mib(m.peak_bytes),
                mib(m.received_bytes),
                mib(m.json_bytes),
                format!("{:.1} s", m.others.as_secs_f64()),
            );
            std::io::stdout().flush()?;
        }
        Ok(())
    })();
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("reports in {}", dir.display());
    }
    result
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// What one simulated job measured.
struct Measured {
    /// Rank 0: its snapshot stand-in and partial.
    own: Duration,
    /// Rank 0: receiving (reading), decoding and merging its children's
    /// partials.
    receive: Duration,
    /// Rank 0: the report from the job's partial.
    finish: Duration,
    /// Rank 0: the text and the JSON written.
    write: Duration,
    /// Rank 0: its process's peak resident set less its start.
    peak_bytes: u64,
    /// The partials rank 0 received.
    received_bytes: u64,
    json_bytes: u64,
    /// Every other rank's part, summed (in a job: spread over the ranks).
    others: Duration,
}

impl Measured {
    fn rank0_total(&self) -> Duration {
        self.own + self.receive + self.finish + self.write
    }
}

/// The interposer's report options (element names of the per-collective
/// arrays, the time in MPI and in collectives profiled).
pub fn interposer_options() -> ReportOptions {
    ReportOptions {
        element_names: [
            "pvar_mpi_coll_calls",
            "pvar_mpi_coll_bytes",
            "pvar_mpi_coll_time",
        ]
        .iter()
        .map(|a| {
            (
                a.to_string(),
                COLL_KINDS.iter().map(|k| k.to_string()).collect(),
            )
        })
        .collect(),
        profile: vec![
            ProfileSeries {
                name: "time in MPI".into(),
                class: Some(PvarClass::Timer),
                prefix: "pvar_mpi_".into(),
            },
            ProfileSeries {
                name: "time in collectives".into(),
                class: Some(PvarClass::Timer),
                prefix: "pvar_mpi_coll_time".into(),
            },
        ],
        ..ReportOptions::default()
    }
}

/// Partials in flight, by (from, to); `me` is the rank running.
#[derive(Default)]
struct Mailboxes {
    boxes: HashMap<(u32, u32), Vec<u8>>,
    me: u32,
}

impl Link for Mailboxes {
    fn send(&mut self, to: u32, bytes: &[u8]) -> Result<(), ReportError> {
        self.boxes.insert((self.me, to), bytes.to_vec());
        Ok(())
    }
    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError> {
        self.boxes
            .remove(&(from, self.me))
            .ok_or_else(|| ReportError::Transport(format!("nothing from rank {from}")))
    }
}

fn simulate(n: u32, dir: &std::path::Path) -> Res<Measured> {
    let options = interposer_options();
    let mut job = Synthetic::new(n as usize);
    let mut link = Mailboxes::default();
    let started = Instant::now();
    for rank in (1..n).rev() {
        link.me = rank;
        let mine = Partial::of_rank(job.input(rank as usize), rank, n, &options);
        tree::reduce(rank, n, 0, mine, &options, &mut link)?;
    }
    let others = started.elapsed();
    drop(job);
    // What rank 0 receives, for its own process.
    let inbox = dir.join(format!("to-rank0-of-{n}"));
    std::fs::create_dir_all(&inbox)?;
    for ((from, to), bytes) in link.boxes.drain() {
        if to != 0 {
            return Err(format!("a partial from {from} to {to} was never received").into());
        }
        std::fs::write(inbox.join(format!("from-{from}")), bytes)?;
    }
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(["report", "simulate", "--rank0"])
        .arg(&inbox)
        .arg(n.to_string())
        .output()?;
    let _ = std::fs::remove_dir_all(&inbox);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "rank 0's process failed: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let field = |k: &str| -> Res<u64> {
        stdout
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("rank 0's process did not say {k}: {stdout}").into())
    };
    Ok(Measured {
        own: Duration::from_nanos(field("own_ns")?),
        receive: Duration::from_nanos(field("receive_ns")?),
        finish: Duration::from_nanos(field("finish_ns")?),
        write: Duration::from_nanos(field("write_ns")?),
        peak_bytes: field("peak_kib")?.saturating_sub(field("start_kib")?) * 1024,
        received_bytes: field("received_bytes")?,
        json_bytes: field("json_bytes")?,
        others,
    })
}

/// Partials read from files `from-<rank>` in a directory, one at a time.
struct Inbox<'a> {
    dir: &'a std::path::Path,
    bytes: u64,
}

impl Link for Inbox<'_> {
    fn send(&mut self, to: u32, _: &[u8]) -> Result<(), ReportError> {
        Err(ReportError::Transport(format!(
            "rank 0 sends nothing (to {to})"
        )))
    }
    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError> {
        let b = std::fs::read(self.dir.join(format!("from-{from}")))
            .map_err(|e| ReportError::Transport(format!("rank {from}'s partial: {e}")))?;
        self.bytes += b.len() as u64;
        Ok(b)
    }
}

/// Rank 0's part of a simulated job of `n` ranks, in a process of its
/// own; prints `key=value` figures.
fn rank0(n: u32, dir: &std::path::Path) -> Res<()> {
    let options = interposer_options();
    let start_kib = status_kib("VmRSS")?;
    let t0 = Instant::now();
    let mut job = Synthetic::new(n as usize);
    let mine = Partial::of_rank(job.input(0), 0, n, &options);
    drop(job);
    let t1 = Instant::now();
    let mut inbox = Inbox { dir, bytes: 0 };
    let partial =
        tree::reduce(0, n, 0, mine, &options, &mut inbox)?.ok_or("rank 0 has no report")?;
    let t2 = Instant::now();
    let report = JobReport::from_partial(partial, options);
    let t3 = Instant::now();
    let base = dir.parent().unwrap_or(dir);
    let json = base.join(format!("report-{n}.json"));
    let text = base.join(format!("report-{n}.txt"));
    report.write_json_file(&json)?;
    pvar::report::write_atomically(&text, |mut w| report.write_text(&mut w))?;
    let t4 = Instant::now();
    let peak_kib = status_kib("VmHWM")?;
    if report.ranks.reporting != u64::from(n) || report.problems.is_some() {
        return Err(format!(
            "the simulated report of {n} ranks holds {} ranks: {:?}",
            report.ranks.reporting, report.problems
        )
        .into());
    }
    println!(
        "RANK0 own_ns={} receive_ns={} finish_ns={} write_ns={} start_kib={start_kib} \
         peak_kib={peak_kib} received_bytes={} json_bytes={}",
        (t1 - t0).as_nanos(),
        (t2 - t1).as_nanos(),
        (t3 - t2).as_nanos(),
        (t4 - t3).as_nanos(),
        inbox.bytes,
        std::fs::metadata(&json)?.len()
    );
    Ok(())
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/self/status").into())
}

/// The interposer's communicator-bound variables: name, class, elements.
const BOUND: [(&str, PvarClass, usize); 8] = [
    ("pvar_mpi_send_calls", PvarClass::Counter, 1),
    ("pvar_mpi_send_bytes", PvarClass::Aggregate, 1),
    ("pvar_mpi_recv_calls", PvarClass::Counter, 1),
    ("pvar_mpi_recv_bytes", PvarClass::Aggregate, 1),
    ("pvar_mpi_coll_calls", PvarClass::Counter, 15),
    ("pvar_mpi_coll_bytes", PvarClass::Aggregate, 15),
    ("pvar_mpi_p2p_time", PvarClass::Timer, 1),
    ("pvar_mpi_coll_time", PvarClass::Timer, 15),
];

/// The communicators' objects: world, self, a duplicate, row, column.
const COMMS: [u64; 5] = [1, 2, 3, 4, 5];

/// Index of the per-peer arrays in the snapshot.
const PEER_MSGS: usize = 6;
const PEER_BYTES: usize = 7;

/// A synthetic job's ranks, one input at a time (the same buffers
/// rewritten for each rank: the per-peer arrays are `n` long).
struct Synthetic {
    n: usize,
    cols: usize,
    input: RankInput,
    /// The peers the last rank wrote to.
    last_peers: Vec<usize>,
    /// The label of each grid column.
    col_labels: Vec<String>,
}

impl Synthetic {
    fn new(n: usize) -> Synthetic {
        let cols = (n as f64).sqrt().ceil() as usize;
        let var =
            |name: &str, class: PvarClass, count: usize, bind: BindKind, object: Option<u64>| {
                VarSnapshot {
                    index: 0,
                    name: name.to_string(),
                    description: format!("{name} (simulated)"),
                    class,
                    datatype: if class == PvarClass::Timer {
                        Datatype::Double
                    } else {
                        Datatype::UnsignedLongLong
                    },
                    verbosity: Verbosity::UserBasic,
                    bind,
                    object,
                    object_label: None,
                    readonly: true,
                    continuous: true,
                    atomic: false,
                    active: true,
                    category: None,
                    enumeration: None,
                    values: vec![Number::Unsigned(0); count],
                    marks: class
                        .is_watermark()
                        .then(|| vec![Number::Unsigned(0); count]),
                }
            };
        let none = BindKind::NoObject;
        let mut variables = vec![
            var("pvar_mpi_wait_calls", PvarClass::Counter, 1, none, None),
            var("pvar_mpi_test_calls", PvarClass::Counter, 1, none, None),
            var("pvar_mpi_probe_calls", PvarClass::Counter, 1, none, None),
            var("pvar_mpi_wait_time", PvarClass::Timer, 1, none, None),
            var(
                "pvar_mpi_requests_outstanding",
                PvarClass::Level,
                1,
                none,
                None,
            ),
            var(
                "pvar_mpi_requests_outstanding_max",
                PvarClass::HighWatermark,
                1,
                none,
                None,
            ),
            var("pvar_mpi_peer_send_msgs", PvarClass::Counter, n, none, None),
            var(
                "pvar_mpi_peer_send_bytes",
                PvarClass::Aggregate,
                n,
                none,
                None,
            ),
        ];
        variables[PEER_MSGS].category = Some(0);
        variables[PEER_BYTES].category = Some(0);
        for (name, class, count) in BOUND {
            for object in COMMS {
                variables.push(var(name, class, count, BindKind::Comm, Some(object)));
            }
        }
        for (i, v) in variables.iter_mut().enumerate() {
            v.index = i;
        }
        let col_labels = (0..cols)
            .map(|c| {
                let members: Vec<String> = (c..n).step_by(cols).map(|r| r.to_string()).collect();
                if members.len() == 1 {
                    format!("comm[{}]", members[0])
                } else {
                    format!("comm[{}]", members.join(","))
                }
            })
            .collect();
        Synthetic {
            n,
            cols,
            input: RankInput {
                rank: None,
                snapshot: Snapshot {
                    process: ProcessInfo::default(),
                    variables,
                    categories: vec![CategorySnapshot {
                        name: "pvar_mpi_peer".into(),
                        description: "per destination rank".into(),
                        pvars: vec![PEER_MSGS, PEER_BYTES],
                        subcategories: Vec::new(),
                    }],
                    enumerations: Vec::new(),
                },
                labels: Vec::new(),
                elapsed: None,
            },
            last_peers: Vec::new(),
            col_labels,
        }
    }

    /// Rank `r`'s four grid neighbours (left, right, up, down, wrapping).
    fn peers(&self, r: usize) -> [usize; 4] {
        let (n, c) = (self.n, self.cols);
        let (row, col) = (r / c, r % c);
        let row_len = c.min(n - row * c);
        let rows = n.div_ceil(c);
        let up_row = (row + rows - 1) % rows;
        let down_row = (row + 1) % rows;
        let in_row = |rr: usize| if rr * c + col < n { rr * c + col } else { col };
        [
            row * c + (col + row_len - 1) % row_len,
            row * c + (col + 1) % row_len,
            in_row(up_row),
            in_row(down_row),
        ]
    }

    /// Rank `r`'s input: messages `100 + r mod 13` of 4 KiB to each
    /// neighbour; collective calls and times that vary with the rank.
    fn input(&mut self, r: usize) -> &RankInput {
        let per_peer = 100 + (r % 13) as u64;
        let sent = 4 * per_peer;
        let peers = self.peers(r);
        let vars = &mut self.input.snapshot.variables;
        for &p in &self.last_peers {
            vars[PEER_MSGS].values[p] = Number::Unsigned(0);
            vars[PEER_BYTES].values[p] = Number::Unsigned(0);
        }
        for &p in &peers {
            let add = |x: Number, d: u64| Number::Unsigned(x.as_f64() as u64 + d);
            vars[PEER_MSGS].values[p] = add(vars[PEER_MSGS].values[p], per_peer);
            vars[PEER_BYTES].values[p] = add(vars[PEER_BYTES].values[p], per_peer * 4096);
        }
        self.last_peers = peers.to_vec();
        let u = Number::Unsigned;
        let t = |x: f64| Number::Double(x);
        let skew = 1.0 + (r % 17) as f64 / 10.0;
        vars[0].values[0] = u(sent);
        vars[1].values[0] = u(r as u64 % 5);
        vars[2].values[0] = u(1);
        vars[3].values[0] = t(0.002 * skew);
        vars[4].values[0] = u(0);
        vars[5].values[0] = u(8);
        vars[5].marks = Some(vec![u(8 + (r % 3) as u64)]);
        for (b, (_, class, count)) in BOUND.iter().enumerate() {
            for (c, _) in COMMS.iter().enumerate() {
                let v = &mut vars[8 + b * COMMS.len() + c];
                let on_world = c == 0;
                for (k, x) in v.values.iter_mut().enumerate() {
                    *x = match (b, *count) {
                        (0 | 2, _) if on_world => u(sent),
                        (1 | 3, _) if on_world => u(sent * 4096),
                        (4, _) if k == 3 => u(50 + c as u64),
                        (5, _) if k == 3 => u(8 * (50 + c as u64)),
                        (6, _) if on_world => t(0.001 * skew),
                        (7, _) if k == 3 => t(0.0005 * skew * (c + 1) as f64),
                        _ if *class == PvarClass::Timer => t(0.0),
                        _ => u(0),
                    };
                }
            }
        }
        let row = r / self.cols;
        let row_end = ((row + 1) * self.cols).min(self.n) - 1;
        let row_label = if row * self.cols == row_end {
            format!("comm[{row_end}]")
        } else {
            format!("comm[{}-{row_end}]", row * self.cols)
        };
        self.input.labels = vec![
            (1, "MPI_COMM_WORLD".into()),
            (2, "MPI_COMM_SELF".into()),
            (3, format!("comm[0-{}]", self.n - 1)),
            (4, row_label),
            (5, self.col_labels[r % self.cols].clone()),
        ];
        self.input.snapshot.process = ProcessInfo {
            pid: 100_000 + r as u32,
            program: "simulated".into(),
            engine_version: "simulated".into(),
            sequence: 1,
            monotonic_ns: 0,
            unix_ns: 1_800_000_000_000_000_000 + r as u64,
            live_threads: 1,
        };
        self.input.elapsed = Some(Duration::from_millis(1000 + (r % 100) as u64));
        self.input.rank = Some(r as u32);
        &self.input
    }
}
