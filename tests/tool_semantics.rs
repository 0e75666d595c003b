//! Session and handle semantics: SUM accum/offset, watermarks, isolation,
//! continuous variables, arrays, bound objects, callbacks, many handles.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use pvar::{
    BindKind, Callbacks, Datatype, HandleId, Notify, ObjectRef, PvarClass, Registry, SessionId,
    Tool,
};

/// Element 0 of a handle, through the keyed API.
fn read_u64(tool: &Tool, s: SessionId, h: HandleId) -> pvar::Result<u64> {
    let mut v = [0u64];
    tool.read(s, h, 0, &mut v)?;
    Ok(v[0])
}

#[test]
fn sum_handle_follows_accum_offset_current() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let s = reg.session().unwrap();
    let h = s.handle(c.index()).unwrap().typed::<u64>().unwrap();
    c.add(100); // stopped after allocation: not counted
    assert_eq!(h.read().unwrap(), 0);
    h.start().unwrap();
    c.add(7);
    assert_eq!(h.read().unwrap(), 7, "running: accum + current - offset");
    h.stop().unwrap();
    c.add(1000);
    assert_eq!(h.read().unwrap(), 7, "stopped: accum");
    h.start().unwrap();
    c.add(3);
    assert_eq!(h.read().unwrap(), 10);
    h.reset().unwrap();
    assert_eq!(h.read().unwrap(), 0);
    c.add(2);
    let mut out = [0u64];
    h.readreset_into(&mut out).unwrap();
    assert_eq!(out[0], 2);
    assert_eq!(h.read().unwrap(), 0);
    h.write(50).unwrap();
    c.add(1);
    assert_eq!(h.read().unwrap(), 51);
    assert_eq!(c.get(), 1113, "the hot cells are never written by a tool");
}

#[test]
fn sessions_are_isolated() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let a = reg.session().unwrap();
    let b = reg.session().unwrap();
    let ha = a.handle(c.index()).unwrap().typed::<u64>().unwrap();
    let hb = b.handle(c.index()).unwrap().typed::<u64>().unwrap();
    ha.start().unwrap();
    c.add(5);
    hb.start().unwrap();
    c.add(1);
    ha.reset().unwrap();
    c.add(2);
    hb.stop().unwrap();
    c.add(4);
    assert_eq!(ha.read().unwrap(), 6);
    assert_eq!(hb.read().unwrap(), 3);
    hb.write(99).unwrap();
    assert_eq!(ha.read().unwrap(), 6, "a write in b does not reach a");
}

#[test]
fn continuous_sum_runs_from_allocation() {
    let reg = Registry::new();
    let c = reg.counter("c").continuous(true).register().unwrap();
    c.add(10);
    let s = reg.session().unwrap();
    let h = s.handle(c.index()).unwrap().typed::<u64>().unwrap();
    assert_eq!(h.read().unwrap(), 0, "starting value is 0");
    c.add(4);
    assert_eq!(h.read().unwrap(), 4);
    assert!(h.handle().is_started());
}

#[test]
fn timer_and_f64_aggregate_handles() {
    let (clock, time) = pvar::Clock::mock();
    let reg = Registry::with_clock(clock);
    let t = reg.timer("t").register().unwrap();
    let a = reg.aggregate::<f64>("a").register().unwrap();
    let s = reg.session().unwrap();
    let ht = s.handle(t.index()).unwrap().typed::<f64>().unwrap();
    let ha = s.handle(a.index()).unwrap().typed::<f64>().unwrap();
    s.start_all().unwrap();
    t.start();
    time.advance(std::time::Duration::from_millis(250));
    t.stop();
    a.add(1.5);
    a.add(2.25);
    assert!((ht.read().unwrap() - 0.25).abs() < 1e-6);
    assert_eq!(ha.read().unwrap(), 3.75);
    ht.write(1.0).unwrap();
    assert!((ht.read().unwrap() - 1.0).abs() < 1e-6);
}

