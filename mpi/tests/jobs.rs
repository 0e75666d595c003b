//! Real MPI jobs under the interposer.
//!
//! For every MPI flavour whose build exists in `target/mpi/<flavour>/`
//! (`scripts/mpi-build.sh`; `PVAR_MPI_BUILD` overrides the directory), the
//! example programs of `mpi/examples/` run under `mpiexec` with
//! `libpvar_mpi.so` preloaded. Each program counts what it does itself and
//! prints `COUNTED` lines; the report the interposer writes at
//! `MPI_Finalize` (`PVAR_MPI_REPORT_JSON`, schema `pvar.report.v1`) must
//! hold exactly those figures — per rank, per communicator, per peer. The
//! in-process tool (`live_tool`) checks MPI_T while the job communicates;
//! the `pvar` CLI (`read`, `top`) reads a rank from outside while the job
//! waits; a signal to one rank brings a report from all of them.
//!
//! Without any build: the tests pass after a loud `SKIPPED:` line on
//! standard error, unless `PVAR_REQUIRE_MPI=1` (then they fail).
//! Every `mpiexec` runs under a deadline; on expiry its process group is
//! terminated and the test fails.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one job may take before it is killed.
const JOB_DEADLINE: Duration = Duration::from_secs(120);

/// The collective kinds, in the order of the `pvar_mpi_coll_*` arrays.
const COLL_KINDS: usize = 15;
/// `MPI_Allreduce`'s element of the `pvar_mpi_coll_*` arrays.
const ALLREDUCE: usize = 3;

// ---------------------------------------------------------------------------
// Where things are

/// The repository's root (this package is `mpi/` in it).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("mpi/ has a parent")
        .to_path_buf()
}

/// `target/mpi/`, or `PVAR_MPI_BUILD`.
fn build_root() -> PathBuf {
    match std::env::var_os("PVAR_MPI_BUILD").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("target").join("mpi"),
    }
}

fn required() -> bool {
    std::env::var("PVAR_REQUIRE_MPI").is_ok_and(|v| v == "1")
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// One MPI library the interposer was built for.
#[derive(Clone, Debug)]
struct Flavour {
    /// `mpich` or `openmpi`.
    name: &'static str,
    /// `target/mpi/<name>/`: the libraries and the example programs.
    dir: PathBuf,
}

impl Flavour {
    fn is_openmpi(&self) -> bool {
        self.name == "openmpi"
    }

    fn lib(&self) -> PathBuf {
        self.dir.join("libpvar_mpi.so")
    }

    fn lib_off(&self) -> PathBuf {
        self.dir.join("libpvar_mpi_off.so")
    }

    fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The rank counts to run the ring with: MPICH busy-polls, so 2 ranks
    /// only on a small machine; Open MPI 2 and 4 (oversubscribed).
    fn ring_sizes(&self) -> &'static [usize] {
        if self.is_openmpi() { &[2, 4] } else { &[2] }
    }

    /// `mpiexec` for `n` ranks of `program args`, with `env` set in every
    /// rank (and only there: the launcher itself is not preloaded).
    fn mpiexec(&self, n: usize, env: &[(&str, String)], program: &Path, args: &[&str]) -> Command {
        self.mpiexec_mpmd(&[(n, env, program, args)])
    }

    /// `mpiexec` for several groups of ranks (`A : B` on the command line),
    /// ranks numbered in this order.
    fn mpiexec_mpmd(&self, groups: &[RankGroup<'_>]) -> Command {
        let mut cmd = Command::new(format!("mpiexec.{}", self.name));
        if self.is_openmpi() {
            cmd.args(["--allow-run-as-root", "--oversubscribe"]);
        }
        for (g, &(n, env, program, args)) in groups.iter().enumerate() {
            if g > 0 {
                cmd.arg(":");
            }
            cmd.args(["-n", &n.to_string()]);
            for (k, v) in env {
                if self.is_openmpi() {
                    cmd.arg("-x").arg(format!("{k}={v}"));
                } else {
                    cmd.args(["-env", k, v]);
                }
            }
            cmd.arg(program).args(args);
        }
        cmd
    }
}

/// Ranks of one program in a job: `(ranks, env, program, args)`.
type RankGroup<'a> = (usize, &'a [(&'a str, String)], &'a Path, &'a [&'a str]);

/// The flavours built and launchable here. Prints `SKIPPED:` (or panics
/// under `PVAR_REQUIRE_MPI=1`) when there is none.
fn flavours(test: &str) -> Vec<Flavour> {
    let root = build_root();
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for name in ["mpich", "openmpi"] {
        let f = Flavour {
            name,
            dir: root.join(name),
        };
        let launcher = format!("mpiexec.{name}");
        if !f.lib().is_file() {
            missing.push(format!("{} (no {})", name, f.lib().display()));
        } else if !on_path(&launcher) {
            missing.push(format!("{name} ({launcher} is not on PATH)"));
        } else {
            found.push(f);
        }
    }
    if found.is_empty() {
        let why = format!(
            "{test}: no MPI flavour is built and launchable: {} — run scripts/mpi-build.sh \
             (or scripts/mpi-tests.sh)",
            missing.join("; ")
        );
        if required() {
            panic!("PVAR_REQUIRE_MPI=1 but {why}");
        }
        eprintln!("\n*** SKIPPED: {why} ***\n");
    } else if !missing.is_empty() {
        let why = format!("{test}: not built: {}", missing.join("; "));
        if required() {
            panic!("PVAR_REQUIRE_MPI=1 but {why}");
        }
        eprintln!("*** SKIPPED (partly): {why} ***");
    }
    found
}

/// A fresh temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pvar-mpi-jobs-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------
// Running a job under a deadline

/// What a job's streams and end said.
enum Event {
    Out(String),
    Err(String),
    OutClosed,
    ErrClosed,
    Exit(std::io::Result<ExitStatus>),
}

/// A job started in its own process group.
struct Running {
    what: String,
    pgid: i32,
    events: mpsc::Receiver<Event>,
    stdout: Vec<String>,
    stderr: Vec<String>,
    out_open: bool,
    err_open: bool,
    status: Option<ExitStatus>,
    deadline: Instant,
}

/// What a finished job printed.
struct Finished {
    what: String,
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    fn assert_success(&self) {
        assert!(
            self.status.success(),
            "{} failed: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what,
            self.status,
            self.stdout,
            self.stderr
        );
    }

    fn context(&self) -> String {
        format!(
            "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what, self.stdout, self.stderr
        )
    }
}

fn forward_lines(stream: impl Read + Send + 'static, tx: mpsc::Sender<Event>, out: bool) {
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                    let ev = if out {
                        Event::Out(line)
                    } else {
                        Event::Err(line)
                    };
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(if out {
            Event::OutClosed
        } else {
            Event::ErrClosed
        });
    });
}

impl Running {
    fn start(mut cmd: Command) -> Running {
        let what = format!("{cmd:?}");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let pgid = child.id() as i32;
        let (tx, events) = mpsc::channel();
        forward_lines(child.stdout.take().expect("piped"), tx.clone(), true);
        forward_lines(child.stderr.take().expect("piped"), tx.clone(), false);
        thread::spawn(move || {
            let _ = tx.send(Event::Exit(child.wait()));
        });
        Running {
            what,
            pgid,
            events,
            stdout: Vec::new(),
            stderr: Vec::new(),
            out_open: true,
            err_open: true,
            status: None,
            deadline: Instant::now() + JOB_DEADLINE,
        }
    }

    /// Takes the next event, or kills the job and panics at the deadline.
    fn next(&mut self) -> bool {
        if self.status.is_some() && !self.out_open && !self.err_open {
            return false;
        }
        let left = self.deadline.saturating_duration_since(Instant::now());
        match self.events.recv_timeout(left) {
            Ok(Event::Out(l)) => self.stdout.push(l),
            Ok(Event::Err(l)) => self.stderr.push(l),
            Ok(Event::OutClosed) => self.out_open = false,
            Ok(Event::ErrClosed) => self.err_open = false,
            Ok(Event::Exit(s)) => {
                self.status = Some(s.unwrap_or_else(|e| panic!("waiting for {}: {e}", self.what)))
            }
            Err(_) => self.kill_and_panic("the deadline passed"),
        }
        true
    }

