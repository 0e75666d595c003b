//! The outside view against the attacks of issue 30, each as a test that
//! fails if the attack works again:
//!
//! - another local user plants a directory, a file, a FIFO or a link
//!   under the name of the victim's export directory, or 400 look-alike
//!   names: the victim still exports (in a fallback directory, with a
//!   notice naming the path and its owner), nothing is written through a
//!   link, and the attacker can neither write into nor read the victim's
//!   directory;
//! - slow clients (50 connections trickling a byte a second, others that
//!   never read, more than the connection cap) do not hold up a scrape;
//! - a region claiming 256 MiB that the file does not hold is refused at
//!   once;
//! - names and label values carrying terminal escapes reach neither a
//!   terminal nor the page of `pvar serve` raw;
//! - a stopped (`SIGSTOP`) process shows as down: 503, and
//!   `pvar_export_up 0` under `--all`;
//! - `pvar serve --all` follows the processes of the user, and only
//!   theirs.
//!
//! A second OS user is needed for the first: tests run as root create it
//! (`useradd pvar-attacker`, once) and run commands as it with `setpriv`.
//! Not root, they print `SKIPPED: …` and pass, unless
//! `PVAR_REQUIRE_ATTACKER=1` is set (as `scripts/test.sh` does): then
//! they fail. The attacker runs copies of the binaries in a temporary
//! directory it can reach.
//!
//! Processes with hostile names are this test binary run again with
//! `PVAR_ATTACK_FIXTURE` set (see [`fixture`]); nothing waits for a fixed
//! time: every wait polls for its condition up to a deadline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const PVAR: &str = env!("CARGO_BIN_EXE_pvar");
/// Longest wait for anything (a debug build on a loaded machine is slow).
const PATIENCE: Duration = Duration::from_secs(60);
/// The second user.
const ATTACKER: &str = "pvar-attacker";

fn euid() -> u32 {
    pvar::export::testing::effective_uid()
}

/// A temporary directory, removed when dropped; `shared`: mode 1777, as
/// `/dev/shm` (every user may create in it, none remove another's).
struct Dir(PathBuf);

impl Dir {
    fn new(test: &str, shared: bool) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pvar-attacks-{test}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        if shared {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777)).unwrap();
        }
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

/// The second user: its uid and gid.
struct Attacker {
    uid: u32,
    gid: u32,
}

fn required() -> bool {
    std::env::var("PVAR_REQUIRE_ATTACKER").is_ok_and(|v| v == "1")
}

/// The second user, made if missing; `None` (after a loud SKIPPED line)
/// when this test does not run as root and `PVAR_REQUIRE_ATTACKER` is not
/// set.
fn attacker(test: &str) -> Option<&'static Attacker> {
    static ONE: OnceLock<Result<Attacker, String>> = OnceLock::new();
    let a = ONE.get_or_init(|| {
        if euid() != 0 {
            return Err(format!("not root (euid {}): no second user", euid()));
        }
        let id = |flag: &str| -> Option<u32> {
            let out = Command::new("id").args([flag, ATTACKER]).output().ok()?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        if id("-u").is_none() {
            // Another test binary may make it at the same time: the result
            // is checked, not the command's status.
            let _ = Command::new("useradd")
                .args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                ])
                .arg(ATTACKER)
                .status();
        }
        let (Some(uid), Some(gid)) = (id("-u"), id("-g")) else {
            return Err(format!("could not create user {ATTACKER} (useradd)"));
        };
        Ok(Attacker { uid, gid })
    });
    match a {
        Ok(a) => Some(a),
        Err(why) if required() => panic!("PVAR_REQUIRE_ATTACKER=1 but {why}"),
        Err(why) => {
            eprintln!("SKIPPED: {test}: {why} (set PVAR_REQUIRE_ATTACKER=1 to fail instead)");
            None
        }
    }
}

