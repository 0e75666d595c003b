//! The connections of `pvar serve`: one thread, non-blocking sockets and
//! `poll`, so that no client can hold up another. Each connection has a
//! deadline (its request head within [`Limits::head_timeout`], its
//! response taken within [`Limits::write_timeout`]); a response is
//! written as the client takes it, never waited for; past
//! [`Limits::max_connections`] the connection that has waited longest for
//! its head is closed to make room. So clients that trickle a byte a
//! second, or never read, cost one socket and a few bytes each, and a
//! scrape is answered as soon as its head has arrived.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::http::{Request, Response, parse_head};

/// The server's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most.
    pub max_connections: usize,
    /// Longest time a client may take to send its request head (then 408).
    pub head_timeout: Duration,
    /// Longest time a client may take to read its response (then closed).
    pub write_timeout: Duration,
}

/// What answers requests and says when to stop.
pub trait Handler {
    /// The response to `req`.
    fn respond(&mut self, req: &Request) -> Response;
    /// Called at least every `tick_every`: `false` to stop serving.
    fn keep_going(&mut self) -> bool;
}

/// How often [`Handler::keep_going`] is asked when nothing happens.
const TICK: Duration = Duration::from_millis(500);
/// How long a finished connection is read (and discarded) before it is
/// closed, so that a client's unread bytes do not turn the close into a
/// reset that could lose the end of the response.
const LINGER: Duration = Duration::from_secs(1);
/// How long responses under way may finish once the handler stops.
const GRACE: Duration = Duration::from_secs(1);

enum State {
    /// Receiving the request head.
    Reading(Vec<u8>),
    /// Sending: the head, then the body (shared between responses), from
    /// `at` on.
    Writing {
        head: Vec<u8>,
        body: Rc<Vec<u8>>,
        at: usize,
    },
    /// The response is sent; waiting for the client to close.
    Draining,
}

struct Conn {
    stream: TcpStream,
    state: State,
    deadline: Instant,
    /// When it was accepted (the oldest reading one makes room first).
    since: Instant,
}

impl Conn {
    /// Starts sending `r` (`head_only`: no body, for `HEAD`).
    fn respond(&mut self, r: Response, head_only: bool, limits: &Limits) {
        let body = if head_only {
            Rc::new(Vec::new())
        } else {
            r.body.clone()
        };
        self.state = State::Writing {
            head: r.head(),
            body,
            at: 0,
        };
        self.deadline = Instant::now() + limits.write_timeout;
        self.write();
    }

