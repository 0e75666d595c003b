//! `pvar bench --json`: every update row names a floor that is a baseline
//! row of the same report, its ratio to that floor is the two figures'
//! quotient, and the other libraries' rows and ratios are present (as
//! measured by this run). One short run per thread count (`--runs 1
//! --run-ms 1`): the figures are not what is checked, their wiring is.

use std::process::Command;

#[test]
fn every_row_has_its_floor_from_the_same_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_pvar"))
        .args([
            "bench",
            "--json",
            "--runs",
            "1",
            "--run-ms",
            "1",
            "--threads",
            "2",
        ])
        .output()
        .expect("run the pvar binary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let rows = r["rows"].as_array().expect("rows");
    let threads = r["threads"].as_array().expect("threads").len();
    assert_eq!(threads, 2, "1 and 2 threads");
    let row = |key: &str| rows.iter().find(|x| x["key"] == key);
    for key in [
        "local_counter",
        "level",
        "level_macro",
        "counter_macro",
        "aggregate_macro_u64",
        "prometheus",
        "metrics",
    ] {
        assert!(row(key).is_some(), "row {key} missing");
    }
    let mut floors_seen = 0;
    for x in rows {
        let key = x["key"].as_str().unwrap();
        let floor = x["floor"]
            .as_str()
            .expect("every row names a floor (or \"\")");
        if floor.is_empty() {
            assert_eq!(x["group"], "read", "only the tool-side read has no floor");
            assert!(x["vs_floor"].as_array().unwrap().is_empty());
            continue;
        }
        let f = row(floor).unwrap_or_else(|| panic!("{key}: floor {floor} is not a row"));
        assert_eq!(
            f["group"],
            if x["group"] == "timer" {
                "timer"
            } else {
                "baseline"
            },
            "{key}"
        );
        let (ns, fns, vs) = (
            x["ns"].as_array().unwrap(),
            f["ns"].as_array().unwrap(),
            x["vs_floor"].as_array().unwrap(),
        );
        assert_eq!(vs.len(), threads, "{key}");
        for k in 0..threads {
            let want = ns[k].as_f64().unwrap() / fns[k].as_f64().unwrap().max(1e-12);
            let got = vs[k].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{key}[{k}]: {got} vs {want}"
            );
        }
        floors_seen += usize::from(floor != key);
    }
    assert!(
        floors_seen >= 15,
        "update rows point at floors: {floors_seen}"
    );
    // The level rows are measured against an inc-and-dec floor, the
    // thread-bound handle and the macros against a fixed-address one.
    assert_eq!(row("level").unwrap()["floor"], "thread_local_inc_dec");
    assert_eq!(
        row("level_macro").unwrap()["floor"],
        "thread_local_clobber_inc_dec"
    );
    assert_eq!(
        row("local_counter").unwrap()["floor"],
        "thread_local_clobber"
    );
    for lib in ["prometheus_vs_counter_macro", "metrics_vs_counter_macro"] {
        let v = r[lib].as_array().unwrap_or_else(|| panic!("{lib}"));
        assert_eq!(v.len(), threads, "{lib}");
        assert!(v.iter().all(|x| x.as_f64().unwrap() > 0.0), "{lib}");
    }
}