/// A copy of `program` in `dir/bin` that the attacker can run, whatever
/// the permissions of the checkout (removed with `dir`).
fn reachable_copy(dir: &Dir, program: &Path, name: &str) -> PathBuf {
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = bin.join(name);
    if !copy.exists() {
        std::fs::copy(program, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    copy
}

impl Attacker {
    /// `program args…` run as the attacker, with a clean environment and
    /// `PVAR_EXPORT_DIR=dir`.
    fn command(&self, dir: &Dir, program: &Path) -> Command {
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--clear-groups")
            .arg(program)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("PVAR_EXPORT_DIR", dir.path())
            .current_dir("/")
            .stdin(Stdio::null());
        c
    }

    /// Runs `pvar args…` as the attacker: (status, stdout, stderr).
    fn pvar(&self, dir: &Dir, args: &[&str]) -> (i32, String, String) {
        let pvar = reachable_copy(dir, Path::new(PVAR), "pvar");
        output(self.command(dir, &pvar).args(args))
    }

    /// Runs a shell command line as the attacker; its status.
    fn sh(&self, dir: &Dir, script: &str) -> (i32, String, String) {
        output(self.command(dir, Path::new("/bin/sh")).args(["-c", script]))
    }
}

fn output(c: &mut Command) -> (i32, String, String) {
    let out = c.output().expect("run a command");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `pvar args…` as this user with `PVAR_EXPORT_DIR=dir`.
fn pvar(dir: &Dir, args: &[&str]) -> (i32, String, String) {
    output(
        Command::new(PVAR)
            .args(args)
            .env("PVAR_EXPORT_DIR", dir.path())
            .env_remove("PVAR_EXPORT")
            .stdin(Stdio::null()),
    )
}

/// Polls `cond` until it holds, failing with `what` after [`PATIENCE`].
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process killed (and reaped) when dropped.
struct Proc(Child);

impl Proc {
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // SAFETY: kill(2) with SIGCONT first, in case a test stopped it.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGCONT) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Name of the program the fixture runs as (`/proc/<pid>/comm`): markup
/// for the page of `pvar serve`, 15 bytes at most.
const HOSTILE_COMM: &str = "<b>\"&'x</b>";
/// A variable name and a label value with terminal escapes: clear the
/// screen, set the window title, write the clipboard (OSC 52).
const HOSTILE_NAME: &str = "evil\x1b[2J\x1b]0;pwned\x07";
const HOSTILE_LABEL: &str = "/x\x1b]52;c;cHduZWQ=\x07\u{9b}31m";

/// The fixture: when `PVAR_ATTACK_FIXTURE` is set (this binary run again
/// by a test), a process that exports variables with hostile names,
/// prints `PVAR-FIXTURE-READY` and runs until its standard input closes.
/// A plain test run returns at once.
#[test]
fn fixture() {
    if std::env::var_os("PVAR_ATTACK_FIXTURE").is_none() {
        return;
    }
    // The process's name (its main thread's; this runs on a test thread).
    std::fs::write("/proc/self/comm", HOSTILE_COMM).unwrap();
    let reg = pvar::Registry::new();
    reg.counter(HOSTILE_NAME)
        .description("clears \x1b[2J the screen")
        .register()
        .unwrap()
        .add(42);
    // A label value as the `metrics` recorder names its series.
    let label = format!("req{{path=\"{HOSTILE_LABEL}\"}}");
    reg.counter(&label).register().unwrap().add(7);
    reg.counter("plain_total").register().unwrap().add(1);
    let options = pvar::export::ExportOptions {
        interval: Duration::from_millis(50),
        ..pvar::export::ExportOptions::with_env()
    };
    let exporter = pvar::export::Exporter::start(&reg, options).expect("export");
    // libtest may have written "test fixture ... " on this line.
    println!("\nPVAR-FIXTURE-READY");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).unwrap_or(0) > 0 {}
    drop(exporter);
}

/// Starts the fixture exporting into `dir` (with `env` added) and waits
/// until it is ready.
fn start_fixture(dir: &Dir, env: &[(&str, &str)]) -> Proc {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "fixture", "--nocapture", "--test-threads", "1"])
        .env("PVAR_ATTACK_FIXTURE", "1")
        .env("PVAR_EXPORT_DIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "PVAR-FIXTURE-READY" {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the fixture ended early"
        );
    }
    // Keep reading its output so that it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Proc(child)
}