    /// Reads output until `cond` holds on the stdout lines so far.
    fn wait_for_stdout(&mut self, what: &str, cond: impl Fn(&[String]) -> bool) {
        while !cond(&self.stdout) {
            if self.status.is_some() {
                self.kill_and_panic(&format!("the job ended before {what}"));
            }
            self.next();
        }
    }

    fn kill_and_panic(&mut self, why: &str) -> ! {
        terminate_group(self.pgid);
        panic!(
            "{}: {why}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what,
            self.stdout.join("\n"),
            self.stderr.join("\n")
        );
    }

    fn finish(mut self) -> Finished {
        while self.next() {}
        Finished {
            what: self.what.clone(),
            status: self.status.expect("finished"),
            stdout: self.stdout.join("\n"),
            stderr: self.stderr.join("\n"),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.status.is_none() {
            terminate_group(self.pgid);
        }
    }
}

/// SIGTERM to the group (the launchers pass it on to the ranks), then
/// SIGKILL once the group is gone or after 5 s.
fn terminate_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has
    // no memory-safety preconditions.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let until = Instant::now() + Duration::from_secs(5);
    // SAFETY: signal 0 only checks whether the group still exists.
    while Instant::now() < until && unsafe { libc::kill(-pgid, 0) } == 0 {
        thread::yield_now();
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

fn run(cmd: Command) -> Finished {
    Running::start(cmd).finish()
}

// ---------------------------------------------------------------------------
// The programs' own counts

/// One `COUNTED` line: what rank `rank` did on communicator `comm`
/// (`world`, `dup`, `split`) or, for `comm` `*`, regardless of one.
#[derive(Clone, Debug)]
struct Counted {
    rank: usize,
    comm: String,
    fields: BTreeMap<String, Vec<u64>>,
}

impl Counted {
    fn get(&self, field: &str) -> &[u64] {
        self.fields
            .get(field)
            .unwrap_or_else(|| panic!("COUNTED line without {field}: {self:?}"))
    }

    fn one(&self, field: &str) -> u64 {
        self.get(field)[0]
    }
}

fn parse_counted(stdout: &str) -> Vec<Counted> {
    let mut out = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with("COUNTED ")) {
        let mut rank = None;
        let mut comm = None;
        let mut fields = BTreeMap::new();
        for kv in line.split_whitespace().skip(1) {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("bad COUNTED field {kv:?} in {line:?}"));
            match k {
                "rank" => rank = Some(v.parse().expect("rank")),
                "comm" => comm = Some(v.to_string()),
                _ => {
                    let nums = v
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| s.parse::<u64>())
                        .collect::<Result<Vec<_>, _>>()
                        .unwrap_or_else(|e| panic!("bad number in {kv:?} of {line:?}: {e}"));
                    fields.insert(k.to_string(), nums);
                }
            }
        }
        out.push(Counted {
            rank: rank.expect("COUNTED without rank"),
            comm: comm.expect("COUNTED without comm"),
            fields,
        });
    }
    out
}

/// The label the interposer gives a communicator with these world ranks
/// (`members` in the communicator's rank order): `MPI_COMM_WORLD` for the
/// world, otherwise `comm[<sorted world ranks as ranges>]`.
fn comm_label(tag: &str, members: &[u64]) -> String {
    if tag == "world" {
        return "MPI_COMM_WORLD".into();
    }
    let mut m = members.to_vec();
    m.sort_unstable();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < m.len() {
        let mut j = i;
        while j + 1 < m.len() && m[j + 1] == m[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", m[i], m[j])
        } else {
            m[i].to_string()
        });
        i = j + 1;
    }
    format!("comm[{}]", parts.join(","))
}

// ---------------------------------------------------------------------------
// The report

/// A `pvar.report.v2` document.
struct Report {
    json: Value,
}

/// What one rank holds of one element: its value.
type PerRank = BTreeMap<usize, u64>;

impl Report {
    fn read(path: &Path, context: &str) -> Report {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("no report JSON at {}: {e}\n{context}", path.display()));
        Report::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}\n{context}"))
    }

    /// A complete report, or why the text is not one.
    fn parse(text: &str) -> Result<Report, String> {
        let json: Value =
            serde_json::from_str(text).map_err(|e| format!("the report is not JSON: {e}"))?;
        if json["schema"] != "pvar.report.v2" {
            return Err(format!("schema {}", json["schema"]));
        }
        Ok(Report { json })
    }

    fn nranks(&self) -> usize {
        self.json["nranks"].as_u64().expect("nranks") as usize
    }

    fn variables(&self) -> &[Value] {
        self.json["variables"].as_array().expect("variables")
    }

    fn skipped_zero(&self) -> Vec<&str> {
        self.json["skipped_zero"]
            .as_array()
            .expect("skipped_zero")
            .iter()
            .filter_map(Value::as_str)
            .collect()
    }

    /// Variable `name`: unbound (`label` `None`) or its instance for the
    /// object labelled `label`.
    fn find(&self, name: &str, label: Option<&str>) -> Option<&Value> {
        self.variables().iter().find(|v| {
            v["name"] == name
                && match label {
                    None => v["instance"].is_null(),
                    Some(l) => v["instance"]["label"] == l,
                }
        })
    }

    /// The figures of element `element` of `name` (@`label`); `None` when
    /// the report leaves the variable out as all-zero (which
    /// `skipped_zero` must then say) or the element (zero on every rank:
    /// the JSON lists the others).
    fn element(&self, name: &str, label: Option<&str>, element: usize) -> Option<&Value> {
        let Some(v) = self.find(name, label) else {
            let key = match label {
                None => name.to_string(),
                Some(l) => format!("{name}@{l}"),
            };
            assert!(
                self.skipped_zero().contains(&key.as_str()),
                "{key} is neither reported nor listed as all-zero in {}",
                self.json
            );
            return None;
        };
        assert!(
            element < v["count"].as_u64().unwrap_or(0) as usize,
            "{name} has no element {element}: {v}"
        );
        v["elements"]
            .as_array()
            .expect("elements")
            .iter()
            .find(|e| e["index"] == element)
    }

    /// Field `field` (`min`, `max`, `total`…) of an element's figures, as
    /// a float (0 for a variable left out as all-zero).
    fn stat(&self, name: &str, label: Option<&str>, element: usize, field: &str) -> f64 {
        self.element(name, label, element)
            .map_or(0.0, |e| e[field].as_f64().unwrap_or(0.0))
    }

    /// The matrix of per-peer array `name`.
    fn matrix(&self, name: &str) -> Option<&Value> {
        self.json["matrices"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == name)
    }

    /// The profile series `name`.
    fn profile(&self, name: &str) -> Option<&Value> {
        self.json["profile"]
            .as_array()?
            .iter()
            .find(|p| p["name"] == name)
    }
}

/// The figures a set of per-rank values must have: (ranks, total, min,
/// min rank, max, max rank), ties to the lowest rank.
fn expected_stats(values: &PerRank) -> (u64, u64, u64, u64, u64, u64) {
    let n = values.len() as u64;
    let total = values.values().sum();
    let (min_rank, min) = values
        .iter()
        .min_by_key(|(r, v)| (**v, **r))
        .map_or((0, 0), |(r, v)| (*r as u64, *v));
    let (max_rank, max) = values
        .iter()
        .max_by_key(|(r, v)| (**v, std::cmp::Reverse(**r)))
        .map_or((0, 0), |(r, v)| (*r as u64, *v));
    (n, total, min, min_rank, max, max_rank)
}

