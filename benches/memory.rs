//! Memory: bytes per variable per thread, per thread, per handle, per
//! session and per registered variable (`cargo bench --bench memory`).
//!
//! Cell memory comes from [`pvar::Registry::cell_bytes`] and
//! [`pvar::Registry::thread_records`]; everything else from a counting
//! global allocator (net bytes live after the operation, so amortized over
//! many operations, including the growth of tables). Prints a table and
//! writes `$PVAR_BENCH_OUT/memory.json` when that is set.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts live heap bytes.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// Counts allocation calls (alloc, alloc_zeroed, realloc).
static CALLS: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to `System`, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Net live bytes allocated by `f` (run on this thread; nothing else
/// allocates meanwhile).
fn net<R>(f: impl FnOnce() -> R) -> (isize, R) {
    let before = live();
    let r = f();
    (live() - before, r)
}

/// Allocation calls made by `f` (on this thread; nothing else allocates
/// meanwhile).
fn calls<R>(f: impl FnOnce() -> R) -> (isize, R) {
    let before = CALLS.load(Ordering::Relaxed);
    let r = f();
    (CALLS.load(Ordering::Relaxed) - before, r)
}

const VARS: usize = 1000;

/// Allocation calls on the hot paths after a thread's first touch, and on
/// the tool-side paths on existing handles: all must be 0.
fn hot_path_allocations(rows: &mut Vec<(&'static str, f64, String)>) {
    let reg = pvar::Registry::new();
    let c = reg.counter("c").readonly(false).register().unwrap();
    let a = reg
        .aggregate::<f64>("a")
        .readonly(false)
        .register()
        .unwrap();
    let l = reg.level::<u64>("l").register().unwrap();
    let t = reg.timer("t").readonly(false).register().unwrap();
    let w = reg
        .high_watermark::<u64>("w")
        .readonly(false)
        .register()
        .unwrap();
    let session = reg.session().unwrap();
    let (tool, s) = (session.tool(), session.id());
    let hs: Vec<_> = [c.index(), a.index(), l.index(), t.index(), w.index()]
        .iter()
        .map(|&i| tool.handle_alloc(s, i, None).unwrap().0)
        .collect();
    // First touch (allowed to allocate).
    c.inc();
    a.add(1.0);
    l.inc();
    t.start();
    t.stop();
    w.update(1);
    session.start_all().unwrap();
    let (n, _) = calls(|| {
        for i in 0..100_000u64 {
            c.inc();
            a.add(0.5);
            l.inc();
            l.dec();
            t.start();
            t.stop();
            drop(t.scoped());
            w.update(i & 63);
        }
    });
    rows.push((
        "allocation calls in 100k updates of each class",
        n as f64,
        "after first touch; must be 0".into(),
    ));
    let mut out = [0u64; 1];
    let (n, _) = calls(|| {
        for _ in 0..10_000 {
            for &h in &hs {
                // Errors (e.g. no reset of a read-only LEVEL) must not
                // allocate either.
                tool.read(s, h, 0, &mut out).unwrap();
                let _ = tool.reset(s, h);
                let _ = tool.stop(s, h);
                let _ = tool.start(s, h);
            }
            let _ = session.stop_all();
            let _ = session.start_all();
            let _ = session.reset_all();
        }
    });
    rows.push((
        "allocation calls in 10k read/reset/stop/start rounds",
        n as f64,
        "5 handles, plus *_all; must be 0".into(),
    ));
}

fn main() {
    let mut rows: Vec<(&str, f64, String)> = Vec::new();
    hot_path_allocations(&mut rows);

    // Cells: VARS counters touched by T threads at once.
    for threads in [1usize, 2, 4] {
        let reg = pvar::Registry::new();
        let counters: Vec<_> = (0..VARS)
            .map(|k| reg.counter(&format!("c{k}")).register().unwrap())
            .collect();
        let barrier = &std::sync::Barrier::new(threads);
        let counters = &counters;
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(move || {
                    counters.iter().for_each(|c| c.inc());
                    barrier.wait(); // all alive together: one record each
                });
            }
        });
        let per = reg.pvars().cell_bytes() as f64 / (VARS * threads) as f64;
        rows.push((
            "cell bytes per counter per thread",
            per,
            format!(
                "{VARS} counters, {threads} thread(s): cell_bytes {}, thread_records {}",
                reg.pvars().cell_bytes(),
                reg.pvars().thread_records()
            ),
        ));
    }

    // 960 counters fill chunks 0..=3 exactly: the per-cell cost.
    {
        let reg = pvar::Registry::new();
        let counters: Vec<_> = (0..960)
            .map(|k| reg.counter(&format!("c{k}")).register().unwrap())
            .collect();
        std::thread::scope(|s| {
            s.spawn(|| counters.iter().for_each(|c| c.inc()));
        });
        rows.push((
            "cell bytes per counter per thread, chunks full",
            reg.pvars().cell_bytes() as f64 / 960.0,
            "960 counters (chunks of 64, 128, 256, 512 cells), 1 thread".into(),
        ));
    }

    // One variable, one thread: the first chunk (minimum per thread).
    {
        let reg = pvar::Registry::new();
        let c = reg.counter("one").register().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| c.inc());
        });
        rows.push((
            "cell bytes per thread, 1 variable (first chunk)",
            reg.pvars().cell_bytes() as f64,
            "minimum a thread costs a registry".into(),
        ));
    }

    // TIMER: two cells (sum and start tick) per thread.
    {
        let reg = pvar::Registry::new();
        let timers: Vec<_> = (0..VARS)
            .map(|k| reg.timer(&format!("t{k}")).register().unwrap())
            .collect();
        std::thread::scope(|s| {
            s.spawn(|| {
                timers.iter().for_each(|t| {
                    t.start();
                    t.stop()
                })
            });
        });
        rows.push((
            "cell bytes per timer per thread",
            reg.pvars().cell_bytes() as f64 / VARS as f64,
            format!("{VARS} timers, 1 thread"),
        ));
    }

    // A thread's first touch: all heap it costs (record, chunk, ids).
    {
        let reg = pvar::Registry::new();
        let c = reg.counter("first").register().unwrap();
        let (bytes, _) = std::thread::scope(|s| s.spawn(|| net(|| c.inc())).join().unwrap());
        rows.push((
            "heap bytes of a thread's first update",
            bytes as f64,
            "record + first chunk + thread id (counting allocator)".into(),
        ));
    }

    // Registration, handles and sessions (counting allocator).
    {
        let reg = pvar::Registry::new();
        let (bytes, counters) = net(|| {
            (0..VARS)
                .map(|k| reg.counter(&format!("v{k:05}")).register().unwrap())
                .collect::<Vec<_>>()
        });
        let handle_vec = VARS * std::mem::size_of::<pvar::Counter>();
        rows.push((
            "heap bytes per registered counter",
            (bytes as f64 - handle_vec as f64) / VARS as f64,
            format!("{VARS} counters (metadata + storage), name of 6 chars"),
        ));
        let wms: Vec<_> = (0..VARS)
            .map(|k| {
                reg.high_watermark::<u64>(&format!("w{k:05}"))
                    .register()
                    .unwrap()
            })
            .collect();
        let session = reg.session().unwrap();
        let (tool, s) = (session.tool(), session.id());
        let mut ids = Vec::with_capacity(2 * VARS);
        let (bytes, _) = net(|| {
            for c in &counters {
                ids.push(tool.handle_alloc(s, c.index(), None).unwrap().0);
            }
        });
        rows.push((
            "heap bytes per COUNTER handle",
            bytes as f64 / VARS as f64,
            format!("{VARS} handles in one session"),
        ));
        let (bytes, _) = net(|| {
            for w in &wms {
                ids.push(tool.handle_alloc(s, w.index(), None).unwrap().0);
            }
        });
        rows.push((
            "heap bytes per HIGHWATERMARK handle",
            bytes as f64 / VARS as f64,
            format!("{VARS} handles (with their subscriptions)"),
        ));
        let (bytes, start_bytes) = net(|| net(|| session.start_all().unwrap()).0);
        assert_eq!(bytes, start_bytes);
        rows.push((
            "heap bytes of start_all on 2,000 handles",
            start_bytes as f64,
            "must be 0: start allocates nothing".into(),
        ));
        let (bytes, sessions) =
            net(|| (0..100).map(|_| reg.session().unwrap()).collect::<Vec<_>>());
        let vec_bytes = 100 * std::mem::size_of::<pvar::Session>();
        rows.push((
            "heap bytes per session",
            (bytes as f64 - vec_bytes as f64) / 100.0,
            "100 sessions".into(),
        ));
        drop(sessions);
    }

    println!("\nmemory");
    println!("{:<55} {:>10}  note", "what", "value");
    let mut json = String::from("[");
    for (k, (what, bytes, note)) in rows.iter().enumerate() {
        println!("{what:<55} {bytes:>10.1}  {note}");
        if k > 0 {
            json.push(',');
        }
        json += &format!(
            "{{\"what\":\"{what}\",\"value\":{bytes:.1},\"note\":\"{}\"}}",
            note.replace('"', "'")
        );
    }
    json.push(']');
    common::side_output("memory.json", &json);
}
