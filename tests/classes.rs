//! Component-side semantics of every class: what each typed handle's
//! updates do to the value that is read back.

// Values stay at zero with the `pvar_compile_out` cfg (see tests/compile_out.rs).
#![cfg(not(pvar_compile_out))]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use pvar::{
    BindKind, Callbacks, Datatype, Error, ErrorCode, Notify, ObjectRef, PvarClass, Registry,
};

fn mocked() -> (Registry, pvar::MockTime) {
    let (clock, time) = pvar::Clock::mock();
    (Registry::with_clock(clock), time)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

// ---------------------------------------------------------------- COUNTER

#[test]
fn counter_inc_add_and_arrays() {
    let reg = Registry::new();
    let c = reg.counter("c").count(3).register().unwrap();
    assert_eq!(c.count(), 3);
    assert_eq!(c.get(), 0, "a counter starts at 0");
    c.inc();
    c.add(41);
    assert_eq!(c.get(), 42);
    c.inc_at(1);
    c.add_at(2, 5);
    c.add_at(2, 5);
    assert_eq!((c.get_at(0), c.get_at(1), c.get_at(2)), (42, 1, 10));
    // Clones share the variable.
    let c2 = c.clone();
    c2.inc_at(1);
    assert_eq!(c.get_at(1), 2);
}

#[test]
fn counter_wraps_instead_of_panicking() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    c.add(u64::MAX);
    c.add(2);
    assert_eq!(c.get(), 1);
}

#[test]
#[should_panic(expected = "out of range")]
fn counter_element_out_of_range_panics() {
    let reg = Registry::new();
    let c = reg.counter("c").count(2).register().unwrap();
    c.inc_at(2);
}

#[test]
fn local_counter_updates_the_same_variable() {
    let reg = Registry::new();
    let c = reg.counter("c").count(2).register().unwrap();
    let l0 = c.local(0);
    let l1 = c.local(1);
    for _ in 0..10 {
        l0.inc();
    }
    l1.add(7);
    c.inc(); // the shared path and the local handle write the same cell
    assert_eq!((c.get_at(0), c.get_at(1)), (11, 7));
}

#[test]
fn counters_of_different_registries_are_independent() {
    // The per-thread record cache holds one registry at a time: alternating
    // between two registries must not mix their cells.
    let (r1, r2) = (Registry::new(), Registry::new());
    let a = r1.counter("x").register().unwrap();
    let b = r2.counter("x").register().unwrap();
    for _ in 0..100 {
        a.inc();
        b.add(2);
    }
    assert_eq!((a.get(), b.get()), (100, 200));
}

#[test]
fn many_variables_span_several_chunks() {
    // 64 cells in chunk 0, 128 in chunk 1, ...: 300 single-element counters
    // and a large array need several chunks per thread.
    let reg = Registry::new();
    let cs: Vec<_> = (0..300)
        .map(|i| reg.counter(&format!("c{i}")).register().unwrap())
        .collect();
    let big = reg.counter("big").count(1000).register().unwrap();
    for (i, c) in cs.iter().enumerate() {
        c.add(i as u64);
    }
    for i in 0..1000 {
        big.inc_at(i);
    }
    for (i, c) in cs.iter().enumerate() {
        assert_eq!(c.get(), i as u64, "counter {i}");
    }
    assert!((0..1000).all(|i| big.get_at(i) == 1));
}

#[test]
fn cell_memory_per_variable_per_thread() {
    // 8 bytes per element per thread, allocated a chunk at a time: 64
    // single-element counters fill chunk 0 (512 bytes) of each thread that
    // touches them (docs/design.md, "Memory per variable per thread").
    let reg = Registry::new();
    let cs: Vec<_> = (0..64)
        .map(|i| reg.counter(&format!("c{i}")).register().unwrap())
        .collect();
    assert_eq!(
        reg.pvars().cell_bytes(),
        0,
        "nothing before the first update"
    );
    cs.iter().for_each(|c| c.inc());
    assert_eq!(reg.pvars().cell_bytes(), 64 * 8);
    let cs2 = cs.clone();
    std::thread::spawn(move || cs2.iter().for_each(|c| c.inc()))
        .join()
        .unwrap();
    assert_eq!(reg.pvars().cell_bytes(), 2 * 64 * 8);
    // The 65th variable opens chunk 1 (128 cells), for the threads that touch it.
    let c65 = reg.counter("c64").register().unwrap();
    c65.inc();
    assert_eq!(reg.pvars().cell_bytes(), 2 * 64 * 8 + 128 * 8);
}