/// Checks that `stats` (a JSON object with the statistics fields) are
/// those of `values`: ranks, total (unless `with_total` is false), min
/// and max with their ranks, the mean.
fn check_stats(
    bad: &mut Vec<String>,
    what: &str,
    stats: &Value,
    values: &PerRank,
    with_total: bool,
) {
    let (n, total, min, min_rank, max, max_rank) = expected_stats(values);
    let got = (
        stats["ranks"].as_u64(),
        if with_total {
            stats["total"].as_u64()
        } else {
            Some(total)
        },
        stats["min"].as_u64(),
        stats["min_rank"].as_u64(),
        stats["max"].as_u64(),
        stats["max_rank"].as_u64(),
    );
    let want = (
        Some(n),
        Some(total),
        Some(min),
        Some(min_rank),
        Some(max),
        Some(max_rank),
    );
    if got != want {
        bad.push(format!(
            "{what}: (ranks, total, min, @rank, max, @rank) = {got:?}, the program counted \
             {want:?} from {values:?}"
        ));
    }
    let mean = stats["mean"].as_f64().unwrap_or(f64::NAN);
    if n > 0 && (mean - total as f64 / n as f64).abs() > 1e-9 * (total as f64).max(1.0) {
        bad.push(format!(
            "{what}: mean {mean}, the program's {}",
            total as f64 / n as f64
        ));
    }
}

/// Checks an element's figures against the values the ranks counted
/// (present on exactly the ranks of `values`); all-zero values may have
/// left the variable out.
fn check_element(
    bad: &mut Vec<String>,
    report: &Report,
    name: &str,
    label: Option<&str>,
    element: usize,
    values: &PerRank,
) {
    let what = format!(
        "{name}{}[{element}]",
        label.map(|l| format!("@{l}")).unwrap_or_default()
    );
    match report.element(name, label, element) {
        Some(e) => check_stats(bad, &what, e, values, true),
        None => {
            if values.values().any(|&v| v != 0) {
                bad.push(format!(
                    "{what}: left out as all-zero, the program counted {values:?}"
                ));
            }
        }
    }
}

/// Checks every figure of the report against the `COUNTED` lines: per
/// variable, communicator label and element, the number of ranks, the
/// total, min and max with their ranks and the mean of what the ranks
/// counted; the per-peer matrices cell by cell, their row totals and
/// largest pairs; the per-rank profiles of what each rank sent.
fn check_report_against_counted(
    report: &Report,
    counted: &[Counted],
    nranks: usize,
    context: &str,
) {
    assert_eq!(report.nranks(), nranks, "nranks\n{context}");
    assert_eq!(
        report.json["ranks"]["reporting"].as_u64(),
        Some(nranks as u64),
        "every rank reports\n{context}"
    );
    assert!(report.json["problems"].is_null(), "problems\n{context}");
    let ranks: HashSet<usize> = counted.iter().map(|c| c.rank).collect();
    assert_eq!(
        ranks.len(),
        nranks,
        "COUNTED lines of every rank expected\n{context}"
    );
    // (variable, label, element) -> rank -> value.
    let mut want: BTreeMap<(String, Option<String>, usize), PerRank> = BTreeMap::new();
    let mut put = |name: &str, label: Option<&str>, element: usize, rank: usize, v: u64| {
        want.entry((name.to_string(), label.map(str::to_string), element))
            .or_default()
            .insert(rank, v);
    };
    let mut marks = PerRank::new();
    let mut rows: Vec<(usize, Vec<u64>, Vec<u64>)> = Vec::new();
    let mut waited = 0;
    for c in counted {
        let r = c.rank;
        if c.comm == "*" {
            for name in ["wait_calls", "test_calls", "probe_calls"] {
                put(&format!("pvar_mpi_{name}"), None, 0, r, c.one(name));
            }
            put(
                "pvar_mpi_requests_outstanding",
                None,
                0,
                r,
                c.one("requests_outstanding"),
            );
            marks.insert(r, c.one("requests_max"));
            waited += usize::from(c.one("wait_calls") > 0);
            let msgs = c.get("peer_send_msgs").to_vec();
            let bytes = c.get("peer_send_bytes").to_vec();
            assert_eq!(msgs.len(), nranks, "peer list length\n{context}");
            rows.push((r, msgs, bytes));
            continue;
        }
        let label = comm_label(&c.comm, c.get("members"));
        let l = Some(label.as_str());
        for name in ["send_calls", "send_bytes", "recv_calls", "recv_bytes"] {
            put(&format!("pvar_mpi_{name}"), l, 0, r, c.one(name));
        }
        let calls = c.get("coll_calls");
        let bytes = c.get("coll_bytes");
        assert_eq!(calls.len(), COLL_KINDS, "coll_calls length\n{context}");
        for k in 0..COLL_KINDS {
            put("pvar_mpi_coll_calls", l, k, r, calls[k]);
            put("pvar_mpi_coll_bytes", l, k, r, bytes[k]);
        }
    }
    let mut bad = Vec::new();
    for ((name, label, element), values) in &want {
        check_element(&mut bad, report, name, label.as_deref(), *element, values);
    }
    // The requests watermark: its figures are of the ranks' marks.
    match report.element("pvar_mpi_requests_outstanding_max", None, 0) {
        Some(e) => {
            check_stats(
                &mut bad,
                "pvar_mpi_requests_outstanding_max",
                e,
                &marks,
                false,
            );
            let (_, _, _, _, max, max_rank) = expected_stats(&marks);
            if (e["mark"].as_u64(), e["mark_rank"].as_u64()) != (Some(max), Some(max_rank)) {
                bad.push(format!(
                    "pvar_mpi_requests_outstanding_max: mark {} @{}, the program's {max} @{max_rank}",
                    e["mark"], e["mark_rank"]
                ));
            }
        }
        None => assert!(marks.values().all(|&m| m == 0), "{context}"),
    }
    // Ranks that waited spent time in MPI_Wait*.
    if waited == nranks && report.stat("pvar_mpi_wait_time", None, 0, "min") <= 0.0 {
        bad.push("pvar_mpi_wait_time: a rank that waited shows no time".into());
    }
    // Per-peer matrices: exact at these sizes, cell by cell.
    rows.sort_by_key(|r| r.0);
    for (name, pick) in [
        ("pvar_mpi_peer_send_msgs", 1),
        ("pvar_mpi_peer_send_bytes", 2),
    ] {
        let counted_rows: Vec<&Vec<u64>> = rows
            .iter()
            .map(|r| if pick == 1 { &r.1 } else { &r.2 })
            .collect();
        if counted_rows.iter().all(|row| row.iter().all(|&x| x == 0)) {
            continue;
        }
        let Some(m) = report.matrix(name) else {
            bad.push(format!("no matrix of {name}"));
            continue;
        };
        assert_eq!(m["exact"], true, "{name} at {nranks} ranks\n{context}");
        let got: Vec<Vec<u64>> = m["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                r.as_array()
                    .expect("row")
                    .iter()
                    .map(|x| x.as_u64().unwrap_or(u64::MAX))
                    .collect()
            })
            .collect();
        let want_rows: Vec<Vec<u64>> = counted_rows.iter().map(|r| r.to_vec()).collect();
        if got != want_rows {
            bad.push(format!(
                "{name}: matrix {got:?}, the program counted {want_rows:?}"
            ));
        }
        let sent: PerRank = want_rows
            .iter()
            .enumerate()
            .map(|(r, row)| (r, row.iter().sum()))
            .collect();
        check_stats(
            &mut bad,
            &format!("{name} row totals"),
            &m["sent"],
            &sent,
            true,
        );
        // The largest pairs: by value, then (from, to).
        let mut pairs: Vec<(u64, usize, usize)> = want_rows
            .iter()
            .enumerate()
            .flat_map(|(from, row)| {
                row.iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0)
                    .map(move |(to, v)| (*v, from, to))
            })
            .collect();
        pairs.sort_by_key(|&(v, from, to)| (std::cmp::Reverse(v), from, to));
        let k = report.json["options"]["top_pairs"]
            .as_u64()
            .expect("top_pairs") as usize;
        pairs.truncate(k);
        let top: Vec<(u64, usize, usize)> = m["top_pairs"]
            .as_array()
            .expect("top_pairs")
            .iter()
            .map(|p| {
                (
                    p["value"].as_u64().unwrap_or(0),
                    p["from"].as_u64().unwrap_or(0) as usize,
                    p["to"].as_u64().unwrap_or(0) as usize,
                )
            })
            .collect();
        if top != pairs {
            bad.push(format!(
                "{name}: largest pairs {top:?}, the program's {pairs:?}"
            ));
        }
        // The profile of what each rank sent: one block per rank.
        match report.profile(name) {
            Some(p) => {
                let blocks: PerRank = p["blocks"]
                    .as_array()
                    .expect("blocks")
                    .iter()
                    .map(|b| {
                        assert_eq!(b["first_rank"], b["last_rank"], "{b}");
                        (
                            b["first_rank"].as_u64().unwrap_or(0) as usize,
                            b["total"].as_u64().unwrap_or(0),
                        )
                    })
                    .collect();
                if blocks != sent {
                    bad.push(format!(
                        "profile {name}: {blocks:?}, the program sent {sent:?}"
                    ));
                }
            }
            None => bad.push(format!("no profile of {name}")),
        }
    }
    assert!(
        bad.is_empty(),
        "the report differs from what the program counted:\n  {}\n{context}",
        bad.join("\n  ")
    );
}

