//! The timed loops of `pvar bench`, shared with the criterion benches
//! (`benches/common/mod.rs` includes this file by path): the clock, the
//! thread fan-out, the parked threads of the read cases, and the
//! per-thread loop of each baseline and update case.
//!
//! Every loop passes its object through [`opaque`] on every iteration, so
//! each update really loads and stores (no hoisting, no merging) for every
//! case alike. `opaque` is an empty `asm!` block that takes the object's
//! address in a register and may read or write memory: unlike
//! `std::hint::black_box`, it stores nothing to the stack, whose slot could
//! share its low 12 address bits with the updated cell (4K aliasing) and
//! make a case 2× slower or not from one build to the next. The use-site
//! macro loops, whose addresses are constants, and the thread-bound
//! handle's, whose cell a user's loop keeps in a register, pass through
//! [`clobber`] (the same empty block, without an operand). A loop that
//! alternates two updates (LEVEL `inc`, `dec`) does both in each iteration,
//! as code that enters and leaves does, rather than branch on the
//! iteration's parity. The loops that take a variable first update it once
//! untimed (first touch: thread id, record, chunk; for a use site, also
//! registration and the thread's cache).
//!
//! Each update loop has a floor of the same shape (a thread-local `Cell`
//! updated the way the loop updates its variable: through [`opaque`] or
//! after [`clobber`], one or two updates per iteration), which `pvar bench`
//! puts next to it. The loops are `#[inline(never)]`, so that
//! `scripts/bench-shapes.sh` can print each one's instructions from the
//! built binary and the shapes can be compared.

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::{Duration, Instant};

use pvar::Magnitude;

/// Whether [`Stamp`] reads the thread's CPU time; set before anything is
/// timed.
static CPU_CLOCK: AtomicBool = AtomicBool::new(false);

/// Selects the clock the timed loops read: wall time (`Instant`, the
/// default) or the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`),
/// which leaves out the time slices a thread loses to other processes on
/// a shared, oversubscribed machine.
pub fn set_cpu_clock(on: bool) {
    CPU_CLOCK.store(on, Ordering::Relaxed);
}

/// A start stamp of the selected clock.
#[derive(Clone, Copy)]
pub enum Stamp {
    Wall(Instant),
    Cpu(Duration),
}

fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Stamp {
    #[inline(always)]
    pub fn now() -> Self {
        if CPU_CLOCK.load(Ordering::Relaxed) {
            Stamp::Cpu(thread_cpu_time())
        } else {
            Stamp::Wall(Instant::now())
        }
    }

    #[inline(always)]
    pub fn elapsed(self) -> Duration {
        match self {
            Stamp::Wall(i) => i.elapsed(),
            Stamp::Cpu(c) => thread_cpu_time().saturating_sub(c),
        }
    }
}

/// `x`, as far as the compiler knows any object at all: it must reload
/// whatever it reads through the result, and assume any memory changed.
#[inline(always)]
pub fn opaque<T>(x: &T) -> &T {
    let mut p = x as *const T;
    // SAFETY: the empty asm reads and writes nothing; it only hides from
    // the compiler that `p` comes back unchanged, so `p` still points at
    // `x`, borrowed for the returned lifetime.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) p, options(nostack, preserves_flags));
        &*p
    }
}

/// `x`, as far as the compiler knows any value (kept in a register).
#[inline(always)]
pub fn opaque_bits(mut x: u64) -> u64 {
    // SAFETY: the empty asm reads and writes nothing but the register.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) x, options(nostack, nomem, preserves_flags));
    }
    x
}

/// An empty `asm!` block that may read and write any memory, with no
/// operand: everything a loop reads must be read again after it (no
/// hoisting, no merging), and nothing is stored. What the use-site macro
/// loops pass through on every iteration instead of [`opaque`]: a use
/// site's addresses are constants (a `static` and a thread-local), as in
/// real code, so there is no object to hide.
#[inline(always)]
pub fn clobber() {
    // SAFETY: the empty asm reads and writes nothing; it only tells the
    // compiler that it may have.
    unsafe {
        std::arch::asm!("", options(nostack, preserves_flags));
    }
}

/// Times `iters` calls of `op` on the calling thread.
#[inline(always)]
pub fn timed(iters: u64, mut op: impl FnMut()) -> Duration {
    let start = Stamp::now();
    for _ in 0..iters {
        op();
    }
    start.elapsed()
}

/// Times `iters` calls of `op(i)` on the calling thread.
#[inline(always)]
pub fn timed_i(iters: u64, mut op: impl FnMut(u64)) -> Duration {
    let start = Stamp::now();
    for i in 0..iters {
        op(i);
    }
    start.elapsed()
}

