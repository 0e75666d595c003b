//! Watermark storage: the current level of each element, and a table of
//! subscribers (one per tool handle) whose marks every update raises or
//! lowers while they are started.
//!
//! Subscriber slots live in an append-only vector and are never freed
//! before the storage itself, only recycled with a new generation: an
//! updater that still walks a slot after its handle was freed touches valid
//! memory and, seeing the generation or the started bit changed, leaves it
//! alone. So unsubscribing is safe while other threads update, with no epoch
//! pin on the update path (which must stay async-signal-safe).
//!
//! With no started subscriber an update is one relaxed store of the level
//! plus one relaxed load of the started count. With started subscribers the
//! update fences (SeqCst), then reads each mark and writes it only when the
//! value passes it: in steady state (the mark already covers the level)
//! there is no read-modify-write on a shared line.
//!
//! Linearisation: a started handle's mark covers every level stored after
//! its start became visible. `start` publishes the started bit and count,
//! fences, and re-reads the levels; an updater that sees a started count
//! fences before walking the subscribers, so with at least one handle
//! already started, either the walk sees the new handle or the new start's
//! re-read sees the level (the loom model
//! `watermark::start_covers_later_levels_second_handle` found the case
//! without the updater's fence). The one remaining window: an update that
//! races with the start of the *first* started handle reads a started count
//! of zero and does not fence (to keep the no-subscriber path at one store),
//! so it may be attributed to before that start; it is the window of a
//! store still in the updating CPU's store buffer.

use crate::storage::Repr;
use crate::sync::append_vec::AppendVec;
use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering, fence};

/// Updaters push the marks of started subscriptions only.
const STARTED: u64 = 1;
/// A `start` is initialising the marks; updaters skip the subscription.
const STARTING: u64 = 2;
const FLAGS: u32 = 2;

/// Raise (`high`) or lower (`!high`) an atomic mark to `v`.
#[inline]
pub(crate) fn push_mark(mark: &AtomicU64, v: u64, high: bool, repr: Repr) {
    let mut cur = mark.load(Ordering::Relaxed);
    while repr.passes(v, cur, high) {
        match mark.compare_exchange_weak(cur, v, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => cur = now,
        }
    }
}

pub(crate) struct Subscriber {
    /// `generation << FLAGS | STARTING | STARTED`.
    state: AtomicU64,
    marks: Box<[AtomicU64]>,
}

/// A subscription held by a tool handle: slot index and generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SubKey {
    index: usize,
    generation: u64,
}

pub(crate) struct WatermarkStore {
    pub(crate) high: bool,
    pub(crate) level: Box<[AtomicU64]>,
    started: AtomicUsize,
    subs: AppendVec<Subscriber>,
    free: Mutex<Vec<usize>>,
}

impl WatermarkStore {
    pub(crate) fn new(high: bool, count: usize, initial: u64) -> Self {
        Self {
            high,
            level: (0..count).map(|_| AtomicU64::new(initial)).collect(),
            started: AtomicUsize::new(0),
            subs: AppendVec::new(),
            free: Mutex::new(Vec::new()),
        }
    }

    /// Component update of element `i`: record the level, then push the
    /// marks of started subscribers. Async-signal-safe.
    #[inline]
    pub(crate) fn update(&self, i: usize, v: u64, repr: Repr) {
        self.level[i].store(v, Ordering::Relaxed);
        if self.started.load(Ordering::Relaxed) == 0 {
            return;
        }
        self.update_subscribers(i, v, repr);
    }

    #[inline(never)]
    fn update_subscribers(&self, i: usize, v: u64, repr: Repr) {
        // Pairs with the fence in `start`: either this walk sees a handle
        // being started as started, or that start's re-read of the levels
        // sees our level store. Without it a store still in this CPU's
        // store buffer could be missed by both (found by the loom model
        // `watermark::start_covers_later_levels_second_handle`). Only the
        // path with started subscribers pays for it.
        fence(Ordering::SeqCst);
        for (_, sub) in self.subs.iter() {
            if sub.state.load(Ordering::Acquire) & STARTED != 0 {
                push_mark(&sub.marks[i], v, self.high, repr);
            }
        }
    }

    /// Sets every level (component `init`). The new level is a level like
    /// any other: started marks cover it, as after an update.
    pub(crate) fn set_all_levels(&self, v: u64, repr: Repr) {
        for i in 0..self.level.len() {
            self.update(i, v, repr);
        }
    }

