//! The keyed API: [`Tool`], every call naming its session and handle by
//! key ([`SessionId`], [`HandleId`]: `Copy` values checked against their
//! slot's generation on every use), the shape of the C interface and of
//! signal handlers.

use super::handle::{HandleData, HandleInfo};
use super::session_handles::SessionHandles;
use crate::event::Event;
use crate::lockfree::slot_table::{Freed, Ref, SlotTable};
use crate::lockfree::striped::StripedCounter;
use crate::pvar::Pvars;
use crate::sync::Arc;
use crate::sync::unmodelled::OnceLock;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{BindKind, ObjectRef};

/// A performance-experiment session (`MPI_T_pvar_session`). A key: copy it
/// freely; a freed session's key is detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionId(pub(super) u64);

/// A performance-variable handle (`MPI_T_pvar_handle`), valid only with
/// the session that allocated it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandleId(pub(super) u64);

impl SessionId {
    /// The raw key (never 0), as the C interface passes it.
    pub fn to_raw(self) -> u64 {
        self.0
    }
    /// A session key from its raw value; validated when used.
    pub fn from_raw(raw: u64) -> Self {
        Self(raw)
    }
}

impl HandleId {
    /// The raw key (never 0, never 1 = `MPI_T_PVAR_ALL_HANDLES`).
    pub fn to_raw(self) -> u64 {
        self.0
    }
    /// A handle key from its raw value; validated when used.
    pub fn from_raw(raw: u64) -> Self {
        Self(raw)
    }
}

/// Counts a tool can observe about the tool side of a registry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolStats {
    /// Sessions currently allocated.
    pub sessions: usize,
    /// Handles currently allocated.
    pub handles: usize,
    /// Handle reads served since the registry was created.
    pub reads: u64,
}

/// The tool side of a registry, keyed (`MPI_T_pvar_session_*`,
/// `MPI_T_pvar_handle_*`, start / stop / read / write / reset / readreset),
/// from [`Registry::tool`](crate::Registry::tool). See the module
/// documentation; Rust tools usually prefer the typed [`Session`](super::Session).
///
/// ```
/// use pvar::Registry;
/// let reg = Registry::new();
/// let sent = reg.counter("sent").register()?;
/// let tool = reg.tool();
/// let s = tool.session_create()?;
/// let (h, count) = tool.handle_alloc(s, sent.index(), None)?;
/// tool.start(s, h)?;
/// sent.add(3);
/// let mut v = vec![0u64; count];
/// tool.read(s, h, 0, &mut v)?; // what a signal handler does, with a stack buffer
/// assert_eq!(v, [3]);
/// tool.session_free(s)?; // frees its handles too
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct Tool {
    pvars: Arc<Pvars>,
    sessions: SlotTable<SessionHandles>,
    handles: SlotTable<HandleData>,
    /// Reads served: striped, so that threads reading at once (sampling
    /// signal handlers) do not share one counter's cache line.
    pub(super) reads: StripedCounter,
    /// The engine's own events this side raises, once
    /// `process::observe` has declared them.
    engine_events: OnceLock<EngineEvents>,
}

/// The engine's own events raised by the tool side (see
/// `process::observe`).
pub(crate) struct EngineEvents {
    /// A pvar handle was allocated: (pvar index, element count).
    pub(crate) handle_alloc: Event<(i32, i32)>,
    /// A pvar handle was freed: pvar index.
    pub(crate) handle_free: Event<i32>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Drop for Tool {
    fn drop(&mut self) {
        // Release the handles whose last reader left them to us.
        self.reclaim();
    }
}

impl Tool {
    /// Makes this tool side raise the engine's own handle events (once).
    pub(crate) fn set_engine_events(&self, e: EngineEvents) {
        let _ = self.engine_events.set(e);
    }