/// Runs `program args` on `n` ranks with the interposer `lib` preloaded
/// and the JSON report requested; returns the job and its report.
fn run_reported(
    f: &Flavour,
    lib: &Path,
    n: usize,
    program: &str,
    args: &[&str],
    extra_env: &[(&str, String)],
) -> (Finished, Report, TempDir) {
    let tmp = TempDir::new(program);
    let json = tmp.path().join("report.json");
    let mut env = vec![
        ("LD_PRELOAD", lib.display().to_string()),
        ("PVAR_MPI_REPORT_JSON", json.display().to_string()),
    ];
    // Every timer on, so that the tests can check they moved, unless the
    // test chooses (the default, `coll`, times collectives only). An empty
    // value in `extra_env` leaves that variable out of the job's
    // environment.
    if !extra_env.iter().any(|(k, _)| *k == "PVAR_MPI_TIME") {
        env.push(("PVAR_MPI_TIME", "all".to_string()));
    }
    env.extend(extra_env.iter().filter(|(_, v)| !v.is_empty()).cloned());
    let job = run(f.mpiexec(n, &env, &f.program(program), args));
    job.assert_success();
    let report = Report::read(&json, &job.context());
    (job, report, tmp)
}

// ---------------------------------------------------------------------------
// The tests

#[test]
fn default_timing_times_collectives_only() {
    for f in flavours("default_timing_times_collectives_only") {
        for (setting, p2p_timed) in [(None, false), (Some("all"), true), (Some("off"), false)] {
            let env: Vec<(&str, String)> = setting
                .map(|s| vec![("PVAR_MPI_TIME", s.to_string())])
                // Empty: no PVAR_MPI_TIME in the job (the library's default).
                .unwrap_or_else(|| vec![("PVAR_MPI_TIME", String::new())]);
            let (job, report, _tmp) =
                run_reported(&f, &f.lib(), 2, "ring", &["-i", "4", "-n", "16"], &env);
            let ctx = format!("PVAR_MPI_TIME={setting:?}\n{}", job.context());
            let coll_timed = setting != Some("off");
            let world = Some("MPI_COMM_WORLD");
            // Timed: every rank's time is positive (the min); not timed:
            // no rank's is (the max).
            let timed = |name: &str, label: Option<&str>, element: usize, on: bool| {
                let field = if on { "min" } else { "max" };
                report.stat(name, label, element, field) > 0.0
            };
            assert_eq!(
                timed("pvar_mpi_p2p_time", world, 0, p2p_timed),
                p2p_timed,
                "p2p time\n{ctx}"
            );
            assert_eq!(
                timed("pvar_mpi_wait_time", None, 0, p2p_timed),
                p2p_timed,
                "wait time\n{ctx}"
            );
            // Element 3: allreduce (ring calls MPI_Allreduce on MPI_COMM_WORLD).
            assert_eq!(
                timed("pvar_mpi_coll_time", world, ALLREDUCE, coll_timed),
                coll_timed,
                "allreduce time\n{ctx}"
            );
            // The profile of the time in MPI follows.
            let mpi_time = report
                .profile("time in MPI")
                .map_or(0.0, |p| p["overall"]["min"].as_f64().unwrap_or(0.0));
            assert_eq!(mpi_time > 0.0, coll_timed, "time in MPI\n{ctx}");
        }
    }
}

#[test]
fn ring_reports_exactly_what_the_program_counted() {
    for f in flavours("ring_reports_exactly_what_the_program_counted") {
        for &n in f.ring_sizes() {
            let (job, report, _tmp) =
                run_reported(&f, &f.lib(), n, "ring", &["-i", "6", "-n", "64"], &[]);
            let counted = parse_counted(&job.stdout);
            // Every rank: one line per communicator (world, dup, split) and one unbound.
            assert_eq!(counted.len(), 4 * n, "{}", job.context());
            check_report_against_counted(&report, &counted, n, &job.context());

            // Blocking point-to-point on MPI_COMM_WORLD took time on every rank.
            let t = report.stat("pvar_mpi_p2p_time", Some("MPI_COMM_WORLD"), 0, "min");
            assert!(t > 0.0, "pvar_mpi_p2p_time min = {t}\n{}", job.context());
            // The ranks are this job's processes, the program is ring.
            let ranks = &report.json["ranks"];
            let pids: HashSet<u64> = ranks["pids"]
                .as_array()
                .expect("pids")
                .iter()
                .filter_map(|p| p["pid"].as_u64())
                .collect();
            assert_eq!(pids.len(), n, "{}", report.json);
            let programs = ranks["programs"].as_array().expect("programs");
            assert!(
                programs.len() == 1
                    && programs[0]["name"]
                        .as_str()
                        .is_some_and(|p| p.contains("ring"))
                    && programs[0]["ranks"] == n,
                "{}",
                report.json
            );
            // The text report on rank 0's stderr names the variables.
            for needle in [
                "pvar_mpi_send_calls",
                "pvar_mpi_coll_calls",
                "pvar_mpi_peer_send_msgs",
                "pvar_mpi_wait_calls",
                "MPI_COMM_WORLD",
            ] {
                assert!(
                    job.stderr.contains(needle),
                    "the text report does not name {needle}\n{}",
                    job.context()
                );
            }
            eprintln!(
                "{} ring on {n} ranks: {} COUNTED lines match the report",
                f.name,
                counted.len()
            );
        }
    }
}

#[test]
fn ring_with_freed_communicators_still_reports_world() {
    for f in flavours("ring_with_freed_communicators_still_reports_world") {
        let (job, report, _tmp) = run_reported(
            &f,
            &f.lib(),
            2,
            "ring",
            &["-i", "3", "-n", "32", "--free-comms"],
            &[],
        );
        let counted = parse_counted(&job.stdout);
        // With --free-comms the program prints world and * only: the
        // unbound per-peer figures still hold the freed communicators'
        // traffic.
        assert_eq!(counted.len(), 2 * 2, "{}", job.context());
        check_report_against_counted(&report, &counted, 2, &job.context());
        // Their instances went with MPI_Comm_free.
        let freed: Vec<String> = report
            .variables()
            .iter()
            .filter_map(|v| v["instance"]["label"].as_str())
            .filter(|l| l.starts_with("comm["))
            .map(str::to_string)
            .collect();
        assert!(
            freed.is_empty(),
            "instances of freed communicators in the report: {freed:?}\n{}",
            job.context()
        );
    }
}

#[test]
fn benchmarks_report_exactly_what_they_counted() {
    for f in flavours("benchmarks_report_exactly_what_they_counted") {
        let runs: [(&str, &[&str]); 2] = [
            ("pingpong", &["-i", "200", "-w", "20", "-r", "3"]),
            ("msgrate", &["-w", "16", "-i", "20", "-r", "3"]),
        ];
        for (program, args) in runs {
            let (job, report, _tmp) = run_reported(&f, &f.lib(), 2, program, args, &[]);
            let counted = parse_counted(&job.stdout);
            assert_eq!(counted.len(), 4, "{}", job.context());
            check_report_against_counted(&report, &counted, 2, &job.context());
            assert!(job.stdout.contains("MEDIAN "), "{}", job.context());
        }
    }
}