#[test]
fn watermark_handles_track_marks_per_session() {
    let reg = Registry::new();
    let hi = reg.high_watermark::<u64>("q").register().unwrap();
    let lo = reg.low_watermark::<u64>("q").register().unwrap();
    hi.init(5);
    lo.init(5);
    let s = reg.session().unwrap();
    let hh = s.handle(hi.index()).unwrap().typed::<u64>().unwrap();
    let hl = s.handle(lo.index()).unwrap().typed::<u64>().unwrap();
    hi.update(50); // stopped: not seen
    lo.update(50);
    s.start_all().unwrap();
    assert_eq!(
        hh.read().unwrap(),
        50,
        "starting value is the level at start"
    );
    for v in [60, 10, 70, 20] {
        hi.update(v);
        lo.update(v);
    }
    assert_eq!(hh.read().unwrap(), 70);
    assert_eq!(hl.read().unwrap(), 10);
    s.stop_all().unwrap();
    hi.update(1000);
    lo.update(0);
    assert_eq!(hh.read().unwrap(), 70, "stopped handles are not updated");
    assert_eq!(hl.read().unwrap(), 10);
    s.start_all().unwrap();
    s.reset_all().unwrap();
    assert_eq!(hh.read().unwrap(), 1000, "reset: the current level");
    assert_eq!(hl.read().unwrap(), 0, "reset: the current level");
    hi.update(3);
    let mut out = [0u64];
    hh.readreset_into(&mut out).unwrap();
    assert_eq!(out[0], 1000, "readreset returns the mark before the reset");
    assert_eq!(hh.read().unwrap(), 3, "and restarts from the current level");
    // A second session sees its own marks.
    let s2 = reg.session().unwrap();
    let h2 = s2.handle(hi.index()).unwrap().typed::<u64>().unwrap();
    h2.start().unwrap();
    hi.update(2);
    assert_eq!(h2.read().unwrap(), 3, "level at start was 3");
    assert_eq!(hh.read().unwrap(), 3);
}

#[test]
fn memoryless_classes_read_the_current_value_in_every_session() {
    let reg = Registry::new();
    let lvl = reg.level::<u64>("l").register().unwrap();
    let st = reg.state("st").register().unwrap();
    let pct = reg.percentage("p").register().unwrap();
    let a = reg.session().unwrap();
    let b = reg.session().unwrap();
    let la = a.handle(lvl.index()).unwrap().typed::<u64>().unwrap();
    let lb = b.handle(lvl.index()).unwrap().typed::<u64>().unwrap();
    let sa = a.handle(st.index()).unwrap().typed::<i32>().unwrap();
    let pa = a.handle(pct.index()).unwrap().typed::<f64>().unwrap();
    lvl.set(9);
    st.set(-2);
    pct.set(0.5);
    assert_eq!(la.read().unwrap(), 9);
    assert_eq!(lb.read().unwrap(), 9);
    assert_eq!(sa.read().unwrap(), -2);
    assert_eq!(pa.read().unwrap(), 0.5);
}

#[test]
fn arrays_and_bound_objects_through_handles() {
    let reg = Registry::new();
    let per_peer = reg
        .counter("per_peer")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let world = per_peer.create_instance(0x101, 3).unwrap();
    let pair = per_peer.create_instance(0x200, 2).unwrap();
    let s = reg.session().unwrap();
    let hw = s
        .handle_for(per_peer.index(), ObjectRef::new(BindKind::Comm, 0x101))
        .unwrap()
        .typed::<u64>()
        .unwrap();
    let hp = s
        .handle_for(per_peer.index(), ObjectRef::new(BindKind::Comm, 0x200))
        .unwrap()
        .typed::<u64>()
        .unwrap();
    let (nw, np) = (hw.handle().count(), hp.handle().count());
    assert_eq!((nw, np), (3, 2), "count depends on the object");
    s.start_all().unwrap();
    world.inc_at(2);
    world.add_at(0, 4);
    pair.inc_at(1);
    let mut out = [0u64; 3];
    hw.read_into(&mut out).unwrap();
    assert_eq!(out, [4, 0, 1]);
    let mut out = [0u64; 2];
    hp.read_into(&mut out).unwrap();
    assert_eq!(out, [0, 1]);
    per_peer.drop_instance(0x200).unwrap();
    assert_eq!(hp.read_into(&mut out).unwrap_err(), pvar::Error::inactive());
    drop(hp); // frees the handle
}

