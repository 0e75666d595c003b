//! `pvar report html` in a real browser: headless Chromium loads the page
//! from a file (no network), and the test checks what it rendered — the
//! DOM after the page's script ran (every matrix painted, the sections
//! and the variables table there, the report's hostile names shown as
//! text and not as markup), no console message (the harness first proves
//! it sees one, on a page that throws), and a screenshot that is not
//! blank and carries the heatmap's colours.
//!
//! Needs `chromium` (Debian's package; `PVAR_CHROMIUM` names another
//! binary). Without it the tests print `SKIPPED: …` and pass, unless `CI`
//! or `PVAR_REQUIRE_BROWSER=1` is set (then they fail);
//! `scripts/browser-tests.sh` installs it and sets the gate.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pvar::report::{Collector, JobReport, RankInput, ReportOptions};
use pvar::{BindKind, Registry};

const PVAR: &str = env!("CARGO_BIN_EXE_pvar");
/// Longest a browser run may take.
const DEADLINE: Duration = Duration::from_secs(90);

/// A private directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pvar-report-page-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create a temporary directory");
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("PVAR_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// The browser, or `None` after a loud SKIPPED (a failure under the gate).
fn chromium(test: &str) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("PVAR_CHROMIUM") {
        Some(p) => vec![PathBuf::from(p)],
        None => std::env::var_os("PATH")
            .map(|paths| {
                std::env::split_paths(&paths)
                    .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
                    .collect()
            })
            .unwrap_or_default(),
    };
    if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
        return Some(found);
    }
    let why = format!(
        "{test}: no chromium on PATH (apt-get install chromium, or scripts/browser-tests.sh)"
    );
    assert!(!required(), "PVAR_REQUIRE_BROWSER=1 / CI but {why}");
    eprintln!("\n*** SKIPPED: {why} ***\n");
    None
}

/// What the browser made of a page.
struct Rendered {
    /// The DOM after the page's scripts ran (`--dump-dom`).
    dom: String,
    /// The page's console messages (Chromium's log lines of them).
    console: Vec<String>,
    /// The screenshot, decoded: width, height, RGB rows.
    shot: Image,
}

/// Runs the browser on `page` with `args`, under the deadline; returns
/// its standard output and error.
fn browse(browser: &Path, dir: &Path, page: &Path, args: &[String]) -> (String, String) {
    static PROFILE: AtomicUsize = AtomicUsize::new(0);
    let profile = dir.join(format!(
        "profile-{}",
        PROFILE.fetch_add(1, Ordering::Relaxed)
    ));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let until = Instant::now() + DEADLINE;
    loop {
        if child.try_wait().expect("wait for the browser").is_some() {
            break;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the browser did not finish {} in {DEADLINE:?}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        reader.join().expect("stdout"),
        err_reader.join().expect("stderr"),
    )
}

/// The page in the browser: its DOM, console and screenshot.
fn render(browser: &Path, dir: &Path, page: &Path) -> Rendered {
    let (dom, log) = browse(browser, dir, page, &["--dump-dom".into()]);
    let shot = dir.join("shot.png");
    let _ = std::fs::remove_file(&shot);
    let (_, log2) = browse(
        browser,
        dir,
        page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,1400".into(),
        ],
    );
    let console = log
        .lines()
        .chain(log2.lines())
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect();
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("no screenshot of {}: {e}\n{log2}", page.display()));
    Rendered {
        dom,
        console,
        shot: Image::decode(&png),
    }
}

