//! `pvar serve <pid>`: a minimal HTTP/1.1 server (std::net, no
//! dependency) that answers Prometheus scrapes with the OpenMetrics text
//! of another process's newest snapshot.
//!
//! - `GET /metrics` (or `HEAD`): 200 with the OpenMetrics text and
//!   `Content-Type: application/openmetrics-text; version=1.0.0; …`;
//!   503 once the process is gone;
//! - `GET /`: a short HTML page pointing to `/metrics`;
//! - any other path: 404; another method: 405; a request that is not
//!   HTTP/1.x, or whose head is larger than 8 KiB: 400; a request whose
//!   head does not arrive within 5 s: 408.
//!
//! One connection at a time, one request per connection
//! (`Connection: close`): enough for a scraper every few seconds; a slow
//! client delays the next by at most the 5 s request timeout. Between
//! connections the server checks every half second that the process still
//! runs; when it is gone, or a scrape finds that it stopped exporting, a
//! scrape in progress gets 503 and the server prints `process <pid> ended`
//! (or `… stopped exporting`) and exits with status 0.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use pvar::export::Region;

use super::Res;
use super::open::{describe, is_gone, writer_gone};

/// Options of `pvar serve`.
#[derive(clap::Args)]
pub struct Args {
    /// The process to serve (it must export: `PVAR_EXPORT=1`, or
    /// `pvar demo`).
    #[arg(value_name = "PID")]
    pid: u32,
    /// Address to listen on, `HOST:PORT` (port 0: any free port; the
    /// first line printed gives the address bound).
    #[arg(long, default_value = "127.0.0.1:9464", value_name = "ADDR")]
    listen: String,
}

/// Longest time a client may take to send its request head.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest request head accepted.
const MAX_HEAD: usize = 8 << 10;
/// How often the process is checked while no one scrapes.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// A response.
struct Response {
    status: u16,
    reason: &'static str,
    content_type: &'static str,
    body: String,
    extra: &'static str,
}

impl Response {
    fn text(status: u16, reason: &'static str, body: impl Into<String>) -> Response {
        Response {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
            extra: "",
        }
    }

    fn send(&self, stream: &mut TcpStream, head_only: bool) {
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n{}\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.body.len(),
            self.extra
        );
        if !head_only {
            out.push_str(&self.body);
        }
        let _ = stream.write_all(out.as_bytes());
        let _ = stream.flush();
        let _ = stream.shutdown(std::net::Shutdown::Write);
    }
}

/// What the request head said, or why it has none.
enum Request {
    /// Method and path (query string removed).
    Ok {
        method: String,
        path: String,
    },
    Bad(&'static str),
    TimedOut,
    /// The client closed before a complete head.
    Gone,
}

/// Reads a request head, within [`REQUEST_TIMEOUT`] in all.
fn read_request(stream: &mut TcpStream) -> Request {
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at;
        }
        if let Some(at) = find(&buf, b"\n\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Request::Bad("request head too large");
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Request::TimedOut;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Request::Gone,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Request::TimedOut;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Request::Gone,
        }
    };
    let Ok(head) = std::str::from_utf8(&buf[..end]) else {
        return Request::Bad("request head is not UTF-8");
    };
    let line = head.lines().next().unwrap_or("");
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Request::Bad("malformed request line");
    };
    if method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !target.starts_with('/')
        || !version.starts_with("HTTP/1.")
    {
        return Request::Bad("malformed request line");
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    Request::Ok {
        method: method.to_string(),
        path: path.to_string(),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether the process is still there after serving a connection.
enum Served {
    Alive,
    Gone,
}

fn index_page(pid: u32, program: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><title>pvar serve {pid}</title></head><body>\n\
         <h1>pvar serve</h1>\n<p>The performance variables of process {pid} ({program}) \
         as OpenMetrics text: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n"
    )
}

/// Answers one connection.
fn serve_one(stream: &mut TcpStream, region: &mut Region, pid: u32, program: &str) -> Served {
    let _ = stream.set_write_timeout(Some(REQUEST_TIMEOUT));
    let (method, path) = match read_request(stream) {
        Request::Ok { method, path } => (method, path),
        Request::Bad(why) => {
            Response::text(400, "Bad Request", format!("{why}\n")).send(stream, false);
            return Served::Alive;
        }
        Request::TimedOut => {
            Response::text(
                408,
                "Request Timeout",
                "request head not received in time\n",
            )
            .send(stream, false);
            return Served::Alive;
        }
        Request::Gone => return Served::Alive,
    };
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        let mut r = Response::text(405, "Method Not Allowed", "only GET and HEAD\n");
        r.extra = "Allow: GET, HEAD\r\n";
        r.send(stream, false);
        return Served::Alive;
    }
    let gone = |stream: &mut TcpStream| {
        Response::text(503, "Service Unavailable", format!("process {pid} ended\n"))
            .send(stream, head_only);
        Served::Gone
    };
    match path.as_str() {
        "/metrics" => {
            if writer_gone(region) {
                return gone(stream);
            }
            match pvar::export::read(region) {
                Ok(snap) => {
                    Response {
                        status: 200,
                        reason: "OK",
                        content_type: pvar::export::openmetrics::CONTENT_TYPE,
                        body: pvar::export::openmetrics::write(&snap),
                        extra: "",
                    }
                    .send(stream, head_only);
                    Served::Alive
                }
                Err(e) if is_gone(&e) => gone(stream),
                Err(e) => {
                    Response::text(
                        503,
                        "Service Unavailable",
                        format!("{}\n", describe(pid, e)),
                    )
                    .send(stream, head_only);
                    Served::Alive
                }
            }
        }
        "/" => {
            Response {
                status: 200,
                reason: "OK",
                content_type: "text/html; charset=utf-8",
                body: index_page(pid, program),
                extra: "",
            }
            .send(stream, head_only);
            Served::Alive
        }
        _ => {
            Response::text(404, "Not Found", "not found: try /metrics\n").send(stream, head_only);
            Served::Alive
        }
    }
}

/// Waits up to `timeout` for a connection on `listener`; `true` if one
/// is pending.
fn readable(listener: &TcpListener, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut pfd, 1, timeout.as_millis() as i32) };
    n > 0 && pfd.revents & libc::POLLIN != 0
}

/// Runs `pvar serve`.
pub fn run(args: Args) -> Res<()> {
    let pid = args.pid;
    let mut region = super::open(pid)?;
    // Refuse to start on a region that cannot be read.
    let program = super::read(&mut region, pid, false)?.process.program;
    let listener = TcpListener::bind(&args.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}/metrics")?;
        out.flush()?;
    }
    loop {
        if readable(&listener, CHECK_EVERY) {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    if let Served::Gone = serve_one(&mut stream, &mut region, pid, &program) {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => eprintln!("pvar serve: accept: {e}"),
            }
        } else if writer_gone(&region) {
            // (An exporter that stopped while its process goes on is
            // noticed at the next scrape: the region's "closed" flag is
            // only read with a payload.)
            break;
        }
    }
    println!("{}", super::open::ended_message(&region, pid));
    Ok(())
}