#[test]
fn the_compiled_out_build_runs_and_counts_nothing() {
    for f in flavours("the_compiled_out_build_runs_and_counts_nothing") {
        if !f.lib_off().is_file() {
            let why = format!("{} has no {}", f.name, f.lib_off().display());
            assert!(!required(), "PVAR_REQUIRE_MPI=1 but {why}");
            eprintln!("*** SKIPPED: {why} ***");
            continue;
        }
        let (job, report, _tmp) =
            run_reported(&f, &f.lib_off(), 2, "ring", &["-i", "3", "-n", "32"], &[]);
        assert!(!parse_counted(&job.stdout).is_empty(), "{}", job.context());
        // Registered (the report knows them) but never updated.
        let ours: Vec<&Value> = report
            .variables()
            .iter()
            .filter(|v| {
                v["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("pvar_mpi_"))
            })
            .collect();
        assert!(
            ours.is_empty(),
            "compiled-out updates, yet the report has nonzero {:?}",
            ours.iter().map(|v| &v["name"]).collect::<Vec<_>>()
        );
        assert!(
            report
                .skipped_zero()
                .iter()
                .any(|n| n.starts_with("pvar_mpi_send_calls")),
            "pvar_mpi_send_calls should be registered and all-zero: {}",
            report.json
        );
    }
}

/// What one `live_tool` run said, per rank.
struct LiveRun {
    job: Finished,
    counts: HashMap<usize, HashMap<String, i64>>,
    sweeps: HashMap<usize, HashMap<String, i64>>,
    names: HashSet<String>,
}

fn key_values(line: &str) -> HashMap<String, i64> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

fn live_tool(f: &Flavour, preload: bool, args: &[&str]) -> LiveRun {
    let tmp = TempDir::new("live");
    let list = tmp.path().join("list.txt");
    let list_arg = list.display().to_string();
    let mut env = Vec::new();
    if preload {
        env.push(("LD_PRELOAD", f.lib().display().to_string()));
        env.push(("PVAR_MPI_REPORT", "0".to_string()));
    }
    let mut all = vec!["--sweep", "--list", &list_arg];
    if preload {
        all.push("--expect-ours");
    }
    if f.is_openmpi() {
        all.extend(["--skip-prefix", "mtl_psm2_"]);
    }
    all.extend(args);
    let job = run(f.mpiexec(2, &env, &f.program("live_tool"), &all));
    let mut counts = HashMap::new();
    let mut sweeps = HashMap::new();
    for line in job.stdout.lines() {
        if line.starts_with("MPIT_COUNTS ") {
            let kv = key_values(line);
            counts.insert(kv["rank"] as usize, kv);
        } else if line.starts_with("SWEEP ") {
            let kv = key_values(line);
            sweeps.insert(kv["rank"] as usize, kv);
        }
    }
    // "PVAR 3 name ...", "CVAR 7 name", "CATEGORY 2 name" -> "PVAR name".
    let names = std::fs::read_to_string(&list)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let kind = w.next()?;
            let name = w.nth(1)?;
            Some(format!("{kind} {name}"))
        })
        .collect();
    LiveRun {
        job,
        counts,
        sweeps,
        names,
    }
}

#[test]
fn live_tool_reads_our_variables_next_to_the_librarys() {
    for f in flavours("live_tool_reads_our_variables_next_to_the_librarys") {
        check_live_tool(&f, &[]);
        if f.is_openmpi() {
            // MPI_T initialised after MPI_Init: Open MPI then shows more
            // of its variables (46 pvars here, where it leaves holes
            // before).
            check_live_tool(&f, &["--mpit-late"]);
        }
    }
}

/// One `live_tool` job without the interposer, one with it: the checks
/// in the program pass, and MPI_T shows the library's variables and ours.
fn check_live_tool(f: &Flavour, args: &[&str]) {
    {
        let bare = live_tool(f, false, args);
        bare.job.assert_success();
        let ours = live_tool(f, true, args);
        ours.job.assert_success();
        let ctx = ours.job.context();
        for r in 0..2 {
            assert!(
                ours.job.stdout.contains(&format!("LIVE_DONE rank={r} ok=")),
                "rank {r} did not finish\n{ctx}"
            );
        }
        assert!(!ours.job.stdout.contains("LIVE_FAIL"), "{ctx}");
        for check in [
            "LIVE_OK rank=0 grew exactly",
            "LIVE_OK rank=1 grew exactly",
            "LIVE_OK rank=0 thread reads=",
            "LIVE_OK rank=0 dup send_calls=3",
            "LIVE_OK rank=0 lib_cvar name=",
            "LIVE_OK rank=0 category pvar_mpi",
        ] {
            assert!(ours.job.stdout.contains(check), "no {check:?}\n{ctx}");
        }
        // MPI 4 libraries (MPICH; Open MPI 4.1's mpi.h is MPI 3.1, no
        // events): the event get_info calls return new, empty info objects
        // of the library for pvar's events (issue 28, item 11).
        if !f.is_openmpi() {
            for r in 0..2 {
                let check = format!("LIVE_OK rank={r} event info objects new nkeys=0,0");
                assert!(ours.job.stdout.contains(&check), "no {check:?}\n{ctx}");
            }
        }
        if f.is_openmpi() {
            assert!(
                ours.job.stdout.contains("LIVE_OK rank=0 lib_pvar name="),
                "{ctx}"
            );
        }

        let lib = &bare.counts[&0];
        let all = &ours.counts[&0];
        eprintln!(
            "{} {args:?}: the library alone: {} pvars, {} cvars, {} categories; with the interposer: \
             {} pvars ({} ours), {} cvars ({} ours), {} categories ({} ours)",
            f.name,
            lib["pvars"],
            lib["cvars"],
            lib["categories"],
            all["pvars"],
            all["ours_pvars"],
            all["cvars"],
            all["ours_cvars"],
            all["categories"],
            all["ours_categories"]
        );
        assert_eq!(
            lib["ours_pvars"] + lib["ours_cvars"] + lib["ours_categories"],
            0
        );
        // get_num = the library's own count + ours, for each kind.
        for kind in ["pvars", "cvars", "categories"] {
            assert_eq!(
                all[kind],
                lib[kind] + all[&format!("ours_{kind}")],
                "MPI_T_{kind} count: the library has {}, we add {}\n{ctx}",
                lib[kind],
                all[&format!("ours_{kind}")]
            );
            assert_eq!(
                all[&format!("invalid_{kind}")],
                lib[&format!("invalid_{kind}")],
                "the merged MPI_T changed which of the library's {kind} are valid\n{ctx}"
            );
        }
        assert!(all["ours_pvars"] >= 16, "{ctx}");
        assert!(all["ours_cvars"] >= 3, "{ctx}");
        assert!(all["ours_categories"] >= 5, "{ctx}");
        // Every name the library shows is still there.
        let lost: Vec<&String> = bare.names.difference(&ours.names).collect();
        assert!(lost.is_empty(), "library variables lost: {lost:?}\n{ctx}");
        assert!(
            ours.names.contains("CVAR pvar_mpi_report")
                && ours.names.contains("PVAR pvar_mpi_send_calls"),
            "{ctx}"
        );

        // The sweep: everything of ours is readable; the library's reads
        // are as without us.
        for r in 0..2 {
            let s = &ours.sweeps[&r];
            let b = &bare.sweeps[&r];
            assert_eq!(s["failed"], 0, "rank {r}: sweep failures\n{ctx}");
            assert_eq!(
                s["ours_read"], all["ours_pvars"],
                "rank {r}: ours not all read\n{ctx}"
            );
            assert_eq!(s["read"], b["read"] + s["ours_read"], "rank {r}\n{ctx}");
            assert_eq!(s["skipped"], b["skipped"], "rank {r}\n{ctx}");
        }
        let skips: Vec<&str> = ours
            .job
            .stdout
            .lines()
            .filter(|l| l.starts_with("SWEEP_SKIP rank=0") && !l.contains("reason=invalid"))
            .collect();
        eprintln!(
            "{} {args:?}: sweep skipped (not counting invalid indices): {skips:?}",
            f.name
        );
    }
}