// -------------------------------------------------------------- AGGREGATE

#[test]
fn aggregate_u64_u32_f64() {
    let reg = Registry::new();
    let a = reg.aggregate::<u64>("bytes").count(2).register().unwrap();
    a.add(1000);
    a.add(24);
    a.add_at(1, 7);
    assert_eq!((a.get(), a.get_at(1)), (1024, 7));

    let b = reg.aggregate::<u32>("small").register().unwrap();
    b.add(3);
    b.add(4);
    assert_eq!(b.get(), 7u32);
    assert_eq!(
        reg.pvars().info(b.index()).unwrap().datatype,
        Datatype::Unsigned
    );

    let f = reg.aggregate::<f64>("seconds").register().unwrap();
    f.add(0.25);
    f.add(0.5);
    assert!(close(f.get(), 0.75));
    assert_eq!(
        reg.pvars().info(f.index()).unwrap().datatype,
        Datatype::Double
    );
}

// ------------------------------------------------------------------ TIMER

#[test]
fn timer_start_stop_with_mocked_clock() {
    let (reg, time) = mocked();
    let t = reg.timer("t").register().unwrap();
    assert_eq!(t.get_seconds(), 0.0);
    t.start();
    time.advance(Duration::from_millis(5));
    t.stop();
    assert!(close(t.get_seconds(), 0.005), "{}", t.get_seconds());
    // Time between intervals is not counted.
    time.advance(Duration::from_millis(100));
    t.start();
    time.advance(Duration::from_millis(2));
    t.stop();
    assert!(close(t.get_seconds(), 0.007), "{}", t.get_seconds());
}

#[test]
fn timer_stop_without_start_and_restart() {
    let (reg, time) = mocked();
    let t = reg.timer("t").register().unwrap();
    t.stop(); // never started: nothing
    assert_eq!(t.get_seconds(), 0.0);
    t.start();
    time.advance(Duration::from_millis(10));
    t.start(); // restart: the first 10 ms are dropped
    time.advance(Duration::from_millis(3));
    t.stop();
    t.stop(); // second stop: nothing
    assert!(close(t.get_seconds(), 0.003), "{}", t.get_seconds());
}

#[test]
fn timer_in_progress_is_not_visible_until_stopped() {
    let (reg, time) = mocked();
    let t = reg.timer("t").register().unwrap();
    t.start();
    time.advance(Duration::from_millis(4));
    assert_eq!(t.get_seconds(), 0.0);
    t.stop();
    assert!(close(t.get_seconds(), 0.004));
}

#[test]
fn timer_scoped_guard_and_add_elapsed() {
    let (reg, time) = mocked();
    let t = reg.timer("t").count(2).register().unwrap();
    {
        let _g = t.scoped();
        time.advance(Duration::from_millis(2));
    }
    assert!(close(t.get_seconds(), 0.002));
    {
        let _g = t.scoped_at(1);
        time.advance(Duration::from_micros(1500));
    }
    assert!(close(t.get_seconds_at(1), 0.0015));
    t.add_elapsed(Duration::from_millis(7));
    assert!(close(t.get_seconds(), 0.009), "{}", t.get_seconds());
    t.add_ticks_at(1, t.clock().duration_to_ticks(Duration::from_micros(500)));
    assert!(close(t.get_seconds_at(1), 0.002));
}

#[test]
fn timer_arrays_time_elements_independently() {
    let (reg, time) = mocked();
    let t = reg.timer("t").count(3).register().unwrap();
    t.start_at(0);
    time.advance(Duration::from_millis(1));
    t.start_at(2);
    time.advance(Duration::from_millis(1));
    t.stop_at(0);
    time.advance(Duration::from_millis(1));
    t.stop_at(2);
    assert!(close(t.get_seconds_at(0), 0.002));
    assert_eq!(t.get_seconds_at(1), 0.0);
    assert!(close(t.get_seconds_at(2), 0.002));
}

#[test]
fn timer_start_is_per_thread() {
    let (reg, time) = mocked();
    let t = reg.timer("t").register().unwrap();
    t.start();
    time.advance(Duration::from_millis(1));
    // Another thread's stop does not end this thread's interval.
    let t2 = t.clone();
    std::thread::spawn(move || t2.stop()).join().unwrap();
    assert_eq!(t.get_seconds(), 0.0);
    t.stop();
    assert!(close(t.get_seconds(), 0.001));
}