/// A decoded PNG (8-bit RGB or RGBA, not interlaced: what Chromium
/// writes), as RGB pixels.
struct Image {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn decode(png: &[u8]) -> Image {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
        let (mut at, mut idat) = (8, Vec::new());
        let (mut width, mut height, mut channels) = (0, 0, 0);
        while at + 8 <= png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let kind = &png[at + 4..at + 8];
            let data = &png[at + 8..at + 8 + len];
            match kind {
                b"IHDR" => {
                    width = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                    height = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                    assert_eq!((data[8], data[12]), (8, 0), "8-bit, not interlaced");
                    channels = match data[9] {
                        2 => 3,
                        6 => 4,
                        t => panic!("colour type {t}"),
                    };
                }
                b"IDAT" => idat.extend_from_slice(data),
                _ => {}
            }
            at += 12 + len;
        }
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&idat[..])
            .read_to_end(&mut raw)
            .expect("inflate the image");
        let stride = width * channels;
        assert_eq!(raw.len(), height * (stride + 1), "image data size");
        let mut rows: Vec<Vec<u8>> = Vec::with_capacity(height);
        for y in 0..height {
            let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
            let (filter, mut cur) = (line[0], line[1..].to_vec());
            let prev = rows.last().cloned().unwrap_or_else(|| vec![0; stride]);
            for i in 0..stride {
                let a = if i >= channels { cur[i - channels] } else { 0 };
                let b = prev[i];
                let c = if i >= channels { prev[i - channels] } else { 0 };
                let p = match filter {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                    4 => {
                        let (pa, pb, pc) = (
                            (i16::from(b) - i16::from(c)).abs(),
                            (i16::from(a) - i16::from(c)).abs(),
                            (i16::from(a) + i16::from(b) - 2 * i16::from(c)).abs(),
                        );
                        if pa <= pb && pa <= pc {
                            a
                        } else if pb <= pc {
                            b
                        } else {
                            c
                        }
                    }
                    f => panic!("filter {f}"),
                };
                cur[i] = cur[i].wrapping_add(p);
            }
            rows.push(cur);
        }
        let rgb = rows
            .iter()
            .flat_map(|r| r.chunks(channels).map(|p| [p[0], p[1], p[2]]))
            .collect();
        Image { width, height, rgb }
    }

    /// Pixels within `tolerance` of `colour` in every channel.
    fn count_near(&self, colour: [u8; 3], tolerance: u8) -> usize {
        self.rgb
            .iter()
            .filter(|p| (0..3).all(|k| p[k].abs_diff(colour[k]) <= tolerance))
            .count()
    }
}

/// A 16-rank report with a ring of messages, a communicator-bound
/// variable and names built to break out of HTML and script.
fn hostile_report(dir: &Path) -> PathBuf {
    const N: usize = 16;
    let inputs: Vec<RankInput> = (0..N)
        .map(|r| {
            let reg = Registry::new();
            let msgs = reg.counter("net_peer_msgs").count(N).register().unwrap();
            let bytes = reg
                .aggregate::<u64>("net_peer_bytes")
                .count(N)
                .register()
                .unwrap();
            for d in [1, N - 1, 4] {
                msgs.add_at((r + d) % N, 10 + r as u64);
                bytes.add_at((r + d) % N, 1000 * (1 + r as u64 % 5));
            }
            reg.timer("io_time")
                .register()
                .unwrap()
                .add_elapsed(Duration::from_millis(5 + 3 * r as u64));
            reg.counter("<img src=x onerror=alert(1)>")
                .description("\"><script>alert('d')</script>")
                .register()
                .unwrap()
                .add(r as u64 + 1);
            let bound = reg
                .counter("per_comm")
                .bind(BindKind::Comm)
                .register_bound()
                .unwrap();
            bound.create_instance(7, 1).unwrap().add(2);
            let labels = vec![(7, "</script><script>alert(2)</script>".to_string())];
            Collector::new(&reg).input(Some(r as u32), labels)
        })
        .collect();
    let report = JobReport::from_ranks_with(inputs, ReportOptions::default()).unwrap();
    let json = dir.join("hostile.json");
    report.write_json_file(&json).unwrap();
    json
}

