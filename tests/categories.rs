//! Categories: definition, info, index, membership with the "first len
//! entries" rule, hierarchy without cycles, the change stamp, undefined
//! references.

use pvar::{ErrorCode, Registry};

#[test]
fn number_info_and_index() {
    let reg = Registry::new();
    let cats = reg.categories();
    assert_eq!(cats.len(), 0);
    assert!(cats.is_empty());
    let comm = cats.define("comm", "communication").unwrap();
    let mem = reg.categories().define("memory", "").unwrap();
    assert_eq!((comm, mem), (0, 1));
    assert_eq!(reg.categories().len(), 2);
    let info = cats.info(comm).unwrap();
    assert_eq!(info.name, "comm");
    assert_eq!(info.description, "communication");
    assert_eq!(
        (info.num_cvars, info.num_pvars, info.num_categories),
        (0, 0, 0)
    );
    assert_eq!(cats.index("memory").unwrap(), 1);
    assert_eq!(
        cats.index("disk").unwrap_err().code(),
        ErrorCode::InvalidName
    );
    assert_eq!(cats.info(2).unwrap_err().code(), ErrorCode::InvalidIndex);
    // Same definition again: same index; different description: refused.
    assert_eq!(cats.define("comm", "communication").unwrap(), comm);
    assert!(cats.define("comm", "other").is_err());
    assert!(cats.define("", "x").is_err());
    assert_eq!(cats.len(), 2);
}

#[test]
fn members_are_listed_in_order_and_never_reordered() {
    let reg = Registry::new();
    let c = reg.categories().define("comm", "").unwrap();
    let p0 = reg.counter("sent").category("comm").register().unwrap();
    let _p1 = reg.counter("other").register().unwrap();
    let _p2 = reg.counter("recv").category("comm").register().unwrap();
    reg.cvar::<u64>("eager")
        .category("comm")
        .register()
        .unwrap();
    assert_eq!(reg.categories().pvars(c).unwrap(), vec![0, 2]);
    assert_eq!(reg.categories().cvars(c).unwrap(), vec![0]);
    // Registering an existing pvar again does not add it twice.
    let again = reg.counter("sent").category("comm").register().unwrap();
    assert_eq!(reg.categories().pvars(c).unwrap(), vec![0, 2]);
    drop((p0, again));
}

#[test]
fn first_len_entries_rule() {
    let reg = Registry::new();
    let c = reg.categories().define("many", "").unwrap();
    for k in 0..5 {
        reg.counter(&format!("c{k}"))
            .category("many")
            .register()
            .unwrap();
        reg.cvar::<u64>(&format!("v{k}"))
            .category("many")
            .register()
            .unwrap();
    }
    let cats = reg.categories();
    // len smaller than the list: exactly len entries are written.
    let mut out = [-1i32; 3];
    assert_eq!(cats.pvars_into(c, &mut out).unwrap(), 3);
    assert_eq!(out, [0, 1, 2]);
    // len larger: the whole list at the start, the rest untouched.
    let mut out = [-1i32; 8];
    assert_eq!(cats.cvars_into(c, &mut out).unwrap(), 5);
    assert_eq!(out, [0, 1, 2, 3, 4, -1, -1, -1]);
    // len zero: nothing written.
    assert_eq!(cats.pvars_into(c, &mut []).unwrap(), 0);
    // Sub-categories follow the same rule.
    reg.categories().define("child_a", "").unwrap();
    reg.categories().define("child_b", "").unwrap();
    cats.add_subcategory("many", "child_a").unwrap();
    cats.add_subcategory("many", "child_b").unwrap();
    let mut out = [-7i32; 1];
    assert_eq!(cats.categories_into(c, &mut out).unwrap(), 1);
    assert_eq!(out, [1]);
    assert_eq!(
        cats.pvars_into(99, &mut [0; 2]).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
}

#[test]
fn a_category_never_contains_itself() {
    let reg = Registry::new();
    let cats = reg.categories();
    for n in ["a", "b", "c"] {
        cats.define(n, "").unwrap();
    }
    // Directly.
    assert!(cats.add_subcategory("a", "a").is_err());
    // a > b > c, then c > a would close a cycle.
    cats.add_subcategory("a", "b").unwrap();
    cats.add_subcategory("b", "c").unwrap();
    let e = cats.add_subcategory("c", "a").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Invalid);
    assert!(e.to_string().contains("contain itself"), "{e}");
    assert!(cats.add_subcategory("b", "a").is_err());
    // A diamond is fine: a > c as well.
    cats.add_subcategory("a", "c").unwrap();
    // Refused edges left nothing behind.
    let c = cats.index("c").unwrap();
    assert!(cats.subcategories(c).unwrap().is_empty());
    let a = cats.index("a").unwrap();
    assert_eq!(cats.subcategories(a).unwrap(), vec![1, 2]);
    // Adding an edge twice is a no-op.
    cats.add_subcategory("a", "b").unwrap();
    assert_eq!(cats.subcategories(a).unwrap(), vec![1, 2]);
}

