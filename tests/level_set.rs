//! `Level::set` / `set_at`: precision (the value set is read back exactly,
//! also after other threads' `inc`/`dec` and `set`), last-writer-wins for
//! sets ordered by a lock and for racing sets, and `inc`/`dec` counted
//! exactly around sets (docs/component-guide.md, "Levels").

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pvar::Registry;

#[test]
fn level_f64_set_small_after_large_is_exact() {
    let reg = Registry::new();
    let l = reg.level::<f64>("lvl").register().unwrap();
    l.set(1e17);
    assert_eq!(l.get(), 1e17);
    l.set(3.0);
    assert_eq!(l.get(), 3.0);
    l.set(1e300);
    l.set(0.1);
    assert_eq!(l.get(), 0.1);
    l.set(0.0);
    assert_eq!(l.get(), 0.0);
    // Elements are independent.
    let a = reg.level::<f64>("arr").count(3).register().unwrap();
    a.set_at(1, 1e17);
    a.set_at(2, 7.25);
    a.set_at(1, 0.5);
    assert_eq!((a.get_at(0), a.get_at(1), a.get_at(2)), (0.0, 0.5, 7.25));
}

#[test]
fn level_u64_set_small_after_large_is_exact() {
    let reg = Registry::new();
    let l = reg.level::<u64>("lvl").register().unwrap();
    l.set(1 << 62);
    assert_eq!(l.get(), 1 << 62);
    l.set(3);
    assert_eq!(l.get(), 3);
    l.inc();
    l.dec();
    l.dec();
    assert_eq!(l.get(), 2);
    let l32 = reg.level::<u32>("lvl32").register().unwrap();
    l32.set(u32::MAX);
    l32.set(5);
    assert_eq!(l32.get(), 5);
}

#[test]
fn level_f64_set_exact_after_other_threads_hold_deltas() {
    let reg = Registry::new();
    let l = reg.level::<f64>("lvl").register().unwrap();
    // Thread A holds +5, thread B -2 (both still in their cells after exit:
    // records are never freed).
    std::thread::scope(|s| {
        s.spawn(|| (0..5).for_each(|_| l.inc()));
    });
    std::thread::scope(|s| {
        s.spawn(|| (0..2).for_each(|_| l.dec()));
    });
    assert_eq!(l.get(), 3.0);
    l.set(2.5);
    assert_eq!(l.get(), 2.5, "set(2.5) with others holding +3");
    l.inc();
    assert_eq!(l.get(), 3.5);
    std::thread::scope(|s| {
        s.spawn(|| (0..3).for_each(|_| l.dec()));
    });
    assert_eq!(l.get(), 0.5);
    // A large value set by another thread does not swallow a small one
    // set afterwards here.
    std::thread::scope(|s| {
        s.spawn(|| l.set(1e17));
    });
    assert_eq!(l.get(), 1e17);
    l.set(3.0);
    assert_eq!(l.get(), 3.0, "set(3.0) after another thread's set(1e17)");
    std::thread::scope(|s| {
        s.spawn(|| l.set(0.25));
    });
    assert_eq!(l.get(), 0.25);
}

#[test]
fn level_u64_set_exact_after_other_threads_hold_deltas() {
    let reg = Registry::new();
    let l = reg.level::<u64>("lvl").register().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| (0..5).for_each(|_| l.inc()));
    });
    l.set(2);
    assert_eq!(l.get(), 2);
    std::thread::scope(|s| {
        s.spawn(|| (0..2).for_each(|_| l.dec()));
    });
    assert_eq!(l.get(), 0);
    l.inc();
    assert_eq!(l.get(), 1);
    std::thread::scope(|s| {
        s.spawn(|| l.set(1 << 62));
    });
    l.set(7);
    assert_eq!(l.get(), 7);
}

/// Four threads set the level under one mutex; under the same lock each
/// records the value it set. The level always reads the last recorded
/// value, and does at the end.
fn serialized_sets<T>(values: impl Fn(usize, usize) -> T + Sync)
where
    T: pvar::Magnitude + Copy + PartialEq + std::fmt::Debug + Send + 'static,
{
    const THREADS: usize = 4;
    const ROUNDS: usize = 20_000;
    let reg = Registry::new();
    let l = reg.level::<T>("lvl").register().unwrap();
    let last: Mutex<Option<T>> = Mutex::new(None);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (l, last, values) = (l.clone(), &last, &values);
            s.spawn(move || {
                for r in 0..ROUNDS {
                    let v = values(t, r);
                    let mut g = last.lock().unwrap();
                    if let Some(prev) = *g {
                        assert_eq!(l.get(), prev, "thread {t} round {r}: before set");
                    }
                    l.set(v);
                    *g = Some(v);
                    assert_eq!(l.get(), v, "thread {t} round {r}: after set");
                }
            });
        }
    });
    assert_eq!(Some(l.get()), *last.lock().unwrap());
}

