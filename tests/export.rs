//! The export region seen from outside: values equal the in-process read
//! (and the components' own `get`) at a quiescent point (also from another process), the exporter
//! survives threads coming and going, and the reader refuses or reports
//! every bad region instead of crashing.

#[path = "support/openmetrics_parser.rs"]
mod openmetrics_parser;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use pvar::export::exposition::{self, Format};
use pvar::export::testing::{self, RegionFile};
use pvar::export::{ExportOptions, Exporter, Number, Region, RegionError, Snapshot, wire};
use pvar::{BindKind, Callbacks, Datatype, Enumeration, Notify, PvarClass, Registry};

/// One exporter per process: the tests that start one take turns.
static EXPORTING: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    EXPORTING.lock().unwrap_or_else(|p| p.into_inner())
}

/// A private directory for a test's regions.
fn private_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pvar-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn options(dir: &Path, ms: u64) -> ExportOptions {
    ExportOptions {
        interval: Duration::from_millis(ms),
        dir: dir.to_path_buf(),
        ..ExportOptions::default()
    }
}

/// A registry with a variable of every class and storage kind: arrays,
/// a bound variable with two instances, an enumerated STATE, callback
/// variables, categories. Returns what a test updates.
struct Zoo {
    reg: Registry,
    counter: pvar::Counter,
    level: pvar::Level<u64>,
    high: pvar::HighWatermark<u64>,
    low: pvar::LowWatermark<f64>,
    timer: pvar::Timer,
    per_peer: pvar::Bound<pvar::Counter>,
}

fn zoo() -> Zoo {
    let reg = Registry::new();
    reg.categories().define("net", "network").unwrap();
    let counter = reg
        .counter("msgs_sent")
        .description("messages \"sent\"\nper peer")
        .count(3)
        .category("net")
        .register()
        .unwrap();
    let agg = reg.aggregate::<f64>("bytes_sent").register().unwrap();
    let timer = reg.timer("send_time").register().unwrap();
    let level = reg.level::<u64>("inflight").register().unwrap();
    let size = reg.size::<u64>("pool_bytes").register().unwrap();
    let pct = reg.percentage("busy_fraction").register().unwrap();
    let e = Enumeration::new("phase", [("idle", 0), ("sending", 1), ("draining", 2)]).unwrap();
    let state = reg.state("phase").enumeration(e).register().unwrap();
    let generic = reg.generic::<i64>("offset").register().unwrap();
    let high = reg.high_watermark::<u64>("queue_depth").register().unwrap();
    let low = reg.low_watermark::<f64>("min_credit").register().unwrap();
    let per_peer = reg
        .counter("per_peer{kind=\"eager\"}")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    reg.callback_pvar(
        "pool_free",
        PvarClass::Size,
        Datatype::UnsignedLongLong,
        Callbacks::new(|_, i| 1000 + i as u64),
    )
    .register()
    .unwrap();
    agg.add(2.5);
    size.set(4096);
    pct.set(0.25);
    state.set(1);
    generic.set(-7);
    high.init(0);
    low.init(100.0);
    Zoo {
        reg,
        counter,
        level,
        high,
        low,
        timer,
        per_peer,
    }
}

/// Updates from 4 threads that then exit.
fn work(z: &Zoo) {
    let world = z.per_peer.create_instance(0x101, 2).unwrap();
    let other = z.per_peer.create_instance(0x202, 1).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (c, l, w, o) = (&z.counter, &z.level, &world, &other);
            s.spawn(move || {
                for i in 0..10_000u64 {
                    c.inc_at((i % 3) as usize);
                    l.inc();
                    if i % 2 == 0 {
                        l.dec();
                    }
                    w.inc_at((t % 2) as usize);
                }
                o.add(t);
            });
        }
    });
    z.timer.add_elapsed(Duration::from_millis(7));
}

fn without_process(mut s: Snapshot) -> Snapshot {
    s.process = Default::default();
    s
}

