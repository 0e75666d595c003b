//! One thread's cells in one cell space: a fixed table of chunk pointers;
//! and [`cache`], how a thread finds its own record again in one load.
//!
//! Chunk `k` holds `64 << k` cells of 8 bytes, allocated on the owning
//! thread's first touch of a slot in it, 128-byte aligned and a whole number
//! of 128-byte lines, so no two threads' cells ever share a cache line (two
//! lines, to defeat the adjacent-line prefetcher). Chunks never move and are
//! freed only with the cell space, so a reference to a cell stays valid for
//! the life of the registry.

use crate::sync::{AtomicPtr, AtomicU64, Ordering};

/// Number of chunk pointers per record: room for `64 * (2^26 - 1)` cells.
pub(crate) const CHUNKS: usize = 26;
/// Cells in chunk 0.
pub(crate) const FIRST_CHUNK_CELLS: usize = 64;
const CELLS_PER_LINE: usize = 16;

/// Number of cells in chunk `k`.
pub(crate) const fn chunk_cells(k: usize) -> usize {
    FIRST_CHUNK_CELLS << k
}

/// A chunk number, below [`CHUNKS`] by construction. A fieldless enum, so
/// the compiler knows its range and indexing the chunk table with it needs
/// no bounds check (and no `unsafe`) on the hot path.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[rustfmt::skip]
pub(crate) enum ChunkIndex {
    K0, K1, K2, K3, K4, K5, K6, K7, K8, K9, K10, K11, K12,
    K13, K14, K15, K16, K17, K18, K19, K20, K21, K22, K23, K24, K25,
}

impl ChunkIndex {
    #[rustfmt::skip]
    const ALL: [ChunkIndex; CHUNKS] = {
        use ChunkIndex::*;
        [
            K0, K1, K2, K3, K4, K5, K6, K7, K8, K9, K10, K11, K12,
            K13, K14, K15, K16, K17, K18, K19, K20, K21, K22, K23, K24, K25,
        ]
    };

    /// Chunk `k`, if `k < CHUNKS`.
    pub(crate) fn new(k: usize) -> Option<ChunkIndex> {
        Self::ALL.get(k).copied()
    }

    /// The chunk's number.
    #[inline(always)]
    pub(crate) fn get(self) -> usize {
        self as usize
    }
}

/// A 128-byte group of cells; a chunk is a boxed slice of them.
///
/// `repr(C)` and nothing but the cells (asserted below): a chunk is
/// therefore also a contiguous array of `AtomicU64`, and cell `offset` of a
/// chunk is at byte `8 * offset` from its start (see [`ThreadRecord::cell`]).
/// (Under loom the atomics are larger; the same holds with their size.)
#[repr(C, align(128))]
pub(crate) struct Line([AtomicU64; CELLS_PER_LINE]);

const _: () =
    assert!(core::mem::size_of::<Line>() == CELLS_PER_LINE * core::mem::size_of::<AtomicU64>());

/// One thread's cells for one cell space.
pub(crate) struct ThreadRecord {
    chunks: [AtomicPtr<Line>; CHUNKS],
    /// The incarnation of the thread that owns the record now (0: none
    /// yet); see `thread_id`.
    owner: AtomicU64,
}

impl ThreadRecord {
    pub(crate) fn new() -> Self {
        Self {
            chunks: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
            owner: AtomicU64::new(0),
        }
    }

    /// The incarnation of the record's current owner.
    #[inline]
    pub(crate) fn owner(&self) -> u64 {
        self.owner.load(Ordering::Acquire)
    }

    /// The owner word itself: what a C use site compares with the
    /// incarnation it cached (see `site_cache`).
    pub(crate) fn owner_word(&self) -> &AtomicU64 {
        &self.owner
    }

    /// Records that the thread of incarnation `n` owns the record now.
    pub(crate) fn set_owner(&self, n: u64) {
        self.owner.store(n, Ordering::Release);
    }

    /// Chunk pointer `chunk` (in bounds by [`ChunkIndex`]'s range).
    #[inline(always)]
    fn chunk_ptr(&self, chunk: ChunkIndex, order: Ordering) -> *mut Line {
        self.chunks[chunk.get()].load(order)
    }

