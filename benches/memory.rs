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

// SAFETY: forwards to `System`, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
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

const VARS: usize = 1000;

fn main() {
    let mut rows: Vec<(&str, f64, String)> = Vec::new();

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
        assert_eq!(reg.thread_records(), threads);
        let per = reg.cell_bytes() as f64 / (VARS * threads) as f64;
        rows.push((
            "cell bytes per counter per thread",
            per,
            format!(
                "{VARS} counters, {threads} thread(s): cell_bytes {}",
                reg.cell_bytes()
            ),
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
            reg.cell_bytes() as f64,
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
            reg.cell_bytes() as f64 / VARS as f64,
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
        let mut ids = Vec::with_capacity(2 * VARS);
        let (bytes, _) = net(|| {
            for c in &counters {
                ids.push(session.alloc(c.index(), None).unwrap().0);
            }
        });
        rows.push((
            "heap bytes per COUNTER handle",
            bytes as f64 / VARS as f64,
            format!("{VARS} handles in one session"),
        ));
        let (bytes, _) = net(|| {
            for w in &wms {
                ids.push(session.alloc(w.index(), None).unwrap().0);
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
    println!("{:<50} {:>10}  note", "what", "bytes");
    let mut json = String::from("[");
    for (k, (what, bytes, note)) in rows.iter().enumerate() {
        println!("{what:<50} {bytes:>10.1}  {note}");
        if k > 0 {
            json.push(',');
        }
        json += &format!(
            "{{\"what\":\"{what}\",\"bytes\":{bytes:.1},\"note\":\"{}\"}}",
            note.replace('"', "'")
        );
    }
    json.push(']');
    common::side_output("memory.json", &json);
}
