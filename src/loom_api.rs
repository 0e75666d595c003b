//! Loom only (`--cfg loom`): thin public wrappers over the engine's
//! internal concurrent structures, for the models in `loom-tests/`.
//!
//! Nothing here adds logic: every method forwards to the engine code that
//! the normal build runs, which under `--cfg loom` is built on loom's
//! atomics, mutexes, cells and thread-locals (see `sync`). The tool-side
//! protocols (sessions, handles and their run words, watermark
//! subscriptions, readreset, free) are driven through the public keyed
//! tool API ([`Registry::tool`](crate::Registry::tool)) instead, and event
//! delivery through the public event API; the event buffer and the event
//! registrations' slot table are exposed here ([`EventRing`],
//! [`EventRegs`]) to be modelled on their own.
//!
//! Rule for models: a model's main thread must not update a sharded
//! variable (it would take a thread id, whose exit guard runs after loom has
//! dropped the id allocator); do updates on spawned, joined threads.

#![allow(missing_docs, clippy::new_without_default)]

use crate::hot::cells::{CellRange, CellSpace, site_cache, thread_id};
use crate::sync::{Arc, AtomicBool, AtomicU64, unmodelled};

/// Ranges one [`Cells`] can hand out (models take one or two).
const MAX_RANGES: usize = 8;

/// A registry's per-thread cell space, with the ranges reserved in it (as
/// the variables of a registry hold theirs).
pub struct Cells {
    space: Arc<CellSpace>,
    /// The ranges handed out, by [`CellSlot`] number. Kept here so that a
    /// slot is a plain `Copy` number, and using it clones no (modelled)
    /// `Arc`; `std` (unmodelled) cells: only the models' bookkeeping.
    ranges: [unmodelled::OnceLock<CellRange>; MAX_RANGES],
    next: unmodelled::AtomicUsize,
}

/// A C use site's per-thread cache (`pvar_site` of `pvar.h`, for one
/// variable), for [`Cells::c_site_add`]; a model keeps one per thread in a
/// `loom::thread_local!`.
pub struct CSite {
    cell: core::cell::Cell<*const AtomicU64>,
    owner: core::cell::Cell<*const AtomicU64>,
    incarnation: core::cell::Cell<u64>,
}

impl CSite {
    pub fn new() -> Self {
        Self {
            cell: core::cell::Cell::new(core::ptr::null()),
            owner: core::cell::Cell::new(core::ptr::null()),
            incarnation: core::cell::Cell::new(0),
        }
    }
}

/// A macro's per-thread cache (`pvar_use_site` of `pvar.h`), for
/// [`Cells::use_site_add`]: the handle it was filled for (modelled as a
/// number, the handle's address), the site epoch then, and the cell.
pub struct UseSite {
    var: core::cell::Cell<usize>,
    epoch: core::cell::Cell<u64>,
    cell: core::cell::Cell<*const AtomicU64>,
}

impl UseSite {
    pub fn new() -> Self {
        Self {
            var: core::cell::Cell::new(0),
            epoch: core::cell::Cell::new(0),
            cell: core::cell::Cell::new(core::ptr::null()),
        }
    }
}

/// What `pvar_var_free` does before freeing a handle: moves the site
/// epoch, so that every macro cache keyed by the handle's address is
/// stale before the address can be given to another handle.
pub fn c_handle_freed() {
    site_cache::bump_c_epoch()
}

/// One cell of a range reserved in a [`Cells`]: the same cell in every
/// thread's record.
#[derive(Clone, Copy, Debug)]
pub struct CellSlot {
    range: usize,
    i: usize,
}

