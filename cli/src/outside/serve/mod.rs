//! `pvar serve <pid>` / `pvar serve --all`: an HTTP server (std::net and
//! `poll`, no dependency) that answers Prometheus scrapes with the newest
//! snapshot of another process — or of every process of this user that
//! exports, as one scrape target per node.
//!
//! - `GET /metrics` (or `HEAD`): 200 with the exposition, OpenMetrics or
//!   the classic text format 0.0.4 as the `Accept` header asks
//!   (`pvar::export::exposition::Format::from_accept`: OpenMetrics for
//!   Prometheus, the classic format for `curl` and the Pushgateway's
//!   tools); with one pid, 503 once the snapshot is older than
//!   `--max-age` (default: 5 publishing intervals, at least 2 s — a
//!   stopped or frozen process shows as down) or the process is gone;
//! - `GET /`: a short HTML page (names escaped) pointing to `/metrics`;
//! - any other path: 404; another method: 405; a request that is not
//!   HTTP/1.x, or whose head is larger than 8 KiB: 400; a request whose
//!   head does not arrive within 5 s: 408.
//!
//! Connections are served concurrently by one thread (see `server`): a
//! client that sends a byte a second, or never reads its response, holds
//! up no other; past 256 connections the one waiting longest for its head
//! is closed. One request per connection (`Connection: close`). A body is
//! rendered at most every 100 ms per format and shared by the responses
//! of that moment.
//!
//! With a pid, the server checks every half second that the process
//! still runs; when it is gone, or a scrape finds that it stopped
//! exporting, a scrape in progress gets 503 and the server prints
//! `process <pid> ended` (or `… stopped exporting`) and exits with status
//! 0. With `--all` it runs until stopped, following processes as they
//! start and end: every series gets the labels `pid`, `program` and (where
//! the launcher's environment gives it) `rank`, and `pvar_export_up` says
//! per process whether its snapshot was fresh.

mod http;
mod server;
mod targets;

use std::io::Write;
use std::net::TcpListener;
use std::rc::Rc;
use std::time::{Duration, Instant};

use pvar::export::Region;
use pvar::export::exposition::Format;

use super::Res;
use super::open::{ended_message, writer_gone};
use crate::format::html_escape;
use http::{Request, Response};
use server::{Handler, Limits};
use targets::{All, Scrape};

/// Options of `pvar serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The process to serve (it must export: `PVAR_EXPORT=1`, or
    /// `pvar demo`).
    #[arg(
        value_name = "PID",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pid: Option<u32>,
    /// Serve every process of this user that exports, following them as
    /// they start and end (one scrape target per node).
    #[arg(long)]
    all: bool,
    /// Address to listen on, `HOST:PORT` (port 0: any free port; the
    /// first line printed gives the address bound).
    #[arg(long, default_value = "127.0.0.1:9464", value_name = "ADDR")]
    listen: String,
    /// A snapshot older than this is not served (503 with a pid; the
    /// process shows as `pvar_export_up 0` with --all). Default: 5 of the
    /// process's publishing intervals, at least 2 s.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    max_age: Option<f64>,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if d > 0.0 && d <= 86_400.0 {
        Ok(d)
    } else {
        Err(format!("{s} is not in (0, 86400] seconds"))
    }
}

/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a client may take to read its response.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections at most (fewer if the file descriptor limit is lower).
const MAX_CONNECTIONS: usize = 256;
/// How long a rendered body is reused.
const REUSE: Duration = Duration::from_millis(100);

/// What is served: one process, or all of this user's.
enum Target {
    One {
        pid: u32,
        region: Region,
        program: String,
        /// Set when the process is gone: the server stops.
        gone: bool,
    },
    All(All),
}

/// The handler of the server: the target, the freshness limit, the bodies
/// rendered last.
struct Metrics {
    target: Target,
    max_age: Option<Duration>,
    cache: Vec<Rendered>,
}

/// A `/metrics` response rendered at a moment, reused for [`REUSE`].
struct Rendered {
    at: Instant,
    format: Format,
    status: u16,
    reason: &'static str,
    body: Rc<Vec<u8>>,
}

