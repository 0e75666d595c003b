//! The cross-rank report (`pvar::report`) over "ranks" that are separate
//! registries: partials made, encoded, decoded and reduced along the tree
//! in one process, the figures checked exactly, the JSON parsed, the text
//! read, hostile partials refused.

use std::time::Duration;

use pvar::export::Number;
use std::collections::HashMap;

use pvar::report::tree::{self, Link};
use pvar::report::{
    Collector, Instance, JobReport, Partial, RankInput, ReportError, ReportOptions,
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

/// Mailboxes keyed by (from, to): a job in one process, its ranks run
/// from the highest down (a rank's children are above it).
#[derive(Default)]
struct Mailboxes {
    boxes: HashMap<(u32, u32), Vec<u8>>,
    me: u32,
}

impl Link for Mailboxes {
    fn send(&mut self, to: u32, bytes: &[u8]) -> Result<(), ReportError> {
        assert!(self.boxes.insert((self.me, to), bytes.to_vec()).is_none());
        Ok(())
    }
    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError> {
        self.boxes
            .remove(&(from, self.me))
            .ok_or_else(|| ReportError::Transport(format!("nothing from {from}")))
    }
}

/// The report of `inputs` reduced along the tree to `root`, every partial
/// through its bytes.
fn reduced(inputs: &[RankInput], root: u32, options: &ReportOptions) -> JobReport {
    let n = inputs.len() as u32;
    let mut link = Mailboxes::default();
    let mut job = None;
    // Relative ranks from the highest down: children before parents.
    for rel in (0..n).rev() {
        let rank = (rel + root) % n;
        link.me = rank;
        let mine = Partial::of_rank(&inputs[rank as usize], rank, n, options);
        if let Some(j) = tree::reduce(rank, n, root, mine, options, &mut link).unwrap() {
            job = Some(j);
        }
    }
    assert!(link.boxes.is_empty());
    JobReport::from_partial(job.expect("the root's partial"), options.clone())
}

fn report() -> JobReport {
    reduced(&inputs(), 0, &ReportOptions::default())
}

fn report_with(options: ReportOptions) -> JobReport {
    reduced(&inputs(), 0, &options)
}

fn u(n: u64) -> Number {
    Number::Unsigned(n)
}

#[test]
fn partials_round_trip_and_any_tree_gives_the_same_report() {
    let options = ReportOptions::default();
    // Wall times whose sums are exact in any order (the report's float
    // sums may differ in the last bit with the order of the merges).
    let inputs: Vec<RankInput> = inputs()
        .into_iter()
        .enumerate()
        .map(|(r, i)| RankInput {
            elapsed: Some(Duration::from_secs(r as u64 + 1)),
            ..i
        })
        .collect();
    for (r, input) in inputs.iter().enumerate() {
        let p = Partial::of_rank(input, r as u32, RANKS as u32, &options);
        assert_eq!(Partial::decode(&p.encode()).unwrap(), p);
        assert_eq!(p.ranks(), 1);
    }
    let folded = JobReport::from_ranks(inputs.clone()).unwrap();
    for root in 0..RANKS as u32 {
        assert_eq!(reduced(&inputs, root, &options), folded, "root {root}");
    }
    // Merged in another order.
    let mut job = Partial::of_rank(&inputs[2], 2, 3, &options);
    job.merge(Partial::of_rank(&inputs[0], 0, 3, &options));
    job.merge(Partial::of_rank(&inputs[1], 1, 3, &options));
    assert_eq!(job.ranks(), 3);
    assert_eq!(JobReport::from_partial(job, options), folded);
}

#[test]
fn sums_min_mean_max_and_imbalance() {
    let report = report();
    assert_eq!(report.nranks, RANKS);
    assert_eq!(report.ranks.reporting, RANKS as u64);
    assert_eq!(report.problems, None);
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
    let e = &report.variable("peak").unwrap().elements[0];
    assert!(e.nonzero);
    let s = e.stats.as_ref().unwrap();
    assert_eq!(s.total, None);
    assert_eq!((s.min, s.min_rank), (u(100), 0));
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

    // On ranks 0 and 1 only.
    let sub = report.instance("comm_sends", "comm[0-1]").unwrap();
    let s = sub.elements[0].stats.as_ref().unwrap();
    assert_eq!((s.ranks, s.total, s.mean), (2, Some(u(15)), 7.5));
    assert_eq!((s.min, s.min_rank, s.max, s.max_rank), (u(5), 0, u(10), 1));

    let by_object: Vec<_> = report
        .variables
        .iter()
        .filter(|v| v.name == "comm_sends" && matches!(v.instance, Instance::Object(_)))
        .collect();
    assert_eq!(by_object.len(), 2);
    assert_eq!(by_object[0].instance, Instance::Object(7));
    let s = by_object[0].elements[0].stats.as_ref().unwrap();
    assert_eq!((s.ranks, s.total), (2, Some(u(6))));
    assert_eq!(by_object[1].instance, Instance::Object(300));
    let s = by_object[1].elements[0].stats.as_ref().unwrap();
    assert_eq!((s.ranks, s.total, s.min_rank), (1, Some(u(4)), 2));
    // Order: the variable's labelled instances, then the unlabelled.
    let order: Vec<String> = report
        .variables
        .iter()
        .filter(|v| v.name == "comm_sends")
        .map(|v| v.instance.label())
        .collect();
    assert_eq!(
        order,
        ["MPI_COMM_WORLD", "comm[0-1]", "object 0x7", "object 0x12c"]
    );
    // An unbound variable is not an instance.
    assert!(report.instance("msgs", "MPI_COMM_WORLD").is_none());
}

#[test]
fn per_peer_arrays_become_matrices() {
    let report = report();
    let m: Vec<_> = report.matrices().map(|(v, _)| v.name.as_str()).collect();
    assert_eq!(m, ["msgs_to_peer"]);
    let v = report.variable("msgs_to_peer").unwrap();
    assert!(v.elements.is_empty());
    let p = v.peer.as_ref().unwrap();
    assert!(p.is_exact());
    assert_eq!(
        p.dense(),
        [
            [u(0), u(10), u(0)],
            [u(0), u(0), u(20)],
            [u(30), u(0), u(0)]
        ]
    );
    assert_eq!(p.total, u(60));
    let top: Vec<(usize, usize, Number)> = p.top.iter().map(|t| (t.from, t.to, t.value)).collect();
    assert_eq!(top, [(2, 0, u(30)), (1, 2, u(20)), (0, 1, u(10))]);
    let sent = p.sent.as_ref().unwrap();
    assert_eq!(
        (sent.total, sent.max, sent.max_rank),
        (Some(u(60)), u(30), 2)
    );
    // Its row totals are profiled per rank.
    let prof = report.profile("msgs_to_peer").unwrap();
    let blocks: Vec<(usize, Number)> = prof
        .blocks
        .iter()
        .map(|b| (b.ranks.start, b.stats.max))
        .collect();
    assert_eq!(blocks, [(0, u(10)), (1, u(20)), (2, u(30))]);

    // An array of another length is not one, even if named so; an
    // explicit list or the category makes one; auto_peer off unmakes it.
    assert!(report.variable("ops").unwrap().peer.is_none());
    let r = report_with(ReportOptions {
        peer_variables: vec!["ops".into()],
        ..ReportOptions::default()
    });
    assert!(
        r.variable("ops").unwrap().peer.is_none(),
        "2 elements, 3 ranks"
    );
    let r = report_with(ReportOptions {
        auto_peer: false,
        ..ReportOptions::default()
    });
    assert_eq!(r.matrices().count(), 0);
    let r = report_with(ReportOptions {
        auto_peer: false,
        peer_variables: vec!["msgs_to_peer".into()],
        ..ReportOptions::default()
    });
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
    assert_eq!(
        v.peer.as_ref().unwrap().dense(),
        [[u(0), u(100)], [u(100), u(0)]]
    );
}

/// `n` ranks, rank `r` sending `r + 1` to each of its `k` next ranks
/// (in a per-peer array of `n` elements) and `r` units in a counter.
fn ring_inputs(n: usize, k: usize) -> Vec<RankInput> {
    (0..n)
        .map(|r| {
            let reg = Registry::new();
            let peer = reg.counter("to_peer").count(n).register().unwrap();
            for d in 1..=k {
                peer.add_at((r + d) % n, r as u64 + 1);
            }
            reg.counter("work").register().unwrap().add(r as u64);
            Collector::new(&reg).input(Some(r as u32), vec![])
        })
        .collect()
}

#[test]
fn beyond_the_block_count_matrices_and_profiles_are_binned_exactly() {
    let n = 10;
    let options = ReportOptions {
        matrix_bins: 4,
        profile_bins: 3,
        top_pairs: 5,
        ..ReportOptions::default()
    };
    let report = reduced(&ring_inputs(n, 2), 0, &options);
    let p = report.variable("to_peer").unwrap().peer.clone().unwrap();
    assert!(!p.is_exact());
    assert_eq!(p.bins, 4);
    // The blocks' sums, recomputed from the full matrix.
    let mut want = vec![vec![0u64; 4]; 4];
    for r in 0..n {
        for d in 1..=2 {
            want[p.bin_of(r)][p.bin_of((r + d) % n)] += r as u64 + 1;
        }
    }
    let got: Vec<Vec<u64>> = p
        .dense()
        .iter()
        .map(|row| row.iter().map(|x| x.as_f64() as u64).collect())
        .collect();
    assert_eq!(got, want);
    assert_eq!(p.total, u(2 * (1..=n as u64).sum::<u64>()));
    // Blocks partition the ranks.
    let covered: Vec<usize> = (0..4).flat_map(|b| p.bin_ranks(b)).collect();
    assert_eq!(covered, (0..n).collect::<Vec<_>>());
    // The 5 largest pairs: by value, then (from, to).
    let top: Vec<(usize, usize, Number)> = p.top.iter().map(|t| (t.from, t.to, t.value)).collect();
    assert_eq!(
        top,
        [
            (9, 0, u(10)),
            (9, 1, u(10)),
            (8, 0, u(9)),
            (8, 9, u(9)),
            (7, 8, u(8))
        ]
    );
    let sent = p.sent.as_ref().unwrap();
    assert_eq!(
        (sent.min, sent.min_rank, sent.max, sent.max_rank),
        (u(2), 0, u(20), 9)
    );
    // The profile of the row totals in 3 blocks of ranks: 0-3, 4-6, 7-9.
    let prof = report.profile("to_peer").unwrap();
    let blocks: Vec<(std::ops::Range<usize>, Number, Number)> = prof
        .blocks
        .iter()
        .map(|b| (b.ranks.clone(), b.stats.total.unwrap(), b.stats.max))
        .collect();
    assert_eq!(
        blocks,
        [
            (0..4, u(2 * (1 + 2 + 3 + 4)), u(8)),
            (4..7, u(2 * (5 + 6 + 7)), u(14)),
            (7..10, u(2 * (8 + 9 + 10)), u(20))
        ]
    );
    let work = report.variable("work").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!((work.total, work.max_rank), (Some(u(45)), 9));
}

#[test]
fn a_partial_does_not_grow_with_the_ranks() {
    let options = ReportOptions {
        matrix_bins: 16,
        profile_bins: 16,
        ..ReportOptions::default()
    };
    let size = |n: usize| {
        let inputs = ring_inputs(n, 3);
        let mut job: Option<Partial> = None;
        for (r, input) in inputs.iter().enumerate() {
            let p = Partial::of_rank(input, r as u32, n as u32, &options);
            match &mut job {
                Some(j) => j.merge(p),
                None => job = Some(p),
            }
        }
        let job = job.unwrap();
        assert_eq!(job.ranks(), n as u64);
        job.encode().len()
    };
    let (small, large) = (size(64), size(512));
    // Same blocks, same variables: the same size (give or take the names
    // of the programs).
    assert!(
        large <= small + 64,
        "64 ranks: {small} bytes, 512 ranks: {large} bytes"
    );
}

#[test]
fn a_missing_rank_is_reported_and_the_others_kept() {
    let options = ReportOptions::default();
    let inputs = inputs();
    let mut job = Partial::of_rank(&inputs[0], 0, 3, &options);
    job.merge(Partial::missing(
        1,
        3,
        &options,
        "its partial did not arrive",
    ));
    job.merge(Partial::of_rank(&inputs[2], 2, 3, &options));
    // A partial of another job size is not merged.
    job.merge(Partial::of_rank(&inputs[1], 1, 4, &options));
    let report = JobReport::from_partial(job, options);
    assert_eq!(report.ranks.reporting, 2);
    let (count, rank, why) = report.problems.clone().unwrap();
    assert_eq!((count, rank), (2, 1));
    assert!(why.contains("did not arrive"), "{why}");
    let s = report.variable("msgs").unwrap().elements[0]
        .stats
        .clone()
        .unwrap();
    assert_eq!((s.ranks, s.total), (2, Some(u(30))));
    let mut text = Vec::new();
    report.write_text(&mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("@ Ranks          : 3 (2 reported)"), "{text}");
    assert!(
        text.contains("@ Missing        : 2 rank(s) left out; rank 1"),
        "{text}"
    );
}

#[test]
fn all_zero_variables_are_left_out_unless_asked() {
    let report = report();
    assert!(report.variable("never").is_none());
    assert!(report.skipped_zero.contains(&"never".to_string()));
    let all = report_with(ReportOptions {
        include_zero: true,
        ..ReportOptions::default()
    });
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
    let report = report_with(ReportOptions {
        element_names: vec![("ops".into(), vec!["read".into(), "write".into()])],
        ..ReportOptions::default()
    });
    let ops = report.variable("ops").unwrap();
    assert_eq!(ops.elements.len(), 2);
    assert_eq!(ops.element_label(0), "ops[read]");
    assert_eq!(ops.elements[0].stats.as_ref().unwrap().total, Some(u(6)));
    assert_eq!(ops.elements[1].stats.as_ref().unwrap().total, Some(u(0)));
    assert!(ops.elements[0].nonzero && !ops.elements[1].nonzero);
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
    // The default profile: the time in timers per rank.
    let prof = report.profile("time in timers").unwrap();
    assert_eq!(prof.unit, Some("seconds"));
    assert_eq!(
        prof.overall.as_ref().unwrap().total,
        Some(Number::Double(0.75))
    );
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
    let report = JobReport::from_ranks(inputs).unwrap();
    assert_eq!(report.ranks.reporting, RANKS as u64);
    assert_eq!(report.ranks.pids.len(), RANKS);
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
    assert_eq!(json["schema"], "pvar.report.v2");
    assert_eq!(json["nranks"], 3);
    assert!(json["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(json["ranks"]["reporting"], 3);
    assert_eq!(json["ranks"]["pids"][2]["rank"], 2);
    assert_eq!(json["ranks"]["programs"][0]["ranks"], 3);
    assert!(json["problems"].is_null());
    assert_eq!(json["skipped_zero"], serde_json::json!(["never"]));
    assert_eq!(json["options"]["matrix_bins"], 256);

    let msgs = json_var(&json, "msgs", None);
    assert_eq!(msgs["class"], "COUNTER");
    assert_eq!(msgs["category"], "app");
    let e = &msgs["elements"][0];
    assert_eq!(e["total"], 60);
    assert_eq!(e["ranks"], 3);
    assert_eq!(e["nonzero"], true);
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

    let peak = json_var(&json, "peak", None);
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
    assert_eq!(sub["elements"][0]["ranks"], 2);
    assert_eq!(sub["elements"][0]["total"], 15);

    let m = &json["matrices"][0];
    assert_eq!(m["name"], "msgs_to_peer");
    assert_eq!(
        (m["nranks"].clone(), m["bins"].clone(), m["exact"].clone()),
        (3.into(), 3.into(), true.into())
    );
    assert_eq!(
        m["rows"],
        serde_json::json!([[0, 10, 0], [0, 0, 20], [30, 0, 0]])
    );
    assert_eq!(m["bin_starts"], serde_json::json!([0, 1, 2]));
    assert_eq!(
        m["top_pairs"][0],
        serde_json::json!({"from": 2, "to": 0, "value": 30})
    );
    assert_eq!(m["sent"]["total"], 60);
    let at = m["variable"].as_u64().unwrap() as usize;
    assert_eq!(json["variables"][at]["name"], "msgs_to_peer");
    assert_eq!(json["variables"][at]["peer_matrix"], true);

    let prof = json["profile"].as_array().unwrap();
    assert_eq!(prof[0]["name"], "time in timers");
    assert_eq!(prof[0]["overall"]["total"], 1.5);
    assert_eq!(prof[0]["blocks"][1]["first_rank"], 1);
    assert_eq!(prof[0]["blocks"][1]["total"], 0.25);
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
            let b = reg
                .counter("bound")
                .bind(BindKind::Comm)
                .register_bound()
                .unwrap();
            b.create_instance(1, 1).unwrap().add(1);
            let labels = vec![(1, "label \"x\"\r\n".to_string())];
            Collector::new(&reg).input(Some(r as u32), labels)
        })
        .collect();
    let report = JobReport::from_ranks(inputs).unwrap();
    let json = json_of(&report);
    let v = json_var(&json, "quote\"back\\slash\nnew\u{1}line é", None);
    assert_eq!(v["description"], "tab\there");
    json_var(&json, "bound", Some("label \"x\"\r\n"));
    let weird = json_var(&json, "weird", None);
    assert!(weird["elements"][0]["min"].is_null());
    assert!(weird["elements"][0]["mean"].is_null());
    let mut text = Vec::new();
    report.write_text(&mut text).unwrap();
    assert!(!text.iter().any(|&b| b == b'\r' || b == 1));
}

#[test]
fn text_shows_the_figures() {
    let report = report();
    let mut out = Vec::new();
    report.write_text(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    println!("{text}");
    assert!(text.contains("@ Ranks          : 3\n"), "{text}");
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
    // The profile: a summary row per series, a row per rank.
    assert_eq!(
        line("time in timers"),
        [
            "time", "in", "timers", "seconds", "3", "1.500", "0.2500", "1", "0.5000", "0.7500",
            "2", "1.50", "33.3%"
        ]
    );
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
fn large_matrices_show_their_largest_pairs_in_text() {
    let report = reduced(
        &ring_inputs(10, 2),
        0,
        &ReportOptions {
            matrix_bins: 4,
            ..ReportOptions::default()
        },
    );
    let mut out = Vec::new();
    report.write_text(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("in 4 x 4 blocks of about 2.500 ranks"),
        "{text}"
    );
    let largest: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Largest"))
        .skip(1)
        .take(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        largest,
        [["1", "9", "0", "10"], ["2", "9", "1", "10"]],
        "{text}"
    );
    assert!(text.contains("row total"), "{text}");
}

/// Decoding `bytes` never panics; if it succeeds the partial merges and
/// the report is made and written without panicking either.
fn survive(bytes: &[u8]) -> bool {
    static RANK0: std::sync::OnceLock<RankInput> = std::sync::OnceLock::new();
    match Partial::decode(bytes) {
        Ok(p) => {
            let options = ReportOptions::default();
            let rank0 = RANK0.get_or_init(|| rank_input(0));
            let mut job = Partial::of_rank(rank0, 0, p.nranks(), &options);
            job.merge(p.clone());
            let report = JobReport::from_partial(job, options.clone());
            report.write_text(&mut Vec::new()).unwrap();
            report.write_json(&mut Vec::new()).unwrap();
            let report = JobReport::from_partial(p, options);
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

fn merged_partial() -> Partial {
    let options = ReportOptions::default();
    let inputs = inputs();
    let mut job = Partial::of_rank(&inputs[1], 1, 3, &options);
    job.merge(Partial::of_rank(&inputs[2], 2, 3, &options));
    job
}

#[test]
fn every_truncation_is_refused() {
    let bytes = merged_partial().encode();
    for n in 0..bytes.len() {
        assert!(
            matches!(
                Partial::decode(&bytes[..n]),
                Err(ReportError::Payload { .. })
            ),
            "a prefix of {n} of {} bytes was accepted",
            bytes.len()
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Partial::decode(&longer).is_err());
}

#[test]
fn flipped_bytes_never_panic() {
    let bytes = merged_partial().encode();
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
    // The magic, the version and the shape at least are checked.
    assert!(refused >= 3 * 12, "only {refused} corruptions refused");
    // A count blown up to the maximum.
    let mut b = bytes.clone();
    b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    let _ = survive(&b);
    // Garbage of every short length, bare and behind a valid header.
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
        let mut framed = bytes[..24].to_vec();
        framed.extend_from_slice(&garbage);
        survive(&framed);
    }
}

#[test]
fn reports_are_written_whole() {
    let report = report();
    let dir = std::env::temp_dir().join(format!("pvar-report-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.json");
    std::fs::write(&path, "previous").unwrap();
    report.write_json_file(&path).unwrap();
    let json: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["nranks"], 3);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    // Into a directory that does not exist: an error, nothing written.
    assert!(
        report
            .write_json_file(&dir.join("no/such/dir.json"))
            .is_err()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