#[test]
fn timer_reads_nanoseconds_with_an_unsigned_datatype() {
    let (reg, time) = mocked();
    let t = reg
        .timer("t_ns")
        .datatype(Datatype::UnsignedLongLong)
        .register()
        .unwrap();
    t.start();
    time.advance(Duration::from_nanos(1234));
    t.stop();
    let s = reg.session().unwrap();
    let h = s.handle(t.index()).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    t.add_elapsed(Duration::from_nanos(766));
    assert_eq!(h.read().unwrap(), 766);
    assert!(close(t.get_seconds(), 2e-6));
}

// ------------------------------------------------------------------ LEVEL

#[test]
fn level_inc_dec_set() {
    let reg = Registry::new();
    let l = reg.level::<u64>("queue").count(2).register().unwrap();
    l.inc();
    l.inc();
    l.inc();
    l.dec();
    assert_eq!(l.get(), 2);
    l.set(10);
    assert_eq!(l.get(), 10);
    l.dec();
    assert_eq!(l.get(), 9);
    l.set(0);
    assert_eq!(l.get(), 0);
    l.inc_at(1);
    l.dec_at(1);
    l.inc_at(1);
    assert_eq!(l.get_at(1), 1);
}

#[test]
fn level_below_zero_reads_zero() {
    let reg = Registry::new();
    let l = reg.level::<u64>("l").register().unwrap();
    l.dec();
    assert_eq!(l.get(), 0, "a transiently negative sum is clamped");
    l.inc();
    l.inc();
    assert_eq!(l.get(), 1);
}

#[test]
fn level_set_across_threads_is_the_level() {
    let reg = Registry::new();
    let l = reg.level::<u64>("l").register().unwrap();
    l.set(5);
    let l2 = l.clone();
    std::thread::spawn(move || {
        assert_eq!(l2.get(), 5);
        l2.set(3); // adds -2 in this thread's cell
        l2.inc();
    })
    .join()
    .unwrap();
    assert_eq!(l.get(), 4);
    l.set(100);
    assert_eq!(l.get(), 100);
}

#[test]
fn level_f64() {
    let reg = Registry::new();
    let l = reg.level::<f64>("fill").register().unwrap();
    l.set(2.5);
    l.inc();
    l.dec();
    l.dec();
    assert!(close(l.get(), 1.5));
}

#[test]
fn level_add_sub_any_amount_from_threads() {
    let reg = Registry::new();
    let u = reg.level::<u64>("bytes").count(2).register().unwrap();
    let small = reg.level::<u32>("slots").register().unwrap();
    let f = reg.level::<f64>("load").register().unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    u.add_at(1, 7);
                    u.sub_at(1, 2);
                    small.add(3);
                    small.sub(1);
                    f.add(0.5);
                    f.sub(0.25);
                }
            });
        }
    });
    assert_eq!(u.get_at(1), 4 * 1000 * 5);
    assert_eq!(u.get_at(0), 0);
    assert_eq!(small.get(), 4 * 1000 * 2);
    assert!(close(f.get(), 4.0 * 1000.0 * 0.25));
    // Below zero a LEVEL reads zero, and comes back exactly.
    u.sub(10);
    assert_eq!(u.get(), 0);
    u.add(15);
    assert_eq!(u.get(), 5);
}

// ----------------------------------------------- STATE, SIZE, GENERIC, %

#[test]
fn state_size_generic_set_get() {
    let reg = Registry::new();
    let s = reg.state("phase").count(2).register().unwrap();
    s.set(3);
    s.set_at(1, -7);
    assert_eq!((s.get(), s.get_at(1)), (3, -7));
    s.set(1);
    assert_eq!(s.get(), 1, "set replaces, it does not add");

    let z = reg.size::<u64>("pool").register().unwrap();
    z.set(4096);
    z.set(8192);
    assert_eq!(z.get(), 8192);
    let zf = reg.size::<f64>("pool_f").register().unwrap();
    zf.set(1.5);
    assert_eq!(zf.get(), 1.5);

    let g = reg.generic::<i64>("g").register().unwrap();
    g.set(-5);
    assert_eq!(g.get(), -5);
    let gi = reg.generic::<i32>("gi").count(2).register().unwrap();
    gi.set_at(1, i32::MIN);
    assert_eq!(gi.get_at(1), i32::MIN);
}