impl Metrics {
    fn metrics(&mut self, format: Format) -> Response {
        let now = Instant::now();
        self.cache.retain(|c| now.duration_since(c.at) < REUSE);
        if let Some(c) = self.cache.iter().find(|c| c.format == format) {
            return Response {
                status: c.status,
                reason: c.reason,
                content_type: if c.status == 200 {
                    format.content_type()
                } else {
                    "text/plain; charset=utf-8"
                },
                body: c.body.clone(),
                extra: String::new(),
            };
        }
        let r = match &mut self.target {
            Target::One {
                pid, region, gone, ..
            } => match targets::scrape_one(region, *pid, format, self.max_age) {
                Scrape::Text(t) => ok(format, t),
                Scrape::TooOld(why) | Scrape::Unreadable(why) => {
                    Response::text(503, "Service Unavailable", why)
                }
                Scrape::Gone => {
                    *gone = true;
                    Response::text(503, "Service Unavailable", format!("process {pid} ended\n"))
                }
            },
            Target::All(all) => {
                let seen = all.scan(self.max_age);
                ok(format, targets::write_all(&seen, format))
            }
        };
        self.cache.push(Rendered {
            at: now,
            format,
            status: r.status,
            reason: r.reason,
            body: r.body.clone(),
        });
        r
    }

    fn index(&mut self) -> String {
        let what = match &mut self.target {
            Target::One { pid, program, .. } => format!(
                "the performance variables of process {pid} ({})",
                html_escape(program)
            ),
            Target::All(all) => {
                let seen = all.scan(self.max_age);
                let items: String = seen
                    .iter()
                    .map(|s| {
                        format!(
                            "<li>{} ({}{}){}</li>\n",
                            s.pid,
                            html_escape(&s.program),
                            s.rank.map_or_else(String::new, |r| format!(", rank {r}")),
                            if s.snapshot.is_some() { "" } else { ": down" }
                        )
                    })
                    .collect();
                format!(
                    "the performance variables of every process of this user that exports \
                     ({} now):</p>\n<ul>\n{items}</ul>\n<p>All of them",
                    seen.len()
                )
            }
        };
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pvar serve</title>\
             </head><body>\n<h1>pvar serve</h1>\n<p>{what} as OpenMetrics or Prometheus text: \
             <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n"
        )
    }
}

fn ok(format: Format, body: String) -> Response {
    Response {
        status: 200,
        reason: "OK",
        content_type: format.content_type(),
        body: Rc::new(body.into_bytes()),
        extra: String::new(),
    }
}

impl Handler for Metrics {
    fn respond(&mut self, req: &Request) -> Response {
        if req.method != "GET" && req.method != "HEAD" {
            let mut r = Response::text(405, "Method Not Allowed", "only GET and HEAD\n");
            r.extra = "Allow: GET, HEAD\r\n".into();
            return r;
        }
        match req.path.as_str() {
            "/metrics" => self.metrics(Format::from_accept(req.accept.as_deref())),
            "/" => {
                let page = self.index();
                Response {
                    status: 200,
                    reason: "OK",
                    content_type: "text/html; charset=utf-8",
                    body: Rc::new(page.into_bytes()),
                    extra: String::new(),
                }
            }
            _ => Response::text(404, "Not Found", "not found: try /metrics\n"),
        }
    }

    fn keep_going(&mut self) -> bool {
        match &mut self.target {
            // (An exporter that stopped while its process goes on is
            // noticed at the next scrape: the region's "closed" flag is
            // only read with a payload.)
            Target::One { region, gone, .. } => !*gone && !writer_gone(region),
            Target::All(_) => true,
        }
    }
}

/// The connections this process may hold open: [`MAX_CONNECTIONS`], or
/// fewer if its file descriptor limit is low.
fn max_connections() -> usize {
    // SAFETY: an all-zero rlimit is a valid value; getrlimit fills it.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `lim` is a valid, writable rlimit.
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    };
    MAX_CONNECTIONS.min(soft.saturating_sub(32).max(8))
}

/// Runs `pvar serve`.
pub fn run(args: Args) -> Res<()> {
    let target = match args.pid {
        Some(pid) => {
            let mut region = super::open(pid)?;
            // Refuse to start on a region that cannot be read.
            let program = super::read(&mut region, pid, false)?.process.program;
            Target::One {
                pid,
                region,
                program,
                gone: false,
            }
        }
        None => Target::All(All::default()),
    };
    let listener = TcpListener::bind(&args.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}/metrics")?;
        out.flush()?;
    }
    let mut metrics = Metrics {
        target,
        max_age: args.max_age.map(Duration::from_secs_f64),
        cache: Vec::new(),
    };
    let limits = Limits {
        max_connections: max_connections(),
        head_timeout: HEAD_TIMEOUT,
        write_timeout: WRITE_TIMEOUT,
    };
    server::serve(&listener, limits, &mut metrics);
    if let Target::One { pid, region, .. } = &metrics.target {
        println!("{}", ended_message(region, *pid));
    }
    Ok(())
}
