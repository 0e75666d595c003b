//! A sampling tool: a `SIGPROF` handler (driven by a POSIX interval timer
//! on the monotonic clock) that reads the demo's variables through the same
//! session's handles and appends a record to a preallocated ring.
//!
//! The timer counts wall time, not CPU time (`ITIMER_PROF`): the kernel
//! checks a CPU-time timer only on clock ticks that find one of the
//! process's threads running, so a demo whose workers mostly wait, on a
//! busy machine, could run for seconds without a single sample.
//!
//! Everything the handler touches exists before the handler is installed:
//! the registry, the session and its handles (kept in a static), the ring
//! (a static array of atomics). In the handler: the keyed `Tool::read` into stack
//! buffers, relaxed atomic stores, `clock_gettime` — no allocation, no
//! lock. `errno` is saved and restored.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use pvar::Registry;

use super::tool::{Keys, MAX_ELEMS, V};

/// Fields of one record, see [`Sample`].
const FIELDS: usize = 9;
/// Records the ring holds; older ones are overwritten.
pub const RING: usize = 8192;

struct Slot {
    /// Sequence number + 1 of the record in the slot (0: empty).
    seq: AtomicU64,
    f: [AtomicU64; FIELDS],
}

impl Slot {
    const fn new() -> Self {
        Self {
            seq: AtomicU64::new(0),
            f: [const { AtomicU64::new(0) }; FIELDS],
        }
    }
}

static SLOTS: [Slot; RING] = [const { Slot::new() }; RING];
static NEXT: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicU64 = AtomicU64::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Handlers between their check of `ACTIVE` and their return.
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
/// The POSIX timer (`timer_t`, a pointer on Linux), once created.
static TIMER: AtomicUsize = AtomicUsize::new(0);

struct Ctx {
    reg: &'static Registry,
    keys: Keys,
    t0_ns: u64,
}

static CTX: OnceLock<Ctx> = OnceLock::new();

/// One sample, decoded.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Sample {
    /// Seconds since the sampler started.
    pub t: f64,
    pub sent: u64,
    pub received: u64,
    pub bytes_sent: u64,
    /// Sum of the inbox depths.
    pub depth: u64,
    /// Deepest inbox.
    pub depth_max: u64,
    /// From the callback variable.
    pub in_flight: u64,
    /// Number of workers in each state (by state value).
    pub states: [u8; 6],
    /// Mean busy fraction over workers.
    pub busy: f64,
}

