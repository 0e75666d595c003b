//! A library instrumented with the `metrics` crate, recorded into pvar
//! variables by `pvar::recorder`, and an MPI_T tool's session reading them
//! from the recorder's category — without changing the library.
//!
//! ```text
//! cargo run --release --features metrics --example metrics_recorder
//! ```

use pvar::PvarClass;
use pvar::recorder::{DEFAULT_CATEGORY, PvarRecorder};

/// The instrumented library: it knows `metrics`, not pvar.
mod server {
    use metrics::{Unit, counter, describe_counter, describe_histogram, gauge, histogram};

    pub fn describe() {
        describe_counter!("requests", "requests handled");
        describe_counter!("response_bytes", Unit::Bytes, "bytes sent in responses");
        describe_histogram!("latency_seconds", Unit::Seconds, "time to handle a request");
    }

    /// Handles one request; the worker holds its handles (the fast path).
    pub fn worker(id: usize, requests: usize) {
        let inflight = gauge!("inflight");
        let latency = histogram!("latency_seconds");
        let bytes = counter!("response_bytes");
        for i in 0..requests {
            inflight.increment(1.0);
            let method = if i % 4 == 0 { "PUT" } else { "GET" };
            counter!("requests", "method" => method).increment(1);
            bytes.increment(64 + (i % 64) as u64);
            latency.record(0.001 * ((i + id) % 8) as f64);
            inflight.decrement(1.0);
        }
    }
}

fn main() {
    let reg = pvar::global();
    let recorder = PvarRecorder::new(reg);
    recorder
        .clone()
        .install()
        .expect("no other metrics recorder");
    server::describe();
    server::worker(0, 2); // first use: registers the series (PUT, then GET)

    // The tool: every variable of the recorder's category, by index.
    let cats = reg.categories();
    let category = cats.index(DEFAULT_CATEGORY).unwrap();
    let session = reg.session().unwrap();
    let mut members = vec![0i32; cats.info(category).unwrap().num_pvars];
    cats.pvars_into(category, &mut members).unwrap();
    let handles: Vec<_> = members
        .iter()
        .map(|&i| session.handle(i as usize).unwrap())
        .collect();
    session.start_all().unwrap();

    let workers: Vec<_> = (1..=4)
        .map(|id| std::thread::spawn(move || server::worker(id, 250_000)))
        .collect();
    for w in workers {
        w.join().unwrap();
    }

    println!(
        "{:<34} {:<10} {:>16}  description",
        "variable", "class", "since start"
    );
    for h in &handles {
        let info = reg.pvars().info(h.index()).unwrap();
        let values = h.read().unwrap().to_f64();
        let show = |v: f64| {
            if v.fract() == 0.0 {
                format!("{v}")
            } else {
                format!("{v:.6}")
            }
        };
        // A histogram's buckets: one element per bucket, shown as a list.
        let value = match values.as_slice() {
            [v] => show(*v),
            many => many.iter().map(|v| show(*v)).collect::<Vec<_>>().join(" "),
        };
        println!(
            "{:<34} {:<10} {:>16}  {}",
            info.name,
            info.class.short_name(),
            value,
            info.description
        );
    }
    let requests = reg
        .pvars()
        .index(r#"requests{method="GET"}"#, PvarClass::Counter)
        .unwrap();
    let get = reg
        .counter(r#"requests{method="GET"}"#)
        .category(DEFAULT_CATEGORY);
    let get = get.description("requests handled").register().unwrap();
    assert_eq!(get.index(), requests);
    assert_eq!(get.get(), 1 + 4 * 187_500, "exact across threads");
    println!("\nrecorder: {:?}", recorder.stats());
}
