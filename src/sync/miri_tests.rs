//! Small concurrent tests of the engine's unsafe code, sized for Miri
//! (`scripts/miri.sh`), which checks them for undefined behaviour, data
//! races and leaks. They also run in the normal suite. The unit tests next
//! to the code are larger (millions of updates) and too slow under Miri.

use std::sync::Arc;
use std::thread;

use crate::cells::CellSpace;
use crate::error::ErrorCode;
use crate::sync::append_vec::AppendVec;

/// Per-thread records and chunks (raw chunk pointers, cells addressed by
/// offset) under concurrent first touches, merged reads, thread exit and id
/// reuse; a slot in a later chunk too.
#[test]
fn cells_update_merge_exit_and_reuse() {
    let space = Arc::new(CellSpace::new());
    let a = space.alloc(1).unwrap();
    let big = space.alloc(100).unwrap(); // does not fit chunk 0
    let b = big.at(99);
    let writers: Vec<_> = (0..3)
        .map(|_| {
            let space = space.clone();
            thread::spawn(move || {
                for _ in 0..50 {
                    space.update(a, |v| v + 1);
                    space.update(b, |v| v + 2);
                }
            })
        })
        .collect();
    let mut last = 0;
    for _ in 0..20 {
        let now = space.sum(a);
        assert!(now >= last && now <= 150, "merged read {now} after {last}");
        last = now;
    }
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!((space.sum(a), space.sum(b)), (150, 300));
    // A later thread takes a freed id (here or in another test running in
    // parallel) and continues in that id's record.
    let s = space.clone();
    thread::spawn(move || s.update(a, |v| v + 1))
        .join()
        .unwrap();
    assert_eq!(space.sum(a), 151);
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
    let s = reg.session_create().unwrap();
    let (first, _) = reg.handle_alloc(s, c.index(), None).unwrap();
    let user = {
        let reg = reg.clone();
        thread::spawn(move || {
            for _ in 0..50 {
                match reg.read_u64(s, first) {
                    Ok(v) => assert_eq!(v, 0),
                    Err(e) => assert_eq!(e.code(), ErrorCode::InvalidHandle),
                }
            }
        })
    };
    let mut freed = Vec::new();
    for _ in 0..10 {
        let (h, _) = reg.handle_alloc(s, c.index(), None).unwrap();
        reg.handle_free(s, h).unwrap();
        freed.push(h);
    }
    reg.handle_free(s, first).unwrap();
    user.join().unwrap();
    for h in freed.into_iter().chain([first]) {
        assert_eq!(
            reg.read_u64(s, h).unwrap_err().code(),
            ErrorCode::InvalidHandle
        );
    }
    assert_eq!(reg.tool_stats().handles, 0);
}

/// The whole tool path on a registry: handles' 128-bit words, readreset
/// against updates on two threads, session free; totals exact.
#[test]
fn registry_readreset_vs_updates_exact() {
    let reg = crate::Registry::with_clock(crate::Clock::mock().0);
    let c = reg.counter("c").atomic(true).register().unwrap();
    let s = reg.session_create().unwrap();
    let (h, _) = reg.handle_alloc(s, c.index(), None).unwrap();
    reg.start(s, h).unwrap();
    let updaters: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            thread::spawn(move || (0..100).for_each(|_| c.inc()))
        })
        .collect();
    let mut total = 0;
    let mut out = [0u64];
    for _ in 0..20 {
        reg.readreset(s, h, &mut out).unwrap();
        total += out[0];
    }
    for u in updaters {
        u.join().unwrap();
    }
    reg.readreset(s, h, &mut out).unwrap();
    assert_eq!(total + out[0], 200);
    reg.session_free(s).unwrap();
    assert_eq!(reg.tool_stats().handles, 0);
}