/// `pvar report html` on `json`, into `html`.
fn make_page(json: &Path, html: &Path) {
    let out = Command::new(PVAR)
        .args(["report", "html"])
        .arg(json)
        .arg("-o")
        .arg(html)
        .output()
        .expect("run pvar report html");
    assert!(
        out.status.success(),
        "pvar report html: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks what every page must show; returns the number of painted cells
/// per matrix.
fn check_page(r: &Rendered, matrices: usize) -> Vec<usize> {
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    for id in ["matrices", "profiles", "variables"] {
        assert!(
            r.dom.contains(&format!("id=\"{id}\"")),
            "no section {id} in the DOM:\n{}",
            r.dom
        );
    }
    // Every matrix canvas painted by the script (it says how many cells).
    let drawn: Vec<usize> = r
        .dom
        .match_indices("data-drawn=\"")
        .map(|(at, m)| {
            let rest = &r.dom[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert_eq!(drawn.len(), matrices, "painted canvases: {drawn:?}");
    assert!(drawn.iter().all(|&n| n > 0), "an empty matrix: {drawn:?}");
    let rows = r.dom.matches("<tr>").count();
    assert!(rows > 5, "the variables table has {rows} rows");
    // Not blank: many colours, and the heatmap's own.
    let img = &r.shot;
    assert!(
        img.width >= 1000 && img.height >= 1000,
        "{}x{}",
        img.width,
        img.height
    );
    let white = img.count_near([255, 255, 255], 2);
    assert!(
        white < img.rgb.len() * 95 / 100,
        "the screenshot is {}% white",
        white * 100 / img.rgb.len()
    );
    let ramp = [
        [0x44, 0x01, 0x54],
        [0xfd, 0xe7, 0x25],
        [0x1f, 0x9e, 0x89],
        [0x36, 0x5c, 0x8d],
    ];
    let coloured: usize = ramp.iter().map(|&c| img.count_near(c, 40)).sum();
    assert!(coloured > 500, "only {coloured} pixels of the colour ramp");
    drawn
}

#[test]
fn the_harness_sees_console_errors_and_blank_pages() {
    let Some(browser) = chromium("the_harness_sees_console_errors_and_blank_pages") else {
        return;
    };
    let dir = Dir::new("harness");
    let page = dir.0.join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>blank</p><script>no_such_function();</script></body></html>",
    )
    .unwrap();
    let r = render(&browser, &dir.0, &page);
    assert!(
        r.console.iter().any(|l| l.contains("no_such_function")),
        "a script error was not seen in the browser's log: {:?}",
        r.console
    );
    let white = r.shot.count_near([255, 255, 255], 2);
    assert!(
        white > r.shot.rgb.len() * 95 / 100,
        "a blank page is not blank"
    );
}

#[test]
fn a_16_rank_report_renders_with_its_hostile_names_as_text() {
    let Some(browser) = chromium("a_16_rank_report_renders_with_its_hostile_names_as_text") else {
        return;
    };
    let dir = Dir::new("hostile");
    let json = hostile_report(&dir.0);
    let html = dir.0.join("report.html");
    make_page(&json, &html);
    let r = render(&browser, &dir.0, &html);
    let drawn = check_page(&r, 2);
    // 16 ranks, 3 peers each (rank r + 1, r − 1, r + 4): 48 cells.
    assert_eq!(drawn, [48, 48]);
    // The names are text: escaped in the DOM, no element or script made.
    assert!(
        r.dom.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{}",
        r.dom
    );
    assert!(
        r.dom
            .contains("&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;")
    );
    assert!(!r.dom.contains("<img"), "an <img> element was made");
    assert_eq!(
        r.dom.matches("<script").count(),
        3,
        "scripts: the two matrices' data, the page's"
    );
    assert!(!r.dom.contains("alert('d')</script>"));
    for text in [
        "net_peer_msgs",
        "net_peer_bytes",
        "One cell per rank",
        "time in timers",
    ] {
        assert!(r.dom.contains(text), "{text} not on the page");
    }
}

#[test]
fn a_1000_rank_report_shows_blocks_of_ranks() {
    let Some(browser) = chromium("a_1000_rank_report_shows_blocks_of_ranks") else {
        return;
    };
    let dir = Dir::new("binned");
    let out = Command::new(PVAR)
        .args(["report", "simulate", "1000", "--out"])
        .arg(&dir.0)
        .output()
        .expect("run pvar report simulate");
    assert!(
        out.status.success(),
        "pvar report simulate: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let html = dir.0.join("report-1000.html");
    make_page(&dir.0.join("report-1000.json"), &html);
    let r = render(&browser, &dir.0, &html);
    let drawn = check_page(&r, 2);
    // 256 × 256 blocks of about 4 ranks: the halo's blocks, fewer than its
    // 4,000 pairs.
    assert!(drawn.iter().all(|&n| n > 256 && n < 4000), "{drawn:?}");
    assert!(
        r.dom.contains("256 × 256 blocks of about 3.906 ranks"),
        "no binning caption"
    );
    assert!(
        r.dom.contains("A bar per rank"),
        "1,000 ranks: one bar each"
    );
}
