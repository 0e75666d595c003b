//! Session free against use of its handles from another thread. Handles and
//! sessions live in generation-checked slot tables: an operation takes a
//! reader reference with one compare-and-swap; `free` swaps LIVE for
//! FREEING and never waits: whoever leaves last finishes the slot — the
//! free takes the data out at once, a reader leaves it on the retired
//! stack for the tool side's next allocation or free to take out and
//! release (loom checks that the data's cell is never written while a
//! reader holds it).

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use pvar::{Callbacks, Datatype, Error, ErrorCode, Notify, PvarClass};

use crate::{model, read_u64, spawn};

fn invalid(e: &Error) -> bool {
    matches!(
        e.code(),
        ErrorCode::InvalidSession | ErrorCode::InvalidHandle
    )
}

/// One thread reads (and readresets) a handle while the main thread frees
/// its session and an updater counts: each operation sees either a valid
/// handle (and a value within bounds) or INVALID_SESSION / INVALID_HANDLE,
/// never freed data; afterwards every key is stale and nothing leaks.
#[test]
fn session_free_vs_handle_use() {
    model(|| {
        let reg = crate::registry();
        let c = reg.counter("c").atomic(true).register().unwrap();
        let s = reg.tool().session_create().unwrap();
        let (h, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
        reg.tool().start(s, h).unwrap();
        let u = {
            let c = c.clone();
            spawn(move || c.inc())
        };
        let tool = {
            let reg = reg.clone();
            crate::spawn(move || {
                let mut out = [0u64];
                match reg.tool().read(s, h, 0, &mut out) {
                    Ok(()) => assert!(out[0] <= 1),
                    Err(e) => assert!(invalid(&e), "{e}"),
                }
                match reg.tool().readreset(s, h, 0, &mut out) {
                    Ok(()) => assert!(out[0] <= 1),
                    Err(e) => assert!(invalid(&e), "{e}"),
                }
            })
        };
        reg.tool().session_free(s).unwrap();
        tool.join().unwrap();
        u.join().unwrap();
        assert!(invalid(&read_u64(reg.tool(), s, h).unwrap_err()));
        assert!(invalid(&reg.tool().session_free(s).unwrap_err()));
        let stats = reg.tool().stats();
        assert_eq!((stats.sessions, stats.handles), (0, 0));
    });
}

/// handle_free racing with start and read of the same handle from another
/// thread: the other thread's calls succeed or get INVALID_HANDLE.
#[test]
fn handle_free_vs_start_and_read() {
    model(|| {
        let reg = crate::registry();
        let c = reg.counter("c").register().unwrap();
        let s = reg.tool().session_create().unwrap();
        let (h, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
        let tool = {
            let reg = reg.clone();
            crate::spawn(move || {
                if let Err(e) = reg.tool().start(s, h) {
                    assert!(invalid(&e), "{e}");
                }
                match read_u64(reg.tool(), s, h) {
                    Ok(v) => assert_eq!(v, 0),
                    Err(e) => assert!(invalid(&e), "{e}"),
                }
            })
        };
        reg.tool().handle_free(s, h).unwrap();
        tool.join().unwrap();
        assert_eq!(reg.tool().stats().handles, 0);
        // The slot is recycled with a new generation; the old key stays stale.
        let (h2, _) = reg.tool().handle_alloc(s, c.index(), None).unwrap();
        assert_ne!(h, h2);
        assert!(invalid(&read_u64(reg.tool(), s, h).unwrap_err()));
        assert_eq!(read_u64(reg.tool(), s, h2).unwrap(), 0);
    });
}

/// A handle allocated while its session is freed from another thread: the
/// allocation either fails with INVALID_SESSION or lands in the session's
/// handle list before `session_free` takes it (the allocation holds a
/// reader reference on the session), so the handle is freed with its
/// session and never leaks.
#[test]
fn handle_alloc_vs_session_free() {
    model(|| {
        let reg = crate::registry();
        let c = reg.counter("c").register().unwrap();
        let s = reg.tool().session_create().unwrap();
        let tool = {
            let reg = reg.clone();
            let index = c.index();
            crate::spawn(move || match reg.tool().handle_alloc(s, index, None) {
                Ok((h, _)) => Some(h),
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::InvalidSession, "{e}");
                    None
                }
            })
        };
        reg.tool().session_free(s).unwrap();
        if let Some(h) = tool.join().unwrap() {
            assert!(invalid(&read_u64(reg.tool(), s, h).unwrap_err()));
        }
        let stats = reg.tool().stats();
        assert_eq!((stats.sessions, stats.handles), (0, 0), "a handle leaked");
    });
}

/// The hand-off of a free to the last reader: a reader on another thread
/// reads a callback variable's handle (its read function runs inside the
/// handle's slot) while the main thread frees the handle. The free never
/// waits; the handle is released (`Free` notified) exactly once and never
/// while the read function runs: by the free if it left last, else by the
/// next tool-side free after the reader left (here `session_free`).
#[test]
fn handle_free_hands_release_to_last_reader() {
    model(|| {
        let reg = crate::registry();
        let inside = Arc::new(AtomicUsize::new(0));
        let frees = Arc::new(AtomicUsize::new(0));
        let var = {
            let (inside_r, frees_r) = (inside.clone(), frees.clone());
            let (inside_n, frees_n) = (inside.clone(), frees.clone());
            reg.callback_pvar(
                "cb",
                PvarClass::Size,
                Datatype::UnsignedLongLong,
                Callbacks::new(move |_, _| {
                    inside_r.fetch_add(1, Ordering::Relaxed);
                    assert_eq!(frees_r.load(Ordering::Relaxed), 0, "read after Free");
                    inside_r.fetch_sub(1, Ordering::Relaxed);
                    1
                })
                .with_notify(move |n, _| {
                    if n == Notify::Free {
                        assert_eq!(inside_n.load(Ordering::Relaxed), 0, "Free under a read");
                        frees_n.fetch_add(1, Ordering::Relaxed);
                    }
                    None
                }),
            )
            .register()
            .unwrap()
        };
        let s = reg.tool().session_create().unwrap();
        let (h, _) = reg.tool().handle_alloc(s, var.index(), None).unwrap();
        let reader = {
            let reg = reg.clone();
            spawn(move || match read_u64(reg.tool(), s, h) {
                Ok(v) => assert_eq!(v, 1),
                Err(e) => assert!(invalid(&e), "{e}"),
            })
        };
        reg.tool().handle_free(s, h).unwrap();
        reader.join().unwrap();
        assert!(frees.load(Ordering::Relaxed) <= 1);
        reg.tool().session_free(s).unwrap();
        assert_eq!(frees.load(Ordering::Relaxed), 1, "released exactly once");
        let stats = reg.tool().stats();
        assert_eq!((stats.sessions, stats.handles), (0, 0));
    });
}
