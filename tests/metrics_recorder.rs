//! `pvar::recorder`: `metrics::counter!` / `gauge!` / `histogram!` recorded
//! into pvar variables, read back as a tool (sessions and handles) and as a
//! component (handles from the builder, which returns the same variable).

#![cfg(feature = "metrics")]
// Values stay at zero with the `pvar_compile_out` cfg (see tests/compile_out.rs).
#![cfg(not(pvar_compile_out))]

use metrics::{Unit, counter, gauge, histogram, with_local_recorder};
use pvar::recorder::{DEFAULT_CATEGORY, MetricKind, PvarRecorder, series_name};
use pvar::{ErrorCode, PvarClass, Registry};

fn setup() -> (Registry, PvarRecorder) {
    let reg = Registry::new();
    let rec = PvarRecorder::new(&reg);
    (reg, rec)
}

fn index(reg: &Registry, name: &str, class: PvarClass) -> usize {
    reg.pvars()
        .index(name, class)
        .unwrap_or_else(|e| panic!("no {class:?} named {name:?}: {e}"))
}

/// The indices of the performance variables of category `name`.
fn category_pvars(reg: &Registry, name: &str) -> Vec<usize> {
    let cats = reg.categories();
    let c = cats.index(name).expect("category defined");
    let mut out = vec![-1i32; cats.info(c).unwrap().num_pvars];
    cats.pvars_into(c, &mut out).unwrap();
    out.into_iter().map(|i| i as usize).collect()
}

#[test]
fn counters_are_pvar_counters_seen_by_tools_and_components() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || counter!("requests").increment(0));
    let idx = index(&reg, "requests", PvarClass::Counter);
    let session = reg.session().unwrap();
    let h = session.handle(idx).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    with_local_recorder(&rec, || {
        counter!("requests").increment(1);
        let held = counter!("requests");
        held.increment(2);
        held.increment(3);
    });
    assert_eq!(h.read().unwrap(), 6, "a tool handle counts from its start");
    let component = reg
        .counter("requests")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(
        component.index(),
        idx,
        "the builder gives the same variable"
    );
    assert_eq!(component.get(), 6);
    component.add(4);
    assert_eq!(h.read().unwrap(), 10);
    let info = reg.pvars().info(idx).unwrap();
    assert_eq!(info.datatype, pvar::Datatype::UnsignedLongLong);
    assert_eq!(info.description, "");
}

#[test]
fn gauges_are_f64_levels() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        let g = gauge!("queue_depth");
        g.set(3.5);
        g.increment(1.25);
        g.decrement(0.5);
        gauge!("queue_depth").increment(0.125);
    });
    let idx = index(&reg, "queue_depth", PvarClass::Level);
    let info = reg.pvars().info(idx).unwrap();
    assert_eq!(info.datatype, pvar::Datatype::Double);
    let session = reg.session().unwrap();
    let h = session.handle(idx).unwrap().typed::<f64>().unwrap();
    assert_eq!(h.read().unwrap(), 4.375, "continuous: the current value");
    let component = reg
        .level::<f64>("queue_depth")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(component.get(), 4.375);
    with_local_recorder(&rec, || gauge!("queue_depth").set(1.0));
    assert_eq!(h.read().unwrap(), 1.0, "set cancels the earlier deltas");
    with_local_recorder(&rec, || gauge!("queue_depth").decrement(3.0));
    assert_eq!(h.read().unwrap(), 0.0, "a level below zero reads 0");
    with_local_recorder(&rec, || gauge!("queue_depth").increment(2.5));
    assert_eq!(h.read().unwrap(), 0.5, "the deltas are kept exactly");
}

