//! The [`Sampler`](crate::Sampler): a signal-driven sampling tool over
//! tool handles (documented on the type).

use std::borrow::Cow;
use std::time::Duration;

use crate::registry::Registry;
use crate::sync::unmodelled::{AtomicPtr, AtomicU64, AtomicUsize};
use crate::sync::{Ordering, fence};
use crate::tool::{Handle, HandleId, SessionId};
use crate::vocabulary::error::{Error, Result};

const MAX_ELEMENTS: usize = 64;

/// The clock the sampling timer runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SampleClock {
    /// CPU time of the whole process (`CLOCK_PROCESS_CPUTIME_ID`): samples
    /// where the program spends CPU, as `setitimer(ITIMER_PROF)` does. The
    /// default.
    #[default]
    ProcessCpu,
    /// Wall time (`CLOCK_MONOTONIC`): samples at a fixed rate whether or
    /// not the program runs.
    Monotonic,
}

impl SampleClock {
    fn id(self) -> libc::clockid_t {
        match self {
            Self::ProcessCpu => libc::CLOCK_PROCESS_CPUTIME_ID,
            Self::Monotonic => libc::CLOCK_MONOTONIC,
        }
    }
}

/// What the handler does with a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    ReadReset,
}

/// One handle the handler reads: its keys, its element count, and where
/// its values go in a sample.
#[derive(Debug, Clone, Copy)]
struct Entry {
    session: SessionId,
    handle: HandleId,
    count: usize,
    offset: usize,
    op: Op,
}

/// Configures a [`Sampler`]; [`SamplerBuilder::start`] arms it.
#[derive(Debug)]
pub struct SamplerBuilder {
    reg: Registry,
    entries: Vec<Entry>,
    period: Duration,
    clock: SampleClock,
    capacity: usize,
    signal: libc::c_int,
    install: bool,
    error: Option<Error>,
}

impl SamplerBuilder {
    fn add(mut self, h: &Handle<'_>, op: Op) -> Self {
        let count = h.count();
        if count > MAX_ELEMENTS {
            self.error.get_or_insert(Error::Invalid(Cow::Owned(format!(
                "a sampled handle has at most {MAX_ELEMENTS} elements (this one {count})"
            ))));
            return self;
        }
        let offset = self.entries.last().map_or(0, |e| e.offset + e.count);
        self.entries.push(Entry {
            session: h.session_id(),
            handle: h.id(),
            count,
            offset,
            op,
        });
        self
    }