#[test]
fn every_class_reads_from_the_region_as_in_process() {
    let _g = serial();
    let dir = private_dir("classes");
    let z = zoo();
    let exporter = Exporter::start(&z.reg, options(&dir, 5)).unwrap();
    work(&z);
    z.high.update(40);
    z.high.update(3);
    z.low.update(2.0);
    z.low.update(50.0);
    exporter.publish_now();
    let mut region = Region::open_path(exporter.path(), std::process::id()).unwrap();
    let outside = pvar::export::read_fresh(&mut region, Duration::from_secs(10)).unwrap();
    let mut inside = Snapshot::take(&z.reg);

    // Marks: the exporter has followed the watermarks since it started;
    // a one-off snapshot's marks are its levels.
    let q = outside.variable("queue_depth").unwrap();
    assert_eq!(q.values, [Number::Unsigned(3)]);
    assert_eq!(q.marks.as_deref(), Some(&[Number::Unsigned(40)][..]));
    let m = outside.variable("min_credit").unwrap();
    assert_eq!(m.values, [Number::Double(50.0)]);
    assert_eq!(m.marks.as_deref(), Some(&[Number::Double(2.0)][..]));
    for v in inside.variables.iter_mut() {
        if let (Some(o), Some(_)) = (
            outside
                .variables
                .iter()
                .find(|x| x.index == v.index && x.object == v.object),
            v.marks.as_ref(),
        ) {
            v.marks = o.marks.clone();
        }
    }
    assert_eq!(without_process(outside.clone()), without_process(inside));

    // And both equal what the components and a tool read.
    let sent = outside.variable("msgs_sent").unwrap();
    let each: Vec<_> = (0..3)
        .map(|i| Number::Unsigned(z.counter.get_at(i)))
        .collect();
    assert_eq!(sent.values, each);
    assert_eq!(
        sent.values.iter().map(|n| n.as_f64()).sum::<f64>(),
        40_000.0
    );
    assert_eq!(
        sent.category.map(|c| outside.categories[c].name.as_str()),
        Some("net")
    );
    assert_eq!(
        outside.variable("inflight").unwrap().values,
        [Number::Unsigned(20_000)]
    );
    let peers: Vec<_> = outside
        .variables
        .iter()
        .filter(|v| v.name.starts_with("per_peer"))
        .map(|v| (v.object, v.values.clone()))
        .collect();
    assert_eq!(
        peers,
        [
            (
                Some(0x101),
                vec![Number::Unsigned(20_000), Number::Unsigned(20_000)]
            ),
            (Some(0x202), vec![Number::Unsigned(6)]),
        ]
    );
    let timer = outside.variable("send_time").unwrap();
    assert_eq!(timer.unit(), Some("seconds"));
    let Number::Double(secs) = timer.values[0] else {
        panic!("a TIMER reads seconds as a double")
    };
    assert!((secs - 0.007).abs() < 1e-6, "{secs}");
    let phase = outside.variable("phase").unwrap();
    let items = &outside.enumerations[phase.enumeration.unwrap()].items;
    assert_eq!(items[1], (1, "sending".to_string()));
    assert_eq!(
        outside.variable("pool_free").unwrap().values,
        [Number::Unsigned(1000)]
    );
    assert_eq!(
        outside.variable("offset").unwrap().values,
        [Number::Signed(-7)]
    );
    drop(exporter);
    assert!(
        !testing::user_dir(&dir)
            .unwrap()
            .join(std::process::id().to_string())
            .exists()
    );
}

#[test]
fn the_exporter_survives_threads_coming_and_going() {
    let _g = serial();
    let dir = private_dir("threads");
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let l = reg.level::<u64>("l").register().unwrap();
    let exporter = Exporter::start(&reg, options(&dir, 1)).unwrap();
    let path = exporter.path().to_path_buf();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let reads = std::thread::scope(|s| {
        // A reader in the meantime: every read succeeds and the counter
        // never goes backwards.
        let reader = s.spawn(|| {
            let mut region = Region::open_path(&path, std::process::id()).unwrap();
            let (mut last, mut reads) = (0.0, 0u32);
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let snap = pvar::export::read(&mut region).unwrap();
                let v = snap.variable("c").unwrap().values[0].as_f64();
                assert!(v >= last, "the counter went back from {last} to {v}");
                last = v;
                reads += 1;
            }
            reads
        });
        for _round in 0..8 {
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let (c, l) = (c.clone(), l.clone());
                    std::thread::spawn(move || {
                        for _ in 0..10_000 {
                            c.inc();
                        }
                        l.inc();
                    })
                })
                .collect();
            threads.into_iter().for_each(|t| t.join().unwrap());
        }
        stop.store(true, std::sync::atomic::Ordering::Release);
        reader.join().unwrap()
    });
    assert!(reads > 0);
    let mut region = Region::open_path(&path, std::process::id()).unwrap();
    let snap = pvar::export::read_fresh(&mut region, Duration::from_secs(10)).unwrap();
    assert_eq!(
        snap.variable("c").unwrap().values,
        [Number::Unsigned(320_000)]
    );
    assert_eq!(snap.variable("l").unwrap().values, [Number::Unsigned(32)]);
    assert!(exporter.published() >= 2 && exporter.failures() == 0);
}

