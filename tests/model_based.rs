//! Model-based test: random sequences of component and tool operations
//! replayed against two registries and a reference model of each in
//! `tests/model/` (the same code the `api_sequences` fuzz target runs).
//! Every value read and every return code must agree.
//!
//! Case count: `PVAR_MODEL_CASES` (default 2000: about 6.5 s on one core
//! of a 2-core machine in a debug build; the whole file about 8 s); a
//! failure is shrunk to a short operation list, which proptest prints.
//!
//! The model is sequential; `concurrent_updates_keep_the_handle_rules`
//! checks, with real updater threads, the rules that must hold whatever
//! the interleaving.

mod model;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use model::harness::{Coverage, Harness};
use model::ops::{HRef, Op, RegOp, SRef, Upd, decode, sel};
use model::spec::Mutant;
use proptest::prelude::*;
use pvar::{Callbacks, Datatype, ErrorCode, HandleId, PvarClass, Registry, SessionId};

fn cases() -> u32 {
    std::env::var("PVAR_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 4096,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_agrees_with_model(ops in op_sequences(), check_each_step: bool) {
        let mut h = Harness::new();
        h.check_each_step = check_each_step;
        h.run(&ops);
    }
}

/// Sequences of up to 200 operations, so that shrinking drops whole
/// operations: most decoded from their own bytes (every kind of operation
/// alike), the others `Op::Setup` (a registered variable with a handle)
/// and `Op::Cycle` (start / update / stop / update / read / write / update
/// / read / reset / update / read on one handle), which uniform decoding
/// makes too rare to reach stopped watermark and snapshot handles often.
fn op_sequences() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 32).prop_map(|c| decode(&c, 1).pop()),
        1 => any::<(u8, u8, u8, u8, u8)>().prop_map(|(kind, name, c, session, count)| {
            Some(Op::Setup {
                kind,
                name,
                continuous: [None, Some(false), Some(true)][c as usize % 3],
                session,
                count,
            })
        }),
        2 => any::<(u8, u8, [u32; 4])>().prop_map(|(sel, how, amounts)| {
            Some(Op::Cycle {
                h: HRef { sel, raw: 0 },
                how,
                amounts,
            })
        }),
    ];
    proptest::collection::vec(op, 0..200).prop_map(|ops| ops.into_iter().flatten().collect())
}

const S0: SRef = SRef { sel: 0, raw: 0 };
const S1: SRef = SRef { sel: 1, raw: 0 };
const fn h(sel: u8) -> HRef {
    HRef { sel, raw: 0 }
}
const fn reg(kind: u8, continuous: Option<bool>) -> Op {
    Op::Register(RegOp {
        kind,
        // Distinct names within each class (15 would be the empty name).
        name: if kind == 15 { 17 } else { kind },
        count: 2,
        continuous,
        readonly: None,
        atomic: None,
        datatype: 0,
    })
}
const fn upd(comp: u8, elem: u8, how: u8, amount: u32) -> Op {
    Op::Update(Upd {
        comp,
        elem,
        how,
        amount,
    })
}