/// A per-thread timed loop: given `iters`, returns the time of the loop.
pub type Body = Arc<dyn Fn(u64) -> Duration + Send + Sync>;

/// Runs `body(iters)` on `threads` threads spawned together and lined up
/// on a barrier; each thread times its own loop; returns the slowest
/// thread's time. So a figure is *per operation per thread*: flat from 1
/// to n threads means no contention.
#[inline(never)]
pub fn run_body(body: &Body, threads: usize, iters: u64) -> Duration {
    let barrier = Arc::new(Barrier::new(threads));
    let joins: Vec<_> = (0..threads)
        .map(|_| {
            let (body, barrier) = (body.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                body(iters)
            })
        })
        .collect();
    joins
        .into_iter()
        .map(|j| j.join().expect("bench thread panicked"))
        .max()
        .unwrap_or_default()
}

/// Threads that updated a counter once and wait until this guard is
/// dropped (then they are joined): registered threads for the read cases.
pub struct Parked {
    tx: Option<mpsc::Sender<()>>,
    joins: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.tx.take();
        self.joins.drain(..).for_each(|j| {
            let _ = j.join();
        });
    }
}

/// Starts `n` threads that each update `counter` once and then park until
/// the returned guard is dropped; returns once all have updated.
pub fn park(counter: &pvar::Counter, n: usize) -> Parked {
    let (tx, rx) = mpsc::channel::<()>();
    let rx = Arc::new(Mutex::new(rx));
    let ready = Arc::new(Barrier::new(n + 1));
    let joins = (0..n)
        .map(|_| {
            let (c, rx, ready) = (counter.clone(), rx.clone(), ready.clone());
            std::thread::spawn(move || {
                c.inc();
                ready.wait();
                // Parks: returns when the sender is dropped.
                let _ = rx.lock().map(|r| r.recv());
            })
        })
        .collect();
    ready.wait();
    Parked {
        tx: Some(tx),
        joins,
    }
}

/// The setup of the read cases: a started COUNTER handle in a session,
/// read while `parked` keeps the threads that updated the counter
/// registered.
pub struct ReadSetup {
    /// The registry; its keyed tool side holds the session and handle.
    pub session: ReadSession,
    pub handle: pvar::HandleId,
    pub parked: Parked,
}

/// A session of the keyed tool API with its registry: what a sampling
/// tool's signal handler reads through.
pub struct ReadSession {
    pub reg: pvar::Registry,
    pub id: pvar::SessionId,
}

/// A fresh registry's COUNTER with a started handle, updated once by each
/// of `threads` parked threads.
pub fn read_setup(threads: usize) -> ReadSetup {
    let reg = pvar::Registry::new();
    let counter = reg.counter("sent").register().unwrap();
    let tool = reg.tool();
    let id = tool.session_create().unwrap();
    let (handle, _) = tool.handle_alloc(id, counter.index(), None).unwrap();
    tool.start(id, handle).unwrap();
    let parked = park(&counter, threads);
    ReadSetup {
        session: ReadSession { reg, id },
        handle,
        parked,
    }
}

/// An atomic alone on its cache lines (two, for the adjacent-line
/// prefetcher).
#[repr(align(128))]
pub struct Padded<T>(pub T);

std::thread_local! {
    static TL: Cell<u64> = const { Cell::new(0) };
    static TL_F64: Cell<f64> = const { Cell::new(0.0) };
}

/// `iters` × a plain `thread_local!` `Cell<u64>` `+= 1`: the physical
/// limit, and the baseline of the ratios.
#[inline(never)]
pub fn thread_local_inc(iters: u64) -> Duration {
    TL.with(|c| {
        timed(iters, || {
            let c = opaque(c);
            c.set(c.get() + 1);
        })
    })
}

/// `iters` × a plain `thread_local!` `Cell<u64>` `+= 1` at its constant
/// address after [`clobber`]: the floor of the use-site macro loops and of
/// the thread-bound handle's (same shape: a fixed address, everything
/// reloaded after the barrier).
#[inline(never)]
pub fn thread_local_clobber_inc(iters: u64) -> Duration {
    timed(iters, || {
        clobber();
        TL.with(|c| c.set(c.get() + 1));
    })
}

