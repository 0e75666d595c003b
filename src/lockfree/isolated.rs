//! A boxed slice that shares no cache line with any other allocation.
//!
//! Elements that one thread writes and others read (a watermark's levels,
//! a subscription's marks) must not sit on a line that a neighbouring heap
//! object's writer keeps taking: every read would then miss. A padded
//! element type would cost a line per element; instead the slice is
//! allocated with [`PAD_BYTES`] of unused elements on each side, so its
//! own elements are at least that far from anything else in the heap
//! (two lines, against the adjacent-line prefetcher).

use core::ops::Index;

/// Bytes of padding on each side.
pub(crate) const PAD_BYTES: usize = 128;

/// See the module documentation.
pub(crate) struct IsolatedSlice<T> {
    items: Box<[T]>,
}

impl<T> IsolatedSlice<T> {
    /// Padding elements on each side (a constant of `T`, so indexing
    /// loads only the slice's pointer and length).
    const PAD: usize = PAD_BYTES.div_ceil(if core::mem::size_of::<T>() == 0 {
        1
    } else {
        core::mem::size_of::<T>()
    });

    /// `len` elements made by `make(i)`, padded with `filler()` values.
    pub(crate) fn new(
        len: usize,
        mut make: impl FnMut(usize) -> T,
        filler: impl Fn() -> T,
    ) -> Self {
        let pad = Self::PAD;
        let items = (0..len + 2 * pad)
            .map(|j| {
                if (pad..pad + len).contains(&j) {
                    make(j - pad)
                } else {
                    filler()
                }
            })
            .collect();
        Self { items }
    }

    /// Number of elements (padding not counted).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.items.len() - 2 * Self::PAD
    }

    /// Element `i`, or `None` past the last one: one comparison with the
    /// length (the hot path's index check).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i < self.len() {
            // SAFETY: `items` holds `len() + 2 * PAD` elements (`new`), so
            // `PAD + i < items.len()` when `i < len()`.
            Some(unsafe { self.items.get_unchecked(Self::PAD + i) })
        } else {
            None
        }
    }

    /// The elements.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items[Self::PAD..self.items.len() - Self::PAD].iter()
    }
}

impl<T> Index<usize> for IsolatedSlice<T> {
    type Output = T;

    /// Element `i`. Callers check `i < len()` (the engine checks element
    /// indices against the variable's count first); past it this panics or
    /// returns a padding element, never memory outside the slice.
    #[inline]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len(), "element {i} of {}", self.len());
        &self.items[Self::PAD + i]
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn elements_are_padded_on_both_sides() {
        let s = IsolatedSlice::new(3, |i| i as u64 * 10, || u64::MAX);
        assert_eq!(s.len(), 3);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), [0, 10, 20]);
        assert_eq!(s[2], 20);
        assert_eq!(s.get(2), Some(&20));
        assert_eq!(s.get(3), None, "a padding element is not an element");
        let base = s.items.as_ptr() as usize;
        let first = &s[0] as *const u64 as usize;
        assert!(first - base >= PAD_BYTES);
        let end = base + s.items.len() * 8;
        assert!(end - (&s[2] as *const u64 as usize + 8) >= PAD_BYTES);
    }
}
