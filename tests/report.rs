//! The cross-rank report (`pvar::report`) over "ranks" that are separate
//! registries: payloads encoded and decoded, the figures checked exactly,
//! the JSON parsed, the text read, hostile payloads refused.

use std::time::Duration;

use pvar::export::Number;
use pvar::report::{
    Collector, Instance, JobReport, RankInput, ReportError, ReportOptions, decode_concatenated,
    decode_payload, encode_payload,
};
use pvar::{BindKind, Clock, Datatype, PvarClass, Registry};
use serde_json::Value as Json;

const RANKS: usize = 3;

/// Per rank: msgs 10/30/20, bytes 1,000,000/2,500,000/500,000, wait
/// 0.5/0.25/0.75 s, queue (LEVEL) 5/0/7, peak (HIGH) marks 100/200/300 at
/// level 1, lowest (LOW) marks 10/20/30 at level 1000, mode (STATE) r,
/// util (PERCENTAGE) 0.25/0.5/0.75, never (COUNTER) 0, msgs_to_peer[3]
/// (rank r sends 10(r+1) to r+1), ops[2] (element 0: r+1, element 1: 0),
/// comm_sends bound to: the world (object 100+r, "MPI_COMM_WORLD", value
/// r+1), ranks 0-1's communicator (object 200+r, "comm[0-1]", value
/// 5(r+1)), object 7 unlabelled on ranks 0 and 1 (value 3), object 300
/// unlabelled on rank 2 (value 4).
fn rank_input(r: usize) -> RankInput {
    let (clock, _time) = Clock::mock();
    let reg = Registry::with_clock(clock);
    reg.categories().define("app", "the application").unwrap();
    let msgs = reg.counter("msgs").category("app").register().unwrap();
    let bytes = reg.aggregate::<u64>("bytes").register().unwrap();
    let wait = reg.timer("wait").register().unwrap();
    let queue = reg.level::<u64>("queue").register().unwrap();
    let peak = reg.high_watermark::<u64>("peak").register().unwrap();
    let lowest = reg.low_watermark::<u64>("lowest").register().unwrap();
    let mode = reg.state("mode").register().unwrap();
    let util = reg.percentage("util").register().unwrap();
    let _never = reg.counter("never").register().unwrap();
    let to_peer = reg.counter("msgs_to_peer").count(RANKS).register().unwrap();
    let ops = reg.counter("ops").count(2).register().unwrap();
    let comm_sends = reg
        .counter("comm_sends")
        .bind(BindKind::Comm)
        .register_bound()
        .unwrap();
    lowest.init(1000);
    let mut collector = Collector::new(&reg);

    msgs.add([10, 30, 20][r]);
    bytes.add([1_000_000, 2_500_000, 500_000][r]);
    wait.add_elapsed(Duration::from_millis([500, 250, 750][r]));
    queue.set([5, 0, 7][r]);
    peak.update(100 * (r as u64 + 1));
    peak.update(1);
    lowest.update(10 * (r as u64 + 1));
    lowest.update(1000);
    mode.set(r as i32);
    util.set([0.25, 0.5, 0.75][r]);
    to_peer.add_at((r + 1) % RANKS, 10 * (r as u64 + 1));
    ops.add_at(0, r as u64 + 1);
    let mut labels = vec![(100 + r as u64, "MPI_COMM_WORLD".to_string())];
    comm_sends
        .create_instance(100 + r as u64, 1)
        .unwrap()
        .add(r as u64 + 1);
    if r < 2 {
        comm_sends
            .create_instance(200 + r as u64, 1)
            .unwrap()
            .add(5 * (r as u64 + 1));
        labels.push((200 + r as u64, "comm[0-1]".to_string()));
        comm_sends.create_instance(7, 1).unwrap().add(3);
    } else {
        comm_sends.create_instance(300, 1).unwrap().add(4);
    }
    collector.input(Some(r as u32), labels)
}

fn inputs() -> Vec<RankInput> {
    (0..RANKS).map(rank_input).collect()
}

/// The inputs through their payloads, as a gather delivers them.
fn gathered() -> Vec<RankInput> {
    let payloads: Vec<Vec<u8>> = inputs().iter().map(encode_payload).collect();
    let lens: Vec<usize> = payloads.iter().map(Vec::len).collect();
    decode_concatenated(&payloads.concat(), &lens).unwrap()
}