#[test]
fn histograms_are_a_count_and_a_sum() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || histogram!("latency").record(0.0));
    let count = index(&reg, "latency_count", PvarClass::Counter);
    let sum = index(&reg, "latency_sum", PvarClass::Aggregate);
    assert_eq!(
        reg.pvars().info(sum).unwrap().datatype,
        pvar::Datatype::Double
    );
    let session = reg.session().unwrap();
    let hc = session.handle(count).unwrap().typed::<u64>().unwrap();
    let hs = session.handle(sum).unwrap().typed::<f64>().unwrap();
    hc.start().unwrap();
    hs.start().unwrap();
    with_local_recorder(&rec, || {
        let h = histogram!("latency");
        h.record(1.0);
        h.record(2.5);
        h.record_many(0.25, 4);
        histogram!("latency").record(-0.5);
    });
    assert_eq!(hc.read().unwrap(), 7);
    assert_eq!(hs.read().unwrap(), 4.0);
    let c = reg
        .counter("latency_count")
        .category("metrics")
        .description("(histogram: number of values recorded)")
        .register()
        .unwrap();
    assert_eq!(c.get(), 8, "the first record (0.0) counts too");
    assert_eq!(rec.stats().histograms, 1);
    assert_eq!(
        rec.stats().counters,
        0,
        "a histogram's count is not a counter series"
    );
}

#[test]
fn labels_give_one_variable_per_series_in_series_notation() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        counter!("req", "path" => "/a\"b\\c\nd", "method" => "GET").increment(1);
        counter!("req", "method" => "GET", "path" => "/a\"b\\c\nd").increment(2);
        counter!("req", "method" => "PUT").increment(5);
        counter!("req").increment(7);
        histogram!("size", "zone" => "eu").record(3.0);
        gauge!("temp", "room" => "a").set(20.0);
    });
    let escaped = r#"req{method="GET",path="/a\"b\\c\nd"}"#;
    assert_eq!(
        series_name("req", [("path", "/a\"b\\c\nd"), ("method", "GET")]),
        escaped
    );
    let get = |name: &str| {
        reg.counter(name)
            .category("metrics")
            .register()
            .unwrap()
            .get()
    };
    assert_eq!(get(escaped), 3, "label order does not make another series");
    assert_eq!(get(r#"req{method="PUT"}"#), 5);
    assert_eq!(get("req"), 7, "no labels: the metric's own name");
    index(&reg, r#"size_count{zone="eu"}"#, PvarClass::Counter);
    index(&reg, r#"size_sum{zone="eu"}"#, PvarClass::Aggregate);
    index(&reg, r#"temp{room="a"}"#, PvarClass::Level);
    assert_eq!(reg.pvars().len(), 3 + 2 + 1);
    let stats = rec.stats();
    assert_eq!((stats.counters, stats.histograms, stats.gauges), (3, 1, 1));
}

#[test]
fn describe_applies_to_series_registered_after_it() {
    let (reg, rec) = setup();
    let desc = |name: &str, class| {
        let i = index(&reg, name, class);
        reg.pvars().info(i).unwrap().description.clone()
    };
    with_local_recorder(&rec, || {
        metrics::describe_counter!("sent", Unit::Bytes, "bytes sent");
        metrics::describe_gauge!("depth", "queue depth");
        metrics::describe_histogram!("wait", Unit::Seconds, "time waited");
        counter!("sent").increment(1);
        gauge!("depth").set(1.0);
        histogram!("wait").record(1.0);

        counter!("late").increment(1);
        metrics::describe_counter!("late", "described too late");
        counter!("late").increment(1);
        counter!("late", "k" => "v").increment(1);
    });
    assert_eq!(desc("sent", PvarClass::Counter), "bytes sent [unit: bytes]");
    assert_eq!(desc("depth", PvarClass::Level), "queue depth");
    assert_eq!(
        desc("wait_count", PvarClass::Counter),
        "time waited (histogram: number of values recorded)"
    );
    assert_eq!(
        desc("wait_sum", PvarClass::Aggregate),
        "time waited [unit: seconds] (histogram: sum of values recorded)"
    );
    assert_eq!(
        desc("late", PvarClass::Counter),
        "",
        "fixed at registration"
    );
    assert_eq!(
        desc(r#"late{k="v"}"#, PvarClass::Counter),
        "described too late",
        "a series registered after the describe has it"
    );
    assert_eq!(rec.stats().failed_registrations, 0);
}

#[test]
fn every_variable_is_in_the_recorder_category() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        counter!("c").increment(1);
        gauge!("g").set(1.0);
        histogram!("h").record(1.0);
    });
    let mut members = category_pvars(&reg, DEFAULT_CATEGORY);
    members.sort_unstable();
    assert_eq!(members, (0..reg.pvars().len()).collect::<Vec<_>>());
    assert_eq!(members.len(), 4);
    assert!(
        reg.categories().undefined().is_empty(),
        "the category is defined"
    );

    let custom = PvarRecorder::new(&reg).with_category("app_metrics");
    assert_eq!(custom.category(), "app_metrics");
    with_local_recorder(&custom, || counter!("other").increment(1));
    let other = index(&reg, "other", PvarClass::Counter);
    assert_eq!(category_pvars(&reg, "app_metrics"), vec![other]);
    assert_eq!(
        reg.pvars().info(other).unwrap().category.as_deref(),
        Some("app_metrics")
    );
    assert_eq!(category_pvars(&reg, DEFAULT_CATEGORY).len(), 4);
}

#[test]
fn registration_is_idempotent() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        for _ in 0..3 {
            counter!("x").increment(1);
            histogram!("y").record(1.0);
        }
    });
    assert_eq!(reg.pvars().len(), 3);
    assert_eq!(rec.stats().counters, 1);

    // Another recorder over the same registry, with a describe the first
    // one did not have: it takes the existing variable as it is.
    let again = PvarRecorder::new(&reg);
    with_local_recorder(&again, || {
        metrics::describe_counter!("x", "now described");
        counter!("x").increment(10);
        histogram!("y").record(2.0);
    });
    assert_eq!(reg.pvars().len(), 3, "no new variable");
    assert_eq!(again.stats().failed_registrations, 0);
    let x = reg.counter("x").category("metrics").register().unwrap();
    assert_eq!(x.get(), 13);
    let idx = index(&reg, "x", PvarClass::Counter);
    assert_eq!(reg.pvars().info(idx).unwrap().description, "");
    let sum = reg.aggregate::<f64>("y_sum").category("metrics");
    let sum = sum
        .description("(histogram: sum of values recorded)")
        .register()
        .unwrap();
    assert_eq!(sum.get(), 5.0);
}