#[test]
fn callback_variables_are_notified_and_count_per_object() {
    let reg = Registry::new();
    let events = Arc::new(AtomicUsize::new(0));
    let ev = events.clone();
    let cb =
        Callbacks::new(|obj, i| obj.unwrap_or(0) * 10 + i as u64).with_notify(move |n, obj| {
            ev.fetch_add(1, Ordering::SeqCst);
            match n {
                Notify::Bind => obj.map(|o| o as usize),
                _ => None,
            }
        });
    let var = reg
        .callback_pvar(
            "computed",
            PvarClass::Counter,
            Datatype::UnsignedLongLong,
            cb,
        )
        .bind(BindKind::Win)
        .per_object_count()
        .register_bound()
        .unwrap();
    let s = reg.session().unwrap();
    let h = s
        .handle_for(var.index(), ObjectRef::new(BindKind::Win, 3))
        .unwrap();
    assert_eq!(h.count(), 3, "notify(Bind) decides the count");
    let h = h.typed::<u64>().unwrap();
    h.start().unwrap();
    h.stop().unwrap();
    let mut out = [0u64; 3];
    h.read_into(&mut out).unwrap();
    assert_eq!(
        out,
        [0, 0, 0],
        "SUM semantics over the callback's current values"
    );
    drop(h); // frees the handle
    assert_eq!(events.load(Ordering::SeqCst), 4, "bind, start, stop, free");
}

/// Sets a progress counter to its maximum when dropped: a thread that ends,
/// even by panicking, no longer holds up the threads waiting for its
/// progress (the test then fails at its join instead of hanging).
struct ReleaseOnExit(Arc<AtomicUsize>);

impl Drop for ReleaseOnExit {
    fn drop(&mut self) {
        self.0.store(usize::MAX, Ordering::Release);
    }
}

#[test]
fn sum_semantics_exact_under_concurrent_updaters() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let s = reg.session().unwrap();
    let h = s.handle(c.index()).unwrap().typed::<u64>().unwrap();
    h.start().unwrap();
    const THREADS: u64 = 4;
    const N: u64 = 500_000;
    // The workers go on past N until the tool has done this many
    // readresets, so that many happen while they update, on any schedule.
    const RESETS: usize = 200;
    let resets = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(THREADS as usize + 1));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (c, barrier, resets) = (c.clone(), barrier.clone(), resets.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut n = 0u64;
                while n < N || resets.load(Ordering::Acquire) < RESETS {
                    c.inc();
                    n += 1;
                }
                n
            })
        })
        .collect();
    barrier.wait();
    // Read-reset while the workers run: the deltas must add up exactly.
    let mut total = 0u64;
    let mut out = [0u64];
    // If this thread panics, the workers must not wait for it forever.
    let _release = ReleaseOnExit(resets.clone());
    let mut done = 0;
    while workers.iter().any(|w| !w.is_finished()) {
        let v1 = h.read().unwrap();
        let v2 = h.read().unwrap();
        assert!(v2 >= v1, "counter reads never go backwards between resets");
        h.readreset_into(&mut out).unwrap();
        assert!(out[0] >= v2, "a readreset returns at least the last read");
        total += out[0];
        done += 1;
        resets.store(done, Ordering::Release);
    }
    assert!(done >= RESETS, "{done} readresets while the workers ran");
    let updates: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(updates >= THREADS * N);
    h.readreset_into(&mut out).unwrap();
    total += out[0];
    assert_eq!(total, updates);
}

