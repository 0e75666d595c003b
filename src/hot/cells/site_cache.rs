//! Per-use-site caches of the calling thread's cells.
//!
//! A use-site macro (`pvar::counter!`, …) declares, at each place it is
//! written, one `const`-initialised thread-local [`SiteCache`]: the
//! address of the calling thread's first cell of the site's variable, or
//! null. With it, a steady-state update is one thread-local load, a null
//! test, and the cell's relaxed load and store: no handle, no space id,
//! no chunk table.
//!
//! **Validity.** A cached address points into this thread's record of a
//! registry that lives for the rest of the process (use sites register in
//! a `'static` registry): the record and its chunks are never freed. The
//! record is this thread's only until its exit destructor hands its id
//! (and with it the record) to a later thread. So the exit destructor
//! nulls every cache of the thread first ([`clear_all`]), walking an
//! intrusive list through the caches themselves (no allocation, no
//! destructor ordering to rely on: the caches have no destructor and stay
//! readable until the thread's TLS is gone). Later updates on the exiting
//! thread (from other thread-local destructors) find the cache null, take
//! the slow path, which sends them to the shared orphan record, and never
//! fill a cache again ([`fill`] refuses once the thread's exit guard has run).
//!
//! **Signals.** Filling links the cache into the list: three stores. A
//! signal handler that interrupts a fill and updates through another
//! (or the same) use site on this thread sees `LINKING` set and leaves the
//! list alone: its update goes through the slow path without caching, so
//! the list is never torn. Reading a cache is one load.
//!
//! **Unloading.** The list runs through every library's thread-locals
//! that used a site on this thread: a dynamic library holding Rust use
//! sites must not be unloaded while a thread that used them is still
//! running.
//!
//! **C use sites** (`pvar.h`'s `PVAR_COUNTER_INC`, …) live in C
//! components, often shared libraries that may be unloaded with
//! `dlclose`, so they are not linked into any list. A C site caches its
//! cell together with the address of the owner word of the record the cell
//! is in and the thread's incarnation, and uses the cell only while the
//! word still holds that incarnation (and while it is given the handle it
//! was filled for: same address, same serial; `ffi::component::site`). The exit guard zeroes the word
//! ([`release_c_owner`]) before the thread's id (and record) go to another
//! thread, so a C site's update after that (from a later thread-local
//! destructor) fails the check and takes the function path to the orphan
//! record. All C sites update the process-wide registry, so a thread has
//! at most one such word ([`note_c_owner`]). A C fill is guarded like a
//! Rust one ([`begin_c_fill`]): a handler interrupting it does not write
//! the cache.
//!
//! **C use sites, one compare** (`pvar_use_site`, what the macros use):
//! instead of the handle's serial and the record's owner word, such a
//! cache holds the handle's address and the value of one process-wide
//! word, the *site epoch* ([`c_epoch`]), when it was filled, and is used
//! only while the handle given is that address and the epoch is unchanged.
//! The epoch moves ([`bump_c_epoch`]) before anything that could make a
//! cached cell wrong: before a C handle is freed (so a handle made later
//! at the same address meets caches that are all stale), and in the exit
//! guard of a thread that filled C sites, before its id and record go to
//! another thread ([`release_c_owner`]; later updates of the exiting
//! thread find the epoch changed, and the fill refuses). A move makes
//! every C site of every thread refill once: handle frees and thread exits
//! are rare next to updates. The epoch is read once per update, relaxed:
//! a thread that was given a handle made after a free (through the
//! component's own synchronisation) reads an epoch at least as new as the
//! free's move, and a thread reads its own exit guard's move.

use std::cell::Cell;

use crate::sync::{AtomicU64, Ordering, compiler_fence};

/// One use site's cache for one thread; see the module documentation.
/// Declared by the use-site macros; nothing else of it is public.
#[doc(hidden)]
pub struct SiteCache {
    /// This thread's first cell of the site's variable, or null.
    cell: Cell<*const AtomicU64>,
    /// The next cache in this thread's list: null while unlinked, [`END`]
    /// for the last one.
    next: Cell<*const SiteCache>,
}

impl SiteCache {
    /// An empty, unlinked cache (the thread-local's initial value).
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Self {
            cell: Cell::new(core::ptr::null()),
            next: Cell::new(core::ptr::null()),
        }
    }

    /// Whether a cell is cached (for the loom models).
    #[cfg(loom)]
    pub(crate) fn is_filled(&self) -> bool {
        !self.cell.get().is_null()
    }

    /// Applies `f` to this thread's cell `i` of the cached variable, which
    /// has `elements` cells; `false` (and nothing done) if the cache is
    /// empty or `i` is out of range, for the caller's slow path. The use
    /// sites' whole fast path: one load, a null test, the cell's relaxed
    /// load and store (`i == 0` folds the range test away at most call
    /// sites). Async-signal-safe.
    #[inline(always)]
    pub(crate) fn update(&self, i: usize, elements: usize, f: impl Fn(u64) -> u64) -> bool {
        let base = self.cell.get();
        if base.is_null() || (i != 0 && i >= elements) {
            return false;
        }
        // SAFETY: a non-null cache holds this thread's first cell of the
        // site's variable, in its own record of a registry that lives for
        // the rest of the process ([`fill`]'s contract): the cell is never
        // freed, and no other thread writes it (the cache is nulled by
        // [`clear_all`] before the thread's exit hands the record over).
        // The variable's `elements` cells are consecutive in one chunk (a
        // cell range never straddles one), and `i` is below that.
        let cell = unsafe { &*base.add(i) };
        cell.store(f(cell.load(Ordering::Relaxed)), Ordering::Relaxed);
        true
    }
}

/// The end of every thread's list (an address no cache has).
static END_MARK: u8 = 0;