    /// Reads every element of `h` at each sample (the value, as
    /// [`Handle::read`]). `h` is a [`Handle`] or a
    /// [`TypedHandle`](crate::TypedHandle): the sample holds raw 64-bit
    /// words either way ([`Sample::values`]).
    pub fn read<'s>(self, h: &impl AsRef<Handle<'s>>) -> Self {
        self.add(h.as_ref(), Op::Read)
    }

    /// Reads and resets `h` at each sample: a summed class then gives what
    /// happened during the period, a watermark the extreme since the
    /// previous sample. `h` is a [`Handle`] or a
    /// [`TypedHandle`](crate::TypedHandle).
    ///
    /// ```
    /// # fn main() -> pvar::Result<()> {
    /// use std::time::Duration;
    ///
    /// let reg = pvar::global();
    /// let sent = reg.counter("doc_sampler_typed").register()?;
    /// let session = reg.session()?;
    /// // A typed handle, as the tool guide makes them, is sampled as is.
    /// let h = session.handle(sent.index())?.typed::<u64>()?;
    /// h.start()?;
    /// sent.add(3);
    /// let mut sampler = pvar::Sampler::builder(reg)
    ///     .readreset(&h)
    ///     .period(Duration::from_secs(3600)) // no timer signal in this example
    ///     .start()?;
    /// pvar::Sampler::on_signal(); // one sample, as the signal handler takes it
    /// let mut taken = Vec::new();
    /// sampler.drain(|s| taken.push(s.values(0)[0]));
    /// assert_eq!(taken, [3]);
    /// assert_eq!(h.read()?, 0); // the sample read-reset the handle
    /// # Ok(()) }
    /// ```
    pub fn readreset<'s>(self, h: &impl AsRef<Handle<'s>>) -> Self {
        self.add(h.as_ref(), Op::ReadReset)
    }

    /// Time between samples (default 4 ms), on the [`clock`](Self::clock).
    pub fn period(mut self, period: Duration) -> Self {
        self.period = period;
        self
    }

    /// The timer's clock (default [`SampleClock::ProcessCpu`]).
    pub fn clock(mut self, clock: SampleClock) -> Self {
        self.clock = clock;
        self
    }

    /// Samples the ring holds before [`Sampler::drain`] must empty it
    /// (default 4096); a sample taken while it is full is dropped and
    /// counted.
    pub fn capacity(mut self, samples: usize) -> Self {
        self.capacity = samples;
        self
    }

    /// The signal the timer raises (default `SIGPROF`).
    pub fn signal(mut self, signal: libc::c_int) -> Self {
        self.signal = signal;
        self
    }

    /// Whether [`start`](Self::start) installs the sampler's handler for
    /// the signal (default yes). Without it, the program's own handler
    /// calls [`Sampler::on_signal`].
    pub fn install_handler(mut self, install: bool) -> Self {
        self.install = install;
        self
    }

    /// Allocates the ring, installs the handler and arms the timer.
    ///
    /// Errors (`Error::Invalid`): no handle, a zero period or capacity, a
    /// handle with more than [`Sampler::MAX_ELEMENTS`] elements, another sampler
    /// running, or the system refusing the handler or the timer.
    ///
    /// Async-signal-safe: no.
    pub fn start(self) -> Result<Sampler> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.entries.is_empty() {
            return Err(Error::invalid("a sampler needs at least one handle"));
        }
        if self.period.is_zero() || self.capacity == 0 {
            return Err(Error::invalid("a sampler needs a period and a capacity"));
        }
        let width = self.entries.iter().map(|e| e.count).sum();
        let shared = Box::new(Ring {
            reg: self.reg,
            entries: self.entries.into_boxed_slice(),
            width,
            slots: (0..self.capacity).map(|_| Slot::default()).collect(),
            values: (0..self.capacity * width)
                .map(|_| AtomicU64::new(0))
                .collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        });
        let ptr = Box::into_raw(shared);
        if ACTIVE
            .compare_exchange(
                core::ptr::null_mut(),
                ptr,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_err()
        {
            // SAFETY: `ptr` came from `Box::into_raw` above and was never
            // published.
            drop(unsafe { Box::from_raw(ptr) });
            return Err(Error::invalid("another sampler is running"));
        }
        let mut sampler = Sampler {
            ring: ptr,
            timer: None,
        };
        if self.install {
            install_handler(self.signal)?;
        }
        sampler.timer = Some(Timer::arm(self.clock, self.signal, self.period)?);
        Ok(sampler)
    }
}

/// A ring slot's header: the sample's position (its sequence number + 1
/// once written), when and where it was taken.
#[derive(Default)]
struct Slot {
    seq: AtomicU64,
    ticks: AtomicU64,
    thread: AtomicU64,
    failed: AtomicU64,
}