#[test]
fn watermark_correct_while_handles_start_stop_and_free_concurrently() {
    let reg = Registry::new();
    let hi = reg.high_watermark::<u64>("hw").register().unwrap();
    let s = reg.session().unwrap();
    let keep = s.handle(hi.index()).unwrap().typed::<u64>().unwrap();
    keep.start().unwrap();
    // The updaters keep going until the churning thread has completed
    // enough alloc/start/read/stop/free cycles, so the two overlap however
    // the threads are scheduled.
    const CYCLES: usize = 200;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cycles = Arc::new(AtomicUsize::new(0));
    let updaters: Vec<_> = (0..2u64)
        .map(|t| {
            let hi = hi.clone();
            let cycles = cycles.clone();
            std::thread::spawn(move || {
                let mut i = 0u64;
                while i < 200_000 || cycles.load(Ordering::Relaxed) < CYCLES {
                    hi.update((i * 7 + t) % 1000);
                    i += 1;
                }
                hi.update(5000 + t);
            })
        })
        .collect();
    let churn = {
        let reg = reg.clone();
        let done = done.clone();
        let cycles = cycles.clone();
        let index = hi.index();
        std::thread::spawn(move || {
            let s = reg.session().unwrap();
            let mut n = 0;
            let _release = ReleaseOnExit(cycles.clone());
            while !done.load(Ordering::Relaxed) {
                let h = s.handle(index).unwrap().typed::<u64>().unwrap();
                h.start().unwrap();
                let v = h.read().unwrap();
                assert!(v <= 5001);
                h.stop().unwrap();
                drop(h); // frees the handle
                n += 1;
                cycles.store(n, Ordering::Relaxed);
            }
            n
        })
    };
    for u in updaters {
        u.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    let n = churn.join().unwrap();
    assert!(n >= CYCLES, "{n} churn cycles");
    assert_eq!(keep.read().unwrap(), 5001, "the highest level was seen");
}

#[test]
fn a_thousand_handles_in_ten_sessions() {
    let reg = Registry::new();
    let counters: Vec<_> = (0..100)
        .map(|i| reg.counter(&format!("c{i}")).register().unwrap())
        .collect();
    let sessions: Vec<_> = (0..10).map(|_| reg.session().unwrap()).collect();
    let handles: Vec<Vec<_>> = sessions
        .iter()
        .map(|s| {
            counters
                .iter()
                .map(|c| s.tool().handle_alloc(s.id(), c.index(), None).unwrap().0)
                .collect()
        })
        .collect();
    assert_eq!(reg.tool().stats().handles, 1000);
    for (k, s) in sessions.iter().enumerate() {
        if k % 2 == 0 {
            s.start_all().unwrap();
        }
    }
    for (i, c) in counters.iter().enumerate() {
        c.add(i as u64);
    }
    for (k, s) in sessions.iter().enumerate() {
        for (i, h) in handles[k].iter().enumerate() {
            let expect = if k % 2 == 0 { i as u64 } else { 0 };
            assert_eq!(read_u64(s.tool(), s.id(), *h).unwrap(), expect);
        }
    }
    drop(sessions);
    assert_eq!(
        reg.tool().stats().handles,
        0,
        "freeing a session frees its handles"
    );
    assert_eq!(reg.tool().stats().sessions, 0);
}

#[test]
fn large_arrays_read_write_and_readreset_in_ranges() {
    let reg = Registry::new();
    let c = reg.counter("wide").count(1000).register().unwrap();
    let s = reg.session().unwrap();
    let (h, n) = reg.tool().handle_alloc(s.id(), c.index(), None).unwrap();
    assert_eq!(n, 1000);
    reg.tool().start(s.id(), h).unwrap();
    for i in 0..1000 {
        c.add_at(i, i as u64);
    }
    // Read in pieces of 256, as the C interface does from its stack buffer.
    let mut whole = vec![0u64; 1000];
    let mut first = 0;
    while first < 1000 {
        let n = (1000 - first).min(256);
        reg.tool()
            .read(s.id(), h, first, &mut whole[first..first + n])
            .unwrap();
        first += n;
    }
    assert!(whole.iter().enumerate().all(|(i, &v)| v == i as u64));
    let mut all = vec![0u64; 1000];
    reg.tool().read(s.id(), h, 0, &mut all).unwrap();
    assert_eq!(all, whole, "a ranged read equals a whole read");
    let mut part = [0u64; 10];
    reg.tool().readreset(s.id(), h, 990, &mut part).unwrap();
    assert_eq!(part.to_vec(), (990..1000).collect::<Vec<u64>>());
    reg.tool().read(s.id(), h, 990, &mut part).unwrap();
    assert_eq!(part, [0; 10], "only the range was reset");
    reg.tool().write(s.id(), h, 0, &[7, 8]).unwrap();
    reg.tool().read(s.id(), h, 0, &mut part[..3]).unwrap();
    assert_eq!(part[..3], [7, 8, 2]);
    assert_eq!(
        reg.tool()
            .read(s.id(), h, 995, &mut [0; 10])
            .unwrap_err()
            .code(),
        pvar::ErrorCode::Invalid,
        "a range past the count"
    );
    assert_eq!(
        reg.tool()
            .read(s.id(), h, usize::MAX, &mut [0; 2])
            .unwrap_err()
            .code(),
        pvar::ErrorCode::Invalid,
        "overflowing range"
    );
}

/// `tool().stats().reads` counts every successful read exactly, whether the
/// reading thread counts in its own cell (it has updated a variable of the
/// registry, so its record cache holds the registry's cell space) or in
/// the shared fallback (it never has); failed reads are not counted.
#[test]
fn reads_served_are_counted_exactly_on_every_thread() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let s = reg.session().unwrap();
    let (h, _) = s.tool().handle_alloc(s.id(), c.index(), None).unwrap();
    let before = reg.tool().stats().reads;
    std::thread::scope(|scope| {
        for updates_first in [true, false, true, false] {
            let (c, s) = (&c, &s);
            scope.spawn(move || {
                if updates_first {
                    c.inc();
                }
                for _ in 0..10_000 {
                    read_u64(s.tool(), s.id(), h).unwrap();
                }
                let mut two = [0u64; 2];
                // The whole handle (count 1) is read; a range past the
                // count fails (the old API's "short buffer" case).
                assert!(s.tool().read(s.id(), h, 0, &mut two[..1]).is_ok());
                assert!(
                    s.tool().read(s.id(), h, 0, &mut two).is_err(),
                    "range past the count"
                );
            });
        }
    });
    assert_eq!(reg.tool().stats().reads - before, 4 * 10_001);
}

