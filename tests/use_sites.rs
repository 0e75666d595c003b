//! The use-site macros (`pvar::counter!`, …): registration on first use in
//! the global registry (or at a lookup by name before it), lookups that
//! fail naming the variable, sharing between sites, conflicting declarations,
//! arrays and bound objects, exact totals under threads, and updates made
//! while a thread exits (after its caches were cleared).
//!
//! Every test names its own variables: the global registry is shared by
//! the tests of this binary, which run in parallel.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Barrier};

use pvar::{BindKind, PvarClass, Verbosity};

fn index_of(name: &str, class: PvarClass) -> Option<usize> {
    pvar::global().pvars().index(name, class).ok()
}

#[test]
fn first_use_registers_with_the_sites_metadata() {
    pvar::counter!(
        "us_first",
        description = "first-use registration",
        category = "us_category",
        verbosity = Verbosity::TunerDetail
    )
    .inc();
    let reg = pvar::global();
    let index = index_of("us_first", PvarClass::Counter).expect("registered on first use");
    let info = reg.pvars().info(index).unwrap();
    assert_eq!(info.description, "first-use registration");
    assert_eq!(info.verbosity, Verbosity::TunerDetail);
    assert_eq!(info.category.as_deref(), Some("us_category"));
    // The category may be defined after its members.
    let cat = reg
        .categories()
        .define("us_category", "use-site tests")
        .unwrap();
    assert!(reg.categories().pvars(cat).unwrap().contains(&index));
}

#[test]
#[cfg(target_os = "linux")]
fn a_lookup_finds_a_site_that_has_not_run() {
    fn on_send() {
        pvar::counter!("us_declared", description = "declared, not yet run").add(2);
    }
    let reg = pvar::global();
    let index = index_of("us_declared", PvarClass::Counter).expect("found before its first use");
    assert_eq!(
        reg.pvars().info(index).unwrap().description,
        "declared, not yet run"
    );
    let session = reg.session().unwrap();
    let h = session.handle(index).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    on_send();
    assert_eq!(h.read().unwrap(), 2);
    // The site updates the variable the lookup registered.
    assert_eq!(
        pvar::counter!("us_declared", description = "declared, not yet run").index(),
        index
    );
}

#[test]
fn a_failed_lookup_names_the_variable_and_says_why() {
    let reg = pvar::global();
    // The name in another class.
    pvar::level!("us_wrong_class").inc();
    let e = reg
        .pvars()
        .index("us_wrong_class", PvarClass::Counter)
        .unwrap_err();
    assert_eq!(e.code(), pvar::ErrorCode::InvalidName);
    let text = e.to_string();
    assert!(text.starts_with("MPI_T_ERR_INVALID_NAME: "), "{text}");
    assert!(
        text.contains(r#"no COUNTER named "us_wrong_class""#),
        "{text}"
    );
    assert!(text.contains("has class LEVEL"), "{text}");
    // No such name anywhere.
    let e = reg
        .pvars()
        .index("us_no_such_name", PvarClass::Timer)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains(r#"no TIMER named "us_no_such_name""#),
        "{e}"
    );
    // A use site registers in the global registry, not in another one.
    #[allow(dead_code)]
    fn never_called() {
        pvar::counter!("us_global_only").inc();
    }
    if cfg!(target_os = "linux") {
        let own = pvar::Registry::new();
        let e = own
            .pvars()
            .index("us_global_only", PvarClass::Counter)
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("registers it in pvar::global()"), "{text}");
        assert!(text.contains(file!()), "names the site: {text}");
    }
}

#[test]
fn two_sites_with_one_name_share_the_variable() {
    fn site_a() -> pvar::SiteRef<pvar::Counter> {
        pvar::counter!("us_shared", description = "two sites")
    }
    fn site_b() -> pvar::SiteRef<pvar::Counter> {
        pvar::counter!("us_shared", description = "two sites")
    }
    for _ in 0..10 {
        site_a().inc();
    }
    site_b().add(5);
    assert_eq!(site_a().index(), site_b().index());
    assert_eq!(site_a().get(), 15);
    assert_eq!(site_b().handle().get(), 15);
}

