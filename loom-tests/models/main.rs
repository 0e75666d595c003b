//! Loom models of every concurrent protocol of pvar. Built only with
//! `RUSTFLAGS="--cfg loom"` (see `scripts/loom.sh`); the models drive the
//! engine's own code, whose atomics, mutexes, cells and thread-locals come
//! from loom under that flag.
//!
//! Each model is small (two or three threads, a handful of operations) so
//! that it finishes with the preemption bound `scripts/loom.sh` sets
//! (`LOOM_MAX_PREEMPTIONS`, default 2 here too).
#![cfg(loom)]

mod append_vec;
mod categories;
mod cells;
mod event_delivery;
mod event_registrations;
mod event_ring;
mod handle;
mod reentrancy;
mod session_free;
mod site_cache;
mod thread_reuse;
mod watermark;

/// `loom::model` with the preemption bound defaulting to 2 when
/// `LOOM_MAX_PREEMPTIONS` is not set (unbounded runs would not finish), and
/// room for the branch points of a registry's setup.
pub fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    // A registry's setup alone takes a few hundred branch points.
    b.max_branches = b.max_branches.max(100_000);
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let start = std::time::Instant::now();
    b.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    println!(
        "loom: {} executions in {:.1?} (preemption bound {:?})",
        runs.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed(),
        b.preemption_bound
    );
}

/// A registry on a mocked clock (no calibration inside the model).
pub fn registry() -> pvar::Registry {
    pvar::Registry::with_clock(pvar::Clock::mock().0)
}

/// Updates the updater thread of a counter model makes.
pub const N: u64 = 2;

/// A registry with one atomic counter and a session's handle on it, started
/// or not.
pub fn counter_handle(
    started: bool,
) -> (
    pvar::Registry,
    pvar::Counter,
    pvar::SessionId,
    pvar::HandleId,
) {
    let reg = registry();
    let c = reg.counter("c").atomic(true).register().unwrap();
    let s = reg.tool().session_create().unwrap();
    let (h, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
    if started {
        reg.tool().start(s, h).unwrap();
    }
    (reg, c, s, h)
}

/// A thread making N updates of `c`.
pub fn updater(c: &pvar::Counter) -> loom::thread::JoinHandle<()> {
    let c = c.clone();
    spawn(move || (0..N).for_each(|_| c.inc()))
}

/// The value a readreset of handle `h` returns.
pub fn readreset(reg: &pvar::Registry, s: pvar::SessionId, h: pvar::HandleId) -> u64 {
    let mut v = [0u64];
    reg.tool().readreset(s, h, 0, &mut v).unwrap();
    v[0]
}

/// Element 0 of handle `h` (the keyed API reads into a buffer).
pub fn read_u64(tool: &pvar::Tool, s: pvar::SessionId, h: pvar::HandleId) -> pvar::Result<u64> {
    let mut v = [0u64];
    tool.read(s, h, 0, &mut v)?;
    Ok(v[0])
}

/// `loom::thread::spawn` for every modelled thread:
///
/// - the thread ends with its exit guard (see `pvar::loom_api::thread_exit`);
/// - the spawning thread yields, so that in loom's first execution the new
///   thread runs first. loom's DPOR remembers only the *last* access to each
///   atomic: when the spawner runs first, a thread's own load before its
///   store (a cell update, a vector push) hides the race with the spawner's
///   earlier load, and loom would explore a single execution. Running the
///   new thread first makes the spawner's later accesses race with its
///   stores, from which loom backtracks into the other orders.
pub fn spawn<T: 'static, F: FnOnce() -> T + 'static>(f: F) -> loom::thread::JoinHandle<T> {
    let h = loom::thread::spawn(move || {
        let r = f();
        pvar::loom_api::thread_exit();
        r
    });
    loom::thread::yield_now();
    h
}

/// The harness itself explores interleavings: a store racing with a load is
/// seen both ways.
#[test]
fn harness_explores_interleavings() {
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicUsize, Ordering};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen2 = seen.clone();
    model(move || {
        let x = Arc::new(AtomicUsize::new(0));
        let t = {
            let x = x.clone();
            crate::spawn(move || x.store(1, Ordering::Relaxed))
        };
        seen2.lock().unwrap().insert(x.load(Ordering::Relaxed));
        t.join().unwrap();
    });
    assert_eq!(*seen.lock().unwrap(), [0, 1].into());
}
