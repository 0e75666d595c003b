//! Registry growth: the append-only vector behind variables, records and
//! slot tables. Pushes are serialised by a mutex; readers take no lock and
//! must see every published element fully written, including elements in a
//! bucket allocated by a concurrent push.

use loom::sync::Arc;
use pvar::loom_api::AppendVec;

use crate::model;

/// Elements in the first bucket: the next push allocates bucket 1.
const FIRST_BUCKET: usize = 16;

/// Two pushes race (one of them allocates the second bucket) with a lock-free
/// reader that checks every element below the length it observed.
#[test]
fn growth_vs_push_and_read() {
    model(|| {
        let v = Arc::new(AppendVec::new());
        for i in 0..FIRST_BUCKET - 1 {
            v.push(i as u64);
        }
        let pushers: Vec<_> = [100u64, 200]
            .into_iter()
            .map(|x| {
                let v = v.clone();
                crate::spawn(move || v.push(x))
            })
            .collect();
        let n = v.len();
        assert!((FIRST_BUCKET - 1..=FIRST_BUCKET + 1).contains(&n));
        for i in 0..n {
            let x = *v.get(i).expect("published element");
            if i < FIRST_BUCKET - 1 {
                assert_eq!(x, i as u64);
            } else {
                assert!(x == 100 || x == 200, "garbage element {x}");
            }
        }
        assert!(v.get(n.max(FIRST_BUCKET + 1)).is_none());
        let idx: Vec<usize> = pushers.into_iter().map(|p| p.join().unwrap()).collect();
        assert_ne!(idx[0], idx[1]);
        assert_eq!(v.len(), FIRST_BUCKET + 1);
        let mut last: Vec<u64> = (FIRST_BUCKET - 1..=FIRST_BUCKET)
            .map(|i| *v.get(i).unwrap())
            .collect();
        last.sort_unstable();
        assert_eq!(last, [100, 200]);
    });
}

/// Registration through the public API from two threads while a third
/// reads the variable count and each visible variable's metadata: indices
/// are dense and stable, names resolve to their own index.
#[test]
fn registry_register_vs_lookup() {
    model(|| {
        let reg = crate::registry();
        let regs: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let reg = reg.clone();
                crate::spawn(move || reg.counter(name).register().unwrap().index())
            })
            .collect();
        let n = reg.pvars().len();
        for i in 0..n {
            let info = reg.pvars().info(i).expect("visible index has metadata");
            assert_eq!(reg.pvars().index(&info.name, info.class).unwrap(), i);
        }
        let idx: Vec<usize> = regs.into_iter().map(|r| r.join().unwrap()).collect();
        assert_eq!(reg.pvars().len(), 2);
        let mut sorted = idx.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1]);
    });
}