/// A hand-written walk through every class so that the harness itself is
/// known to exercise values (not only errors), whatever the random cases do.
#[test]
fn scripted_walk_through_every_class() {
    let mut ops = vec![Op::SessionCreate, Op::SessionCreate];
    for kind in 0..17u8 {
        ops.push(reg(kind, None));
    }
    // Instances of the two bound variables (indices 15 and 16) for object
    // 0x100: components 15 and 16.
    ops.push(Op::CreateInstance {
        b: 0,
        obj: 0,
        count: 3,
    });
    ops.push(Op::CreateInstance {
        b: 1,
        obj: 0,
        count: 2,
    });
    for v in 0..17u8 {
        ops.push(Op::HandleAlloc(S0, v, 0));
        ops.push(Op::HandleAlloc(S1, v, 0));
    }
    ops.push(Op::StartAll(S0));
    for round in 0..4u32 {
        for c in 0..17u8 {
            ops.push(upd(c, round as u8, round as u8, 1000 + 37 * round));
            ops.push(Op::UpdateOnThread(Upd {
                comp: c,
                elem: round as u8 + 1,
                how: round as u8 + 1,
                amount: 99 + round,
            }));
            ops.push(Op::Advance(500));
        }
        for hsel in 0..34u8 {
            ops.push(Op::Read(S0, h(hsel), 3));
            ops.push(Op::Read(S1, h(hsel), 3));
        }
    }
    ops.push(Op::StartAll(S1));
    for hsel in 0..34u8 {
        ops.push(Op::Write(S0, h(hsel), 3, 4242));
        ops.push(upd(hsel % 17, 1, 2, 77));
        ops.push(Op::ReadReset(S0, h(hsel), 3));
        ops.push(Op::ReadReset(S1, h(hsel), 3));
        ops.push(Op::Reset(S1, h(hsel)));
    }
    ops.push(Op::StopAll(S0));
    ops.push(Op::ResetAll(S1));
    ops.push(Op::Deactivate(3));
    ops.push(Op::StartAll(S0));
    ops.push(reg(3, None)); // reactivates
    // Drop the counter instance: its handles fail; a new instance (another
    // object) recycles the cells and starts at 0.
    ops.push(Op::DropInstance { b: 0, obj: 0 });
    ops.push(Op::Read(S0, h(30), 3));
    ops.push(Op::SessionFree(S0));
    for hsel in 0..34u8 {
        ops.push(Op::HandleFree(S1, h(hsel)));
    }
    ops.push(Op::CreateInstance {
        b: 0,
        obj: 1,
        count: 3,
    });
    ops.push(Op::SessionCreate);
    ops.push(Op::HandleAlloc(SRef { sel: 2, raw: 0 }, 15, 1));
    ops.push(upd(16, 2, 1, 5));
    ops.push(Op::Read(SRef { sel: 2, raw: 0 }, h(68), 3));
    let mut harness = Harness::new();
    harness.run(&ops);
    assert_eq!(harness.sides[0].model.vars.len(), 17);
    assert_eq!(harness.sides[0].model.handles.len(), 1);
}

/// The committed seeds of the `api_sequences` fuzz target replay cleanly
/// here too (the same harness), so CI covers them without cargo-fuzz.
#[test]
fn fuzz_seed_corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/api_sequences");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/corpus/api_sequences") {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        model::harness::run_bytes(&data, 512);
        n += 1;
    }
    assert!(n > 0, "no seeds in {}", dir.display());
}

/// Random sequences (a fixed sample of the strategy above) reach every
/// situation the handle rules are about, many times: stopped watermark
/// handles read after a level passed their mark (frozen at the stop, a
/// written value, a reset), snapshot handles read after their variable
/// moved (engine GENERIC and callback variables, before the first start
/// too), keys of the other registry refused, values read in the second
/// registry. Each such read is also checked against the model.
#[test]
fn random_sequences_reach_the_handle_rules() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut total = Coverage::default();
    for i in 0..150 {
        let ops = op_sequences().new_tree(&mut runner).unwrap().current();
        let mut h = Harness::new();
        h.check_each_step = i % 2 == 0;
        h.run(&ops);
        total.merge(&h.cov);
    }
    for (what, n) in total.counts() {
        assert!(n >= 20, "{what}: reached {n} times only ({total:?})");
    }
}

/// The kinds of `ops::VarKind::ALL` used below.
const HIGH_U64: u8 = 7;
const LOW_U64: u8 = 9;
const LOW_F64: u8 = 10;
const GEN_U64: u8 = 17;
const GEN_F64: u8 = 18;
const GEN_I32: u8 = 19;
const CB_HIGH: u8 = 20;
const CB_LOW: u8 = 21;
const CB_GENERIC: u8 = 22;
const CB_COUNTER: u8 = 23;
const COUNTER: u8 = 0;