#[test]
fn shared_values_are_process_wide() {
    let reg = Registry::new();
    let s = reg.state("s").register().unwrap();
    let s2 = s.clone();
    std::thread::spawn(move || s2.set(9)).join().unwrap();
    assert_eq!(s.get(), 9, "a STATE is one value, not a per-thread sum");
}

#[test]
fn percentage_is_clamped() {
    let reg = Registry::new();
    let p = reg.percentage("util").count(2).register().unwrap();
    p.set(0.25);
    assert_eq!(p.get(), 0.25);
    p.set(1.5);
    assert_eq!(p.get(), 1.0);
    p.set(-0.5);
    assert_eq!(p.get(), 0.0);
    p.set(f64::NAN);
    assert_eq!(p.get(), 0.0);
    p.set_at(1, f64::INFINITY);
    assert_eq!(p.get_at(1), 1.0);
}

// ------------------------------------------------------------- WATERMARKS

#[test]
fn high_watermark_init_update_level() {
    let reg = Registry::new();
    let h = reg.high_watermark::<u64>("hw").count(3).register().unwrap();
    assert_eq!(h.level(), 0);
    h.init(5);
    assert!(
        (0..3).all(|i| h.level_at(i) == 5),
        "init sets every element"
    );
    h.update(7);
    h.update(2);
    assert_eq!(h.level(), 2, "the level is the last value recorded");
    h.update_at(2, 9);
    assert_eq!((h.level_at(1), h.level_at(2)), (5, 9));
}

#[test]
fn low_watermark_f64() {
    let reg = Registry::new();
    let l = reg.low_watermark::<f64>("lw").register().unwrap();
    l.init(10.0);
    l.update(3.5);
    assert_eq!(l.level(), 3.5);
}

#[test]
fn started_watermark_handle_sees_the_extreme_since_start() {
    let reg = Registry::new();
    let hw = reg.high_watermark::<u64>("hw").register().unwrap();
    let lw = reg.low_watermark::<u64>("lw").register().unwrap();
    hw.init(5);
    lw.init(5);
    let s = reg.session().unwrap();
    let h = s.handle(hw.index()).unwrap().typed::<u64>().unwrap();
    let l = s.handle(lw.index()).unwrap().typed::<u64>().unwrap();
    hw.update(100); // before start: not seen...
    hw.update(5); // ...the starting value is the level at start
    h.start().unwrap();
    l.start().unwrap();
    for v in [7, 12, 3, 9] {
        hw.update(v);
        lw.update(v);
    }
    assert_eq!(h.read().unwrap(), 12);
    assert_eq!(l.read().unwrap(), 3);
    assert_eq!((hw.level(), lw.level()), (9, 9));
}

#[test]
#[should_panic(expected = "out of range")]
fn watermark_element_out_of_range_panics() {
    let reg = Registry::new();
    let h = reg.high_watermark::<u64>("hw").register().unwrap();
    h.update_at(1, 3);
}

// ------------------------------------------------------- BOUND VARIABLES

#[test]
fn bound_instances_have_their_own_counts_and_values() {
    let reg = Registry::new();
    let per_peer = reg
        .counter("msgs_per_peer")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let world = per_peer.create_instance(0x101, 4).unwrap();
    let pair = per_peer.create_instance(0x102, 2).unwrap();
    assert_eq!((world.count(), pair.count()), (4, 2));
    assert_eq!(world.index(), per_peer.index());
    world.inc_at(3);
    world.inc_at(3);
    pair.inc_at(1);
    assert_eq!((world.get_at(3), pair.get_at(1), pair.get_at(0)), (2, 1, 0));
    assert_eq!(
        reg.pvars().instances(per_peer.index()).unwrap(),
        vec![0x101, 0x102]
    );

    // A tool binds a handle to an instance with the object's handle value.
    let s = reg.session().unwrap();
    let obj = ObjectRef::new(BindKind::Comm, 0x101);
    let h = s.handle_for(per_peer.index(), obj).unwrap();
    assert_eq!(h.count(), 4);
    let h = h.typed::<u64>().unwrap();
    h.start().unwrap();
    world.add_at(0, 5);
    let mut out = [0u64; 4];
    h.read_into(&mut out).unwrap();
    assert_eq!(out, [5, 0, 0, 0]);

    per_peer.drop_instance(0x101).unwrap();
    assert_eq!(
        reg.pvars().instances(per_peer.index()).unwrap(),
        vec![0x102]
    );
    assert_eq!(h.read_into(&mut out), Err(Error::inactive()));
    assert!(s.handle_for(per_peer.index(), obj).is_err());
}

