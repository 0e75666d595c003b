//! Tool-side costs (`cargo bench --bench tool`):
//!
//! - `read_one/<threads>`: `Tool::read` of element 0 of one started
//!   COUNTER handle when 1, 2, 8 or 32 threads are registered (each updated the
//!   counter, then parks until the case ends): the merge is O(threads);
//! - `read_all/<n>`: reading every one of 10, 1,000 and 10,000 started
//!   handles (one per counter) in one session; per iteration = all `n`
//!   (divide for per handle);
//! - `handle/alloc_free`: `Tool::handle_alloc` + `Tool::handle_free` of a
//!   COUNTER handle; `handle/alloc_free_watermark` the same for a HIGHWATERMARK
//!   (which also subscribes);
//! - `handle/readreset_counter`, `handle/readreset_watermark/{idle,busy}`:
//!   `Tool::readreset` of a started COUNTER handle, and of a started
//!   HIGHWATERMARK handle — a reset lowers the mark, so it runs the heavy
//!   side of the asymmetric fence (`membarrier`), whose cost depends on
//!   the process's other running threads: none (`idle`), or one thread
//!   updating the watermark on the other core (`busy`);
//! - `session/create_free`: `Registry::session` + drop (session free);
//! - `cvar_read/*`: a component reading a control variable on its hot
//!   path — through a registered handle, a `cvar!` static, and a string
//!   cvar (its length) — next to a relaxed `AtomicU64` load, the goal's
//!   anchor ("about a relaxed atomic load").
//!
//! Loops are timed by `common::timed` (wall time, or thread CPU time with
//! `PVAR_BENCH_CLOCK=cpu`).
//!
//! The baselines for reads are in the ratios `scripts/bench.sh` prints:
//! the goal is ≤ 5 ns per registered thread + ≤ 50 ns.

mod common;

use std::hint::black_box;

use common::{ReadSetup, quick, read_setup, timed};
use criterion::{BenchmarkId, Criterion};

const READ_THREADS: [usize; 4] = [1, 2, 8, 32];
const READ_ALL: [usize; 3] = [10, 1_000, 10_000];

fn read_one(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_one");
    quick(&mut group);
    for n in READ_THREADS {
        let ReadSetup {
            session,
            handle: h,
            parked,
        } = read_setup(n);
        let reg = &session.reg;
        assert_eq!(
            reg.pvars().thread_records(),
            n,
            "one record per parked thread"
        );
        let mut v = [0u64];
        reg.tool().read(session.id, h, 0, &mut v).unwrap();
        assert_eq!(v[0], n as u64);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| common::read_handle(&session, h, iters))
        });
        drop(parked);
    }
    group.finish();
}

fn read_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_all");
    quick(&mut group);
    for n in READ_ALL {
        let reg = pvar::Registry::new();
        let session = reg.session().unwrap();
        let (tool, s) = (session.tool(), session.id());
        let handles: Vec<_> = (0..n)
            .map(|k| {
                let c = reg.counter(&format!("c{k}")).register().unwrap();
                c.inc();
                tool.handle_alloc(s, c.index(), None).unwrap().0
            })
            .collect();
        session.start_all().unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    let mut sum = 0u64;
                    let mut v = [0u64];
                    for &h in &handles {
                        tool.read(s, h, 0, &mut v).unwrap();
                        sum = sum.wrapping_add(v[0]);
                    }
                    black_box(sum);
                })
            })
        });
    }
    group.finish();
}

fn alloc_free(c: &mut Criterion) {
    let mut group = c.benchmark_group("handle");
    quick(&mut group);
    let reg = pvar::Registry::new();
    let counter = reg.counter("sent").register().unwrap();
    let wm = reg.high_watermark::<u64>("depth").register().unwrap();
    counter.inc();
    let session = reg.session().unwrap();
    let (tool, s) = (session.tool(), session.id());
    group.bench_function("alloc_free", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                let (h, _) = tool
                    .handle_alloc(s, black_box(counter.index()), None)
                    .unwrap();
                tool.handle_free(s, h).unwrap();
            })
        })
    });
    group.bench_function("alloc_free_watermark", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                let (h, _) = tool.handle_alloc(s, black_box(wm.index()), None).unwrap();
                tool.handle_free(s, h).unwrap();
            })
        })
    });
    let h = tool.handle_alloc(s, counter.index(), None).unwrap().0;
    tool.start(s, h).unwrap();
    group.bench_function("readreset_counter", |b| {
        b.iter_custom(|iters| {
            let mut v = [0u64];
            timed(iters, || {
                tool.readreset(s, black_box(h), 0, &mut v).unwrap()
            })
        })
    });
    let h = tool.handle_alloc(s, wm.index(), None).unwrap().0;
    tool.start(s, h).unwrap();
    for busy in [false, true] {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let updater = busy.then(|| {
            let (wm, stop) = (wm.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    wm.update(i & 63);
                    i += 1;
                }
            })
        });
        let case = if busy { "busy" } else { "idle" };
        group.bench_function(BenchmarkId::new("readreset_watermark", case), |b| {
            b.iter_custom(|iters| {
                let mut v = [0u64];
                timed(iters, || {
                    tool.readreset(s, black_box(h), 0, &mut v).unwrap()
                })
            })
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = updater {
            t.join().unwrap();
        }
    }
    group.finish();

    let mut group = c.benchmark_group("session");
    quick(&mut group);
    group.bench_function("create_free", |b| {
        b.iter_custom(|iters| timed(iters, || drop(black_box(reg.session().unwrap()))))
    });
    group.finish();
}

pvar::cvar! {
    static EAGER_LIMIT: u64 = 3;
    name = "PVAR_BENCH_EAGER_LIMIT";
}

/// Times `read` (inlined: generic, not a `dyn` call), summing what it
/// returns so the loop cannot be dropped, and checks the sum, so a case
/// that read the wrong thing panics.
fn cvar_case<M: criterion::measurement::Measurement<Value = std::time::Duration>>(
    group: &mut criterion::BenchmarkGroup<'_, M>,
    name: &str,
    read: impl Fn() -> u64,
    each: u64,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut sum = 0u64;
            let d = timed(iters, || sum = sum.wrapping_add(read()));
            assert_eq!(sum, each.wrapping_mul(iters));
            d
        })
    });
}

fn cvar_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("cvar_read");
    quick(&mut group);
    let reg = pvar::Registry::new();
    let handle = reg.cvar::<u64>("limit").default(3).register().unwrap();
    let string = reg
        .cvar::<String>("protocol")
        .default("eager")
        .register()
        .unwrap();
    let atomic = std::sync::atomic::AtomicU64::new(3);
    cvar_case(
        &mut group,
        "atomic_load",
        || black_box(&atomic).load(std::sync::atomic::Ordering::Relaxed),
        3,
    );
    cvar_case(&mut group, "handle", || black_box(&handle).get(), 3);
    cvar_case(&mut group, "static", || black_box(&EAGER_LIMIT).get(), 3);
    cvar_case(
        &mut group,
        "string_len",
        || black_box(&string).get().len() as u64,
        5,
    );
    group.finish();
}

fn main() {
    let mut c = common::criterion();
    read_one(&mut c);
    read_all(&mut c);
    alloc_free(&mut c);
    cvar_read(&mut c);
    c.final_summary();
}
