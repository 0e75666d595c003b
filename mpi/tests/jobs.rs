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

/// A `pvar.report.v1` document.
struct Report {
    json: Value,
}

impl Report {
    fn read(path: &Path, context: &str) -> Report {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("no report JSON at {}: {e}\n{context}", path.display()));
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("the report is not JSON: {e}\n{text}"));
        assert_eq!(json["schema"], "pvar.report.v1", "{text}");
        Report { json }
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

    /// Element `element` of `name` (@`label`) on `rank` as an integer;
    /// `None` when the report leaves the variable out as all-zero (which
    /// `skipped_zero` must then say) or the rank has no value.
    fn int(&self, name: &str, label: Option<&str>, element: usize, rank: usize) -> Option<u64> {
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
        let e = &v["elements"][element];
        assert_eq!(e["index"], element, "element {element} of {name}: {e}");
        let x = &e["values"][rank];
        if x.is_null() {
            return None;
        }
        Some(
            x.as_u64().unwrap_or_else(|| {
                panic!("{name}[{element}] on rank {rank} is not an integer: {x}")
            }),
        )
    }

    fn float(&self, name: &str, label: Option<&str>, element: usize, rank: usize) -> Option<f64> {
        self.find(name, label)?["elements"][element]["values"][rank].as_f64()
    }

    /// The high watermark's mark of `name` on `rank`.
    fn mark(&self, name: &str, rank: usize) -> Option<u64> {
        self.find(name, None)?["elements"][0]["marks"][rank].as_u64()
    }

    /// Row `rank` of the per-peer matrix of `name`.
    fn matrix_row(&self, name: &str, rank: usize) -> Option<Vec<u64>> {
        let m = self.json["matrices"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == name)?;
        Some(
            m["rows"][rank]
                .as_array()?
                .iter()
                .map(|x| x.as_u64().unwrap_or(0))
                .collect(),
        )
    }
}

/// A value the report must hold: `want` exactly; a report that leaves the
/// variable out as all-zero, or has no value for the rank, holds 0.
fn check(
    bad: &mut Vec<String>,
    report: &Report,
    name: &str,
    label: Option<&str>,
    element: usize,
    rank: usize,
    want: u64,
) {
    let got = report.int(name, label, element, rank).unwrap_or(0);
    if got != want {
        bad.push(format!(
            "rank {rank}: {name}{}[{element}] = {got}, the program counted {want}",
            label.map(|l| format!("@{l}")).unwrap_or_default()
        ));
    }
}