/// `iters` × a plain `thread_local!` `Cell<u64>` `+= 3`, the amount
/// through [`opaque_bits`] (a register): the floor of the integer
/// AGGREGATE handle loop, whose amount comes the same way (an add of a
/// register is another instruction than an increment, and some CPUs
/// forward the one's store to the next load faster than the other's).
#[inline(never)]
pub fn thread_local_add(iters: u64) -> Duration {
    TL.with(|c| {
        timed(iters, || {
            let c = opaque(c);
            c.set(c.get().wrapping_add(opaque_bits(3)));
        })
    })
}

/// [`thread_local_add`] at the constant address after [`clobber`]: the
/// floor of the `aggregate!` (u64) loop.
#[inline(never)]
pub fn thread_local_clobber_add(iters: u64) -> Duration {
    timed(iters, || {
        clobber();
        TL.with(|c| c.set(c.get().wrapping_add(opaque_bits(3))));
    })
}

/// Times `iters` updates made in pairs, `up` then `down` in each pass of
/// the loop; an odd `iters` ends with one more `up`, timed, and its `down`
/// after the clock is read (so the level is back where it was).
#[inline(always)]
pub fn timed_pairs(iters: u64, mut up: impl FnMut(), mut down: impl FnMut()) -> Duration {
    let start = Stamp::now();
    for _ in 0..iters / 2 {
        up();
        down();
    }
    if iters & 1 == 1 {
        up();
        let d = start.elapsed();
        down();
        return d;
    }
    start.elapsed()
}

/// `iters` updates of a plain `thread_local!` `Cell<u64>`, `+= 1` then
/// `-= 1` in each iteration, each through [`opaque`]: the floor of the
/// LEVEL handle loop ([`timed_pairs`]).
#[inline(never)]
pub fn thread_local_inc_dec(iters: u64) -> Duration {
    TL.with(|c| {
        timed_pairs(
            iters,
            || {
                let c = opaque(c);
                c.set(c.get().wrapping_add(1));
            },
            || {
                let c = opaque(c);
                c.set(c.get().wrapping_sub(1));
            },
        )
    })
}

/// [`thread_local_inc_dec`] at the constant address after [`clobber`]:
/// the floor of the `level!` loop.
#[inline(never)]
pub fn thread_local_clobber_inc_dec(iters: u64) -> Duration {
    timed_pairs(
        iters,
        || {
            clobber();
            TL.with(|c| c.set(c.get().wrapping_add(1)));
        },
        || {
            clobber();
            TL.with(|c| c.set(c.get().wrapping_sub(1)));
        },
    )
}

/// `iters` × a plain `thread_local!` `Cell<f64>` `+= 1.5` (the amount
/// through [`opaque_bits`], as in [`aggregate_add`]): the baseline of the
/// f64 AGGREGATE, whose cost is the float add's latency.
#[inline(never)]
pub fn thread_local_f64_add(iters: u64) -> Duration {
    let bits = 1.5f64.to_bits();
    TL_F64.with(|c| {
        timed(iters, || {
            let c = opaque(c);
            c.set(c.get() + f64::from_bits(opaque_bits(bits)));
        })
    })
}

/// `iters` × `a.fetch_add(1, Relaxed)`.
#[inline(never)]
pub fn atomic_inc(a: &AtomicU64, iters: u64) -> Duration {
    timed(iters, || {
        opaque(a).fetch_add(1, Ordering::Relaxed);
    })
}

/// `iters` × `prometheus::IntCounter::inc` (one counter, shared by the
/// threads that run this loop).
#[inline(never)]
pub fn prometheus_inc(c: &prometheus::IntCounter, iters: u64) -> Duration {
    timed(iters, || opaque(c).inc())
}

/// `iters` × metrics-rs `Counter::increment(1)` on a handle held by the
/// loop, backed by one `AtomicU64` shared by the threads (what
/// `metrics-util`'s registry gives a recorder).
#[inline(never)]
pub fn metrics_inc(c: &metrics::Counter, iters: u64) -> Duration {
    timed(iters, || opaque(c).increment(1))
}

/// `iters` × [`pvar::Counter::inc`], after one untimed `inc`.
#[inline(never)]
pub fn counter_inc(c: &pvar::Counter, iters: u64) -> Duration {
    c.inc();
    timed(iters, || opaque(c).inc())
}

/// `iters` × [`pvar::LocalCounter::inc`] on `c.local(0)`, fetched once
/// and kept in registers as a user's loop keeps it (the loop passes
/// through [`clobber`], not [`opaque`], whose operand would put the
/// handle on the stack and reload it every iteration).
#[inline(never)]
pub fn local_counter_inc(c: &pvar::Counter, iters: u64) -> Duration {
    let local = c.local(0);
    timed(iters, || {
        clobber();
        local.inc()
    })
}

