//! `pvar::recorder`: `metrics::counter!` / `gauge!` / `histogram!` recorded
//! into pvar variables, read back as a tool (sessions and handles) and as a
//! component (handles from the builder, which returns the same variable).

#![cfg(feature = "metrics")]
// Values stay at zero with the `pvar_compile_out` cfg (see tests/compile_out.rs).
#![cfg(not(pvar_compile_out))]

use metrics::{Unit, counter, gauge, histogram, with_local_recorder};
use pvar::export::Snapshot;
use pvar::export::exposition::{self, Format};
use pvar::recorder::{DEFAULT_BUCKETS, DEFAULT_CATEGORY, MetricKind, PvarRecorder, series_name};
use pvar::{ErrorCode, PvarClass, Registry};

#[path = "support/openmetrics_parser.rs"]
mod openmetrics_parser;

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
fn gauges_are_f64_generics_that_keep_their_sign() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        let g = gauge!("queue_depth");
        g.set(3.5);
        g.increment(1.25);
        g.decrement(0.5);
        gauge!("queue_depth").increment(0.125);
    });
    let idx = index(&reg, "queue_depth", PvarClass::Generic);
    let info = reg.pvars().info(idx).unwrap();
    assert_eq!(info.datatype, pvar::Datatype::Double);
    let session = reg.session().unwrap();
    let h = session.handle(idx).unwrap().typed::<f64>().unwrap();
    assert_eq!(h.read().unwrap(), 4.375, "the current value");
    let component = reg
        .generic::<f64>("queue_depth")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(component.get(), 4.375);
    with_local_recorder(&rec, || gauge!("queue_depth").set(1.0));
    assert_eq!(h.read().unwrap(), 1.0, "set replaces the value");
    // Below zero, a gauge reads below zero (a LEVEL would read 0).
    with_local_recorder(&rec, || gauge!("queue_depth").decrement(6.0));
    assert_eq!(h.read().unwrap(), -5.0);
    with_local_recorder(&rec, || gauge!("queue_depth").increment(2.0));
    assert_eq!(h.read().unwrap(), -3.0);
    with_local_recorder(&rec, || gauge!("temperature").set(-40.25));
    let t = index(&reg, "temperature", PvarClass::Generic);
    let ht = session.handle(t).unwrap().typed::<f64>().unwrap();
    assert_eq!(ht.read().unwrap(), -40.25);
    // And so it is exported.
    let text = exposition::write(&Snapshot::take(&reg), Format::OpenMetrics);
    assert!(text.lines().any(|l| l == "queue_depth -3.0"), "{text}");
    assert!(text.lines().any(|l| l == "temperature -40.25"), "{text}");
}

/// The buckets of histogram series `name` (its `_bucket` variable).
fn buckets(reg: &Registry, name: &str) -> Vec<u64> {
    let snap = Snapshot::take(reg);
    let v = snap
        .variable(name)
        .unwrap_or_else(|| panic!("no variable {name}"));
    v.values
        .iter()
        .map(|n| match n {
            pvar::export::Number::Unsigned(u) => *u,
            other => panic!("not a count: {other:?}"),
        })
        .collect()
}

#[test]
fn histograms_keep_their_buckets() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || histogram!("latency").record(0.0));
    let b = index(&reg, "latency_bucket", PvarClass::Counter);
    let le = index(&reg, "latency_le", PvarClass::Generic);
    let sum = index(&reg, "latency_sum", PvarClass::Aggregate);
    let pvars = reg.pvars();
    assert_eq!(
        pvars.info(b).unwrap().count,
        pvar::ElementCount::Fixed(DEFAULT_BUCKETS.len() + 1)
    );
    assert_eq!(pvars.info(le).unwrap().datatype, pvar::Datatype::Double);
    assert_eq!(pvars.info(sum).unwrap().datatype, pvar::Datatype::Double);
    let snap = Snapshot::take(&reg);
    let bounds: Vec<f64> = snap
        .variable("latency_le")
        .unwrap()
        .values
        .iter()
        .map(|n| n.as_f64())
        .collect();
    let mut want = DEFAULT_BUCKETS.to_vec();
    want.push(f64::INFINITY);
    assert_eq!(bounds, want);
    let session = reg.session().unwrap();
    let hs = session.handle(sum).unwrap().typed::<f64>().unwrap();
    hs.start().unwrap();
    with_local_recorder(&rec, || {
        let h = histogram!("latency");
        h.record(0.005); // on a bound: that bucket (le)
        h.record(0.0051);
        h.record(2.5);
        h.record_many(0.25, 4);
        h.record(1e9); // above every bound: the last
        histogram!("latency").record(-0.5); // below every bound: the first
    });
    let got = buckets(&reg, "latency_bucket");
    //        0.005 0.01 .025 .05  0.1 0.25  0.5   1  2.5   5   10 +Inf
    assert_eq!(got, [3, 1, 0, 0, 0, 4, 0, 0, 1, 0, 0, 1]);
    assert_eq!(hs.read().unwrap(), 0.005 + 0.0051 + 2.5 + 1.0 + 1e9 - 0.5);
    assert_eq!(rec.stats().histograms, 1);
    assert_eq!(
        rec.stats().counters,
        0,
        "a histogram's buckets are not a counter series"
    );

    // Buckets of one's own, for all or for one metric.
    let rec = PvarRecorder::new(&reg)
        .with_category("own")
        .with_buckets(&[1.0, 2.0])
        .unwrap()
        .with_buckets_for("bytes", &[100.0])
        .unwrap();
    with_local_recorder(&rec, || {
        histogram!("short").record(1.5);
        histogram!("bytes").record(1000.0);
    });
    assert_eq!(buckets(&reg, "short_bucket"), [0, 1, 0]);
    assert_eq!(buckets(&reg, "bytes_bucket"), [0, 1]);
    for bad in [
        &[][..],
        &[2.0, 1.0],
        &[1.0, 1.0],
        &[f64::NAN],
        &[f64::INFINITY],
    ] {
        let e = PvarRecorder::new(&reg).with_buckets(bad).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Invalid, "{bad:?}");
    }
}

