//! The registry: the composition root that wires the tables of one
//! process's (or one test's) MPI_T state together, and owns nothing else.
//!
//! A [`Registry`] holds, behind one `Arc`, the performance variables
//! ([`Pvars`]), the control variables ([`Cvars`]), the categories
//! ([`Categories`]), the enumerations with their indices
//! ([`Enumerations`]), the MPI 4 events and their sources ([`Events`]) and
//! the tool side ([`Tool`]), all over one hot
//! storage (the per-thread cell space and the clock). Each table is
//! reached through its accessor, and registration has one convenience per
//! class; everything else lives with the table it concerns.
//!
//! A `Registry` value is isolated (for tests and embedding);
//! [`global`](crate::global) is the process-wide one that the C interface
//! and tools use.

use crate::category::Categories;
use crate::cvar::{CvarBuilder, CvarType, Cvars};
use crate::event::{EventBuilder, EventRecord, EventRegistration, Events};
use crate::hot::clock::Clock;
use crate::hot::storage::Hot;
use crate::pvar::{
    Aggregate, CallbackVar, Counter, Generic, HighWatermark, Level, LowWatermark, Percentage,
    PvarBuilder, Pvars, Size, State, Timer,
};
use crate::sync::Arc;
use crate::tool::{Session, Tool};
use crate::vocabulary::callback::Callbacks;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::{Magnitude, Value};
use crate::vocabulary::enumeration::Enumerations;
use crate::vocabulary::error::Result;
use crate::vocabulary::kinds::{ObjectRef, PvarClass};

struct Inner {
    pvars: Arc<Pvars>,
    cvars: Arc<Cvars>,
    categories: Arc<Categories>,
    enums: Arc<Enumerations>,
    events: Arc<Events>,
    tool: Arc<Tool>,
}

