//! A lock-free stack of element indices (a Treiber stack), whose links live
//! in the elements themselves: the free lists of the slot table.
//!
//! The head word holds the top index + 1 in its low 32 bits (0: empty) and
//! a tag in its high 32 bits that every successful push and pop advances.
//! A pop reads the top element's link and swings the head to it with one
//! compare-and-swap; the tag makes that swap fail if the top was popped and
//! pushed back meanwhile with another link (the ABA problem), so no mutex
//! is needed to pop either. Pushing is one store and one compare-and-swap:
//! lock-free, allocation-free and async-signal-safe. Elements are never
//! freed while the stack is in use (they live in an append-only vector),
//! so reading the link of an element popped by someone else meanwhile is
//! harmless: its value is discarded when the tagged swap fails.
//!
//! An index is on at most one stack at a time, which is what lets the
//! owner give each element a single link word for all its stacks.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

const INDEX_MASK: u64 = u32::MAX as u64;
const TAG: u64 = 1 << 32;

/// See the module documentation.
pub(crate) struct IndexStack {
    head: AtomicU64,
}

impl Default for IndexStack {
    fn default() -> Self {
        Self::new()
    }
}

impl IndexStack {
    pub(crate) fn new() -> Self {
        Self {
            head: AtomicU64::new(0),
        }
    }

    /// Pushes `index`, whose element's link word is `link`. The caller
    /// owns `index` (it is on no stack). Release: whatever the caller
    /// wrote before is visible to the thread that pops it. Lock-free,
    /// async-signal-safe.
    pub(crate) fn push(&self, index: usize, link: &AtomicU32) {
        debug_assert!(index < u32::MAX as usize);
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            link.store((head & INDEX_MASK) as u32, Ordering::Relaxed);
            let next = (head & !INDEX_MASK).wrapping_add(TAG) | (index as u64 + 1);
            match self
                .head
                .compare_exchange_weak(head, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Pops the top index (`link_of` gives an index's link word), or
    /// `None` when empty. Acquire: sees what its pusher wrote before.
    /// Lock-free, async-signal-safe.
    pub(crate) fn pop<'a>(&self, link_of: impl Fn(usize) -> &'a AtomicU32) -> Option<usize> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let top = (head & INDEX_MASK) as usize;
            let index = top.checked_sub(1)?;
            // Published by the push that put `index` on top (our Acquire
            // load of the head synchronises with its Release). If `index`
            // left the top since, the tag changed and the swap below fails.
            let below = link_of(index).load(Ordering::Relaxed);
            let next = (head & !INDEX_MASK).wrapping_add(TAG) | u64::from(below);
            match self
                .head
                .compare_exchange_weak(head, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(index),
                Err(now) => head = now,
            }
        }
    }

    /// Whether the stack is empty (a racy hint). Async-signal-safe.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.load(Ordering::Acquire) & INDEX_MASK == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn last_in_first_out_and_empty() {
        let links: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let s = IndexStack::new();
        assert!(s.is_empty());
        assert_eq!(s.pop(|i| &links[i]), None);
        for i in [2, 0, 3] {
            s.push(i, &links[i]);
        }
        assert!(!s.is_empty());
        assert_eq!(s.pop(|i| &links[i]), Some(3));
        s.push(1, &links[1]);
        assert_eq!(s.pop(|i| &links[i]), Some(1));
        assert_eq!(s.pop(|i| &links[i]), Some(0));
        assert_eq!(s.pop(|i| &links[i]), Some(2));
        assert_eq!(s.pop(|i| &links[i]), None);
    }

    #[test]
    fn threads_pushing_and_popping_lose_and_duplicate_nothing() {
        const N: usize = 64;
        const ROUNDS: usize = 20_000;
        let links: Vec<AtomicU32> = (0..N).map(|_| AtomicU32::new(0)).collect();
        let s = IndexStack::new();
        for (i, link) in links.iter().enumerate() {
            s.push(i, link);
        }
        // Each thread pops an index, owns it for a moment (marking it, so
        // that two owners at once would be seen), and pushes it back.
        let owned: Vec<AtomicU32> = (0..N).map(|_| AtomicU32::new(0)).collect();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..ROUNDS {
                        if let Some(i) = s.pop(|i| &links[i]) {
                            assert_eq!(owned[i].swap(1, Ordering::Relaxed), 0, "popped twice");
                            owned[i].store(0, Ordering::Relaxed);
                            s.push(i, &links[i]);
                        }
                    }
                });
            }
        });
        let mut seen = [false; N];
        while let Some(i) = s.pop(|i| &links[i]) {
            assert!(!seen[i], "{i} twice on the stack");
            seen[i] = true;
        }
        assert!(seen.iter().all(|&b| b), "an index was lost");
    }
}
