//! MPI 4 events through the Rust API: declaring types and sources, the
//! callback-selection rule, deferral to delivery points, drops and the
//! dropped handler, freeing (from outside and from inside a callback),
//! objects, categories, and exactly-once delivery under threads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Barrier, Mutex};

use pvar::{BindKind, CbSafety, Datatype, ErrorCode, ObjectRef, Registry, SourceInfo, SourceOrder};

fn counter() -> (Arc<AtomicU64>, Arc<AtomicU64>) {
    let c = Arc::new(AtomicU64::new(0));
    (c.clone(), c)
}

#[test]
fn a_record_reaches_the_callback_with_its_layout_timestamp_and_source() {
    let reg = Registry::new();
    let ev = reg
        .event::<(u64, i32, f64)>("recv_done")
        .description("bytes, peer, seconds")
        .register()
        .unwrap();
    let info = reg.events().info(ev.index()).unwrap();
    assert_eq!(info.elements.len(), 3);
    assert_eq!(info.elements[1].0, Datatype::Int);
    assert_eq!(reg.events().index("recv_done").unwrap(), ev.index());
    assert_eq!(
        reg.events().index("nope").unwrap_err().code(),
        ErrorCode::InvalidName
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let r = reg.event_registration(ev.index(), None).unwrap();
    let s = seen.clone();
    r.on_event(CbSafety::ThreadSafe, move |inst, safety| {
        assert_eq!(inst.read::<i32>(0).unwrap_err().code(), ErrorCode::Invalid);
        assert_eq!(
            inst.read::<u64>(3).unwrap_err().code(),
            ErrorCode::InvalidIndex
        );
        s.lock().unwrap().push((
            inst.read::<u64>(0).unwrap(),
            inst.read::<i32>(1).unwrap(),
            inst.read::<f64>(2).unwrap(),
            inst.timestamp(),
            inst.source(),
            safety,
            inst.record().len(),
        ));
    })
    .unwrap();
    let before = reg.events().source_timestamp(0).unwrap();
    ev.raise(&(4096, -3, 0.5));
    let after = reg.events().source_timestamp(0).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let (b, p, t, ts, src, safety, len) = seen[0];
    assert_eq!((b, p, t, src, len), (4096, -3, 0.5, 0, info.extent));
    assert!(before <= ts && ts <= after, "timestamp taken at the raise");
    assert_eq!(
        safety,
        CbSafety::ThreadSafe,
        "unserialised: at least THREAD_SAFE"
    );
}

#[test]
fn no_callback_no_delivery_and_raise_is_unobserved() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("quiet").register().unwrap();
    assert!(!ev.is_observed());
    let r = reg.event_registration(ev.index(), None).unwrap();
    assert!(
        !ev.is_observed(),
        "a registration without callback does not subscribe"
    );
    let (n, n2) = counter();
    r.on_event(CbSafety::AsyncSignalSafe, move |_, _| {
        n2.fetch_add(1, Relaxed);
    })
    .unwrap();
    assert!(ev.is_observed());
    ev.raise(&1);
    drop(r);
    assert!(!ev.is_observed(), "freeing unsubscribes");
    ev.raise(&1);
    assert_eq!(n.load(Relaxed), 1);
    assert_eq!(reg.events().stats().delivered, 1);
}