/// Notifications heard, with their object.
type Heard = Arc<std::sync::Mutex<Vec<(Notify, Option<u64>)>>>;

/// A callback variable whose notify function records every event with its
/// object (Bind gives 2 elements per bound object); returns the variable's
/// index and the record.
fn recording_callback_var(
    reg: &Registry,
    name: &str,
    class: PvarClass,
    continuous: bool,
    bind: Option<BindKind>,
) -> (usize, Heard) {
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let ev = events.clone();
    let cb = Callbacks::new(|_, _| 3).with_notify(move |n, obj| {
        ev.lock().unwrap().push((n, obj));
        (n == Notify::Bind && obj.is_some()).then_some(2)
    });
    let b = reg
        .callback_pvar(name, class, Datatype::UnsignedLongLong, cb)
        .continuous(continuous);
    let index = match bind {
        None => b.register().unwrap().index(),
        Some(kind) => b.bind(kind).register_bound().unwrap().index(),
    };
    (index, events)
}

#[test]
fn continuous_callback_handle_hears_bind_start_at_alloc_and_stop_free_at_free() {
    use Notify::{Bind, Free, Start, Stop};
    let reg = Registry::new();
    for class in [PvarClass::Counter, PvarClass::Level, PvarClass::Generic] {
        // Unbound: the object is None.
        let (v, events) = recording_callback_var(&reg, "cont", class, true, None);
        let s = reg.session().unwrap();
        let h = s.handle(v).unwrap();
        assert!(
            reg.tool().is_started(s.id(), h.id()).unwrap(),
            "runs from allocation"
        );
        assert_eq!(*events.lock().unwrap(), [(Bind, None), (Start, None)]);
        assert!(h.start().is_err() && h.stop().is_err());
        drop(h); // frees the handle
        assert_eq!(
            *events.lock().unwrap(),
            [(Bind, None), (Start, None), (Stop, None), (Free, None)],
            "{class:?}"
        );
        // Bound: each event names the object.
        let (v, events) =
            recording_callback_var(&reg, "cont_bound", class, true, Some(BindKind::Comm));
        let h = s.handle_for(v, ObjectRef::new(BindKind::Comm, 9)).unwrap();
        assert_eq!(h.count(), 2, "Bind decides the count");
        drop(h); // frees the handle
        let o = Some(9);
        assert_eq!(
            *events.lock().unwrap(),
            [(Bind, o), (Start, o), (Stop, o), (Free, o)],
            "{class:?}"
        );
        // Freeing the session frees the handle: same ending.
        // (A keyed handle: a typed one would have to be dropped first.)
        s.tool()
            .handle_alloc(s.id(), v, Some(ObjectRef::new(BindKind::Comm, 4)))
            .unwrap();
        events.lock().unwrap().clear();
        drop(s);
        assert_eq!(
            *events.lock().unwrap(),
            [(Stop, Some(4)), (Free, Some(4))],
            "{class:?}"
        );
    }
}