#[test]
fn cycles_are_caught_through_categories_not_yet_defined() {
    let reg = Registry::new();
    let cats = reg.categories();
    cats.add_subcategory("x", "y").unwrap(); // neither defined yet
    cats.add_subcategory("y", "z").unwrap();
    assert!(cats.add_subcategory("z", "x").is_err());
    assert_eq!(cats.undefined(), vec!["x", "y", "z"]);
    let x = cats.define("x", "").unwrap();
    assert!(cats.subcategories(x).unwrap().is_empty()); // y still undefined
    let y = cats.define("y", "").unwrap();
    assert_eq!(cats.subcategories(x).unwrap(), vec![y]);
    let z = cats.define("z", "").unwrap();
    assert_eq!(cats.subcategories(y).unwrap(), vec![z]);
    assert!(cats.undefined().is_empty());
}

#[test]
fn the_change_stamp_increases_with_every_addition() {
    let reg = Registry::new();
    let cats = reg.categories();
    let mut last = cats.changed();
    let mut bumped = |what: &str| {
        let now = cats.changed();
        assert!(now > last, "no change of stamp after {what}");
        last = now;
    };
    cats.define("top", "").unwrap();
    bumped("define");
    reg.counter("p").category("top").register().unwrap();
    bumped("pvar added");
    reg.cvar::<u64>("v").category("top").register().unwrap();
    bumped("cvar added");
    cats.define("sub", "").unwrap();
    bumped("second define");
    cats.add_subcategory("top", "sub").unwrap();
    bumped("sub-category added");
    // No addition, no change.
    let before = cats.changed();
    cats.define("top", "").unwrap();
    cats.add_subcategory("top", "sub").unwrap();
    let _ = cats.info(0).unwrap();
    reg.counter("unrelated").register().unwrap();
    assert_eq!(cats.changed(), before);
    // A member recorded for an undefined category changes nothing visible
    // until the category is defined.
    reg.counter("q").category("later").register().unwrap();
    assert_eq!(cats.changed(), before);
    cats.define("later", "").unwrap();
    assert!(cats.changed() > before);
}

#[test]
fn undefined_categories_are_reported_until_defined() {
    let reg = Registry::new();
    reg.counter("a").category("ghost").register().unwrap();
    reg.cvar::<u64>("b").category("phantom").register().unwrap();
    assert_eq!(reg.categories().undefined(), vec!["ghost", "phantom"]);
    let g = reg.categories().define("ghost", "").unwrap();
    assert_eq!(reg.categories().undefined(), vec!["phantom"]);
    assert_eq!(reg.categories().pvars(g).unwrap(), vec![0]);
    let p = reg.categories().define("phantom", "").unwrap();
    assert!(reg.categories().undefined().is_empty());
    assert_eq!(reg.categories().cvars(p).unwrap(), vec![0]);
}

#[test]
fn concurrent_additions_and_reads() {
    let reg = Registry::new();
    let c = reg.categories().define("busy", "").unwrap();
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let reg = reg.clone();
            std::thread::spawn(move || {
                for k in 0..200 {
                    reg.counter(&format!("t{t}_{k}"))
                        .category("busy")
                        .register()
                        .unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let reg = reg.clone();
        std::thread::spawn(move || {
            let mut buf = vec![-1i32; 800];
            let mut seen = 0;
            while seen < 800 {
                let n = reg.categories().pvars_into(c, &mut buf).unwrap();
                assert!(n >= seen, "members are never removed");
                assert!(buf[..n].iter().all(|&i| i >= 0));
                seen = n;
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let mut all = reg.categories().pvars(c).unwrap();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 800);
}
