//! Per-thread sharded cells: the hot storage behind every summed variable.
//!
//! A [`CellSpace`] belongs to one registry. A variable element that is
//! summed across threads (COUNTER, AGGREGATE, TIMER, LEVEL) owns one cell:
//! a (chunk, offset) address that is the same in every thread's
//! [`ThreadRecord`]. A variable (or bound instance)
//! holds its cells as a [`CellRange`], the only way out of this module:
//! it keeps its space alive, so its fast path needs no `unsafe` from its
//! callers, and its cold path (first touch, thread exit) stays in here.
//!
//! **Update** (owning thread only): two thread-local loads find this thread's
//! cell (the space's id, cached in the component handle, is compared with
//! the thread's one-entry cache, which also holds a copy of the record's
//! chunk pointers); then a relaxed load and a relaxed store of the cell. No lock, no read-modify-write, and the cell's
//! cache line is written by no other thread. After the thread's first touch
//! of the chunk it never allocates.
//!
//! **Read** (any thread): sum the cell over every thread record (and the
//! orphan record, below). Each cell has one writer and its value only moves
//! forward for counters, so two successive sums never go backwards.
//!
//! **Thread exit**: records are never freed; the thread's id is reused by a
//! later thread, which continues in the same record. Updates made after a
//! thread's exit destructor ran land in the shared orphan record, with
//! compare-and-swap. Nothing is lost and nothing is counted twice.
//!
//! Some cells hold what belongs to the thread that wrote them, not to the
//! record: a TIMER's start ticks (an interval in progress). Their ranges are
//! registered as *thread-owned* ([`CellRange::new_in`]); a thread
//! that takes over a record from an exited one zeroes them before it uses
//! the record ([`CellSpace::claim`]), so it never stops an interval it did
//! not start. An interval still open when its thread exits is dropped.

pub(crate) mod record;
pub(crate) mod site_cache;
pub(crate) mod thread_id;

use std::collections::HashMap;

use crate::lockfree::append_vec::AppendVec;
use crate::sync::{Arc, AtomicU64, Mutex, Ordering, unmodelled};
use record::cache as record_cache;
use record::{CHUNKS, ChunkIndex, ThreadRecord, chunk_cells};

/// The address of one cell: the same (chunk, offset) in every thread's
/// record. Private to `cells/`: outside, a [`CellRange`] names cells.
///
/// Packed in one word, offset in the low 32 bits and chunk above, so that
/// the hot path reads it with one load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CellAddr(u64);

impl CellAddr {
    fn new(chunk: ChunkIndex, offset: usize) -> CellAddr {
        debug_assert!(offset < chunk_cells(chunk.get()));
        CellAddr(((chunk.get() as u64) << 32) | offset as u64)
    }

    /// The chunk.
    #[inline(always)]
    pub(crate) fn chunk(self) -> ChunkIndex {
        ChunkIndex::new((self.0 >> 32) as usize).expect("a CellAddr's chunk is below CHUNKS")
    }

    /// The offset in the chunk.
    #[inline(always)]
    pub(crate) fn offset(self) -> usize {
        self.0 as u32 as usize
    }

    /// The packed word (see [`record::cache::cell`]).
    #[inline(always)]
    fn bits(self) -> u64 {
        self.0
    }

    /// The slot `i` cells after this one (within the same allocation).
    #[inline(always)]
    pub(crate) fn at(self, i: usize) -> CellAddr {
        CellAddr(self.0 + i as u64)
    }
}

/// Hands out contiguous slot ranges that never straddle a chunk.
struct RangeAllocator {
    chunk: usize,
    next: usize,
    /// Ranges given back (by dropped object instances), by length.
    free: HashMap<usize, Vec<CellAddr>>,
    /// Thread-owned ranges (see the module documentation): start, length.
    thread_owned: Vec<(CellAddr, usize)>,
}

static NEXT_SPACE_ID: unmodelled::AtomicU64 = unmodelled::AtomicU64::new(1);

/// The per-thread cells of one registry. See the module documentation.
pub(crate) struct CellSpace {
    id: u64,
    /// Record of thread id `t` at index `t - 1`.
    records: AppendVec<ThreadRecord>,
    /// Shared record for updates made after a thread's exit destructor.
    orphan: ThreadRecord,
    orphan_lock: Mutex<()>,
    alloc: Mutex<RangeAllocator>,
}

impl Default for CellSpace {
    fn default() -> Self {
        Self::new()
    }
}

