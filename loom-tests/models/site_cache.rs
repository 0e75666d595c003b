//! Use-site caches (`hot/cells/site_cache.rs`): each use site keeps, per
//! thread, the address of the thread's cell, and updates through it with a
//! plain load and store. The models check the two ways that address could
//! go stale or the per-thread list of caches could tear:
//!
//! - **thread exit**: the exit guard clears every cache of the thread
//!   before its id (and record) go to the next thread, and later updates of
//!   the exiting thread go to the orphan record, while another thread may
//!   take the record over and update the same cell;
//! - **a signal mid-fill**: a handler that interrupts the first update of
//!   a site on this thread (its record lookup, or the fill's link into the
//!   list) and updates through the same or another site; the list must hold
//!   every filled cache, or the exit guard would miss one.
//!
//! C use sites (`pvar.h`) are in no list; the models check that the
//! caches' validity words (the record's owner word for `pvar_site`, the
//! site epoch for the macros' `pvar_use_site`) refuse an update after the
//! thread's exit, and that a macro cache keyed by a freed handle's address
//! is stale once another handle has that address.
//!
//! Registry teardown needs no model: a use site registers only in a
//! registry its `home` function returns as `&'static` (the global one), so
//! a cached cell's record and chunk are never freed, and a use site's
//! variable is never dropped (its `static` holds the handle).
//!
//! Each model builds its registry and sites afresh per execution
//! (`loom::lazy_static`), and registers the variables on the main thread
//! before spawning (registration is not what is modelled).

use loom::sync::Arc;
use pvar::__private::SiteCache;
use pvar::loom_api::{self, CSite, Cells, UseSite, signal};
use pvar::{Counter, Pvars, Registry, Site, SiteDecl, SiteRef};

use crate::{model, registry, spawn};

loom::lazy_static! {
    static ref REG: Registry = registry();
    static ref SITE_A: Site<Counter> = Site::new(SiteDecl::new("site_a", "model:a"), home);
    static ref SITE_B: Site<Counter> = Site::new(SiteDecl::new("site_b", "model:b"), home);
}

loom::thread_local! {
    static CACHE_A: SiteCache = SiteCache::new();
    static CACHE_B: SiteCache = SiteCache::new();
}

fn home() -> &'static Arc<Pvars> {
    loom_api::site_home(&REG)
}

fn site_a() -> SiteRef<Counter> {
    SiteRef::new(&SITE_A, &CACHE_A)
}

fn site_b() -> SiteRef<Counter> {
    SiteRef::new(&SITE_B, &CACHE_B)
}

/// Registers both variables (on the calling thread, before any spawn).
fn register() {
    site_a().index();
    site_b().index();
}

/// Thread 1 updates twice through a site (filling its cache), exits, and
/// updates again (as a later thread-local destructor would); thread 2
/// updates through the same site concurrently, and may take thread 1's id
/// and record over. Nothing is lost: the update after exit cannot go
/// through the cleared cache into the record thread 2 now owns.
#[test]
fn thread_exit_clears_the_cache_before_handover() {
    model(|| {
        register();
        let t1 = spawn(|| {
            site_a().inc();
            site_a().inc();
            assert!(loom_api::site_cache_filled(&CACHE_A));
            loom_api::thread_exit();
            assert!(
                !loom_api::site_cache_filled(&CACHE_A),
                "cache survived exit"
            );
            site_a().add(10);
            assert!(
                !loom_api::site_cache_filled(&CACHE_A),
                "refilled after exit"
            );
        });
        let t2 = spawn(|| {
            site_a().add(100);
            loom_api::thread_exit();
        });
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(site_a().get(), 112);
    });
}

/// A handler interrupts the first update of site A on a thread at each
/// signal point of its slow path (the record cache switch, the link into
/// the list of caches), and updates through site B and site A. Afterwards
/// the thread updates both and exits: both caches must be in the list
/// (cleared at exit), and every update is counted, while a second thread
/// takes the record over.
#[test]
fn signal_during_the_first_update_keeps_the_list_whole() {
    for k in 0..4 {
        model(move || {
            register();
            let t1 = spawn(move || {
                signal::arm(k, || {
                    site_b().inc();
                    site_a().inc();
                });
                site_a().inc();
                // Points past the last one are never reached.
                let missed = signal::disarm();
                assert!(k >= 2 || !missed, "handler at point {k} did not run");
                site_a().inc();
                site_b().inc();
                assert!(loom_api::site_cache_filled(&CACHE_A));
                assert!(loom_api::site_cache_filled(&CACHE_B));
                loom_api::thread_exit();
                assert!(!loom_api::site_cache_filled(&CACHE_A), "A not cleared");
                assert!(!loom_api::site_cache_filled(&CACHE_B), "B not cleared");
                site_a().inc();
                site_b().inc();
                missed
            });
            let t2 = spawn(|| {
                site_a().add(100);
                site_b().add(100);
                loom_api::thread_exit();
            });
            let missed = t1.join().unwrap();
            t2.join().unwrap();
            let handler = if missed { 0 } else { 1 };
            assert_eq!(site_a().get(), 103 + handler);
            assert_eq!(site_b().get(), 102 + handler);
        });
    }
}

