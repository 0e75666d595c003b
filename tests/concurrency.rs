//! Concurrency with real threads: exact totals, exited threads' counts,
//! thread-record reuse, registration racing with updates and reads, and
//! monotonic counter reads. Synchronisation is by barriers, joins and
//! flags only (no sleeps).

// Values stay at zero with the `pvar_compile_out` cfg (see tests/compile_out.rs).
#![cfg(not(pvar_compile_out))]

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use pvar::{PvarClass, Registry};

/// Sets a progress counter to its maximum when dropped: a thread that ends,
/// even by panicking, no longer holds up the threads waiting for its
/// progress (the test then fails at its join instead of hanging).
struct ReleaseOnExit(Arc<AtomicU64>);

impl Drop for ReleaseOnExit {
    fn drop(&mut self) {
        self.0.store(u64::MAX, Ordering::Release);
    }
}

#[test]
fn eight_threads_times_a_million_increments_are_exact() {
    const THREADS: u64 = 8;
    const N: u64 = 1_000_000;
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let a = reg.aggregate::<u64>("a").register().unwrap();
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (c, a, barrier) = (c.clone(), a.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for _ in 0..N {
                    c.inc();
                }
                a.add(t + 1);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(c.get(), THREADS * N);
    assert_eq!(a.get(), THREADS * (THREADS + 1) / 2);
}

#[test]
fn local_counters_on_many_threads_are_exact() {
    const THREADS: usize = 4;
    const N: u64 = 250_000;
    let reg = Registry::new();
    let c = reg.counter("c").count(2).register().unwrap();
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (c, barrier) = (c.clone(), barrier.clone());
            std::thread::spawn(move || {
                let local = c.local(1);
                barrier.wait();
                for _ in 0..N {
                    local.inc();
                    c.inc();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        (c.get_at(0), c.get_at(1)),
        (THREADS as u64 * N, THREADS as u64 * N)
    );
}

#[test]
fn exited_threads_keep_their_counts_and_records_are_reused() {
    const ROUNDS: u64 = 100;
    const PER_ROUND: u64 = 4;
    const N: u64 = 1000;
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let l = reg.level::<u64>("l").register().unwrap();
    for round in 0..ROUNDS {
        let threads: Vec<_> = (0..PER_ROUND)
            .map(|_| {
                let (c, l) = (c.clone(), l.clone());
                std::thread::spawn(move || {
                    for _ in 0..N {
                        c.inc();
                    }
                    l.inc();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Every exited thread's count is still there, exactly.
        assert_eq!(c.get(), (round + 1) * PER_ROUND * N, "round {round}");
        assert_eq!(l.get(), (round + 1) * PER_ROUND, "round {round}");
    }
    // 400 threads came and went; their ids (and so their records) were
    // reused. Thread ids are process-wide, so other tests' threads running
    // at the same time can take some: the bound is loose, but far below 400.
    let records = reg.pvars().thread_records();
    assert!(
        records <= 64,
        "{records} records for 400 short-lived threads"
    );
    assert!(records >= 1);
}

thread_local! {
    static LATE: LateUpdate = const { LateUpdate(Cell::new(None)) };
}

/// Increments a counter from a thread-local destructor, possibly after the
/// engine's own exit destructor ran (then the update goes to the shared
/// orphan record), through the handle and through a `LocalCounter` made
/// there (which panicked on an exiting thread before it learnt to use
/// the orphan record).
struct LateUpdate(Cell<Option<pvar::Counter>>);

impl Drop for LateUpdate {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.add(1000);
            c.local(0).add(500);
        }
    }
}

#[test]
fn updates_from_thread_local_destructors_are_kept() {
    const THREADS: u64 = 16;
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || {
                // Registered before the engine's exit guard, so (destructors
                // run in reverse order) it usually runs after it.
                LATE.with(|l| l.0.set(Some(c.clone())));
                c.inc();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(c.get(), THREADS * 1501);
}

#[test]
fn registration_races_with_updates_and_reads() {
    const REGISTRARS: usize = 4;
    const PER_REGISTRAR: usize = 50;
    let reg = Registry::new();
    let hot = reg.counter("hot").register().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(REGISTRARS + 2));
    // Progress of the updater (increments) and of the reader (passes over
    // every index): halfway through, each registrar waits until both have
    // made some, so registration overlaps both on any schedule.
    let updated = Arc::new(AtomicU64::new(0));
    let passes = Arc::new(AtomicU64::new(0));

    let registrars: Vec<_> = (0..REGISTRARS)
        .map(|t| {
            let (reg, barrier) = (reg.clone(), barrier.clone());
            let (updated, passes) = (updated.clone(), passes.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                for j in 0..PER_REGISTRAR {
                    if j == PER_REGISTRAR / 2 {
                        while updated.load(Ordering::Acquire) < 1000
                            || passes.load(Ordering::Acquire) < 10
                        {
                            std::thread::yield_now();
                        }
                    }
                    let name = format!("t{t}_v{j}");
                    // Alternate classes: sharded, shared and watermark storage.
                    let index = match j % 3 {
                        0 => {
                            let c = reg.counter(&name).register().unwrap();
                            c.add(j as u64);
                            c.index()
                        }
                        1 => reg.state(&name).register().unwrap().index(),
                        _ => reg.high_watermark::<u64>(&name).register().unwrap().index(),
                    };
                    mine.push((name, index, j));
                }
                mine
            })
        })
        .collect();

    let updater = {
        let (hot, done, barrier) = (hot.clone(), done.clone(), barrier.clone());
        let updated = updated.clone();
        std::thread::spawn(move || {
            let _release = ReleaseOnExit(updated.clone());
            barrier.wait();
            let mut n = 0u64;
            while !done.load(Ordering::Acquire) {
                hot.inc();
                n += 1;
                updated.store(n, Ordering::Release);
            }
            n
        })
    };

    let reader = {
        let (reg, done, barrier) = (reg.clone(), done.clone(), barrier.clone());
        let passes = passes.clone();
        std::thread::spawn(move || {
            let _release = ReleaseOnExit(passes.clone());
            barrier.wait();
            let mut last = 0;
            while !done.load(Ordering::Acquire) {
                passes.fetch_add(1, Ordering::Release);
                let n = reg.pvars().len();
                assert!(n >= last, "num_pvars went from {last} to {n}");
                for i in 0..n {
                    let info = reg
                        .pvars()
                        .info(i)
                        .expect("every index below num_pvars exists");
                    assert!(!info.name.is_empty());
                }
                last = n;
            }
        })
    };

    let mut all = Vec::new();
    for r in registrars {
        all.extend(r.join().unwrap());
    }
    done.store(true, Ordering::Release);
    let increments = updater.join().unwrap();
    reader.join().unwrap();
    assert!(
        increments >= 1000,
        "{increments} updates during registration"
    );

    let n = 1 + REGISTRARS * PER_REGISTRAR;
    assert_eq!(reg.pvars().len(), n);
    let indices: HashSet<usize> = all.iter().map(|(_, i, _)| *i).collect();
    assert_eq!(indices.len(), n - 1, "no index handed out twice");
    assert!(
        indices.iter().all(|&i| (1..n).contains(&i)),
        "indices are 0..N-1"
    );
    for (name, index, j) in &all {
        let class = match j % 3 {
            0 => PvarClass::Counter,
            1 => PvarClass::State,
            _ => PvarClass::HighWatermark,
        };
        assert_eq!(reg.pvars().index(name, class), Ok(*index), "{name}");
        assert_eq!(&reg.pvars().info(*index).unwrap().name, name);
        if class == PvarClass::Counter {
            let c = reg.counter(name).register().unwrap();
            assert_eq!(c.get(), *j as u64, "{name}");
        }
    }
    assert_eq!(
        hot.get(),
        increments,
        "updates during registration are exact"
    );
}

#[test]
fn counter_reads_never_go_backwards_while_writers_run() {
    const WRITERS: usize = 3;
    const N: u64 = 300_000;
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let a = reg.aggregate::<u64>("a").register().unwrap();
    // Halfway, each writer waits until the reader has read this many times,
    // so that many reads overlap the writes on any schedule.
    const OVERLAPPING_READS: u64 = 100;
    let done = Arc::new(AtomicBool::new(false));
    let read_count = Arc::new(AtomicU64::new(0));
    let barrier = Arc::new(Barrier::new(WRITERS + 1));

    let reader = {
        let (c, a, done, barrier) = (c.clone(), a.clone(), done.clone(), barrier.clone());
        let read_count = read_count.clone();
        std::thread::spawn(move || {
            let _release = ReleaseOnExit(read_count.clone());
            barrier.wait();
            let (mut last_c, mut last_a, mut reads) = (0, 0, 0u64);
            loop {
                // Read the flag first: once it is set, all writes are in.
                let finished = done.load(Ordering::Acquire);
                let (now_c, now_a) = (c.get(), a.get());
                assert!(
                    now_c >= last_c,
                    "counter went back from {last_c} to {now_c}"
                );
                assert!(
                    now_a >= last_a,
                    "aggregate went back from {last_a} to {now_a}"
                );
                (last_c, last_a) = (now_c, now_a);
                reads += 1;
                read_count.store(reads, Ordering::Release);
                if finished {
                    return (last_c, last_a, reads);
                }
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (c, a, barrier) = (c.clone(), a.clone(), barrier.clone());
            let read_count = read_count.clone();
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..N {
                    if i == N / 2 {
                        while read_count.load(Ordering::Acquire) < OVERLAPPING_READS {
                            std::thread::yield_now();
                        }
                    }
                    c.inc();
                    a.add(i % 7);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Release);
    let (final_c, final_a, reads) = reader.join().unwrap();
    let per_writer_a: u64 = (0..N).map(|i| i % 7).sum();
    assert_eq!(
        final_c,
        WRITERS as u64 * N,
        "the last read sees every update"
    );
    assert_eq!(final_a, WRITERS as u64 * per_writer_a);
    assert!(reads > OVERLAPPING_READS, "{reads} reads");
}

#[test]
fn bound_instances_created_and_dropped_while_updating() {
    const THREADS: u64 = 4;
    const ROUNDS: u64 = 50;
    let reg = Registry::new();
    let b = reg
        .counter("per_obj")
        .bind(pvar::BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (b, barrier) = (b.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for r in 0..ROUNDS {
                    let obj = t * 1000 + r;
                    let inst = b.create_instance(obj, 2).unwrap();
                    assert_eq!(inst.get_at(0) + inst.get_at(1), 0, "fresh instance");
                    for _ in 0..100 {
                        inst.inc_at(1);
                    }
                    assert_eq!(inst.get_at(1), 100, "object {obj}");
                    b.drop_instance(obj).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(reg.pvars().instances(b.index()).unwrap(), Vec::<u64>::new());
}

/// HIGHWATERMARK handles under real threads, exercising the walk gate (an
/// update skips the subscriptions when its value passes no started mark):
/// a tool resets handle `h` round after round, lowering its mark from the
/// last round's spike to the noise level; after each reset the updaters
/// store a spike above everything before it, and the next reset must hand
/// it out. Meanwhile a second tool starts and stops its own handle (each
/// stop recomputes the thresholds) and the updaters store noise between
/// spikes. A threshold that outlived a lowering would let a spike skip its
/// walk and be lost (the level has gone back to noise by the next reset).
#[test]
fn watermark_resets_never_lose_a_spike_stored_after_them() {
    const ROUNDS: u64 = 300;
    const UPDATERS: usize = 2;
    let reg = Registry::new();
    let w = reg.high_watermark::<u64>("depth").register().unwrap();
    let tool = reg.tool();
    let s = tool.session_create().unwrap();
    let (h, _) = tool.handle_alloc(s, w.index(), None).unwrap();
    tool.start(s, h).unwrap();
    let round = Arc::new(AtomicU64::new(0));
    let acks: Arc<Vec<AtomicU64>> = Arc::new((0..UPDATERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    // Odd rounds spike far above even ones: an even round's spike passes
    // only a mark the reset lowered.
    let spike = |r: u64, u: usize| 1_000 + (r % 2) * 1_000_000 + r * UPDATERS as u64 + u as u64;
    let updaters: Vec<_> = (0..UPDATERS)
        .map(|u| {
            let (w, round, acks, done) = (w.clone(), round.clone(), acks.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                let mut noise = 0u64;
                while !done.load(Ordering::Acquire) {
                    let r = round.load(Ordering::Acquire);
                    if r != seen {
                        w.update(spike(r, u));
                        acks[u].store(r, Ordering::Release);
                        seen = r;
                    }
                    noise = (noise + 7) % 100;
                    w.update(noise);
                }
            })
        })
        .collect();
    let flipper = {
        let (reg, done) = (reg.clone(), done.clone());
        std::thread::spawn(move || {
            let tool = reg.tool();
            let s2 = tool.session_create().unwrap();
            let (h2, _) = tool.handle_alloc(s2, w.index(), None).unwrap();
            while !done.load(Ordering::Acquire) {
                tool.start(s2, h2).unwrap();
                tool.stop(s2, h2).unwrap();
            }
        })
    };
    let mut old = [0u64];
    for r in 1..=ROUNDS {
        tool.readreset(s, h, 0, &mut old).unwrap();
        if r > 1 {
            let want = spike(r - 1, UPDATERS - 1);
            assert!(
                old[0] >= want,
                "round {r}: the period before the reset holds {}, below spike {want} stored in it",
                old[0]
            );
        }
        round.store(r, Ordering::Release);
        for a in acks.iter() {
            while a.load(Ordering::Acquire) < r {
                std::hint::spin_loop();
            }
        }
    }
    done.store(true, Ordering::Release);
    for t in updaters {
        t.join().unwrap();
    }
    flipper.join().unwrap();
}
