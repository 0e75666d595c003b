//! The periodic sampler (`pvar::Sampler`): read-reset samples add up to
//! the exact total, a full ring drops and counts, bad configurations are
//! errors, start/stop churn under fast signals neither crashes nor hangs,
//! and the handler neither allocates (the allocator below aborts if it is
//! entered while the handler runs on the calling thread) nor waits on a
//! lock (handlers interrupt threads that allocate and free sessions and
//! handles meanwhile; a watchdog aborts a hang).
//!
//! Linux only, like the sampler.
#![cfg(target_os = "linux")]

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::{Duration, Instant};

use pvar::{ErrorCode, Registry, SampleClock, Sampler};

#[path = "support/abort_in_handler.rs"]
mod abort_in_handler;
use abort_in_handler::IN_HANDLER;
abort_in_handler::install!("sampler");

/// The program's own handler: marks the thread, then the sampler's work.
extern "C" fn own_handler(_: libc::c_int) {
    IN_HANDLER.set(true);
    Sampler::on_signal();
    IN_HANDLER.set(false);
}

/// Installs [`own_handler`] for `SIGPROF`.
fn install_own_handler() {
    // SAFETY: a plain sigaction(2) with an initialised structure.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = own_handler as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGPROF, &sa, core::ptr::null_mut()),
            0
        );
    }
}

/// One sampler per process: the tests take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Spins (yielding) until `done`, failing after a generous limit: the
/// limit only turns a hang into a failure.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited 60 s for {what}"
        );
        std::thread::yield_now();
    }
}

#[test]
fn readreset_samples_add_up_to_the_exact_total() {
    let _t = turn();
    install_own_handler();
    let reg = Registry::new();
    let msgs = reg.counter("s_msgs").register().unwrap();
    let depth = reg.level::<u64>("s_depth").register().unwrap();
    let session = reg.session().unwrap();
    let h_msgs = session.handle(msgs.index()).unwrap();
    let h_depth = session.handle(depth.index()).unwrap();
    session.start_all().unwrap();
    let mut sampler = Sampler::builder(&reg)
        .readreset(&h_msgs)
        .read(&h_depth)
        .period(Duration::from_micros(300))
        .clock(SampleClock::Monotonic)
        .capacity(64)
        .install_handler(false)
        .start()
        .unwrap();

    let stop = AtomicBool::new(false);
    let mut sampled = 0u64;
    let mut samples = 0usize;
    let mut threads = std::collections::HashSet::new();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Relaxed) {
                    msgs.inc();
                    depth.set(7);
                }
            });
        }
        wait_for("200 samples", || {
            samples += sampler.drain(|x| {
                assert!(!x.failed);
                sampled += x.values(0)[0];
                assert!(x.values(1)[0] == 0 || x.values(1)[0] == 7);
                assert_ne!(x.thread, 0);
                threads.insert(x.thread);
            });
            samples >= 200
        });
        stop.store(true, Relaxed);
    });
    sampler.disarm();
    samples += sampler.drain(|x| sampled += x.values(0)[0]);
    let stats = sampler.stop();
    let rest = h_msgs.readreset().unwrap().to_f64()[0] as u64;
    assert_eq!(
        sampled + rest,
        msgs.get(),
        "sampled deltas + the rest = total"
    );
    assert_eq!(
        stats.taken, samples as u64,
        "every sample taken was drained"
    );
    assert_eq!(stats.failed, 0);
    assert!(!threads.is_empty());
}

#[test]
fn a_full_ring_drops_and_counts() {
    let _t = turn();
    install_own_handler();
    let reg = Registry::new();
    let c = reg.counter("s_full").register().unwrap();
    let session = reg.session().unwrap();
    let h = session.handle(c.index()).unwrap();
    let mut sampler = Sampler::builder(&reg)
        .read(&h)
        .period(Duration::from_micros(200))
        .clock(SampleClock::Monotonic)
        .capacity(4)
        .install_handler(false)
        .start()
        .unwrap();
    wait_for("a dropped sample", || sampler.stats().dropped > 0);
    sampler.disarm();
    assert_eq!(sampler.drain(|_| {}), 4, "the ring held its capacity");
    let stats = sampler.stop();
    assert_eq!(stats.taken, 4);
    assert!(stats.dropped > 0);
}