#[test]
fn the_lowest_level_valid_at_the_point_is_chosen() {
    let reg = Registry::new();
    let ev = reg.event::<()>("tick").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let used = Arc::new(Mutex::new(Vec::new()));
    for level in [
        CbSafety::MpiRestricted,
        CbSafety::ThreadSafe,
        CbSafety::AsyncSignalSafe,
    ] {
        let u = used.clone();
        r.on_event(level, move |_, ctx| u.lock().unwrap().push((level, ctx)))
            .unwrap();
    }
    // A point where anything goes, token free: the MPI_RESTRICTED one.
    ev.raise(&());
    // A point inside the component's locks, token free: MPI_RESTRICTED too.
    ev.raise_in(CbSafety::MpiRestricted, None, &());
    // A THREAD_SAFE point: the THREAD_SAFE one.
    ev.raise_in(CbSafety::ThreadSafe, None, &());
    // A signal handler's point: only the ASYNC_SIGNAL_SAFE one.
    ev.raise_in(CbSafety::AsyncSignalSafe, None, &());
    assert_eq!(
        *used.lock().unwrap(),
        vec![
            (CbSafety::MpiRestricted, CbSafety::None),
            (CbSafety::MpiRestricted, CbSafety::MpiRestricted),
            (CbSafety::ThreadSafe, CbSafety::ThreadSafe),
            (CbSafety::AsyncSignalSafe, CbSafety::AsyncSignalSafe),
        ]
    );
    // Registering at a level again replaces it; None removes it.
    r.clear_callback(CbSafety::MpiRestricted).unwrap();
    used.lock().unwrap().clear();
    ev.raise(&());
    assert_eq!(
        *used.lock().unwrap(),
        vec![(CbSafety::ThreadSafe, CbSafety::ThreadSafe)]
    );
}

#[test]
fn an_event_no_callback_may_take_here_waits_for_a_delivery_point() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("late").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    r.on_event(CbSafety::None, move |inst, ctx| {
        g.lock()
            .unwrap()
            .push((inst.read::<u64>(0).unwrap(), inst.timestamp(), ctx));
    })
    .unwrap();
    let t0 = reg.events().source_timestamp(0).unwrap();
    ev.raise_in(CbSafety::ThreadSafe, None, &1);
    ev.raise_in(CbSafety::AsyncSignalSafe, None, &2); // this thread's buffer exists now
    assert!(got.lock().unwrap().is_empty(), "not at a THREAD_SAFE point");
    assert_eq!(reg.events().waiting(), 2);
    assert_eq!(
        reg.events().deliver(CbSafety::ThreadSafe),
        0,
        "still not allowed"
    );
    let t1 = reg.events().source_timestamp(0).unwrap();
    assert_eq!(reg.events().deliver(CbSafety::None), 2);
    let got = got.lock().unwrap();
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        vec![1, 2],
        "in order"
    );
    assert!(
        got.iter().all(|g| t0 <= g.1 && g.1 <= t1),
        "raise-time timestamps"
    );
    assert!(got.iter().all(|g| g.2 == CbSafety::None));
    let st = reg.events().stats();
    assert_eq!(
        (st.raised, st.deferred, st.delivered, st.dropped),
        (2, 2, 2, 0)
    );
}

#[test]
fn a_full_buffer_drops_counts_and_reports_before_the_next_delivery() {
    let reg = Registry::new();
    reg.events().set_buffer_entries(4);
    let ev = reg.event::<u64>("burst").register().unwrap();
    // The buffer of a fresh thread gets 4 entries.
    let reg2 = reg.clone();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let delivered = Arc::new(AtomicU64::new(0));
    let drops = Arc::new(Mutex::new(Vec::new()));
    let d = delivered.clone();
    r.on_event(CbSafety::None, move |_, _| {
        d.fetch_add(1, Relaxed);
    })
    .unwrap();
    let (dr, dr2) = (drops.clone(), delivered.clone());
    r.on_dropped(move |n, source| dr.lock().unwrap().push((n, source, dr2.load(Relaxed))))
        .unwrap();
    std::thread::spawn(move || {
        for i in 0..10 {
            ev.raise_in(CbSafety::ThreadSafe, None, &i);
        }
        drop(reg2);
    })
    .join()
    .unwrap();
    let st = reg.events().stats();
    assert_eq!((st.raised, st.deferred, st.dropped), (10, 4, 6));
    assert_eq!(reg.events().deliver(CbSafety::None), 4);
    assert_eq!(delivered.load(Relaxed), 4);
    assert_eq!(
        *drops.lock().unwrap(),
        vec![(6, 0, 0)],
        "6 lost, reported once, before the first delivery"
    );
}