/// The MPI_T state of a process (or of one test): its performance and
/// control variables, categories, enumerations, events and sources, and the
/// tool side. Cheap to
/// clone (shared).
///
/// ```
/// let reg = pvar::Registry::new();
/// let sent = reg.counter("msgs_sent").description("messages sent").register().unwrap();
/// sent.inc();
/// sent.add(2);
/// assert_eq!(sent.get(), 3);
/// assert_eq!(reg.pvars().len(), 1);
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("pvars", &self.pvars().len())
            .field("cvars", &self.cvars().len())
            .finish_non_exhaustive()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// An isolated registry with a freshly calibrated clock.
    ///
    /// # Panics
    /// If this CPU lacks lock-free 128-bit atomics, which the tool side's
    /// async-signal-safe handle state requires (every x86-64 CPU since 2008
    /// and every AArch64 CPU has them).
    pub fn new() -> Self {
        Self::with_clock(Clock::new())
    }

    /// An isolated registry using `clock` for timers (e.g. [`Clock::mock`]).
    pub fn with_clock(clock: Clock) -> Self {
        Self::build(clock, crate::lockfree::slot_table::MAX_SLOTS)
    }

    /// A registry whose tool side holds at most `handles` handles (unit
    /// tests of `OUT_OF_HANDLES`).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn with_handle_capacity(handles: usize) -> Self {
        Self::build(Clock::new(), handles)
    }

    fn build(clock: Clock, handles: usize) -> Self {
        if let Err(why) = crate::sync::check_lock_free() {
            panic!("pvar: {why}");
        }
        crate::lockfree::tagged::detect_fast_loads();
        crate::sync::asymmetric::register();
        crate::lockfree::walk_gate::detect_fast_path();
        let hot = Arc::new(Hot::new(clock));
        let categories = Arc::new(Categories::new());
        let enums = Arc::new(Enumerations::new());
        let pvars = Arc::new(Pvars::new(hot, categories.clone(), enums.clone()));
        let cvars = Arc::new(Cvars::new(categories.clone(), enums.clone()));
        let events = Arc::new(Events::new(categories.clone()));
        let tool = Arc::new(Tool::with_handle_capacity(pvars.clone(), handles));
        Self {
            inner: Arc::new(Inner {
                pvars,
                cvars,
                categories,
                enums,
                events,
                tool,
            }),
        }
    }

    /// The performance variables: counting, metadata, lookup by name
    /// (`MPI_T_pvar_get_num / get_info / get_index`).
    pub fn pvars(&self) -> &Pvars {
        &self.inner.pvars
    }

    /// The control variables: metadata, lookup, and the tool's handles
    /// (`MPI_T_cvar_*`).
    pub fn cvars(&self) -> &Cvars {
        &self.inner.cvars
    }

    /// The performance variables, shared (what a use-site macro registers
    /// into).
    pub(crate) fn pvars_shared(&self) -> &Arc<Pvars> {
        &self.inner.pvars
    }

    /// The control variables, shared (what a `static` control variable
    /// registers into).
    pub(crate) fn cvars_shared(&self) -> &Arc<Cvars> {
        &self.inner.cvars
    }

    /// The category tree (`MPI_T_category_*`).
    pub fn categories(&self) -> &Categories {
        &self.inner.categories
    }

    /// The enumerations with their stable indices (`MPI_T_enum_*`).
    pub fn enums(&self) -> &Enumerations {
        &self.inner.enums
    }

    /// The tool side, keyed: sessions and handles by [`SessionId`] and
    /// [`HandleId`] (`MPI_T_pvar_session_* / handle_* / start / read / …`),
    /// the API of the C interface and of signal handlers.
    ///
    /// [`SessionId`]: crate::SessionId
    /// [`HandleId`]: crate::HandleId
    pub fn tool(&self) -> &Tool {
        &self.inner.tool
    }

    /// A typed session over this registry that frees itself (and its
    /// handles) when dropped: the front door of Rust tools.
    ///
    /// Async-signal-safe: no, and neither is dropping the [`Session`].
    pub fn session(&self) -> Result<Session> {
        Session::new(self.inner.tool.clone())
    }

    /// The clock timers of this registry use.
    pub fn clock(&self) -> &Clock {
        &self.inner.pvars.hot().clock
    }

    /// Allocates, for the calling thread, the cells of every variable
    /// registered so far, so that later updates from this thread, including
    /// from a signal handler, never allocate.
    pub fn prepare_thread(&self) {
        self.inner.pvars.prepare_thread();
        self.inner.events.prepare_thread();
    }

    /// The event types, sources and registrations (`MPI_T_event_*`,
    /// `MPI_T_source_*`).
    pub fn events(&self) -> &Events {
        &self.inner.events
    }

    /// Starts describing an event type named `name` whose record is `R`
    /// (defaults: `USER_BASIC`, unbound, source 0, no category).
    ///
    /// ```
    /// let reg = pvar::Registry::new();
    /// let completed = reg
    ///     .event::<(u64, i32)>("request_completed")
    ///     .description("a request completed: bytes, peer rank")
    ///     .category("p2p")
    ///     .register()?;
    /// completed.raise(&(4096, 3)); // no tool listens: one load, one branch
    /// assert_eq!(reg.events().info(completed.index())?.elements.len(), 2);
    /// # Ok::<(), pvar::Error>(())
    /// ```
    pub fn event<R: EventRecord>(&self, name: &str) -> EventBuilder<'_, R> {
        EventBuilder::new(&self.inner.events, name)
    }

    /// A tool's registration for event type `index`
    /// (`MPI_T_event_handle_alloc`), bound to `object` for events bound to
    /// objects; freed when dropped.
    pub fn event_registration(
        &self,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<EventRegistration> {
        EventRegistration::new(self.inner.events.clone(), index, object)
    }

    /// Whether two values are the same registry.
    pub fn ptr_eq(&self, other: &Registry) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Starts describing a control variable of type `T` named `name`
    /// (defaults: value `0` / `false` / `""`, `USER_BASIC`, scope `LOCAL`,
    /// unbound, no category, no environment override).
    pub fn cvar<T: CvarType>(&self, name: &str) -> CvarBuilder<'_, T> {
        CvarBuilder::new(&self.inner.cvars, name)
    }

    /// A COUNTER (`MPI_UNSIGNED_LONG_LONG` unless [`PvarBuilder::datatype`]
    /// says otherwise).
    pub fn counter(&self, name: &str) -> PvarBuilder<'_, Counter> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// An AGGREGATE of `T` (`u32`, `u64` or `f64`).
    pub fn aggregate<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Aggregate<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A TIMER read in seconds (`MPI_DOUBLE`); choose an unsigned datatype
    /// with [`PvarBuilder::datatype`] to read nanoseconds.
    pub fn timer(&self, name: &str) -> PvarBuilder<'_, Timer> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A LEVEL of `T`.
    pub fn level<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Level<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A SIZE of `T`.
    pub fn size<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Size<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A PERCENTAGE (`MPI_DOUBLE` in [0, 1]).
    pub fn percentage(&self, name: &str) -> PvarBuilder<'_, Percentage> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A STATE (`MPI_INT`), usually with an enumeration.
    pub fn state(&self, name: &str) -> PvarBuilder<'_, State> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A HIGHWATERMARK of `T`.
    pub fn high_watermark<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, HighWatermark<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A LOWWATERMARK of `T`.
    pub fn low_watermark<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, LowWatermark<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A GENERIC variable of `T`.
    pub fn generic<T: Value>(&self, name: &str) -> PvarBuilder<'_, Generic<T>> {
        PvarBuilder::typed(&self.inner.pvars, name)
    }

    /// A variable of any class whose values the component computes in
    /// `callbacks` (the Open MPI design). Set the flags to match what the
    /// callbacks support: only the SUM classes can be writable or atomic
    /// (per handle); every other class is read-only.
    ///
    /// Values are in the datatype's units and are handed to tools
    /// unconverted: a TIMER's read callback returns seconds (`f64` bits) for
    /// `MPI_DOUBLE` and nanoseconds for the unsigned datatypes, not clock
    /// ticks; SUM classes (COUNTER, AGGREGATE, TIMER) must return a running
    /// total, from which handles take their start/stop differences. They
    /// are fitted to the class as the engine's own values are: a
    /// PERCENTAGE is clamped to [0, 1], a negative `MPI_DOUBLE` LEVEL, SIZE
    /// or watermark reads 0, and an `MPI_UNSIGNED` value past `u32::MAX`
    /// saturates for LEVEL, SIZE and the watermarks and wraps for the
    /// others (the tool guide, "Values at the edges of their range").
    ///
    /// ```
    /// use pvar::{Callbacks, Datatype, PvarClass, Registry};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// static POOL_BYTES: AtomicU64 = AtomicU64::new(4096);
    /// let reg = Registry::new();
    /// reg.callback_pvar(
    ///     "pool_bytes",
    ///     PvarClass::Size,
    ///     Datatype::UnsignedLongLong,
    ///     Callbacks::new(|_obj, _i| POOL_BYTES.load(Ordering::Relaxed)),
    /// )
    /// .register()
    /// .unwrap();
    /// ```
    pub fn callback_pvar(
        &self,
        name: &str,
        class: PvarClass,
        datatype: Datatype,
        callbacks: Callbacks,
    ) -> PvarBuilder<'_, CallbackVar> {
        PvarBuilder::new(&self.inner.pvars, name, class, datatype).with_callbacks(callbacks)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::hot::storage::Backing;
    use crate::vocabulary::callback::Notify;
    use crate::vocabulary::error::ErrorCode;

    fn subscriptions(reg: &Registry, index: usize) -> usize {
        match &reg.pvars().resolve(index, None).unwrap().backing {
            Backing::Watermark(w) => w.subscriptions(),
            _ => panic!("not a watermark"),
        }
    }

    #[test]
    fn handle_table_exhaustion_gives_the_watermark_subscription_back() {
        let reg = Registry::with_handle_capacity(1);
        let w = reg.high_watermark::<u64>("w").register().unwrap();
        let tool = reg.tool();
        let s = tool.session_create().unwrap();
        let h = tool.handle_alloc(s, w.index(), None).unwrap().0;
        assert_eq!(subscriptions(&reg, w.index()), 1);
        for _ in 0..3 {
            let e = tool.handle_alloc(s, w.index(), None).unwrap_err();
            assert_eq!(e.code(), ErrorCode::OutOfHandles);
            assert_eq!(
                subscriptions(&reg, w.index()),
                1,
                "a refused handle keeps no subscription"
            );
        }
        // The live handle still works, and its own subscription goes back.
        tool.start(s, h).unwrap();
        w.update(9);
        let mut out = [0u64];
        tool.read(s, h, 0, &mut out).unwrap();
        assert_eq!(out, [9]);
        tool.handle_free(s, h).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 0);
        tool.handle_alloc(s, w.index(), None).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 1, "slot reused");
        tool.session_free(s).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 0);
    }

    #[test]
    fn handle_table_exhaustion_tells_a_callback_variable_stop_and_free() {
        let reg = Registry::with_handle_capacity(1);
        let events = std::sync::Arc::new(Mutex::new(Vec::new()));
        let ev = events.clone();
        let v = reg
            .callback_pvar(
                "cb",
                PvarClass::Size,
                Datatype::UnsignedLongLong,
                Callbacks::new(|_, _| 1).with_notify(move |n, _| {
                    ev.lock().unwrap().push(n);
                    None
                }),
            )
            .register()
            .unwrap();
        let tool = reg.tool();
        let s = tool.session_create().unwrap();
        let _h = tool.handle_alloc(s, v.index(), None).unwrap();
        events.lock().unwrap().clear();
        let e = tool.handle_alloc(s, v.index(), None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutOfHandles);
        assert_eq!(
            *events.lock().unwrap(),
            [Notify::Bind, Notify::Start, Notify::Stop, Notify::Free],
            "the refused continuous handle is undone in full"
        );
    }
}