    /// The cell at (`chunk`, `offset`) if the chunk exists. Async-signal-safe.
    ///
    /// `Relaxed` suffices for the owning thread (it allocated the chunk);
    /// other threads use [`ThreadRecord::cell_acquire`]. On the hot path
    /// this is one load of the chunk pointer, a null test and an address
    /// `chunk + 8 * offset`.
    #[inline(always)]
    pub(crate) fn cell(&self, chunk: ChunkIndex, offset: usize) -> Option<&AtomicU64> {
        let lines = self.chunk_ptr(chunk, Ordering::Relaxed);
        // SAFETY: see `cell_at`.
        (!lines.is_null()).then(|| unsafe { Self::cell_at(lines, offset) })
    }

    /// As [`ThreadRecord::cell`], for readers on other threads: the Acquire
    /// load makes the chunk's zero initialisation visible.
    #[inline]
    pub(crate) fn cell_acquire(&self, chunk: ChunkIndex, offset: usize) -> Option<&AtomicU64> {
        let lines = self.chunk_ptr(chunk, Ordering::Acquire);
        // SAFETY: see `cell_at`.
        (!lines.is_null()).then(|| unsafe { Self::cell_at(lines, offset) })
    }

    /// # Safety
    /// `lines` must be a live chunk pointer loaded from `self.chunks[k]` and
    /// `offset < chunk_cells(k)`. The slot allocator only hands out offsets
    /// inside their chunk, and chunks live as long as `self`.
    #[inline(always)]
    unsafe fn cell_at<'a>(lines: *const Line, offset: usize) -> &'a AtomicU64 {
        // SAFETY: a chunk is one allocation of `chunk_cells(k) / 16` lines,
        // each exactly 16 `AtomicU64`s with no padding (`repr(C)`, size
        // asserted at `Line`), so it is also an array of `chunk_cells(k)` cells
        // and the pointer keeps the provenance of the whole allocation. The
        // caller guarantees `offset < chunk_cells(k)`: the cell is in bounds.
        unsafe { &*lines.cast::<AtomicU64>().add(offset) }
    }

    /// Allocates chunk `k` if this record does not have it yet. Only the
    /// owning thread (or the cell space, for the shared orphan
    /// record, under its lock) calls this. Allocates: not signal-safe.
    /// Returns whether it allocated.
    pub(crate) fn ensure_chunk(&self, k: ChunkIndex) -> bool {
        let k = k.get();
        if !self.chunks[k].load(Ordering::Relaxed).is_null() {
            return false;
        }
        let lines: Box<[Line]> = (0..chunk_cells(k) / CELLS_PER_LINE)
            .map(|_| Line(core::array::from_fn(|_| AtomicU64::new(0))))
            .collect();
        let ptr = Box::into_raw(lines).cast::<Line>();
        // Release: readers that see the pointer see zeroed cells.
        self.chunks[k].store(ptr, Ordering::Release);
        true
    }

    /// Bytes of cell memory this record holds.
    pub(crate) fn allocated_bytes(&self) -> usize {
        (0..CHUNKS)
            .filter(|&k| !self.chunks[k].load(Ordering::Relaxed).is_null())
            .map(|k| chunk_cells(k) * 8)
            .sum()
    }
}

impl Drop for ThreadRecord {
    fn drop(&mut self) {
        for (k, slot) in self.chunks.iter().enumerate() {
            let ptr = slot.load(Ordering::Relaxed);
            if !ptr.is_null() {
                // SAFETY: `ptr` came from `Box::into_raw` of a boxed slice of
                // `chunk_cells(k) / 16` lines in `ensure_chunk`; `&mut self`
                // means no reference to its cells remains.
                drop(unsafe {
                    Box::from_raw(core::ptr::slice_from_raw_parts_mut(
                        ptr,
                        chunk_cells(k) / CELLS_PER_LINE,
                    ))
                });
            }
        }
    }
}

pub(crate) mod cache {
    //! The calling thread's one-entry cache of its record: which cell space
    //! the cached record belongs to, and the record.
    //!
    //! Two `const`-initialised thread-locals (no lazy initialisation, no
    //! destructor), so reading them is a plain `fs`-relative load, nothing a
    //! signal handler could trip on. Cell-space ids are never reused, so a
    //! pointer whose cell space has been dropped is never dereferenced: its id
    //! no longer matches anything. `UPDATING` keeps a signal handler that
    //! interrupts a cache update from interleaving its own (see [`set`]).

    use std::cell::Cell;

    use super::{CHUNKS, ChunkIndex, Line, ThreadRecord};

