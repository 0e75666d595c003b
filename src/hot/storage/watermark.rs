//! Watermark storage: the current level of each element, and a table of
//! subscriptions (one per tool handle) whose marks every update raises or
//! lowers while they are started.
//!
//! A subscription's mark of element `i` is a [`TaggedWord`]: the mark and
//! the handle's run tag in one 128-bit word. An updater pushes a value
//! into a mark with a compare-and-swap on the whole word, and only while
//! the tag says started; a stop moves the tag to a stopped epoch with its
//! own compare-and-swap. So once the stop's CAS has landed, no push from
//! an update still in flight (one that saw the mark started) can land: a
//! stopped mark is frozen exactly at its stop, a value written to it stays
//! until the next start, and a reset of it keeps the starting value. The
//! per-element protocol (epochs that only move forward) is the tool side's:
//! see `tool::handle`.
//!
//! Subscription slots live in a [`Recycler`] and are never freed before
//! the storage itself, only handed out again: an updater that still walks
//! a slot after its handle was freed touches valid memory and finds its
//! marks stopped. So unsubscribing is safe while other
//! threads update, with no epoch pin on the update path (which must stay
//! async-signal-safe).
//!
//! An update stores the level, then loads the element's [`WalkGate`]: the
//! threshold its value's order key must pass before any started mark can
//! be passed. Only then does it walk the subscriptions and push the marks
//! its value passes (a compare-and-swap each). With no started
//! subscription, and in steady state with any number of them (the marks
//! already cover the levels), an update is one relaxed store of the level
//! and one load of the gate: no write to a line a tool or another
//! subscription writes besides the level itself.
//!
//! Linearisation against tools, exact: a tool that lowers a mark (start:
//! the mark begins at the level; reset; write) opens the element's gate,
//! changes the mark, runs the heavy side of the asymmetric fence
//! (`sync::asymmetric`: `membarrier`), then pushes the level into the mark
//! again and leaves the gate. An updater has the light side (a compiler
//! fence) between its level store and its gate load. So either the
//! updater's gate load sees the gate open and its walk sees the changed
//! mark, or its level store is visible to the tool's second push: an
//! update concurrent with a start, reset or write is always either in the
//! period before it or in the period after it, also for the first started
//! handle (the loom models `watermark::*` check each). A stop only raises
//! (freezes) marks and needs no barrier; it settles the gate afterwards so
//! that the stopped marks no longer hold the threshold down.
//!
//! The last value stored is one word per element shared by every updater:
//! a handle started later must begin at the level, the last value any
//! thread recorded, so that word is written by every update (the one
//! shared write left, and why updates from two threads to one watermark
//! element cannot be as cheap as from one).

use crate::lockfree::isolated::IsolatedSlice;
use crate::lockfree::recycler::Recycler;
use crate::lockfree::tagged::{RunTag, Tagged, TaggedWord};
use crate::lockfree::walk_gate::{WALK_NONE, WalkGate};
use crate::sync::Arc;
use crate::sync::asymmetric;
use crate::sync::{AtomicU64, Ordering};
use crate::vocabulary::datatype::Repr;

/// What an update touches: the element's level and its walk gate (one
/// gate per element, so that a low mark of one element does not make the
/// updates of the others walk), on one cache line.
struct Element {
    gate: WalkGate,
    level: AtomicU64,
}

impl Element {
    fn new(level: u64) -> Self {
        Self {
            gate: WalkGate::new(),
            level: AtomicU64::new(level),
        }
    }
}

struct Subscriber {
    /// The subscription's generation; 0 while the slot is free.
    generation: AtomicU64,
    marks: IsolatedSlice<TaggedWord>,
}

/// A subscription held by a tool handle: slot index and generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SubKey {
    index: usize,
    generation: u64,
}

pub(crate) struct WatermarkStore {
    high: bool,
    repr: Repr,
    elements: IsolatedSlice<Element>,
    subs: Recycler<Subscriber>,
    /// The last generation handed out (generations are per store: a key
    /// never leaves the handle that holds it).
    generations: AtomicU64,
}

