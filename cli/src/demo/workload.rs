//! The communication hot loop: workers exchanging messages all-to-all over
//! in-process channels, instrumented with the demo's variables (`ON =
//! true`: the use sites of [`site`] and the handles of [`DemoVars`]) or not
//! at all (`ON = false`, the baseline for the overhead figure). Both
//! variants are the same code, monomorphised.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

use super::vars::{DemoVars, WorkerState, site};

/// What shapes the traffic (from the control variables).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub threads: usize,
    pub message_size: usize,
    /// Messages per send burst: the eager window, or 1 for rendezvous.
    pub burst: usize,
    /// Flow control: a burst ends early at a peer whose inbox holds this
    /// many messages.
    pub queue_cap: u64,
    /// A receive that finds its inbox at least this deep raises the
    /// `demo_inbox_deep` event.
    pub deep_threshold: u64,
}

impl Config {
    /// Whether messages of this size go eagerly.
    pub fn eager(message_size: u64, eager_limit: u64) -> bool {
        message_size <= eager_limit
    }

    /// Inbox capacity: 8 MiB of payload, between 16 and 1024 messages.
    pub fn queue_cap(message_size: u64) -> u64 {
        ((8 << 20) / message_size.max(1)).clamp(16, 1024)
    }

    /// The `demo_inbox_deep` threshold: 3/4 of the inbox capacity.
    pub fn deep_threshold(queue_cap: u64) -> u64 {
        (queue_cap * 3 / 4).max(2)
    }
}

struct Msg {
    payload: Vec<u8>,
}

/// What a run measured on its own, without pvars.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunStats {
    pub sent: u64,
    pub received: u64,
    pub elapsed: Duration,
    /// CPU time of the workers, summed.
    pub cpu: Duration,
    pub checksum: u64,
    /// `demo_inbox_deep` events raised.
    pub deep_raised: u64,
}

impl RunStats {
    /// Wall-clock nanoseconds per message sent, all workers together.
    pub fn ns_per_msg(&self) -> f64 {
        if self.sent == 0 {
            return f64::NAN;
        }
        self.elapsed.as_nanos() as f64 / self.sent as f64
    }