fn report() -> JobReport {
    JobReport::from_ranks(gathered()).unwrap()
}

fn u(n: u64) -> Number {
    Number::Unsigned(n)
}

#[test]
fn payloads_round_trip() {
    for input in inputs() {
        let bytes = encode_payload(&input);
        assert_eq!(decode_payload(&bytes).unwrap(), input);
    }
    let inputs = inputs();
    let payloads: Vec<Vec<u8>> = inputs.iter().map(encode_payload).collect();
    let lens: Vec<usize> = payloads.iter().map(Vec::len).collect();
    let back = decode_concatenated(&payloads.concat(), &lens).unwrap();
    assert_eq!(back, inputs);
    assert!(back[0].elapsed.is_some());
}

#[test]
fn sums_min_mean_max_and_imbalance() {
    let report = report();
    assert_eq!(report.ranks.len(), RANKS);
    let msgs = report.variable("msgs").unwrap();
    assert_eq!(msgs.class, PvarClass::Counter);
    assert_eq!(msgs.category.as_deref(), Some("app"));
    let s = msgs.elements[0].stats.as_ref().unwrap();
    assert_eq!(s.ranks, 3);
    assert_eq!(s.total, Some(u(60)));
    assert_eq!((s.min, s.min_rank), (u(10), 0));
    assert_eq!((s.max, s.max_rank), (u(30), 1));
    assert_eq!(s.mean, 20.0);
    assert_eq!(s.imbalance, Some(1.5));
    assert_eq!(s.imbalance_fraction, Some(1.0 / 3.0));
    assert_eq!(s.mark, None);
    assert_eq!(
        msgs.elements[0].values,
        [Some(u(10)), Some(u(30)), Some(u(20))]
    );

    let bytes = report.variable("bytes").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!(bytes.total, Some(u(4_000_000)));
    assert_eq!((bytes.min_rank, bytes.max_rank), (2, 1));

    // TIMER: seconds, summed.
    let wait = report.variable("wait").unwrap();
    assert_eq!(wait.unit, Some("seconds"));
    let s = wait.elements[0].stats.as_ref().unwrap();
    assert_eq!(s.total, Some(Number::Double(1.5)));
    assert_eq!((s.min, s.min_rank), (Number::Double(0.25), 1));
    assert_eq!((s.max, s.max_rank), (Number::Double(0.75), 2));
    assert_eq!(s.mean, 0.5);
    assert_eq!(s.imbalance, Some(1.5));

    // LEVEL: current values, the sum shown too.
    let s = report.variable("queue").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!(s.total, Some(u(12)));
    assert_eq!((s.min, s.min_rank, s.max, s.max_rank), (u(0), 1, u(7), 2));
    assert_eq!(s.mean, 4.0);
}

#[test]
fn watermarks_report_marks_states_and_percentages_no_total() {
    let report = report();
    let peak = report.variable("peak").unwrap();
    let e = &peak.elements[0];
    assert_eq!(e.values, [Some(u(1)); 3]);
    assert_eq!(
        e.marks.as_deref(),
        Some(&[Some(u(100)), Some(u(200)), Some(u(300))][..])
    );
    let s = e.stats.as_ref().unwrap();
    assert_eq!(s.total, None);
    assert_eq!(s.mark, Some((u(300), 2)));
    assert_eq!(s.mean, 200.0);
    assert_eq!(s.imbalance, Some(1.5));

    let s = report.variable("lowest").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!(s.mark, Some((u(10), 0)));
    assert_eq!((s.min, s.max), (u(10), u(30)));

    let mode = report.variable("mode").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!(
        (mode.total, mode.imbalance, mode.imbalance_fraction),
        (None, None, None)
    );
    assert_eq!((mode.min, mode.max), (Number::Signed(0), Number::Signed(2)));

    let util = report.variable("util").unwrap();
    assert_eq!(util.unit, Some("ratio"));
    let s = util.elements[0].stats.as_ref().unwrap();
    assert_eq!(s.total, None);
    assert_eq!(s.mean, 0.5);
    assert_eq!(s.imbalance, Some(1.5));
}

