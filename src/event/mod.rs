//! MPI 4 events (MPI 4.1 §15.3.8): event types a component raises, the
//! sources that timestamp them, and the tool registrations whose callbacks
//! receive them. `docs/events.md` explains which rule of the standard each
//! choice serves.
//!
//! - **Component side**: [`Registry::event`](crate::Registry::event)
//!   declares a typed event ([`Event`]); [`Event::raise`] costs one load
//!   and a branch while no tool has a callback or a dropped handler for it.
//! - **Tool side**: [`Registry::event_registration`](crate::Registry::event_registration)
//!   gives an RAII [`EventRegistration`] with callbacks at the four safety
//!   levels ([`CbSafety`](crate::CbSafety)), a dropped handler and a free
//!   callback; [`Events`] answers the queries.
//!
//! Delivery (in [`raise`]): a raise takes its timestamp once, then for each
//! registration of the event picks the callback at the lowest safety level
//! the point allows. Callbacks registered `ThreadSafe` or
//! `AsyncSignalSafe` run at once on the raising thread (if the point's
//! requirement allows them). Callbacks registered `None` or
//! `MpiRestricted` promise neither reentrancy nor thread safety, so they
//! run only while the raising thread holds the registry's delivery token
//! (taken without waiting); otherwise the event goes to the thread's
//! bounded buffer ([`buffer`]) and is delivered at the next delivery point
//! ([`Events::deliver`]); while a registration has events in buffers or
//! being delivered from one, its new raises wait behind them (per thread,
//! raise order). What can be neither delivered nor buffered is dropped,
//! counted in the engine's statistics and reported to the registration's
//! dropped handler before its next delivery — or, for a registration with
//! a dropped handler and no callback (every raise for it is a loss), at the
//! first point where nothing is required of a callback.

pub(crate) mod buffer;
mod handle;
mod instance;
mod raise;
mod record;
mod registration;
pub(crate) mod source;

use std::collections::HashMap;

use crate::category::Categories;
use crate::lockfree::append_vec::AppendVec;
use crate::lockfree::recycler::Recycler;
use crate::lockfree::slot_table::{Freed, Ref, Retire, SlotTable};
use crate::lockfree::striped::StripedCounter;
use crate::sync::unmodelled::OnceLock;
use crate::sync::{Arc, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::vocabulary::error::{Error, ErrorCode, Result};
use crate::vocabulary::event_info::{EventInfo, SourceInfo};
use crate::vocabulary::kinds::{BindKind, CbSafety, ObjectRef};
use buffer::Ring;
use registration::{Callback, Registration};
use source::Sources;

pub use handle::{Event, EventBuilder, EventRegistration};
pub use instance::EventInstance;
pub use record::{Element, EventRecord};
pub use registration::{DroppedCallback, EventCallback, FreeCallback};
pub use source::TimestampFn;

/// Default entries of a thread's event buffer (the `pvar_event_buffer_entries`
/// control variable of the process registry sets it).
pub const DEFAULT_BUFFER_ENTRIES: usize = 256;

/// Registrations one registry holds at most (`MPI_T_ERR_OUT_OF_HANDLES`
/// beyond).
pub const MAX_REGISTRATIONS: usize = 1 << 16;

/// One declared event type.
pub(crate) struct EventType {
    pub(crate) info: EventInfo,
    /// Registrations of this type that observe it (a callback or a dropped
    /// handler, not freed): the raise's one load.
    pub(crate) subscribers: AtomicU32,
    /// Keys of the registrations of this type (0: a free entry); a free
    /// entry is reused first, so the list is as long as the most
    /// registrations this type had at once.
    subs: Recycler<AtomicU64>,
}

/// A registration in the registry's table, with its entry in its event
/// type's list (so that a free clears it without a search).
pub(crate) struct Listed {
    reg: Registration,
    entry: usize,
}

impl core::ops::Deref for Listed {
    type Target = Registration;
    fn deref(&self) -> &Registration {
        &self.reg
    }
}

impl Retire for Listed {
    fn finish(&self) {
        self.reg.finish();
    }
}

/// Counts of what happened to raised events, over the registry's life.
/// Each raise counts once per registration it is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventStats {
    /// Deliveries attempted: raises × matching registrations that observe
    /// the event (have a callback or a dropped handler).
    pub raised: u64,
    /// Callbacks run (at once or later).
    pub delivered: u64,
    /// Deliveries that waited in a thread's buffer.
    pub deferred: u64,
    /// Deliveries lost: no callback at a level the point allows and no
    /// room or no buffer to wait in, no callback at all (a registration
    /// with only a dropped handler), or nested deliveries too deep.
    pub dropped: u64,
    /// Waiting deliveries whose registration was freed first.
    pub discarded: u64,
}