#[inline(always)]
fn end() -> *const SiteCache {
    (&raw const END_MARK).cast()
}

crate::sync::engine_thread_local! {
    /// The first cache of this thread's list (null: empty).
    static HEAD: Cell<*const SiteCache> = Cell::new(core::ptr::null());
    /// Set while [`fill`] links a cache in, or a C site's cache is
    /// written (see the module documentation).
    static LINKING: Cell<bool> = Cell::new(false);
    /// Set by [`clear_all`] (the exit guard): no cache is filled again.
    static CLOSED: Cell<bool> = Cell::new(false);
    /// The owner word of the record this thread's C sites cached cells of
    /// (null: none yet).
    static C_OWNER: Cell<*const AtomicU64> = Cell::new(core::ptr::null());
}

/// Caches `cell` (this thread's first cell of the site's variable, in a
/// registry that lives for the rest of the process) in `site` (this
/// thread's cache of the site), linking `site` into the thread's list if
/// it is not yet. Does nothing once the thread has run its exit
/// destructor, or when it interrupted another fill on this thread (the
/// caller then simply goes on without a cache). Async-signal-safe.
pub(crate) fn fill(site: &SiteCache, cell: &AtomicU64) {
    if CLOSED.with(|c| c.get()) || LINKING.with(|l| l.get()) {
        return;
    }
    LINKING.with(|l| l.set(true));
    compiler_fence(Ordering::SeqCst);
    if site.next.get().is_null() {
        let head = HEAD.with(|h| h.get());
        site.next.set(if head.is_null() { end() } else { head });
        compiler_fence(Ordering::SeqCst);
        #[cfg(loom)]
        crate::sync::signal::point();
        HEAD.with(|h| h.set(site));
    }
    compiler_fence(Ordering::SeqCst);
    site.cell.set(cell);
    compiler_fence(Ordering::SeqCst);
    LINKING.with(|l| l.set(false));
}

/// Nulls every cache of this thread (its exit destructor, before the
/// thread's id and records go to another thread). The caches stay linked:
/// [`fill`] refuses from now on.
pub(crate) fn clear_all() {
    // First: a handler that runs from here on fills nothing; one that ran
    // before has finished linking (it runs to completion on this thread)
    // and is in the list read below.
    let _ = CLOSED.try_with(|c| c.set(true));
    compiler_fence(Ordering::SeqCst);
    let _ = HEAD.try_with(|h| {
        let mut p = h.get();
        while !p.is_null() && p != end() {
            // SAFETY: every pointer in the list is a `SiteCache` thread-local
            // of this thread that `fill` linked in; thread-locals without a
            // destructor stay valid until the thread's TLS is released,
            // after every TLS destructor (this one included) has run. (A
            // library unloaded with its caches still linked would break
            // this: see the module documentation.)
            let site = unsafe { &*p };
            site.cell.set(core::ptr::null());
            p = site.next.get();
        }
    });
}

/// The site epoch word, on its own cache line (read by every C update,
/// written only by [`bump_c_epoch`]). Starts at 1 and only grows: 0 marks
/// a cache being written, and `u64::MAX` (never reached) an unfilled one.
#[repr(align(64))]
pub(crate) struct CEpoch(AtomicU64);

#[cfg(not(loom))]
static C_EPOCH: CEpoch = CEpoch(AtomicU64::new(1));
#[cfg(loom)]
crate::sync::lazy_static! {
    static ref C_EPOCH: CEpoch = CEpoch(AtomicU64::new(1));
}

/// The site epoch word (see the module documentation); C caches keep its
/// address. Async-signal-safe.
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) fn c_epoch() -> &'static AtomicU64 {
    &C_EPOCH.0
}

/// Moves the site epoch: every C site cache of every thread is stale from
/// now on (before a C handle is freed, and at the exit of a thread that
/// filled C sites).
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) fn bump_c_epoch() {
    C_EPOCH.0.fetch_add(1, Ordering::AcqRel);
}

/// Notes that this thread's C sites cache cells of the record whose owner
/// word is `owner` (the exit guard zeroes it). Returns `false` if they
/// already cache cells of another record (a C site then goes uncached).
/// Async-signal-safe.
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) fn note_c_owner(owner: &AtomicU64) -> bool {
    let known = C_OWNER.with(|o| o.get());
    if known.is_null() {
        C_OWNER.with(|o| o.set(owner));
        true
    } else {
        core::ptr::eq(known, owner)
    }
}

/// Starts writing a C site's cache: `false` (write nothing) once the
/// thread has run its exit guard, or when this interrupts another fill on
/// the thread. Pair a `true` with [`end_c_fill`]. Async-signal-safe.
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) fn begin_c_fill() -> bool {
    if CLOSED.with(|c| c.get()) || LINKING.with(|l| l.get()) {
        return false;
    }
    LINKING.with(|l| l.set(true));
    compiler_fence(Ordering::SeqCst);
    true
}

/// Ends a C site's cache write started by [`begin_c_fill`].
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) fn end_c_fill() {
    compiler_fence(Ordering::SeqCst);
    LINKING.with(|l| l.set(false));
}

/// Zeroes the owner word noted by [`note_c_owner`] and moves the site
/// epoch, if this thread filled C sites (the exit guard, before the
/// thread's id goes back): every C site cache of the thread fails its
/// check from now on.
pub(crate) fn release_c_owner() {
    let _ = C_OWNER.try_with(|o| {
        let word = o.get();
        if !word.is_null() {
            // SAFETY: the word is the owner word of a record of the
            // process-wide registry (the only registry C sites update),
            // which is never freed; this thread owns the record until its
            // id goes back, after this store.
            unsafe { &*word }.store(0, Ordering::Release);
            bump_c_epoch();
        }
    });
}