#[test]
fn a_signal_point_without_a_buffer_drops_instead_of_allocating() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("from_handler").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    r.on_event(CbSafety::ThreadSafe, |_, _| {}).unwrap();
    let reg2 = reg.clone();
    std::thread::spawn(move || {
        ev.raise_in(CbSafety::AsyncSignalSafe, None, &1); // no buffer: dropped
        reg2.prepare_thread();
        ev.raise_in(CbSafety::AsyncSignalSafe, None, &2); // buffered
    })
    .join()
    .unwrap();
    let st = reg.events().stats();
    assert_eq!((st.dropped, st.deferred), (1, 1));
    assert_eq!(reg.events().deliver(CbSafety::ThreadSafe), 1);
}

#[test]
fn freeing_from_a_callback_runs_the_free_callback_after_it_returns() {
    let reg = Registry::new();
    let ev = reg.event::<()>("once").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let key = r.key();
    std::mem::forget(r); // freed below by key, from its own callback
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o, reg2) = (order.clone(), reg.clone());
    reg.events()
        .register_callback(
            key,
            CbSafety::ThreadSafe,
            Some(Box::new(move |_, _| {
                let o2 = o.clone();
                reg2.events()
                    .handle_free(
                        key,
                        Some(Box::new(move |ctx| {
                            o2.lock().unwrap().push(format!("free {ctx:?}"))
                        })),
                    )
                    .unwrap();
                o.lock().unwrap().push("callback returns".to_string());
            })),
            0,
        )
        .unwrap();
    ev.raise(&());
    ev.raise(&());
    assert_eq!(
        *order.lock().unwrap(),
        vec![
            "callback returns".to_string(),
            "free ThreadSafe".to_string()
        ]
    );
    assert_eq!(
        reg.events().handle_free(key, None).unwrap_err().code(),
        ErrorCode::InvalidHandle,
        "a freed key is invalid"
    );
    assert_eq!(reg.events().registrations(), 0);
}

#[test]
fn free_callback_waits_for_a_callback_running_on_another_thread() {
    let reg = Registry::new();
    let ev = reg.event::<()>("slow").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let inside = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let freed = Arc::new(AtomicUsize::new(0));
    let (i, rl) = (inside.clone(), release.clone());
    r.on_event(CbSafety::ThreadSafe, move |_, _| {
        i.wait();
        rl.wait();
    })
    .unwrap();
    let t = std::thread::spawn(move || ev.raise(&()));
    inside.wait();
    let f = freed.clone();
    r.free_with(move |_| {
        f.fetch_add(1, SeqCst);
    });
    assert_eq!(freed.load(SeqCst), 0, "a callback is still running");
    release.wait();
    t.join().unwrap();
    assert_eq!(freed.load(SeqCst), 1, "the last delivery ran it");
}

#[test]
fn bound_events_reach_the_registrations_for_their_object() {
    let reg = Registry::new();
    let ev = reg
        .event::<u64>("comm_msg")
        .bind(BindKind::Comm)
        .register()
        .unwrap();
    let world = ObjectRef::new(BindKind::Comm, 0x101);
    let selff = ObjectRef::new(BindKind::Comm, 0x102);
    assert_eq!(
        reg.event_registration(ev.index(), None).unwrap_err().code(),
        ErrorCode::Invalid
    );
    let r = reg.event_registration(ev.index(), Some(world)).unwrap();
    let (n, n2) = counter();
    r.on_event(CbSafety::ThreadSafe, move |inst, _| {
        assert_eq!(inst.object(), Some(ObjectRef::new(BindKind::Comm, 0x101)));
        n2.fetch_add(1, Relaxed);
    })
    .unwrap();
    ev.raise_on(world, &1);
    ev.raise_on(selff, &1);
    ev.raise(&1);
    assert_eq!(n.load(Relaxed), 1);
}