/// The body of the child process of
/// `another_process_reads_what_this_one_reads`: it exports a zoo, writes
/// its own in-process snapshot to a file, says it is ready and waits for its
/// standard input to close. Not a test of its own: ignored in a plain run
/// (the parent runs it with `--ignored --exact`), and it fails without the
/// parent's environment rather than pass without doing anything.
#[test]
#[ignore = "the child process of another_process_reads_what_this_one_reads, run by it"]
fn outside_child() {
    let (Some(out), Some(dir)) = (
        std::env::var_os(CHILD_OUT),
        std::env::var_os("PVAR_EXPORT_TEST_DIR"),
    ) else {
        panic!("outside_child is run by another_process_reads_what_this_one_reads");
    };
    let dir = PathBuf::from(dir);
    let z = zoo();
    let exporter = Exporter::start(&z.reg, options(&dir, 10)).unwrap();
    work(&z);
    z.high.update(9);
    z.high.update(1);
    // Quiescent from here on: what this process reads is what the other
    // one must read.
    let mut bytes = Vec::new();
    wire::encode(&Snapshot::take(&z.reg), &mut bytes);
    std::fs::write(&out, bytes).unwrap();
    // libtest may have written "test outside_child ... " on this line.
    println!("\nPVAR-CHILD-READY");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).unwrap() > 0 {}
    drop(exporter);
}

/// Where `outside_child` writes its snapshot (set by its parent).
const CHILD_OUT: &str = "PVAR_EXPORT_TEST_CHILD";

/// `outside_child` is a process body, not a test that can pass alone: run
/// on its own (as `cargo test -- --ignored` would) it fails.
#[test]
fn the_child_body_fails_without_its_parent() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "outside_child",
            "--test-threads",
            "1",
        ])
        .env_remove(CHILD_OUT)
        .env_remove("PVAR_EXPORT_TEST_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("running 1 test"), "{stdout}");
    assert!(
        !out.status.success(),
        "outside_child passed alone:\n{stdout}"
    );
}