#[test]
fn bound_instance_rules() {
    let reg = Registry::new();
    let fixed = reg
        .aggregate::<u64>("fixed")
        .bind(BindKind::Win)
        .count(2)
        .register_bound()
        .unwrap();
    assert!(
        fixed.create_instance(1, 3).is_err(),
        "count differs from the fixed count"
    );
    let w = fixed.create_instance(1, 2).unwrap();
    assert!(
        fixed.create_instance(1, 2).is_err(),
        "one instance per object"
    );
    assert!(fixed.drop_instance(99).is_err(), "no such instance");
    w.add_at(1, 9);
    assert_eq!(w.get_at(1), 9);

    let per = reg
        .level::<u64>("per")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    assert!(
        per.create_instance(1, 0).is_err(),
        "no zero-element instance"
    );
    // Unbound variables have no instances.
    let c = reg.counter("plain").register().unwrap();
    assert_eq!(reg.pvars().instances(c.index()).unwrap(), Vec::<u64>::new());
}

#[test]
fn recreated_instance_starts_from_zero() {
    // Dropped instances give their cells back; a new instance of the same
    // length reuses them and must not inherit the old values.
    let reg = Registry::new();
    let b = reg
        .counter("per_comm")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let t = reg
        .timer("t_per_comm")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    for round in 0..5u64 {
        let obj = 0x200 + round;
        let inst = b.create_instance(obj, 3).unwrap();
        let tim = t.create_instance(obj, 3).unwrap();
        assert_eq!(
            (0..3).map(|i| inst.get_at(i)).sum::<u64>(),
            0,
            "round {round}"
        );
        assert_eq!(tim.get_seconds_at(1), 0.0, "round {round}");
        inst.add_at(0, 10 + round);
        inst.inc_at(2);
        tim.add_elapsed(Duration::from_millis(1));
        let from_other_thread = inst.clone();
        std::thread::spawn(move || from_other_thread.add_at(1, 4))
            .join()
            .unwrap();
        assert_eq!(
            (inst.get_at(0), inst.get_at(1), inst.get_at(2)),
            (10 + round, 4, 1)
        );
        b.drop_instance(obj).unwrap();
        t.drop_instance(obj).unwrap();
    }
}

// ---------------------------------------------------- CALLBACK VARIABLES

#[test]
fn callback_variable_is_read_through_its_function() {
    static POOL: AtomicU64 = AtomicU64::new(4096);
    let reg = Registry::new();
    let v = reg
        .callback_pvar(
            "pool_bytes",
            PvarClass::Size,
            Datatype::UnsignedLongLong,
            Callbacks::new(|obj, i| {
                assert_eq!((obj, i), (None, 0));
                POOL.load(Ordering::Relaxed)
            }),
        )
        .register()
        .unwrap();
    let info = reg.pvars().info(v.index()).unwrap();
    assert_eq!(
        (info.class, info.datatype),
        (PvarClass::Size, Datatype::UnsignedLongLong)
    );
    let s = reg.session().unwrap();
    let h = s.handle(v.index()).unwrap();
    assert_eq!(h.count(), 1);
    let h = h.typed::<u64>().unwrap();
    assert_eq!(h.read().unwrap(), 4096);
    POOL.store(100, Ordering::Relaxed);
    assert_eq!(h.read().unwrap(), 100);
    v.deactivate();
    assert_eq!(reg.pvars().is_active(v.index()), Ok(false));
    assert_eq!(h.read().unwrap_err().code(), ErrorCode::InvalidIndex);
}