#[test]
fn bound_instances_are_matched_by_label_then_by_object() {
    let report = report();
    let world = report.instance("comm_sends", "MPI_COMM_WORLD").unwrap();
    assert_eq!(world.bind, BindKind::Comm);
    let s = world.elements[0].stats.as_ref().unwrap();
    assert_eq!(s.ranks, 3);
    assert_eq!(s.total, Some(u(6)));
    assert_eq!((s.max, s.max_rank), (u(3), 2));

    let sub = report.instance("comm_sends", "comm[0-1]").unwrap();
    assert_eq!(sub.elements[0].values, [Some(u(5)), Some(u(10)), None]);
    let s = sub.elements[0].stats.as_ref().unwrap();
    assert_eq!((s.ranks, s.total, s.mean), (2, Some(u(15)), 7.5));

    let by_object: Vec<_> = report
        .variables
        .iter()
        .filter(|v| v.name == "comm_sends" && matches!(v.instance, Instance::Object(_)))
        .collect();
    assert_eq!(by_object.len(), 2);
    assert_eq!(by_object[0].instance, Instance::Object(7));
    assert_eq!(
        by_object[0].elements[0].values,
        [Some(u(3)), Some(u(3)), None]
    );
    assert_eq!(by_object[1].instance, Instance::Object(300));
    assert_eq!(by_object[1].elements[0].values, [None, None, Some(u(4))]);
    // An unbound variable is not an instance.
    assert!(report.instance("msgs", "MPI_COMM_WORLD").is_none());
}

#[test]
fn per_peer_arrays_become_matrices() {
    let report = report();
    let m: Vec<_> = report.matrices().map(|v| v.name.as_str()).collect();
    assert_eq!(m, ["msgs_to_peer"]);
    let rows = report.variable("msgs_to_peer").unwrap().matrix().unwrap();
    assert_eq!(
        rows,
        [
            [Some(u(0)), Some(u(10)), Some(u(0))],
            [Some(u(0)), Some(u(0)), Some(u(20))],
            [Some(u(30)), Some(u(0)), Some(u(0))],
        ]
    );
    // An array of another length is not one, even if named so; an
    // explicit list or the category makes one; auto_peer off unmakes it.
    assert!(report.variable("ops").unwrap().matrix().is_none());
    let options = ReportOptions {
        peer_variables: vec!["ops".into()],
        ..ReportOptions::default()
    };
    let r = JobReport::from_ranks_with(gathered(), options).unwrap();
    assert!(
        !r.variable("ops").unwrap().peer_matrix,
        "2 elements, 3 ranks"
    );
    let options = ReportOptions {
        auto_peer: false,
        ..ReportOptions::default()
    };
    let r = JobReport::from_ranks_with(gathered(), options).unwrap();
    assert_eq!(r.matrices().count(), 0);
    let options = ReportOptions {
        auto_peer: false,
        peer_variables: vec!["msgs_to_peer".into()],
        ..ReportOptions::default()
    };
    let r = JobReport::from_ranks_with(gathered(), options).unwrap();
    assert_eq!(r.matrices().count(), 1);
}

#[test]
fn a_peer_category_makes_a_matrix() {
    let inputs: Vec<RankInput> = (0..2)
        .map(|r| {
            let reg = Registry::new();
            reg.categories().define("net_peer", "per peer").unwrap();
            let sent = reg
                .aggregate::<u64>("sent_bytes")
                .count(2)
                .category("net_peer")
                .register()
                .unwrap();
            sent.add_at(1 - r, 100);
            Collector::new(&reg).input(Some(r as u32), vec![])
        })
        .collect();
    let report = JobReport::from_ranks(inputs).unwrap();
    let v = report.variable("sent_bytes").unwrap();
    assert!(v.peer_matrix);
    assert_eq!(
        v.matrix().unwrap(),
        [[Some(u(0)), Some(u(100))], [Some(u(100)), Some(u(0))]]
    );
}

#[test]
fn all_zero_variables_are_left_out_unless_asked() {
    let report = report();
    assert!(report.variable("never").is_none());
    assert!(report.skipped_zero.contains(&"never".to_string()));
    let options = ReportOptions {
        include_zero: true,
        ..ReportOptions::default()
    };
    let all = JobReport::from_ranks_with(gathered(), options).unwrap();
    let never = all.variable("never").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!(never.total, Some(u(0)));
    assert_eq!((never.imbalance, never.imbalance_fraction), (None, None));
    assert!(all.skipped_zero.is_empty());
}