#[test]
fn absolute_raises_to_the_largest_value_given() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        let c = counter!("mirror");
        c.absolute(10);
        c.absolute(5);
        assert_eq!(
            reg.counter("mirror")
                .category("metrics")
                .register()
                .unwrap()
                .get(),
            10
        );
        c.absolute(15);
        counter!("mirror").absolute(12);
        assert_eq!(
            reg.counter("mirror")
                .category("metrics")
                .register()
                .unwrap()
                .get(),
            15
        );
        // Mixed with increments: the increments plus the largest absolute.
        c.increment(2);
        c.absolute(16);
    });
    let mirror = reg
        .counter("mirror")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(mirror.get(), 2 + 16);

    // Racing absolutes, in opposite orders: exactly the largest value.
    let c = with_local_recorder(&rec, || counter!("raced"));
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let c = c.clone();
            s.spawn(move || {
                for i in 0..=10_000u64 {
                    c.absolute(if t % 2 == 0 { i } else { 10_000 - i });
                }
            });
        }
    });
    let raced = reg.counter("raced").category("metrics").register().unwrap();
    assert_eq!(raced.get(), 10_000);
}

#[test]
fn a_refused_series_is_a_counted_noop() {
    let (reg, rec) = setup();
    let theirs = reg.counter("taken").category("comm").register().unwrap();
    reg.aggregate::<f64>("lat_sum").register().unwrap();
    with_local_recorder(&rec, || {
        for _ in 0..3 {
            counter!("taken").increment(5);
        }
        histogram!("lat").record(1.0);
        gauge!("bad\0name").set(1.0);
        counter!("fine").increment(1);
    });
    assert_eq!(theirs.get(), 0, "the component's variable is untouched");
    let stats = rec.stats();
    assert_eq!(stats.failed_registrations, 3, "once per series");
    assert_eq!((stats.counters, stats.gauges, stats.histograms), (1, 0, 0));
    let failures = rec.failures();
    let what: Vec<_> = failures
        .iter()
        .map(|f| (f.kind, f.series.as_str()))
        .collect();
    assert_eq!(
        what,
        [
            (MetricKind::Counter, "taken"),
            (MetricKind::Histogram, "lat"),
            (MetricKind::Gauge, "bad\0name"),
        ]
    );
    assert!(
        failures
            .iter()
            .all(|f| f.error.code() == ErrorCode::Invalid)
    );
    assert!(failures[0].error.reason().unwrap().contains("category"));
    // The histogram's count was registered before its sum was refused:
    // it exists, and stays at 0.
    let count = index(&reg, "lat_count", PvarClass::Counter);
    let session = reg.session().unwrap();
    let h = session.handle(count).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    with_local_recorder(&rec, || histogram!("lat").record(1.0));
    assert_eq!(h.read().unwrap(), 0);
    assert_eq!(rec.stats().failed_registrations, 3);
}