    /// A tool side whose handle table holds at most `capacity` handles
    /// (tests of `OUT_OF_HANDLES`).
    pub(crate) fn with_handle_capacity(pvars: Arc<Pvars>, capacity: usize) -> Self {
        Self {
            pvars,
            sessions: SlotTable::new(),
            handles: SlotTable::with_capacity(capacity),
            reads: StripedCounter::new(),
            engine_events: OnceLock::new(),
        }
    }

    /// Counts of sessions and handles in use and reads served.
    ///
    /// Async-signal-safe: yes (atomic loads).
    pub fn stats(&self) -> ToolStats {
        ToolStats {
            sessions: self.sessions.in_use(),
            handles: self.handles.in_use(),
            reads: self.reads.total(),
        }
    }

    /// Creates a session (`MPI_T_pvar_session_create`).
    ///
    /// Async-signal-safe: no (may allocate a slot; cleans up what earlier
    /// frees left to a reader). Create sessions before installing a signal
    /// handler.
    pub fn session_create(&self) -> Result<SessionId> {
        self.create_session(false)
    }

    pub(crate) fn create_session(&self, owned: bool) -> Result<SessionId> {
        self.reclaim();
        self.sessions
            .try_alloc(SessionHandles::new(owned))
            .map(SessionId)
            .map_err(|_| Error::OutOfSessions)
    }

    /// Frees a session and every handle allocated in it
    /// (`MPI_T_pvar_session_free`). `INVALID_SESSION` if not live, or if it
    /// belongs to a typed [`Session`](super::Session) (freed by dropping it).
    ///
    /// Never waits for another thread: the session's key and its handles'
    /// keys are dead when this returns (a handler running meanwhile gets
    /// `INVALID_SESSION` / `INVALID_HANDLE`, never a dangling handle), and
    /// an operation still running on one of them (on another thread, or
    /// in a signal handler this call interrupted) finishes on the data it
    /// holds. Releasing a handle (a callback variable's Stop and Free
    /// notifications, a watermark's subscription) is done here if nobody
    /// is inside it, else — the last one out may be a signal handler,
    /// which must not release anything — at the next allocation or free
    /// on this tool side after the last one left, or when the registry is
    /// dropped (`docs/tool-guide.md`, "Frees never wait").
    ///
    /// Async-signal-safe: no (releases handles: notifications, watermark
    /// subscriptions, memory).
    pub fn session_free(&self, session: SessionId) -> Result<()> {
        if self.sessions.get(session.0).is_some_and(|s| s.owned) {
            return Err(Error::InvalidSession);
        }
        self.free_session(session)
    }

    pub(crate) fn free_session(&self, session: SessionId) -> Result<()> {
        // No new handle operation can validate the session after this.
        // Allocations in progress hold a reader reference on the session:
        // the list is complete once the last reference is gone, so its
        // handles are freed by whoever takes the list out of the slot —
        // here if nobody is inside, else `reclaim` after the last leaves.
        match self.sessions.free(session.0, |_| ()) {
            None => return Err(Error::InvalidSession),
            Some(Freed::Now(handles)) => self.free_listed(&handles),
            Some(Freed::Later) => {}
        }
        self.reclaim();
        Ok(())
    }

    /// Frees the handles of a freed session's list.
    fn free_listed(&self, handles: &SessionHandles) {
        for key in handles.keys() {
            if let Some(Freed::Now(h)) = self.handles.free(key, |_| ()) {
                h.release();
            }
        }
    }

    /// Finishes what frees left to a reader that turned out to be the
    /// last inside (see `lockfree::slot_table`): a freed session's handles
    /// are freed, a freed handle is released. Called on this side's
    /// allocation and free paths (normal code) and when it is dropped;
    /// one load per table when nothing waits.
    fn reclaim(&self) {
        while self.sessions.has_retired() || self.handles.has_retired() {
            if let Some(handles) = self.sessions.reclaim() {
                self.free_listed(&handles);
            }
            if let Some(h) = self.handles.reclaim() {
                h.release();
            }
        }
    }