#[test]
fn categories_hold_events_and_sources_are_listed() {
    let reg = Registry::new();
    let ev = reg.event::<()>("e").category("evcat").register().unwrap();
    let c = reg.categories().define("evcat", "events").unwrap();
    assert_eq!(reg.categories().info(c).unwrap().num_events, 1);
    assert_eq!(reg.categories().events(c).unwrap(), vec![ev.index()]);
    let mut out = [-1; 2];
    assert_eq!(reg.categories().events_into(c, &mut out).unwrap(), 1);
    assert_eq!(out, [ev.index() as i32, -1]);

    assert_eq!(reg.events().num_sources(), 1);
    assert_eq!(reg.events().source_info(0).unwrap().name, "pvar_monotonic");
    let nic = reg
        .events()
        .register_source(
            SourceInfo {
                name: "nic".into(),
                description: String::new(),
                ordering: SourceOrder::Unordered,
                ticks_per_second: 1000,
                max_ticks: u64::MAX,
            },
            None,
        )
        .unwrap();
    assert_eq!(
        reg.events().source_timestamp(nic).unwrap_err().code(),
        ErrorCode::NotSupported
    );
    assert_eq!(
        reg.events().source_timestamp(7).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    let hw = reg.event::<u64>("hw").source(nic).register().unwrap();
    let r = reg.event_registration(hw.index(), None).unwrap();
    let (ts, ts2) = counter();
    r.on_event(CbSafety::ThreadSafe, move |inst, _| {
        assert_eq!(inst.source(), 1);
        ts2.store(inst.timestamp(), Relaxed);
    })
    .unwrap();
    hw.raise(&0); // no timestamp: the source cannot give one
    assert_eq!(ts.load(Relaxed), 0);
    hw.raise_at(77, CbSafety::None, None, &0);
    assert_eq!(ts.load(Relaxed), 77);
}

#[test]
fn redeclaring_is_idempotent_or_refused() {
    let reg = Registry::new();
    let a = reg.event::<u64>("x").description("d").register().unwrap();
    let b = reg.event::<u64>("x").description("d").register().unwrap();
    assert_eq!(a.index(), b.index());
    let e = reg
        .event::<u32>("x")
        .description("d")
        .register()
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Invalid);
    assert!(e.reason().unwrap().contains("other metadata"));
    let e = reg.event::<u64>("y").source(9).register().unwrap_err();
    assert!(e.reason().unwrap().contains("source"));
}

/// Exactly once or counted: threads raise at THREAD_SAFE and at
/// signal-like points while a tool delivers and frees/re-allocates
/// nothing; every (raise, registration) is delivered once or dropped once.
#[test]
fn every_delivery_happens_once_or_is_counted_as_dropped_under_threads() {
    let reg = Registry::new();
    reg.events().set_buffer_entries(64);
    let ev = reg.event::<u64>("load").register().unwrap();
    let fast = reg.event_registration(ev.index(), None).unwrap();
    let slow = reg.event_registration(ev.index(), None).unwrap();
    let (nf, nf2) = counter();
    let (ns, ns2) = counter();
    let (lost, lost2) = counter();
    fast.on_event(CbSafety::AsyncSignalSafe, move |_, _| {
        nf2.fetch_add(1, Relaxed);
    })
    .unwrap();
    slow.on_event(CbSafety::None, move |_, _| {
        ns2.fetch_add(1, Relaxed);
    })
    .unwrap();
    slow.on_dropped(move |n, _| {
        lost2.fetch_add(n, Relaxed);
    })
    .unwrap();
    const THREADS: u64 = 4;
    const RAISES: u64 = 20_000;
    let done = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (ev, reg, done) = (ev.clone(), reg.clone(), done.clone());
            std::thread::spawn(move || {
                reg.prepare_thread();
                for i in 0..RAISES {
                    let point = match (i + t) % 3 {
                        0 => CbSafety::None,
                        1 => CbSafety::ThreadSafe,
                        _ => CbSafety::AsyncSignalSafe,
                    };
                    ev.raise_in(point, None, &i);
                }
                done.fetch_add(1, Release);
            })
        })
        .collect();
    while done.load(Acquire) < THREADS as usize {
        reg.events().deliver(CbSafety::None);
        std::thread::yield_now();
    }
    workers.into_iter().for_each(|w| w.join().unwrap());
    while reg.events().waiting() > 0 {
        reg.events().deliver(CbSafety::None);
    }
    let total = THREADS * RAISES;
    assert_eq!(
        nf.load(Relaxed),
        total,
        "ASYNC_SIGNAL_SAFE: every raise at once"
    );
    let st = reg.events().stats();
    assert_eq!(st.raised, 2 * total);
    assert_eq!(st.discarded, 0);
    assert_eq!(
        ns.load(Relaxed) + st.dropped,
        total,
        "NONE: delivered or dropped"
    );
    // Drops after the last delivery are not reported yet; one more raise
    // at a NONE point with the token free reports them.
    ev.raise(&0);
    assert_eq!(lost.load(Relaxed), st.dropped, "every drop reported");
}

