//! The outside view, end to end: a `pvar demo` child exports its
//! variables, and `pvar read`, `pvar top`, `pvar export` and `pvar serve`
//! read them from other processes — the JSON schema, the live frames and
//! their rates, OpenMetrics text that Prometheus's own parser accepts
//! (Python's `prometheus_client`), real HTTP scrapes, and the errors: no
//! region, a refused region, a stale one, a process that ends under
//! `pvar top`, and the terminal given back after Ctrl-C.
//!
//! Every child gets a private `PVAR_EXPORT_DIR`, so tests running at the
//! same time never see each other's regions; nothing waits for a fixed
//! time: each wait polls for its condition up to a deadline.
//!
//! The OpenMetrics checks need `python3` with `prometheus_client`. Without
//! it they print `SKIPPED: …` and pass, unless `CI` or
//! `PVAR_REQUIRE_PYTHON` is set (then they fail). The terminal test needs
//! `script` (util-linux), gated the same way by `PVAR_REQUIRE_SCRIPT`.

#[path = "../../tests/support/openmetrics_parser.rs"]
mod openmetrics_parser;
#[path = "../../tests/support/script_tty.rs"]
mod script_tty;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use openmetrics_parser::Family;
use serde_json::Value;

const PVAR: &str = env!("CARGO_BIN_EXE_pvar");
/// Longest wait for anything (a debug build on a loaded machine is slow).
const PATIENCE: Duration = Duration::from_secs(60);

/// A private export directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(test: &str) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pvar-outside-{test}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create the private export directory");
        Dir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed (and reaped) when dropped, with its output in