#[test]
fn histograms_are_exported_as_histograms() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        metrics::describe_histogram!("wait", Unit::Seconds, "time waited");
        let h = histogram!("wait", "queue" => "a");
        for v in [0.003, 0.2, 0.2, 7.0, 60.0] {
            h.record(v);
        }
    });
    let text = exposition::write(&Snapshot::take(&reg), Format::OpenMetrics);
    for line in [
        "# TYPE wait_seconds histogram",
        "# UNIT wait_seconds seconds",
        "# HELP wait_seconds time waited",
        r#"wait_seconds_bucket{queue="a",le="0.005"} 1"#,
        r#"wait_seconds_bucket{queue="a",le="0.25"} 3"#,
        r#"wait_seconds_bucket{queue="a",le="10.0"} 4"#,
        r#"wait_seconds_bucket{queue="a",le="+Inf"} 5"#,
        r#"wait_seconds_count{queue="a"} 5"#,
        r#"wait_seconds_sum{queue="a"} 67.403"#,
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
    assert!(
        !text.contains("wait_le") && !text.contains("wait_bucket_total"),
        "{text}"
    );
    if let Some(families) = openmetrics_parser::families(&text) {
        let f = families.iter().find(|f| f.name == "wait_seconds").unwrap();
        assert_eq!((f.kind.as_str(), f.unit.as_str()), ("histogram", "seconds"));
        assert_eq!(f.samples, 12 + 2);
    }
    let classic = exposition::write(&Snapshot::take(&reg), Format::Prometheus);
    assert!(
        classic.contains("# TYPE wait_seconds histogram\n"),
        "{classic}"
    );
    if let Some(families) = openmetrics_parser::classic_families(&classic) {
        let f = families.iter().find(|f| f.name == "wait_seconds").unwrap();
        assert_eq!(f.kind, "histogram");
    }
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
    index(&reg, r#"size_bucket{zone="eu"}"#, PvarClass::Counter);
    index(&reg, r#"size_le{zone="eu"}"#, PvarClass::Generic);
    index(&reg, r#"size_sum{zone="eu"}"#, PvarClass::Aggregate);
    index(&reg, r#"temp{room="a"}"#, PvarClass::Generic);
    assert_eq!(reg.pvars().len(), 3 + 3 + 1);
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
    assert_eq!(desc("depth", PvarClass::Generic), "queue depth");
    assert_eq!(
        desc("wait_bucket", PvarClass::Counter),
        "time waited [unit: seconds]"
    );
    assert_eq!(
        desc("wait_sum", PvarClass::Aggregate),
        "time waited (sum of the values) [unit: seconds]"
    );
    assert_eq!(
        desc("wait_le", PvarClass::Generic),
        "upper bound of each bucket of wait_bucket (the last +Inf)"
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
    // The unit names the exported family, as OpenMetrics asks.
    let text = exposition::write(&Snapshot::take(&reg), Format::OpenMetrics);
    for line in [
        "# TYPE sent_bytes counter",
        "# UNIT sent_bytes bytes",
        "# HELP sent_bytes bytes sent",
        "sent_bytes_total 1",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
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
    assert_eq!(members.len(), 5);
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
    assert_eq!(category_pvars(&reg, DEFAULT_CATEGORY).len(), 5);
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
    assert_eq!(reg.pvars().len(), 4);
    assert_eq!(rec.stats().counters, 1);

    // Another recorder over the same registry, with a describe the first
    // one did not have: it takes the existing variable as it is.
    let again = PvarRecorder::new(&reg);
    with_local_recorder(&again, || {
        metrics::describe_counter!("x", "now described");
        counter!("x").increment(10);
        histogram!("y").record(2.0);
    });
    assert_eq!(reg.pvars().len(), 4, "no new variable");
    assert_eq!(again.stats().failed_registrations, 0);
    let x = reg.counter("x").category("metrics").register().unwrap();
    assert_eq!(x.get(), 13);
    let idx = index(&reg, "x", PvarClass::Counter);
    assert_eq!(reg.pvars().info(idx).unwrap().description, "");
    let sum = reg.aggregate::<f64>("y_sum").category("metrics");
    let sum = sum.description("(sum of the values)").register().unwrap();
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
    // The histogram's buckets were registered before its sum was refused:
    // they exist, and stay at 0.
    let count = index(&reg, "lat_bucket", PvarClass::Counter);
    let session = reg.session().unwrap();
    let h = session.handle(count).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    with_local_recorder(&rec, || histogram!("lat").record(1.0));
    let mut each = vec![0u64; h.handle().count()];
    h.read_into(&mut each).unwrap();
    assert!(each.iter().all(|&n| n == 0), "{each:?}");
    assert_eq!(rec.stats().failed_registrations, 3);
}

#[test]
fn names_that_would_collide_once_exported_are_refused() {
    let (reg, rec) = setup();
    with_local_recorder(&rec, || {
        counter!("jobs").increment(1);
        counter!("jobs_total").increment(2); // both are jobs_total
        counter!("cache_hits").increment(1);
        counter!("cache-hits").increment(1); // both are cache_hits
        gauge!("jobs").set(1.0); // a gauge where a counter is
        histogram!("h").record(1.0);
        gauge!("h_count").set(1.0); // a histogram's sample
        counter!("x", "a-b" => "1", "a_b" => "2").increment(1);
        counter!("x", "__name__" => "y").increment(1);
        counter!("x", "le" => "1").increment(1);
        counter!("x", "a" => "1").increment(7); // fine
        counter!("jobs", "queue" => "q").increment(3); // fine: another label set
    });
    let failures = rec.failures();
    let refused: Vec<&str> = failures.iter().map(|f| f.series.as_str()).collect();
    assert_eq!(
        refused,
        [
            "jobs_total",
            "cache-hits",
            "jobs",
            "h_count",
            r#"x{a-b="1",a_b="2"}"#,
            r#"x{__name__="y"}"#,
            r#"x{le="1"}"#,
        ]
    );
    for f in &failures {
        assert_eq!(f.error.code(), ErrorCode::Invalid, "{f:?}");
    }
    let why = |i: usize| failures[i].error.reason().unwrap().to_string();
    assert!(why(0).contains("jobs_total"), "{}", why(0));
    assert!(why(4).contains("\"a-b\" and \"a_b\""), "{}", why(4));
    assert!(why(5).contains("reserved"), "{}", why(5));
    assert_eq!(rec.stats().failed_registrations, 7);
    // Nothing was registered for them, and the exposition has each series
    // once.
    assert!(reg.pvars().index("jobs_total", PvarClass::Counter).is_err());
    let text = exposition::write(&Snapshot::take(&reg), Format::OpenMetrics);
    assert_eq!(
        text.lines().filter(|l| *l == "jobs_total 1").count(),
        1,
        "{text}"
    );
    assert!(text.lines().any(|l| l == r#"x_total{a="1"} 7"#), "{text}");
    assert!(
        text.lines().any(|l| l == r#"jobs_total{queue="q"} 3"#),
        "{text}"
    );
    openmetrics_parser::families(&text);
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
        .generic::<f64>("g")
        .category("metrics")
        .register()
        .unwrap();
    assert_eq!(g.get(), 2.0);
    let sum = reg
        .aggregate::<f64>("h_sum")
        .category("metrics")
        .description("(sum of the values)")
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
    let hc = handle("h_bucket", PvarClass::Counter)
        .typed::<u64>()
        .unwrap();
    let hs = handle("h_sum", PvarClass::Aggregate)
        .typed::<f64>()
        .unwrap();
    let hg = handle("g", PvarClass::Generic).typed::<f64>().unwrap();
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
    // 0.5 is on the bound of the 7th bucket.
    let mut each = vec![0u64; hc.handle().count()];
    hc.read_into(&mut each).unwrap();
    assert_eq!(each[6], total, "{each:?}");
    assert_eq!(each.iter().sum::<u64>(), total);
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