#[test]
fn another_process_reads_what_this_one_reads() {
    let _g = serial();
    let dir = private_dir("child");
    let out = dir.join("inside.bin");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "outside_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_OUT, &out)
        .env("PVAR_EXPORT_TEST_DIR", &dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "PVAR-CHILD-READY" {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the child ended early"
        );
    }
    let path = testing::user_dir(&dir).unwrap().join(pid.to_string());
    let mut region = Region::open_path(&path, pid).unwrap();
    region.check_alive().unwrap();
    let outside = pvar::export::read_fresh(&mut region, Duration::from_secs(10)).unwrap();
    let mut inside = wire::decode(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(outside.process.pid, pid);
    let q = outside.variable("queue_depth").unwrap();
    assert_eq!(q.marks.as_deref(), Some(&[Number::Unsigned(9)][..]));
    for v in inside.variables.iter_mut().filter(|v| v.marks.is_some()) {
        v.marks = outside
            .variables
            .iter()
            .find(|o| o.index == v.index && o.object == v.object)
            .and_then(|o| o.marks.clone());
    }
    assert_eq!(without_process(outside), without_process(inside));
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(!path.exists(), "the region outlived its exporter");
    assert!(matches!(
        Region::open_path(&path, pid),
        Err(RegionError::NotFound(_))
    ));
}

#[test]
fn one_exporter_per_process_and_the_region_goes_with_it() {
    let _g = serial();
    let dir = private_dir("one");
    let reg = Registry::new();
    let first = Exporter::start(&reg, options(&dir, 50)).unwrap();
    let path = first.path().to_path_buf();
    assert!(path.exists());
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
    let again = Exporter::start(&Registry::new(), options(&dir, 50)).unwrap_err();
    assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
    drop(first);
    assert!(!path.exists());
    let second = Exporter::start(&reg, options(&dir, 50)).unwrap();
    assert!(second.path().exists());
}

/// Writes a region file at `path` with the header of `pid`/`uid` and one
/// published slot holding `payload`; returns the payload's offset.
fn write_region(path: &Path, pid: u32, uid: u32, payload: &[u8], checksum: u64) -> u64 {
    let mut f = RegionFile::with_payload(pid, uid, payload);
    f.slots[1].3 = checksum;
    f.write(path).unwrap();
    testing::FIRST_PAYLOAD
}

#[test]
fn bad_regions_are_errors_never_crashes() {
    let dir = private_dir("bad");
    let z = zoo();
    work(&z);
    let mut payload = Vec::new();
    wire::encode(&Snapshot::take(&z.reg), &mut payload);
    let (pid, uid) = (std::process::id(), testing::effective_uid());
    let path = dir.join("region");
    let open = |p: &Path| Region::open_path(p, pid).map(|r| r.with_attempts(2));

    // Well-formed: read.
    write_region(&path, pid, uid, &payload, testing::checksum(&payload));
    let snap = pvar::export::read(&mut open(&path).unwrap()).unwrap();
    assert_eq!(snap.variables.len(), Snapshot::take(&z.reg).variables.len());

    // A wrong checksum, a payload cut short by truncating the file, and a
    // slot pointing past the end: inconsistent, not a crash.
    write_region(&path, pid, uid, &payload, 1);
    let e = pvar::export::read(&mut open(&path).unwrap()).unwrap_err();
    assert!(matches!(e, RegionError::Inconsistent(_)), "{e}");
    let offset = write_region(&path, pid, uid, &payload, testing::checksum(&payload));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(offset + payload.len() as u64 / 2)
        .unwrap();
    let e = pvar::export::read(&mut open(&path).unwrap()).unwrap_err();
    assert!(matches!(e, RegionError::Inconsistent(_)), "{e}");

    // Not a region, another version, a header cut short.
    std::fs::write(&path, b"hello").unwrap();
    assert!(matches!(open(&path), Err(RegionError::Version(_))));
    write_region(&path, pid, uid, &payload, testing::checksum(&payload));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 99;
    std::fs::write(&path, &bytes).unwrap();
    let e = open(&path).unwrap_err();
    assert!(e.to_string().contains("region version 99"), "{e}");

    // Another pid in the header, a symbolic link, a directory, a file
    // open to other users.
    write_region(&path, pid + 1, uid, &payload, testing::checksum(&payload));
    assert!(matches!(open(&path), Err(RegionError::Refused(_))));
    write_region(&path, pid, uid, &payload, testing::checksum(&payload));
    let link = dir.join("link");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(matches!(open(&link), Err(RegionError::Refused(_))));
    assert!(matches!(
        open(&dir),
        Err(RegionError::Refused(_) | RegionError::Io(_))
    ));
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let e = open(&path).unwrap_err();
    assert!(e.to_string().contains("open to other users"), "{e}");

    // Another user's region.
    write_region(&path, pid, uid, &payload, testing::checksum(&payload));
    if uid == 0 {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; chown has no other
        // preconditions.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let e = open(&path).unwrap_err();
        assert!(e.to_string().contains("belongs to uid 65534"), "{e}");
    } else {
        eprintln!("SKIPPED: another user's region needs root to create (uid {uid})");
    }

    // Every cut of the payload and every flipped byte: an error or a
    // snapshot, never a panic.
    for cut in 0..payload.len() {
        assert!(wire::decode(&payload[..cut]).is_err(), "cut at {cut}");
    }
    for i in 0..payload.len() {
        let mut p = payload.clone();
        p[i] ^= 0x5a;
        let _ = wire::decode(&p);
    }
}

#[test]
fn stale_regions_are_reported_and_removed() {
    let dir = private_dir("stale");
    // A pid that was a process and is not any more.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let uid = testing::effective_uid();
    let user_dir = testing::user_dir(&dir).unwrap();
    let path = user_dir.join(dead.to_string());
    write_region(&path, dead, uid, b"", testing::checksum(b""));
    let r = Region::open_path(&path, dead).unwrap();
    assert!(matches!(r.check_alive(), Err(RegionError::Stale(_))));
    // A region of a live process that started at another time (its pid
    // reused): stale too.
    let live = user_dir.join(std::process::id().to_string());
    write_region(&live, std::process::id(), uid, b"", testing::checksum(b""));
    let mut bytes = std::fs::read(&live).unwrap();
    bytes[24..32].copy_from_slice(&1u64.to_le_bytes()); // started at tick 1
    std::fs::write(&live, bytes).unwrap();
    let r = Region::open_path(&live, std::process::id()).unwrap();
    assert!(matches!(r.check_alive(), Err(RegionError::Stale(_))));
    assert_eq!(testing::remove_stale(&dir).unwrap(), 2);
    assert!(!path.exists() && !live.exists());
}

#[test]
fn callback_variables_are_bound_and_freed_like_a_handle() {
    let _g = serial();
    let dir = private_dir("callback");
    // The notifications of one callback variable read by the exporter's
    // observer, and of one read by a tool's handle: the same lifecycle.
    let heard_by = |continuous: bool, exporter: bool| {
        let reg = Registry::new();
        let heard = std::sync::Arc::new(Mutex::new(Vec::new()));
        let h = heard.clone();
        reg.callback_pvar(
            "cb_var",
            if continuous {
                PvarClass::Level
            } else {
                PvarClass::Generic
            },
            Datatype::UnsignedLongLong,
            Callbacks::new(|_, _| 5).with_notify(move |n, _| {
                h.lock().unwrap().push(n);
                None
            }),
        )
        .continuous(continuous)
        .register()
        .unwrap();
        if exporter {
            let exporter = Exporter::start(&reg, options(&dir, 1000)).unwrap();
            exporter.publish_now();
            let while_exporting = heard.lock().unwrap().clone();
            drop(exporter);
            (while_exporting, heard.lock().unwrap().clone())
        } else {
            let session = reg.session().unwrap();
            let index = reg
                .pvars()
                .index(
                    "cb_var",
                    if continuous {
                        PvarClass::Level
                    } else {
                        PvarClass::Generic
                    },
                )
                .unwrap();
            let handle = session.handle(index).unwrap();
            if !continuous {
                handle.start().unwrap();
            }
            let _ = handle.read().unwrap();
            let while_reading = heard.lock().unwrap().clone();
            drop(handle);
            drop(session);
            (while_reading, heard.lock().unwrap().clone())
        }
    };
    for continuous in [true, false] {
        let by_exporter = heard_by(continuous, true);
        assert_eq!(
            by_exporter,
            (
                vec![Notify::Bind, Notify::Start],
                vec![Notify::Bind, Notify::Start, Notify::Stop, Notify::Free]
            ),
            "continuous {continuous}"
        );
        assert_eq!(
            by_exporter,
            heard_by(continuous, false),
            "continuous {continuous}"
        );
    }
}

#[test]
fn openmetrics_maps_every_class() {
    let z = zoo();
    work(&z);
    let text = exposition::write(&Snapshot::take(&z.reg), Format::OpenMetrics);
    for line in [
        "# TYPE msgs_sent counter",
        "# HELP msgs_sent messages \\\"sent\\\"\\nper peer",
        "msgs_sent_total{element=\"1\"} 13332",
        "# TYPE bytes_sent gauge",
        "bytes_sent 2.5",
        "# TYPE send_time_seconds counter",
        "# UNIT send_time_seconds seconds",
        "# TYPE inflight gauge",
        "inflight 20000",
        "# TYPE busy_fraction_ratio gauge",
        "busy_fraction_ratio 0.25",
        "# TYPE phase stateset",
        "phase{phase=\"sending\"} 1",
        "phase{phase=\"idle\"} 0",
        "offset -7",
        "queue_depth 0",
        "min_credit 100.0",
        "per_peer_total{kind=\"eager\",bind=\"comm\",object=\"0x101\",element=\"0\"} 20000",
        "per_peer_total{kind=\"eager\",bind=\"comm\",object=\"0x202\"} 6",
        "pool_free 1000",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert!(text.ends_with("# EOF\n"));
    check_with_python(&text);
}

/// Parses `text` with the Python `prometheus_client` OpenMetrics parser
/// (a real parser, not ours): one family per `# TYPE` line. Skipped loudly
/// where it is not installed, except in CI.
fn check_with_python(text: &str) {
    let Some(parsed) = openmetrics_parser::families(text) else {
        return;
    };
    let families = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    assert_eq!(parsed.len(), families);
}

#[test]
fn without_marks_watermarks_publish_their_levels_only() {
    let _g = serial();
    let dir = private_dir("nomarks");
    let reg = Registry::new();
    let hw = reg.high_watermark::<u64>("hw").register().unwrap();
    let exporter = Exporter::start(
        &reg,
        ExportOptions {
            watermark_marks: false,
            ..options(&dir, 1000)
        },
    )
    .unwrap();
    hw.update(50);
    hw.update(5);
    exporter.publish_now();
    let mut region = Region::open_path(exporter.path(), std::process::id()).unwrap();
    let snap = pvar::export::read(&mut region).unwrap();
    let v = snap.variable("hw").unwrap();
    assert_eq!(
        (v.values.as_slice(), v.marks.as_ref()),
        (&[Number::Unsigned(5)][..], None)
    );
    // OpenMetrics then shows the level.
    assert!(
        exposition::write(&snap, Format::OpenMetrics)
            .lines()
            .any(|l| l == "hw 5")
    );
}

#[test]
fn the_region_is_in_a_private_directory_of_the_user() {
    let _g = serial();
    let dir = private_dir("private");
    let reg = Registry::new();
    let exporter = Exporter::start(&reg, options(&dir, 50)).unwrap();
    let user_dir = dir.join(format!("pvar-{}", testing::effective_uid()));
    assert_eq!(
        exporter.path(),
        user_dir.join(std::process::id().to_string())
    );
    assert_eq!(exporter.notice(), None);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::symlink_metadata(&user_dir).unwrap().permissions(),
    );
    assert_eq!(mode & 0o7777, 0o700, "{mode:o}");
    let listing = testing::list_in(&dir);
    assert_eq!(listing.regions.len(), 1);
    assert_eq!(listing.regions[0].pid, std::process::id());
    assert!(listing.ignored.is_empty());
    let mut region = testing::open_in(&dir, std::process::id()).unwrap();
    pvar::export::read(&mut region).unwrap();
}

/// Plants `what` at `path`: a regular file, a symbolic link to a
/// directory, a FIFO, a directory open to others.
fn plant(path: &Path, what: &str) {
    match what {
        "file" => std::fs::write(path, b"planted").unwrap(),
        "symlink" => {
            let target = path.parent().unwrap().join("target-of-the-link");
            std::fs::create_dir_all(&target).unwrap();
            std::os::unix::fs::symlink(&target, path).unwrap();
        }
        "fifo" => {
            let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        }
        "open directory" => {
            std::fs::create_dir(path).unwrap();
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        _ => unreachable!(),
    }
}

#[test]
fn something_in_the_way_of_the_user_directory_is_left_alone() {
    let _g = serial();
    for what in ["file", "symlink", "fifo"] {
        let dir = private_dir(&format!("in-the-way-{what}"));
        let primary = dir.join(format!("pvar-{}", testing::effective_uid()));
        plant(&primary, what);
        let reg = Registry::new();
        reg.counter("c").register().unwrap().add(3);
        let exporter = Exporter::start(&reg, options(&dir, 50)).unwrap();
        // The export goes on, in a directory of the user's own, and says
        // what was in the way and whose it is.
        let notice = exporter.notice().expect("a notice").to_string();
        assert!(
            notice.contains(&primary.display().to_string())
                && notice.contains(&format!("uid {}", testing::effective_uid()))
                && notice.contains("is in the way"),
            "{what}: {notice}"
        );
        let fallback = exporter.path().parent().unwrap().to_path_buf();
        assert_ne!(fallback, primary);
        let name = fallback.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with(&format!("pvar-{}.", testing::effective_uid())) && name.len() > 20,
            "{name}"
        );
        // Readers find it there and say what they ignored.
        let mut region = testing::open_in(&dir, std::process::id()).unwrap();
        let snap = pvar::export::read(&mut region).unwrap();
        assert_eq!(snap.variable("c").unwrap().values, [Number::Unsigned(3)]);
        let listing = testing::list_in(&dir);
        assert_eq!(listing.regions.len(), 1, "{what}: {listing:?}");
        assert_eq!(listing.ignored.len(), 1, "{what}: {listing:?}");
        assert_eq!(listing.ignored[0].path, primary);
        // The next exporter takes the same fallback directory.
        drop(exporter);
        let again = Exporter::start(&reg, options(&dir, 50)).unwrap();
        assert_eq!(again.path().parent().unwrap(), fallback);
        drop(again);
        // What was planted is as it was.
        let meta = std::fs::symlink_metadata(&primary).unwrap();
        match what {
            "file" => assert_eq!(std::fs::read(&primary).unwrap(), b"planted"),
            "symlink" => assert!(meta.file_type().is_symlink()),
            _ => assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type())),
        }
    }
    // A directory of the user's that is open to others: readers refuse it,
    // the next exporter makes it private.
    let dir = private_dir("in-the-way-open");
    let primary = dir.join(format!("pvar-{}", testing::effective_uid()));
    plant(&primary, "open directory");
    let listing = testing::list_in(&dir);
    assert!(
        listing.ignored[0].why.contains("open to other users"),
        "{listing:?}"
    );
    let exporter = Exporter::start(&Registry::new(), options(&dir, 50)).unwrap();
    assert_eq!(exporter.path().parent().unwrap(), primary);
    assert_eq!(exporter.notice(), None);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&primary).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn a_claim_the_file_does_not_hold_is_refused_at_once() {
    let dir = private_dir("claims");
    let (pid, uid) = (std::process::id(), testing::effective_uid());
    let path = dir.join("region");
    // A slot claiming 256 MiB (the most a reader accepts) in a file of
    // that size that holds 4 KiB: the rest is a hole.
    let claim = testing::MAX_PAYLOAD;
    let f = RegionFile {
        pid,
        uid,
        published: 1,
        slots: [(0, 0, 0, 0), (2, testing::FIRST_PAYLOAD, claim, 1)],
        data: vec![(testing::FIRST_PAYLOAD, vec![7; 16])],
        size: Some(testing::FIRST_PAYLOAD + claim),
        ..RegionFile::default()
    };
    f.write(&path).unwrap();
    let e = pvar::export::read(&mut Region::open_path(&path, pid).unwrap()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, RegionError::Inconsistent(_)), "{text}");
    assert!(text.contains("holds no data"), "{text}");
    // Refused, not tried again 200 times.
    assert!(!text.contains("attempts"), "{text}");
    // More than a reader accepts, and past the end of the file.
    for (len, size, why) in [
        (claim + 1, None, "more than"),
        (
            1 << 20,
            Some(testing::FIRST_PAYLOAD + 100),
            "outside the region",
        ),
    ] {
        let f = RegionFile {
            slots: [(0, 0, 0, 0), (2, testing::FIRST_PAYLOAD, len, 1)],
            size,
            ..f.clone()
        };
        f.write(&path).unwrap();
        let e = pvar::export::read(&mut Region::open_path(&path, pid).unwrap()).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    // A payload that is there but does not match its checksum: one read,
    // no retry.
    let mut f = RegionFile::with_payload(pid, uid, &[1; 4096]);
    f.slots[1].3 ^= 1;
    f.write(&path).unwrap();
    let e = pvar::export::read(&mut Region::open_path(&path, pid).unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("checksum mismatch") && !e.to_string().contains("attempts"),
        "{e}"
    );
}