/// Per registration and thread, raise order survives deferral: once an
/// event waits, later raises of the registration wait behind it, even at
/// points where they could run at once.
#[test]
fn a_later_raise_waits_behind_an_earlier_deferred_one() {
    let reg = Registry::new();
    reg.prepare_thread();
    let ev = reg.event::<u64>("ordered").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    r.on_event(CbSafety::None, move |inst, _| {
        g.lock().unwrap().push(inst.read::<u64>(0).unwrap());
    })
    .unwrap();
    ev.raise_in(CbSafety::AsyncSignalSafe, None, &1); // waits
    ev.raise_in(CbSafety::ThreadSafe, None, &2); // waits behind it
    assert!(got.lock().unwrap().is_empty());
    ev.raise(&3); // a NONE point: delivers 1 and 2, then 3
    assert_eq!(*got.lock().unwrap(), vec![1, 2, 3]);
}

/// A buffer never has fewer than two entries (with one, a second push
/// would overwrite an unconsumed entry).
#[test]
fn the_smallest_buffer_loses_nothing() {
    let reg = Registry::new();
    reg.events().set_buffer_entries(1);
    assert_eq!(reg.events().buffer_entries(), 2);
    reg.prepare_thread();
    let ev = reg.event::<u64>("tiny").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let (n, n2) = counter();
    r.on_event(CbSafety::None, move |_, _| {
        n2.fetch_add(1, Relaxed);
    })
    .unwrap();
    for i in 0..3 {
        ev.raise_in(CbSafety::AsyncSignalSafe, None, &i);
    }
    assert_eq!(reg.events().deliver(CbSafety::None), 2);
    let st = reg.events().stats();
    assert_eq!((st.deferred, st.dropped, n.load(Relaxed)), (2, 1, 2));
}

/// Per registration and thread, raise order holds while an earlier event
/// is being delivered from the thread's buffer, not only while it waits
/// there: a delivery point takes the thread's first event out and, before
/// its callback, calls the dropped handler (held here until the thread has
/// raised again); the thread's second raise, at a `THREAD_SAFE` point
/// where the callback could run at once, waits behind the first instead.
/// Up to 6ca10e8 it ran at once: `[2, 1]`.
#[test]
fn a_raise_waits_behind_an_event_being_delivered_from_a_buffer() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("held").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    r.on_event(CbSafety::ThreadSafe, move |inst, _| {
        g.lock().unwrap().push(inst.read::<u64>(0).unwrap());
    })
    .unwrap();
    let inside = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let (i, rl) = (inside.clone(), release.clone());
    r.on_dropped(move |_, _| {
        i.wait();
        rl.wait();
    })
    .unwrap();
    // One loss first (a signal-safe raise on a thread without a buffer),
    // so that the next delivery calls the handler before its callback.
    let e = ev.clone();
    std::thread::spawn(move || e.raise_in(CbSafety::AsyncSignalSafe, None, &0))
        .join()
        .unwrap();
    let ready = Arc::new(Barrier::new(2));
    let raiser = {
        let (reg, ev, ready) = (reg.clone(), ev.clone(), ready.clone());
        std::thread::spawn(move || {
            reg.prepare_thread();
            ev.raise_in(CbSafety::AsyncSignalSafe, None, &1); // waits
            ready.wait();
            inside.wait(); // the delivery point has taken it out
            ev.raise_in(CbSafety::ThreadSafe, None, &2);
            release.wait();
        })
    };
    ready.wait();
    let n = reg.events().deliver(CbSafety::None);
    raiser.join().unwrap();
    assert_eq!(
        *got.lock().unwrap(),
        vec![1, 2],
        "a thread's events out of order"
    );
    assert_eq!(n, 2, "the delivery point delivered both");
    let st = reg.events().stats();
    assert_eq!((st.raised, st.delivered, st.dropped), (3, 2, 1));
}