impl WatermarkStore {
    pub(crate) fn new(high: bool, repr: Repr, count: usize, initial: u64) -> Self {
        Self {
            high,
            repr,
            elements: IsolatedSlice::new(count, |_| Element::new(initial), || Element::new(0)),
            subs: Recycler::new(),
            generations: AtomicU64::new(0),
        }
    }

    /// The current level of element `i`. Async-signal-safe.
    #[inline]
    pub(crate) fn level(&self, i: usize) -> u64 {
        self.elements[i].level.load(Ordering::Relaxed)
    }

    /// The more extreme of two values: the higher for a HIGHWATERMARK.
    #[inline]
    fn extreme(&self, a: u64, b: u64) -> u64 {
        if self.repr.passes(b, a, self.high) {
            b
        } else {
            a
        }
    }

    /// The order key of `v` in this store's direction (`Repr::order_key`).
    #[inline]
    fn key(&self, v: u64) -> u64 {
        self.repr.order_key(v, self.high)
    }

    /// Component update of element `i` to `v`, whose order key is `key`
    /// (`Repr::order_key` of this store's representation and direction:
    /// the caller knows both at compile time, so the key costs nothing for
    /// unsigned values). Stores the level, then walks the subscriptions
    /// only if the key passes the element's gate. Async-signal-safe.
    ///
    /// Panics if `i` is not an element, naming the element.
    #[inline(always)]
    pub(crate) fn update(&self, i: usize, v: u64, key: u64) {
        debug_assert_eq!(key, self.key(v));
        let Some(e) = self.elements.get(i) else {
            out_of_range(i)
        };
        e.level.store(v, Ordering::Relaxed);
        // With the light side of the fence whose heavy side a tool runs
        // after lowering a mark (module documentation).
        if key > e.gate.threshold_after_store() {
            self.update_subscribers(i, v);
        }
    }

    /// Pushes `v` into every started mark of element `i` it passes, then
    /// raises the gate's threshold to the lowest started mark left, if no
    /// tool opened the gate since it was loaded here (before the marks).
    #[inline(never)]
    fn update_subscribers(&self, i: usize, v: u64) {
        let gate = self.elements[i].gate.load();
        let mut lowest = WALK_NONE;
        for (_, sub) in self.subs.items.iter() {
            let after = self.push(&sub.marks[i], v);
            if after.tag.started() {
                lowest = lowest.min(self.key(after.value));
            }
        }
        if gate.is_quiet() && lowest > gate.threshold {
            self.elements[i].gate.settle(gate, lowest);
        }
    }

    /// Raises (HIGH) or lowers (LOW) a started mark to `v`; leaves a
    /// stopped one alone. Returns the mark after the push.
    #[inline]
    fn push(&self, mark: &TaggedWord, v: u64) -> Tagged {
        let mut cur = mark.load();
        while cur.tag.started() && self.repr.passes(v, cur.value, self.high) {
            let new = Tagged {
                value: v,
                tag: cur.tag,
            };
            match mark.compare_exchange(cur, new) {
                Ok(()) => return new,
                Err(now) => cur = now,
            }
        }
        cur
    }

    /// Sets every level (component `init`). The new level is a level like
    /// any other: started marks cover it, as after an update.
    pub(crate) fn set_all_levels(&self, v: u64) {
        for i in 0..self.elements.len() {
            self.update(i, v, self.key(v));
        }
    }

    /// A new stopped subscription whose marks hold the current levels (what
    /// a handle reads before its first start). Allocates: not
    /// async-signal-safe.
    pub(crate) fn subscribe(&self) -> SubKey {
        let index = self
            .subs
            .take(usize::MAX, || Subscriber {
                generation: AtomicU64::new(0),
                marks: IsolatedSlice::new(
                    self.elements.len(),
                    |_| TaggedWord::new(0, RunTag::INITIAL),
                    || TaggedWord::new(0, RunTag::INITIAL),
                ),
            })
            .expect("no limit");
        let sub = self.subs.items.get(index).expect("slot exists");
        let generation = self.generations.fetch_add(1, Ordering::Relaxed) + 1;
        for (i, m) in sub.marks.iter().enumerate() {
            // The slot is free: no handle starts it, and updaters leave its
            // stopped marks alone, so plain stores do.
            reset_word(m, self.level(i));
        }
        sub.generation.store(generation, Ordering::Release);
        SubKey { index, generation }
    }