#[test]
fn object_labels_travel_with_their_instances() {
    let reg = Registry::new();
    let sent = reg
        .counter("sent")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    sent.create_instance(0x101, 1).unwrap().inc();
    sent.create_instance(0x202, 1).unwrap();
    reg.pvars()
        .label_object(BindKind::Comm, 0x101, "MPI_COMM_WORLD");
    let labels = |snap: &Snapshot| {
        let mut l: Vec<(Option<u64>, Option<String>)> = snap
            .variables
            .iter()
            .map(|v| (v.object, v.object_label.clone()))
            .collect();
        l.sort();
        l
    };
    let snap = Snapshot::take(&reg);
    assert_eq!(
        labels(&snap),
        [
            (Some(0x101), Some("MPI_COMM_WORLD".to_string())),
            (Some(0x202), None)
        ]
    );
    // Through the region's encoding unchanged.
    let mut bytes = Vec::new();
    wire::encode(&snap, &mut bytes);
    assert_eq!(wire::decode(&bytes).unwrap(), snap);
    // A name of another kind of object does not apply; a forgotten one is gone.
    reg.pvars().label_object(BindKind::Win, 0x202, "a window");
    reg.pvars().forget_object_label(BindKind::Comm, 0x101);
    assert_eq!(
        labels(&Snapshot::take(&reg)),
        [(Some(0x101), None), (Some(0x202), None)]
    );
}
