//! The real consumer: a Prometheus server (Debian's `prometheus`, run on
//! 127.0.0.1 with a temporary configuration and storage) scrapes
//! `pvar serve` of a process with a variable of every class and the
//! `metrics` recorder's counters, gauges and histograms (units given),
//! and its HTTP API must show every family ingested with the type, unit
//! and values of the exposition; a stopped process must show as `up 0`
//! within 10 s; `promtool check metrics` must pass the classic format
//! with nothing to say.
//!
//! Needs `prometheus` and `promtool` on the PATH
//! (`scripts/prometheus-tests.sh` installs them as root and runs this with
//! `PVAR_REQUIRE_PROMETHEUS=1`). Without them the tests print
//! `SKIPPED: …` and pass, unless `PVAR_REQUIRE_PROMETHEUS=1` is set.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const PVAR: &str = env!("CARGO_BIN_EXE_pvar");
/// Longest wait for Prometheus to start and ingest (bounded, as the whole
/// stage is).
const PATIENCE: Duration = Duration::from_secs(90);

fn required() -> bool {
    std::env::var("PVAR_REQUIRE_PROMETHEUS").is_ok_and(|v| v == "1")
}

/// Whether `tool --version` runs; else SKIPPED (or a failure when
/// required).
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !required(),
            "PVAR_REQUIRE_PROMETHEUS=1 but `{tool}` is not runnable (scripts/prometheus-tests.sh installs it)"
        );
        eprintln!(
            "SKIPPED: `{tool}` not installed (apt-get install prometheus; \
             scripts/prometheus-tests.sh does it as root)"
        );
    }
    ok
}

/// A temporary directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("pvar-prom-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
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

/// A child killed (and reaped) when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child; SIGCONT in case it was stopped.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGCONT) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fixture: when `PVAR_PROM_FIXTURE` is set (this binary run again),
/// a process exporting one variable of every class and the recorder's
/// series, with values that do not change, until its input closes.
#[test]
fn fixture() {
    if std::env::var_os("PVAR_PROM_FIXTURE").is_none() {
        return;
    }
    let reg = pvar::Registry::new();
    reg.categories().define("net", "network").unwrap();
    reg.counter("msgs_sent")
        .description("messages \"sent\" per peer")
        .category("net")
        .count(3)
        .register()
        .unwrap()
        .add_at(1, 41);
    reg.aggregate::<f64>("balance")
        .register()
        .unwrap()
        .add(-2.5);
    reg.timer("send_time")
        .register()
        .unwrap()
        .add_elapsed(Duration::from_millis(1500));
    reg.level::<u64>("inflight").register().unwrap().add(7);
    reg.size::<u64>("pool_bytes").register().unwrap().set(4096);
    reg.percentage("busy").register().unwrap().set(0.25);
    let e = pvar::Enumeration::new("phase", [("idle", 0), ("sending", 1)]).unwrap();
    reg.state("phase").enumeration(e).register().unwrap().set(1);
    reg.generic::<i64>("offset").register().unwrap().set(-7);
    let hw = reg.high_watermark::<u64>("queue_depth").register().unwrap();
    hw.update(40);
    hw.update(3);
    let per_peer = reg
        .counter("per_peer")
        .bind(pvar::BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let world = per_peer.create_instance(0x101, 2).unwrap();
    world.add_at(1, 9);

    let recorder = pvar::recorder::PvarRecorder::new(&reg);
    metrics::with_local_recorder(&recorder, || {
        metrics::describe_counter!("sent", metrics::Unit::Bytes, "bytes sent");
        metrics::describe_histogram!("wait", metrics::Unit::Seconds, "time waited");
        metrics::counter!("requests", "method" => "GET").increment(5);
        metrics::counter!("sent").increment(1234);
        metrics::gauge!("temperature", "room" => "lab").set(-4.5);
        let h = metrics::histogram!("wait");
        for v in [0.003, 0.2, 0.2, 7.0] {
            h.record(v);
        }
    });
    assert_eq!(recorder.stats().failed_registrations, 0);
    let options = pvar::export::ExportOptions {
        interval: Duration::from_millis(100),
        ..pvar::export::ExportOptions::with_env()
    };
    let exporter = pvar::export::Exporter::start(&reg, options).expect("export");
    println!("\nPVAR-FIXTURE-READY");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).unwrap_or(0) > 0 {}
    drop((exporter, world));
}