/// Start, update, stop, update, read, write, update, read, reset, update,
/// read, restart on watermark handle `hj` (component `c`, two elements).
/// `lv(x)` is the update amount for a level of rank `x` (rising with `x`
/// for a HIGHWATERMARK, falling for a LOW one) and `seed` writes a value
/// that later levels pass.
fn watermark_script(hj: u8, c: u8, lv: fn(u32) -> u32, seed: u32) -> Vec<Op> {
    let (s, h) = (S0, h(hj));
    vec![
        Op::Start(s, h),
        Op::Start(s, h),
        upd(c, 0, 0, lv(150)),
        Op::Read(s, h, 3),
        Op::Stop(s, h),
        Op::Stop(s, h),
        upd(c, 0, 0, lv(500)),
        Op::Read(s, h, 3), // frozen at the stop
        Op::Write(s, h, 3, seed),
        upd(c, 0, 0, lv(600)),
        upd(c, 1, 0, lv(3000)),
        Op::Read(s, h, 3), // the written value stays
        Op::Reset(s, h),
        upd(c, 0, 0, lv(700)),
        Op::Read(s, h, 3), // the level at the reset stays
        Op::Start(s, h),
        upd(c, 0, 0, lv(800)),
        upd(c, 0, 0, lv(20)),
        Op::Start(s, h), // started: nothing changes
        Op::Read(s, h, 3),
        Op::Write(s, h, 3, seed),
        Op::Read(s, h, 3), // started: also the level at the write
        Op::Stop(s, h),
        upd(c, 0, 0, lv(4000)),
        Op::ReadReset(s, h, 3),
        Op::Read(s, h, 3),
    ]
}

/// The snapshot rules on handle `hj` (component `c`): frozen at
/// allocation, the current value while started, frozen at the stop (a
/// second stop takes no new snapshot), read-only.
fn snapshot_script(hj: u8, c: u8) -> Vec<Op> {
    let (s, h) = (S0, h(hj));
    vec![
        upd(c, 0, 0, 11),
        Op::Read(s, h, 3), // the value at allocation
        Op::Start(s, h),
        upd(c, 0, 0, 12),
        Op::Read(s, h, 3),
        Op::Stop(s, h),
        upd(c, 1, 0, 13),
        Op::Read(s, h, 3), // the value at the stop
        Op::Stop(s, h),
        Op::Read(s, h, 3),
        Op::Write(s, h, 3, 1),
        Op::Reset(s, h),
        Op::ReadReset(s, h, 3),
        Op::Read(s, h, 3),
        Op::Start(s, h),
        Op::Read(s, h, 3),
    ]
}

