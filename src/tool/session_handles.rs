//! A session's own list of its handles, so that the `ALL_HANDLES`
//! operations and `session_free` visit the session's handles only, not
//! every handle of the registry.
//!
//! The list is a [`Recycler`] of handle keys; an entry holding 0 is empty.
//! `handle_alloc` reserves an entry (reusing an empty one first),
//! allocates the handle, and stores its key; `handle_free` clears the entry
//! and gives it back. Walkers load each entry and look the key up in the
//! handle table, whose generation check rejects a key freed meanwhile; an
//! entry reused meanwhile holds another handle of the same session, which
//! is as good. Walking is lock-free and async-signal-safe (atomic loads,
//! no allocation); reserving and giving back take a mutex, as handle
//! allocation and free already do (neither is signal-safe).

use crate::lockfree::recycler::Recycler;
use crate::sync::{AtomicU64, Ordering};

/// The handle keys of one session.
pub(crate) struct SessionHandles {
    keys: Recycler<AtomicU64>,
    /// Created through the typed API: freed by dropping its owner, not by
    /// the keyed `session_free`.
    pub(crate) owned: bool,
}

/// A freed session's handles are freed by whoever takes its list out of
/// the slot (the free, or the tool side's reclaim), from normal code.
impl crate::lockfree::slot_table::Retire for SessionHandles {}

impl SessionHandles {
    pub(crate) fn new(owned: bool) -> Self {
        Self {
            keys: Recycler::new(),
            owned,
        }
    }

    /// Reserves an empty entry for a handle about to be allocated.
    pub(crate) fn reserve(&self) -> usize {
        self.keys
            .take(usize::MAX, || AtomicU64::new(0))
            .expect("no limit")
    }

    /// Stores the allocated handle's key in its reserved entry.
    pub(crate) fn fill(&self, entry: usize, key: u64) {
        self.entry(entry).store(key, Ordering::Release);
    }

    /// Empties an entry (its handle was freed, or never allocated) and
    /// gives it back for reuse.
    pub(crate) fn clear(&self, entry: usize) {
        self.entry(entry).store(0, Ordering::Release);
        self.keys.give_back(entry);
    }

    /// The keys of the session's handles. Async-signal-safe.
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.keys
            .items
            .iter()
            .map(|(_, k)| k.load(Ordering::Acquire))
            .filter(|&k| k != 0)
    }

    fn entry(&self, entry: usize) -> &AtomicU64 {
        self.keys.items.get(entry).expect("a reserved entry exists")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_are_reused_and_empty_ones_skipped() {
        let s = SessionHandles::new(false);
        let (a, b) = (s.reserve(), s.reserve());
        s.fill(a, 10);
        assert_eq!(s.keys().collect::<Vec<_>>(), [10], "b is still empty");
        s.fill(b, 20);
        s.clear(a);
        assert_eq!(s.keys().collect::<Vec<_>>(), [20]);
        assert_eq!(s.reserve(), a, "the empty entry is reused");
        s.fill(a, 30);
        let mut keys: Vec<_> = s.keys().collect();
        keys.sort();
        assert_eq!(keys, [20, 30]);
    }
}
