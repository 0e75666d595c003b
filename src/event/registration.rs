//! One tool registration for an event type (`MPI_T_event_handle_alloc`):
//! its object, its callbacks by safety level, its dropped handler and its
//! free callback.
//!
//! A registration *observes* its event while it has a callback or a
//! dropped handler: only then do raises concern it (delivered, or lost and
//! counted), and only then does it count in the event's observers, the
//! word the raise loads first.
//!
//! Callbacks are boxed once, when the tool registers them, and reached
//! through atomic pointers, so a delivery (maybe in a signal handler) only
//! loads. A callback that is replaced or removed is not freed then — a
//! delivery on another thread may be running it — but kept with the
//! registration until its slot is allocated again (see
//! [`crate::lockfree::slot_table`]), from normal code.

use super::instance::{EventInstance, current_requirement};
use crate::lockfree::slot_table::Retire;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::vocabulary::kinds::{CbSafety, ObjectRef};

/// An event callback: the instance and the requirement of this delivery.
pub type EventCallback = Box<dyn Fn(&EventInstance<'_>, CbSafety) + Send + Sync>;
/// A dropped handler: the number of deliveries lost since it was set or
/// last called, the source of the events, this call's requirement, and the
/// `user_data` of the callback chosen for the call (C tools only; 0 from
/// Rust, and 0 for a registration without callbacks).
pub type DroppedCallback = Box<dyn Fn(u64, usize, CbSafety, usize) + Send + Sync>;
/// A free callback: the requirement of the point where it runs.
pub type FreeCallback = Box<dyn Fn(CbSafety) + Send + Sync>;

/// A registered event callback and the C tool's `user_data` for it.
pub(crate) struct Callback {
    pub(crate) f: EventCallback,
    pub(crate) user_data: usize,
}

/// See the module documentation.
pub(crate) struct Registration {
    pub(crate) event: usize,
    pub(crate) object: Option<ObjectRef>,
    callbacks: [AtomicPtr<Callback>; 4],
    dropped: AtomicPtr<DroppedCallback>,
    /// Deliveries lost since the dropped handler was set or last called
    /// (counted only while one is set, as the standard says).
    pub(crate) dropped_count: AtomicU64,
    free: AtomicPtr<FreeCallback>,
    /// Whether this registration counts in its event's observers: it
    /// observes the event (a callback or a dropped handler) and is not
    /// retired. Raises pass over a registration that does not.
    pub(crate) subscribed: AtomicBool,
    /// Its deliveries in thread buffers, and the one a delivery point has
    /// taken out and is running (dropped handler and callback): while any
    /// is counted, new raises wait behind them, so that one thread's
    /// events reach the callbacks in the order they were raised. A
    /// delivery is uncounted only once its callback has returned.
    pub(crate) waiting: AtomicU64,
    /// Serialises the tool's changes of callbacks and dropped handler with
    /// the recount of the observers that follows each.
    changing: Mutex<()>,
    /// Everything boxed for this registration, freed when it is dropped.
    owned: Mutex<Owned>,
}

#[derive(Default)]
struct Owned {
    callbacks: Vec<*mut Callback>,
    dropped: Vec<*mut DroppedCallback>,
    free: Vec<*mut FreeCallback>,
}

// SAFETY: the raw pointers are boxes this registration owns (made by
// `Box::into_raw` of `Send + Sync` values and freed only in `Drop`).
unsafe impl Send for Owned {}

impl Registration {
    pub(crate) fn new(event: usize, object: Option<ObjectRef>) -> Self {
        Self {
            event,
            object,
            callbacks: Default::default(),
            dropped: AtomicPtr::new(core::ptr::null_mut()),
            dropped_count: AtomicU64::new(0),
            free: AtomicPtr::new(core::ptr::null_mut()),
            subscribed: AtomicBool::new(false),
            waiting: AtomicU64::new(0),
            changing: Mutex::new(()),
            owned: Mutex::new(Owned::default()),
        }
    }

    /// Held by the tool while it changes a callback or the dropped handler
    /// and recounts the observers. Not signal-safe.
    pub(crate) fn lock_changes(&self) -> MutexGuard<'_, ()> {
        self.changing.lock()
    }

    /// Whether the registration observes its event: it has a callback or a
    /// dropped handler.
    pub(crate) fn observes(&self) -> bool {
        self.has_any_callback() || !self.dropped.load(Ordering::Acquire).is_null()
    }

    /// Sets (or with `None` removes) the callback at `level`. Not
    /// signal-safe.
    pub(crate) fn set_callback(&self, level: CbSafety, cb: Option<Callback>) {
        let p = cb.map_or(core::ptr::null_mut(), |c| Box::into_raw(Box::new(c)));
        if !p.is_null() {
            self.owned.lock().callbacks.push(p);
        }
        self.callbacks[level.rank()].store(p, Ordering::Release);
    }

    /// Whether a callback is registered at `level`.
    pub(crate) fn has_callback(&self, level: CbSafety) -> bool {
        !self.callbacks[level.rank()]
            .load(Ordering::Acquire)
            .is_null()
    }

    /// Whether any callback is registered.
    pub(crate) fn has_any_callback(&self) -> bool {
        CbSafety::ALL.iter().any(|&l| self.has_callback(l))
    }

    /// The callback at the lowest level that satisfies `required`, with
    /// that level (the standard's selection rule). Async-signal-safe.
    #[inline]
    pub(crate) fn pick(&self, required: CbSafety) -> Option<(&Callback, CbSafety)> {
        CbSafety::ALL[required.rank()..].iter().find_map(|&level| {
            let p = self.callbacks[level.rank()].load(Ordering::Acquire);
            // SAFETY: a non-null pointer here is a box this registration
            // owns until it is dropped, and the caller is inside the
            // registration (see `lockfree::slot_table`), so it is not dropped.
            (!p.is_null()).then(|| (unsafe { &*p }, level))
        })
    }

    /// Sets (or removes) the dropped handler; the count starts again from
    /// zero. Not signal-safe.
    pub(crate) fn set_dropped(&self, h: Option<DroppedCallback>) {
        let p = h.map_or(core::ptr::null_mut(), |h| Box::into_raw(Box::new(h)));
        if !p.is_null() {
            self.owned.lock().dropped.push(p);
        }
        self.dropped.store(p, Ordering::Release);
        self.dropped_count.store(0, Ordering::Relaxed);
    }

    /// Records one lost delivery if a dropped handler is set (the count
    /// saturates); returns whether it did. Async-signal-safe.
    pub(crate) fn note_drop(&self) -> bool {
        if self.dropped.load(Ordering::Acquire).is_null() {
            return false;
        }
        let _ = self
            .dropped_count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(c.saturating_add(1))
            });
        true
    }

    /// Whether deliveries were lost that the dropped handler has not heard
    /// of yet.
    pub(crate) fn has_unreported(&self) -> bool {
        self.dropped_count.load(Ordering::Relaxed) != 0
    }

    /// Reports the deliveries lost so far to the dropped handler, telling
    /// it the requirement `ctx` of the point and `user_data` (that of the
    /// callback chosen for the delivery it precedes; 0 if none).
    /// Async-signal-safe as far as the handler is.
    pub(crate) fn report_drops(&self, source: usize, ctx: CbSafety, user_data: usize) {
        if self.dropped_count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let h = self.dropped.load(Ordering::Acquire);
        if h.is_null() {
            return;
        }
        let n = self.dropped_count.swap(0, Ordering::Relaxed);
        if n > 0 {
            // SAFETY: as in `pick`: an owned box, alive while we are inside.
            unsafe { (*h)(n, source, ctx, user_data) };
        }
    }

    /// Stores the free callback that finishing this registration runs.
    pub(crate) fn set_free(&self, f: Option<FreeCallback>) {
        if let Some(f) = f {
            let p = Box::into_raw(Box::new(f));
            self.owned.lock().free.push(p);
            self.free.store(p, Ordering::Release);
        }
    }
}

impl Retire for Registration {
    fn finish(&self) {
        let f = self.free.load(Ordering::Acquire);
        if !f.is_null() {
            // SAFETY: an owned box, alive until the registration is dropped,
            // which needs the slot finished first.
            unsafe { (*f)(current_requirement()) };
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let owned = std::mem::take(&mut *self.owned.lock());
        // SAFETY: each pointer came from `Box::into_raw` once, and nothing
        // can reach it any more (the registration is being dropped).
        unsafe {
            owned
                .callbacks
                .into_iter()
                .for_each(|p| drop(Box::from_raw(p)));
            owned
                .dropped
                .into_iter()
                .for_each(|p| drop(Box::from_raw(p)));
            owned.free.into_iter().for_each(|p| drop(Box::from_raw(p)));
        }
    }
}