    fn check_session(&self, session: SessionId) -> Result<()> {
        // A liveness check only: no reader reference (two read-modify-writes
        // on the session's line) is needed, since every handle operation
        // then takes the handle's own reference and checks its session.
        if self.sessions.is_live(session.0) {
            Ok(())
        } else {
            Err(Error::InvalidSession)
        }
    }

    /// Allocates a handle for variable `index` in `session`
    /// (`MPI_T_pvar_handle_alloc`), bound to `object` if the variable is
    /// bound (ignored otherwise), and returns it with its element count.
    ///
    /// Async-signal-safe: no (allocates the handle state and, for
    /// watermarks, a subscription; cleans up what earlier frees left to a
    /// reader). Allocate handles before installing a signal handler and
    /// pass their keys to it through statics.
    pub fn handle_alloc(
        &self,
        session: SessionId,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<(HandleId, usize)> {
        self.alloc_handle(session, index, object, false)
            .map(|(h, count)| (HandleId(h), count))
    }

    pub(crate) fn alloc_handle(
        &self,
        session: SessionId,
        index: usize,
        object: Option<ObjectRef>,
        owned: bool,
    ) -> Result<(u64, usize)> {
        self.reclaim();
        self.check_session(session)?;
        let info = self.pvars.info(index)?;
        let object = if info.bind == BindKind::NoObject {
            None
        } else {
            object
        };
        let storage = self.pvars.resolve(index, object)?;
        let count = storage.count;
        let mut data = HandleData::new(session.0, index, storage, info, owned);
        // From here on every failure releases the handle (outside the
        // session reference: a callback variable's notify function runs):
        // the watermark subscription taken by `HandleData::new` goes back,
        // and a callback variable hears Stop (continuous) and Free after
        // its Bind / Start.
        let allocated = match self.sessions.get(session.0) {
            // Holding a reader reference on the session keeps
            // `session_free` from taking its handle list until the new key
            // is in it.
            Some(handles) => {
                let entry = handles.reserve();
                data.session_entry = entry;
                match self.handles.try_alloc(data) {
                    Ok(key) => {
                        handles.fill(entry, key);
                        Ok(key)
                    }
                    Err(data) => {
                        handles.clear(entry);
                        Err((Error::OutOfHandles, data))
                    }
                }
            }
            // Freed since the check above.
            None => Err((Error::InvalidSession, data)),
        };
        // If the session was freed while we held our reference, ours was
        // the last: its list (now with our handle) waits for this.
        self.reclaim();
        match allocated {
            Ok(key) => {
                if let Some(e) = self.engine_events.get() {
                    e.handle_alloc.raise(&(
                        index.min(i32::MAX as usize) as i32,
                        count.min(i32::MAX as usize) as i32,
                    ));
                }
                Ok((key, count))
            }
            Err((e, data)) => {
                data.release();
                Err(e)
            }
        }
    }

    /// Frees a handle (`MPI_T_pvar_handle_free`). `INVALID_HANDLE` if it
    /// is not a live handle of `session`, or if it belongs to a typed
    /// [`Handle`](super::Handle) (freed by dropping it).
    ///
    /// Never waits for another thread: an operation still running on the
    /// handle finishes on the data it holds, and the handle is released
    /// (see [`session_free`](Self::session_free)) once the last one left.
    ///
    /// Async-signal-safe: no (releases the handle: notifications, a
    /// watermark subscription, an `Arc`).
    pub fn handle_free(&self, session: SessionId, handle: HandleId) -> Result<()> {
        let owned = self.handle(session, handle)?.owned;
        if owned {
            return Err(Error::InvalidHandle);
        }
        self.free_handle(session, handle.0)
    }

    pub(crate) fn free_handle(&self, session: SessionId, key: u64) -> Result<()> {
        let mut what = (0, 0);
        let freed = self
            .handles
            .free(key, |h| what = (h.index, h.session_entry))
            .ok_or(Error::InvalidHandle)?;
        let (index, session_entry) = what;
        if let Some(e) = self.engine_events.get() {
            e.handle_free.raise(&(index.min(i32::MAX as usize) as i32));
        }
        // A session being freed meanwhile drops its whole list instead.
        if let Some(handles) = self.sessions.get(session.0) {
            handles.clear(session_entry);
        }
        if let Freed::Now(h) = freed {
            h.release();
        }
        self.reclaim();
        Ok(())
    }

    /// A reader reference to the live handle `handle` of `session`.
    /// Async-signal-safe.
    #[inline]
    pub(crate) fn handle(
        &self,
        session: SessionId,
        handle: HandleId,
    ) -> Result<Ref<'_, HandleData>> {
        self.check_session(session)?;
        let h = self.handles.get(handle.0).ok_or(Error::InvalidHandle)?;
        if h.session != session.0 {
            return Err(Error::InvalidHandle);
        }
        Ok(h)
    }