fn start_fixture(dir: &Dir) -> Proc {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fixture", "--nocapture", "--test-threads", "1"])
        .env("PVAR_PROM_FIXTURE", "1")
        .env("PVAR_EXPORT_DIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "PVAR-FIXTURE-READY" {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the fixture ended early"
        );
    }
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Proc(child)
}

/// `pvar serve args…` on a free port: the server and its address.
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
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    std::thread::spawn(move || for _ in lines {});
    let addr = first
        .strip_prefix("listening on http://")
        .and_then(|u| u.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    (Proc(child), addr)
}

/// A free port on 127.0.0.1 (bound, then released for Prometheus).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on `addr`: (status, body).
fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw.get(9..12)?.parse().ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    // Prometheus answers small results whole, larger ones chunked.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Some((status, body))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// Percent-encodes a query string value.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// An API call's `data`, if it succeeded.
fn api(prom: &str, path: &str) -> Option<Value> {
    let (status, body) = get(prom, path)?;
    let v: Value = serde_json::from_str(&body).ok()?;
    (status == 200 && v["status"] == "success").then(|| v["data"].clone())
}

/// The instant vector of `query`: labels (without `job` and `instance`)
/// → value, for the job `job`.
fn query(prom: &str, q: &str) -> Option<BTreeMap<String, f64>> {
    let data = api(prom, &format!("/api/v1/query?query={}", encode(q)))?;
    let mut out = BTreeMap::new();
    for r in data["result"].as_array()? {
        let mut labels: Vec<(String, String)> = r["metric"]
            .as_object()?
            .iter()
            .filter(|(k, _)| *k != "job" && *k != "instance")
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        labels.sort();
        let key = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let value: f64 = r["value"][1].as_str()?.parse().ok()?;
        out.insert(key, value);
    }
    Some(out)
}

/// What an OpenMetrics exposition says: families (name → type, unit)
/// and samples (the key of `query` → value).
struct Exposed {
    families: Vec<(String, String, String)>,
    samples: BTreeMap<String, f64>,
}

fn parse_exposition(text: &str) -> Exposed {
    let mut families = Vec::new();
    let mut units: HashMap<String, String> = HashMap::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (n, t) = rest.split_once(' ').unwrap();
            families.push((n.to_string(), t.to_string(), String::new()));
        } else if let Some(rest) = line.strip_prefix("# UNIT ") {
            let (n, u) = rest.split_once(' ').unwrap();
            units.insert(n.to_string(), u.to_string());
        } else if !line.starts_with('#') {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = match series.split_once('{') {
                Some((n, l)) => (n, l.strip_suffix('}').unwrap()),
                None => (series, ""),
            };
            let mut pairs: Vec<(String, String)> = vec![("__name__".into(), name.into())];
            let mut rest = labels;
            while let Some(eq) = rest.find("=\"") {
                let k = rest[..eq].trim_start_matches(',').to_string();
                let mut v = String::new();
                let mut chars = rest[eq + 2..].char_indices();
                let mut end = rest.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            Some((_, 'n')) => v.push('\n'),
                            Some((_, c)) => v.push(c),
                            None => {}
                        },
                        '"' => {
                            end = eq + 2 + i + 1;
                            break;
                        }
                        c => v.push(c),
                    }
                }
                pairs.push((k, v));
                rest = &rest[end..];
            }
            pairs.sort();
            let key = pairs
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",");
            let value = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().unwrap(),
            };
            samples.insert(key, value);
        }
    }
    for f in &mut families {
        f.2 = units.get(&f.0).cloned().unwrap_or_default();
    }
    Exposed { families, samples }
}

/// Prometheus with a temporary configuration scraping `targets` (job
/// name → address) every second.
fn start_prometheus(dir: &Dir, targets: &[(&str, &str)]) -> (Proc, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut config = String::from(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
         scrape_configs:\n",
    );
    for (job, target) in targets {
        config.push_str(&format!(
            "  - job_name: {job}\n    static_configs:\n      - targets: ['{target}']\n"
        ));
    }
    let file = dir.path().join("prometheus.yml");
    std::fs::write(&file, config).unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", file.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .arg("--log.level=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("run prometheus");
    (Proc(child), addr)
}