    /// Worker CPU nanoseconds per message sent: what the loop costs,
    /// whatever else the machine runs meanwhile.
    pub fn cpu_ns_per_msg(&self) -> f64 {
        if self.sent == 0 {
            return f64::NAN;
        }
        self.cpu.as_nanos() as f64 / self.sent as f64
    }
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes only `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `cfg.threads` workers until `stop` is set (the caller sets it), and
/// `during` on the calling thread meanwhile (the tool, or a timer). Inboxes
/// outlive every worker, so no send fails; messages left in them at the
/// end are the ones in flight.
pub fn run<const ON: bool>(
    cfg: Config,
    vars: &DemoVars,
    stop: &AtomicBool,
    during: impl FnOnce(),
) -> RunStats {
    let n = cfg.threads;
    let (txs, rxs): (Vec<Sender<Msg>>, Vec<Receiver<Msg>>) = (0..n).map(|_| channel()).unzip();
    let depth: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    let mut total = RunStats::default();
    std::thread::scope(|s| {
        let workers: Vec<_> = rxs
            .into_iter()
            .enumerate()
            .map(|(id, rx)| {
                let txs = txs.clone();
                let depth = &depth;
                std::thread::Builder::new()
                    .name(format!("demo-worker-{id}"))
                    .spawn_scoped(s, move || {
                        let st = worker::<ON>(id, cfg, vars, &txs, &rx, depth, stop);
                        (st, rx)
                    })
                    .expect("spawn a worker")
            })
            .collect();
        during();
        stop.store(true, Ordering::Relaxed);
        let mut inboxes = Vec::new();
        for w in workers {
            let (st, rx) = w.join().expect("worker panicked");
            total.sent += st.sent;
            total.received += st.received;
            total.cpu += st.cpu;
            total.checksum = total.checksum.wrapping_add(st.checksum);
            total.deep_raised += st.deep_raised;
            inboxes.push(rx);
        }
        total.elapsed = start.elapsed();
        drop(inboxes);
    });
    total
}

/// Peer `k` of worker `id` in round-robin order (all-to-all), skipping the
/// worker itself unless it is alone.
#[inline]
fn next_peer(id: usize, n: usize, rr: &mut usize) -> usize {
    if n == 1 {
        return 0;
    }
    *rr = (*rr + 1) % (n - 1);
    (id + 1 + *rr) % n
}

fn worker<const ON: bool>(
    id: usize,
    cfg: Config,
    v: &DemoVars,
    txs: &[Sender<Msg>],
    rx: &Receiver<Msg>,
    depth: &[AtomicU64],
    stop: &AtomicBool,
) -> RunStats {
    let n = cfg.threads;
    let size = cfg.message_size;
    let mut st = RunStats::default();
    let cpu0 = thread_cpu();
    let mut rr = id;
    let set_state = |s: WorkerState| {
        if ON {
            v.state.set_at(id, s as i32);
        }
    };
    // Busy fraction bookkeeping (instrumented runs only).
    let mut window_start = Instant::now();
    let mut waited = Duration::ZERO;
    let mut rounds = 0u32;

    let handle = |m: Msg, st: &mut RunStats| {
        let d = depth[id].fetch_sub(1, Ordering::Relaxed) - 1;
        if ON && d + 1 >= cfg.deep_threshold {
            // The worker holds nothing here: callbacks of every level may
            // run (no tool listening: one load and a branch).
            v.inbox_deep.raise(&(d + 1, id as i32));
            st.deep_raised += 1;
        }
        if ON {
            site::msgs_received().inc();
            site::bytes_received().add(m.payload.len() as u64);
            v.depth.dec_at(id);
            v.depth_hwm.update_at(id, d);
            v.depth_lwm.update_at(id, d);
            v.state.set_at(id, WorkerState::Computing as i32);
        }
        // "Compute" on the payload: checksum it.
        let sum = m
            .payload
            .iter()
            .fold(0u64, |a, &b| a.wrapping_mul(31).wrapping_add(b as u64));
        st.checksum = st.checksum.wrapping_add(black_box(sum));
        st.received += 1;
    };

    while !stop.load(Ordering::Relaxed) {
        // Send a burst.
        set_state(WorkerState::Sending);
        for _ in 0..cfg.burst {
            let dst = next_peer(id, n, &mut rr);
            if depth[dst].load(Ordering::Relaxed) >= cfg.queue_cap {
                break; // the peer is behind: receive first
            }
            let payload = vec![(id as u8).wrapping_add(st.sent as u8); size];
            let d = depth[dst].fetch_add(1, Ordering::Relaxed) + 1;
            {
                let _t = ON.then(|| site::send_time().scoped());
                txs[dst]
                    .send(Msg { payload })
                    .expect("inboxes outlive workers");
            }
            if ON {
                site::msgs_sent().inc();
                site::bytes_sent().add(size as u64);
                v.per_peer.inc_at(dst);
                v.matrix.inc_at(id * n + dst);
                v.depth.inc_at(dst);
                v.depth_hwm.update_at(dst, d);
                v.depth_lwm.update_at(dst, d);
            }
            st.sent += 1;
        }
        // Receive: at least one message (waiting if need be), at most two
        // bursts' worth.
        set_state(WorkerState::Receiving);
        let mut got = 0;
        while got < 2 * cfg.burst {
            let r = {
                let _t = ON.then(|| site::recv_time().scoped());
                rx.try_recv()
            };
            match r {
                Ok(m) => {
                    handle(m, &mut st);
                    got += 1;
                }
                Err(TryRecvError::Empty) if got == 0 => {
                    set_state(WorkerState::Waiting);
                    let t0 = ON.then(Instant::now);
                    let r = {
                        let _t = ON.then(|| site::recv_time().scoped());
                        rx.recv_timeout(Duration::from_millis(5))
                    };
                    if let Some(t0) = t0 {
                        waited += t0.elapsed();
                    }
                    match r {
                        Ok(m) => {
                            handle(m, &mut st);
                            got += 1;
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Err(_) => break,
            }
        }
        if ON {
            rounds += 1;
            if rounds.is_multiple_of(64) {
                let el = window_start.elapsed();
                if el >= Duration::from_millis(20) {
                    let busy = 1.0 - waited.as_secs_f64() / el.as_secs_f64();
                    v.busy.set_at(id, busy);
                    window_start = Instant::now();
                    waited = Duration::ZERO;
                }
            }
        }
    }
    set_state(WorkerState::Done);
    st.cpu = thread_cpu().saturating_sub(cpu0);
    st
}