/// The ring and the handles, shared between the handler and the drainer.
struct Ring {
    reg: Registry,
    entries: Box<[Entry]>,
    /// Values per sample.
    width: usize,
    slots: Box<[Slot]>,
    /// `slots.len() * width` values, slot by slot.
    values: Box<[AtomicU64]>,
    /// Samples claimed by handlers (the next position to claim).
    head: AtomicU64,
    /// Samples drained (the next position to drain).
    tail: AtomicU64,
    taken: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

/// The running sampler's ring, for the handler.
static ACTIVE: AtomicPtr<Ring> = AtomicPtr::new(core::ptr::null_mut());
/// Handlers between their load of [`ACTIVE`] and their last access to the
/// ring: [`Sampler::stop`] waits for 0 before freeing it.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

impl Ring {
    /// One sample, in a signal handler. Async-signal-safe.
    fn sample(&self) {
        let cap = self.slots.len() as u64;
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            // The slot `pos` reuses was drained when tail passed it. (A
            // stale `pos` may be behind tail: then the CAS fails and
            // reloads.)
            if pos.saturating_sub(self.tail.load(Ordering::Acquire)) >= cap {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            match self.head.compare_exchange_weak(
                pos,
                pos + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => pos = now,
            }
        }
        let i = (pos % cap) as usize;
        let slot = &self.slots[i];
        slot.ticks
            .store(self.reg.clock().ticks(), Ordering::Relaxed);
        // SAFETY: gettid(2) has no arguments and is async-signal-safe.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        slot.thread.store(tid as u64, Ordering::Relaxed);
        let values = &self.values[i * self.width..(i + 1) * self.width];
        let tool = self.reg.tool();
        let mut failed = false;
        let mut buf = [0u64; MAX_ELEMENTS];
        for e in self.entries.iter() {
            let out = &mut buf[..e.count];
            let r = match e.op {
                Op::Read => tool.read(e.session, e.handle, 0, out),
                Op::ReadReset => tool.readreset(e.session, e.handle, 0, out),
            };
            if r.is_err() {
                failed = true;
                out.fill(0);
            }
            for (v, x) in values[e.offset..e.offset + e.count].iter().zip(out.iter()) {
                v.store(*x, Ordering::Relaxed);
            }
        }
        slot.failed.store(failed as u64, Ordering::Relaxed);
        if failed {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        self.taken.fetch_add(1, Ordering::Relaxed);
        // Publishes the slot's contents to the drainer.
        slot.seq.store(pos + 1, Ordering::Release);
    }
}

/// One sample, as [`Sampler::drain`] hands it over.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    /// When: the registry clock's tick count ([`Clock::ticks`](crate::Clock::ticks)).
    pub ticks: u64,
    /// The Linux thread id (`gettid`) of the thread the signal interrupted.
    pub thread: u64,
    /// Whether a read failed (a handle freed while sampling); its values
    /// are 0.
    pub failed: bool,
    values: &'a [u64],
    entries: &'a [Entry],
}

impl<'a> Sample<'a> {
    /// The values read from the `i`-th handle given to the builder, as raw
    /// 64-bit words of the handle's datatype (an `f64`'s bits for a
    /// double: `f64::from_bits`).
    ///
    /// Panics if `i` is not a handle of the builder.
    pub fn values(&self, i: usize) -> &'a [u64] {
        let e = &self.entries[i];
        &self.values[e.offset..e.offset + e.count]
    }
}

/// Counts of a sampler's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SamplerStats {
    /// Samples written into the ring.
    pub taken: u64,
    /// Signals that found the ring full (no sample written).
    pub dropped: u64,
    /// Samples in which a read failed.
    pub failed: u64,
}

/// A periodic sampler for the commonest sampling-profiler case: a POSIX
/// timer raises a signal every period, the signal handler reads (or
/// read-resets) a set of tool handles into a preallocated ring, and a
/// normal thread drains the ring.
///
/// ```no_run
/// # fn main() -> pvar::Result<()> {
/// use std::time::Duration;
/// use pvar::{SampleClock, Sampler};
///
/// let reg = pvar::global();
/// let sent = reg.counter("sampled_msgs").register()?;
/// let session = reg.session()?;
/// let h = session.handle(sent.index())?;
/// h.start()?;
///
/// let mut sampler = Sampler::builder(reg)
///     .readreset(&h) // messages per period
///     .period(Duration::from_millis(2))
///     .clock(SampleClock::ProcessCpu)
///     .start()?;
/// // ... the program runs; from time to time:
/// sampler.drain(|s| println!("{} ticks: {} msgs", s.ticks, s.values(0)[0]));
/// let stats = sampler.stop();
/// println!("{} samples, {} dropped", stats.taken, stats.dropped);
/// # Ok(()) }
/// ```
///
/// **What runs in the handler** ([`Sampler::on_signal`]): a load of the
/// active sampler, a claim of a ring slot (compare-and-swap), the clock's
/// tick count, `gettid`, and per handle the keyed `read` / `readreset`
/// (async-signal-safe, `docs/signal-safety.md`) into a stack buffer copied
/// into the slot's atomics. No lock, no allocation, no lazy
/// initialisation, no thread-local; `errno` is saved and restored. A full
/// ring drops the sample and counts it; a read that fails (a handle freed
/// meanwhile) zeroes the values and marks the sample failed.
///
/// **One sampler at a time** per process (it owns the signal and the
/// timer); its handler stays installed after [`Sampler::stop`] and does
/// nothing then, so a signal still pending is harmless. A program that
/// owns the signal's handler itself builds with
/// [`SamplerBuilder::install_handler`]`(false)` and calls
/// [`Sampler::on_signal`] from its own handler.
///
/// Linux only (`timer_create` with `SIGEV_SIGNAL`).
///
/// A running sampler: drain it from a normal thread, stop it (or drop it)
/// when done.
#[derive(Debug)]
pub struct Sampler {
    ring: *mut Ring,
    timer: Option<Timer>,
}

