//! Per-thread sharded cells: one writer per cell (relaxed load + relaxed
//! store), merged reads by any thread, first touch (record push, chunk
//! allocation) racing with readers.

use loom::sync::Arc;
use pvar::loom_api::Cells;

use crate::{model, spawn};

const A: u64 = 1;
const B: u64 = 1 << 40;

/// One writer adds A then B (first touch allocates its record and chunk)
/// while the main thread merges twice: every read is a prefix of the
/// writer's updates (no torn or out-of-thin-air value), reads never go
/// backwards, and the final read is exact.
#[test]
fn single_writer_vs_merging_reads() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let w = {
            let cells = cells.clone();
            spawn(move || {
                cells.add(slot, A);
                cells.add(slot, B);
                assert_eq!(cells.load_local(slot), A + B);
            })
        };
        let r1 = cells.sum(slot);
        let r2 = cells.sum(slot);
        for r in [r1, r2] {
            assert!([0, A, A + B].contains(&r), "torn or lost value {r:#x}");
        }
        assert!(
            r1 <= r2,
            "merged reads went backwards: {r1:#x} then {r2:#x}"
        );
        w.join().unwrap();
        assert_eq!(cells.sum(slot), A + B);
    });
}

/// Two writers each touch the space for the first time (concurrent record
/// pushes into the records vector) while the main thread merges: every read
/// is a sum of a subset of the updates; the final read is exact.
#[test]
fn two_first_touches_vs_merging_read() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let ws: Vec<_> = [A, B]
            .into_iter()
            .map(|n| {
                let cells = cells.clone();
                spawn(move || cells.add(slot, n))
            })
            .collect();
        let r = cells.sum(slot);
        assert!([0, A, B, A + B].contains(&r), "torn or lost value {r:#x}");
        for w in ws {
            w.join().unwrap();
        }
        assert_eq!(cells.sum(slot), A + B);
        // The second writer may have reused the first one's id and record.
        assert!((1..=2).contains(&cells.thread_records()));
    });
}
