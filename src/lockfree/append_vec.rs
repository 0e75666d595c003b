//! An append-only vector whose elements never move, readable without locks.
//!
//! Elements live in buckets of doubling size (16, 32, 64, …). A bucket is
//! allocated once and never reallocated, so a reference to an element stays
//! valid for the life of the vector, and a reader needs no lock: it loads the
//! published length, then the bucket pointer, then the element. Pushes are
//! serialised by a mutex (they are registration-time operations).
//!
//! This is the structure behind every "index that never changes" of the
//! engine: variables, enumerations, per-thread records, handle slots.

use core::mem::MaybeUninit;

use crate::sync::{AtomicPtr, AtomicUsize, Mutex, Ordering};

const FIRST_BUCKET_BITS: u32 = 4;
const FIRST_BUCKET: usize = 1 << FIRST_BUCKET_BITS;
/// Enough buckets for `usize::MAX >> 5` elements on 64-bit targets.
const BUCKETS: usize = (usize::BITS - FIRST_BUCKET_BITS - 1) as usize;

/// Where element `index` lives: (bucket, offset in bucket).
#[inline]
fn locate(index: usize) -> (usize, usize) {
    let j = index + FIRST_BUCKET;
    let bucket = (usize::BITS - 1 - j.leading_zeros() - FIRST_BUCKET_BITS) as usize;
    (bucket, j - (FIRST_BUCKET << bucket))
}

#[inline]
fn bucket_len(bucket: usize) -> usize {
    FIRST_BUCKET << bucket
}

/// See the module documentation.
pub(crate) struct AppendVec<T> {
    buckets: [AtomicPtr<MaybeUninit<T>>; BUCKETS],
    len: AtomicUsize,
    push_lock: Mutex<()>,
}

// SAFETY: the vector owns its `T`s; sharing it shares `&T` across threads
// (needs `T: Sync`) and pushing from any thread moves `T`s in (needs `Send`).
unsafe impl<T: Send + Sync> Sync for AppendVec<T> {}
// SAFETY: as above; moving the vector moves ownership of its `T`s.
unsafe impl<T: Send> Send for AppendVec<T> {}

impl<T> Default for AppendVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> AppendVec<T> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: core::array::from_fn(|_| AtomicPtr::new(core::ptr::null_mut())),
            len: AtomicUsize::new(0),
            push_lock: Mutex::new(()),
        }
    }

    /// Number of published elements. Async-signal-safe.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The element at `index`, if it has been published. Lock-free and
    /// async-signal-safe: two atomic loads and a pointer offset.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len() {
            return None;
        }
        let (b, off) = locate(index);
        let bucket = self.buckets[b].load(Ordering::Acquire);
        debug_assert!(!bucket.is_null());
        // SAFETY: `index < len` and `len` is published with Release after the
        // element was written (see `push`), and our Acquire load of `len`
        // synchronises with it, so the bucket pointer is non-null and slot
        // `off` (< bucket_len(b)) is initialised. Buckets are never freed
        // before `self` is dropped, and elements are never mutated through
        // `&self` except via their own interior mutability.
        Some(unsafe { (*bucket.add(off)).assume_init_ref() })
    }

    /// Appends `value` and returns its index. Serialised with other pushes.
    pub(crate) fn push(&self, value: T) -> usize {
        let _guard = self.push_lock.lock();
        self.push_locked(value)
    }

    /// Runs `f` while holding the push lock, giving it the index the next
    /// element will get; `f` returns the value to push (or `None`) and a
    /// result. Used where a lookup and an insert must be one step, or where
    /// the value must know its own index.
    pub(crate) fn push_with<R>(&self, f: impl FnOnce(usize) -> (Option<T>, R)) -> R {
        let _guard = self.push_lock.lock();
        let index = self.len.load(Ordering::Relaxed);
        let (value, result) = f(index);
        if let Some(value) = value {
            self.push_locked(value);
        }
        result
    }

    /// Appends with the push lock already held by the caller.
    fn push_locked(&self, value: T) -> usize {
        let index = self.len.load(Ordering::Relaxed);
        let (b, off) = locate(index);
        let mut bucket = self.buckets[b].load(Ordering::Relaxed);
        if bucket.is_null() {
            let fresh: Box<[MaybeUninit<T>]> =
                (0..bucket_len(b)).map(|_| MaybeUninit::uninit()).collect();
            bucket = Box::into_raw(fresh).cast::<MaybeUninit<T>>();
            self.buckets[b].store(bucket, Ordering::Release);
        }
        // SAFETY: the caller holds the push lock, so no other thread writes
        // slot `index`; readers only read slots below `len`, which excludes
        // it. `off < bucket_len(b)` by construction of `locate`.
        unsafe { (*bucket.add(off)).write(value) };
        self.len.store(index + 1, Ordering::Release);
        index
    }

    /// Iterates over the published elements with their indices.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> + '_ {
        let n = self.len();
        (0..n).filter_map(move |i| self.get(i).map(|v| (i, v)))
    }
}

impl<T> Drop for AppendVec<T> {
    fn drop(&mut self) {
        let len = self.len.load(Ordering::Relaxed);
        for (b, slot) in self.buckets.iter().enumerate() {
            let ptr = slot.load(Ordering::Relaxed);
            if ptr.is_null() {
                continue;
            }
            let start = bucket_len(b) - FIRST_BUCKET;
            let live = len.saturating_sub(start).min(bucket_len(b));
            // SAFETY: `&mut self` means no reader or pusher is active. The
            // first `live` slots of this bucket were initialised by `push`;
            // the bucket was allocated as a boxed slice of `bucket_len(b)`.
            unsafe {
                for i in 0..live {
                    (*ptr.add(i)).assume_init_drop();
                }
                drop(Box::from_raw(core::ptr::slice_from_raw_parts_mut(
                    ptr,
                    bucket_len(b),
                )));
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn locate_covers_indices_contiguously() {
        let mut expected = (0, 0);
        for i in 0..10_000 {
            assert_eq!(locate(i), expected, "index {i}");
            expected.1 += 1;
            if expected.1 == bucket_len(expected.0) {
                expected = (expected.0 + 1, 0);
            }
        }
    }

    #[test]
    fn push_get_and_drop_elements() {
        let v = AppendVec::new();
        for i in 0..1000 {
            assert_eq!(v.push(std::sync::Arc::new(i)), i);
        }
        assert_eq!(v.len(), 1000);
        assert_eq!(**v.get(999).unwrap(), 999);
        assert!(v.get(1000).is_none());
        let probe = std::sync::Arc::new(5);
        v.push(probe.clone());
        assert_eq!(std::sync::Arc::strong_count(&probe), 2);
        drop(v);
        assert_eq!(std::sync::Arc::strong_count(&probe), 1);
    }

    #[test]
    fn concurrent_push_and_read() {
        let v = std::sync::Arc::new(AppendVec::new());
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let v = v.clone();
                std::thread::spawn(move || {
                    for i in 0..2000u64 {
                        v.push(t * 1_000_000 + i);
                    }
                })
            })
            .collect();
        let reader = {
            let v = v.clone();
            std::thread::spawn(move || {
                let mut seen = 0;
                while seen < 8000 {
                    let n = v.len();
                    for i in 0..n {
                        assert!(v.get(i).is_some());
                    }
                    seen = n;
                }
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        reader.join().unwrap();
        let mut all: Vec<u64> = v.iter().map(|(_, x)| *x).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 8000);
    }
}