    /// Entries of the thread's chunk-pointer table: a power of two, so
    /// that a mask bounds the index.
    const TABLE: usize = CHUNKS.next_power_of_two();
    use crate::sync::{AtomicU64, Ordering, compiler_fence};

    crate::sync::engine_thread_local! {
        static CACHE_SPACE: Cell<u64> = Cell::new(0);
        static CACHE_RECORD: Cell<*const ThreadRecord> = Cell::new(core::ptr::null());
        /// The cached record's chunk pointers (null: not allocated yet, or
        /// allocated after the copy), so that the hot path finds a cell
        /// with one thread-local load instead of two dependent loads.
        static CACHE_CHUNKS: [Cell<*const Line>; TABLE] =
            [const { Cell::new(core::ptr::null()) }; TABLE];
        static UPDATING: Cell<bool> = Cell::new(false);
    }

    /// This thread's cell at `addr` (a packed cell address: offset in the
    /// low 32 bits, chunk above) of cell space `space`, if the cache holds
    /// that space and the thread's copy of the chunk pointer is set: one
    /// thread-local load and a compare, one thread-local load and a null
    /// test. Async-signal-safe.
    ///
    /// # Safety
    /// `space` must be the id of a live cell space, `addr` a cell address
    /// its slot allocator handed out (chunk below [`CHUNKS`], offset inside
    /// the chunk), and the reference must not outlive that space (`'a` is
    /// unbounded).
    #[inline(always)]
    pub(crate) unsafe fn cell<'a>(space: u64, addr: u64) -> Option<&'a AtomicU64> {
        if CACHE_SPACE.with(|c| c.get()) != space {
            return None;
        }
        // The mask keeps the index in bounds without a check (the table has
        // `TABLE` ≥ `CHUNKS` entries, the extra ones always null).
        let chunk = (addr >> 32) as usize & (TABLE - 1);
        let lines = CACHE_CHUNKS.with(|c| c[chunk].get());
        // SAFETY: a non-null copy was loaded, by this thread, from the
        // chunk table of its record in the space whose id is cached with it
        // (`set`); ids are never reused and that space is alive (caller
        // contract), so the record and its chunks, which live as long as
        // the space, are alive; the offset is inside the chunk (caller).
        (!lines.is_null()).then(|| unsafe { ThreadRecord::cell_at(lines, addr as u32 as usize) })
    }

    /// The cached record if it belongs to cell space `space`. Async-signal-safe.
    #[inline(always)]
    pub(crate) fn get(space: u64) -> Option<*const ThreadRecord> {
        if CACHE_SPACE.with(|c| c.get()) == space {
            Some(CACHE_RECORD.with(|c| c.get()))
        } else {
            None
        }
    }

    /// Caches `record` (this thread's own record, alive) as this thread's
    /// record for `space`, with a copy of its chunk pointers; call it again
    /// after allocating a chunk to refresh the copy.
    ///
    /// Async-signal-safe. If a signal handler interrupts this function and
    /// calls it again, the handler's call sees `UPDATING` and leaves the cache
    /// alone, so the pair can never end up mixing two updates; the handler still
    /// gets a correct record (it looked it up itself).
    pub(crate) fn set(space: u64, record: *const ThreadRecord) {
        if UPDATING.with(|u| u.get()) {
            return;
        }
        UPDATING.with(|u| u.set(true));
        compiler_fence(Ordering::SeqCst);
        CACHE_SPACE.with(|c| c.set(0));
        compiler_fence(Ordering::SeqCst);
        #[cfg(loom)]
        crate::sync::signal::point();
        CACHE_RECORD.with(|c| c.set(record));
        // SAFETY: the caller passes this thread's own record, alive.
        let rec = unsafe { &*record };
        CACHE_CHUNKS.with(|c| {
            for (k, slot) in c.iter().enumerate().take(CHUNKS) {
                let k = ChunkIndex::new(k).expect("k < CHUNKS");
                slot.set(rec.chunk_ptr(k, Ordering::Relaxed));
            }
        });
        compiler_fence(Ordering::SeqCst);
        #[cfg(loom)]
        crate::sync::signal::point();
        CACHE_SPACE.with(|c| c.set(space));
        compiler_fence(Ordering::SeqCst);
        UPDATING.with(|u| u.set(false));
    }

    /// Forgets the cached record (at thread exit).
    pub(crate) fn clear() {
        let _ = CACHE_SPACE.try_with(|c| c.set(0));
    }
}