/// `pvar serve args…` started; its address (`127.0.0.1:port`).
fn start_serve(dir: &Dir, args: &[&str]) -> (Proc, String) {
    let mut child = Command::new(PVAR)
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .env("PVAR_EXPORT_DIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next().and_then(Result::ok).unwrap_or_default());
        for _ in lines {}
    });
    let first = rx.recv_timeout(PATIENCE).expect("no line from pvar serve");
    let addr = first
        .strip_prefix("listening on http://")
        .and_then(|u| u.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    (Proc(child), addr)
}

/// `GET path` with `accept`: (status, body).
fn get(addr: &str, path: &str, accept: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n{accept}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map_or("", |b| b.1).to_string();
    (status, body)
}

#[test]
fn another_user_can_neither_block_nor_hijack_an_export() {
    let Some(a) = attacker("another_user_can_neither_block_nor_hijack_an_export") else {
        return;
    };
    let me = euid();
    for planted in ["directory", "symlink", "fifo", "file", "look-alikes"] {
        let dir = Dir::new("plant", true);
        let primary = dir.path().join(format!("pvar-{me}"));
        let trap = dir.path().join("attacker-dir");
        let p = primary.display().to_string();
        let t = trap.display().to_string();
        let script = match planted {
            "directory" => format!("mkdir -m 777 '{p}'"),
            "symlink" => format!("mkdir -m 777 '{t}' && ln -s '{t}' '{p}'"),
            "fifo" => format!("mkfifo -m 666 '{p}'"),
            "file" => format!("touch '{p}' && chmod 666 '{p}'"),
            // Names the victim's fallback directories and pids could take.
            _ => format!(
                "for i in $(seq 1 400); do mkdir -m 777 '{p}.'$i; touch '{}/pvar.{me}.'$i; done",
                dir.path().display()
            ),
        };
        let (code, _, err) = a.sh(&dir, &script);
        assert_eq!(code, 0, "planting a {planted}: {err}");

        // The victim exports anyway, and its readers find it.
        let f = start_fixture(&dir, &[]);
        let (code, out, err) = pvar(&dir, &["read", &f.pid().to_string(), "--json"]);
        assert_eq!(code, 0, "{planted}: {err}");
        assert!(out.contains("plain_total"), "{planted}: {out}");
        let (code, _, err) = pvar(&dir, &["read"]);
        assert_eq!(code, 0);
        if planted != "look-alikes" {
            // The listing says what was in the way, and whose it is.
            assert!(
                err.contains(&format!("ignored {p}")) && err.contains(ATTACKER),
                "{planted}: {err}"
            );
        }
        // Nothing was written through the link or into the attacker's
        // directories.
        if planted == "symlink" {
            assert_eq!(std::fs::read_dir(&trap).unwrap().count(), 0);
        }
        if planted == "directory" {
            assert_eq!(std::fs::read_dir(&primary).unwrap().count(), 0);
        }

        // The attacker cannot see, read or write the victim's region.
        let pid = f.pid().to_string();
        let (code, _, err) = a.pvar(&dir, &["read", &pid]);
        assert_eq!(code, 1, "{planted}: the attacker read the victim's region");
        assert!(err.contains("no export region"), "{planted}: {err}");
        let (_, out, _) = a.pvar(&dir, &["read", "--json"]);
        assert!(
            !out.contains(&format!("\"pid\": {pid}")),
            "{planted}: {out}"
        );
        let region = pvar::export::testing::list_in(dir.path())
            .regions
            .into_iter()
            .find(|r| r.pid == f.pid())
            .expect("the victim's region is listed")
            .path;
        let victim_dir = region.parent().unwrap().display().to_string();
        for script in [
            format!("cat '{}'", region.display()),
            format!("ls '{victim_dir}'"),
            format!("touch '{victim_dir}/1'"),
            format!("rm -f '{}'", region.display()),
            format!("mv '{victim_dir}' '{victim_dir}.moved'"),
        ] {
            let (code, _, err) = a.sh(&dir, &script);
            assert_ne!(code, 0, "{planted}: the attacker could `{script}`: {err}");
        }
        assert!(region.exists());
    }
}