/// The same under load, with nothing held: raising threads alternate
/// between signal-safe points (the `THREAD_SAFE` callback cannot run
/// there: the event waits) and `THREAD_SAFE` points (it runs at once
/// unless something of the registration waits or is being delivered),
/// while the main thread runs delivery points. Each thread's values reach
/// the callback in increasing order; every raise is delivered or dropped
/// once.
#[test]
fn a_thread_raises_in_order_against_concurrent_delivery_points() {
    const THREADS: usize = 2;
    const RAISES: u64 = 20_000;
    let reg = Registry::new();
    reg.events().set_buffer_entries(16);
    let ev = reg.event::<(u64, u64)>("seq").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    // Per thread: the last value seen, and how often a value came after a
    // larger one. The callbacks of one thread's events never overlap (a
    // raise runs its callback at once only while none of the
    // registration's deliveries waits or runs from a buffer), so a plain
    // load and store per thread is exact.
    let last: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let (inversions, inv) = counter();
    let (delivered, dl) = counter();
    let l = last.clone();
    r.on_event(CbSafety::ThreadSafe, move |inst, _| {
        let t = inst.read::<u64>(0).unwrap() as usize;
        let v = inst.read::<u64>(1).unwrap();
        if l[t].load(Relaxed) > v {
            inv.fetch_add(1, Relaxed);
        }
        l[t].store(v, Relaxed);
        dl.fetch_add(1, Relaxed);
    })
    .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let raisers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (reg, ev, done) = (reg.clone(), ev.clone(), done.clone());
            std::thread::spawn(move || {
                reg.prepare_thread();
                for v in 1..=RAISES {
                    let point = if v % 2 == 0 {
                        CbSafety::ThreadSafe
                    } else {
                        CbSafety::AsyncSignalSafe
                    };
                    ev.raise_in(point, None, &(t as u64, v));
                }
                done.fetch_add(1, Release);
            })
        })
        .collect();
    while done.load(Acquire) < THREADS {
        reg.events().deliver(CbSafety::None);
        std::thread::yield_now();
    }
    raisers.into_iter().for_each(|t| t.join().unwrap());
    while reg.events().waiting() > 0 {
        reg.events().deliver(CbSafety::None);
    }
    assert_eq!(
        inversions.load(Relaxed),
        0,
        "a thread's events out of order"
    );
    let st = reg.events().stats();
    assert_eq!(st.raised, THREADS as u64 * RAISES);
    assert_eq!(st.delivered, delivered.load(Relaxed));
    assert_eq!(st.delivered + st.dropped, st.raised);
}