    /// The slot of a handle by its raw key, whichever session holds it
    /// (the typed API, which knows its session, takes its reference here).
    pub(super) fn handle_slot(&self, key: u64) -> Option<Ref<'_, HandleData>> {
        self.handles.get(key)
    }

    /// What a handle is: its variable's index, class and datatype, and its
    /// element count.
    ///
    /// Async-signal-safe: yes.
    pub fn handle_info(&self, session: SessionId, handle: HandleId) -> Result<HandleInfo> {
        self.handle(session, handle).map(|h| h.info())
    }

    /// Whether a handle is currently started.
    ///
    /// Async-signal-safe: yes.
    pub fn is_started(&self, session: SessionId, handle: HandleId) -> Result<bool> {
        self.handle(session, handle).map(|h| h.is_started())
    }

    /// Starts a handle (`MPI_T_pvar_start`); `PVAR_NO_STARTSTOP` for
    /// continuous variables. Starting a started handle does nothing.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's notify function must be too). A HIGH/LOWWATERMARK handle
    /// also makes one `membarrier` system call (the tool side of the
    /// asymmetric fence, `docs/design.md`): no lock, no allocation,
    /// 0.1–3 µs.
    pub fn start(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.handle(session, handle)?.start()
    }

    /// Stops a handle (`MPI_T_pvar_stop`); stopping a stopped handle does
    /// nothing.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's notify function must be too).
    pub fn stop(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.handle(session, handle)?.stop()
    }

    /// Reads elements `first..first + out.len()` of a handle
    /// (`MPI_T_pvar_read` reads `0..count`): one `u64` per element, holding
    /// the value in the variable's datatype (unsigned as is,
    /// `MPI_INT`/`MPI_COUNT` two's complement, `MPI_DOUBLE` as
    /// `f64::to_bits`). A caller with a fixed buffer (the C interface, a
    /// signal handler) reads a large handle in pieces. `MPI_T_ERR_INVALID`
    /// if the range goes past the handle's count.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's read function must be too). TIMER ticks are converted to
    /// seconds or nanoseconds with the clock calibrated at registry
    /// creation: no allocation.
    pub fn read(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        out: &mut [u64],
    ) -> Result<()> {
        self.handle(session, handle)?.read(first, out, &self.reads)
    }

    /// Writes elements `first..first + values.len()` of a handle
    /// (`MPI_T_pvar_write`): the value this handle reads from now on;
    /// other sessions are unaffected. `PVAR_NO_WRITE` for read-only
    /// variables.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    /// A HIGH/LOWWATERMARK handle also makes one `membarrier` system call
    /// (the tool side of the asymmetric fence, `docs/design.md`): no lock,
    /// no allocation, 0.1–3 µs.
    pub fn write(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        values: &[u64],
    ) -> Result<()> {
        self.handle(session, handle)?.write(first, values)
    }