#[test]
fn element_names_and_arrays() {
    let options = ReportOptions {
        element_names: vec![("ops".into(), vec!["read".into(), "write".into()])],
        ..ReportOptions::default()
    };
    let report = JobReport::from_ranks_with(gathered(), options).unwrap();
    let ops = report.variable("ops").unwrap();
    assert_eq!(ops.elements.len(), 2);
    assert_eq!(ops.element_label(0), "ops[read]");
    assert_eq!(ops.elements[0].stats.as_ref().unwrap().total, Some(u(6)));
    assert_eq!(ops.elements[1].stats.as_ref().unwrap().total, Some(u(0)));
}

#[test]
fn nanosecond_timers_are_reported_in_seconds() {
    let inputs: Vec<RankInput> = (0..2)
        .map(|r| {
            let (clock, _time) = Clock::mock();
            let reg = Registry::with_clock(clock);
            let t = reg
                .timer("ns_timer")
                .datatype(Datatype::UnsignedLongLong)
                .register()
                .unwrap();
            t.add_elapsed(Duration::from_millis(250 * (r + 1)));
            let input = Collector::new(&reg).input(Some(r as u32), vec![]);
            let v = input.snapshot.variable("ns_timer").unwrap();
            assert_eq!(v.values[0], u(250_000_000 * (r + 1)));
            input
        })
        .collect();
    let report = JobReport::from_ranks(inputs).unwrap();
    let v = report.variable("ns_timer").unwrap();
    assert_eq!((v.unit, v.datatype), (Some("seconds"), Datatype::Double));
    let s = v.elements[0].stats.as_ref().unwrap();
    assert_eq!(s.total, Some(Number::Double(0.75)));
}

#[test]
fn ranks_must_come_in_order() {
    assert!(matches!(
        JobReport::from_ranks(Vec::new()),
        Err(ReportError::Ranks(_))
    ));
    let mut inputs = inputs();
    inputs.swap(0, 1);
    let err = JobReport::from_ranks(inputs).unwrap_err();
    assert!(err.to_string().contains("rank order"), "{err}");
    // Unknown ranks are taken by position.
    let inputs: Vec<RankInput> = inputs_without_ranks();
    assert_eq!(JobReport::from_ranks(inputs).unwrap().ranks.len(), RANKS);
}

fn inputs_without_ranks() -> Vec<RankInput> {
    inputs()
        .into_iter()
        .map(|i| RankInput { rank: None, ..i })
        .collect()
}

fn json_of(report: &JobReport) -> Json {
    let mut out = Vec::new();
    report.write_json(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

fn json_var<'a>(json: &'a Json, name: &str, label: Option<&str>) -> &'a Json {
    json["variables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| {
            v["name"] == name
                && match label {
                    None => v["instance"].is_null(),
                    Some(l) => v["instance"]["label"] == l,
                }
        })
        .unwrap_or_else(|| panic!("{name} {label:?} not in the JSON"))
}