#[test]
fn same_name_in_another_class_is_another_variable() {
    pvar::counter!("us_two_classes").inc();
    pvar::level!("us_two_classes").inc();
    pvar::level!("us_two_classes").inc();
    assert_ne!(
        pvar::counter!("us_two_classes").index(),
        pvar::level!("us_two_classes").index()
    );
    assert_eq!(pvar::counter!("us_two_classes").get(), 1);
    assert_eq!(pvar::level!("us_two_classes").get(), 2);
}

#[test]
fn a_conflicting_site_panics_naming_both_sites() {
    let first_line = line!() + 1;
    pvar::counter!("us_conflict", description = "one thing").inc();
    let second_line = line!() + 2;
    let err = catch_unwind(AssertUnwindSafe(|| {
        pvar::counter!("us_conflict", description = "another thing").inc();
    }))
    .expect_err("a second declaration with other metadata must panic");
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted message");
    let file = file!();
    assert!(
        msg.contains(&format!("{file}:{first_line}")),
        "names the first site: {msg}"
    );
    assert!(
        msg.contains(&format!("{file}:{second_line}")),
        "names the second site: {msg}"
    );
    assert!(msg.contains("us_conflict"), "{msg}");
    // The first site's variable is untouched.
    assert_eq!(
        pvar::counter!("us_conflict", description = "one thing").get(),
        1
    );
}

#[test]
fn arrays_update_each_element_and_refuse_out_of_range() {
    let site = || pvar::counter!("us_array", count = 3, description = "per peer");
    for peer in 0..3 {
        for _ in 0..=peer {
            site().inc_at(peer);
        }
    }
    site().add_at(2, 10);
    assert_eq!(
        (0..3).map(|i| site().get_at(i)).collect::<Vec<_>>(),
        [1, 2, 13]
    );
    let err = catch_unwind(AssertUnwindSafe(|| site().inc_at(3))).expect_err("out of range");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("out of range"), "{msg}");
    assert_eq!(site().get_at(2), 13, "the refused update changed nothing");
}

#[test]
fn every_class_updates_through_its_site() {
    pvar::aggregate!("us_bytes").add(7);
    pvar::aggregate!("us_bytes").add(8);
    assert_eq!(pvar::aggregate!("us_bytes").get(), 15);

    pvar::aggregate!("us_seconds": f64).add(0.25);
    pvar::aggregate!("us_seconds": f64).add(0.5);
    assert_eq!(pvar::aggregate!("us_seconds": f64).get(), 0.75);

    let depth = || pvar::level!("us_depth");
    depth().inc();
    depth().inc();
    depth().dec();
    assert_eq!(depth().get(), 1);
    depth().set(9);
    assert_eq!(depth().get(), 9);

    let hw = || pvar::high_watermark!("us_high");
    hw().update(1);
    let session = pvar::global().session().unwrap();
    let mark = session
        .handle(hw().index())
        .unwrap()
        .typed::<u64>()
        .unwrap();
    mark.start().unwrap();
    hw().update(3);
    hw().update(11);
    hw().update(5);
    assert_eq!(hw().handle().level(), 5, "the level is the last value");
    assert_eq!(mark.read().unwrap(), 11, "the started handle's mark");
    let lw = || pvar::low_watermark!("us_low": f64);
    lw().update(2.5);
    lw().update(1.5);
    assert_eq!(lw().handle().level(), 1.5);

    pvar::state!("us_state").set(4);
    assert_eq!(pvar::state!("us_state").get(), 4);

    {
        let _t = pvar::timer!("us_timer").scoped();
        std::hint::black_box((0..1000).sum::<u64>());
    }
    let t = pvar::timer!("us_timer");
    assert!(t.get_seconds() > 0.0);
    t.start();
    t.stop();
    assert_eq!(
        pvar::global().pvars().info(t.index()).unwrap().class,
        PvarClass::Timer
    );
}