    fn marks(&self, key: SubKey) -> &IsolatedSlice<TaggedWord> {
        let sub = self
            .subs
            .items
            .get(key.index)
            .expect("a subscription's slot exists");
        debug_assert_eq!(
            sub.generation.load(Ordering::Acquire),
            key.generation,
            "a handle uses its own subscription only"
        );
        &sub.marks
    }

    /// Moves every mark to the started transition `tag`, at the current
    /// level, then pushes the levels again after the heavy barrier. Called
    /// by the one caller that won the handle's transition; a mark already
    /// at a later epoch is left alone. Async-signal-safe.
    pub(crate) fn start(&self, key: SubKey, tag: RunTag) {
        let marks = self.marks(key);
        self.lowering(0..marks.len(), |i| {
            marks[i].advance(tag, |_| self.level(i));
            // A handler may interrupt us here, with some marks started and
            // the levels not looked at again.
            #[cfg(loom)]
            crate::sync::signal::point();
        });
        // Levels stored before our marks became visible to updaters.
        for (i, m) in marks.iter().enumerate() {
            self.push(m, self.level(i));
        }
        self.settle(0..marks.len());
    }

    /// Runs `lower` on elements `range` (changes that may lower a started
    /// mark) with their gates open, then the heavy barrier. The caller
    /// pushes the levels into the marks it changed, then calls
    /// [`Self::settle`].
    fn lowering(&self, range: core::ops::Range<usize>, mut lower: impl FnMut(usize)) {
        for i in range.clone() {
            self.elements[i].gate.open();
        }
        for i in range {
            lower(i);
        }
        asymmetric::heavy();
    }

    /// Leaves the gates of `range` opened by [`Self::lowering`] (with
    /// `opened = false`, after a change that opened none, only looks) and,
    /// if no other tool is in flight, recomputes each threshold from the
    /// started marks and settles it.
    fn settle_gates(&self, range: core::ops::Range<usize>, opened: bool) {
        for i in range {
            let gate = &self.elements[i].gate;
            let mut quiet = if opened { gate.leave() } else { gate.quiet() };
            while let Some(from) = quiet {
                if gate.settle(from, self.threshold(i)) {
                    break;
                }
                quiet = gate.quiet();
            }
        }
    }

    /// [`Self::settle_gates`] after [`Self::lowering`].
    fn settle(&self, range: core::ops::Range<usize>) {
        self.settle_gates(range, true);
    }

    /// The lowest order key of the started marks of element `i` (none:
    /// `WALK_NONE`): a value whose key does not exceed it passes none.
    fn threshold(&self, i: usize) -> u64 {
        self.subs
            .items
            .iter()
            .map(|(_, sub)| sub.marks[i].load())
            .filter(|w| w.tag.started())
            .map(|w| self.key(w.value))
            .min()
            .unwrap_or(WALK_NONE)
    }

    /// Moves every mark to the stopped transition `tag`: the mark freezes
    /// at its value covering the level now, and no later push lands.
    /// Called by the caller that won the handle's transition.
    /// Async-signal-safe.
    pub(crate) fn stop(&self, key: SubKey, tag: RunTag) {
        let marks = self.marks(key);
        for (i, m) in marks.iter().enumerate() {
            m.advance(tag, |w| {
                if w.tag.started() {
                    self.extreme(w.value, self.level(i))
                } else {
                    w.value
                }
            });
        }
        // Stopping only takes marks out of the threshold: no barrier, but
        // the thresholds may rise.
        self.settle_gates(0..marks.len(), false);
    }

    /// The mark of element `i`: frozen while stopped; while started it
    /// also covers the level now (an update stores the level before it
    /// pushes the marks), pushed into the mark first, so successive reads
    /// never go backwards. Async-signal-safe.
    pub(crate) fn read(&self, key: SubKey, i: usize) -> u64 {
        self.push(&self.marks(key)[i], self.level(i)).value
    }