    /// Resets a handle to its starting value (`MPI_T_pvar_reset`):
    /// `PVAR_NO_WRITE` for read-only variables.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    /// A HIGH/LOWWATERMARK handle also makes one `membarrier` system call
    /// (the tool side of the asymmetric fence, `docs/design.md`): no lock,
    /// no allocation, 0.1–3 µs.
    pub fn reset(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.handle(session, handle)?.reset()
    }

    /// Reads and resets elements `first..first + out.len()` in one step
    /// (`MPI_T_pvar_readreset` does `0..count`): `PVAR_NO_ATOMIC` unless
    /// the variable is atomic. Per element, the value returned and the
    /// reset come from the same merged read, so no update is lost or
    /// counted twice.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle: the
    /// value and the reset are one 128-bit CAS per element, so a handler
    /// that interrupts another operation on the handle never waits for it.
    /// A HIGH/LOWWATERMARK handle also makes one `membarrier` system call
    /// (the tool side of the asymmetric fence, `docs/design.md`): no lock,
    /// no allocation, 0.1–3 µs.
    pub fn readreset(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        out: &mut [u64],
    ) -> Result<()> {
        self.handle(session, handle)?
            .readreset(first, out, &self.reads)
    }

    /// [`HandleData::read`] counted in this tool side's statistics: for
    /// callers that hold a handle already (the C interface).
    #[cfg(feature = "ffi")]
    pub(crate) fn read_handle(&self, h: &HandleData, first: usize, out: &mut [u64]) -> Result<()> {
        h.read(first, out, &self.reads)
    }

    /// [`HandleData::readreset`] counted in this tool side's statistics.
    #[cfg(feature = "ffi")]
    pub(crate) fn readreset_handle(
        &self,
        h: &HandleData,
        first: usize,
        out: &mut [u64],
    ) -> Result<()> {
        h.readreset(first, out, &self.reads)
    }

    /// Applies `f` to every handle of `session`, collecting the first error.
    fn for_all(
        &self,
        session: SessionId,
        mut f: impl FnMut(&HandleData) -> Result<()>,
    ) -> Result<()> {
        let handles = self.sessions.get(session.0).ok_or(Error::InvalidSession)?;
        let mut result = Ok(());
        for key in handles.keys() {
            // A key freed since it was loaded fails the generation check.
            if let Some(h) = self.handles.get(key)
                && h.session == session.0
            {
                let r = f(&h);
                if result.is_ok() {
                    result = r;
                }
            }
        }
        result
    }

    /// Starts every handle of the session (`MPI_T_pvar_start` with
    /// `MPI_T_PVAR_ALL_HANDLES`): continuous and already started handles are
    /// ignored; `PVAR_NO_STARTSTOP` if any other could not be started.
    ///
    /// Async-signal-safe: yes, on an allocated session (walks the session's
    /// own handle list with reader references; handles being freed are
    /// skipped). Cost: O(handles ever live at once in this session).
    pub fn start_all(&self, session: SessionId) -> Result<()> {
        self.start_stop_all(session, true)
    }

    /// Stops every handle of the session (`ALL_HANDLES`): continuous and
    /// already stopped handles are ignored.
    ///
    /// Async-signal-safe: yes, on an allocated session.
    pub fn stop_all(&self, session: SessionId) -> Result<()> {
        self.start_stop_all(session, false)
    }

    /// Starts (`start`) or stops every handle of the session that is neither
    /// continuous nor already in that state; `PVAR_NO_STARTSTOP` if any
    /// could not be.
    fn start_stop_all(&self, session: SessionId, start: bool) -> Result<()> {
        self.for_all(session, |h| h.start_or_stop_for_all(start))
    }

    /// Resets every handle of the session (`ALL_HANDLES`): read-only
    /// variables are ignored; `PVAR_NO_WRITE` if any other could not be
    /// reset.
    ///
    /// Async-signal-safe: yes, on an allocated session.
    pub fn reset_all(&self, session: SessionId) -> Result<()> {
        self.for_all(session, HandleData::reset_for_all)
    }
}