#[test]
fn non_continuous_callback_handle_hears_start_and_stop_when_the_tool_asks() {
    use Notify::{Bind, Free, Start, Stop};
    let reg = Registry::new();
    for class in [PvarClass::Counter, PvarClass::Generic] {
        let (v, events) = recording_callback_var(&reg, "ctl", class, false, None);
        let s = reg.session().unwrap();
        // Never started: no Start, no Stop.
        let h = s.handle(v).unwrap();
        assert!(!reg.tool().is_started(s.id(), h.id()).unwrap());
        assert_eq!(*events.lock().unwrap(), [(Bind, None)]);
        drop(h); // frees the handle
        assert_eq!(*events.lock().unwrap(), [(Bind, None), (Free, None)]);
        // Started and stopped by the tool.
        events.lock().unwrap().clear();
        let h = s.handle(v).unwrap();
        h.start().unwrap();
        h.stop().unwrap();
        drop(h); // frees the handle
        assert_eq!(
            *events.lock().unwrap(),
            [(Bind, None), (Start, None), (Stop, None), (Free, None)],
            "{class:?}"
        );
        // Freed while started: Stop before Free, so every Start is stopped.
        events.lock().unwrap().clear();
        let h = s.handle(v).unwrap();
        h.start().unwrap();
        drop(h); // frees the handle
        assert_eq!(
            *events.lock().unwrap(),
            [(Bind, None), (Start, None), (Stop, None), (Free, None)],
            "{class:?}"
        );
    }
}