#[test]
fn json_is_valid_and_carries_everything() {
    let report = report();
    let json = json_of(&report);
    assert_eq!(json["schema"], "pvar.report.v1");
    assert_eq!(json["nranks"], 3);
    assert!(json["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(json["ranks"][2]["rank"], 2);
    assert_eq!(json["ranks"][0]["labels"][0]["object"], "0x64");
    assert_eq!(json["ranks"][0]["labels"][0]["label"], "MPI_COMM_WORLD");
    assert_eq!(json["skipped_zero"], serde_json::json!(["never"]));

    let msgs = json_var(&json, "msgs", None);
    assert_eq!(msgs["class"], "COUNTER");
    assert_eq!(msgs["category"], "app");
    let e = &msgs["elements"][0];
    assert_eq!(e["values"], serde_json::json!([10, 30, 20]));
    assert!(e["marks"].is_null());
    assert_eq!(e["total"], 60);
    assert_eq!(
        (e["min"].clone(), e["min_rank"].clone()),
        (10.into(), 0.into())
    );
    assert_eq!(
        (e["max"].clone(), e["max_rank"].clone()),
        (30.into(), 1.into())
    );
    assert_eq!(e["mean"], 20.0);
    assert_eq!(e["imbalance"], 1.5);
    assert!((e["imbalance_fraction"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-15);

    // A consumer can recompute the figures from the per-rank values.
    for v in json["variables"].as_array().unwrap() {
        for e in v["elements"].as_array().unwrap() {
            let vals: Vec<f64> = e["values"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Json::as_f64)
                .collect();
            if v["has_total"] == true {
                let sum: f64 = vals.iter().sum();
                assert!((e["total"].as_f64().unwrap() - sum).abs() < 1e-9, "{v}");
            }
            assert_eq!(e["ranks"].as_u64().unwrap() as usize, vals.len());
        }
    }

    let peak = json_var(&json, "peak", None);
    assert_eq!(
        peak["elements"][0]["marks"],
        serde_json::json!([100, 200, 300])
    );
    assert_eq!(peak["elements"][0]["mark"], 300);
    assert_eq!(peak["elements"][0]["mark_rank"], 2);
    assert!(peak["elements"][0]["total"].is_null());

    let mode = json_var(&json, "mode", None);
    assert!(mode["elements"][0]["imbalance"].is_null());

    let wait = json_var(&json, "wait", None);
    assert_eq!(wait["unit"], "seconds");
    assert_eq!(wait["elements"][0]["total"], 1.5);

    let sub = json_var(&json, "comm_sends", Some("comm[0-1]"));
    assert_eq!(sub["bind"], "MPI_T_BIND_MPI_COMM");
    assert_eq!(
        sub["elements"][0]["values"],
        serde_json::json!([5, 10, null])
    );
    assert_eq!(sub["elements"][0]["ranks"], 2);

    let m = &json["matrices"][0];
    assert_eq!(m["name"], "msgs_to_peer");
    assert_eq!(
        m["rows"],
        serde_json::json!([[0, 10, 0], [0, 0, 20], [30, 0, 0]])
    );
    let at = m["variable"].as_u64().unwrap() as usize;
    assert_eq!(json["variables"][at]["name"], "msgs_to_peer");
    assert_eq!(json["variables"][at]["peer_matrix"], true);
}

#[test]
fn json_escapes_hostile_strings_and_nulls_non_finite_numbers() {
    let inputs: Vec<RankInput> = (0..2)
        .map(|r| {
            let reg = Registry::new();
            reg.counter("quote\"back\\slash\nnew\u{1}line é")
                .description("tab\there")
                .register()
                .unwrap()
                .add(1);
            reg.generic::<f64>("weird")
                .register()
                .unwrap()
                .set(f64::NAN);
            let labels = vec![(1, "label \"x\"\r\n".to_string())];
            Collector::new(&reg).input(Some(r as u32), labels)
        })
        .collect();
    let report = JobReport::from_ranks(inputs).unwrap();
    let json = json_of(&report);
    let v = json_var(&json, "quote\"back\\slash\nnew\u{1}line é", None);
    assert_eq!(v["description"], "tab\there");
    assert_eq!(json["ranks"][1]["labels"][0]["label"], "label \"x\"\r\n");
    let weird = json_var(&json, "weird", None);
    assert_eq!(
        weird["elements"][0]["values"],
        serde_json::json!([null, null])
    );
    let mut text = Vec::new();
    report.write_text(&mut text).unwrap();
}

#[test]
fn text_shows_the_figures() {
    let report = report();
    let mut out = Vec::new();
    report.write_text(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    println!("{text}");
    assert!(text.contains("@ Ranks          : 3"), "{text}");
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // Variable Class [Unit] Total Min @rank Mean Max @rank Max/Mean Imb%
    assert_eq!(
        line("msgs "),
        [
            "msgs", "COUNTER", "60", "10", "0", "20", "30", "1", "1.50", "33.3%"
        ]
    );
    assert_eq!(
        line("bytes "),
        [
            "bytes",
            "AGGREGATE",
            "4,000,000",
            "500,000",
            "2",
            "1,333,333",
            "2,500,000",
            "1",
            "1.88",
            "46.7%"
        ]
    );
    assert_eq!(
        line("wait "),
        [
            "wait", "TIMER", "seconds", "1.500", "0.2500", "1", "0.5000", "0.7500", "2", "1.50",
            "33.3%"
        ]
    );
    assert_eq!(
        line("peak "),
        [
            "peak",
            "HIGHWATERMARK",
            "mark",
            "300",
            "100",
            "0",
            "200",
            "300",
            "2",
            "1.50",
            "33.3%"
        ]
    );
    assert_eq!(
        line("mode "),
        ["mode", "STATE", "-", "0", "0", "1", "2", "2", "-", "-"]
    );
    // All-zero elements of arrays are hidden, the others named.
    assert!(text.contains("ops[0]"));
    assert!(!text.contains("ops[1]"));
    assert!(!text.contains("never"));
    // Per communicator: Variable Object Class Ranks Total ...
    assert_eq!(
        line("comm_sends  MPI_COMM_WORLD"),
        [
            "comm_sends",
            "MPI_COMM_WORLD",
            "COUNTER",
            "3",
            "6",
            "1",
            "0",
            "2",
            "3",
            "2",
            "1.50",
            "33.3%"
        ]
    );
    assert_eq!(
        line("comm_sends  comm[0-1]"),
        [
            "comm_sends",
            "comm[0-1]",
            "COUNTER",
            "2",
            "15",
            "5",
            "0",
            "7.500",
            "10",
            "1",
            "1.33",
            "25.0%"
        ]
    );
    assert!(text.contains("object 0x7"));
    // The matrix, with row and column totals.
    assert!(text.contains("Per-peer matrix: msgs_to_peer"));
    let header = text
        .lines()
        .find(|l| l.trim_start().starts_with("rank\\peer"))
        .unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["rank\\peer", "0", "1", "2", "Total"]
    );
    assert_eq!(line("        2"), ["2", "30", "0", "0", "30"]);
    assert_eq!(line("    Total"), ["Total", "30", "10", "20", "60"]);
}

#[test]
fn large_matrices_show_totals_only_in_text() {
    let options = ReportOptions {
        max_matrix_ranks: 2,
        ..ReportOptions::default()
    };
    let report = JobReport::from_ranks_with(gathered(), options).unwrap();
    let mut out = Vec::new();
    report.write_text(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("per-rank totals only"), "{text}");
    assert!(text.contains("Column total"));
}

/// Decoding `bytes` never panics; if it succeeds the report is made and
/// written without panicking either.
fn survive(bytes: &[u8]) -> bool {
    match decode_payload(bytes) {
        Ok(input) => {
            let input = RankInput {
                rank: None,
                ..input
            };
            let report = JobReport::from_ranks(vec![input]).unwrap();
            report.write_text(&mut Vec::new()).unwrap();
            report.write_json(&mut Vec::new()).unwrap();
            true
        }
        Err(e) => {
            let _ = e.to_string();
            false
        }
    }
}

#[test]
fn every_truncation_is_refused() {
    let bytes = encode_payload(&rank_input(1));
    for n in 0..bytes.len() {
        assert!(
            matches!(
                decode_payload(&bytes[..n]),
                Err(ReportError::Payload { .. })
            ),
            "a prefix of {n} of {} bytes was accepted",
            bytes.len()
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode_payload(&longer).is_err());
}

#[test]
fn flipped_bytes_never_panic() {
    let bytes = encode_payload(&rank_input(2));
    let mut refused = 0;
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= bit;
            if !survive(&b) {
                refused += 1;
            }
        }
    }
    // The envelope's magic and versions at least are checked.
    assert!(refused >= 3 * 12, "only {refused} corruptions refused");
    // Lengths blown up to the maximum in the envelope.
    let mut b = bytes.clone();
    b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(decode_payload(&b).is_err());
    // Garbage of every short length.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..512 {
        let garbage: Vec<u8> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        survive(&garbage);
        let mut framed = b"PVRR\x01\0\0\0".to_vec();
        framed.extend_from_slice(&garbage);
        survive(&framed);
    }
}

#[test]
fn concatenated_payloads_are_checked() {
    let payloads: Vec<Vec<u8>> = inputs().iter().map(encode_payload).collect();
    let all = payloads.concat();
    let lens: Vec<usize> = payloads.iter().map(Vec::len).collect();
    let mut bad = lens.clone();
    bad[1] -= 1;
    bad[2] += 1;
    let err = decode_concatenated(&all, &bad).unwrap_err();
    assert!(
        matches!(err, ReportError::Payload { rank: Some(1), .. }),
        "{err}"
    );
    assert!(err.to_string().contains("rank 1"));
    assert!(decode_concatenated(&all, &lens[..2]).is_err());
    assert!(decode_concatenated(&all[..all.len() - 1], &lens).is_err());
}