#[test]
fn non_finite_values_are_dropped_and_counted() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        let g = gauge!("g");
        g.set(2.0);
        g.increment(f64::NAN);
        g.decrement(f64::INFINITY);
        g.set(f64::NEG_INFINITY);
        let h = histogram!("h");
        h.record(1.0);
        h.record(f64::NAN);
        h.record_many(f64::INFINITY, 3);
    });
    assert_eq!(rec.stats().dropped_values, 3 + 1 + 3);
    let g = reg
        .level::<f64>("g")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(g.get(), 2.0);
    let sum = reg
        .aggregate::<f64>("h_sum")
        .category("metrics")
        .description("(histogram: sum of values recorded)")
        .register()
        .unwrap();
    assert_eq!(sum.get(), 1.0);
}

#[test]
fn totals_are_exact_under_threads() {
    const THREADS: u64 = 4;
    const N: u64 = 100_000;
    let (reg, rec) = setup();
    // Register, then start tool handles before any thread records.
    with_local_recorder(&rec, || {
        counter!("x").increment(0);
        counter!("held").increment(0);
        histogram!("h").record_many(0.0, 0);
        gauge!("g").increment(0.0);
    });
    let session = reg.session().unwrap();
    let handle = |name: &str, class| session.handle(index(&reg, name, class)).unwrap();
    let hx = handle("x", PvarClass::Counter).typed::<u64>().unwrap();
    let hc = handle("h_count", PvarClass::Counter)
        .typed::<u64>()
        .unwrap();
    let hs = handle("h_sum", PvarClass::Aggregate)
        .typed::<f64>()
        .unwrap();
    let hg = handle("g", PvarClass::Level).typed::<f64>().unwrap();
    for h in [&hx, &hc] {
        h.start().unwrap();
    }
    hs.start().unwrap();
    let held = with_local_recorder(&rec, || counter!("held"));
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            let (rec, held) = (&rec, held.clone());
            s.spawn(move || {
                with_local_recorder(rec, || {
                    for _ in 0..N {
                        counter!("x").increment(1);
                        histogram!("h").record(0.5);
                        gauge!("g").increment(0.25);
                        held.increment(1);
                    }
                })
            });
        }
    });
    let total = THREADS * N;
    assert_eq!(hx.read().unwrap(), total);
    assert_eq!(hc.read().unwrap(), total);
    assert_eq!(hs.read().unwrap(), 0.5 * total as f64);
    assert_eq!(hg.read().unwrap(), 0.25 * total as f64);
    let held = reg.counter("held").category("metrics").register().unwrap();
    assert_eq!(held.get(), total);
    assert_eq!(rec.stats().counters, 2);
}

#[test]
fn install_makes_it_the_global_recorder() {
    let rec = PvarRecorder::new(pvar::global());
    rec.clone()
        .install()
        .expect("the only install in this test binary");
    // A thread without a local recorder records through the global one.
    std::thread::spawn(|| counter!("recorder_test_global_total").increment(3))
        .join()
        .unwrap();
    let c = pvar::global()
        .counter("recorder_test_global_total")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(c.get(), 3);
    assert!(rec.registry().ptr_eq(pvar::global()));
    let refused = PvarRecorder::new(pvar::global()).install().unwrap_err();
    assert_eq!(refused.into_inner().category(), DEFAULT_CATEGORY);
}