/// The `pvar` command (`cargo build -p pvar-cli`), or `PVAR_CLI`.
fn pvar_cli() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PVAR_CLI").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    ["debug", "release"]
        .iter()
        .map(|p| repo_root().join("target").join(p).join("pvar"))
        .find(|p| p.is_file())
}

/// Values of `name` in a `pvar.snapshot.v1` document: `(object, values)`
/// per instance.
fn snapshot_values(snap: &Value, name: &str) -> Vec<(Option<u64>, Vec<u64>)> {
    snap["variables"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["name"] == name)
                .map(|v| {
                    (
                        v["object"].as_u64(),
                        v["values"]
                            .as_array()
                            .map(|xs| xs.iter().map(|x| x.as_u64().unwrap_or(0)).collect())
                            .unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_cli_reads_a_rank_while_the_job_runs() {
    let flavours = flavours("the_cli_reads_a_rank_while_the_job_runs");
    if flavours.is_empty() {
        return;
    }
    let Some(cli) = pvar_cli() else {
        let why = "no target/debug/pvar: run `cargo build -p pvar-cli` first";
        assert!(!required(), "PVAR_REQUIRE_MPI=1 but {why}");
        eprintln!("\n*** SKIPPED: the_cli_reads_a_rank_while_the_job_runs: {why} ***\n");
        return;
    };
    for f in flavours {
        let tmp = TempDir::new("export");
        let go = tmp.path().join("go");
        let json = tmp.path().join("report.json");
        let export_dir = tmp.path().join("shm");
        std::fs::create_dir_all(&export_dir).expect("export dir");
        let env = [
            ("LD_PRELOAD", f.lib().display().to_string()),
            ("PVAR_MPI_REPORT_JSON", json.display().to_string()),
            ("PVAR_EXPORT", "1".to_string()),
            ("PVAR_EXPORT_DIR", export_dir.display().to_string()),
            ("PVAR_EXPORT_INTERVAL_MS", "50".to_string()),
            ("PVAR_MPI_TIME", "all".to_string()),
        ];
        let go_arg = go.display().to_string();
        let mut job = Running::start(f.mpiexec(
            2,
            &env,
            &f.program("ring"),
            &["-i", "4", "-n", "32", "--hold", &go_arg],
        ));
        job.wait_for_stdout("both ranks hold", |lines| {
            lines.iter().filter(|l| l.starts_with("HOLD ")).count() == 2
        });
        let stdout = job.stdout.join("\n");
        let counted = parse_counted(&stdout);
        let pids: Vec<u32> = (0..2)
            .map(|rank| {
                let line = job
                    .stdout
                    .iter()
                    .find(|l| l.starts_with(&format!("HOLD rank={rank} ")))
                    .expect("HOLD line");
                key_values(line)["pid"] as u32
            })
            .collect();
        // Read every rank from outside until its snapshot shows all it did.
        let mut seen: Vec<Vec<(Option<u64>, Vec<u64>)>> = Vec::new();
        let mut named: Vec<Vec<(u64, String)>> = Vec::new();
        for (rank, &pid) in pids.iter().enumerate() {
            let star = counted
                .iter()
                .find(|c| c.rank == rank && c.comm == "*")
                .expect("COUNTED *");
            let want_peer = star.get("peer_send_msgs").to_vec();
            let want_wait = star.one("wait_calls");
            let until = Instant::now() + Duration::from_secs(30);
            let mut last: String;
            let snap = loop {
                let out = Command::new(&cli)
                    .args(["read", &pid.to_string(), "--json", "--fresh"])
                    .env("PVAR_EXPORT_DIR", &export_dir)
                    .output()
                    .expect("run pvar read");
                last = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                if out.status.success() {
                    let snap: Value =
                        serde_json::from_slice(&out.stdout).expect("pvar read --json");
                    assert_eq!(snap["schema"], "pvar.snapshot.v1");
                    let peer = snapshot_values(&snap, "pvar_mpi_peer_send_msgs");
                    let wait = snapshot_values(&snap, "pvar_mpi_wait_calls");
                    if peer.first().is_some_and(|p| p.1 == want_peer)
                        && wait.first().is_some_and(|w| w.1 == [want_wait])
                    {
                        break snap;
                    }
                }
                if Instant::now() > until {
                    job.kill_and_panic(&format!(
                        "pvar read {pid} never showed rank {rank}'s counts \
                         (peer_send_msgs {want_peer:?}, wait_calls {want_wait}); last: {last}"
                    ));
                }
            };
            assert_eq!(snap["process"]["pid"].as_u64(), Some(u64::from(pid)));
            seen.push(snapshot_values(&snap, "pvar_mpi_send_calls"));
            // The interposer names its communicators for readers outside
            // MPI_T: each instance carries the report's label.
            named.push(
                snap["variables"]
                    .as_array()
                    .expect("variables")
                    .iter()
                    .filter(|v| v["name"] == "pvar_mpi_send_calls")
                    .map(|v| {
                        (
                            v["object"].as_u64().expect("a bound instance's object"),
                            v["object_label"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect(),
            );
            // One frame of `pvar top`: the same per-peer counts (the rank
            // holds, so they no longer change).
            let top = Command::new(&cli)
                .args(["top", &pid.to_string(), "--plain", "--iterations", "1"])
                .args(["--category", "pvar_mpi_peer"])
                .env("PVAR_EXPORT_DIR", &export_dir)
                .output()
                .expect("run pvar top");
            let frame = String::from_utf8_lossy(&top.stdout);
            assert!(
                top.status.success(),
                "pvar top {pid}: {}\n{frame}",
                String::from_utf8_lossy(&top.stderr)
            );
            assert_eq!(
                top_elements(&frame, "pvar_mpi_peer_send_msgs"),
                want_peer,
                "rank {rank}: pvar top's pvar_mpi_peer_send_msgs\n{frame}"
            );
            let top = Command::new(&cli)
                .args(["top", &pid.to_string(), "--plain", "--iterations", "1"])
                .args(["--filter", "pvar_mpi_send_calls"])
                .env("PVAR_EXPORT_DIR", &export_dir)
                .output()
                .expect("run pvar top");
            let frame = String::from_utf8_lossy(&top.stdout);
            assert!(
                frame.contains("comm MPI_COMM_WORLD"),
                "rank {rank}: pvar top names the communicators\n{frame}"
            );
        }
        std::fs::write(&go, b"go").expect("create the go file");
        let job = job.finish();
        job.assert_success();
        // The objects read from outside are the communicators' handles
        // (the program prints their bits): each holds its own counts.
        let report = Report::read(&json, &job.context());
        check_report_against_counted(&report, &counted, 2, &job.context());
        for (rank, instances) in seen.iter().enumerate() {
            // The labels read from outside are the report's (schema v2:
            // one entry per labelled instance, the same on every rank; an
            // instance zero on every rank is listed in `skipped_zero` as
            // `name@label`).
            let mut labels: HashSet<&str> = report.json["variables"]
                .as_array()
                .expect("variables")
                .iter()
                .filter(|v| v["name"] == "pvar_mpi_send_calls")
                .filter_map(|v| v["instance"]["label"].as_str())
                .collect();
            labels.extend(
                report.json["skipped_zero"]
                    .as_array()
                    .expect("skipped_zero")
                    .iter()
                    .filter_map(|k| k.as_str()?.strip_prefix("pvar_mpi_send_calls@")),
            );
            for (object, name) in &named[rank] {
                assert!(
                    labels.contains(name.as_str()),
                    "rank {rank}: object {object:#x} is {name:?} from outside, not a label of \
                     the report's pvar_mpi_send_calls {labels:?}"
                );
            }
            for c in counted.iter().filter(|c| c.rank == rank && c.comm != "*") {
                let got = instances
                    .iter()
                    .find(|(o, _)| *o == Some(c.one("handle")))
                    .map(|(_, v)| v[0]);
                assert_eq!(
                    got,
                    Some(c.one("send_calls")),
                    "rank {rank}: pvar read's pvar_mpi_send_calls for {} (handle {:#x}); read \
                     {instances:?}\n{}",
                    c.comm,
                    c.one("handle"),
                    job.context()
                );
            }
        }
        eprintln!(
            "{}: pvar read saw both ranks' counts while the job ran",
            f.name
        );
    }
}

/// The element rows (`  [i]  value`) under variable `name` in a plain
/// `pvar top` frame, as numbers in element order.
fn top_elements(frame: &str, name: &str) -> Vec<u64> {
    frame
        .lines()
        .skip_while(|l| l.split_whitespace().next() != Some(name))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with('['))
        .map(|l| {
            let value = l.split_whitespace().last().unwrap_or("");
            value
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("not a value row of {name}: {l:?}"))
        })
        .collect()
}

/// A report on demand. The ranks call `MPI_Allreduce` on `MPI_COMM_WORLD`
/// in a loop (`ring --until-report`) until the report's JSON appears; once
/// they have made 64 of them (and printed `WAITING`), the test sends
/// SIGUSR2 to rank 1 alone. Every rank must take part at the next poll:
/// the report (moved aside by rank 0) holds both ranks, the run's exact
/// point-to-point counts, a world collective count that is a multiple of
/// the poll interval and past the 64 (a report not asked for would come at
/// the first poll, before the signal), and one allreduce fewer than the
/// final report (the loop's next allreduce is the one that sees the file).
#[test]
fn a_signal_to_one_rank_brings_a_report_from_all() {
    const POLL: u64 = 8;
    /// `ring`'s allreduces before it prints `WAITING` (WARMUP_ALLREDUCES).
    const WARMUP: u64 = 64;
    for f in flavours("a_signal_to_one_rank_brings_a_report_from_all") {
        let tmp = TempDir::new("on-demand");
        let json = tmp.path().join("report.json");
        let env = [
            ("LD_PRELOAD", f.lib().display().to_string()),
            ("PVAR_MPI_REPORT_JSON", json.display().to_string()),
            ("PVAR_MPI_REPORT_SIGNAL", "usr2".to_string()),
            ("PVAR_MPI_REPORT_POLL", POLL.to_string()),
        ];
        let path = json.display().to_string();
        let args = ["-i", "2", "-n", "32", "--until-report", &path];
        let mut job = Running::start(f.mpiexec(2, &env, &f.program("ring"), &args));
        job.wait_for_stdout("both ranks wait", |lines| {
            lines.iter().filter(|l| l.starts_with("WAITING ")).count() == 2
        });
        let line = job
            .stdout
            .iter()
            .find(|l| l.starts_with("WAITING rank=1 "))
            .expect("WAITING line of rank 1");
        let pid = key_values(line)["pid"] as i32;
        // SAFETY: kill(2) has no memory-safety preconditions; `pid` is rank
        // 1 of the job, which waits for this signal.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGUSR2) }, 0, "kill rank 1");
        let done = job.finish();
        done.assert_success();
        let ctx = done.context();
        let counted = parse_counted(&done.stdout);
        let on_demand = Report::read(&tmp.path().join("report.json.on-demand"), &ctx);
        let last = Report::read(&json, &ctx);
        assert_eq!(on_demand.nranks(), 2, "{ctx}");
        let world = Some("MPI_COMM_WORLD");
        let mut bad = Vec::new();
        let per_rank = |field: &str| -> PerRank {
            counted
                .iter()
                .filter(|c| c.comm == "world")
                .map(|c| (c.rank, c.one(field)))
                .collect()
        };
        // The loop sends nothing: the run's own counts, exactly.
        for (var, field) in [
            ("pvar_mpi_send_calls", "send_calls"),
            ("pvar_mpi_send_bytes", "send_bytes"),
            ("pvar_mpi_recv_calls", "recv_calls"),
            ("pvar_mpi_recv_bytes", "recv_bytes"),
        ] {
            check_element(&mut bad, &on_demand, var, world, 0, &per_rank(field));
        }
        assert!(bad.is_empty(), "the report on demand: {bad:?}\n{ctx}");
        // World collectives: the same count on every rank (min = max).
        let coll = |r: &Report, k: usize| -> u64 {
            let (min, max) = (
                r.stat("pvar_mpi_coll_calls", world, k, "min"),
                r.stat("pvar_mpi_coll_calls", world, k, "max"),
            );
            assert_eq!(min, max, "collective kind {k} differs between ranks\n{ctx}");
            min as u64
        };
        let world_calls: u64 = (0..COLL_KINDS).map(|k| coll(&on_demand, k)).sum();
        assert!(
            world_calls > 0 && world_calls.is_multiple_of(POLL),
            "the report on demand came at world collective {world_calls}, not at a poll \
             (every {POLL})\n{ctx}"
        );
        for rank in 0..2 {
            let mine = counted
                .iter()
                .find(|c| c.rank == rank && c.comm == "world")
                .expect("COUNTED world");
            let waited = done
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("WAITED rank={rank} ")))
                .map(|l| key_values(l)["allreduces"] as u64)
                .unwrap_or_else(|| panic!("no WAITED line of rank {rank}\n{ctx}"));
            let before = mine.get("coll_calls")[ALLREDUCE];
            assert!(
                coll(&on_demand, ALLREDUCE) > before + WARMUP,
                "rank {rank}: a report before the signal was sent\n{ctx}"
            );
            assert_eq!(
                coll(&last, ALLREDUCE),
                before + waited,
                "rank {rank}\n{ctx}"
            );
        }
        assert_eq!(
            coll(&on_demand, ALLREDUCE) + 1,
            coll(&last, ALLREDUCE),
            "the report on demand is one allreduce before the end\n{ctx}"
        );
        // Rank 0's text: the report on demand and the one at MPI_Finalize.
        assert_eq!(
            done.stderr.matches("@ pvar cross-rank report").count(),
            2,
            "{ctx}"
        );
    }
}

/// Starting a nonblocking collective must not wait for the other ranks.
/// `ring --ibarrier-send` starts `MPI_Ibarrier` on rank 0 and then sends
/// rank 1 the message it needs before its own `MPI_Ibarrier`: with a report
/// after every world collective and a poll at every one, a report or poll
/// at the start of the nonblocking one would hang the job (it did, before
/// they were limited to blocking collectives). The report stays exact.
#[test]
fn a_nonblocking_collective_start_never_waits_for_a_report() {
    for f in flavours("a_nonblocking_collective_start_never_waits_for_a_report") {
        let env = [
            ("PVAR_MPI_REPORT_EVERY", "1".to_string()),
            ("PVAR_MPI_REPORT_SIGNAL", "usr2".to_string()),
            ("PVAR_MPI_REPORT_POLL", "1".to_string()),
        ];
        let args = ["-i", "1", "-n", "32", "--ibarrier-send"];
        let (job, report, _tmp) = run_reported(&f, &f.lib(), 2, "ring", &args, &env);
        let counted = parse_counted(&job.stdout);
        check_report_against_counted(&report, &counted, 2, &job.context());
    }
}

/// Ranks that disagree on the settings of reports on demand would poll at
/// different calls and deadlock: the interposer turns the feature off on
/// every rank instead, rank 0 says so, and the job runs to its end with
/// its report at `MPI_Finalize`.
#[test]
fn ranks_that_disagree_on_reports_on_demand_do_not_hang() {
    for f in flavours("ranks_that_disagree_on_reports_on_demand_do_not_hang") {
        let tmp = TempDir::new("disagree");
        let json = tmp.path().join("report.json");
        let env_with = |signal: &str, poll: &str| {
            vec![
                ("LD_PRELOAD", f.lib().display().to_string()),
                ("PVAR_MPI_REPORT_JSON", json.display().to_string()),
                ("PVAR_MPI_REPORT_SIGNAL", signal.to_string()),
                ("PVAR_MPI_REPORT_POLL", poll.to_string()),
            ]
        };
        // Polls at different calls; a signal set on one rank only.
        for ((s0, p0), (s1, p1)) in [
            (("usr2", "1"), ("usr2", "2")),
            (("usr2", "1"), ("off", "1")),
        ] {
            let (env0, env1) = (env_with(s0, p0), env_with(s1, p1));
            let ring = f.program("ring");
            let args = ["-i", "4", "-n", "32"];
            let done = run(f.mpiexec_mpmd(&[(1, &env0, &ring, &args), (1, &env1, &ring, &args)]));
            done.assert_success();
            let ctx = done.context();
            assert!(
                done.stderr
                    .contains("no reports on demand: the ranks disagree"),
                "rank 0 names the disagreement\n{ctx}"
            );
            assert_eq!(Report::read(&json, &ctx).nranks(), 2, "{ctx}");
            assert_eq!(
                done.stderr.matches("@ pvar cross-rank report").count(),
                1,
                "{ctx}"
            );
        }
    }
}

/// Reports are never seen half-written, and a killed job leaves the last
/// complete one. With a report after every world collective, `ring
/// --until-report` calls `MPI_Allreduce` in a loop (the file it waits for
/// never comes), so the JSON report is rewritten continuously; a reader
/// polls it all the while, and every read must be a whole `pvar.report.v2`
/// report (before the fix, a report was truncated then written in place:
/// readers saw it empty, and a SIGKILL left a 0-byte file). Then rank 0 is
/// killed with SIGKILL in the middle of the writes: the file is still the
/// last complete report.
#[test]
fn a_killed_rank_0_leaves_the_last_complete_report() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    for f in flavours("a_killed_rank_0_leaves_the_last_complete_report") {
        for round in 0..3 {
            let tmp = TempDir::new("killed");
            let json = tmp.path().join("report.json");
            let never = tmp.path().join("never").display().to_string();
            let env = [
                ("LD_PRELOAD", f.lib().display().to_string()),
                ("PVAR_MPI_REPORT_JSON", json.display().to_string()),
                ("PVAR_MPI_REPORT_EVERY", "1".to_string()),
                ("PVAR_MPI_REPORT", "0".to_string()),
            ];
            let args = ["-i", "2", "-n", "16", "--until-report", &never];
            // The reader, from before the job starts.
            let stop = Arc::new(AtomicBool::new(false));
            let reader = {
                let (stop, json) = (stop.clone(), json.clone());
                thread::spawn(move || {
                    let (mut whole, mut bad) = (0u64, Vec::new());
                    while !stop.load(Ordering::Relaxed) {
                        match std::fs::read_to_string(&json) {
                            Ok(text) => match Report::parse(&text) {
                                Ok(_) => whole += 1,
                                Err(e) => bad.push(format!("{} bytes: {e}", text.len())),
                            },
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                            Err(e) => bad.push(e.to_string()),
                        }
                        thread::yield_now();
                    }
                    (whole, bad)
                })
            };
            let mut job = Running::start(f.mpiexec(2, &env, &f.program("ring"), &args));
            job.wait_for_stdout("rank 0 has made 64 reports", |lines| {
                lines.iter().any(|l| l.starts_with("WAITING rank=0 "))
            });
            let line = job
                .stdout
                .iter()
                .find(|l| l.starts_with("WAITING rank=0 "))
                .expect("WAITING line of rank 0");
            let pid = key_values(line)["pid"] as i32;
            // Let the reader see a few rewrites, then kill rank 0 while it
            // keeps writing.
            let seen = json.metadata().ok().and_then(|m| m.modified().ok());
            let until = Instant::now() + Duration::from_secs(30);
            while json.metadata().ok().and_then(|m| m.modified().ok()) == seen
                && Instant::now() < until
            {
                thread::yield_now();
            }
            // SAFETY: kill(2) has no memory-safety preconditions; `pid` is
            // rank 0 of the job.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "kill rank 0");
            let done = job.finish();
            stop.store(true, Ordering::Relaxed);
            let (whole, bad) = reader.join().expect("the reader");
            let ctx = done.context();
            assert!(
                !done.status.success(),
                "the job survived rank 0's SIGKILL\n{ctx}"
            );
            assert!(
                bad.is_empty(),
                "round {round}: a reader saw {} incomplete reports (and {whole} whole ones): {:?}\n{ctx}",
                bad.len(),
                &bad[..bad.len().min(5)]
            );
            assert!(whole > 0, "the reader never saw a report\n{ctx}");
            let last = Report::read(&json, &ctx);
            assert_eq!(last.nranks(), 2, "{ctx}");
            let calls = last.stat(
                "pvar_mpi_coll_calls",
                Some("MPI_COMM_WORLD"),
                ALLREDUCE,
                "max",
            );
            assert!(
                calls >= 64.0,
                "the last report is from before the loop: {calls}\n{ctx}"
            );
            eprintln!(
                "{} round {round}: rank 0 killed during periodic reports; {whole} whole reads, \
                 the file holds the report at allreduce {calls}",
                f.name
            );
        }
    }
}

/// Control variables say what they accept: every unbound cvar whose
/// `MPI_T_cvar_get_info` scope says it may be written is written with
/// another value and read back (an enumerated one with each item, and a
/// value that is no item is refused with `MPI_T_ERR_INVALID`), and every
/// read-only one refuses — MPICH's own cvars and pvar's alike, in the
/// manner of MPICH's `mpi_t/cvarwrite` test (which failed with the
/// interposer: `pvar_mpi_report_signal`, `_poll` and `pvar_mpi_time`
/// advertised writable scopes and refused every write after `MPI_Init`).
/// Under Open MPI only pvar's are written (some of Open MPI's own are not
/// safe to change in a running job).
#[test]
fn every_cvar_write_is_taken_or_refused_as_get_info_says() {
    for f in flavours("every_cvar_write_is_taken_or_refused_as_get_info_says") {
        let only: &[&str] = if f.is_openmpi() {
            &["--only-prefix", "pvar_"]
        } else {
            &[]
        };
        for preload in [false, true] {
            if f.is_openmpi() && !preload {
                continue;
            }
            let mut env = vec![("PVAR_MPI_REPORT", "0".to_string())];
            if preload {
                env.push(("LD_PRELOAD", f.lib().display().to_string()));
            }
            let job = run(f.mpiexec(2, &env, &f.program("cvar_write"), only));
            let ctx = job.context();
            job.assert_success();
            for rank in 0..2 {
                let line = job
                    .stdout
                    .lines()
                    .find(|l| l.starts_with(&format!("CVAR_WRITE rank={rank} ")))
                    .unwrap_or_else(|| panic!("no CVAR_WRITE line of rank {rank}\n{ctx}"));
                let kv = key_values(line);
                assert_eq!(kv["errors"], 0, "{ctx}");
                assert!(kv["checked"] > 0, "{ctx}");
                if preload {
                    assert!(kv["ours"] >= 6, "pvar's cvars checked: {line}\n{ctx}");
                }
            }
            if !preload {
                continue;
            }
            // pvar's, one by one: what each accepts.
            for (name, how) in [
                ("pvar_mpi_report", "enumerated"),
                ("pvar_mpi_report_json", "written"),
                ("pvar_mpi_report_every", "written"),
                ("pvar_mpi_report_signal", "refused"),
                ("pvar_mpi_report_poll", "refused"),
                ("pvar_mpi_time", "refused"),
            ] {
                let want = format!("name={name} ");
                let line = job
                    .stdout
                    .lines()
                    .find(|l| l.starts_with("CVAR rank=0 ") && l.contains(&want))
                    .unwrap_or_else(|| panic!("{name} not checked\n{ctx}"));
                assert!(
                    line.ends_with(&format!("checked={how}")),
                    "{name}: {line}, expected {how}\n{ctx}"
                );
            }
            eprintln!(
                "{}: every cvar write taken or refused as get_info says",
                f.name
            );
        }
    }
}