/// Non-continuous GENERIC and callback variables, engine watermarks
/// stopped, written and reset between updates, in two registries, with
/// keys of each passed to the other.
fn new_rules_script() -> Vec<Op> {
    let mut ops = vec![Op::SessionCreate];
    // Registry 0: variables 0..8, components 0..8, handles 0..8.
    for (kind, continuous) in [
        (HIGH_U64, None),
        (LOW_F64, None),
        (GEN_U64, Some(false)),
        (CB_HIGH, None), // a callback watermark is not continuous by default
        (CB_LOW, None),
        (CB_GENERIC, Some(false)),
        (CB_COUNTER, None),
        (GEN_I32, None), // continuous: the current value
    ] {
        ops.push(reg(kind, continuous));
    }
    for v in 0..8 {
        ops.push(Op::HandleAlloc(S0, v, 0));
    }
    for c in 0..8 {
        ops.push(upd(c, 0, 0, 100 + c as u32));
    }
    for j in 0..8 {
        ops.push(Op::Read(S0, h(j), 3)); // frozen at allocation
    }
    ops.extend(watermark_script(0, 0, |x| x, 5));
    // f64 levels (a % 4096) / 8 - 256: falling as the rank rises.
    ops.extend(watermark_script(1, 1, |x| 4095 - x, 4090));
    for j in [2, 3, 4, 5] {
        ops.extend(snapshot_script(j, j));
    }
    ops.push(Op::Cycle {
        h: h(6),
        how: 0x1f,
        amounts: [3, 1 << 20, 77, 5],
    });
    ops.extend([Op::Start(S0, h(7)), upd(7, 1, 0, 9), Op::Read(S0, h(7), 3)]);

    // Registry 1: variables 0..3, handles 0..3, started.
    ops.extend([Op::Switch, Op::SessionCreate]);
    ops.extend([
        reg(LOW_U64, None),
        reg(GEN_F64, Some(false)),
        reg(COUNTER, None),
    ]);
    for v in 0..3 {
        ops.push(Op::HandleAlloc(S0, v, 0));
    }
    ops.extend([
        Op::StartAll(S0),
        upd(0, 0, 0, 50),
        upd(1, 1, 0, 77),
        upd(2, 0, 0, 3),
    ]);
    for j in 0..3 {
        ops.push(Op::Read(S0, h(j), 3));
    }
    // Keys of the other registry, against registry 1, then registry 0.
    for round in 0..2 {
        for what in 0..14 {
            for k in [0, 2, 5] {
                ops.push(Op::Foreign {
                    what,
                    h: h(k),
                    own_session: false,
                    arg: what,
                });
                ops.push(Op::Foreign {
                    what,
                    h: h(k),
                    own_session: true,
                    arg: k,
                });
            }
        }
        let foreign_s = SRef {
            sel: sel::FOREIGN,
            raw: 0,
        };
        let foreign_h = HRef {
            sel: sel::FOREIGN,
            raw: 1,
        };
        ops.extend([
            Op::Read(foreign_s, foreign_h, 3),
            Op::Read(S0, foreign_h, 3),
            Op::Write(S0, foreign_h, 3, 9),
            Op::HandleFree(S0, foreign_h),
            Op::HandleAlloc(foreign_s, 0, 0),
            Op::SessionFree(foreign_s),
        ]);
        if round == 0 {
            ops.push(Op::Switch);
        }
    }
    for sel in 0..8 {
        ops.push(Op::Cycle {
            h: h(sel),
            how: 0x5f,
            amounts: [sel as u32 * 1000 + 1, 40_000, 7, 1 << 24],
        });
    }
    ops
}

/// A hand-written walk through the new rules, so that the harness is
/// known to reach each of them (whatever the random cases do), in both
/// registries, and the model agrees with the engine on every step.
#[test]
fn scripted_snapshots_watermarks_and_two_registries() {
    let mut harness = Harness::new();
    harness.run(&new_rules_script());
    assert_eq!(harness.cur, 0);
    // The other registry's keys freed and touched nothing.
    assert_eq!(harness.sides[0].model.handles.len(), 8);
    assert_eq!(harness.sides[1].model.handles.len(), 3);
    assert_eq!(harness.sides[0].model.live_sessions(), 1);
    assert_eq!(harness.sides[1].model.live_sessions(), 1);
    for (what, n) in harness.cov.counts() {
        assert!(n > 0, "the script never reached {what} ({:?})", harness.cov);
    }
}

/// The harness notices a model that breaks one of the rules: each wrong
/// rule makes the scripted walk disagree with the engine.
#[test]
fn a_wrong_rule_makes_the_walk_fail() {
    let ops = new_rules_script();
    for m in [
        Mutant::StoppedMarkMoves,
        Mutant::SnapshotNotFrozen,
        Mutant::RestartResetsMark,
        Mutant::RestopSnapshots,
    ] {
        let r = catch_unwind(AssertUnwindSafe(|| Harness::with_mutant(m).run(&ops)));
        let err = r.expect_err(&format!("{m:?}: the walk passed"));
        let msg = err
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or("");
        assert!(
            msg.contains("model and engine disagree"),
            "{m:?}: unexpected panic {msg}"
        );
    }
}

// ---- concurrency --------------------------------------------------------

/// Updater threads of the concurrent check; updater `t` owns element `t`.
const UPDATERS: usize = 2;
/// Where the LOWWATERMARK starts; updater values `BIG - n` fall from it.
const BIG: u64 = u64::MAX / 2;

/// The updaters' progress: updater `t` stores `n` after its `n`-th round of
/// updates (Release), so a tool that loads `n` (Acquire) sees every update
/// of the first `n` rounds.
struct Progress {
    n: [AtomicU64; UPDATERS],
    done: AtomicBool,
    /// An updater panicked: waiting for it would never end.
    failed: AtomicBool,
}