#[test]
fn slow_clients_do_not_hold_up_a_scrape() {
    let dir = Dir::new("slow", false);
    let f = start_fixture(&dir, &[]);
    let (_serve, addr) = start_serve(&dir, &[&f.pid().to_string()]);
    // 50 clients that send a byte a second, 20 that send a request and
    // never read the answer, and 300 more connections than that, past the
    // cap: a scrape is still answered.
    let mut trickling: Vec<TcpStream> = (0..50)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    let mut mute: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
            s
        })
        .collect();
    let idle: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    for round in 0..10 {
        for s in &mut trickling {
            let _ = s.write_all(b"G");
        }
        let started = Instant::now();
        let (status, body) = get(&addr, "/metrics", None);
        assert_eq!(status, 200, "round {round}: {body}");
        assert!(body.contains("plain_total 1"), "{body}");
        // Generous: the figure (each scrape within 1 s) is measured by
        // `cargo bench -p pvar-cli --bench serve_slow_clients`. The server
        // this replaced answered one connection at a time, 5 s each.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "round {round}: a scrape took {:?} behind slow clients",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    mute.clear();
    drop(idle);
}

#[test]
fn a_region_claiming_what_its_file_does_not_hold_is_refused() {
    use pvar::export::testing::{self, RegionFile};
    let dir = Dir::new("claim", false);
    // A process of ours to name in the header.
    let sleeper = Proc(
        Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let user_dir = testing::user_dir(dir.path()).unwrap();
    let path = user_dir.join(sleeper.pid().to_string());
    RegionFile {
        pid: sleeper.pid(),
        uid: euid(),
        published: 1,
        slots: [
            (0, 0, 0, 0),
            (2, testing::FIRST_PAYLOAD, testing::MAX_PAYLOAD, 12345),
        ],
        size: Some(testing::FIRST_PAYLOAD + testing::MAX_PAYLOAD),
        ..RegionFile::default()
    }
    .write(&path)
    .unwrap();
    let (code, out, err) = pvar(&dir, &["read", &sleeper.pid().to_string()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("no consistent snapshot") && err.contains("holds no data"),
        "{err}"
    );
    assert!(!err.contains("attempts"), "read again and again: {err}");
}

/// Whether `text` carries a character a terminal would act on.
fn has_controls(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n') || c == '\u{9b}')
}

#[test]
fn hostile_names_reach_no_terminal_and_no_page_raw() {
    let dir = Dir::new("names", false);
    let f = start_fixture(&dir, &[]);
    let pid = f.pid().to_string();
    for args in [
        &["read", &pid][..],
        &["top", &pid, "--plain", "--iterations", "1"],
        &["read"],
    ] {
        let (code, out, err) = pvar(&dir, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            !has_controls(&out) && !has_controls(&err),
            "{args:?}: {out:?}"
        );
        if args[0] != "read" || args.len() > 1 {
            assert!(out.contains("evil\\x1b[2J"), "{args:?}: {out}");
        }
    }
    // JSON escapes them its own way; a pipe gets the exposition exact.
    let (_, json, _) = pvar(&dir, &["read", &pid, "--json"]);
    assert!(!has_controls(&json), "{json:?}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        doc["variables"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == HOSTILE_NAME),
        "the JSON keeps the name exact"
    );
    let (_, exact, _) = pvar(&dir, &["export", &pid]);
    assert!(exact.contains(HOSTILE_LABEL), "{exact:?}");
    // On a terminal (`script` gives one), `pvar export` escapes them.
    if Command::new("script").arg("--version").output().is_ok() {
        let cmd = format!("'{PVAR}' export {pid}");
        let out = Command::new("script")
            .args(["-q", "-e", "-c", &cmd, "/dev/null"])
            .env("PVAR_EXPORT_DIR", dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
        assert!(text.contains("plain_total"), "{text}");
        assert!(!has_controls(&text), "{text:?}");
    } else {
        eprintln!("SKIPPED: `script` (util-linux) not installed: pvar export on a terminal");
    }
    // The page of `pvar serve`: the program's name escaped.
    let (_serve, addr) = start_serve(&dir, &[&pid]);
    let (status, page) = get(&addr, "/", None);
    assert_eq!(status, 200);
    assert!(
        page.contains("&lt;b&gt;&quot;&amp;&#39;x&lt;/b&gt;"),
        "{page}"
    );
    assert!(!page.contains("<b>"), "{page}");
    // An error message echoing a name is made safe too.
    let (code, _, err) = pvar(
        &dir,
        &["top", &pid, "--plain", "--category", "no\x1b[2Jsuch"],
    );
    assert_eq!(code, 1);
    assert!(!has_controls(&err), "{err:?}");
}

#[test]
fn a_stopped_process_shows_as_down() {
    let dir = Dir::new("stopped", false);
    let f = start_fixture(&dir, &[]);
    let pid = f.pid();
    let (_serve, addr) = start_serve(&dir, &[&pid.to_string()]);
    let (_all, all_addr) = start_serve(&dir, &["--all"]);
    assert_eq!(get(&addr, "/metrics", None).0, 200);
    let up = format!("pvar_export_up{{pid=\"{pid}\",program=\"{HOSTILE_COMM_LABEL}\"}}");
    wait_for("the process up under --all", || {
        get(&all_addr, "/metrics", None)
            .1
            .contains(&format!("{up} 1"))
    });
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let stopped = Instant::now();
    let mut body = String::new();
    wait_for("503 for the stopped process", || {
        let (status, b) = get(&addr, "/metrics", None);
        body = b;
        status == 503
    });
    let took = stopped.elapsed();
    assert!(body.contains("stopped publishing"), "{body}");
    eprintln!("a stopped process answered 503 after {took:?}");
    wait_for("pvar_export_up 0 for the stopped process", || {
        get(&all_addr, "/metrics", None)
            .1
            .contains(&format!("{up} 0"))
    });
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGCONT) }, 0);
    wait_for("200 again once it runs", || {
        get(&addr, "/metrics", None).0 == 200
    });
}

