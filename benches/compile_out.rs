//! What instrumentation costs when compiled out.
//!
//! Run it with the cfg, and without for comparison:
//!
//! ```text
//! RUSTFLAGS="--cfg pvar_compile_out" cargo bench --bench compile_out   # group compile_out/compiled_out
//! cargo bench --bench compile_out                                      # group compile_out/enabled
//! ```
//!
//! Cases, one per iteration, every one passing the handle through
//! `black_box` so the loops have the same shape:
//!
//! - `empty`: the loop with only `black_box(&counter)`;
//! - `counter_inc`: `black_box(&counter).inc()`;
//! - `timer_pair`: `black_box(&timer).start()` + `stop()`;
//! - `watermark`: `black_box(&wm).update(i)`;
//! - `empty_again`: `empty` once more, last (the spread is the noise).
//!
//! With `pvar_compile_out` every update is an empty inline function, so each
//! case should be indistinguishable from `empty` (ratio ≈ 1.0).

mod common;

use std::hint::black_box;

use common::{quick, timed, timed_i};
use criterion::Criterion;

const MODE: &str = if cfg!(pvar_compile_out) {
    "compiled_out"
} else {
    "enabled"
};

fn bench(c: &mut Criterion) {
    let reg = pvar::Registry::new();
    let counter = reg.counter("sent").register().unwrap();
    let timer = reg.timer("section").register().unwrap();
    let wm = reg.high_watermark::<u64>("depth").register().unwrap();
    counter.inc();
    timer.start();
    timer.stop();

    let mut group = c.benchmark_group(format!("compile_out/{MODE}"));
    quick(&mut group);
    group.bench_function("empty", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                black_box(&counter);
            })
        })
    });
    group.bench_function("counter_inc", |b| {
        b.iter_custom(|iters| timed(iters, || black_box(&counter).inc()))
    });
    group.bench_function("timer_pair", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                let t = black_box(&timer);
                t.start();
                t.stop();
            })
        })
    });
    group.bench_function("watermark", |b| {
        b.iter_custom(|iters| timed_i(iters, |i| black_box(&wm).update(i)))
    });
    // The empty loop again, last: the spread between the two is the noise.
    group.bench_function("empty_again", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                black_box(&counter);
            })
        })
    });
    group.finish();
    if cfg!(pvar_compile_out) {
        assert_eq!(counter.get(), 0, "compiled out: no update lands");
    }
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
}