#[test]
fn bound_sites_update_through_instances() {
    let site = || {
        pvar::counter!(
            "us_per_comm",
            bind = BindKind::Comm,
            description = "per comm"
        )
    };
    site().create_instance(7, 2).unwrap();
    site().create_instance(9, 1).unwrap();
    for _ in 0..4 {
        site().instance(7).unwrap().inc_at(1);
    }
    site().instance(9).unwrap().add(3);
    assert_eq!(site().instance(7).unwrap().get_at(1), 4);
    assert_eq!(site().instance(9).unwrap().get(), 3);
    site().drop_instance(9).unwrap();
    assert!(site().instance(9).is_err());
    // The unbound update path of a bound site says what to do instead.
    let err = catch_unwind(AssertUnwindSafe(|| site().inc())).expect_err("bound");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("bound to objects"), "{msg}");
}

#[test]
fn totals_are_exact_with_threads() {
    const THREADS: usize = 4;
    const ROUNDS: u64 = 50_000;
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for r in 0..ROUNDS {
                    pvar::counter!("us_exact").inc();
                    pvar::counter!("us_exact_arr", count = 4).inc_at(t);
                    pvar::aggregate!("us_exact_sum").add(r);
                    if r % 2 == 0 {
                        pvar::level!("us_exact_level").inc();
                    } else {
                        pvar::level!("us_exact_level").dec();
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let n = THREADS as u64 * ROUNDS;
    assert_eq!(pvar::counter!("us_exact").get(), n);
    for t in 0..THREADS {
        assert_eq!(pvar::counter!("us_exact_arr", count = 4).get_at(t), ROUNDS);
    }
    assert_eq!(
        pvar::aggregate!("us_exact_sum").get(),
        THREADS as u64 * (ROUNDS * (ROUNDS - 1) / 2)
    );
    assert_eq!(pvar::level!("us_exact_level").get(), 0);
}

/// A value whose destructor updates through a use site: it runs while its
/// thread exits, after pvar's exit guard when it was created first (Linux
/// runs thread-local destructors in reverse order of registration).
struct UpdatesOnDrop {
    /// Met by the destructor and the test: the exit guard has run, the
    /// thread's id is free.
    released: Arc<Barrier>,
    /// Met by the destructor and the thread that took the id over.
    go: Arc<Barrier>,
}

const ON_EXIT_UPDATES: u64 = 200_000;

/// One use site for the thread body, its destructor and its successor, so
/// that the destructor's updates would go through the cache the thread
/// filled before exiting (if it were not cleared).
fn exit_site() -> pvar::SiteRef<pvar::Counter> {
    pvar::counter!("us_exit")
}

impl Drop for UpdatesOnDrop {
    fn drop(&mut self) {
        self.released.wait();
        self.go.wait();
        for _ in 0..ON_EXIT_UPDATES {
            exit_site().inc();
        }
    }
}

thread_local! {
    static ON_EXIT: RefCell<Option<UpdatesOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn updates_during_thread_exit_are_counted_exactly() {
    // A thread updates, exits, and keeps updating through the same use
    // site from a thread-local destructor that runs after pvar's exit
    // guard gave its id (and record) back; meanwhile a new thread takes
    // the id over and updates through that site too. An update through a
    // stale cache would write the new owner's cell with a plain load and
    // store, and counts would be lost.
    const ROUNDS: u64 = 8;
    for _ in 0..ROUNDS {
        let released = Arc::new(Barrier::new(2));
        let go = Arc::new(Barrier::new(2));
        let exiting = {
            let (released, go) = (released.clone(), go.clone());
            std::thread::spawn(move || {
                // Registered before pvar's exit guard: dropped after it.
                ON_EXIT.with(|d| *d.borrow_mut() = Some(UpdatesOnDrop { released, go }));
                exit_site().inc();
            })
        };
        released.wait();
        let successor = std::thread::spawn(move || {
            exit_site().inc();
            go.wait();
            for _ in 0..ON_EXIT_UPDATES {
                exit_site().inc();
            }
        });
        exiting.join().unwrap();
        successor.join().unwrap();
    }
    assert_eq!(exit_site().get(), ROUNDS * 2 * (ON_EXIT_UPDATES + 1));
}