/// [`HOSTILE_COMM`] as an OpenMetrics label value.
const HOSTILE_COMM_LABEL: &str = "<b>\\\"&'x</b>";

#[test]
fn serve_all_follows_the_processes_of_the_user() {
    let dir = Dir::new("all", true);
    let (_serve, addr) = start_serve(&dir, &["--all"]);
    let a = start_fixture(&dir, &[("PMI_RANK", "0")]);
    let b = start_fixture(&dir, &[("OMPI_COMM_WORLD_RANK", "1")]);
    let series = |pid: u32, rank: u32| {
        format!("plain_total{{pid=\"{pid}\",program=\"{HOSTILE_COMM_LABEL}\",rank=\"{rank}\"}} 1")
    };
    let mut body = String::new();
    wait_for("both processes in one scrape", || {
        body = get(&addr, "/metrics", Some("application/openmetrics-text")).1;
        body.contains(&series(a.pid(), 0)) && body.contains(&series(b.pid(), 1))
    });
    // One family for both, each series once.
    assert_eq!(body.matches("# TYPE plain counter").count(), 1, "{body}");
    let b_pid = b.pid();
    drop(b);
    wait_for("the ended process gone from the scrape", || {
        body = get(&addr, "/metrics", None).1;
        !body.contains(&format!("pid=\"{b_pid}\""))
    });
    assert!(body.contains(&series(a.pid(), 0)), "{body}");
    // Another user's exporting process is not this user's target.
    if let Some(att) = attacker("serve_all_follows_the_processes_of_the_user") {
        let fixture = reachable_copy(&dir, &std::env::current_exe().unwrap(), "fixture");
        let mut child = att
            .command(&dir, &fixture)
            .args(["--exact", "fixture", "--nocapture", "--test-threads", "1"])
            .env("PVAR_ATTACK_FIXTURE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let theirs = child.id();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while line.trim() != "PVAR-FIXTURE-READY" {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the attacker's fixture ended"
            );
        }
        let guard = Proc(child);
        let body = get(&addr, "/metrics", None).1;
        assert!(!body.contains(&format!("pid=\"{theirs}\"")), "{body}");
        drop(guard);
    }
}