impl CellSpace {
    pub(crate) fn new() -> Self {
        Self {
            // Never reused, so a stale thread-local cache entry never matches.
            id: NEXT_SPACE_ID.fetch_add(1, Ordering::Relaxed),
            records: AppendVec::new(),
            orphan: ThreadRecord::new(),
            orphan_lock: Mutex::new(()),
            alloc: Mutex::new(RangeAllocator {
                chunk: 0,
                next: 0,
                free: HashMap::new(),
                thread_owned: Vec::new(),
            }),
        }
    }

    /// Reserves `len` consecutive slots, every cell of them zero in every
    /// thread's record. A range given back earlier with the same length
    /// (and zeroed then, see [`CellSpace::release`]) is reused first.
    fn alloc(&self, len: usize) -> Result<CellAddr, &'static str> {
        let len = len.max(1);
        let mut a = self.alloc.lock();
        if let Some(slot) = a.free.get_mut(&len).and_then(Vec::pop) {
            return Ok(slot);
        }
        while a.next + len > chunk_cells(a.chunk) {
            if a.chunk + 1 >= CHUNKS {
                return Err("per-thread cell space exhausted");
            }
            a.chunk += 1;
            a.next = 0;
        }
        let slot = CellAddr::new(
            ChunkIndex::new(a.chunk).expect("chunk below CHUNKS"),
            a.next,
        );
        a.next += len;
        Ok(slot)
    }

    /// Gives a range back for reuse by a later [`CellSpace::alloc`] of the
    /// same length, after zeroing its cells in every thread's record and in
    /// the orphan record, so that the next owner starts from zero whatever
    /// its representation (`u64`, `f64` bits, timer start ticks).
    ///
    /// The caller guarantees that no thread updates or reads the range any
    /// more (its storage is being dropped: every handle to it is gone).
    /// Writing other threads' cells is then race-free, and the zeroes are
    /// published to the next owner by the allocator's lock, which
    /// [`CellSpace::alloc`] takes before handing the range out; a thread
    /// only touches the range through a handle it received after that.
    fn release(&self, slot: CellAddr, len: usize) {
        let len = len.max(1);
        let mut a = self.alloc.lock();
        for i in 0..len {
            let (chunk, offset) = (slot.chunk(), slot.offset() + i);
            for r in 0..self.records.len() {
                if let Some(cell) = self
                    .records
                    .get(r)
                    .and_then(|r| r.cell_acquire(chunk, offset))
                {
                    cell.store(0, Ordering::Relaxed);
                }
            }
            if let Some(cell) = self.orphan.cell_acquire(chunk, offset) {
                cell.store(0, Ordering::Relaxed);
            }
        }
        a.free.entry(len).or_default().push(slot);
    }

    /// Registers `len` cells at `slot` as thread-owned: a thread taking over
    /// a record zeroes them there first (see the module documentation).
    fn mark_thread_owned(&self, slot: CellAddr, len: usize) {
        let mut a = self.alloc.lock();
        a.thread_owned.push((slot, len));
    }

    /// Ends [`CellSpace::mark_thread_owned`] for the range at `slot` (its
    /// storage is being dropped).
    fn unmark_thread_owned(&self, slot: CellAddr) {
        let mut a = self.alloc.lock();
        a.thread_owned.retain(|&(s, _)| s != slot);
    }

    /// This space's id. Ids are never reused; a component handle caches the
    /// id next to its slot so that its fast path
    /// ([`CellSpace::update_cached`]) never reads the `CellSpace` itself.
    #[inline(always)]
    fn id(&self) -> u64 {
        self.id
    }

    /// Applies `f` to this thread's cell at `slot`: a relaxed load and a
    /// relaxed store once the thread has touched the slot's chunk.
    ///
    /// Async-signal-safe when this thread has updated a variable in the
    /// same chunk before (or called [`CellSpace::prepare_thread`] after the
    /// variable was registered). Its first use on a thread allocates.
    /// (The engine updates through [`CellRange::update`], which is this
    /// with the space's id held in the range; the unit tests use this.)
    #[cfg(test)]
    #[inline(always)]
    fn update(&self, slot: CellAddr, f: impl Fn(u64) -> u64) {
        // SAFETY: `self.id` is the id of `self`, which is alive.
        if !unsafe { Self::update_cached(self.id, slot, &f) } {
            self.update_slow(slot, &f);
        }
    }

    /// The fast path of `CellSpace::update`, for the space whose id is
    /// `id`, reading no field of the space: finds the cell with
    /// [`CellSpace::cached_cell`], does the relaxed load and relaxed store,
    /// and returns `true`. Returns `false`, having done nothing, when the
    /// cache holds another space or the thread has no chunk for the slot
    /// yet: the caller then calls [`CellSpace::update_slow`] (out of line,
    /// `#[cold]`). Async-signal-safe.
    ///
    /// # Safety
    /// `id` must be the id of a live `CellSpace` that allocated `slot`.
    #[inline(always)]
    unsafe fn update_cached(id: u64, slot: CellAddr, f: impl Fn(u64) -> u64) -> bool {
        // SAFETY: forwarded caller contract; the reference dies here.
        match unsafe { Self::cached_cell(id, slot) } {
            Some(cell) => {
                // Single writer: this thread owns the record.
                cell.store(f(cell.load(Ordering::Relaxed)), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// The calling thread's cell at `slot` in the space whose id is `id`,
    /// if the thread's record cache holds that space and its copy of the
    /// slot's chunk pointer: one thread-local load and a compare (the cache
    /// key), one thread-local load (the chunk pointer) and a null test.
    /// Reads no field of the space. Async-signal-safe.
    ///
    /// # Safety
    /// `id` must be the id of a live `CellSpace` that allocated `slot`, and
    /// the caller must not use the reference after that space is dropped
    /// (`'a` is unbounded: tie it to a borrow that keeps the space alive).
    /// (An id of a dropped space could match a stale cache entry.)
    #[inline(always)]
    unsafe fn cached_cell<'a>(id: u64, slot: CellAddr) -> Option<&'a AtomicU64> {
        // SAFETY: forwarded caller contract; the slot allocator keeps
        // `offset` inside its chunk.
        unsafe { record_cache::cell(id, slot.bits()) }
    }

    /// The slow path of `CellSpace::update`: creates this thread's id,
    /// record and chunk as needed (allocates; not async-signal-safe), caches
    /// the record, and applies `f`; after the thread's exit destructor, applies
    /// `f` to the shared orphan record with compare-and-swap.
    #[cold]
    #[inline(never)]
    fn update_slow(&self, slot: CellAddr, f: impl Fn(u64) -> u64) {
        if !self.update_slow_owned(slot, &f) {
            let cell = self.orphan_cell(slot.chunk(), slot.offset());
            let mut old = cell.load(Ordering::Relaxed);
            while let Err(now) =
                cell.compare_exchange_weak(old, f(old), Ordering::Relaxed, Ordering::Relaxed)
            {
                old = now;
            }
        }
    }

    /// The slow path for a thread-owned cell: as [`CellSpace::update_slow`]
    /// while the thread has a record, but after the thread's exit
    /// destructor it does nothing (an interval started then is dropped, as
    /// one open at exit is) and returns `false`.
    #[cold]
    #[inline(never)]
    fn update_slow_owned(&self, slot: CellAddr, f: &dyn Fn(u64) -> u64) -> bool {
        let Some(rec) = self.local_record() else {
            return false;
        };
        let (chunk, offset) = (slot.chunk(), slot.offset());
        if rec.ensure_chunk(chunk) {
            // The cache's copy of the chunk table predates the new chunk.
            record_cache::set(self.id, rec);
        }
        let cell = rec.cell(chunk, offset).expect("chunk just ensured");
        cell.store(f(cell.load(Ordering::Relaxed)), Ordering::Relaxed);
        true
    }

    fn orphan_cell(&self, chunk: ChunkIndex, offset: usize) -> &AtomicU64 {
        if let Some(cell) = self.orphan.cell_acquire(chunk, offset) {
            return cell;
        }
        let _g = self.orphan_lock.lock();
        self.orphan.ensure_chunk(chunk);
        self.orphan
            .cell_acquire(chunk, offset)
            .expect("chunk just ensured")
    }

    /// This thread's value of the cell at `slot` (0 if never touched).
    /// Async-signal-safe under the same conditions as `update`.
    #[inline]
    fn load_local(&self, slot: CellAddr) -> u64 {
        self.local_cell_existing(slot)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The calling thread's cell at `slot`, allocating it on first use
    /// (`shared: false`: this thread is its only writer); on a thread whose
    /// exit has begun, the orphan record's cell (`shared: true`: writers
    /// must use read-modify-writes).
    fn local_cell(&self, slot: CellAddr) -> LocalCell<'_> {
        match self.owned_cell(slot) {
            Some(owned) => LocalCell {
                cell: owned.cell,
                shared: false,
            },
            None => LocalCell {
                cell: self.orphan_cell(slot.chunk(), slot.offset()),
                shared: true,
            },
        }
    }

    /// The calling thread's cell at `slot` with what proves it is still
    /// the thread's (see [`OwnedCell`]), creating the record and chunk if
    /// needed. `None` once the thread is exiting.
    fn owned_cell(&self, slot: CellAddr) -> Option<OwnedCell<'_>> {
        let rec = self.local_record()?;
        if rec.ensure_chunk(slot.chunk()) {
            record_cache::set(self.id, rec);
        }
        Some(OwnedCell {
            cell: rec.cell(slot.chunk(), slot.offset())?,
            owner: rec.owner_word(),
            incarnation: thread_id::incarnation(),
        })
    }

    /// The calling thread's existing cell at `slot`, if its record and chunk
    /// exist. Async-signal-safe.
    fn local_cell_existing(&self, slot: CellAddr) -> Option<&AtomicU64> {
        let rec = match record_cache::get(self.id) {
            // SAFETY: as in `update`.
            Some(rec) => unsafe { &*rec },
            None => self.local_record_if_exists()?,
        };
        rec.cell(slot.chunk(), slot.offset())
    }

    /// This thread's record, creating it (and the thread id) on first use.
    /// `None` once the thread is exiting.
    fn local_record(&self) -> Option<&ThreadRecord> {
        let tid = thread_id::current_or_assign()?;
        let index = tid as usize - 1;
        while self.records.len() <= index {
            self.records.push_with(|next| {
                if next <= index {
                    (Some(ThreadRecord::new()), ())
                } else {
                    (None, ())
                }
            });
        }
        let rec = self.records.get(index).expect("record just ensured");
        let me = thread_id::incarnation();
        if rec.owner() != me {
            self.claim(rec, me);
        }
        record_cache::set(self.id, rec);
        Some(rec)
    }

    /// Takes over `rec` for the calling thread, of incarnation `me`: zeroes
    /// its thread-owned cells (the previous owner's open intervals), then
    /// records the new owner. The previous owner has exited (its id came
    /// back through the id allocator's lock, which orders its writes before
    /// ours), so this thread is the record's only writer. Not signal-safe
    /// (takes the allocator's lock); runs once per thread and space.
    fn claim(&self, rec: &ThreadRecord, me: u64) {
        let a = self.alloc.lock();
        for &(slot, len) in &a.thread_owned {
            for i in 0..len {
                if let Some(cell) = rec.cell_acquire(slot.chunk(), slot.offset() + i) {
                    cell.store(0, Ordering::Relaxed);
                }
            }
        }
        rec.set_owner(me);
    }

    /// This thread's record if it exists already. Async-signal-safe.
    fn local_record_if_exists(&self) -> Option<&ThreadRecord> {
        let tid = thread_id::current_raw();
        if tid == thread_id::UNASSIGNED || tid == thread_id::EXITED {
            return None;
        }
        let rec = self.records.get(tid as usize - 1)?;
        // Not taken over by this thread yet: what it holds is a previous
        // owner's until `claim` (on a path that may lock) has run.
        if rec.owner() != thread_id::incarnation() {
            return None;
        }
        record_cache::set(self.id, rec);
        Some(rec)
    }

    /// Allocates, for the calling thread, every chunk that holds a slot
    /// allocated so far, so that later updates of those variables from this
    /// thread (including from a signal handler) never allocate.
    pub(crate) fn prepare_thread(&self) {
        let top = self.alloc.lock().chunk;
        if let Some(rec) = self.local_record() {
            for k in (0..=top).filter_map(ChunkIndex::new) {
                rec.ensure_chunk(k);
            }
            record_cache::set(self.id, rec);
        }
    }

    /// Calls `f` with every thread's cell at `slot` that exists. Lock-free
    /// and async-signal-safe: atomic loads only.
    #[inline]
    fn for_each_cell(&self, slot: CellAddr, mut f: impl FnMut(u64)) {
        self.for_each_record_cell(slot, &mut f);
        if let Some(cell) = self.orphan.cell_acquire(slot.chunk(), slot.offset()) {
            f(cell.load(Ordering::Relaxed));
        }
    }

    /// As [`CellSpace::for_each_cell`], without the orphan record: the
    /// cells of the thread records only.
    #[inline]
    fn for_each_record_cell(&self, slot: CellAddr, mut f: impl FnMut(u64)) {
        let (chunk, offset) = (slot.chunk(), slot.offset());
        let n = self.records.len();
        for i in 0..n {
            if let Some(cell) = self
                .records
                .get(i)
                .and_then(|r| r.cell_acquire(chunk, offset))
            {
                f(cell.load(Ordering::Relaxed));
            }
        }
    }

    /// Allocates the orphan record's chunk that holds `slot`, so that
    /// [`CellSpace::set_total`] on that slot never takes `orphan_lock` nor
    /// allocates. Call it where allocating is allowed (a LEVEL handle's
    /// creation). Costs one chunk per chunk holding a LEVEL, once per space.
    fn prepare_orphan(&self, slot: CellAddr) {
        self.orphan_cell(slot.chunk(), slot.offset());
    }

    /// Makes the sum of the cell at `slot` over all threads equal to `x`
    /// (`f64` bits when `float`), as of the moment of the store, without
    /// touching any thread's cell: stores `x − (sum of the thread records'
    /// cells)` into the **orphan** record's cell with a compare-and-swap
    /// loop, re-reading the thread cells on each attempt.
    ///
    /// Why it is exact (the basis of `Level::set`):
    /// - The thread cells are written only by their owners' `inc`/`dec`
    ///   (±1 steps: integers, exact in `f64` below 2^53), so `x − sum` is
    ///   the only rounding, and none when it is representable (any `x`
    ///   while no thread holds a delta).
    /// - Concurrent `set_total`s on the slot all end with a CAS on the same
    ///   cell, whose result does not depend on the value it replaces: the
    ///   last CAS in the cell's modification order determines the total,
    ///   `x_last + (thread-cell changes it did not see)`. With no
    ///   concurrent `inc`/`dec` that is exactly `x_last`; a concurrent
    ///   `inc`/`dec` counts as before the set (seen in the sum: cancelled)
    ///   or after it (not seen: added on top). An exiting thread's update
    ///   of the orphan cell (a CAS add in `update_slow`) is ordered the
    ///   same way: before the set's CAS, overwritten; after it, added.
    /// - A signal handler that interrupts this on the same thread and sets
    ///   the slot makes the interrupted CAS fail; it retries and wins:
    ///   the later-completing set wins, as between threads.
    ///
    /// Lock-free (some CAS always succeeds) and async-signal-safe once the
    /// orphan chunk exists ([`CellSpace::prepare_orphan`]); before that the
    /// first call creates it under `orphan_lock`. Needs no thread id: also
    /// correct from an exiting thread. O(thread records) per attempt.
    fn set_total(&self, slot: CellAddr, x: u64, float: bool) {
        let cell = self.orphan_cell(slot.chunk(), slot.offset());
        let mut old = cell.load(Ordering::Relaxed);
        loop {
            let new = if float {
                let mut others = 0.0;
                self.for_each_record_cell(slot, |v| others += f64::from_bits(v));
                (f64::from_bits(x) - others).to_bits()
            } else {
                let mut others = 0u64;
                self.for_each_record_cell(slot, |v| others = others.wrapping_add(v));
                x.wrapping_sub(others)
            };
            match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// The wrapping sum of the cell at `slot` over all threads.
    #[inline]
    fn sum(&self, slot: CellAddr) -> u64 {
        let mut total = 0u64;
        self.for_each_cell(slot, |v| total = total.wrapping_add(v));
        total
    }

    /// The sum of the cell at `slot` over all threads, cells holding `f64` bits.
    #[inline]
    fn sum_f64(&self, slot: CellAddr) -> f64 {
        let mut total = 0.0;
        self.for_each_cell(slot, |v| total += f64::from_bits(v));
        total
    }

    /// Number of thread records (threads that ever updated this space,
    /// counting reused ids once).
    pub(crate) fn thread_records(&self) -> usize {
        self.records.len()
    }

    /// Bytes of per-thread cell memory allocated in this space.
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.records
            .iter()
            .map(|(_, r)| r.allocated_bytes())
            .sum::<usize>()
            + self.orphan.allocated_bytes()
    }
}

/// A cell the calling thread may update directly (see
/// `CellSpace::local_cell`).
#[derive(Clone, Copy)]
pub(crate) struct LocalCell<'a> {
    pub(crate) cell: &'a AtomicU64,
    /// Whether other threads write the cell too (the orphan record of an
    /// exiting thread): then only read-modify-writes keep their updates.
    pub(crate) shared: bool,
}

/// A thread's cell, as a C use site caches it: the cell, the owner word
/// of the record it is in, and the calling thread's incarnation. While the
/// owner word holds that incarnation, the cell is the thread's alone: the
/// word changes only when the thread exits (its exit guard zeroes the word
/// of the record its C sites used, see `site_cache::note_c_owner`) or
/// another thread takes the record over.
#[cfg_attr(not(any(feature = "ffi", loom)), allow(dead_code))] // the C interface's
pub(crate) struct OwnedCell<'a> {
    pub(crate) cell: &'a AtomicU64,
    pub(crate) owner: &'a AtomicU64,
    pub(crate) incarnation: u64,
}

/// A variable's cells: `len` consecutive cells of a [`CellSpace`], the
/// same in every thread's record. The only face of this module to the
/// floors above: it holds the space (so the space outlives every use) and
/// caches its id and base address (so the update fast path reads the
/// handle, the thread's record cache, the record and the cell — never the
/// space itself). Cheap to clone.
///
/// Cells can be thread-owned (a TIMER's start ticks): a thread that takes
/// over an exited thread's record finds them zeroed.
#[derive(Clone)]
pub(crate) struct CellRange {
    space: Arc<CellSpace>,
    /// `space.id`, cached for the fast path.
    id: u64,
    base: CellAddr,
    len: usize,
}

impl CellRange {
    /// Reserves `len` cells in `space` (a released range of the same length
    /// first), zero in every thread's record; the last `owned` of them are
    /// thread-owned. Takes the space's lock: registration paths only.
    pub(crate) fn new_in(
        space: &Arc<CellSpace>,
        len: usize,
        owned: usize,
    ) -> Result<CellRange, &'static str> {
        debug_assert!(owned <= len);
        let base = space.alloc(len)?;
        if owned > 0 {
            space.mark_thread_owned(base.at(len - owned), owned);
        }
        Ok(CellRange {
            space: space.clone(),
            id: space.id(),
            base,
            len: len.max(1),
        })
    }

    #[inline(always)]
    fn addr(&self, i: usize) -> CellAddr {
        debug_assert!(i < self.len, "cell {i} of {}", self.len);
        self.base.at(i)
    }

    /// Applies `f` to the calling thread's cell `i` (a relaxed load and a
    /// relaxed store once the thread has touched the cell's chunk). See
    /// `CellSpace::update` for when it is async-signal-safe.
    #[inline(always)]
    pub(crate) fn update(&self, i: usize, f: impl Fn(u64) -> u64) {
        let addr = self.addr(i);
        // SAFETY: `self.id` is the id of `self.space`, which this range
        // keeps alive, and that space allocated `addr`.
        if !unsafe { CellSpace::update_cached(self.id, addr, &f) } {
            self.space.update_slow(addr, f);
        }
    }

    /// [`CellRange::update`] for a thread-owned cell: after the thread's
    /// exit destructor it does nothing, instead of writing the shared
    /// orphan record (an interval started then is dropped).
    #[inline(always)]
    pub(crate) fn update_owned(&self, i: usize, f: impl Fn(u64) -> u64) {
        let addr = self.addr(i);
        // SAFETY: as in `update`.
        if !unsafe { CellSpace::update_cached(self.id, addr, &f) } {
            self.space.update_slow_owned(addr, &f);
        }
    }

    /// The calling thread's cell `i` if the thread's record cache holds it
    /// already (the fast path's lookup, no lock, no allocation, no
    /// lookup of the thread id). Async-signal-safe.
    #[inline(always)]
    pub(crate) fn cached_local_cell(&self, i: usize) -> Option<&AtomicU64> {
        // SAFETY: `self.id` is the id of `self.space`, kept alive by
        // `self` for the lifetime of the returned reference; the space
        // allocated the address.
        unsafe { CellSpace::cached_cell(self.id, self.addr(i)) }
    }

    /// This thread's value of cell `i` (0 if never touched).
    /// Async-signal-safe under the same conditions as `update`.
    #[inline]
    pub(crate) fn load_local(&self, i: usize) -> u64 {
        self.space.load_local(self.addr(i))
    }

    /// The calling thread's cell `i` and its owner word (see
    /// [`OwnedCell`]), allocating the cell on first use; `None` once the
    /// thread is exiting.
    pub(crate) fn owned_cell(&self, i: usize) -> Option<OwnedCell<'_>> {
        self.space.owned_cell(self.addr(i))
    }

    /// The calling thread's cell `i`, allocating it on first use.
    pub(crate) fn local_cell(&self, i: usize) -> LocalCell<'_> {
        self.space.local_cell(self.addr(i))
    }

    /// The wrapping sum of cell `i` over all threads. Async-signal-safe.
    #[inline]
    pub(crate) fn sum(&self, i: usize) -> u64 {
        self.space.sum(self.addr(i))
    }

    /// The sum of cell `i` over all threads, cells holding `f64` bits.
    #[inline]
    pub(crate) fn sum_f64(&self, i: usize) -> f64 {
        self.space.sum_f64(self.addr(i))
    }

    /// Makes the sum of cell `i` over all threads `x`; see
    /// [`CellSpace::set_total`].
    pub(crate) fn set_total(&self, i: usize, x: u64, float: bool) {
        self.space.set_total(self.addr(i), x, float)
    }

    /// Allocates the orphan record's chunk of this range, so that
    /// [`CellRange::set_total`] never locks nor allocates. Registration
    /// paths only.
    pub(crate) fn prepare_orphan(&self) {
        self.space.prepare_orphan(self.base)
    }

    /// Gives the cells back to the space, zeroed in every record, for a
    /// later range of the same length; `owned` is what [`CellRange::new_in`]
    /// was given. The caller (a storage being dropped) guarantees that no
    /// clone of this range is used any more: otherwise updates would land
    /// in another variable's cells.
    pub(crate) fn release(&self, owned: usize) {
        if owned > 0 {
            self.space
                .unmark_thread_owned(self.base.at(self.len - owned));
        }
        self.space.release(self.base, self.len);
    }
}