#[test]
fn bad_configurations_are_errors() {
    let _t = turn();
    let reg = Registry::new();
    let c = reg.counter("s_bad").register().unwrap();
    let wide = reg.counter("s_wide").count(65).register().unwrap();
    let session = reg.session().unwrap();
    let h = session.handle(c.index()).unwrap();
    let hw = session.handle(wide.index()).unwrap();
    let invalid = |r: pvar::Result<Sampler>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(
        invalid(Sampler::builder(&reg).start()),
        ErrorCode::Invalid,
        "no handle"
    );
    assert_eq!(
        invalid(
            Sampler::builder(&reg)
                .read(&h)
                .period(Duration::ZERO)
                .start()
        ),
        ErrorCode::Invalid
    );
    assert_eq!(
        invalid(Sampler::builder(&reg).read(&h).capacity(0).start()),
        ErrorCode::Invalid
    );
    assert_eq!(
        invalid(Sampler::builder(&reg).read(&hw).start()),
        ErrorCode::Invalid,
        "65 elements"
    );
    let first = Sampler::builder(&reg)
        .read(&h)
        .period(Duration::from_secs(10))
        .install_handler(false)
        .start()
        .unwrap();
    assert_eq!(
        invalid(
            Sampler::builder(&reg)
                .read(&h)
                .install_handler(false)
                .start()
        ),
        ErrorCode::Invalid,
        "a second sampler"
    );
    first.stop();
    let again = Sampler::builder(&reg)
        .read(&h)
        .period(Duration::from_secs(10))
        .install_handler(false)
        .start();
    assert!(again.is_ok(), "a sampler after the first stopped");
}

#[test]
fn a_handle_freed_while_sampling_makes_failed_samples() {
    let _t = turn();
    install_own_handler();
    let reg = Registry::new();
    let c = reg.counter("s_freed").register().unwrap();
    let session = reg.session().unwrap();
    let h = session.handle(c.index()).unwrap();
    let mut sampler = Sampler::builder(&reg)
        .read(&h)
        .period(Duration::from_micros(300))
        .clock(SampleClock::Monotonic)
        .install_handler(false)
        .start()
        .unwrap();
    drop(h);
    wait_for("a failed sample", || sampler.stats().failed > 0);
    sampler.disarm();
    let mut failed = 0;
    sampler.drain(|s| {
        if s.failed {
            failed += 1;
            assert_eq!(s.values(0), &[0]);
        }
    });
    assert!(failed > 0);
}

/// The sampler's own handler (the default), with start/stop churn under
/// fast signals while other threads allocate and free sessions and
/// handles and update: no crash, no hang, samples every round.
#[test]
fn churn_with_the_installed_handler_under_load() {
    let _t = turn();
    let reg = Registry::new();
    let c = reg.counter("s_churn").register().unwrap();
    let hwm = reg.high_watermark::<u64>("s_churn_hwm").register().unwrap();
    let stop = AtomicBool::new(false);
    let watchdog_done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            while !watchdog_done.load(Relaxed) {
                if start.elapsed() > Duration::from_secs(120) {
                    let msg = b"sampler churn hung\n";
                    // SAFETY: write(2) and abort(3).
                    unsafe {
                        libc::write(2, msg.as_ptr().cast(), msg.len());
                        libc::abort();
                    }
                }
                std::thread::park_timeout(Duration::from_millis(50));
            }
        });
        s.spawn(|| {
            let mut x = 0u64;
            while !stop.load(Relaxed) {
                c.inc();
                x = x.wrapping_add(1);
                hwm.update(x % 1000);
            }
        });
        s.spawn(|| {
            while !stop.load(Relaxed) {
                let session = reg.session().unwrap();
                let h = session.handle(c.index()).unwrap();
                h.start().unwrap();
                drop(h);
            }
        });
        let session = reg.session().unwrap();
        let h = session.handle(c.index()).unwrap();
        let hw = session.handle(hwm.index()).unwrap();
        session.start_all().unwrap();
        for round in 0..30 {
            let mut sampler = Sampler::builder(&reg)
                .readreset(&h)
                .readreset(&hw)
                .period(Duration::from_micros(100))
                .clock(SampleClock::Monotonic)
                .capacity(16)
                .start()
                .unwrap();
            wait_for("samples", || {
                sampler.drain(|_| {}) > 0 || sampler.stats().taken >= 3
            });
            let stats = sampler.stop();
            assert!(stats.taken > 0, "round {round}");
            assert_eq!(stats.failed, 0, "round {round}");
        }
        stop.store(true, Relaxed);
        watchdog_done.store(true, Relaxed);
    });
}
