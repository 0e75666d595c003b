//! One thread's cells in one cell space: a fixed table of chunk pointers.
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

/// A 128-byte group of cells; a chunk is a boxed slice of them.
#[repr(C, align(128))]
pub(crate) struct Line([AtomicU64; CELLS_PER_LINE]);

/// One thread's cells for one cell space.
pub(crate) struct ThreadRecord {
    chunks: [AtomicPtr<Line>; CHUNKS],
}

impl ThreadRecord {
    pub(crate) fn new() -> Self {
        Self {
            chunks: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
        }
    }

    /// The cell at (`chunk`, `offset`) if the chunk exists. Async-signal-safe.
    ///
    /// `Relaxed` suffices for the owning thread (it allocated the chunk);
    /// other threads use [`ThreadRecord::cell_acquire`].
    #[inline(always)]
    pub(crate) fn cell(&self, chunk: usize, offset: usize) -> Option<&AtomicU64> {
        let lines = self.chunks[chunk].load(Ordering::Relaxed);
        // SAFETY: see `cell_at`.
        (!lines.is_null()).then(|| unsafe { Self::cell_at(lines, offset) })
    }

    /// As [`ThreadRecord::cell`], for readers on other threads: the Acquire
    /// load makes the chunk's zero initialisation visible.
    #[inline]
    pub(crate) fn cell_acquire(&self, chunk: usize, offset: usize) -> Option<&AtomicU64> {
        let lines = self.chunks[chunk].load(Ordering::Acquire);
        // SAFETY: see `cell_at`.
        (!lines.is_null()).then(|| unsafe { Self::cell_at(lines, offset) })
    }

    /// # Safety
    /// `lines` must be a live chunk pointer loaded from `self.chunks[k]` and
    /// `offset < chunk_cells(k)`. The slot allocator only hands out offsets
    /// inside their chunk, and chunks live as long as `self`.
    #[inline(always)]
    unsafe fn cell_at<'a>(lines: *const Line, offset: usize) -> &'a AtomicU64 {
        // SAFETY: caller guarantees `offset` is in bounds of the chunk; the
        // line index `offset / 16` is then below the number of lines.
        unsafe { &(*lines.add(offset / CELLS_PER_LINE)).0[offset % CELLS_PER_LINE] }
    }

    /// Allocates chunk `k` if this record does not have it yet and returns
    /// it. Only the owning thread (or the cell space, for the shared orphan
    /// record, under its lock) calls this. Allocates: not signal-safe.
    pub(crate) fn ensure_chunk(&self, k: usize) {
        if !self.chunks[k].load(Ordering::Relaxed).is_null() {
            return;
        }
        let lines: Box<[Line]> = (0..chunk_cells(k) / CELLS_PER_LINE)
            .map(|_| Line(core::array::from_fn(|_| AtomicU64::new(0))))
            .collect();
        let ptr = Box::into_raw(lines).cast::<Line>();
        // Release: readers that see the pointer see zeroed cells.
        self.chunks[k].store(ptr, Ordering::Release);
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
