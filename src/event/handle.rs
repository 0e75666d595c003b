//! The Rust faces of events: [`EventBuilder`] and [`Event`] for
//! components, [`EventRegistration`] for tools.

use core::marker::PhantomData;

use super::delivery::RecordBuf;
use super::events::Events;
use super::record::EventRecord;
use super::registration::{DroppedCallback, EventCallback, FreeCallback};
use super::types::EventType;
use crate::sync::{Arc, Ordering};
use crate::vocabulary::error::Result;
use crate::vocabulary::event_info::EventInfo;
use crate::vocabulary::kinds::{BindKind, CbSafety, ObjectRef, Verbosity};

/// Describes an event type before declaring it; from
/// [`Registry::event`](crate::Registry::event). The record type `R` fixes
/// the elements a tool reads (see [`EventRecord`]).
#[must_use = "a builder does nothing until `register` is called"]
pub struct EventBuilder<'r, R> {
    events: &'r Arc<Events>,
    info: EventInfo,
    _record: PhantomData<fn(R)>,
}

impl<'r, R: EventRecord> EventBuilder<'r, R> {
    pub(crate) fn new(events: &'r Arc<Events>, name: &str) -> Self {
        Self {
            events,
            info: EventInfo {
                name: name.to_string(),
                description: String::new(),
                verbosity: Verbosity::UserBasic,
                bind: BindKind::NoObject,
                elements: R::layout(),
                extent: R::extent(),
                source: 0,
                category: None,
            },
            _record: PhantomData,
        }
    }

    crate::vocabulary::common_builder_setters!();

    /// The source that timestamps its raises (default 0, the engine's
    /// monotonic clock).
    pub fn source(mut self, index: usize) -> Self {
        self.info.source = index;
        self
    }

    /// Declares the event type. The same name with the same metadata gives
    /// the same type; other metadata is refused (`MPI_T_ERR_INVALID`, with
    /// the reason).
    pub fn register(self) -> Result<Event<R>> {
        let index = self.events.declare(self.info)?;
        let ty: *const EventType = self.events.ty(index)?;
        Ok(Event {
            events: self.events.clone(),
            ty,
            index,
            _record: PhantomData,
        })
    }
}

/// A component's handle to raise one event type. Cheap to clone.
///
/// [`raise`](Event::raise) is one relaxed load and a branch while no tool
/// has a callback or a dropped handler for the event; otherwise it
/// timestamps the event and delivers it (see [`crate::Events`] and
/// `docs/events.md`) without a lock or an allocation, except the first
/// time a thread has to buffer an event (its buffer is made then;
/// [`Registry::prepare_thread`] makes it ahead).
///
/// [`Registry::prepare_thread`]: crate::Registry::prepare_thread
pub struct Event<R> {
    events: Arc<Events>,
    /// The type, in `events`' append-only table (never moves nor goes
    /// away while `events` lives): the raise's check is one load from it.
    ty: *const EventType,
    index: usize,
    _record: PhantomData<fn(R)>,
}

// SAFETY: `ty` points into `events`, which is `Send + Sync` and kept alive
// by the handle; `EventType` is only read through it (atomics and
// immutable metadata).
unsafe impl<R> Send for Event<R> {}
// SAFETY: as above.
unsafe impl<R> Sync for Event<R> {}

impl<R> Clone for Event<R> {
    fn clone(&self) -> Self {
        Self {
            events: self.events.clone(),
            ty: self.ty,
            index: self.index,
            _record: PhantomData,
        }
    }
}

impl<R> std::fmt::Debug for Event<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event").field("index", &self.index).finish()
    }
}

impl<R: EventRecord> Event<R> {
    /// The event type's index (`MPI_T_event_get_index` of its name).
    pub fn index(&self) -> usize {
        self.index
    }

    #[inline(always)]
    fn ty(&self) -> &EventType {
        // SAFETY: see the field: an element of an append-only table that
        // `self.events` keeps alive.
        unsafe { &*self.ty }
    }

    /// Whether a tool observes this event (a registration of it has a
    /// callback or a dropped handler): what a component may test before
    /// computing an expensive record.
    #[inline(always)]
    pub fn is_observed(&self) -> bool {
        self.ty().subscribers.load(Ordering::Relaxed) != 0
    }

    /// Raises the event from a point where the component holds nothing a
    /// callback could trip over (callbacks of every level may run here,
    /// and events waiting in buffers are delivered). Not for signal
    /// handlers: see [`Event::raise_in`].
    #[inline(always)]
    pub fn raise(&self, record: &R) {
        if self.is_observed() {
            self.raise_cold(None, record, CbSafety::None, None);
        }
    }

    /// Raises the event for `object` (events bound to objects reach the
    /// registrations for that object only).
    #[inline(always)]
    pub fn raise_on(&self, object: ObjectRef, record: &R) {
        if self.is_observed() {
            self.raise_cold(Some(object), record, CbSafety::None, None);
        }
    }