/// Checks every figure of the `COUNTED` lines against the report.
fn check_report_against_counted(
    report: &Report,
    counted: &[Counted],
    nranks: usize,
    context: &str,
) {
    assert_eq!(report.nranks(), nranks, "nranks\n{context}");
    let ranks: HashSet<usize> = counted.iter().map(|c| c.rank).collect();
    assert_eq!(
        ranks.len(),
        nranks,
        "COUNTED lines of every rank expected\n{context}"
    );
    let mut bad = Vec::new();
    let mut checked = 0usize;
    for c in counted {
        let r = c.rank;
        if c.comm == "*" {
            for name in ["wait_calls", "test_calls", "probe_calls"] {
                check(
                    &mut bad,
                    report,
                    &format!("pvar_mpi_{name}"),
                    None,
                    0,
                    r,
                    c.one(name),
                );
            }
            let msgs = c.get("peer_send_msgs");
            let bytes = c.get("peer_send_bytes");
            assert_eq!(msgs.len(), nranks, "peer list length\n{context}");
            for j in 0..nranks {
                check(
                    &mut bad,
                    report,
                    "pvar_mpi_peer_send_msgs",
                    None,
                    j,
                    r,
                    msgs[j],
                );
                check(
                    &mut bad,
                    report,
                    "pvar_mpi_peer_send_bytes",
                    None,
                    j,
                    r,
                    bytes[j],
                );
            }
            for (name, want) in [
                ("pvar_mpi_peer_send_msgs", msgs),
                ("pvar_mpi_peer_send_bytes", bytes),
            ] {
                if want.iter().any(|&x| x != 0) {
                    match report.matrix_row(name, r) {
                        Some(row) if row == want => {}
                        other => bad.push(format!(
                            "rank {r}: matrix row of {name} is {other:?}, the program counted {want:?}"
                        )),
                    }
                }
            }
            check(
                &mut bad,
                report,
                "pvar_mpi_requests_outstanding",
                None,
                0,
                r,
                c.one("requests_outstanding"),
            );
            let want_max = c.one("requests_max");
            let got_max = report
                .mark("pvar_mpi_requests_outstanding_max", r)
                .or_else(|| report.int("pvar_mpi_requests_outstanding_max", None, 0, r))
                .unwrap_or(0);
            if got_max != want_max {
                bad.push(format!(
                    "rank {r}: pvar_mpi_requests_outstanding_max mark = {got_max}, the program \
                     had at most {want_max} requests outstanding"
                ));
            }
            if c.one("wait_calls") > 0 {
                let t = report
                    .float("pvar_mpi_wait_time", None, 0, r)
                    .unwrap_or(0.0);
                if t <= 0.0 {
                    bad.push(format!(
                        "rank {r}: pvar_mpi_wait_time = {t} after wait calls"
                    ));
                }
            }
            checked += 1;
            continue;
        }
        let label = comm_label(&c.comm, c.get("members"));
        let l = Some(label.as_str());
        for name in ["send_calls", "send_bytes", "recv_calls", "recv_bytes"] {
            check(
                &mut bad,
                report,
                &format!("pvar_mpi_{name}"),
                l,
                0,
                r,
                c.one(name),
            );
        }
        let calls = c.get("coll_calls");
        let bytes = c.get("coll_bytes");
        assert_eq!(calls.len(), COLL_KINDS, "coll_calls length\n{context}");
        for k in 0..COLL_KINDS {
            check(&mut bad, report, "pvar_mpi_coll_calls", l, k, r, calls[k]);
            check(&mut bad, report, "pvar_mpi_coll_bytes", l, k, r, bytes[k]);
        }
        checked += 1;
    }
    assert!(checked > 0, "no COUNTED lines\n{context}");
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
            for r in 0..2 {
                let p2p = report
                    .float("pvar_mpi_p2p_time", Some("MPI_COMM_WORLD"), 0, r)
                    .unwrap_or(0.0);
                let wait = report
                    .float("pvar_mpi_wait_time", None, 0, r)
                    .unwrap_or(0.0);
                // Element 3: allreduce (ring calls MPI_Allreduce on MPI_COMM_WORLD).
                let coll = report
                    .float("pvar_mpi_coll_time", Some("MPI_COMM_WORLD"), 3, r)
                    .unwrap_or(0.0);
                assert_eq!(p2p > 0.0, p2p_timed, "rank {r}: p2p time {p2p}\n{ctx}");
                assert_eq!(wait > 0.0, p2p_timed, "rank {r}: wait time {wait}\n{ctx}");
                assert_eq!(
                    coll > 0.0,
                    coll_timed,
                    "rank {r}: allreduce time {coll}\n{ctx}"
                );
            }
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

            // Blocking point-to-point on MPI_COMM_WORLD took time.
            for r in 0..n {
                let t = report
                    .float("pvar_mpi_p2p_time", Some("MPI_COMM_WORLD"), 0, r)
                    .unwrap_or(0.0);
                assert!(
                    t > 0.0,
                    "rank {r}: pvar_mpi_p2p_time = {t}\n{}",
                    job.context()
                );
            }
            // The ranks are this job's processes, the program is ring.
            let ranks = report.json["ranks"].as_array().expect("ranks");
            let pids: HashSet<u64> = ranks.iter().filter_map(|r| r["pid"].as_u64()).collect();
            assert_eq!(pids.len(), n, "{}", report.json);
            assert!(
                ranks
                    .iter()
                    .all(|r| r["program"].as_str().is_some_and(|p| p.contains("ring"))),
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
        // Map the objects read from outside to labels with the report.
        let report = Report::read(&json, &job.context());
        let ranks = report.json["ranks"].as_array().expect("ranks");
        for (rank, instances) in seen.iter().enumerate() {
            let labels: HashMap<u64, &str> = ranks[rank]["labels"]
                .as_array()
                .expect("labels")
                .iter()
                .filter_map(|l| {
                    let o = u64::from_str_radix(l["object"].as_str()?.trim_start_matches("0x"), 16)
                        .ok()?;
                    Some((o, l["label"].as_str()?))
                })
                .collect();
            for (object, name) in &named[rank] {
                assert_eq!(
                    Some(name.as_str()),
                    labels.get(object).copied(),
                    "rank {rank}: object {object:#x} is {name:?} from outside, {:?} in the report",
                    labels.get(object)
                );
            }
            for c in counted.iter().filter(|c| c.rank == rank && c.comm != "*") {
                let label = comm_label(&c.comm, c.get("members"));
                let got = instances
                    .iter()
                    .find(|(o, _)| o.and_then(|o| labels.get(&o)) == Some(&label.as_str()))
                    .map(|(_, v)| v[0]);
                assert_eq!(
                    got,
                    Some(c.one("send_calls")),
                    "rank {rank}: pvar read's pvar_mpi_send_calls for {label}; read {instances:?}, \
                     labels {labels:?}\n{}",
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
            // The loop sends nothing: the run's own counts, exactly.
            for (var, field) in [
                ("pvar_mpi_send_calls", "send_calls"),
                ("pvar_mpi_send_bytes", "send_bytes"),
                ("pvar_mpi_recv_calls", "recv_calls"),
                ("pvar_mpi_recv_bytes", "recv_bytes"),
            ] {
                assert_eq!(
                    on_demand.int(var, world, 0, rank),
                    Some(mine.one(field)),
                    "rank {rank}: {var} in the report on demand\n{ctx}"
                );
            }
            let coll =
                |r: &Report, k: usize| r.int("pvar_mpi_coll_calls", world, k, rank).unwrap_or(0);
            let world_calls: u64 = (0..COLL_KINDS).map(|k| coll(&on_demand, k)).sum();
            assert!(
                world_calls > 0 && world_calls.is_multiple_of(POLL),
                "rank {rank}: the report on demand came at world collective {world_calls}, \
                 not at a poll (every {POLL})\n{ctx}"
            );
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
            assert_eq!(
                coll(&on_demand, ALLREDUCE) + 1,
                coll(&last, ALLREDUCE),
                "rank {rank}: the report on demand is one allreduce before the end\n{ctx}"
            );
        }
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
