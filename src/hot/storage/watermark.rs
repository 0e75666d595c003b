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
//! With no started subscription an update is one relaxed store of the level
//! plus one relaxed load of the started count. With started subscriptions
//! the update fences (SeqCst), then reads each mark and compare-and-swaps
//! it only when the value passes it: in steady state (the mark already
//! covers the level) there is no read-modify-write on a shared line.
//!
//! Linearisation of a start: the start makes the marks started (at the
//! current levels), publishes the started count, fences, and pushes the
//! levels again; an updater that sees a started count fences before walking
//! the marks, so with at least one handle already started, either the walk
//! sees the new mark started or the start's second look sees the level
//! (the loom model `watermark::start_covers_later_levels_second_handle`
//! found the case without the updater's fence). The one remaining window:
//! an update that races with the start of the *first* started handle reads
//! a started count of zero and does not fence (to keep the no-subscriber
//! path at one store), so it may be attributed to before that start; it is
//! the window of a store still in the updating CPU's store buffer.

use crate::lockfree::isolated::IsolatedSlice;
use crate::lockfree::recycler::Recycler;
use crate::lockfree::tagged::{RunTag, Tagged, TaggedWord};
use crate::sync::{AtomicU64, AtomicUsize, Ordering, fence};
use crate::vocabulary::datatype::Repr;

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
    level: IsolatedSlice<AtomicU64>,
    started: AtomicUsize,
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
            level: IsolatedSlice::new(count, |_| AtomicU64::new(initial), || AtomicU64::new(0)),
            started: AtomicUsize::new(0),
            subs: Recycler::new(),
            generations: AtomicU64::new(0),
        }
    }

    /// The current level of element `i`. Async-signal-safe.
    #[inline]
    pub(crate) fn level(&self, i: usize) -> u64 {
        self.level[i].load(Ordering::Relaxed)
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

    /// Component update of element `i`: record the level, then push the
    /// marks of started subscriptions. Async-signal-safe.
    #[inline]
    pub(crate) fn update(&self, i: usize, v: u64) {
        self.level[i].store(v, Ordering::Relaxed);
        if self.started.load(Ordering::Relaxed) == 0 {
            return;
        }
        self.update_subscribers(i, v);
    }

    #[inline(never)]
    fn update_subscribers(&self, i: usize, v: u64) {
        // Pairs with the fence in `start`: either this walk sees a mark
        // being started as started, or that start's second look at the
        // levels sees our level store. Without it a store still in this
        // CPU's store buffer could be missed by both (found by the loom
        // model `watermark::start_covers_later_levels_second_handle`). Only
        // the path with started subscriptions pays for it.
        fence(Ordering::SeqCst);
        for (_, sub) in self.subs.items.iter() {
            self.push(&sub.marks[i], v);
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
        for i in 0..self.level.len() {
            self.update(i, v);
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
                    self.level.len(),
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
    /// level, then publishes the started count and looks at the levels
    /// again. Called by the one caller that won the handle's transition;
    /// a mark already at a later epoch is left alone. Async-signal-safe.
    pub(crate) fn start(&self, key: SubKey, tag: RunTag) {
        let marks = self.marks(key);
        for (i, m) in marks.iter().enumerate() {
            m.advance(tag, |_| self.level(i));
        }
        // A handler may interrupt us here, with the marks started but the
        // count not yet raised.
        #[cfg(loom)]
        crate::sync::signal::point();
        self.started.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // Levels stored before our marks became visible to updaters.
        for (i, m) in marks.iter().enumerate() {
            self.push(m, self.level(i));
        }
    }

    /// Moves every mark to the stopped transition `tag`: the mark freezes
    /// at its value covering the level now, and no later push lands.
    /// Called by the caller that won the handle's transition.
    /// Async-signal-safe.
    pub(crate) fn stop(&self, key: SubKey, tag: RunTag) {
        for (i, m) in self.marks(key).iter().enumerate() {
            m.advance(tag, |w| {
                if w.tag.started() {
                    self.extreme(w.value, self.level(i))
                } else {
                    w.value
                }
            });
        }
        self.started.fetch_sub(1, Ordering::SeqCst);
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
        self.marks(key)[i].set_value(|w| {
            let level = self.level(i);
            let old = if w.tag.started() {
                self.extreme(w.value, level)
            } else {
                w.value
            };
            (level, old)
        })
    }

    /// Overwrites the mark of element `i` (tool `write`): a stopped mark
    /// keeps the value until the next start; a started one then covers the
    /// level at the time of the write, a level "since the write".
    /// Async-signal-safe.
    pub(crate) fn write(&self, key: SubKey, i: usize, v: u64) {
        let mark = &self.marks(key)[i];
        mark.set_value(|_| (v, ()));
        self.push(mark, self.level(i));
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