    /// Resets element `i` to its starting value, the level now, and returns
    /// the value it replaced (what a read would have returned), in one
    /// compare-and-swap: an update lands either in the returned value or in
    /// the new period. Async-signal-safe.
    pub(crate) fn reset(&self, key: SubKey, i: usize) -> u64 {
        let mark = &self.marks(key)[i];
        let mut old = 0;
        self.lowering(i..i + 1, |i| {
            old = mark.set_value(|w| {
                let level = self.level(i);
                let old = if w.tag.started() {
                    self.extreme(w.value, level)
                } else {
                    w.value
                };
                (level, old)
            });
        });
        // A level stored before the reset became visible to its updater
        // is one of the new period's (the period starts at the level).
        self.push(mark, self.level(i));
        self.settle(i..i + 1);
        old
    }

    /// Overwrites the mark of element `i` (tool `write`): a stopped mark
    /// keeps the value until the next start; a started one then covers the
    /// level at the time of the write, a level "since the write".
    /// Async-signal-safe.
    pub(crate) fn write(&self, key: SubKey, i: usize, v: u64) {
        let mark = &self.marks(key)[i];
        self.lowering(i..i + 1, |_| mark.set_value(|_| (v, ())));
        self.push(mark, self.level(i));
        self.settle(i..i + 1);
    }

    /// Subscriptions held (slots not on the free list).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn subscriptions(&self) -> usize {
        self.subs.in_use()
    }

    /// Ends the subscription (its handle has stopped it if it was started);
    /// the slot is recycled with a new generation.
    pub(crate) fn unsubscribe(&self, key: SubKey) {
        let sub = self
            .subs
            .items
            .get(key.index)
            .expect("a subscription's slot exists");
        if sub
            .generation
            .compare_exchange(key.generation, 0, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            debug_assert!(
                sub.marks.iter().all(|m| !m.load().tag.started()),
                "a handle stops its subscription before freeing it"
            );
            self.subs.give_back(key.index);
        }
    }
}

/// A subscription started when made and followed to the end, by a reader
/// that runs no start/stop transitions of its own: an export observer, or
/// a component's own [`WatermarkMark`](crate::WatermarkMark) (a tool
/// handle runs its transitions on its run word instead). Stopped and
/// given back when dropped.
pub(crate) struct Watch {
    store: Arc<WatermarkStore>,
    key: SubKey,
    started: RunTag,
}

impl Watch {
    /// Subscribes to `store` and starts the marks at the current levels.
    /// Allocates: not async-signal-safe.
    pub(crate) fn new(store: Arc<WatermarkStore>) -> Watch {
        let key = store.subscribe();
        let started = RunTag::INITIAL.next(true);
        store.start(key, started);
        Watch {
            store,
            key,
            started,
        }
    }

    /// The store followed.
    pub(crate) fn store(&self) -> &Arc<WatermarkStore> {
        &self.store
    }

    /// The mark of element `i` ([`WatermarkStore::read`]).
    /// Async-signal-safe.
    pub(crate) fn read(&self, i: usize) -> u64 {
        self.store.read(self.key, i)
    }

    /// Resets the mark of element `i` to the level now and returns the
    /// mark it replaced ([`WatermarkStore::reset`]). Async-signal-safe.
    pub(crate) fn reset(&self, i: usize) -> u64 {
        self.store.reset(self.key, i)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.store.stop(self.key, self.started.next(false));
        self.store.unsubscribe(self.key);
    }
}

#[cold]
#[inline(never)]
fn out_of_range(i: usize) -> ! {
    panic!("pvar element {i} out of range")
}

/// Puts a free slot's mark back at epoch 0, stopped, holding `value`.
fn reset_word(m: &TaggedWord, value: u64) {
    let _ = m.update(|_| {
        Some((
            Tagged {
                value,
                tag: RunTag::INITIAL,
            },
            (),
        ))
    });
}