// SAFETY: `ring` is owned by the sampler (freed only by `stop`, after the
// handlers are out); everything in it is atomics or immutable after
// construction, so any thread may drain and stop.
unsafe impl Send for Sampler {}

impl Sampler {
    /// Most elements one handle contributes to a sample (the handler's stack
    /// buffer).
    pub const MAX_ELEMENTS: usize = MAX_ELEMENTS;

    /// Starts configuring a sampler of handles of `reg`'s sessions.
    pub fn builder(reg: &Registry) -> SamplerBuilder {
        SamplerBuilder {
            reg: reg.clone(),
            entries: Vec::new(),
            period: Duration::from_millis(4),
            clock: SampleClock::default(),
            capacity: 4096,
            signal: libc::SIGPROF,
            install: true,
            error: None,
        }
    }

    /// Takes one sample if a sampler is running: the sampler's signal
    /// handler, for a program that installs its own
    /// ([`SamplerBuilder::install_handler`]).
    ///
    /// Async-signal-safe: yes (no lock, no allocation, no thread-local;
    /// see [`Sampler`]). Also callable outside a
    /// handler.
    pub fn on_signal() {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        let ring = ACTIVE.load(Ordering::SeqCst);
        if !ring.is_null() {
            // SAFETY: a ring published in ACTIVE is freed only after
            // `stop` has cleared ACTIVE and seen IN_FLIGHT at 0; this
            // handler counted itself in IN_FLIGHT before loading ACTIVE
            // (both SeqCst), so `stop` waits for it.
            unsafe { &*ring }.sample();
        }
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }

    fn ring(&self) -> &Ring {
        // SAFETY: `self.ring` is live until `stop` (which takes `self`).
        unsafe { &*self.ring }
    }