impl Cells {
    pub fn new() -> Self {
        Self {
            space: Arc::new(CellSpace::new()),
            ranges: Default::default(),
            next: unmodelled::AtomicUsize::new(0),
        }
    }
    /// Reserves one cell.
    pub fn alloc(&self) -> CellSlot {
        self.alloc_n(1)
    }
    /// Reserves `len` consecutive cells (a range given back earlier with
    /// the same length first); `slot.at(i)` names cell `i`.
    pub fn alloc_n(&self, len: usize) -> CellSlot {
        let range = CellRange::new_in(&self.space, len, 0).expect("cell space");
        let n = self
            .next
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        assert!(n < MAX_RANGES, "loom_api::Cells holds {MAX_RANGES} ranges");
        if self.ranges[n].set(range).is_err() {
            unreachable!("range number {n} handed out twice");
        }
        CellSlot { range: n, i: 0 }
    }
    fn range(&self, slot: CellSlot) -> &CellRange {
        self.ranges[slot.range].get().expect("a slot of this Cells")
    }
    /// Gives the range of `slot` back, zeroing its cells in every record
    /// (the caller guarantees nobody updates them any more).
    pub fn release(&self, slot: CellSlot) {
        assert_eq!(slot.i, 0, "release a range by its first cell");
        self.range(slot).release(0)
    }
    /// The owning thread's update (relaxed load + relaxed store).
    pub fn add(&self, slot: CellSlot, n: u64) {
        self.range(slot).update(slot.i, |v| v.wrapping_add(n));
    }
    /// Merged read over every thread's record and the orphan record.
    pub fn sum(&self, slot: CellSlot) -> u64 {
        self.range(slot).sum(slot.i)
    }
    /// The calling thread's own cell value.
    pub fn load_local(&self, slot: CellSlot) -> u64 {
        self.range(slot).load_local(slot.i)
    }
    /// Whether `a` and `b` name the same cell: the same cell of the calling
    /// thread's record, which must be cached (the thread's last update was
    /// to this space) and hold `a`'s chunk. Allocates nothing, writes
    /// nothing: also for a released range.
    pub fn same_cell(&self, a: CellSlot, b: CellSlot) -> bool {
        let cell = |s: CellSlot| {
            self.range(s)
                .cached_local_cell(s.i)
                .map(|c| c as *const AtomicU64)
        };
        let pa = cell(a).expect("the calling thread's cell of `a`");
        cell(b) == Some(pa)
    }
    pub fn thread_records(&self) -> usize {
        self.space.thread_records()
    }
    /// What `pvar.h`'s `PVAR_COUNTER_ADD` does with a call site's cache
    /// `site` (one per thread, as the C `static __thread` is): the cached
    /// cell while the record's owner word holds the cached incarnation;
    /// else `pvar_site_fill_v2`'s steps (the thread's owned cell, noted and
    /// cached under the fill guard) and the cell's update; else the
    /// function path (the orphan record once the thread is exiting).
    pub fn c_site_add(&self, site: &CSite, slot: CellSlot, n: u64) {
        let (cell, owner) = (site.cell.get(), site.owner.get());
        if !cell.is_null() {
            // SAFETY: a filled cache points at a cell and an owner word of
            // a record of `self.space`, which `self` keeps alive; records
            // and chunks are never freed before their space.
            let (cell, owner) = unsafe { (&*cell, &*owner) };
            if owner.load(crate::sync::Ordering::Relaxed) == site.incarnation.get() {
                let v = cell.load(crate::sync::Ordering::Relaxed);
                cell.store(v.wrapping_add(n), crate::sync::Ordering::Relaxed);
                return;
            }
        }
        let range = self.range(slot);
        match range.owned_cell(slot.i) {
            Some(o) => {
                if site_cache::note_c_owner(o.owner) && site_cache::begin_c_fill() {
                    site.cell.set(core::ptr::null());
                    site.owner.set(o.owner);
                    site.incarnation.set(o.incarnation);
                    site.cell.set(o.cell);
                    site_cache::end_c_fill();
                }
                let v = o.cell.load(crate::sync::Ordering::Relaxed);
                o.cell
                    .store(v.wrapping_add(n), crate::sync::Ordering::Relaxed);
            }
            None => range.update(slot.i, |v| v.wrapping_add(n)),
        }
    }
    /// What `pvar.h`'s `PVAR_COUNTER_ADD(v, n)` does with a call site's
    /// cache `site` for handle `var` (a non-zero number standing for the
    /// handle's address) of the variable whose cell is `slot`: the cached
    /// cell while the site was filled for `var` and the site epoch is
    /// unchanged (one relaxed load); else `pvar_use_site_fill_v1`'s steps
    /// (the epoch read first, the thread's owned cell, noted and cached
    /// under the fill guard) and the cell's update; else the function path
    /// (the orphan record once the thread is exiting).
    pub fn use_site_add(&self, site: &UseSite, var: usize, slot: CellSlot, n: u64) {
        let word = site_cache::c_epoch();
        if site.var.get() == var && word.load(crate::sync::Ordering::Relaxed) == site.epoch.get() {
            // SAFETY: a cache whose epoch matches was filled by this
            // thread with a cell of its record of `self.space`, which
            // `self` keeps alive; records and chunks are never freed
            // before their space.
            let cell = unsafe { &*site.cell.get() };
            let v = cell.load(crate::sync::Ordering::Relaxed);
            cell.store(v.wrapping_add(n), crate::sync::Ordering::Relaxed);
            return;
        }
        let epoch = word.load(crate::sync::Ordering::Acquire);
        let range = self.range(slot);
        match range.owned_cell(slot.i) {
            Some(o) => {
                if site_cache::note_c_owner(o.owner) && site_cache::begin_c_fill() {
                    site.epoch.set(0);
                    site.var.set(var);
                    site.cell.set(o.cell);
                    site.epoch.set(epoch);
                    site_cache::end_c_fill();
                }
                let v = o.cell.load(crate::sync::Ordering::Relaxed);
                o.cell
                    .store(v.wrapping_add(n), crate::sync::Ordering::Relaxed);
            }
            None => range.update(slot.i, |v| v.wrapping_add(n)),
        }
    }
    pub fn prepare_thread(&self) {
        self.space.prepare_thread()
    }
}

