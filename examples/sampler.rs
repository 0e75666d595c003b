//! A small sampling profiler: reads pvars from a `SIGPROF` handler into a
//! preallocated ring, then prints a per-sample timeline.
//!
//! ```text
//! cargo run --release --example sampler
//! ```
//!
//! The pattern (see `docs/signal-safety.md`):
//!
//! 1. create the registry (`pvar::global()`) — calibrates the clock and
//!    checks lock-free atomics — and register the variables;
//! 2. allocate the session and handles, start them, and store their keys in
//!    statics;
//! 3. install the handler and arm `setitimer(ITIMER_PROF)`.
//!
//! The handler only calls async-signal-safe pvar operations (`readreset`,
//! `read`, `Clock::ticks`) and writes into a ring of atomics allocated
//! before the first signal: no lock, no allocation, no formatting.

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
    use std::time::{Duration, Instant};

    use pvar::{Aggregate, Counter, HandleId, HighWatermark, Registry, SessionId, SiteRef, Timer};

    // The component's variables, declared at their use sites (one function
    // each: the workers update them, `main` registers them before the tool
    // allocates its handles, and reads the totals).
    fn msgs() -> SiteRef<Counter> {
        pvar::counter!("msgs_sent", description = "messages sent")
    }
    fn bytes() -> SiteRef<Aggregate<u64>> {
        pvar::aggregate!("bytes_sent", description = "payload bytes sent")
    }
    fn busy() -> SiteRef<Timer> {
        pvar::timer!(
            "progress_busy",
            description = "time spent polling for large messages"
        )
    }
    fn queue() -> SiteRef<HighWatermark<u64>> {
        pvar::high_watermark!(
            "queue_depth",
            description = "deepest queue since the last sample"
        )
    }

    /// One sample: when, on which thread, and the pvar values.
    struct Sample {
        ticks: AtomicU64,
        thread: AtomicU64,
        msgs: AtomicU64,
        bytes: AtomicU64,
        busy: AtomicU64,
        queue_max: AtomicU64,
    }

    const RING: usize = 256;
    static SAMPLES: [Sample; RING] = [const {
        Sample {
            ticks: AtomicU64::new(0),
            thread: AtomicU64::new(0),
            msgs: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            queue_max: AtomicU64::new(0),
        }
    }; RING];
    /// Next ring slot; samples past the end are counted, not stored.
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    /// Samples whose slot was fully written (the printer waits for these).
    static WRITTEN: AtomicUsize = AtomicUsize::new(0);

    static REG: AtomicPtr<Registry> = AtomicPtr::new(core::ptr::null_mut());
    static SESSION: AtomicU64 = AtomicU64::new(0);
    static H_MSGS: AtomicU64 = AtomicU64::new(0);
    static H_BYTES: AtomicU64 = AtomicU64::new(0);
    static H_BUSY: AtomicU64 = AtomicU64::new(0);
    static H_QUEUE: AtomicU64 = AtomicU64::new(0);
    static ERRORS: AtomicU64 = AtomicU64::new(0);

    thread_local! {
        /// Which thread a sample interrupted (0: main). `const`, no destructor.
        static THREAD: Cell<u64> = const { Cell::new(0) };
    }

    fn readreset(reg: &Registry, s: SessionId, h: &AtomicU64) -> u64 {
        let mut v = [0u64; 1];
        match reg
            .tool()
            .readreset(s, HandleId::from_raw(h.load(Relaxed)), 0, &mut v)
        {
            Ok(()) => v[0],
            Err(_) => {
                ERRORS.fetch_add(1, Relaxed);
                0
            }
        }
    }

    extern "C" fn on_sigprof(_: libc::c_int) {
        // SAFETY: the calling thread's errno location.
        let errno = unsafe { *libc::__errno_location() };
        let reg = REG.load(Acquire);
        if !reg.is_null() {
            // SAFETY: `pvar::global()`'s `&'static Registry`.
            let reg = unsafe { &*reg };
            let i = NEXT.fetch_add(1, Relaxed);
            if i < RING {
                let s = SessionId::from_raw(SESSION.load(Relaxed));
                let slot = &SAMPLES[i];
                slot.ticks.store(reg.clock().ticks(), Relaxed);
                slot.thread.store(THREAD.get(), Relaxed);
                // Deltas since the previous sample: read and reset in one step.
                slot.msgs.store(readreset(reg, s, &H_MSGS), Relaxed);
                slot.bytes.store(readreset(reg, s, &H_BYTES), Relaxed);
                // Seconds, as the bits of an f64 (a timer is a double).
                slot.busy.store(readreset(reg, s, &H_BUSY), Relaxed);
                // Highest queue depth since the previous sample.
                slot.queue_max.store(readreset(reg, s, &H_QUEUE), Relaxed);
                WRITTEN.fetch_add(1, Release);
            }
        }
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
    }

    fn set_itimer(interval: Duration) {
        let tv = libc::timeval {
            tv_sec: interval.as_secs() as libc::time_t,
            tv_usec: interval.subsec_micros() as libc::suseconds_t,
        };
        let it = libc::itimerval {
            it_interval: tv,
            it_value: tv,
        };
        // SAFETY: a valid itimerval.
        let rc = unsafe { libc::setitimer(libc::ITIMER_PROF, &it, core::ptr::null_mut()) };
        assert_eq!(rc, 0, "setitimer failed");
    }

    pub fn main() {
        // 1. The registry, and the component's variables (registered by
        // their use sites' first call; `index` is one).
        let reg: &'static Registry = pvar::global();

        // 2. The session and handles, before the handler exists.
        let s = reg.tool().session_create().unwrap();
        let handle = |index: usize, slot: &AtomicU64| {
            let (h, _) = reg.tool().handle_alloc(s, index, None).unwrap();
            slot.store(h.to_raw(), Relaxed);
        };
        handle(msgs().index(), &H_MSGS);
        handle(bytes().index(), &H_BYTES);
        handle(busy().index(), &H_BUSY);
        handle(queue().index(), &H_QUEUE);
        reg.tool().start_all(s).unwrap();
        SESSION.store(s.to_raw(), Relaxed);
        REG.store(reg as *const Registry as *mut Registry, Release);

        // 3. The handler, then the timer: one sample per 4 ms of CPU time.
        // SAFETY: a plain sigaction(2) with an initialised structure.
        unsafe {
            let mut sa: libc::sigaction = core::mem::zeroed();
            sa.sa_sigaction = on_sigprof as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGPROF, &sa, core::ptr::null_mut()),
                0
            );
        }
        let t0 = reg.clock().ticks();
        set_itimer(Duration::from_millis(4));

        // The workload: two threads in three phases (small messages, large
        // messages with busy polling, a queue that builds up).
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let workers: Vec<_> = (1..=2u64)
            .map(|id| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    THREAD.set(id);
                    let mut depth = 0u64;
                    let mut n = 0u64;
                    while !stop.load(Relaxed) {
                        n += 1;
                        let phase = (start.elapsed().as_millis() / 250) % 3;
                        match phase {
                            0 => {
                                msgs().inc();
                                bytes().add(64);
                                depth = depth.saturating_sub(1);
                            }
                            1 => {
                                let _g = busy().scoped();
                                msgs().inc();
                                bytes().add(64 * 1024);
                                for _ in 0..200 {
                                    std::hint::black_box(n);
                                }
                            }
                            _ => {
                                if n.is_multiple_of(64) {
                                    depth += 1;
                                }
                                msgs().inc();
                                bytes().add(512);
                            }
                        }
                        queue().update(depth);
                    }
                })
            })
            .collect();

        // Run until the ring is full or 3 s have passed.
        while NEXT.load(Relaxed) < RING && start.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(10));
        }
        set_itimer(Duration::ZERO);
        stop.store(true, Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        let taken = NEXT.load(Relaxed).min(RING);
        while WRITTEN.load(Acquire) < taken {
            std::hint::spin_loop();
        }

        // The timeline.
        let clock = reg.clock();
        println!(
            "{:>4} {:>9} {:>6} {:>9} {:>12} {:>10} {:>7}",
            "#", "t (ms)", "thread", "msgs", "bytes", "busy (us)", "q max"
        );
        let mut totals = (0u64, 0u64, 0.0f64);
        for (i, s) in SAMPLES.iter().take(taken).enumerate() {
            let t = clock.ticks_to_nanos(s.ticks.load(Relaxed).wrapping_sub(t0)) as f64 / 1e6;
            let (m, b, busy_s) = (
                s.msgs.load(Relaxed),
                s.bytes.load(Relaxed),
                f64::from_bits(s.busy.load(Relaxed)),
            );
            totals = (totals.0 + m, totals.1 + b, totals.2 + busy_s);
            let thread = match s.thread.load(Relaxed) {
                0 => "main".to_string(),
                id => format!("w{id}"),
            };
            println!(
                "{i:>4} {t:>9.2} {thread:>6} {m:>9} {b:>12} {:>10.1} {:>7}",
                busy_s * 1e6,
                s.queue_max.load(Relaxed)
            );
        }
        println!(
            "{taken} samples ({} signals), {} errors; sampled totals: {} msgs, {} bytes, \
             {:.3} ms busy; totals now: {} msgs, {} bytes",
            NEXT.load(Relaxed),
            ERRORS.load(Relaxed),
            totals.0,
            totals.1,
            totals.2 * 1e3,
            msgs().get(),
            bytes().get(),
        );
    }
}

#[cfg(target_os = "linux")]
fn main() {
    imp::main();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the sampler example uses setitimer/SIGPROF and runs on Linux only");
}