#[test]
fn a_refused_bound_callback_handle_is_told_free_after_its_bind() {
    let reg = Registry::new();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let ev = events.clone();
    // Bind gives no count for a per-object variable: the alloc fails.
    let v = reg
        .callback_pvar(
            "no_count",
            PvarClass::Level,
            Datatype::UnsignedLongLong,
            Callbacks::new(|_, _| 0).with_notify(move |n, obj| {
                ev.lock().unwrap().push((n, obj));
                None
            }),
        )
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let s = reg.session().unwrap();
    assert!(
        s.handle_for(v.index(), ObjectRef::new(BindKind::Comm, 1))
            .is_err()
    );
    assert_eq!(
        *events.lock().unwrap(),
        [(Notify::Bind, Some(1)), (Notify::Free, Some(1))]
    );
}

/// Issue 28, item 4: a free never waits for another thread's operation on
/// the handle or session. A reader on another thread is parked inside a
/// callback variable's read (holding its reference on the handle) while
/// `handle_free` and then `session_free` run on a third thread; both must
/// return while the reader is still inside (the reader is let go once they
/// returned, or after 10 s: a free that waited for it would wait that
/// long and fail here instead of hanging). The handle is released (Free
/// notified) exactly once, never while the reader is inside: at the first
/// tool-side allocation after the reader left.
#[test]
fn frees_do_not_wait_for_a_reader_inside_and_release_after_it_left() {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    let reg = Registry::new();
    let inside = Arc::new(AtomicBool::new(false));
    let go = Arc::new(AtomicBool::new(false));
    let frees = Arc::new(AtomicUsize::new(0));
    let var = {
        let (inside, go, frees_r, frees_n) =
            (inside.clone(), go.clone(), frees.clone(), frees.clone());
        reg.callback_pvar(
            "blocking_read",
            PvarClass::Size,
            Datatype::UnsignedLongLong,
            Callbacks::new(move |_obj, _i| {
                inside.store(true, Ordering::Release);
                while !go.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                assert_eq!(
                    frees_r.load(Ordering::Acquire),
                    0,
                    "released under a reader"
                );
                7
            })
            .with_notify(move |n, _obj| {
                if n == Notify::Free {
                    frees_n.fetch_add(1, Ordering::AcqRel);
                }
                None
            }),
        )
        .register()
        .unwrap()
    };
    for free_session_too in [false, true] {
        inside.store(false, Ordering::Relaxed);
        go.store(false, Ordering::Relaxed);
        frees.store(0, Ordering::Relaxed);
        let tool = reg.tool();
        let s = tool.session_create().unwrap();
        let (h, _) = tool.handle_alloc(s, var.index(), None).unwrap();
        let reader = {
            let reg = reg.clone();
            std::thread::spawn(move || read_u64(reg.tool(), s, h))
        };
        while !inside.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        let freer = {
            let reg = reg.clone();
            std::thread::spawn(move || {
                if free_session_too {
                    reg.tool().session_free(s)
                } else {
                    reg.tool().handle_free(s, h)?;
                    reg.tool().session_free(s)
                }
            })
        };
        let start = Instant::now();
        while !freer.is_finished() && start.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
        }
        let returned = freer.is_finished();
        go.store(true, Ordering::Release);
        assert!(returned, "a free waited for the reader inside the handle");
        freer.join().unwrap().unwrap();
        assert_eq!(
            reader.join().unwrap().unwrap(),
            7,
            "the reader finished its read"
        );
        let stats = tool.stats();
        assert_eq!(
            (stats.sessions, stats.handles),
            (0, 0),
            "the keys died at the free"
        );
        assert_eq!(
            read_u64(tool, s, h).unwrap_err().code(),
            pvar::ErrorCode::InvalidSession
        );
        // The reader left last: the next allocation releases the handle.
        assert_eq!(frees.load(Ordering::Acquire), 0);
        let s2 = tool.session_create().unwrap();
        assert_eq!(
            frees.load(Ordering::Acquire),
            1,
            "released once, after the reader left"
        );
        tool.session_free(s2).unwrap();
        assert_eq!(frees.load(Ordering::Acquire), 1);
    }
}