#[test]
fn bound_callback_variable_gets_its_count_from_notify() {
    let binds = Arc::new(AtomicUsize::new(0));
    let reg = Registry::new();
    let b = reg
        .callback_pvar(
            "per_comm_size",
            PvarClass::Level,
            Datatype::UnsignedLongLong,
            Callbacks::new(|obj, i| obj.unwrap() * 10 + i as u64).with_notify({
                let binds = binds.clone();
                move |ev, obj| {
                    if ev == Notify::Bind {
                        binds.fetch_add(1, Ordering::Relaxed);
                        return obj.map(|o| o as usize);
                    }
                    None
                }
            }),
        )
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    assert!(
        b.create_instance(3, 3).is_err(),
        "callback variables compute their instances"
    );
    let s = reg.session().unwrap();
    let h = s
        .handle_for(b.index(), ObjectRef::new(BindKind::Comm, 3))
        .unwrap();
    assert_eq!(h.count(), 3);
    let h = h.typed::<u64>().unwrap();
    let mut out = [0u64; 3];
    h.read_into(&mut out).unwrap();
    assert_eq!(out, [30, 31, 32]);
    assert_eq!(binds.load(Ordering::Relaxed), 1);
}

// ------------------------------------------------- regressions (found while writing these tests)

#[test]
fn datatype_override_must_match_the_handle_type() {
    let reg = Registry::new();
    // A Level<u64> over MPI_DOUBLE cells reads f64 bits back as an integer:
    // after one inc, get() returns 4607182418800017408 (the bits of 1.0).
    let r = reg
        .level::<u64>("l")
        .datatype(Datatype::Double)
        .register()
        .map(|l| {
            l.inc();
            l.get()
        });
    assert!(matches!(r, Err(Error::Invalid(_)) | Ok(1)), "got {r:?}");
}

#[test]
fn recreated_timer_instance_has_no_running_interval() {
    let (reg, time) = mocked();
    let t = reg
        .timer("t")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    {
        let old = t.create_instance(1, 1).unwrap();
        old.start(); // never stopped
        time.advance(Duration::from_secs(5));
        t.drop_instance(1).unwrap();
    }
    let new = t.create_instance(2, 1).unwrap(); // reuses the range
    time.advance(Duration::from_secs(1));
    new.stop(); // this instance was never started: must add nothing
    assert_eq!(new.get_seconds(), 0.0, "got {} s", new.get_seconds());
}

// ------------------------------------------- RANGES: MPI_UNSIGNED, DOUBLES

/// The keyed tool read of element 0 (datatype bits) of a fresh handle.
fn tool_read(reg: &Registry, index: usize) -> u64 {
    let tool = reg.tool();
    let s = tool.session_create().unwrap();
    let (h, _) = tool.handle_alloc(s, index, None).unwrap();
    let mut v = [0u64];
    tool.read(s, h, 0, &mut v).unwrap();
    tool.session_free(s).unwrap();
    v[0]
}

const U32_MAX: u64 = u32::MAX as u64;

/// LEVEL, SIZE and the watermarks must not overflow (MPI 4.1 §15.3.7): an
/// `MPI_UNSIGNED` one whose 64-bit value is past 2^32 − 1 reads 2^32 − 1,
/// not the value modulo 2^32, and reads exactly again once back in range.
#[test]
fn unsigned_level_saturates_and_recovers() {
    let reg = Registry::new();
    let l = reg.level::<u32>("queued_bytes").register().unwrap();
    l.add(u32::MAX);
    l.add(10);
    assert_eq!(l.get(), u32::MAX, "saturated, not wrapped to 9");
    assert_eq!(tool_read(&reg, l.index()), U32_MAX);
    // On another thread too: the sum of the threads' cells is what counts.
    let l2 = l.clone();
    std::thread::spawn(move || l2.add(1 << 31)).join().unwrap();
    assert_eq!(l.get(), u32::MAX);
    l.sub(1 << 31);
    l.sub(20);
    assert_eq!(l.get(), u32::MAX - 10, "exact again once back in range");
    assert_eq!(tool_read(&reg, l.index()), U32_MAX - 10);
}

/// The classes that may overflow (COUNTER, AGGREGATE, TIMER, GENERIC) wrap
/// their `MPI_UNSIGNED` values at 2^32, so a tool's differences of
/// successive reads stay right modulo 2^32.
#[test]
fn unsigned_aggregate_wraps() {
    assert!(PvarClass::Aggregate.can_overflow() && !PvarClass::Level.can_overflow());
    let reg = Registry::new();
    let a = reg.aggregate::<u32>("bytes").register().unwrap();
    let s = reg.session().unwrap();
    let h = s.handle(a.index()).unwrap().typed::<u32>().unwrap();
    h.start().unwrap();
    a.add(u32::MAX);
    let before = h.read().unwrap();
    a.add(10);
    let after = h.read().unwrap();
    assert_eq!(before, u32::MAX);
    assert_eq!(after, 9, "wrapped");
    assert_eq!(after.wrapping_sub(before), 10, "the difference is right");
}