impl CellSlot {
    /// Cell `i` of the range, counted from this cell.
    pub fn at(self, i: usize) -> CellSlot {
        CellSlot {
            range: self.range,
            i: self.i + i,
        }
    }
}

/// The calling thread's raw pvar thread id (0 = none yet).
pub fn thread_id() -> u32 {
    thread_id::current_raw()
}

/// Runs the calling thread's exit guard now, as thread exit would: the id
/// goes back to the free list (a later thread continues in its records) and
/// later updates from this thread go to the shared orphan record. Every
/// modelled thread that updated must call this last: loom runs thread-local
/// destructors only after `join` has returned.
pub fn thread_exit() {
    thread_id::run_exit_guard()
}

/// The performance variables of `reg`, as a use site's `home` function
/// returns them (a model keeps its registry in a `loom::lazy_static`).
pub fn site_home(reg: &'static crate::registry::Registry) -> &'static Arc<crate::pvar::Pvars> {
    reg.pvars_shared()
}

/// Whether this thread's cache of a use site holds a cell.
pub fn site_cache_filled(
    cache: &'static crate::sync::SiteLocal<crate::hot::cells::site_cache::SiteCache>,
) -> bool {
    cache.with(|c| c.is_filled())
}

/// Number of thread ids held by live threads.
pub fn live_threads() -> u32 {
    thread_id::live_threads()
}

/// The append-only vector behind the registry, records and slot tables.
pub struct AppendVec<T>(crate::lockfree::append_vec::AppendVec<T>);

impl<T> AppendVec<T> {
    pub fn new() -> Self {
        Self(crate::lockfree::append_vec::AppendVec::new())
    }
    pub fn push(&self, v: T) -> usize {
        self.0.push(v)
    }
    pub fn get(&self, i: usize) -> Option<&T> {
        self.0.get(i)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
}

/// A modelled signal handler (see `sync::signal`).
pub mod signal {
    /// Runs `handler` on this thread at the `skip`-th signal point it
    /// passes (0 = the next one): at every merged read of a variable's
    /// current value (between the load of a handle's word and its
    /// compare-and-swap or re-check), and in a watermark start between the
    /// marks becoming started and the started count being raised.
    pub fn arm(skip: usize, handler: impl FnOnce() + 'static) {
        crate::sync::signal::arm(skip, Box::new(handler))
    }
    /// Whether the armed handler has not run yet.
    pub fn pending() -> bool {
        crate::sync::signal::pending()
    }
    /// Drops the armed handler if it has not run; returns whether it had
    /// not (so that it cannot fire in a later operation).
    pub fn disarm() -> bool {
        crate::sync::signal::disarm()
    }
}

/// A thread's event buffer (`event::buffer::Ring`): producers push with a
/// compare-and-swap on the tail, the delivery-token holder peeks and pops.
pub struct EventRing(crate::event::buffer::Ring);

/// Words of record data in an [`EventRing`] entry.
pub const EVENT_RECORD_WORDS: usize = crate::event::buffer::RECORD_WORDS;

/// One [`EventRing`] entry as the consumer reads it: registration, event,
/// timestamp, object, record words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventEntry {
    pub registration: u64,
    pub event: u64,
    pub timestamp: u64,
    pub object: u64,
    pub record: [u64; EVENT_RECORD_WORDS],
}

impl EventRing {
    /// A ring of `capacity` entries (as `Ring::new`: at least 1).
    pub fn new(capacity: usize) -> Self {
        Self(crate::event::buffer::Ring::new(capacity))
    }
    /// A producer's push; `false` if the ring was full.
    pub fn push(&self, e: &EventEntry) -> bool {
        self.0.push(&crate::event::buffer::Pending {
            registration: e.registration,
            event: e.event,
            timestamp: e.timestamp,
            object: e.object,
            record: e.record,
        })
    }
    /// The consumer's look at the oldest published entry.
    pub fn peek(&self) -> Option<EventEntry> {
        self.0.peek().map(|p| EventEntry {
            registration: p.registration,
            event: p.event,
            timestamp: p.timestamp,
            object: p.object,
            record: p.record,
        })
    }
    /// The consumer frees the entry `peek` returned.
    pub fn pop(&self) {
        self.0.pop()
    }
}

/// The slot table as the event registrations use it
/// (`lockfree::slot_table`), holding probes whose `Retire::finish` runs
/// the closure given to [`EventRegs::alloc`], after checking that the
/// `before` of the free that retired it ran first and is visible. An
/// allocation first reclaims what the last delivery of a retired slot
/// left (as `Events::handle_alloc` does).
pub struct EventRegs(crate::lockfree::slot_table::SlotTable<RegProbe>);

/// What an [`EventRegs`] slot holds.
pub struct RegProbe {
    /// Set (relaxed) by the retire's `before`, as `handle_free` stores the
    /// free callback there.
    retired: AtomicBool,
    on_finish: Box<dyn Fn() + Send + Sync>,
}

impl crate::lockfree::slot_table::Retire for RegProbe {
    fn finish(&self) {
        assert!(
            self.retired.load(crate::sync::Ordering::Relaxed),
            "finish ran without seeing the retire's before"
        );
        (self.on_finish)()
    }
}

/// A delivery's reference to an [`EventRegs`] slot; dropping it may
/// finish a retired slot (run its `on_finish`).
pub struct EventInside<'a>(#[allow(dead_code)] crate::lockfree::slot_table::Ref<'a, RegProbe>);

impl EventRegs {
    /// A table of at most `capacity` registrations.
    pub fn new(capacity: usize) -> Self {
        Self(crate::lockfree::slot_table::SlotTable::with_capacity(
            capacity,
        ))
    }
    /// A new registration whose finish runs `on_finish`; `None` if full.
    pub fn alloc(&self, on_finish: impl Fn() + Send + Sync + 'static) -> Option<u64> {
        while self.0.reclaim().is_some() {}
        self.0
            .try_alloc(RegProbe {
                retired: AtomicBool::new(false),
                on_finish: Box::new(on_finish),
            })
            .ok()
    }
    /// Enters registration `key` (`None` if it is not live).
    pub fn enter(&self, key: u64) -> Option<EventInside<'_>> {
        self.0.get(key).map(EventInside)
    }
    /// Retires registration `key` (its `before` marks the probe retired);
    /// `false` if it was not live.
    pub fn retire(&self, key: u64) -> bool {
        self.0
            .free(key, |p| {
                p.retired.store(true, crate::sync::Ordering::Relaxed)
            })
            .is_some()
    }
    /// Whether the slot of a retired registration waits to be reclaimed
    /// (its last delivery left it).
    pub fn has_retired(&self) -> bool {
        self.0.has_retired()
    }
}
