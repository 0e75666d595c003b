//! An append-only vector with a free list: elements are never freed
//! before the vector, only handed out again.
//!
//! Readers go straight to the elements, [`Recycler::items`], an
//! [`AppendVec`] (lock-free, async-signal-safe): an element
//! that was given back stays valid memory, so a reader that still holds its
//! index (a walker of the whole vector, an updater in flight) touches
//! nothing freed, and finds whatever state the owner left it in. Taking
//! and giving back indices lock a mutex (allocation paths only).

use super::append_vec::AppendVec;
use crate::sync::Mutex;

/// See the module documentation.
pub(crate) struct Recycler<T> {
    /// Every element ever made, in use or given back: the read side.
    pub(crate) items: AppendVec<T>,
    free: Mutex<Vec<usize>>,
}

impl<T> Default for Recycler<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Recycler<T> {
    pub(crate) fn new() -> Self {
        Self {
            items: AppendVec::new(),
            free: Mutex::new(Vec::new()),
        }
    }

    /// An index given back earlier, or a new element made by `make`, if
    /// `limit` (the number of elements) allows; `None` when the vector is
    /// full and nothing is free. The caller re-initialises a reused
    /// element. Not signal-safe (locks, may allocate).
    pub(crate) fn take(&self, limit: usize, make: impl FnOnce() -> T) -> Option<usize> {
        if let Some(i) = self.free.lock().pop() {
            return Some(i);
        }
        if self.items.len() >= limit {
            return None;
        }
        Some(self.items.push(make()))
    }

    /// Every element ever made, in use or given back, with its index.
    /// Lock-free, async-signal-safe.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> + '_ {
        self.items.iter()
    }

    /// Gives `index` back for a later [`Recycler::take`].
    pub(crate) fn give_back(&self, index: usize) {
        self.free.lock().push(index);
    }

    /// Elements ever made.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Elements in use (made and not given back).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn in_use(&self) -> usize {
        self.items.len() - self.free.lock().len()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn given_back_indices_are_reused_first_and_stay_readable() {
        let r = Recycler::new();
        let a = r.take(usize::MAX, || 10).unwrap();
        let b = r.take(usize::MAX, || 20).unwrap();
        r.give_back(a);
        assert_eq!(
            r.items.get(a),
            Some(&10),
            "a given-back element stays valid"
        );
        assert_eq!(r.take(usize::MAX, || 30), Some(a), "reused first");
        assert_eq!(r.len(), 2);
        assert_eq!(r.in_use(), 2);
        assert_eq!(r.take(2, || 40), None, "full");
        r.give_back(b);
        assert_eq!(r.take(2, || 40), Some(b));
    }
}