/// Values a component computes in a callback are fitted like the engine's
/// own: `MPI_UNSIGNED` saturates for the classes that must not overflow and
/// wraps for the others.
#[test]
fn unsigned_callback_values_saturate_or_wrap_by_class() {
    const BIG: u64 = 5_000_000_000; // 2^32 + 705032704
    static VALUE: AtomicU64 = AtomicU64::new(BIG);
    let reg = Registry::new();
    let var = |class: PvarClass| {
        let name = format!("cb_{}", class.short_name());
        let cb = Callbacks::new(|_, _| VALUE.load(Ordering::Relaxed));
        reg.callback_pvar(&name, class, Datatype::Unsigned, cb)
            .register()
            .unwrap()
            .index()
    };
    for class in [
        PvarClass::Level,
        PvarClass::Size,
        PvarClass::HighWatermark,
        PvarClass::LowWatermark,
    ] {
        assert_eq!(tool_read(&reg, var(class)), U32_MAX, "{class:?}");
    }
    assert_eq!(tool_read(&reg, var(PvarClass::Generic)), BIG & U32_MAX);
    // SUM classes read the growth since their start: from 0 to BIG.
    let sums = [var(PvarClass::Counter), var(PvarClass::Aggregate)];
    let s = reg.session().unwrap();
    VALUE.store(0, Ordering::Relaxed);
    let handles: Vec<_> = sums
        .iter()
        .map(|&i| {
            let h = s.handle(i).unwrap().typed::<u32>().unwrap();
            h.start().unwrap();
            h
        })
        .collect();
    VALUE.store(BIG, Ordering::Relaxed);
    for h in &handles {
        assert_eq!(u64::from(h.read().unwrap()), BIG & U32_MAX, "wrapped");
    }
}

/// A PERCENTAGE is "between 0.0 and 1.0", and a LEVEL, SIZE or watermark is
/// non-negative: a callback's (or a `set`'s) value outside is clamped when
/// read, NaN reads 0.
#[test]
fn double_values_are_kept_in_their_class_range() {
    static VALUE: AtomicU64 = AtomicU64::new(0);
    let set = |x: f64| VALUE.store(x.to_bits(), Ordering::Relaxed);
    let reg = Registry::new();
    let var = |name: &str, class| {
        reg.callback_pvar(
            name,
            class,
            Datatype::Double,
            Callbacks::new(|_, _| VALUE.load(Ordering::Relaxed)),
        )
        .register()
        .unwrap()
        .index()
    };
    let pct = var("cb_busy", PvarClass::Percentage);
    let read = |i| f64::from_bits(tool_read(&reg, i));
    for (x, want) in [
        (0.25, 0.25),
        (1.5, 1.0),
        (-0.5, 0.0),
        (f64::INFINITY, 1.0),
        (f64::NAN, 0.0),
    ] {
        set(x);
        assert_eq!(read(pct), want, "PERCENTAGE callback returning {x}");
    }
    let non_negative = [
        var("cb_level", PvarClass::Level),
        var("cb_size", PvarClass::Size),
        var("cb_high", PvarClass::HighWatermark),
        var("cb_low", PvarClass::LowWatermark),
    ];
    for (x, want) in [(2.5, 2.5), (-3.0, 0.0), (f64::NAN, 0.0)] {
        set(x);
        for &i in &non_negative {
            assert_eq!(
                read(i),
                want,
                "{} returning {x}",
                reg.pvars().info(i).unwrap().name
            );
        }
    }
    // The engine's own: a SIZE set negative, a LOWWATERMARK updated below 0.
    let size = reg.size::<f64>("pool").register().unwrap();
    size.set(-2.0);
    assert_eq!(size.get(), 0.0);
    assert_eq!(f64::from_bits(tool_read(&reg, size.index())), 0.0);
    let low = reg.low_watermark::<f64>("free_low").register().unwrap();
    let s = reg.session().unwrap();
    let h = s.handle(low.index()).unwrap().typed::<f64>().unwrap();
    h.start().unwrap();
    low.update(-5.0);
    assert_eq!(h.read().unwrap(), 0.0);
    assert_eq!(low.level(), 0.0);
    low.update(7.0);
    assert_eq!(low.level(), 7.0);
}
