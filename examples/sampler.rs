//! A small sampling profiler on [`pvar::Sampler`]: every 4 ms of CPU time
//! a signal handler read-resets the handles of a session into a ring; the
//! main thread drains it and prints a per-sample timeline.
//!
//! ```text
//! cargo run --release --example sampler
//! ```
//!
//! The sampler arms a POSIX timer (`SIGPROF`), installs its handler and
//! allocates its ring when it starts; the handler only calls
//! async-signal-safe pvar operations (see `docs/signal-safety.md`).

#[cfg(target_os = "linux")]
mod imp {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::time::{Duration, Instant};

    use pvar::{Aggregate, Counter, HighWatermark, SampleClock, Sampler, SiteRef, Timer};

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

    /// Two threads in three phases: small messages, large messages with
    /// busy polling, a queue that builds up.
    fn work(stop: &AtomicBool, start: Instant) {
        let mut depth = 0u64;
        let mut n = 0u64;
        while !stop.load(Relaxed) {
            n += 1;
            match (start.elapsed().as_millis() / 250) % 3 {
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
    }

    pub fn main() -> pvar::Result<()> {
        // The tool: a session with a handle per variable, started.
        let reg = pvar::global();
        let session = reg.session()?;
        let h_msgs = session.handle(msgs().index())?;
        let h_bytes = session.handle(bytes().index())?;
        let h_busy = session.handle(busy().index())?;
        let h_queue = session.handle(queue().index())?;
        session.start_all()?;

        // The sampler: each sample read-resets the four handles.
        let mut sampler = Sampler::builder(reg)
            .readreset(&h_msgs)
            .readreset(&h_bytes)
            .readreset(&h_busy)
            .readreset(&h_queue)
            .period(Duration::from_millis(4))
            .clock(SampleClock::ProcessCpu)
            .capacity(1024)
            .start()?;

        let stop = AtomicBool::new(false);
        let start = Instant::now();
        let clock = reg.clock();
        let t0 = clock.ticks();
        println!(
            "{:>4} {:>9} {:>8} {:>9} {:>12} {:>10} {:>7}",
            "#", "t (ms)", "thread", "msgs", "bytes", "busy (us)", "q max"
        );
        let mut shown = 0;
        let mut print = |s: pvar::Sample<'_>| {
            let t = clock.ticks_to_nanos(s.ticks.wrapping_sub(t0)) as f64 / 1e6;
            println!(
                "{shown:>4} {t:>9.2} {:>8} {:>9} {:>12} {:>10.1} {:>7}",
                s.thread,
                s.values(0)[0],
                s.values(1)[0],
                f64::from_bits(s.values(2)[0]) * 1e6, // a timer is a double, in seconds
                s.values(3)[0],
            );
            shown += 1;
        };
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| work(&stop, start));
            }
            // Drain while the workers run, for 1.5 s of wall time.
            while start.elapsed() < Duration::from_millis(1500) {
                sampler.drain(&mut print);
                std::thread::sleep(Duration::from_millis(20));
            }
            stop.store(true, Relaxed);
        });
        sampler.disarm();
        sampler.drain(&mut print);
        let stats = sampler.stop();
        println!(
            "{} samples, {} dropped, {} failed; totals now: {} msgs, {} bytes",
            stats.taken,
            stats.dropped,
            stats.failed,
            msgs().get(),
            bytes().get(),
        );
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn main() -> pvar::Result<()> {
    imp::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the sampler example uses a POSIX timer and SIGPROF: Linux only");
}
