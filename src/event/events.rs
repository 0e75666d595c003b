//! [`Events`]: the event table of one registry, as components declare
//! types and tools query them and register: what `MPI_T_event_*` and
//! `MPI_T_source_*` answer. Raising and delivering are [`Delivery`]'s.

use std::collections::HashMap;

use super::delivery::{Delivery, EventStats, RecordBuf};
use super::registration::{Callback, DroppedCallback, EventCallback, FreeCallback, Registration};
use super::source::{Sources, TimestampFn};
use super::types::{EventType, Listed, Tables};
use crate::category::Categories;
use crate::lockfree::append_vec::AppendVec;
use crate::lockfree::recycler::Recycler;
use crate::lockfree::slot_table::{Freed, Ref, SlotTable};
use crate::sync::{Arc, AtomicU32, AtomicU64, Mutex, Ordering};
use crate::vocabulary::error::{Error, ErrorCode, Result};
use crate::vocabulary::event_info::{EventInfo, SourceInfo};
use crate::vocabulary::kinds::{BindKind, CbSafety, ObjectRef};

/// Registrations one registry holds at most (`MPI_T_ERR_OUT_OF_HANDLES`
/// beyond).
pub const MAX_REGISTRATIONS: usize = 1 << 16;

/// The event types, sources and registrations of one registry (MPI_T's
/// `MPI_T_event_*` and `MPI_T_source_*` queries). Obtained from
/// [`Registry::events`](crate::Registry::events).
pub struct Events {
    /// What a raise and a delivery point look up.
    tables: Tables,
    by_name: Mutex<HashMap<String, usize>>,
    /// Raising and delivering: the thread buffers, the token, the counts.
    delivery: Delivery,
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

impl Events {
    pub(crate) fn new(categories: Arc<Categories>) -> Self {
        Self {
            tables: Tables {
                types: AppendVec::new(),
                sources: Sources::new(),
                regs: SlotTable::with_capacity(MAX_REGISTRATIONS),
            },
            by_name: Mutex::new(HashMap::new()),
            delivery: Delivery::new(),
            categories,
        }
    }

    // ---- declaring (component side) --------------------------------------

    /// Declares an event type and returns its index. The same name with the
    /// same metadata returns the existing index; with other metadata it is
    /// refused.
    pub(crate) fn declare(&self, info: EventInfo) -> Result<usize> {
        info.validate()?;
        if self.tables.sources.get(info.source).is_none() {
            return Err(Error::refused(format!(
                "event '{}': no source has index {}",
                info.name, info.source
            )));
        }
        let mut names = self.by_name.lock();
        if let Some(&i) = names.get(&info.name) {
            let old = &self.tables.types.get(i).expect("named type exists").info;
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
        let index = self.tables.types.push(EventType {
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
    /// [`Event::raise_at`](crate::Event::raise_at), and `MPI_T_source_get_timestamp` answers
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
        self.tables.sources.register(info, now)
    }

    // ---- queries (tool side) -----------------------------------------------

    /// Number of event types (`MPI_T_event_get_num`). Grows, never shrinks;
    /// indices never change. Lock-free.
    pub fn len(&self) -> usize {
        self.tables.types.len()
    }

    /// Whether no event type is declared.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn ty(&self, index: usize) -> Result<&EventType> {
        self.tables.ty(index)
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
        self.tables.sources.len()
    }

    /// Metadata of source `index` (`MPI_T_source_get_info`).
    pub fn source_info(&self, index: usize) -> Result<&SourceInfo> {
        Ok(&self
            .tables
            .sources
            .get(index)
            .ok_or(Error::no_such_index())?
            .info)
    }

    /// The current timestamp of source `index`
    /// (`MPI_T_source_get_timestamp`): `MPI_T_ERR_NOT_SUPPORTED` for a
    /// source without a timestamp function. As safe as the source's
    /// function (async-signal-safe for source 0).
    pub fn source_timestamp(&self, index: usize) -> Result<u64> {
        let s = self
            .tables
            .sources
            .get(index)
            .ok_or(Error::no_such_index())?;
        s.now().ok_or(Error::from(ErrorCode::NotSupported))
    }

    /// What happened to raised events so far.
    pub fn stats(&self) -> EventStats {
        self.delivery.stats()
    }

    /// Sets the number of entries of thread buffers made from now on
    /// (existing buffers keep theirs). At least 2. In the process registry
    /// once a tool has initialised MPI_T, the `PVAR_EVENT_BUFFER_ENTRIES`
    /// control variable decides instead.
    pub fn set_buffer_entries(&self, n: usize) {
        self.delivery.buffers.set_entries(n);
    }

    /// Entries of thread buffers made from now on.
    pub fn buffer_entries(&self) -> usize {
        self.delivery.buffers.entries()
    }

    /// Takes the entries of new buffers from `f` from now on (once; a
    /// control variable's reader).
    pub(crate) fn set_buffer_entries_from(&self, f: Box<dyn Fn() -> usize + Send + Sync>) {
        self.delivery.buffers.set_entries_from(f);
    }

    /// Deliveries waiting in thread buffers.
    pub fn waiting(&self) -> u64 {
        self.delivery.waiting()
    }

    /// A delivery point: delivers the events waiting in every thread's
    /// buffer whose registration has a callback allowed where the
    /// requirement is `required` (give `CbSafety::None` where the caller
    /// holds no lock and anything may run). Returns the number of callbacks
    /// run; 0 at once if another thread is delivering (the token is taken
    /// without waiting). Per thread, events are delivered in the order they
    /// were raised; an event whose callbacks all need a lower requirement
    /// than `required` stops its thread's buffer until a later point.
    ///
    /// At requirement `NONE` it also reports the losses of registrations
    /// without callbacks to their dropped handlers (they have no delivery
    /// to report them before; see `docs/events.md`).
    pub fn deliver(&self, required: CbSafety) -> usize {
        self.delivery.deliver(&self.tables, required)
    }

    /// The raise after the one-load check found subscribers (see
    /// [`Delivery::raise`]).
    #[inline]
    pub(crate) fn raise_slow(
        &self,
        index: usize,
        object: Option<ObjectRef>,
        record: &RecordBuf,
        required: CbSafety,
        timestamp: Option<u64>,
    ) {
        self.delivery
            .raise(&self.tables, index, object, record, required, timestamp);
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
        while self.tables.regs.reclaim().is_some() {}
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
        let Ok(key) = self.tables.regs.try_alloc(listed) else {
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
        self.tables
            .regs
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
        let freed = self.tables.regs.free(key, |r| {
            r.set_free(free);
            if report {
                self.delivery.report_at_free(&self.tables, r);
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
        self.tables.regs.in_use()
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
        let buf = unsafe { RecordBuf::gather(&ty.info.elements, record) };
        self.raise_slow(index, object, &buf, required, timestamp);
    }

    /// Makes this thread's event buffer now, so that raises from signal
    /// handlers on this thread can defer instead of dropping.
    pub(crate) fn prepare_thread(&self) {
        super::instance::touch_thread_locals();
        let _ = self.delivery.buffers.ring_for(true);
    }
}