/// files (a pipe nobody reads could fill and stall it).
struct Proc {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Proc {
    fn spawn(dir: &Dir, name: &str, args: &[&str]) -> Proc {
        let stdout = dir.path().join(format!("{name}.out"));
        let stderr = dir.path().join(format!("{name}.err"));
        let child = Command::new(PVAR)
            .args(args)
            .env("PVAR_EXPORT_DIR", dir.path())
            .env("PVAR_EXPORT_INTERVAL_MS", "50")
            .env_remove("PVAR_EXPORT")
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .expect("run the pvar binary");
        Proc {
            child,
            stdout,
            stderr,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits for the exit (up to [`PATIENCE`]); its status code.
    fn wait(&mut self) -> i32 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "pvar did not exit in time\nstdout:\n{}\nstderr:\n{}",
                self.stdout(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `cond` until it holds, failing with `what` after [`PATIENCE`].
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn euid() -> u32 {
    pvar::export::testing::effective_uid()
}

/// Where the region of `pid` is in the private export directory `dir`:
/// the user's own directory `pvar-<uid>` in it.
fn region_path(dir: &Dir, pid: u32) -> PathBuf {
    dir.path()
        .join(format!("pvar-{}", euid()))
        .join(pid.to_string())
}

/// Starts `pvar demo` for `seconds` with 2 workers, exporting into `dir`,
/// and waits until its region exists.
fn demo(dir: &Dir, seconds: &str) -> Proc {
    let d = Proc::spawn(
        dir,
        "demo",
        &["demo", "--json", "--threads", "2", "--duration", seconds],
    );
    let region = region_path(dir, d.pid());
    wait_for("the demo's export region", || region.exists());
    d
}

/// Runs `pvar args…` with the private directory: (exit code, stdout,
/// stderr).
fn pvar(dir: &Dir, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(PVAR)
        .args(args)
        .env("PVAR_EXPORT_DIR", dir.path())
        .env_remove("PVAR_EXPORT")
        .stdin(Stdio::null())
        .output()
        .expect("run the pvar binary");
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `pvar args…` must succeed; its stdout.
fn ok(dir: &Dir, args: &[&str]) -> String {
    let (code, stdout, stderr) = pvar(dir, args);
    assert_eq!(
        code, 0,
        "pvar {args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}

/// The entry of process `pid` in `pvar read --json`'s list of processes;
/// panics naming `what` when it is not there.
fn listed<'a>(list: &'a Value, pid: u32, what: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("{what} not listed: {list}"))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The variable named `name` (the first instance) of a `read --json`
/// document.
fn var<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| panic!("not unsigned: {x}")))
        .collect()
}

/// Checks the families the demo's variables give (2 workers).
fn check_demo_families(text: &str) {
    let Some(families) = openmetrics_parser::families(text) else {
        return;
    };
    let f: HashMap<&str, &Family> = families.iter().map(|f| (f.name.as_str(), f)).collect();
    let family = |name: &str| {
        f.get(name)
            .unwrap_or_else(|| panic!("no family {name} in {:?}", f.keys()))
    };
    for name in ["demo_msgs_sent", "demo_msgs_received", "demo_bytes_sent"] {
        assert_eq!(family(name).kind, "counter", "{name}");
        assert_eq!(family(name).samples, 1, "{name}");
        assert_eq!(family(name).sample_names, [format!("{name}_total")]);
    }
    let send = family("demo_send_time_seconds");
    assert_eq!(send.kind, "counter");
    assert_eq!(send.unit, "seconds");
    // One sample per item of the enumeration per worker.
    let state = family("demo_worker_state");
    assert_eq!(state.kind, "stateset");
    assert_eq!(state.samples, 6 * 2);
    assert_eq!(family("demo_queue_depth").kind, "gauge");
    assert_eq!(family("demo_queue_depth").samples, 2);
    assert_eq!(family("demo_queue_depth_hwm").kind, "gauge");
    assert_eq!(family("demo_worker_busy_ratio").unit, "ratio");
    // Bound: the instance of COMM_WORLD, one sample per peer.
    assert_eq!(family("demo_msgs_to_peer").kind, "counter");
    assert_eq!(family("demo_msgs_to_peer").samples, 2);
    assert_eq!(family("demo_msgs_matrix").samples, 4);
}

#[test]
fn read_shows_the_demo_variables() {
    let dir = Dir::new("read");
    let mut d = demo(&dir, "3");
    let pid = d.pid().to_string();

    let first = json(&ok(&dir, &["read", &pid, "--json"]));
    assert_eq!(first["schema"], "pvar.snapshot.v1");
    assert_eq!(first["process"]["pid"], d.pid());
    assert_eq!(first["process"]["program"], "pvar");
    let sent = var(&first, "demo_msgs_sent");
    assert_eq!(sent["class"], "MPI_T_PVAR_CLASS_COUNTER");
    assert_eq!(sent["datatype"], "MPI_UNSIGNED_LONG_LONG");
    assert_eq!(sent["category"], "demo_traffic");
    assert_eq!(
        var(&first, "demo_send_time")["class"],
        "MPI_T_PVAR_CLASS_TIMER"
    );
    assert_eq!(var(&first, "demo_send_time")["unit"], "seconds");
    let hwm = var(&first, "demo_queue_depth_hwm");
    assert_eq!(hwm["class"], "MPI_T_PVAR_CLASS_HIGHWATERMARK");
    let (levels, marks) = (u64s(&hwm["values"]), u64s(&hwm["marks"]));
    assert_eq!(levels.len(), 2);
    assert_eq!(marks.len(), 2);
    let state = var(&first, "demo_worker_state");
    assert_eq!(state["enumeration"], "demo_worker_state");
    for n in state["value_names"].as_array().unwrap() {
        assert!(
            [
                "idle",
                "computing",
                "sending",
                "receiving",
                "waiting",
                "done"
            ]
            .contains(&n.as_str().unwrap()),
            "{n}"
        );
    }
    let peer = var(&first, "demo_msgs_to_peer");
    assert_eq!(peer["bind"], "MPI_T_BIND_MPI_COMM");
    assert_eq!(peer["object"], 0x101);
    assert!(
        first["categories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "demo"
                && c["subcategories"]
                    .as_array()
                    .unwrap()
                    .contains(&Value::from("demo_traffic"))),
        "{}",
        first["categories"]
    );

    // A snapshot taken after the first read: counters never go down.
    let second = json(&ok(&dir, &["read", &pid, "--json", "--fresh"]));
    assert!(
        second["process"]["sequence"].as_u64() > first["process"]["sequence"].as_u64(),
        "--fresh gave an older snapshot"
    );
    assert!(second["process"]["monotonic_ns"].as_u64() > first["process"]["monotonic_ns"].as_u64());
    for name in ["demo_msgs_sent", "demo_msgs_received", "demo_bytes_sent"] {
        let (a, b) = (
            u64s(&var(&first, name)["values"])[0],
            u64s(&var(&second, name)["values"])[0],
        );
        assert!(b >= a, "{name} went from {a} to {b}");
    }
    let (a, b) = (
        u64s(&var(&first, "demo_msgs_to_peer")["values"]),
        u64s(&var(&second, "demo_msgs_to_peer")["values"]),
    );
    assert!(a.iter().zip(&b).all(|(x, y)| y >= x), "{a:?} then {b:?}");

    // The table.
    let table = ok(&dir, &["read", &pid]);
    assert!(table.contains(&format!("process {pid} (pvar)")), "{table}");
    assert!(table.contains("category demo / demo_traffic"), "{table}");
    for needle in [
        "demo_msgs_sent",
        "COUNTER",
        "HIGHWATERMARK",
        "level [",
        "mark [",
        "comm 0x101: [",
        "INT demo_worker_state",
        "DOUBLE seconds",
    ] {
        assert!(table.contains(needle), "no {needle:?} in:\n{table}");
    }

    // Without a pid: the demo is listed.
    let list = json(&ok(&dir, &["read", "--json"]));
    let listed = listed(&list, d.pid(), "demo");
    assert_eq!(listed["program"], "pvar");
    assert_eq!(listed["error"], Value::Null);
    let text = ok(&dir, &["read"]);
    assert!(text.contains(&pid) && text.contains("ok"), "{text}");

    assert_eq!(d.wait(), 0, "the demo failed: {}", d.stderr());
    // The header names a command that works as printed: `pvar` when one
    // is on the PATH, else this executable (run from another directory
    // than the workspace root, as here).
    let stderr = d.stderr();
    let watch = stderr
        .lines()
        .find_map(|l| l.strip_prefix("exporting: "))
        .and_then(|l| l.strip_suffix(&format!(" top {pid}")))
        .unwrap_or_else(|| panic!("no 'exporting: … top {pid}' line in:\n{stderr}"));
    assert!(
        watch == "pvar" || watch == PVAR,
        "{watch:?} (the binary is {PVAR})"
    );
    // It removed its region on the way out.
    assert!(!region_path(&dir, d.pid()).exists());
}

/// The frames of `pvar top --plain` output.
fn plain_frames(out: &str) -> Vec<String> {
    let mut frames = vec![String::new()];
    for l in out.lines() {
        if !l.is_empty() && l.chars().all(|c| c == '-') {
            frames.push(String::new());
        } else {
            let f = frames.last_mut().unwrap();
            f.push_str(l);
            f.push('\n');
        }
    }
    frames
}

#[test]
fn top_plain_shows_values_and_rates() {
    let dir = Dir::new("top");
    let d = demo(&dir, "4");
    let pid = d.pid().to_string();
    let out = ok(
        &dir,
        &[
            "top",
            &pid,
            "--plain",
            "--iterations",
            "4",
            "--interval",
            "0.2",
        ],
    );
    assert!(!out.contains('\x1b'), "escape sequences in plain output");
    let frames = plain_frames(&out);
    assert_eq!(frames.len(), 4, "{out}");
    for f in &frames {
        let header = f.lines().next().unwrap();
        assert!(header.starts_with("pvar top - pvar"), "{header}");
        assert!(header.contains(&format!("(pid {pid})")), "{header}");
        let titles = f
            .lines()
            .find(|l| l.starts_with("NAME"))
            .expect("column titles");
        for col in ["NAME", "CLASS", "VALUE", "RATE", "MARK"] {
            assert!(titles.contains(col), "{titles}");
        }
        for name in [
            "demo_msgs_sent",
            "demo_send_time",
            "demo_queue_depth_hwm",
            "demo_worker_state",
            "demo_msgs_to_peer",
            "comm 0x101",
        ] {
            assert!(f.contains(name), "no {name} in:\n{f}");
        }
    }
    // The first frame has no rate (one snapshot); a later one has rates,
    // since the demo publishes every 50 ms and frames are 200 ms apart.
    let row = |f: &str, name: &str| -> String {
        f.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}"))
            .to_string()
    };
    assert!(!row(&frames[0], "demo_msgs_sent").contains("/s"));
    assert!(
        frames[1..]
            .iter()
            .any(|f| row(f, "demo_msgs_sent").contains("/s")
                && row(f, "demo_send_time").contains("s/s")),
        "no rate in any frame:\n{out}"
    );

    // Filter and category.
    let out = ok(
        &dir,
        &[
            "top",
            &pid,
            "--plain",
            "--iterations",
            "1",
            "--filter",
            "QUEUE",
            "--sort",
            "value",
        ],
    );
    assert!(out.contains("demo_queue_depth_hwm"), "{out}");
    assert!(!out.contains("demo_msgs_sent"), "{out}");
    let out = ok(
        &dir,
        &["top", &pid, "--iterations", "1", "--category", "demo_peers"],
    );
    assert!(out.contains("demo_msgs_matrix"), "{out}");
    assert!(!out.contains("demo_queue_depth"), "{out}");
    let (code, _, err) = pvar(&dir, &["top", &pid, "--category", "no_such_category"]);
    assert_eq!(code, 1);
    assert!(err.contains("no category \"no_such_category\""), "{err}");
}

/// `pvar top` without a pid does what `pvar read` without one does: with
/// no exporting process it says so, with one it watches it, with several
/// it lists them.
#[test]
fn top_without_a_pid_watches_the_only_exporter() {
    let dir = Dir::new("top-no-pid");
    let (code, _, err) = pvar(&dir, &["top", "--plain", "--iterations", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no process of this user exports"), "{err}");
    let d = demo(&dir, "20");
    let out = ok(&dir, &["top", "--plain", "--iterations", "1"]);
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains(&format!("(pid {})", d.pid())),
        "{out}"
    );
    let second = Proc::spawn(
        &dir,
        "demo2",
        &["demo", "--json", "--threads", "1", "--duration", "20"],
    );
    let region = region_path(&dir, second.pid());
    wait_for("the second demo's export region", || region.exists());
    let (code, _, err) = pvar(&dir, &["top", "--plain", "--iterations", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("2 processes export"), "{err}");
    assert!(err.contains(&d.pid().to_string()), "{err}");
    assert!(err.contains(&second.pid().to_string()), "{err}");
}

#[test]
fn export_is_openmetrics_that_prometheus_parses() {
    let dir = Dir::new("export");
    let d = demo(&dir, "3");
    let pid = d.pid().to_string();
    let text = ok(&dir, &["export", &pid]);
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains("# TYPE demo_msgs_sent counter\n"), "{text}");
    check_demo_families(&text);
    // The classic format, as promtool and the Pushgateway read it.
    let classic = ok(&dir, &["export", &pid, "--format", "prometheus"]);
    assert!(
        classic.contains("# TYPE demo_msgs_sent_total counter\n")
            && classic.contains("# TYPE demo_worker_state gauge\n")
            && !classic.contains("# EOF"),
        "{classic}"
    );
    if let Some(families) = openmetrics_parser::classic_families(&classic) {
        let kind = |n: &str| {
            families
                .iter()
                .find(|f| f.name == n)
                .map(|f| f.kind.clone())
                .unwrap_or_else(|| panic!("no {n} in {families:?}"))
        };
        assert_eq!(kind("demo_msgs_sent"), "counter");
        assert_eq!(kind("demo_queue_depth"), "gauge");
        assert_eq!(kind("demo_send_time_seconds"), "counter");
    }
    let doc = json(&ok(&dir, &["export", &pid, "--format", "json"]));
    assert_eq!(doc["schema"], "pvar.snapshot.v1");
    assert_eq!(
        var(&doc, "demo_msgs_sent")["class"],
        "MPI_T_PVAR_CLASS_COUNTER"
    );
}

/// One HTTP exchange: (status, headers in lower case, body).
fn http(addr: &str, request: &[u8]) -> (u16, HashMap<String, String>, String) {
    let mut s = TcpStream::connect(addr).expect("connect to pvar serve");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the response");
    let raw = String::from_utf8(raw).expect("a UTF-8 response");
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no end of head: {raw:?}"));
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
    let status = status_line[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

#[test]
fn serve_answers_scrapes_over_http() {
    let dir = Dir::new("serve");
    let mut d = demo(&dir, "30");
    let pid = d.pid().to_string();
    let mut server = Command::new(PVAR)
        .args(["serve", &pid, "--listen", "127.0.0.1:0"])
        .env("PVAR_EXPORT_DIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pvar serve");
    let stdout = server.stdout.take().unwrap();
    // The first line, read on a thread so that the wait has a deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let _ = tx.send(first);
        // The rest, to check the exit message.
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let _ = tx.send(rest.join("\n"));
    });
    let first = rx.recv_timeout(PATIENCE).expect("no line from pvar serve");
    let url = first
        .strip_prefix("listening on http://")
        .and_then(|u| u.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line: {first:?}"));
    assert!(
        url.starts_with("127.0.0.1:") && !url.ends_with(":0"),
        "{url}"
    );

    // What Prometheus asks for: OpenMetrics.
    let (status, headers, body) = http(
        url,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0,\
          text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n\r\n",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers["content-type"],
        pvar::export::exposition::Format::OpenMetrics.content_type()
    );
    assert_eq!(headers["content-length"], body.len().to_string());
    assert!(body.ends_with("# EOF\n"));
    assert!(
        body.contains("\npvar_export_snapshot_age_seconds "),
        "{body}"
    );
    check_demo_families(&body);
    // No Accept header (curl, the Pushgateway's tools): the classic format.
    let (status, headers, body) = http(url, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers["content-type"],
        pvar::export::exposition::Format::Prometheus.content_type()
    );
    assert!(
        !body.contains("# EOF") && !body.contains("# UNIT"),
        "{body}"
    );
    assert!(
        body.contains("# TYPE demo_msgs_sent_total counter\n"),
        "{body}"
    );

    let (status, _, body) = http(url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200);
    assert!(body.contains("/metrics"), "{body}");
    let (status, _, _) = http(url, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 404);
    let (status, _, body) = http(url, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200);
    assert!(body.is_empty(), "a HEAD response with a body");
    let (status, headers, _) = http(url, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 405);
    assert_eq!(headers["allow"], "GET, HEAD");
    let (status, _, _) = http(url, b"this is not http\r\n\r\n");
    assert_eq!(status, 400);
    let (status, _, _) = http(url, b"GET /metrics SMTP/2\r\n\r\n");
    assert_eq!(status, 400);

    // A client that sends half a request and waits: timed out (408), and
    // the next client is served after it.
    let mut slow = TcpStream::connect(url).unwrap();
    slow.write_all(b"GET /met").unwrap();
    let started = Instant::now();
    let (status, _, _) = http(url, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(30));
    let mut answer = String::new();
    slow.set_read_timeout(Some(PATIENCE)).unwrap();
    slow.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");

    // The process is killed: the server notices and exits.
    d.child.kill().unwrap();
    d.wait();
    let deadline = Instant::now() + PATIENCE;
    let code = loop {
        if let Some(st) = server.try_wait().unwrap() {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!("pvar serve did not exit after the process ended");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    let rest = rx.recv_timeout(PATIENCE).unwrap();
    assert!(rest.contains(&format!("process {pid} ended")), "{rest:?}");
}

#[test]
fn errors_are_clear_and_exit_1() {
    let dir = Dir::new("errors");
    for args in [
        &["read", "999999999"][..],
        &["read", "999999999", "--json"],
        &["top", "999999999", "--plain"],
        &["export", "999999999"],
        &["serve", "999999999", "--listen", "127.0.0.1:0"],
    ] {
        let (code, stdout, stderr) = pvar(&dir, args);
        assert_eq!(code, 1, "pvar {args:?}: {stderr}");
        assert!(stdout.is_empty(), "pvar {args:?} printed {stdout}");
        assert!(
            stderr.contains("process 999999999") && stderr.contains("no export region"),
            "pvar {args:?}: {stderr}"
        );
        assert!(stderr.contains("no such process"), "{stderr}");
    }
    // This test's own process runs, but does not export.
    let me = std::process::id().to_string();
    let (code, _, stderr) = pvar(&dir, &["read", &me]);
    assert_eq!(code, 1);
    assert!(stderr.contains("does not export"), "{stderr}");

    // A region open to other users is refused, whoever we are.
    let user_dir = pvar::export::testing::user_dir(dir.path()).unwrap();
    let path = user_dir.join(&me);
    std::fs::write(&path, [0u8; 256]).unwrap();
    set_mode(&path, 0o644);
    let (code, _, stderr) = pvar(&dir, &["read", &me]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("refused") && stderr.contains("open to other users"),
        "{stderr}"
    );
    // Ours and private, but not a region.
    set_mode(&path, 0o600);
    let (code, _, stderr) = pvar(&dir, &["read", &me]);
    assert_eq!(code, 1);
    assert!(stderr.contains("not a pvar export region"), "{stderr}");
    // Another user's file is refused (only root can make one).
    if euid() == 0 {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; chown changes nothing else.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let (code, _, stderr) = pvar(&dir, &["read", &me]);
        assert_eq!(code, 1);
        assert!(
            stderr.contains("refused") && stderr.contains("belongs to uid 65534"),
            "{stderr}"
        );
    } else {
        eprintln!(
            "SKIPPED: the other-owner refusal needs root to chown a file (euid {})",
            euid()
        );
    }
    std::fs::remove_file(&path).unwrap();

    // Usage errors: status 2, naming the option.
    for (args, option) in [
        (&["top", "1", "--interval", "0"][..], "--interval"),
        (&["top", "1", "--interval", "soon"], "--interval"),
        (&["top", "1", "--sort", "size"], "--sort"),
        (&["top", "1", "--iterations", "0"], "--iterations"),
        (&["read", "--fresh"], "--fresh"),
        (&["export", "1", "--format", "xml"], "--format"),
    ] {
        let (code, _, stderr) = pvar(&dir, args);
        assert_eq!(code, 2, "pvar {args:?}: {stderr}");
        assert!(stderr.contains(option), "pvar {args:?}: {stderr}");
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn top_reports_the_end_of_the_process() {
    // The demo ends by itself (its exporter closes the region).
    let dir = Dir::new("end");
    let mut d = demo(&dir, "1");
    let pid = d.pid().to_string();
    let mut top = Proc::spawn(&dir, "top", &["top", &pid, "--plain", "--interval", "0.1"]);
    wait_for("the first frame of pvar top", || {
        top.stdout().contains("demo_msgs_sent")
    });
    assert_eq!(d.wait(), 0, "the demo failed: {}", d.stderr());
    assert_eq!(top.wait(), 0, "{}", top.stderr());
    let out = top.stdout();
    assert_eq!(
        out.lines().last(),
        Some(format!("process {pid} ended").as_str()),
        "{out}"
    );

    // The demo is killed (the region stays behind, stale).
    let mut d = demo(&dir, "30");
    let pid = d.pid().to_string();
    let mut top = Proc::spawn(&dir, "top2", &["top", &pid, "--plain", "--interval", "0.1"]);
    wait_for("the first frame of pvar top", || {
        top.stdout().contains("demo_msgs_sent")
    });
    d.child.kill().unwrap();
    d.wait();
    assert_eq!(top.wait(), 0, "{}", top.stderr());
    assert!(
        top.stdout().ends_with(&format!("process {pid} ended\n")),
        "{}",
        top.stdout()
    );
    // A reader now calls the left-behind region stale.
    let (code, _, stderr) = pvar(&dir, &["read", &pid]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("stale region") && stderr.contains("gone"),
        "{stderr}"
    );
    let list = json(&ok(&dir, &["read", "--json"]));
    let listed = listed(&list, d.pid(), "stale region");
    assert!(
        listed["error"].as_str().unwrap().contains("stale"),
        "{listed}"
    );
}

#[test]
fn top_on_a_terminal_restores_it_after_ctrl_c() {
    if !script_tty::available("the terminal mode of pvar top") {
        return;
    }
    let dir = Dir::new("tty");
    let d = demo(&dir, "30");
    // `script` gives pvar top a terminal; `stty -a` afterwards shows the
    // settings it left.
    let cmd = format!(
        "stty cols 100 rows 20; '{PVAR}' top {} --interval 0.2; echo \"status $?\"; stty -a",
        d.pid()
    );
    let out_path = dir.path().join("tty.out");
    let mut script = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("PVAR_EXPORT_DIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("run script");
    let raw = || std::fs::read_to_string(&out_path).unwrap_or_default();
    // Two frames drawn: raw mode is on.
    wait_for("pvar top's frames on the terminal", || {
        raw().matches("RATE").count() >= 2
    });
    let mut stdin = script.stdin.take().unwrap();
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + PATIENCE;
    while script.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = script.kill();
            panic!("pvar top did not quit on Ctrl-C:\n{:?}", raw());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = raw();
    assert!(out.contains("\x1b[?1049h"), "no alternate screen: {out:?}");
    let left = out
        .rfind("\x1b[?1049l")
        .expect("the alternate screen was not left");
    assert!(out[left..].contains("status 0"), "{out:?}");
    let stty = &out[left..];
    let flags: Vec<&str> = stty.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig"] {
        assert!(flags.contains(&flag), "{flag} not restored: {stty}");
    }
    // Every frame fits the 20 × 100 terminal.
    for frame in out.split("\x1b[H").skip(2) {
        let text = frame.split("\x1b[?25h").next().unwrap();
        assert!(text.split("\r\n").count() <= 20, "{text:?}");
    }
}

/// The terminal test cannot pass without running: with `script` missing
/// and required, it fails.
#[test]
fn the_terminal_test_fails_without_script_when_required() {
    assert!(script_tty::fails_without_script_when_required(
        "top_on_a_terminal_restores_it_after_ctrl_c"
    ));
}