/// Polls `f` until it gives `Some`, failing with `what` after
/// [`PATIENCE`].
fn wait_for<T>(what: &str, dir: &Dir, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            let log =
                std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
            panic!("timed out waiting for {what}\nprometheus log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn prometheus_ingests_every_family_with_its_type_unit_and_value() {
    if !have("prometheus") {
        return;
    }
    let dir = Dir::new("ingest");
    let fixture = start_fixture(&dir);
    let pid = fixture.0.id();
    let (_serve, target) = start_serve(&dir, &[&pid.to_string()]);
    let (_all, all_target) = start_serve(&dir, &["--all"]);
    let (_prom, prom) = start_prometheus(&dir, &[("pvar", &target), ("node", &all_target)]);

    // What pvar exposes (OpenMetrics, as Prometheus asks for it).
    let out = Command::new(PVAR)
        .args(["export", &pid.to_string()])
        .env("PVAR_EXPORT_DIR", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let exposed = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    assert!(exposed.families.len() >= 15, "{:?}", exposed.families);

    wait_for("the target up", &dir, || {
        let up = query(&prom, "up{job=\"pvar\"}")?;
        (up.values().next() == Some(&1.0)).then_some(())
    });
    // Every sample, ingested with its value (the freshness gauges move).
    let ingested = wait_for("every sample ingested", &dir, || {
        let all = query(&prom, "{job=\"pvar\"}")?;
        let missing = exposed
            .samples
            .keys()
            .filter(|k| !all.contains_key(*k))
            .count();
        (missing == 0).then_some(all)
    });
    for (key, want) in &exposed.samples {
        if key.contains("pvar_export_snapshot") {
            continue;
        }
        let got = ingested[key];
        assert!(
            got == *want || (got - want).abs() <= 1e-12 * want.abs(),
            "{key}: Prometheus has {got}, pvar exposed {want}"
        );
    }
    // Every family's type and unit in Prometheus's metadata.
    let metadata = wait_for("the metadata of every family", &dir, || {
        let m = api(&prom, "/api/v1/metadata")?;
        let have_all = exposed.families.iter().all(|(n, _, _)| m.get(n).is_some());
        have_all.then_some(m)
    });
    for (name, kind, unit) in &exposed.families {
        let entries = metadata[name].as_array().unwrap();
        assert!(
            entries
                .iter()
                .any(|e| e["type"] == kind.as_str() && e["unit"] == unit.as_str()),
            "{name}: pvar says {kind} of unit {unit:?}, Prometheus has {entries:?}"
        );
    }
    for (name, kind) in [
        ("msgs_sent", "counter"),
        ("send_time_seconds", "counter"),
        ("busy_ratio", "gauge"),
        ("phase", "stateset"),
        ("temperature", "gauge"),
        ("sent_bytes", "counter"),
        ("wait_seconds", "histogram"),
    ] {
        assert!(
            exposed.families.iter().any(|f| f.0 == name && f.1 == kind),
            "no {kind} {name}: {:?}",
            exposed.families
        );
    }
    // Signs, buckets and units as recorded.
    assert_eq!(ingested["__name__=temperature,room=lab"], -4.5);
    assert_eq!(ingested["__name__=balance"], -2.5);
    assert_eq!(ingested["__name__=wait_seconds_bucket,le=0.25"], 3.0);
    assert_eq!(ingested["__name__=wait_seconds_count"], 4.0);
    assert_eq!(ingested["__name__=sent_bytes_total"], 1234.0);
    // The node target: the same series with the process's labels.
    let node = wait_for("the --all target's series", &dir, || {
        let v = query(&prom, "sent_bytes_total{job=\"node\"}")?;
        (!v.is_empty()).then_some(v)
    });
    let key = format!("__name__=sent_bytes_total,pid={pid},program=prometheus-");
    assert!(node.keys().any(|k| k.starts_with(&key)), "{node:?}");

    // A stopped process shows as down (503: Prometheus's `up` is 0).
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let stopped = Instant::now();
    wait_for("up 0 for the stopped process", &dir, || {
        let up = query(&prom, "up{job=\"pvar\"}")?;
        (up.values().next() == Some(&0.0)).then_some(())
    });
    let down = stopped.elapsed();
    eprintln!("prometheus: up 0 {:.1} s after SIGSTOP", down.as_secs_f64());
    assert!(
        down < Duration::from_secs(10),
        "a stopped process showed as down after {down:?}, not within 10 s"
    );
}

#[test]
fn promtool_passes_the_classic_format() {
    if !have("promtool") {
        return;
    }
    let dir = Dir::new("promtool");
    let fixture = start_fixture(&dir);
    let out = Command::new(PVAR)
        .args([
            "export",
            &fixture.0.id().to_string(),
            "--format",
            "prometheus",
        ])
        .env("PVAR_EXPORT_DIR", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check.stdin.take().unwrap().write_all(&out.stdout).unwrap();
    let result = check.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(
        result.status.success() && said.trim().is_empty(),
        "promtool check metrics: {said}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