#[test]
fn level_u64_sets_serialized_by_a_mutex_are_last_writer_wins() {
    serialized_sets::<u64>(|t, r| {
        if r % 2 == 0 {
            (1 << 60) + (t * 1_000_000 + r) as u64
        } else {
            (t * 10 + r % 7) as u64
        }
    });
}

#[test]
fn level_f64_sets_serialized_by_a_mutex_are_last_writer_wins() {
    serialized_sets::<f64>(|t, r| match r % 3 {
        0 => 1e17 + (t * 64) as f64,
        1 => t as f64 + 0.25,
        _ => (r as f64) * 0.1,
    });
}

/// Sets racing without any ordering leave one of the values set (from 0,
/// `set(100)` and `set(200)` at once: 100 or 200, never 300).
#[test]
fn level_racing_sets_leave_one_of_the_values() {
    const ROUNDS: usize = 20_000;
    let reg = Registry::new();
    let l = reg.level::<u64>("lvl").register().unwrap();
    let go = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut bad = None;
    std::thread::scope(|s| {
        for k in 0..2u64 {
            let (l, go, done, stop) = (l.clone(), &go, &done, &stop);
            s.spawn(move || {
                for r in 1..=ROUNDS {
                    while go.load(Ordering::Acquire) < r {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::yield_now();
                    }
                    l.set(100 * (k + 1));
                    done.fetch_add(1, Ordering::AcqRel);
                }
            });
        }
        for r in 1..=ROUNDS {
            l.set(0);
            go.store(r, Ordering::Release);
            while done.load(Ordering::Acquire) < 2 * r {
                std::thread::yield_now();
            }
            let got = l.get();
            if got != 100 && got != 200 {
                bad = Some((r, got));
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(bad, None, "(round, level) ended at neither 100 nor 200");
}

/// Two threads do balanced `inc`/`dec` pairs while two others set the level
/// under a mutex. Each pairing thread holds a net +1 or 0 at any moment,
/// and each set cancels what it saw of it, so:
/// - right after a set (under the lock) the level is within ±2 of it;
/// - once the pairing threads are done, it is within [last − 2, last];
/// - a set ordered after them is exact, and later `inc`/`dec` from several
///   threads add exactly on top.
#[test]
fn level_inc_dec_concurrent_with_serialized_sets() {
    const PAIRS: usize = 200_000;
    const SETS: u64 = 20_000;
    const BASE: u64 = 1_000_000;
    let reg = Registry::new();
    let l = reg.level::<u64>("lvl").register().unwrap();
    let last = Mutex::new(BASE);
    l.set(BASE);
    let pairing_done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (l, pairing_done) = (l.clone(), &pairing_done);
            s.spawn(move || {
                for _ in 0..PAIRS {
                    l.inc();
                    l.dec();
                }
                pairing_done.fetch_add(1, Ordering::Release);
            });
        }
        for t in 0..2u64 {
            let (l, last, pairing_done) = (l.clone(), &last, &pairing_done);
            s.spawn(move || {
                // At least SETS sets each, and on until the pairs are done.
                let mut n = 0;
                while n < SETS || pairing_done.load(Ordering::Acquire) < 2 {
                    let v = BASE + t * 1000 + n % 997;
                    let mut g = last.lock().unwrap();
                    l.set(v);
                    *g = v;
                    let got = l.get();
                    assert!(got.abs_diff(v) <= 2, "set {v} read {got}");
                    n += 1;
                }
            });
        }
    });
    let last = *last.lock().unwrap();
    let got = l.get();
    assert!(
        (last - 2..=last).contains(&got),
        "after the pairs: {got}, last set {last}"
    );
    l.set(BASE);
    assert_eq!(l.get(), BASE);
    std::thread::scope(|s| {
        for _ in 0..4 {
            let l = l.clone();
            s.spawn(move || {
                for _ in 0..10_000 {
                    l.inc();
                    l.inc();
                    l.dec();
                }
            });
        }
    });
    assert_eq!(l.get(), BASE + 4 * 10_000);
}