    /// A new stopped subscription whose marks start at the current levels.
    /// Allocates: not async-signal-safe.
    pub(crate) fn subscribe(&self) -> SubKey {
        let reuse = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let index = match reuse {
            Some(index) => index,
            None => self.subs.push(Subscriber {
                state: AtomicU64::new(0),
                marks: (0..self.level.len()).map(|_| AtomicU64::new(0)).collect(),
            }),
        };
        let sub = self.subs.get(index).expect("slot exists");
        let generation = (sub.state.load(Ordering::Relaxed) >> FLAGS) + 1;
        for (m, l) in sub.marks.iter().zip(self.level.iter()) {
            m.store(l.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        sub.state.store(generation << FLAGS, Ordering::Release);
        SubKey { index, generation }
    }

    fn sub(&self, key: SubKey) -> Option<&Subscriber> {
        self.sub_state(key).map(|(sub, _)| sub)
    }

    /// [`WatermarkStore::sub`] with the state word it checked, for callers
    /// that test `STARTED` too: one load serves both.
    fn sub_state(&self, key: SubKey) -> Option<(&Subscriber, u64)> {
        let sub = self.subs.get(key.index)?;
        let state = sub.state.load(Ordering::Acquire);
        (state >> FLAGS == key.generation).then_some((sub, state))
    }

    /// Starts the subscription: marks = current levels, then marks follow
    /// updates. Async-signal-safe.
    ///
    /// Exactly one caller wins the stopped → STARTING transition (a CAS), so
    /// the started count is bumped once however many threads, or a signal
    /// handler re-entering on this thread, start the same subscription. A
    /// start or stop that finds it STARTING returns at once (it does not
    /// wait for the interrupted start): it is ordered before that start.
    pub(crate) fn start(&self, key: SubKey, repr: Repr) {
        let Some(sub) = self.sub(key) else { return };
        let stopped = key.generation << FLAGS;
        if sub
            .state
            .compare_exchange(
                stopped,
                stopped | STARTING,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return; // already started or starting, or freed
        }
        // A handler may interrupt us here, with the subscription STARTING.
        #[cfg(loom)]
        crate::sync::signal::point();
        for (m, l) in sub.marks.iter().zip(self.level.iter()) {
            m.store(l.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        sub.state.store(stopped | STARTED, Ordering::Release);
        self.started.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // Levels stored before our start became visible to updaters.
        for (m, l) in sub.marks.iter().zip(self.level.iter()) {
            push_mark(m, l.load(Ordering::Relaxed), self.high, repr);
        }
    }

    /// Stops the subscription: marks freeze. Async-signal-safe; only the
    /// caller that wins the started → stopped CAS lowers the started count.
    pub(crate) fn stop(&self, key: SubKey) {
        let Some(sub) = self.sub(key) else { return };
        let stopped = key.generation << FLAGS;
        if sub
            .state
            .compare_exchange(
                stopped | STARTED,
                stopped,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            self.started.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether the subscription is started.
    pub(crate) fn is_started(&self, key: SubKey) -> bool {
        self.sub_state(key)
            .is_some_and(|(_, state)| state & STARTED != 0)
    }

    /// The mark of element `i`. A started mark also covers the level now
    /// (an update stores the level before it pushes the marks): the level is
    /// pushed into the mark first, so successive reads never go backwards.
    /// Async-signal-safe.
    pub(crate) fn read(&self, key: SubKey, i: usize, repr: Repr) -> u64 {
        let Some((sub, state)) = self.sub_state(key) else {
            return 0;
        };
        if state & STARTED != 0 {
            push_mark(
                &sub.marks[i],
                self.level[i].load(Ordering::Relaxed),
                self.high,
                repr,
            );
        }
        sub.marks[i].load(Ordering::Relaxed)
    }

    /// Sets the mark of element `i` to the current level (the starting
    /// value) and returns the mark it replaced, in one atomic swap: an
    /// update lands either in the returned value or in the new period.
    /// Async-signal-safe.
    pub(crate) fn reset(&self, key: SubKey, i: usize, repr: Repr) -> u64 {
        let Some(sub) = self.sub(key) else { return 0 };
        let level = self.level[i].load(Ordering::Relaxed);
        let old = sub.marks[i].swap(level, Ordering::Relaxed);
        if sub.state.load(Ordering::Relaxed) & STARTED != 0 {
            // The level may have moved between our load and the swap.
            push_mark(
                &sub.marks[i],
                self.level[i].load(Ordering::Relaxed),
                self.high,
                repr,
            );
            if repr.passes(level, old, self.high) {
                return level;
            }
        }
        old
    }

    /// Overwrites the mark of element `i` (tool `write`). Async-signal-safe.
    pub(crate) fn write(&self, key: SubKey, i: usize, v: u64) {
        if let Some(sub) = self.sub(key) {
            sub.marks[i].store(v, Ordering::Relaxed);
        }
    }

    /// Subscriptions held (slots not on the free list).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn subscriptions(&self) -> usize {
        self.subs.len() - self.free.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Ends the subscription; the slot is recycled with a new generation.
    pub(crate) fn unsubscribe(&self, key: SubKey) {
        self.stop(key);
        if let Some(sub) = self.sub(key) {
            // Bump the generation so stale keys and walking updaters skip it.
            sub.state
                .store((key.generation + 1) << FLAGS, Ordering::Release);
            self.free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(key.index);
        }
    }
}