/// Whether a registration's losses are counted and reported depends on
/// that registration alone (up to 6ca10e8 a registration with a dropped
/// handler and no callback counted nothing, and its handler never ran,
/// unless another registration of the event had a callback). A
/// registration with a dropped handler and no callback observes the
/// event: every raise for it is a loss (no callback at any level),
/// counted, and reported at the first point where the handler may run —
/// a point whose requirement is NONE, holding the delivery token: the
/// raise itself there, else the next delivery point with requirement
/// NONE — told NONE, with user_data 0. A registration with neither
/// callback nor handler takes no part: nothing is counted for it.
#[test]
fn a_registration_without_callback_counts_and_reports_its_losses_alone() {
    for with_other in [false, true] {
        let reg = Registry::new();
        reg.prepare_thread(); // the other's events can wait here
        let ev = reg.event::<u64>("lossy").register().unwrap();
        let bare = reg.event_registration(ev.index(), None).unwrap();
        let r = reg.event_registration(ev.index(), None).unwrap();
        let other = reg.event_registration(ev.index(), None).unwrap();
        let (n, n2) = counter();
        if with_other {
            other
                .on_event(CbSafety::ThreadSafe, move |_, _| {
                    n2.fetch_add(1, Relaxed);
                })
                .unwrap();
        }
        assert_eq!(ev.is_observed(), with_other);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = heard.clone();
        reg.events()
            .set_dropped_handler(
                r.key(),
                Some(Box::new(move |count, source, safety, user_data| {
                    h.lock().unwrap().push((count, source, safety, user_data))
                })),
            )
            .unwrap();
        assert!(ev.is_observed(), "a dropped handler observes the event");
        let others = u64::from(with_other);

        // At NONE points: each loss is reported at its raise.
        for i in 0..3 {
            ev.raise(&i);
        }
        let once = (1, 0, CbSafety::None, 0);
        assert_eq!(
            *heard.lock().unwrap(),
            vec![once; 3],
            "with_other {with_other}"
        );
        let st = reg.events().stats();
        assert_eq!(
            (st.raised, st.dropped, st.delivered),
            (3 + 3 * others, 3, 3 * others),
            "the bare registration takes no part (with_other {with_other})"
        );
        heard.lock().unwrap().clear();

        // Elsewhere: counted, reported at the next NONE delivery point.
        ev.raise_in(CbSafety::ThreadSafe, None, &3);
        ev.raise_in(CbSafety::AsyncSignalSafe, None, &4); // the other's waits
        reg.events().deliver(CbSafety::ThreadSafe);
        assert!(heard.lock().unwrap().is_empty());
        reg.events().deliver(CbSafety::None);
        assert_eq!(*heard.lock().unwrap(), vec![(2, 0, CbSafety::None, 0)]);
        heard.lock().unwrap().clear();

        // What is still unreported when the registration is freed (from
        // normal code) is reported by the free.
        ev.raise_in(CbSafety::MpiRestricted, None, &5);
        drop(r);
        assert_eq!(*heard.lock().unwrap(), vec![once]);
        assert_eq!(n.load(Relaxed), 6 * others);
        assert_eq!(reg.events().stats().dropped, 6);
        drop(other);
        assert!(!ev.is_observed());
        drop(bare);
    }
}

/// Removing a registration's last callback and its dropped handler stops
/// it observing the event: the raise is one load and a branch again, and
/// nothing is counted for it.
#[test]
fn a_registration_that_lost_its_callbacks_and_handler_stops_observing() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("on_off").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    r.on_event(CbSafety::ThreadSafe, |_, _| {}).unwrap();
    r.on_dropped(|_, _| {}).unwrap();
    r.clear_callback(CbSafety::ThreadSafe).unwrap();
    assert!(ev.is_observed(), "the handler still observes");
    ev.raise_in(CbSafety::ThreadSafe, None, &1);
    assert_eq!(reg.events().stats().dropped, 1);
    reg.events().set_dropped_handler(r.key(), None).unwrap();
    assert!(!ev.is_observed());
    ev.raise_in(CbSafety::ThreadSafe, None, &2);
    assert_eq!(reg.events().stats().raised, 1);
}

/// Losses of a registration with callbacks that no later delivery reported
/// are reported when it is freed from normal code, with the user_data of
/// the callback a NONE point would choose.
#[test]
fn freeing_reports_what_no_delivery_reported() {
    let reg = Registry::new();
    let ev = reg.event::<u64>("last_words").register().unwrap();
    let r = reg.event_registration(ev.index(), None).unwrap();
    reg.events()
        .register_callback(r.key(), CbSafety::ThreadSafe, Some(Box::new(|_, _| {})), 7)
        .unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h = heard.clone();
    reg.events()
        .set_dropped_handler(
            r.key(),
            Some(Box::new(move |count, _, safety, user_data| {
                h.lock().unwrap().push((count, safety, user_data))
            })),
        )
        .unwrap();
    let e = ev.clone();
    std::thread::spawn(move || {
        e.raise_in(CbSafety::AsyncSignalSafe, None, &1); // no buffer: lost
        e.raise_in(CbSafety::AsyncSignalSafe, None, &2);
    })
    .join()
    .unwrap();
    assert!(heard.lock().unwrap().is_empty(), "no delivery yet");
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o, h) = (order.clone(), heard.clone());
    r.free_with(move |_| o.lock().unwrap().push(h.lock().unwrap().len()));
    assert_eq!(*heard.lock().unwrap(), vec![(2, CbSafety::None, 7)]);
    assert_eq!(
        *order.lock().unwrap(),
        vec![1],
        "reported before the free callback"
    );
}