/// Striped, so that threads raising at once do not share one counter's
/// cache line.
#[derive(Default)]
struct Counters {
    raised: StripedCounter,
    delivered: StripedCounter,
    deferred: StripedCounter,
    dropped: StripedCounter,
    discarded: StripedCounter,
}

/// The event types, sources and registrations of one registry (MPI_T's
/// `MPI_T_event_*` and `MPI_T_source_*` queries). Obtained from
/// [`Registry::events`](crate::Registry::events).
pub struct Events {
    types: AppendVec<EventType>,
    by_name: Mutex<HashMap<String, usize>>,
    sources: Sources,
    /// Registrations by key. A free hands its last step (the free
    /// callback) to the last delivery inside; the data of such a slot is
    /// dropped at the next allocation.
    regs: SlotTable<Listed>,
    /// Ring of thread id `t` at index `t - 1` (null until needed).
    rings: AppendVec<AtomicPtr<Ring>>,
    rings_lock: Mutex<()>,
    buffer_entries: AtomicUsize,
    /// Where the entries of a new buffer come from when set (the
    /// `PVAR_EVENT_BUFFER_ENTRIES` control variable of the process
    /// registry); else `buffer_entries`.
    entries_from: OnceLock<Box<dyn Fn() -> usize + Send + Sync>>,
    /// Entries pushed into rings and not yet taken out (a hint for
    /// delivery points: zero means nothing to look at).
    waiting: AtomicU64,
    /// The delivery token (see the module documentation).
    token: AtomicBool,
    /// A registration without callbacks has losses its dropped handler has
    /// not heard of (set where they could not be reported at once; the
    /// next delivery point with requirement `NONE` reports them).
    unreported: AtomicBool,
    counters: Counters,
    categories: Arc<Categories>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("types", &self.len())
            .field("sources", &self.num_sources())
            .finish_non_exhaustive()
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        for (_, slot) in self.rings.iter() {
            let p = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                // SAFETY: made by `Box::into_raw` in `ring_for`, and nothing
                // can reach the registry any more.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

impl Events {
    pub(crate) fn new(categories: Arc<Categories>) -> Self {
        Self {
            types: AppendVec::new(),
            by_name: Mutex::new(HashMap::new()),
            sources: Sources::new(),
            regs: SlotTable::with_capacity(MAX_REGISTRATIONS),
            rings: AppendVec::new(),
            rings_lock: Mutex::new(()),
            buffer_entries: AtomicUsize::new(DEFAULT_BUFFER_ENTRIES),
            entries_from: OnceLock::new(),
            waiting: AtomicU64::new(0),
            token: AtomicBool::new(false),
            unreported: AtomicBool::new(false),
            counters: Counters::default(),
            categories,
        }
    }

    // ---- declaring (component side) --------------------------------------

    /// Declares an event type and returns its index. The same name with the
    /// same metadata returns the existing index; with other metadata it is
    /// refused.
    pub(crate) fn declare(&self, info: EventInfo) -> Result<usize> {
        info.validate()?;
        if self.sources.get(info.source).is_none() {
            return Err(Error::refused(format!(
                "event '{}': no source has index {}",
                info.name, info.source
            )));
        }
        let mut names = self.by_name.lock();
        if let Some(&i) = names.get(&info.name) {
            let old = &self.types.get(i).expect("named type exists").info;
            if *old == info {
                return Ok(i);
            }
            return Err(Error::refused(format!(
                "event '{}' is already registered at index {i} with other metadata \
                 ({old:?}); new: {info:?}",
                info.name
            )));
        }
        let category = info.category.clone();
        let name = info.name.clone();
        let index = self.types.push(EventType {
            info,
            subscribers: AtomicU32::new(0),
            subs: Recycler::new(),
        });
        names.insert(name, index);
        drop(names);
        if let Some(c) = category {
            self.categories.attach_event(&c, index);
        }
        Ok(index)
    }

    /// Registers an event source and returns its index; `now` is its
    /// timestamp function, `None` for a source that cannot give a timestamp
    /// on demand (its events are raised with explicit timestamps,
    /// [`Event::raise_at`], and `MPI_T_source_get_timestamp` answers
    /// `MPI_T_ERR_NOT_SUPPORTED`).
    ///
    /// ```
    /// use pvar::{Registry, SourceInfo, SourceOrder};
    /// let reg = Registry::new();
    /// let tsc = reg.events().register_source(
    ///     SourceInfo {
    ///         name: "nic_clock".into(),
    ///         description: "the adapter's clock, in microseconds".into(),
    ///         ordering: SourceOrder::Ordered,
    ///         ticks_per_second: 1_000_000,
    ///         max_ticks: u32::MAX as u64,
    ///     },
    ///     Some(Box::new(|| 42)),
    /// )?;
    /// assert_eq!(reg.events().source_timestamp(tsc)?, 42);
    /// # Ok::<(), pvar::Error>(())
    /// ```
    pub fn register_source(&self, info: SourceInfo, now: Option<TimestampFn>) -> Result<usize> {
        self.sources.register(info, now)
    }

    // ---- queries (tool side) -----------------------------------------------

    /// Number of event types (`MPI_T_event_get_num`). Grows, never shrinks;
    /// indices never change. Lock-free.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether no event type is declared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn ty(&self, index: usize) -> Result<&EventType> {
        self.types.get(index).ok_or(Error::no_such_index())
    }

    /// Metadata of event type `index` (`MPI_T_event_get_info`).
    pub fn info(&self, index: usize) -> Result<&EventInfo> {
        Ok(&self.ty(index)?.info)
    }

    /// Index of the event type named `name` (`MPI_T_event_get_index`):
    /// `MPI_T_ERR_INVALID_NAME` if none.
    pub fn index(&self, name: &str) -> Result<usize> {
        self.by_name
            .lock()
            .get(name)
            .copied()
            .ok_or(Error::from(ErrorCode::InvalidName))
    }

    /// Number of sources (`MPI_T_source_get_num`); source 0 is the
    /// engine's monotonic clock.
    pub fn num_sources(&self) -> usize {
        self.sources.len()
    }

    /// Metadata of source `index` (`MPI_T_source_get_info`).
    pub fn source_info(&self, index: usize) -> Result<&SourceInfo> {
        Ok(&self.sources.get(index).ok_or(Error::no_such_index())?.info)
    }

    /// The current timestamp of source `index`
    /// (`MPI_T_source_get_timestamp`): `MPI_T_ERR_NOT_SUPPORTED` for a
    /// source without a timestamp function. As safe as the source's
    /// function (async-signal-safe for source 0).
    pub fn source_timestamp(&self, index: usize) -> Result<u64> {
        let s = self.sources.get(index).ok_or(Error::no_such_index())?;
        s.now().ok_or(Error::from(ErrorCode::NotSupported))
    }

    /// What happened to raised events so far.
    pub fn stats(&self) -> EventStats {
        let c = &self.counters;
        EventStats {
            raised: c.raised.total(),
            delivered: c.delivered.total(),
            deferred: c.deferred.total(),
            dropped: c.dropped.total(),
            discarded: c.discarded.total(),
        }
    }

    /// Sets the number of entries of thread buffers made from now on
    /// (existing buffers keep theirs). At least 2. In the process registry
    /// once a tool has initialised MPI_T, the `PVAR_EVENT_BUFFER_ENTRIES`
    /// control variable decides instead.
    pub fn set_buffer_entries(&self, n: usize) {
        self.buffer_entries
            .store(n.max(buffer::MIN_ENTRIES), Ordering::Relaxed);
    }

    /// Entries of thread buffers made from now on.
    pub fn buffer_entries(&self) -> usize {
        match self.entries_from.get() {
            Some(f) => f().max(buffer::MIN_ENTRIES),
            None => self.buffer_entries.load(Ordering::Relaxed),
        }
    }

    /// Takes the entries of new buffers from `f` from now on (once; a
    /// control variable's reader).
    pub(crate) fn set_buffer_entries_from(&self, f: Box<dyn Fn() -> usize + Send + Sync>) {
        let _ = self.entries_from.set(f);
    }

    /// Deliveries waiting in thread buffers.
    pub fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::Relaxed)
    }

    // ---- registrations (tool side) ------------------------------------------

    /// Allocates a registration for event type `index`
    /// (`MPI_T_event_handle_alloc`) and returns its key. `object` is
    /// required for an event bound to objects (of its kind) and ignored
    /// otherwise. Not signal-safe.
    pub fn handle_alloc(&self, index: usize, object: Option<ObjectRef>) -> Result<u64> {
        let ty = self.ty(index)?;
        let object = if ty.info.bind == BindKind::NoObject {
            None
        } else {
            match object {
                Some(o) if o.kind == ty.info.bind => Some(o),
                Some(o) => {
                    return Err(Error::refused(format!(
                        "event '{}' is bound to {} objects, not {}",
                        ty.info.name, ty.info.bind, o.kind
                    )));
                }
                None => {
                    return Err(Error::refused(format!(
                        "event '{}' is bound to {} objects: give the object",
                        ty.info.name, ty.info.bind
                    )));
                }
            }
        };
        // Registrations freed while a delivery was inside them: their
        // data (callbacks) is dropped here, from normal code.
        while self.regs.reclaim().is_some() {}
        // Both steps O(1): an entry of the type's list (a given-back one
        // first), a slot of the table (a freed one first).
        let entry = ty
            .subs
            .take(usize::MAX, || AtomicU64::new(0))
            .expect("no limit");
        let listed = Listed {
            reg: Registration::new(index, object),
            entry,
        };
        let Ok(key) = self.regs.try_alloc(listed) else {
            ty.subs.give_back(entry);
            return Err(Error::from(ErrorCode::OutOfHandles));
        };
        ty.subs
            .items
            .get(entry)
            .expect("a taken entry exists")
            .store(key, Ordering::Release);
        Ok(key)
    }

    fn registration(&self, key: u64) -> Result<Ref<'_, Listed>> {
        self.regs
            .get(key)
            .ok_or(Error::from(ErrorCode::InvalidHandle))
    }

    /// Registers `f` (or, with `None`, removes the callback) at safety
    /// level `level` of registration `key` (`MPI_T_event_register_callback`);
    /// `user_data` is what a dropped handler called for this callback is
    /// given (C tools). Not signal-safe.
    pub fn register_callback(
        &self,
        key: u64,
        level: CbSafety,
        f: Option<EventCallback>,
        user_data: usize,
    ) -> Result<()> {
        let reg = self.registration(key)?;
        let _changing = reg.lock_changes();
        reg.set_callback(level, f.map(|f| Callback { f, user_data }));
        self.resubscribe(&reg)
    }

    /// Counts registration `reg` in its event's observers exactly while it
    /// observes the event (a callback or a dropped handler) and is live.
    /// The caller holds the registration's change lock, so each change is
    /// followed by its own recount.
    fn resubscribe(&self, reg: &Ref<'_, Listed>) -> Result<()> {
        let ty = self.ty(reg.event)?;
        if !reg.observes() {
            if reg.subscribed.swap(false, Ordering::SeqCst) {
                ty.subscribers.fetch_sub(1, Ordering::Release);
            }
        } else if !reg.subscribed.swap(true, Ordering::SeqCst) {
            ty.subscribers.fetch_add(1, Ordering::Release);
            // A free racing with us may have retired the registration
            // before our swap (and so found nothing to unsubscribe): undo.
            // Exactly one of the two swaps back to false sees `true`.
            if !reg.is_live() && reg.subscribed.swap(false, Ordering::SeqCst) {
                ty.subscribers.fetch_sub(1, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Whether registration `key` has a callback at `level`:
    /// `MPI_T_ERR_INVALID_HANDLE` for a key that is not live.
    pub fn has_callback(&self, key: u64, level: CbSafety) -> Result<bool> {
        Ok(self.registration(key)?.has_callback(level))
    }

    /// The event type and object of registration `key`.
    pub fn registration_info(&self, key: u64) -> Result<(usize, Option<ObjectRef>)> {
        let r = self.registration(key)?;
        Ok((r.event, r.object))
    }

    /// Sets (or removes) the dropped handler of registration `key`
    /// (`MPI_T_event_set_dropped_handler`); the count of lost deliveries
    /// starts from zero. A registration with a dropped handler observes its
    /// event even without a callback: every raise for it is then a loss,
    /// reported at the first point where the requirement is `NONE` (see
    /// `docs/events.md`, "Buffers, drops and the dropped handler"). Not
    /// signal-safe.
    pub fn set_dropped_handler(&self, key: u64, h: Option<DroppedCallback>) -> Result<()> {
        let reg = self.registration(key)?;
        let _changing = reg.lock_changes();
        reg.set_dropped(h);
        self.resubscribe(&reg)
    }

    /// Frees registration `key` (`MPI_T_event_handle_free`): no delivery
    /// to it starts after this returns; deliveries already running (on
    /// other threads, or the one calling this from its own callback)
    /// finish, and the last of them runs `free` — at once if none is
    /// running. Never waits. Losses the dropped handler has not heard of
    /// are reported first if this is called from normal code (not from a
    /// callback; told `NONE`). `MPI_T_ERR_INVALID_HANDLE` for a key that
    /// is not live. O(1). Not signal-safe.
    pub fn handle_free(&self, key: u64, free: Option<FreeCallback>) -> Result<()> {
        self.free_registration(key, free, true)
    }

    /// Frees registration `key` as the last `MPI_T_finalize` does: without
    /// a free callback, and without calling its dropped handler.
    #[cfg(feature = "ffi")]
    pub(crate) fn release(&self, key: u64) -> Result<()> {
        self.free_registration(key, None, false)
    }

    fn free_registration(&self, key: u64, free: Option<FreeCallback>, report: bool) -> Result<()> {
        let mut event = None;
        let freed = self.regs.free(key, |r| {
            r.set_free(free);
            if report {
                self.report_at_free(r);
            }
            event = Some((r.event, r.entry, r.subscribed.swap(false, Ordering::SeqCst)));
        });
        let Some(freed) = freed else {
            return Err(Error::from(ErrorCode::InvalidHandle));
        };
        let (index, entry, subscribed) = event.expect("free ran the closure");
        let ty = self.ty(index)?;
        if subscribed {
            ty.subscribers.fetch_sub(1, Ordering::Release);
        }
        // Raises that loaded the key before this find it freed.
        if let Some(k) = ty.subs.items.get(entry) {
            k.store(0, Ordering::Release);
            ty.subs.give_back(entry);
        }
        // Nobody was inside: the free callback ran; drop the callbacks.
        if let Freed::Now(listed) = freed {
            drop(listed);
        }
        Ok(())
    }

    /// Number of live registrations.
    pub fn registrations(&self) -> usize {
        self.regs.in_use()
    }

    /// The subscriber word of event type `index` (what the C interface's
    /// inline raise loads), valid while this table lives.
    #[cfg(feature = "ffi")]
    pub(crate) fn observed_word(&self, index: usize) -> Result<*const AtomicU32> {
        Ok(&self.ty(index)?.subscribers)
    }

    /// Raises event type `index` with the record at `record` (C
    /// components); see [`Event::raise_in`].
    ///
    /// # Safety
    /// `record` must point to a record with every element of the type
    /// initialised at its displacement.
    #[cfg(feature = "ffi")]
    pub(crate) unsafe fn raise_raw(
        &self,
        index: usize,
        object: Option<ObjectRef>,
        record: *const u8,
        required: CbSafety,
        timestamp: Option<u64>,
    ) {
        let Ok(ty) = self.ty(index) else {
            return;
        };
        if ty.subscribers.load(Ordering::Relaxed) == 0 {
            return;
        }
        // SAFETY: forwarded contract.
        let buf = unsafe { raise::RecordBuf::gather(&ty.info.elements, record) };
        self.raise_slow(index, object, &buf, required, timestamp);
    }

    /// Makes this thread's event buffer now, so that raises from signal
    /// handlers on this thread can defer instead of dropping.
    pub(crate) fn prepare_thread(&self) {
        instance::touch_thread_locals();
        let _ = self.ring_for(true);
    }
}
