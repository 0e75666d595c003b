//! `pvar serve` under slow clients, measured: a `pvar demo` exports, `pvar
//! serve` serves it, 50 connections send their request a byte a second
//! (reconnecting when the server gives up on them, as an attacker would),
//! and meanwhile 100 consecutive scrapes (Prometheus's `Accept` header,
//! 100 ms apart) are timed from connect to the last byte of the answer.
//!
//! `cargo bench -p pvar-cli --bench serve_slow_clients` prints the scrape
//! times (min, median, 90th percentile, max) and how many were answered
//! within 1 s. `PVAR_SERVE_BENCH_PVAR=/path/to/pvar` measures another
//! `pvar` binary (say the server this one replaced) the same way; a
//! scrape is given up after 15 s, the whole run after 150 s. Without
//! `--bench` (`cargo test --benches`) it does nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const SLOW_CLIENTS: usize = 50;
const SCRAPES: usize = 100;
const SCRAPE_GAP: Duration = Duration::from_millis(100);
const GIVE_UP: Duration = Duration::from_secs(15);
const WHOLE_RUN: Duration = Duration::from_secs(150);
const ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                      version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let pvar = std::env::var_os("PVAR_SERVE_BENCH_PVAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_pvar")));
    let dir = std::env::temp_dir().join(format!("pvar-serve-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let demo = Killed(
        Command::new(&pvar)
            .args(["demo", "--threads", "2", "--duration", "600"])
            .env("PVAR_EXPORT_DIR", &dir)
            .env_remove("PVAR_EXPORT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run pvar demo"),
    );
    let pid = demo.0.id().to_string();
    let started = Instant::now();
    while !Command::new(&pvar)
        .args(["read", &pid])
        .env("PVAR_EXPORT_DIR", &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the demo does not export"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut serve = Command::new(&pvar)
        .args(["serve", &pid, "--listen", "127.0.0.1:0"])
        .env("PVAR_EXPORT_DIR", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run pvar serve");
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let _serve = Killed(serve);
    let addr = first
        .strip_prefix("listening on http://")
        .and_then(|u| u.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();

    // The slow clients: a byte a second each, reconnecting when dropped.
    let stop = Arc::new(AtomicBool::new(false));
    let reconnects = Arc::new(AtomicU64::new(0));
    let trickler = {
        let (stop, reconnects, addr) = (stop.clone(), reconnects.clone(), addr.clone());
        std::thread::spawn(move || {
            let request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
            let mut conns: Vec<(Option<TcpStream>, usize)> =
                (0..SLOW_CLIENTS).map(|_| (None, 0)).collect();
            while !stop.load(Ordering::Relaxed) {
                for (conn, sent) in &mut conns {
                    if conn.is_none() {
                        *conn = TcpStream::connect(&addr).ok();
                        *sent = 0;
                        reconnects.fetch_add(1, Ordering::Relaxed);
                    }
                    let ok = conn
                        .as_mut()
                        .is_some_and(|c| c.write_all(&request[*sent % 20..*sent % 20 + 1]).is_ok());
                    *sent += 1;
                    if !ok {
                        *conn = None;
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    // Let them all connect and start trickling.
    std::thread::sleep(Duration::from_secs(2));

    let mut times = Vec::new();
    let mut failed = 0;
    let mut bytes = 0;
    let run = Instant::now();
    for _ in 0..SCRAPES {
        if run.elapsed() > WHOLE_RUN {
            break;
        }
        let t = Instant::now();
        match scrape(&addr) {
            Some(n) => {
                times.push(t.elapsed());
                bytes = n;
            }
            None => failed += 1,
        }
        std::thread::sleep(SCRAPE_GAP);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = trickler.join();
    drop(demo);
    let _ = std::fs::remove_dir_all(&dir);

    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let within = times
        .iter()
        .filter(|d| **d <= Duration::from_secs(1))
        .count();
    println!(
        "pvar serve, {SLOW_CLIENTS} clients trickling a byte a second ({})",
        pvar.display()
    );
    println!(
        "  {} scrapes answered of {SCRAPES} attempted ({failed} failed or over {GIVE_UP:?}), {bytes} bytes each",
        times.len()
    );
    if !times.is_empty() {
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        println!(
            "  scrape time: min {:.2} ms, median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
            ms(times[0]),
            ms(at(0.5)),
            ms(at(0.9)),
            ms(times[times.len() - 1])
        );
    }
    println!(
        "  within 1 s: {within} of {SCRAPES}; slow connections opened: {}",
        reconnects.load(Ordering::Relaxed)
    );
}

/// One scrape: the answer's length, if a 200 came within [`GIVE_UP`].
fn scrape(addr: &str) -> Option<usize> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(GIVE_UP)).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {ACCEPT}\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    raw.starts_with(b"HTTP/1.1 200").then_some(raw.len())
}