/// What the sampler collected.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Handler invocations that recorded a sample.
    pub taken: u64,
    /// Handler invocations whose read failed.
    pub failed: u64,
    /// The samples still in the ring, oldest first.
    pub samples: Vec<Sample>,
    /// Timer interval (wall time).
    pub interval: Duration,
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe and writes only `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_os = "linux")]
fn errno_ptr() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno location.
    unsafe { libc::__errno_location() }
}

extern "C" fn on_sigprof(_sig: libc::c_int, _info: *mut libc::siginfo_t, _uc: *mut libc::c_void) {
    #[cfg(target_os = "linux")]
    // SAFETY: the thread's own errno.
    let saved = unsafe { *errno_ptr() };
    // Announce the handler before checking ACTIVE (both SeqCst, paired
    // with `stop`): either `stop` sees it in flight and waits, or the
    // handler sees ACTIVE cleared and records nothing.
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    if ACTIVE.load(Ordering::SeqCst)
        && let Some(ctx) = CTX.get()
        && record(ctx).is_err()
    {
        FAILED.fetch_add(1, Ordering::Relaxed);
    }
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    #[cfg(target_os = "linux")]
    // SAFETY: as above.
    unsafe {
        *errno_ptr() = saved
    };
}

/// The handler's work: reads into stack buffers, stores into the ring.
fn record(ctx: &Ctx) -> pvar::Result<()> {
    let mut buf = [0u64; MAX_ELEMS];
    let mut rec = [0u64; FIELDS];
    let (tool, h) = (ctx.reg.tool(), &ctx.keys);
    rec[0] = now_ns().saturating_sub(ctx.t0_ns);
    h.read(tool, V::Sent, &mut buf)?;
    rec[1] = buf[0];
    h.read(tool, V::Recv, &mut buf)?;
    rec[2] = buf[0];
    h.read(tool, V::BytesSent, &mut buf)?;
    rec[3] = buf[0];
    let n = h.read(tool, V::Depth, &mut buf)?;
    rec[4] = buf[..n].iter().sum();
    rec[5] = buf[..n].iter().copied().max().unwrap_or(0);
    h.read(tool, V::InFlight, &mut buf)?;
    rec[6] = buf[0];
    let n = h.read(tool, V::State, &mut buf)?;
    let mut packed = 0u64;
    for (w, s) in buf[..n.min(14)].iter().enumerate() {
        packed |= (*s & 0xF) << (4 * w);
    }
    rec[7] = packed | ((n as u64) << 56);
    let n = h.read(tool, V::Busy, &mut buf)?;
    let mean = buf[..n].iter().map(|b| f64::from_bits(*b)).sum::<f64>() / n.max(1) as f64;
    rec[8] = mean.to_bits();

    let seq = NEXT.fetch_add(1, Ordering::Relaxed);
    let slot = &SLOTS[(seq % RING as u64) as usize];
    slot.seq.store(0, Ordering::Relaxed);
    for (f, v) in slot.f.iter().zip(rec) {
        f.store(v, Ordering::Relaxed);
    }
    slot.seq.store(seq + 1, Ordering::Release);
    Ok(())
}

/// Installs the handler and arms a timer that sends the process `SIGPROF`
/// every `interval` of wall time. `handles` must stay allocated until
/// [`stop`].
pub fn start(reg: &'static Registry, keys: Keys, interval: Duration) -> std::io::Result<()> {
    CTX.set(Ctx {
        reg,
        keys,
        t0_ns: now_ns(),
    })
    .map_err(|_| std::io::Error::other("the sampler runs once per process"))?;
    // SAFETY: a zeroed sigaction is valid; the handler only does
    // async-signal-safe work (see the module docs).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigprof as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGPROF, &sa, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: a zeroed sigevent is valid; we fill in the notification kind
    // and signal, and `timer` is a valid out pointer.
    let timer = unsafe {
        let mut sev: libc::sigevent = std::mem::zeroed();
        sev.sigev_notify = libc::SIGEV_SIGNAL;
        sev.sigev_signo = libc::SIGPROF;
        let mut timer: libc::timer_t = std::ptr::null_mut();
        if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut timer) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        timer
    };
    TIMER.store(timer as usize, Ordering::Release);
    ACTIVE.store(true, Ordering::SeqCst);
    set_timer(interval)
}

fn set_timer(interval: Duration) -> std::io::Result<()> {
    let timer = TIMER.load(Ordering::Acquire) as libc::timer_t;
    let ts = libc::timespec {
        tv_sec: interval.as_secs() as libc::time_t,
        tv_nsec: interval.subsec_nanos() as libc::c_long,
    };
    let it = libc::itimerspec {
        it_interval: ts,
        it_value: ts,
    };
    // SAFETY: `timer` was created by `start` and is never deleted; valid
    // pointers. A zero `it_value` disarms it.
    if unsafe { libc::timer_settime(timer, 0, &it, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Disarms the timer, deactivates the handler (left installed, so a
/// signal still pending cannot kill the process) and returns the samples.
pub fn stop(interval: Duration) -> Samples {
    let _ = set_timer(Duration::ZERO);
    ACTIVE.store(false, Ordering::SeqCst);
    // Wait for handlers already past their ACTIVE check (on other threads;
    // each is a bounded read of a few handles).
    while IN_FLIGHT.load(Ordering::SeqCst) != 0 {
        std::hint::spin_loop();
    }
    let taken = NEXT.load(Ordering::Acquire);
    let mut recs: Vec<(u64, [u64; FIELDS])> = SLOTS
        .iter()
        .filter_map(|s| {
            let seq = s.seq.load(Ordering::Acquire);
            (seq != 0).then(|| (seq, std::array::from_fn(|i| s.f[i].load(Ordering::Relaxed))))
        })
        .collect();
    recs.sort_by_key(|r| r.0);
    let samples = recs
        .into_iter()
        .map(|(_, r)| {
            let n = (r[7] >> 56) as usize;
            let mut states = [0u8; 6];
            for w in 0..n.min(14) {
                let s = ((r[7] >> (4 * w)) & 0xF) as usize;
                if s < states.len() {
                    states[s] += 1;
                }
            }
            Sample {
                t: r[0] as f64 / 1e9,
                sent: r[1],
                received: r[2],
                bytes_sent: r[3],
                depth: r[4],
                depth_max: r[5],
                in_flight: r[6],
                states,
                busy: f64::from_bits(r[8]),
            }
        })
        .collect();
    Samples {
        taken,
        failed: FAILED.load(Ordering::Relaxed),
        samples,
        interval,
    }
}

/// Samples recorded so far.
pub fn taken() -> u64 {
    NEXT.load(Ordering::Relaxed)
}