    /// Writes what the socket takes; `false` if the connection is done
    /// for.
    fn write(&mut self) -> bool {
        let State::Writing { head, body, at } = &mut self.state else {
            return true;
        };
        loop {
            let (buf, off) = if *at < head.len() {
                (&head[..], *at)
            } else if *at - head.len() < body.len() {
                (&body[..], *at - head.len())
            } else {
                let _ = self.stream.shutdown(Shutdown::Write);
                self.state = State::Draining;
                self.deadline = Instant::now() + LINGER;
                return true;
            };
            match self.stream.write(&buf[off..]) {
                Ok(0) => return false,
                Ok(n) => *at += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Reads what has arrived; `false` if the connection is done for.
    /// A complete head is answered by `handler`.
    fn read(&mut self, handler: &mut dyn Handler, limits: &Limits) -> bool {
        let mut chunk = [0u8; 2048];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => match &mut self.state {
                    State::Reading(buf) => {
                        buf.extend_from_slice(&chunk[..n]);
                        match parse_head(buf) {
                            Ok(None) => {}
                            Ok(Some(req)) => {
                                let head_only = req.method == "HEAD";
                                let r = handler.respond(&req);
                                self.respond(r, head_only, limits);
                                return true;
                            }
                            Err(why) => {
                                let r = Response::text(400, "Bad Request", format!("{why}\n"));
                                self.respond(r, false, limits);
                                return true;
                            }
                        }
                    }
                    // A client sending more than its head: discarded.
                    State::Writing { .. } | State::Draining => {}
                },
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    fn events(&self) -> libc::c_short {
        match self.state {
            State::Reading(_) | State::Draining => libc::POLLIN,
            State::Writing { .. } => libc::POLLOUT,
        }
    }
}

/// Serves `listener` with `handler` until it says stop.
pub fn serve(listener: &TcpListener, limits: Limits, handler: &mut dyn Handler) {
    listener
        .set_nonblocking(true)
        .expect("a listening socket can be made non-blocking");
    let mut conns: Vec<Conn> = Vec::new();
    let mut next_tick = Instant::now() + TICK;
    let mut stopping: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if now >= next_tick {
            next_tick = now + TICK;
            if stopping.is_none() && !handler.keep_going() {
                stopping = Some(now + GRACE);
            }
        }
        if let Some(end) = stopping {
            conns.retain(|c| matches!(c.state, State::Writing { .. }));
            if conns.is_empty() || now >= end {
                return;
            }
        }
        // Deadlines: a head not received in time gets 408; a response
        // not taken in time, or a linger that is over, closes.
        let mut i = 0;
        while i < conns.len() {
            let c = &mut conns[i];
            if now >= c.deadline {
                match c.state {
                    State::Reading(_) => {
                        let r = Response::text(
                            408,
                            "Request Timeout",
                            "request head not received in time\n",
                        );
                        c.respond(r, false, &limits);
                    }
                    State::Writing { .. } | State::Draining => {
                        conns.swap_remove(i);
                        continue;
                    }
                }
            }
            i += 1;
        }
        let wake = conns
            .iter()
            .map(|c| c.deadline)
            .chain([next_tick])
            .min()
            .unwrap_or(next_tick);
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(conns.len() + 1);
        fds.push(libc::pollfd {
            fd: listener.as_raw_fd(),
            events: if stopping.is_none() { libc::POLLIN } else { 0 },
            revents: 0,
        });
        fds.extend(conns.iter().map(|c| libc::pollfd {
            fd: c.stream.as_raw_fd(),
            events: c.events(),
            revents: 0,
        }));
        let timeout = wake
            .saturating_duration_since(Instant::now())
            .as_millis()
            .min(i32::MAX as u128) as i32;
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for
        // the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n <= 0 {
            continue;
        }
        // Connections first (their indices match `fds[1..]`), then new
        // ones.
        let mut keep = vec![true; conns.len()];
        for (k, c) in conns.iter_mut().enumerate() {
            let re = fds[k + 1].revents;
            if re == 0 {
                continue;
            }
            let alive = match c.state {
                State::Writing { .. } => {
                    if re & (libc::POLLERR | libc::POLLNVAL) != 0 {
                        false
                    } else {
                        c.write()
                    }
                }
                State::Reading(_) | State::Draining => c.read(handler, &limits),
            };
            keep[k] = alive;
        }
        let mut k = 0;
        conns.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        if fds[0].revents & libc::POLLIN != 0 {
            accept_all(listener, &mut conns, &limits);
        }
    }
}

/// Accepts every pending connection, making room past the limit by
/// closing the connection that has waited longest for its head.
fn accept_all(listener: &TcpListener, conns: &mut Vec<Conn>, limits: &Limits) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(true).is_err() {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                if conns.len() >= limits.max_connections {
                    let oldest = conns
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| matches!(c.state, State::Reading(_)))
                        .min_by_key(|(_, c)| c.since)
                        .map(|(i, _)| i);
                    match oldest {
                        Some(i) => {
                            conns.swap_remove(i);
                        }
                        // Every connection is being answered: this one waits
                        // its turn by being closed.
                        None => continue,
                    }
                }
                let now = Instant::now();
                conns.push(Conn {
                    stream,
                    state: State::Reading(Vec::new()),
                    deadline: now + limits.head_timeout,
                    since: now,
                });
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // WouldBlock: no more pending; any other error (out of file
            // descriptors): try again at the next readiness.
            Err(_) => return,
        }
    }
}