/// [`thread_local_clobber_f64_add`]'s shape for the `aggregate!` f64 loop:
/// a thread-local `Cell<f64>` at its constant address after [`clobber`].
#[inline(never)]
pub fn thread_local_clobber_f64_add(iters: u64) -> Duration {
    let bits = 1.5f64.to_bits();
    timed(iters, || {
        clobber();
        TL_F64.with(|c| c.set(c.get() + f64::from_bits(opaque_bits(bits))));
    })
}

/// `iters` × `a.add(x)`, after one untimed `add` of zero.
#[inline(never)]
pub fn aggregate_add<T: Magnitude>(a: &pvar::Aggregate<T>, x: T, iters: u64) -> Duration {
    a.add(T::from_bits(0));
    let bits = x.to_bits();
    timed(iters, || opaque(a).add(T::from_bits(opaque_bits(bits))))
}

/// `iters` updates of a LEVEL, an `inc` and a `dec` in each iteration
/// ([`timed_pairs`]: the level ends where it began), after one untimed
/// `inc` + `dec`.
#[inline(never)]
pub fn level_inc_dec(l: &pvar::Level<u64>, iters: u64) -> Duration {
    l.inc();
    l.dec();
    timed_pairs(iters, || opaque(l).inc(), || opaque(l).dec())
}

/// `iters` × `w.update(i & 63)`.
#[inline(never)]
pub fn watermark_update(w: &pvar::HighWatermark<u64>, iters: u64) -> Duration {
    timed_i(iters, |i| opaque(w).update(i & 63))
}

// The use-site macro loops. Each variable has one use site, in the
// function that returns its `SiteRef` (inlined into the timed loop's
// body): the loop's first, untimed update registers the variable in the
// global registry (once per process) and fills the calling thread's
// cache, so every timed update takes the cached path. The totals (read
// through the same site) grow across samples: a check compares the
// difference.

/// The use site of the `counter!` loop.
#[inline(always)]
pub fn counter_site() -> pvar::SiteRef<pvar::Counter> {
    pvar::counter!(
        "bench_counter_macro",
        description = "pvar bench: counter! inc"
    )
}

/// The use site of the `aggregate!` (u64) loop.
#[inline(always)]
pub fn aggregate_u64_site() -> pvar::SiteRef<pvar::Aggregate<u64>> {
    pvar::aggregate!(
        "bench_aggregate_macro",
        description = "pvar bench: aggregate! add"
    )
}

/// The use site of the `aggregate!` (f64) loop.
#[inline(always)]
pub fn aggregate_f64_site() -> pvar::SiteRef<pvar::Aggregate<f64>> {
    pvar::aggregate!("bench_aggregate_macro_f64": f64, description = "pvar bench: aggregate! add")
}

/// The use site of the `level!` loop.
#[inline(always)]
pub fn level_site() -> pvar::SiteRef<pvar::Level<u64>> {
    pvar::level!(
        "bench_level_macro",
        description = "pvar bench: level! inc/dec"
    )
}

/// The use site of the `high_watermark!` loop (no tool handle ever
/// started on it).
#[inline(always)]
pub fn high_watermark_site() -> pvar::SiteRef<pvar::HighWatermark<u64>> {
    pvar::high_watermark!(
        "bench_watermark_macro",
        description = "pvar bench: high_watermark! update"
    )
}

/// `iters` × `pvar::counter!(…).inc()`, after one untimed `inc`.
#[inline(never)]
pub fn counter_macro_inc(iters: u64) -> Duration {
    counter_site().inc();
    timed(iters, || {
        clobber();
        counter_site().inc()
    })
}

/// `iters` × `pvar::aggregate!(…).add(3)`, after one untimed `add(0)`.
#[inline(never)]
pub fn aggregate_macro_u64_add(iters: u64) -> Duration {
    aggregate_u64_site().add(0);
    timed(iters, || {
        clobber();
        aggregate_u64_site().add(opaque_bits(3))
    })
}

/// `iters` × `pvar::aggregate!(…: f64).add(1.5)`, after one untimed
/// `add(0.0)`.
#[inline(never)]
pub fn aggregate_macro_f64_add(iters: u64) -> Duration {
    aggregate_f64_site().add(0.0);
    let bits = 1.5f64.to_bits();
    timed(iters, || {
        clobber();
        aggregate_f64_site().add(f64::from_bits(opaque_bits(bits)))
    })
}

