//! Model-based test: random sequences of component and tool operations
//! replayed against the engine and the reference model in `tests/model/`
//! (the same code the `api_sequences` fuzz target runs). Every value read
//! and every return code must agree.
//!
//! Case count: `PVAR_MODEL_CASES` (default 4500: about 20 s on one core
//! of the 2-core CI machine in a debug build); a failure is shrunk to a
//! short operation list, which proptest prints.

mod model;

use model::harness::Harness;
use model::ops::{HRef, Op, RegOp, SRef, Upd, decode};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PVAR_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4500)
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

/// Sequences of up to 200 operations, each decoded from its own bytes so
/// that shrinking drops whole operations.
fn op_sequences() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(proptest::collection::vec(any::<u8>(), 24), 0..200)
        .prop_map(|chunks| chunks.iter().filter_map(|c| decode(c, 1).pop()).collect())
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
    assert_eq!(harness.model.vars.len(), 17);
    assert_eq!(harness.model.handles.len(), 1);
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
