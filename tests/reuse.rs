//! Reuse: cell ranges of dropped bound instances recycled across
//! representations while tool handles on the old instance are still
//! alive, watermark subscriber slots and handle keys recycled while other
//! handles stay started, and element ranges of array handles.

use pvar::{BindKind, Datatype, ErrorCode, HandleId, ObjectRef, Registry, SessionId, Tool};

/// Element 0 of a handle.
fn read_u64(tool: &Tool, s: SessionId, h: HandleId) -> pvar::Result<u64> {
    let mut v = [0u64];
    tool.read(s, h, 0, &mut v)?;
    Ok(v[0])
}

/// bound instances dropped and re-created for the same
/// and for other objects, with tool handles alive on the old instance
/// (INVALID_INDEX), the range recycled across representations (u64
/// counter → f64 aggregate → timer start cells) only after the last handle
/// on the old storage is freed, and new handles reading from zero.
#[test]
fn bound_instance_recycling_with_live_handles() {
    let (clock, time) = pvar::Clock::mock();
    let reg = Registry::with_clock(clock);
    let c = reg
        .counter("c")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let f = reg
        .aggregate::<f64>("f")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let t = reg
        .timer("t")
        .bind(BindKind::Comm)
        .per_object_count()
        .datatype(Datatype::UnsignedLongLong)
        .register_bound()
        .unwrap();
    let session = reg.session().unwrap(); // freed when dropped
    let (tool, s) = (session.tool(), session.id());
    let obj = |h| Some(ObjectRef::new(BindKind::Comm, h));

    // Timer instance with count 2 (4 cells), started on two threads.
    let ti = t.create_instance(1, 2).unwrap();
    ti.start_at(1);
    std::thread::scope(|sc| {
        sc.spawn(|| ti.start_at(0));
    });
    let (th, n) = tool.handle_alloc(s, t.index(), obj(1)).unwrap();
    assert_eq!(n, 2);
    drop(ti);
    t.drop_instance(1).unwrap();
    assert_eq!(
        read_u64(tool, s, th).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    // The old storage is alive (tool handle): a 4-cell counter must not
    // get its range.
    let ci = c.create_instance(1, 4).unwrap();
    ci.add_at(0, 5);
    tool.handle_free(s, th).unwrap();
    // Now the timer's range is free: a 4-element f64 aggregate may take it.
    let fi = f.create_instance(7, 4).unwrap();
    for i in 0..4 {
        assert_eq!(fi.get_at(i), 0.0);
    }
    fi.add_at(3, 0.25);
    let (fh, _) = tool.handle_alloc(s, f.index(), obj(7)).unwrap();
    tool.start(s, fh).unwrap();
    fi.add_at(3, 0.5);
    let mut out = [0u64; 4];
    tool.read(s, fh, 0, &mut out).unwrap();
    assert_eq!(f64::from_bits(out[3]), 0.5);
    // Re-create the timer for the same object: no running interval.
    let ti2 = t.create_instance(1, 2).unwrap();
    time.advance(std::time::Duration::from_secs(1));
    ti2.stop_at(0);
    ti2.stop_at(1);
    assert_eq!(ti2.get_seconds_at(0), 0.0);
    assert_eq!(ti2.get_seconds_at(1), 0.0);
    assert_eq!(ci.get_at(0), 5);
}

/// watermark subscriptions recycled (handle freed and
/// re-allocated while another handle stays started), write/reset/readreset
/// on element ranges of an array handle, and stale handle keys after reuse.
#[test]
fn watermark_subscription_reuse_and_ranges() {
    let reg = Registry::new();
    let w = reg.high_watermark::<u64>("hw").count(3).register().unwrap();
    let session = reg.session().unwrap(); // freed when dropped
    let (tool, s) = (session.tool(), session.id());
    let (keep, _) = tool.handle_alloc(s, w.index(), None).unwrap();
    tool.start(s, keep).unwrap();
    let (a, _) = tool.handle_alloc(s, w.index(), None).unwrap();
    tool.start(s, a).unwrap();
    w.update_at(1, 50);
    tool.handle_free(s, a).unwrap();
    let (b, _) = tool.handle_alloc(s, w.index(), None).unwrap(); // reuses a's slot
    assert_ne!(a, b);
    assert_eq!(
        read_u64(tool, s, a).unwrap_err().code(),
        ErrorCode::InvalidHandle
    );
    assert!(
        !tool.is_started(s, b).unwrap(),
        "recycled slot starts stopped"
    );
    w.update_at(1, 80);
    let mut out = [0u64; 3];
    tool.read(s, b, 0, &mut out).unwrap();
    assert_eq!(out, [0, 50, 0], "stopped: marks frozen at allocation");
    tool.start(s, b).unwrap();
    w.update_at(2, 90);
    w.update_at(2, 10);
    tool.write(s, b, 1, &[5]).unwrap(); // level 80 passes 5
    let mut two = [0u64; 2];
    tool.readreset(s, b, 1, &mut two).unwrap();
    assert_eq!(two, [80, 90]);
    tool.read(s, b, 0, &mut out).unwrap();
    assert_eq!(out, [0, 80, 10]);
    tool.read(s, keep, 0, &mut out).unwrap();
    assert_eq!(out, [0, 80, 90]);
}