    /// Raises the event from a point that requires `required` of a
    /// callback: `MpiRestricted` inside the component's own locks,
    /// `ThreadSafe`, or `AsyncSignalSafe` from a signal handler (then the
    /// raise is async-signal-safe: it never allocates, and what cannot be
    /// delivered or buffered is dropped and counted).
    #[inline(always)]
    pub fn raise_in(&self, required: CbSafety, object: Option<ObjectRef>, record: &R) {
        if self.is_observed() {
            self.raise_cold(object, record, required, None);
        }
    }

    /// As [`Event::raise_in`], with the timestamp given (in ticks of the
    /// event's source): for sources without a timestamp function, or
    /// events observed before they are raised.
    #[inline(always)]
    pub fn raise_at(
        &self,
        timestamp: u64,
        required: CbSafety,
        object: Option<ObjectRef>,
        record: &R,
    ) {
        if self.is_observed() {
            self.raise_cold(object, record, required, Some(timestamp));
        }
    }

    #[cold]
    #[inline(never)]
    fn raise_cold(
        &self,
        object: Option<ObjectRef>,
        record: &R,
        required: CbSafety,
        timestamp: Option<u64>,
    ) {
        let ty = self.ty();
        // SAFETY: `R: EventRecord` promises its layout (which `declare`
        // stored as the type's elements) names initialised fields of `R`.
        let buf = unsafe { RecordBuf::gather(&ty.info.elements, (record as *const R).cast()) };
        self.events
            .raise_slow(self.index, object, &buf, required, timestamp);
    }
}

/// A tool's registration for one event type (`MPI_T_event_registration`),
/// freed when dropped. From
/// [`Registry::event_registration`](crate::Registry::event_registration).
///
/// ```
/// use pvar::{CbSafety, Registry};
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// let reg = Registry::new();
/// let overflow = reg.event::<u64>("queue_overflow").register()?;
/// let seen = Arc::new(AtomicU64::new(0));
/// let r = reg.event_registration(overflow.index(), None)?;
/// let s = seen.clone();
/// r.on_event(CbSafety::AsyncSignalSafe, move |_, _| {
///     s.fetch_add(1, Ordering::Relaxed);
/// })?;
/// overflow.raise(&512);
/// drop(r); // no callback after this
/// overflow.raise(&512);
/// assert_eq!(seen.load(Ordering::Relaxed), 1);
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct EventRegistration {
    events: Arc<Events>,
    key: u64,
}

impl std::fmt::Debug for EventRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRegistration")
            .field("key", &self.key)
            .finish()
    }
}

impl EventRegistration {
    pub(crate) fn new(
        events: Arc<Events>,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<Self> {
        let key = events.handle_alloc(index, object)?;
        Ok(Self { events, key })
    }

    /// The registration's key (what [`EventInstance::registration`](crate::EventInstance::registration) reports).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Registers `f` at safety level `level`, replacing the callback there:
    /// `f` will be called wherever the requirement is at most `level` and
    /// no callback of a lower level is registered. A callback registered
    /// `AsyncSignalSafe` must be: it may run in a signal handler.
    pub fn on_event(
        &self,
        level: CbSafety,
        f: impl Fn(&super::instance::EventInstance<'_>, CbSafety) + Send + Sync + 'static,
    ) -> Result<()> {
        let f: EventCallback = Box::new(f);
        self.events.register_callback(self.key, level, Some(f), 0)
    }

    /// Removes the callback at `level`.
    pub fn clear_callback(&self, level: CbSafety) -> Result<()> {
        self.events.register_callback(self.key, level, None, 0)
    }

    /// Sets the dropped handler: `f(count, source)` hears how many
    /// deliveries were lost since it was set or last called, before the
    /// next delivery. Without a callback the registration loses every
    /// event raised for it, and `f` hears of them at the first point whose
    /// requirement is `None` (the raise itself, else the next
    /// [`Events::deliver(CbSafety::None)`](crate::Events::deliver)).
    /// Dropping the registration (outside a callback) reports what is left.
    pub fn on_dropped(&self, f: impl Fn(u64, usize) + Send + Sync + 'static) -> Result<()> {
        let h: DroppedCallback = Box::new(move |n, source, _, _| f(n, source));
        self.events.set_dropped_handler(self.key, Some(h))
    }

    /// Frees the registration and runs `f` once no callback of it runs any
    /// more (at once if none is running; else when the last one returns,
    /// on its thread).
    pub fn free_with(mut self, f: impl Fn(CbSafety) + Send + Sync + 'static) {
        let f: FreeCallback = Box::new(f);
        let _ = self
            .events
            .handle_free(core::mem::take(&mut self.key), Some(f));
    }
}

impl Drop for EventRegistration {
    fn drop(&mut self) {
        if self.key != 0 {
            let _ = self.events.handle_free(self.key, None);
        }
    }
}