impl Progress {
    fn now(&self) -> [u64; UPDATERS] {
        std::array::from_fn(|t| self.n[t].load(Ordering::Acquire))
    }

    /// Waits until every updater `t` has completed round `target[t]`;
    /// returns the rounds reached. Yields, so that on a small machine the
    /// updaters get the CPU; never sleeps.
    fn reach(&self, target: [u64; UPDATERS]) -> [u64; UPDATERS] {
        for (n, &want) in self.n.iter().zip(&target) {
            while n.load(Ordering::Acquire) < want {
                assert!(!self.failed.load(Ordering::Relaxed), "an updater panicked");
                std::thread::yield_now();
            }
        }
        self.now()
    }

    /// Waits for `k` more rounds of every updater.
    fn advance(&self, k: u64) -> [u64; UPDATERS] {
        self.reach(self.now().map(|n| n + k))
    }
}

/// The tool's keyed calls on one session, unwrapped.
struct Tool<'a> {
    reg: &'a Registry,
    s: SessionId,
}

impl Tool<'_> {
    fn read(&self, h: HandleId) -> [u64; UPDATERS] {
        let mut v = [0; UPDATERS];
        self.reg.tool().read(self.s, h, 0, &mut v).unwrap();
        v
    }
    fn start(&self, h: HandleId) {
        self.reg.tool().start(self.s, h).unwrap();
    }
    fn stop(&self, h: HandleId) {
        self.reg.tool().stop(self.s, h).unwrap();
    }
}

fn all_ge(a: [u64; UPDATERS], b: [u64; UPDATERS]) -> bool {
    a.iter().zip(&b).all(|(x, y)| x >= y)
}

fn plus(a: [u64; UPDATERS], k: u64) -> [u64; UPDATERS] {
    a.map(|x| x + k)
}

fn max(a: [u64; UPDATERS], b: [u64; UPDATERS]) -> [u64; UPDATERS] {
    std::array::from_fn(|t| a[t].max(b[t]))
}

/// A watermark's values in *rank* units: `rank(v)` is the updater round
/// whose level `v` is (`v` for the HIGHWATERMARK, `BIG - v` for the LOW
/// one), so a mark that covers more levels has a higher rank; `level(r)`
/// is the value of rank `r`; no level passes the value `beyond`.
struct Ranks {
    rank: fn(u64) -> u64,
    level: fn(u64) -> u64,
    beyond: u64,
}

const HIGH_RANKS: Ranks = Ranks {
    rank: |v| v,
    level: |r| r,
    beyond: u64::MAX,
};
const LOW_RANKS: Ranks = Ranks {
    rank: |v| BIG - v,
    level: |r| BIG - r,
    beyond: 0,
};