loom::thread_local! {
    static C_SITE: CSite = CSite::new();
}

/// A C use site (`pvar.h`): thread 1 updates through its cache, exits, and
/// updates again through the same cache (a pthread key destructor runs
/// after the engine's exit guard); thread 2 may take thread 1's id and
/// record over meanwhile, and updates the same cell. The C cache is in no
/// list (its library may be unloaded), so what stops thread 1 from writing
/// the record thread 2 now owns is the owner word, zeroed by the exit
/// guard before the id goes back: the update after exit finds it changed
/// and goes to the orphan record. Nothing is lost.
#[test]
fn c_site_is_refused_after_exit() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let t1 = {
            let cells = cells.clone();
            spawn(move || {
                C_SITE.with(|s| {
                    cells.c_site_add(s, slot, 1);
                    cells.c_site_add(s, slot, 1);
                    loom_api::thread_exit();
                    cells.c_site_add(s, slot, 10);
                })
            })
        };
        let t2 = {
            let cells = cells.clone();
            spawn(move || C_SITE.with(|s| cells.c_site_add(s, slot, 100)))
        };
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(cells.sum(slot), 112);
    });
}

loom::thread_local! {
    static USE_SITE: UseSite = UseSite::new();
}

/// The address a modelled handle has (any non-zero number).
const HANDLE_AT: usize = 0x1000;

/// `c_site_is_refused_after_exit` for the macros' cache (`pvar_use_site`):
/// what stops thread 1's update after its exit from writing the record
/// thread 2 may now own is the site epoch, moved by the exit guard before
/// the id goes back. Nothing is lost.
#[test]
fn use_site_is_refused_after_exit() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let slot = cells.alloc();
        let t1 = {
            let cells = cells.clone();
            spawn(move || {
                USE_SITE.with(|s| {
                    cells.use_site_add(s, HANDLE_AT, slot, 1);
                    cells.use_site_add(s, HANDLE_AT, slot, 1);
                    loom_api::thread_exit();
                    cells.use_site_add(s, HANDLE_AT, slot, 10);
                })
            })
        };
        let t2 = {
            let cells = cells.clone();
            spawn(move || USE_SITE.with(|s| cells.use_site_add(s, HANDLE_AT, slot, 100)))
        };
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(cells.sum(slot), 112);
    });
}

/// Thread 1 updates variable A through a macro's cache with the handle at
/// `HANDLE_AT`, then starts thread 2 (a handle is freed only after every
/// update through it), then updates through the same cache with whatever
/// handle is at that address now. Thread 2 frees A's handle
/// (`pvar_var_free` moves the epoch) and gives the address to a handle of
/// variable B, published with a release store (the component's own
/// synchronisation). If thread 1 sees B's handle, its update must reach B,
/// not A's cell that its cache holds.
#[test]
fn use_site_refills_for_a_handle_at_a_freed_address() {
    model(|| {
        let cells = Arc::new(Cells::new());
        let a = cells.alloc();
        let b = cells.alloc();
        // 0: the handle at HANDLE_AT is A's; 1: it is B's.
        let published = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let t1 = {
            let (cells, published) = (cells.clone(), published.clone());
            spawn(move || {
                USE_SITE.with(|s| {
                    cells.use_site_add(s, HANDLE_AT, a, 1);
                    let t2 = {
                        let published = published.clone();
                        spawn(move || {
                            loom_api::c_handle_freed();
                            published.store(1, loom::sync::atomic::Ordering::Release);
                        })
                    };
                    let now_b = published.load(loom::sync::atomic::Ordering::Acquire) == 1;
                    cells.use_site_add(s, HANDLE_AT, if now_b { b } else { a }, 10);
                    t2.join().unwrap();
                    loom_api::thread_exit();
                    now_b
                })
            })
        };
        let now_b = t1.join().unwrap();
        if now_b {
            assert_eq!((cells.sum(a), cells.sum(b)), (1, 10));
        } else {
            assert_eq!((cells.sum(a), cells.sum(b)), (11, 0));
        }
    });
}
