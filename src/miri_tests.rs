//! Small concurrent tests of the engine's unsafe code, sized for Miri
//! (`scripts/miri.sh`), which checks them for undefined behaviour, data
//! races and leaks. They also run in the normal suite. The unit tests next
//! to the code are larger (millions of updates) and too slow under Miri.

use std::sync::Arc;
use std::thread;

use crate::hot::cells::{CellRange, CellSpace};
use crate::lockfree::append_vec::AppendVec;
use crate::vocabulary::error::{ErrorCode, Result};
use crate::{HandleId, SessionId, Tool};

/// Element 0 of a handle.
fn read_u64(tool: &Tool, s: SessionId, h: HandleId) -> Result<u64> {
    let mut v = [0u64];
    tool.read(s, h, 0, &mut v)?;
    Ok(v[0])
}

/// Per-thread records and chunks (raw chunk pointers, cells addressed by
/// offset) under concurrent first touches, merged reads, thread exit and id
/// reuse; a slot in a later chunk too.
#[test]
fn cells_update_merge_exit_and_reuse() {
    let space = Arc::new(CellSpace::new());
    let a = CellRange::new_in(&space, 1, 0).unwrap();
    let big = CellRange::new_in(&space, 100, 0).unwrap(); // does not fit chunk 0
    let b = 99; // big's last cell
    let writers: Vec<_> = (0..3)
        .map(|_| {
            let (a, big) = (a.clone(), big.clone());
            thread::spawn(move || {
                for _ in 0..50 {
                    a.update(0, |v| v + 1);
                    big.update(b, |v| v + 2);
                }
            })
        })
        .collect();
    let mut last = 0;
    for _ in 0..20 {
        let now = a.sum(0);
        assert!(now >= last && now <= 150, "merged read {now} after {last}");
        last = now;
    }
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!((a.sum(0), big.sum(b)), (150, 300));
    // A later thread takes a freed id (here or in another test running in
    // parallel) and continues in that id's record.
    let a2 = a.clone();
    thread::spawn(move || a2.update(0, |v| v + 1))
        .join()
        .unwrap();
    assert_eq!(a.sum(0), 151);
}

/// Buckets allocated by concurrent pushes, read without locks; elements
/// (with destructors) dropped with the vector.
#[test]
fn append_vec_push_read_and_drop() {
    let v = Arc::new(AppendVec::new());
    let probe = Arc::new(());
    let pushers: Vec<_> = (0..2)
        .map(|t| {
            let (v, probe) = (v.clone(), probe.clone());
            thread::spawn(move || {
                for i in 0..40u64 {
                    v.push((t * 1000 + i, probe.clone()));
                }
            })
        })
        .collect();
    let mut seen = 0;
    while seen < 80 {
        let n = v.len();
        for i in 0..n {
            let (x, _) = v.get(i).expect("published element");
            assert!(*x % 1000 < 40);
        }
        seen = n;
        thread::yield_now();
    }
    for p in pushers {
        p.join().unwrap();
    }
    assert_eq!(Arc::strong_count(&probe), 81);
    drop(Arc::into_inner(v).expect("last reference"));
    assert_eq!(Arc::strong_count(&probe), 1);
}

/// Handle churn (slot alloc/free with new generations) against a thread
/// using a handle (reader references) and the freed keys (stale lookups).
#[test]
fn handle_churn_vs_use() {
    let reg = crate::Registry::with_clock(crate::Clock::mock().0);
    let c = reg.counter("c").register().unwrap();
    let s = reg.tool().session_create().unwrap();
    let (first, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
    let user = {
        let reg = reg.clone();
        thread::spawn(move || {
            for _ in 0..50 {
                match read_u64(reg.tool(), s, first) {
                    Ok(v) => assert_eq!(v, 0),
                    Err(e) => assert_eq!(e.code(), ErrorCode::InvalidHandle),
                }
            }
        })
    };
    let mut freed = Vec::new();
    for _ in 0..10 {
        let (h, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
        reg.tool().handle_free(s, h).unwrap();
        freed.push(h);
    }
    reg.tool().handle_free(s, first).unwrap();
    user.join().unwrap();
    for h in freed.into_iter().chain([first]) {
        assert_eq!(
            read_u64(reg.tool(), s, h).unwrap_err().code(),
            ErrorCode::InvalidHandle
        );
    }
    assert_eq!(reg.tool().stats().handles, 0);
}

/// The whole tool path on a registry: handles' 128-bit words, readreset
/// against updates on two threads, session free; totals exact.
#[test]
fn registry_readreset_vs_updates_exact() {
    let reg = crate::Registry::with_clock(crate::Clock::mock().0);
    let c = reg.counter("c").atomic(true).register().unwrap();
    let s = reg.tool().session_create().unwrap();
    let (h, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
    reg.tool().start(s, h).unwrap();
    let updaters: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            thread::spawn(move || (0..100).for_each(|_| c.inc()))
        })
        .collect();
    let mut total = 0;
    let mut out = [0u64];
    for _ in 0..20 {
        reg.tool().readreset(s, h, 0, &mut out).unwrap();
        total += out[0];
    }
    for u in updaters {
        u.join().unwrap();
    }
    reg.tool().readreset(s, h, 0, &mut out).unwrap();
    assert_eq!(total + out[0], 200);
    reg.tool().session_free(s).unwrap();
    assert_eq!(reg.tool().stats().handles, 0);
}