/// Number of threads currently holding a pvar thread id (all registries).
pub(crate) fn live_threads() -> u32 {
    thread_id::live_threads()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn slots_never_straddle_a_chunk() {
        let space = CellSpace::new();
        let a = space.alloc(60).unwrap();
        let b = space.alloc(10).unwrap();
        assert_eq!((a.chunk().get(), a.offset()), (0, 0));
        assert_eq!(
            (b.chunk().get(), b.offset()),
            (1, 0),
            "60 + 10 > 64 cells of chunk 0"
        );
        let big = space.alloc(1000).unwrap();
        assert!(chunk_cells(big.chunk().get()) >= big.offset() + 1000);
    }

    #[test]
    fn threads_sum_exactly_and_exited_threads_keep_counts() {
        let space = Arc::new(CellSpace::new());
        let slot = space.alloc(1).unwrap();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let space = space.clone();
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        space.update(slot, |v| v + 1);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(space.sum(slot), 800_000);
        // New threads reuse the exited threads' ids and records.
        let before = space.thread_records();
        let space2 = space.clone();
        std::thread::spawn(move || space2.update(slot, |v| v + 1))
            .join()
            .unwrap();
        assert_eq!(space.sum(slot), 800_001);
        assert!(space.thread_records() <= before.max(1) + 1);
    }

    #[test]
    fn chunk_indices_cover_every_chunk() {
        for k in 0..CHUNKS {
            assert_eq!(ChunkIndex::new(k).map(ChunkIndex::get), Some(k));
        }
        assert_eq!(ChunkIndex::new(CHUNKS), None);
    }

    #[test]
    fn released_range_is_reused_and_zeroed() {
        let space = CellSpace::new();
        let a = space.alloc(4).unwrap();
        // Values in this thread's record and in another (exited) thread's.
        space.update(a.at(0), |v| v + 7);
        space.update(a.at(3), |_| u64::MAX);
        std::thread::scope(|s| {
            s.spawn(|| space.update(a.at(1), |_| 2.5f64.to_bits()));
        });
        assert_eq!(space.sum(a.at(0)), 7);
        space.release(a, 4);
        let b = space.alloc(4).unwrap();
        assert_eq!(a, b);
        for i in 0..4 {
            assert_eq!(space.sum(b.at(i)), 0, "cell {i}");
            assert_eq!(space.sum_f64(b.at(i)), 0.0, "cell {i}");
        }
        // A different length does not take it.
        assert_ne!(space.alloc(3).unwrap(), a);
    }
}