/// What a tool handle of the concurrent check reads.
enum Class {
    /// An engine watermark: its mark, in rank units.
    Mark(&'static Ranks),
    /// A COUNTER: the updates counted.
    Counter,
    /// A non-continuous GENERIC or callback watermark whose values are the
    /// updaters' rounds: a snapshot while stopped.
    Snapshot,
}

struct Subject {
    name: &'static str,
    h: HandleId,
    class: Class,
}

impl Subject {
    /// The read, in rounds (ranks, counts).
    fn get(&self, tool: &Tool) -> [u64; UPDATERS] {
        let v = tool.read(self.h);
        match self.class {
            Class::Mark(r) => v.map(r.rank),
            _ => v,
        }
    }
    /// Reads the levels: covers every round completed before it started.
    fn follows_levels(&self) -> bool {
        !matches!(self.class, Class::Counter)
    }
}

/// One round of every phase on every subject, each wait for the updaters
/// shared by all of them: started (rising, covering the levels), stopped
/// (frozen, though the levels pass it; a second stop changes nothing),
/// written while stopped (the value stays; snapshots refuse), reset while
/// stopped on even rounds (stays), started again (the written or reset
/// value is gone; a counter counts on from it), a value no level passes
/// written to a started mark (a second start keeps it, the stop freezes
/// it).
fn concurrent_round(tool: &Tool, p: &Progress, subjects: &[Subject], round: u64) {
    let reads = || subjects.iter().map(|s| s.get(tool)).collect::<Vec<_>>();
    let check =
        |what: &str, got: &[[u64; UPDATERS]], ok: &dyn Fn(&Subject, [u64; UPDATERS]) -> bool| {
            for (s, &v) in subjects.iter().zip(got) {
                assert!(ok(s, v), "{} {what}: read {v:?} (round {round})", s.name);
            }
        };
    let same = |what: &str, was: &[[u64; UPDATERS]]| {
        let now = reads();
        for ((s, a), b) in subjects.iter().zip(was).zip(&now) {
            assert_eq!(a, b, "{} {what}: moved (round {round})", s.name);
        }
    };
    let odd = round % 2 == 1;

    // Started: marks and snapshots cover the levels before the start; no
    // read goes back; a second start changes nothing.
    let before = p.now();
    subjects.iter().for_each(|s| tool.start(s.h));
    let a = reads();
    check("started", &a, &|s, v| {
        !s.follows_levels() || all_ge(v, before)
    });
    let reached = p.advance(8);
    let b = reads();
    let rose = |s: &Subject, v, a| all_ge(v, a) && (!s.follows_levels() || all_ge(v, reached));
    for ((s, &v), &a) in subjects.iter().zip(&b).zip(&a) {
        assert!(
            rose(s, v, a),
            "{} started: {a:?} then {v:?} (round {round})",
            s.name
        );
    }
    let b = if odd {
        subjects.iter().for_each(|s| tool.start(s.h));
        let c = reads();
        for ((s, &v), &b) in subjects.iter().zip(&c).zip(&b) {
            assert!(
                all_ge(v, b),
                "{} after a second start: {b:?} then {v:?}",
                s.name
            );
        }
        c
    } else {
        b
    };

    // Stopped: frozen, though the levels then pass every frozen value.
    subjects.iter().for_each(|s| tool.stop(s.h));
    let f = reads();
    for ((s, &v), &b) in subjects.iter().zip(&f).zip(&b) {
        assert!(
            all_ge(v, b),
            "{} stopped at {v:?}, below the read {b:?}",
            s.name
        );
    }
    let past = f.iter().fold(p.now(), |m, &v| max(m, v));
    p.reach(plus(past, 8));
    same("stopped", &f);
    if round.is_multiple_of(3) {
        subjects.iter().for_each(|s| tool.stop(s.h)); // no new snapshot
        same("stopped twice", &f);
    }

    // Written while stopped: the value stays (snapshots refuse writes,
    // resets and readresets, and stay too).
    let (keyed, sid) = (tool.reg.tool(), tool.s);
    let code = |r: pvar::Result<()>| r.map_err(|e| e.code());
    let mut w = Vec::new();
    for (s, &f) in subjects.iter().zip(&f) {
        w.push(match s.class {
            Class::Mark(r) => {
                let w = [round + 1, 3];
                keyed.write(sid, s.h, 0, &w.map(r.level)).unwrap();
                w
            }
            Class::Counter => {
                let w = [1_000_000 + round, 7];
                keyed.write(sid, s.h, 0, &w).unwrap();
                w
            }
            Class::Snapshot => {
                assert_eq!(
                    code(keyed.write(sid, s.h, 0, &[1, 1])),
                    Err(ErrorCode::PvarNoWrite)
                );
                assert_eq!(code(keyed.reset(sid, s.h)), Err(ErrorCode::PvarNoWrite));
                assert_eq!(
                    code(keyed.readreset(sid, s.h, 0, &mut [0; UPDATERS])),
                    Err(ErrorCode::PvarNoAtomic)
                );
                f
            }
        });
    }
    same("written", &w);
    p.advance(8);
    same("written, later", &w);

    // Reset while stopped (even rounds): the level now, or 0, stays.
    let w = if odd {
        w
    } else {
        let before = p.now();
        for s in subjects {
            if !matches!(s.class, Class::Snapshot) {
                keyed.reset(sid, s.h).unwrap();
            }
        }
        let z = reads();
        for ((s, &v), &w) in subjects.iter().zip(&z).zip(&w) {
            let ok = match s.class {
                Class::Mark(_) => all_ge(v, before),
                Class::Counter => v == [0; UPDATERS],
                Class::Snapshot => v == w,
            };
            assert!(
                ok,
                "{} reset to {v:?} (levels {before:?}, round {round})",
                s.name
            );
        }
        let past = z.iter().fold(p.now(), |m, &v| max(m, v));
        p.reach(plus(past, 8));
        same("reset", &z);
        z
    };

    // Started again: marks and snapshots take the level now; a counter
    // counts on from its written (or reset) value.
    let before = p.now();
    subjects.iter().for_each(|s| tool.start(s.h));
    let a = reads();
    for ((s, &v), &w) in subjects.iter().zip(&a).zip(&w) {
        let ok = match s.class {
            Class::Counter => all_ge(v, w),
            _ => all_ge(v, before),
        };
        assert!(
            ok,
            "{} restarted at {v:?} (from {w:?}, levels {before:?})",
            s.name
        );
    }

    // A value no level passes, written to a started mark: a second start
    // does not reset it to the level; the stop freezes it.
    for s in subjects {
        if let Class::Mark(r) = s.class {
            keyed.write(sid, s.h, 0, &[r.beyond; UPDATERS]).unwrap();
        }
    }
    subjects.iter().for_each(|s| tool.start(s.h));
    let c = reads();
    for ((s, &v), &a) in subjects.iter().zip(&c).zip(&a) {
        let ok = match s.class {
            Class::Mark(r) => v == [(r.rank)(r.beyond); UPDATERS],
            _ => all_ge(v, a),
        };
        assert!(ok, "{} after a write and a second start: {v:?}", s.name);
    }
    subjects.iter().for_each(|s| tool.stop(s.h));
    let f = reads();
    p.advance(8);
    same("stopped at the end of the round", &f);
}

/// Real threads update a COUNTER, a HIGH and a LOWWATERMARK, a
/// non-continuous GENERIC and a callback HIGHWATERMARK while this thread,
/// the tool, starts, stops, writes, resets and reads handles of them, and
/// checks what must hold whatever the interleaving: a stopped handle's
/// reads never change; a written stopped handle reads the written value
/// until started; counters never go back between resets while started;
/// the totals are exact once the updaters stop. Updater `t` owns element
/// `t` and makes its `n`-th round of updates with value `n`, so each
/// element's level only rises (falls, for the LOWWATERMARK). The tool
/// synchronises on the updaters' progress counters only.
#[test]
fn concurrent_updates_keep_the_handle_rules() {
    const ROUNDS: u64 = 40;
    let reg = Registry::new();
    let n = UPDATERS;
    let counter = reg.counter("c").count(n).register().unwrap();
    let always = reg
        .counter("cc")
        .count(n)
        .continuous(true)
        .register()
        .unwrap();
    let high = reg.high_watermark::<u64>("h").count(n).register().unwrap();
    let low = reg.low_watermark::<u64>("l").count(n).register().unwrap();
    low.init(BIG);
    let generic = reg
        .generic::<u64>("g")
        .count(n)
        .continuous(false)
        .register()
        .unwrap();
    let values: Arc<[AtomicU64; UPDATERS]> = Arc::new(std::array::from_fn(|_| AtomicU64::new(0)));
    let v = values.clone();
    let callback = reg
        .callback_pvar(
            "cw",
            PvarClass::HighWatermark,
            Datatype::UnsignedLongLong,
            Callbacks::new(move |_, i| v[i].load(Ordering::Acquire)),
        )
        .count(n)
        .continuous(false)
        .register()
        .unwrap();

    let s = reg.tool().session_create().unwrap();
    let tool = Tool { reg: &reg, s };
    let alloc = |index| reg.tool().handle_alloc(s, index, None).unwrap().0;
    // Started before any update and never touched until the end: exact.
    let total_counter = alloc(counter.index());
    let total_always = alloc(always.index());
    let total_high = alloc(high.index());
    let total_low = alloc(low.index());
    let readresets = alloc(counter.index());
    for h in [total_counter, total_high, total_low, readresets] {
        tool.start(h);
    }
    // Driven through rounds.
    let mut subjects = vec![
        Subject {
            name: "HIGHWATERMARK",
            h: alloc(high.index()),
            class: Class::Mark(&HIGH_RANKS),
        },
        Subject {
            name: "LOWWATERMARK",
            h: alloc(low.index()),
            class: Class::Mark(&LOW_RANKS),
        },
        Subject {
            name: "COUNTER",
            h: alloc(counter.index()),
            class: Class::Counter,
        },
    ];

    let p = Progress {
        n: std::array::from_fn(|_| AtomicU64::new(0)),
        done: AtomicBool::new(false),
        failed: AtomicBool::new(false),
    };
    let mut readreset_sum = [0u64; UPDATERS];
    let finals: Vec<u64> = std::thread::scope(|sc| {
        let updaters: Vec<_> = (0..UPDATERS)
            .map(|t| {
                let (p, counter, always, high, low, generic, values) =
                    (&p, &counter, &always, &high, &low, &generic, &values);
                sc.spawn(move || {
                    struct Failed<'a>(&'a AtomicBool);
                    impl Drop for Failed<'_> {
                        fn drop(&mut self) {
                            if std::thread::panicking() {
                                self.0.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    let _failed = Failed(&p.failed);
                    let mut i = 0u64;
                    while !p.done.load(Ordering::Relaxed) {
                        i += 1;
                        counter.inc_at(t);
                        always.inc_at(t);
                        high.update_at(t, i);
                        low.update_at(t, BIG - i);
                        generic.set_at(t, i);
                        values[t].store(i, Ordering::Release);
                        p.n[t].store(i, Ordering::Release);
                    }
                    i
                })
            })
            .collect();
        // The updaters stop however the tool ends (an assertion failing
        // here must not leave the scope waiting for them).
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let done = Done(&p.done);

        // Snapshot handles allocated while the values move: frozen at the
        // value at allocation until their first start.
        p.advance(8);
        let before = p.now();
        let (hg, hw) = (alloc(generic.index()), alloc(callback.index()));
        for h in [hg, hw] {
            let at_alloc = tool.read(h);
            assert!(all_ge(at_alloc, before), "{at_alloc:?} below {before:?}");
            p.reach(plus(at_alloc, 8));
            assert_eq!(tool.read(h), at_alloc, "moved before its first start");
        }

        subjects.extend([
            Subject {
                name: "GENERIC",
                h: hg,
                class: Class::Snapshot,
            },
            Subject {
                name: "callback HIGHWATERMARK",
                h: hw,
                class: Class::Snapshot,
            },
        ]);
        for round in 0..ROUNDS {
            concurrent_round(&tool, &p, &subjects, round);
            let mut d = [0; UPDATERS];
            reg.tool().readreset(s, readresets, 0, &mut d).unwrap();
            for t in 0..UPDATERS {
                readreset_sum[t] += d[t];
            }
        }
        drop(done);
        updaters.into_iter().map(|u| u.join().unwrap()).collect()
    });

    // Every update counted exactly once, every level seen.
    let finals: [u64; UPDATERS] = finals.try_into().unwrap();
    for (t, &n) in finals.iter().enumerate() {
        assert_eq!(counter.get_at(t), n, "component side");
        assert!(n > ROUNDS * 8, "the updaters made progress");
    }
    assert_eq!(tool.read(total_counter), finals);
    assert_eq!(tool.read(total_always), finals);
    let rest = tool.read(readresets);
    assert_eq!(
        std::array::from_fn(|t| readreset_sum[t] + rest[t]),
        finals,
        "readreset deltas and the rest"
    );
    assert_eq!(tool.read(total_high), finals);
    assert_eq!(tool.read(total_low), finals.map(|n| BIG - n));
    // Started after the updaters stopped: the last values.
    let (hg, hw) = (alloc(generic.index()), alloc(callback.index()));
    for h in [hg, hw] {
        assert_eq!(tool.read(h), finals, "allocated after the updates");
    }
    reg.tool().session_free(s).unwrap();
}