    /// Hands every sample written since the last drain to `f`, oldest
    /// first, and frees their slots. A sample still being written (a
    /// handler running on another thread) ends the drain; it comes next
    /// time.
    pub fn drain(&mut self, mut f: impl FnMut(Sample<'_>)) -> usize {
        let ring = self.ring();
        let cap = ring.slots.len() as u64;
        let mut copy = vec![0u64; ring.width];
        let mut pos = ring.tail.load(Ordering::Relaxed);
        let mut n = 0;
        loop {
            let i = (pos % cap) as usize;
            let slot = &ring.slots[i];
            if slot.seq.load(Ordering::Acquire) != pos + 1 {
                break;
            }
            for (c, v) in copy
                .iter_mut()
                .zip(&ring.values[i * ring.width..(i + 1) * ring.width])
            {
                *c = v.load(Ordering::Relaxed);
            }
            let sample = Sample {
                ticks: slot.ticks.load(Ordering::Relaxed),
                thread: slot.thread.load(Ordering::Relaxed),
                failed: slot.failed.load(Ordering::Relaxed) != 0,
                values: &copy,
                entries: &ring.entries,
            };
            pos += 1;
            // The slot may be claimed again once tail passes it: after the
            // copy above.
            ring.tail.store(pos, Ordering::Release);
            f(sample);
            n += 1;
        }
        n
    }

    /// Counts so far.
    pub fn stats(&self) -> SamplerStats {
        let r = self.ring();
        SamplerStats {
            taken: r.taken.load(Ordering::Relaxed),
            dropped: r.dropped.load(Ordering::Relaxed),
            failed: r.failed.load(Ordering::Relaxed),
        }
    }

    /// Stops sampling: deletes the timer and returns once no handler is
    /// writing into the ring. The samples taken so far stay for
    /// [`drain`](Self::drain); signals still pending find no sampler and
    /// do nothing. Idempotent.
    pub fn disarm(&mut self) {
        drop(self.timer.take());
        // Only this sampler's ring: another sampler may have started since
        // a previous `disarm`.
        let _ = ACTIVE.compare_exchange(
            self.ring,
            core::ptr::null_mut(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        while IN_FLIGHT.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
        fence(Ordering::SeqCst);
    }

    /// [`disarm`](Self::disarm)s and frees the ring: samples not drained
    /// are lost (to keep every sample: `disarm`, `drain`, then `stop`).
    /// Returns the final counts. Dropping the sampler does the same.
    pub fn stop(mut self) -> SamplerStats {
        self.disarm();
        self.stats()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.disarm();
        // SAFETY: after `disarm`, ACTIVE no longer names the ring and no
        // handler is inside `on_signal` past its load of ACTIVE (see
        // `on_signal`), so this is the last reference; it came from
        // `Box::into_raw` in `start`.
        drop(unsafe { Box::from_raw(self.ring) });
    }
}

/// The POSIX timer that raises the signal; deleted on drop.
#[derive(Debug)]
struct Timer(libc::timer_t);

impl Timer {
    fn arm(clock: SampleClock, signal: libc::c_int, period: Duration) -> Result<Self> {
        // SAFETY: `sigevent` is plain data; all-zero is a valid value.
        let mut ev: libc::sigevent = unsafe { core::mem::zeroed() };
        ev.sigev_notify = libc::SIGEV_SIGNAL;
        ev.sigev_signo = signal;
        let mut id: libc::timer_t = core::ptr::null_mut();
        // SAFETY: valid pointers to an initialised `sigevent` and to the
        // timer id the call writes.
        if unsafe { libc::timer_create(clock.id(), &mut ev, &mut id) } != 0 {
            return Err(Error::Invalid(Cow::Owned(format!(
                "timer_create failed: {}",
                std::io::Error::last_os_error()
            ))));
        }
        let timer = Timer(id);
        let ts = libc::timespec {
            tv_sec: period.as_secs() as libc::time_t,
            tv_nsec: period.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: ts,
            it_value: ts,
        };
        // SAFETY: `timer.0` is the timer just created; `spec` is valid.
        if unsafe { libc::timer_settime(timer.0, 0, &spec, core::ptr::null_mut()) } != 0 {
            return Err(Error::Invalid(Cow::Owned(format!(
                "timer_settime failed: {}",
                std::io::Error::last_os_error()
            ))));
        }
        Ok(timer)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by `timer_create` and is deleted
        // once, here.
        unsafe { libc::timer_delete(self.0) };
    }
}

extern "C" fn handler(_signal: libc::c_int) {
    // SAFETY: the calling thread's errno location, valid for the thread's
    // life.
    let errno = unsafe { *libc::__errno_location() };
    Sampler::on_signal();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

fn install_handler(signal: libc::c_int) -> Result<()> {
    // SAFETY: a zeroed `sigaction` is a valid starting value; the handler
    // is an `extern "C" fn(c_int)`, as `sa_sigaction` without SA_SIGINFO
    // expects; `sigemptyset` initialises the mask it is given.
    let rc = unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = handler as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(signal, &sa, core::ptr::null_mut())
    };
    if rc != 0 {
        return Err(Error::Invalid(Cow::Owned(format!(
            "sigaction({signal}) failed: {}",
            std::io::Error::last_os_error()
        ))));
    }
    Ok(())
}