/// `iters` updates through `pvar::level!(…)`, an `inc` and a `dec` in
/// each iteration ([`timed_pairs`]: the level ends where it began), after
/// one untimed `inc` + `dec`.
#[inline(never)]
pub fn level_macro_inc_dec(iters: u64) -> Duration {
    level_site().inc();
    level_site().dec();
    timed_pairs(
        iters,
        || {
            clobber();
            level_site().inc();
        },
        || {
            clobber();
            level_site().dec();
        },
    )
}

/// `iters` × `pvar::high_watermark!(…).update(i & 63)`, after one untimed
/// `update(0)`.
#[inline(never)]
pub fn high_watermark_macro_update(iters: u64) -> Duration {
    high_watermark_site().update(0);
    timed_i(iters, |i| {
        clobber();
        high_watermark_site().update(i & 63)
    })
}

// The event loops: an `Event<u64>` raised with no callback registered
// (the raise is one relaxed load of the type's subscriber count and a
// branch) and with one `ThreadSafe` callback (the raise timestamps the
// event and runs the callback on the raising thread).

std::thread_local! {
    /// What the event callback of [`event_setup`] summed on this thread.
    static EVENT_SEEN: Cell<u64> = const { Cell::new(0) };
}

/// An event to raise, with or without a tool's callback.
pub struct EventSetup {
    pub event: pvar::Event<u64>,
    /// The tool's registration (its callback), if any; freed when dropped.
    pub _registration: Option<pvar::EventRegistration>,
    /// What the callback received, over every thread that ran
    /// [`event_raise`] (each adds its own sum when its loop ends).
    pub seen: Arc<AtomicU64>,
}

/// A fresh registry's `Event<u64>`; with `callback`, one tool
/// registration with a `ThreadSafe` callback that reads the record's one
/// element and adds it to a thread-local (a tool's cheapest useful
/// callback: no shared write of its own).
pub fn event_setup(callback: bool) -> EventSetup {
    let reg = pvar::Registry::new();
    let event = reg.event::<u64>("bench_event").register().unwrap();
    let registration = callback.then(|| {
        let r = reg.event_registration(event.index(), None).unwrap();
        r.on_event(pvar::CbSafety::ThreadSafe, |inst, _| {
            let x: u64 = inst.read(0).unwrap_or(0);
            EVENT_SEEN.with(|c| c.set(c.get() + x));
        })
        .unwrap();
        r
    });
    EventSetup {
        event,
        _registration: registration,
        seen: Arc::new(AtomicU64::new(0)),
    }
}

/// `iters` × [`pvar::Event::raise`] of the record `1u64`, after one untimed
/// raise; then adds what this thread's callback saw to `s.seen` (so with a
/// callback it grows by `iters + 1` per thread, without one by 0).
#[inline(never)]
pub fn event_raise(s: &EventSetup, iters: u64) -> Duration {
    let record = 1u64;
    s.event.raise(&record);
    let d = timed(iters, || opaque(&s.event).raise(&record));
    s.seen
        .fetch_add(EVENT_SEEN.with(|c| c.replace(0)), Ordering::Relaxed);
    d
}

/// `iters` intervals of two raw `quanta` reads.
#[inline(never)]
pub fn quanta_pair(clock: &quanta::Clock, iters: u64) -> Duration {
    let mut sum = 0u64;
    let d = timed(iters, || {
        let c = black_box(clock);
        let a = c.raw();
        let b = c.raw();
        sum = sum.wrapping_add(b.wrapping_sub(a));
    });
    black_box(sum);
    d
}

/// `iters` × `Instant::now()` + `elapsed()`.
#[inline(never)]
pub fn instant_pair(iters: u64) -> Duration {
    let mut sum = Duration::ZERO;
    let d = timed(iters, || {
        let a = black_box(Instant::now());
        sum += a.elapsed();
    });
    black_box(sum);
    d
}

/// `iters` × [`pvar::Timer::start`] + `stop`, after one untimed pair.
#[inline(never)]
pub fn timer_start_stop(t: &pvar::Timer, iters: u64) -> Duration {
    t.start();
    t.stop();
    timed(iters, || {
        let t = opaque(t);
        t.start();
        t.stop();
    })
}

/// `iters` × [`pvar::Tool::read`] of handle `h` into a one-element stack
/// buffer (what a sampling handler does).
#[inline(never)]
pub fn read_handle(session: &ReadSession, h: pvar::HandleId, iters: u64) -> Duration {
    let tool = session.reg.tool();
    let mut v = [0u64];
    timed(iters, || {
        tool.read(session.id, black_box(h), 0, &mut v).unwrap();
        black_box(v[0]);
    })
}
