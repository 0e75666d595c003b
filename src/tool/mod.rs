//! The tool side: performance-experiment sessions and handles with the
//! MPI_T semantics (MPI 4.1 §15.3.7).
//!
//! Sessions and handles are generation-checked keys ([`SessionId`],
//! [`HandleId`]) into lock-free slot tables: a freed, stale, foreign or
//! made-up key is detected and gets `MPI_T_ERR_INVALID_SESSION` /
//! `MPI_T_ERR_INVALID_HANDLE`, never undefined behaviour. The C interface
//! passes the same keys as its opaque handle values.
//!
//! Async-signal-safe (on sessions and handles that exist): `start`, `stop`,
//! `read`, `write`, `reset`, `readreset`, and `start_all` / `stop_all` /
//! `reset_all`, plus the handle queries and [`Registry::tool_stats`]. They
//! take no lock, allocate nothing, read no thread-local and clone no `Arc`:
//! a reader reference on the session and handle slots is one CAS (see
//! `slots.rs`), a SUM handle's state is one 128-bit word changed by CAS (see
//! `handle.rs`), so a handler that interrupts any of these, or an
//! allocation or free, on its own thread never waits for it. Before the
//! first signal: create the registry (`pvar::global()`), allocate the
//! session and handles. Allocation and freeing of sessions and handles are
//! not async-signal-safe. Each method's documentation ends with its
//! "Async-signal-safe:" line; the contract is `docs/signal-safety.md`.
//!
//! [`Session`] wraps the keyed API for Rust tools: it frees the session
//! (and its handles) when dropped.

mod handle;
mod session;
mod session_handles;
mod slots;

use crate::error::{Error, ErrorCode, Result};
use crate::kinds::{Datatype, ObjectRef};
use crate::registry::Registry;
use crate::sync::striped::StripedCounter;
use handle::HandleData;
pub use session::Session;
use slots::SlotTable;
pub(crate) use slots::next_generation;

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

/// A performance-experiment session (`MPI_T_pvar_session`). A key: copy it
/// freely; a freed session's key is detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionId(u64);

/// A performance-variable handle (`MPI_T_pvar_handle`), valid only with
/// the session that allocated it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandleId(u64);

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

use session_handles::SessionHandles;

pub(crate) struct ToolState {
    sessions: SlotTable<SessionHandles>,
    handles: SlotTable<HandleData>,
    /// Reads served: striped, so that threads reading at once (sampling
    /// signal handlers) do not share one counter's cache line.
    reads: StripedCounter,
}

impl ToolState {
    pub(crate) fn new() -> Self {
        Self {
            sessions: SlotTable::new(ErrorCode::OutOfSessions),
            handles: SlotTable::new(ErrorCode::OutOfHandles),
            reads: StripedCounter::new(),
        }
    }

    /// A tool state whose handle table holds at most `capacity` handles.
    #[cfg(test)]
    pub(crate) fn with_handle_capacity(capacity: usize) -> Self {
        Self {
            handles: SlotTable::with_capacity(ErrorCode::OutOfHandles, capacity),
            ..Self::new()
        }
    }

    pub(crate) fn stats(&self) -> ToolStats {
        ToolStats {
            sessions: self.sessions.in_use(),
            handles: self.handles.in_use(),
            reads: self.reads.total(),
        }
    }
}

/// Encodes values (as produced by a read: `u64` bits of the datatype) into
/// the C representation of `datatype`, element after element.
///
/// Async-signal-safe: yes (writes only `out`).
pub fn encode_values(datatype: Datatype, values: &[u64], out: &mut [u8]) -> Result<()> {
    let size = datatype.size();
    if out.len() < values.len() * size {
        return Err(Error::Invalid("buffer too small for the handle's elements"));
    }
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(size)) {
        match size {
            4 => chunk.copy_from_slice(&(*v as u32).to_ne_bytes()),
            8 => chunk.copy_from_slice(&v.to_ne_bytes()),
            _ => chunk[0] = *v as u8,
        }
    }
    Ok(())
}

/// Decodes C-representation values of `datatype` into `u64` bits (the
/// inverse of [`encode_values`]; `MPI_INT` is sign-extended).
///
/// Async-signal-safe: yes (writes only `out`).
pub fn decode_values(datatype: Datatype, bytes: &[u8], out: &mut [u64]) -> Result<()> {
    let size = datatype.size();
    if bytes.len() < out.len() * size {
        return Err(Error::Invalid("buffer too small for the handle's elements"));
    }
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(size)) {
        *o = match (size, datatype) {
            (4, Datatype::Int) => {
                i32::from_ne_bytes(chunk.try_into().expect("4 bytes")) as i64 as u64
            }
            (4, _) => u32::from_ne_bytes(chunk.try_into().expect("4 bytes")) as u64,
            (8, _) => u64::from_ne_bytes(chunk.try_into().expect("8 bytes")),
            _ => chunk[0] as u64,
        };
    }
    Ok(())
}

/// `MPI_T_ERR_INVALID` unless `first..first + len` lies within the handle.
fn check_range(h: &HandleData, first: usize, len: usize) -> Result<()> {
    match first.checked_add(len) {
        Some(end) if end <= h.count => Ok(()),
        _ => Err(Error::Invalid("element range past the handle's count")),
    }
}

/// The tool-side API of a registry (`MPI_T_pvar_*`).
impl Registry {
    fn tool(&self) -> &ToolState {
        &self.inner.tool
    }

    /// Creates a session (`MPI_T_pvar_session_create`).
    ///
    /// Async-signal-safe: no (may allocate a slot; takes the free-list
    /// mutex). Create sessions before installing a signal handler.
    pub fn session_create(&self) -> Result<SessionId> {
        self.tool()
            .sessions
            .alloc(SessionHandles::new())
            .map(SessionId)
    }

    /// Frees a session and every handle allocated in it
    /// (`MPI_T_pvar_session_free`). `INVALID_SESSION` if not live.
    ///
    /// Async-signal-safe: no (allocates, takes the free-list mutex, waits
    /// for other threads' operations on the session's handles to finish).
    /// A handler running meanwhile gets `INVALID_SESSION` /
    /// `INVALID_HANDLE`, never a dangling handle.
    pub fn session_free(&self, session: SessionId) -> Result<()> {
        let tool = self.tool();
        // No new handle operation can validate the session after this, and
        // `free` waits for the allocations in progress (they hold a reader
        // reference on the session), so the list is complete.
        let handles = tool
            .sessions
            .free(session.0)
            .ok_or(Error::invalid_session())?;
        for key in handles.keys() {
            if let Some(h) = tool.handles.free(key) {
                h.release();
            }
        }
        Ok(())
    }

    fn check_session(&self, session: SessionId) -> Result<()> {
        // A liveness check only: no reader reference (two read-modify-writes
        // on the session's line) is needed, since every handle operation
        // then takes the handle's own reference and checks its session.
        if self.tool().sessions.is_live(session.0) {
            Ok(())
        } else {
            Err(Error::invalid_session())
        }
    }

    /// Allocates a handle for variable `index` in `session`
    /// (`MPI_T_pvar_handle_alloc`), bound to `object` if the variable is
    /// bound (ignored otherwise), and returns it with its element count.
    ///
    /// Async-signal-safe: no (allocates the handle state and, for
    /// watermarks, a subscription). Allocate handles before installing a
    /// signal handler and pass their keys to it through statics.
    pub fn handle_alloc(
        &self,
        session: SessionId,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<(HandleId, usize)> {
        self.check_session(session)?;
        let var = self.variable(index)?;
        let object = if var.info.bind == crate::kinds::BindKind::NoObject {
            None
        } else {
            object
        };
        let storage = var.resolve(&self.inner.hot, object)?;
        let count = storage.count;
        let mut data = HandleData::new(
            session.0,
            index,
            storage,
            var.info.continuous,
            var.info.readonly,
            var.info.atomic,
        );
        // From here on every failure releases the handle (outside the
        // session reference: a callback variable's notify function runs):
        // the watermark subscription taken by `HandleData::new` goes back,
        // and a callback variable hears Stop (continuous) and Free after
        // its Bind / Start.
        let tool = self.tool();
        let allocated = match tool.sessions.get(session.0) {
            // Holding a reader reference on the session keeps
            // `session_free` from taking its handle list until the new key
            // is in it.
            Some(handles) => {
                let entry = handles.reserve();
                data.session_entry = entry;
                match tool.handles.try_alloc(data) {
                    Ok(key) => {
                        handles.fill(entry, key);
                        Ok(key)
                    }
                    Err((e, data)) => {
                        handles.clear(entry);
                        Err((e, data))
                    }
                }
            }
            // Freed since the check above.
            None => Err((Error::invalid_session(), data)),
        };
        match allocated {
            Ok(key) => Ok((HandleId(key), count)),
            Err((e, data)) => {
                data.release();
                Err(e)
            }
        }
    }

    /// Frees a handle (`MPI_T_pvar_handle_free`).
    ///
    /// Async-signal-safe: no (takes the free-list mutex, waits for other
    /// threads' operations on the handle to finish, drops an `Arc`).
    pub fn handle_free(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.check_session(session)?;
        let tool = self.tool();
        {
            let h = tool.handles.get(handle.0).ok_or(Error::invalid_handle())?;
            if h.session != session.0 {
                return Err(Error::invalid_handle());
            }
        }
        let h = tool.handles.free(handle.0).ok_or(Error::invalid_handle())?;
        // A session being freed meanwhile drops its whole list instead.
        if let Some(handles) = tool.sessions.get(session.0) {
            handles.clear(h.session_entry);
        }
        h.release();
        Ok(())
    }

    /// Runs `f` on the live handle `handle` of `session`. Async-signal-safe.
    #[inline]
    fn with_handle<R>(
        &self,
        session: SessionId,
        handle: HandleId,
        f: impl FnOnce(&HandleData) -> Result<R>,
    ) -> Result<R> {
        self.check_session(session)?;
        let h = self
            .tool()
            .handles
            .get(handle.0)
            .ok_or(Error::invalid_handle())?;
        if h.session != session.0 {
            return Err(Error::invalid_handle());
        }
        f(&h)
    }

    fn active(&self, index: usize) -> bool {
        self.inner.pvars.get(index).is_some_and(|v| v.is_active())
    }

    /// Element count of a handle.
    ///
    /// Async-signal-safe: yes.
    pub fn handle_count(&self, session: SessionId, handle: HandleId) -> Result<usize> {
        self.with_handle(session, handle, |h| Ok(h.count))
    }

    /// The variable index and datatype behind a handle.
    ///
    /// Async-signal-safe: yes.
    pub fn handle_variable(
        &self,
        session: SessionId,
        handle: HandleId,
    ) -> Result<(usize, Datatype)> {
        self.with_handle(session, handle, |h| Ok((h.index, h.storage.datatype)))
    }

    /// Starts a handle (`MPI_T_pvar_start`); `PVAR_NO_STARTSTOP` for
    /// continuous variables. Starting a started handle does nothing.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's notify function must be too).
    pub fn start(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if h.continuous {
                return Err(ErrorCode::PvarNoStartstop.into());
            }
            h.check_live(self.active(h.index))?;
            h.start();
            Ok(())
        })
    }

    /// Stops a handle (`MPI_T_pvar_stop`).
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's notify function must be too).
    pub fn stop(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if h.continuous {
                return Err(ErrorCode::PvarNoStartstop.into());
            }
            h.check_live(self.active(h.index))?;
            h.stop();
            Ok(())
        })
    }

    /// Reads a handle into `out` (`MPI_T_pvar_read`): one `u64` per
    /// element, holding the value in the variable's datatype (unsigned as
    /// is, `MPI_INT`/`MPI_COUNT` two's complement, `MPI_DOUBLE` as
    /// `f64::to_bits`). `out` must hold the handle's count.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (a callback
    /// variable's read function must be too). TIMER ticks are converted to
    /// seconds or nanoseconds with the clock calibrated at registry
    /// creation: no allocation.
    pub fn read(&self, session: SessionId, handle: HandleId, out: &mut [u64]) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if out.len() < h.count {
                return Err(Error::Invalid(
                    "buffer shorter than the handle's element count",
                ));
            }
            h.check_live(self.active(h.index))?;
            h.read(0, &mut out[..h.count]);
            self.tool().reads.inc();
            Ok(())
        })
    }

    /// Reads elements `first..first + out.len()` of a handle: [`Registry::read`]
    /// for part of an array, so that a caller with a fixed buffer (the C
    /// interface, a signal handler) can read any handle in pieces.
    /// `MPI_T_ERR_INVALID` if the range goes past the handle's count.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn read_range(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        out: &mut [u64],
    ) -> Result<()> {
        self.with_handle(session, handle, |h| {
            check_range(h, first, out.len())?;
            h.check_live(self.active(h.index))?;
            h.read(first, out);
            if first == 0 {
                self.tool().reads.inc();
            }
            Ok(())
        })
    }

    /// Reads element 0 of an integer-typed handle.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle (uses a
    /// stack buffer).
    pub fn read_u64(&self, session: SessionId, handle: HandleId) -> Result<u64> {
        let mut v = [0u64; 1];
        self.read_first(session, handle, &mut v)?;
        Ok(v[0])
    }

    /// Reads element 0 of an `MPI_DOUBLE` handle (e.g. a TIMER in seconds).
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn read_f64(&self, session: SessionId, handle: HandleId) -> Result<f64> {
        let mut v = [0u64; 1];
        self.read_first(session, handle, &mut v)?;
        Ok(f64::from_bits(v[0]))
    }

    fn read_first(&self, session: SessionId, handle: HandleId, v: &mut [u64; 1]) -> Result<()> {
        self.with_handle(session, handle, |h| {
            h.check_live(self.active(h.index))?;
            h.read(0, v);
            self.tool().reads.inc();
            Ok(())
        })
    }

    /// Writes a handle (`MPI_T_pvar_write`): `PVAR_NO_WRITE` for read-only
    /// variables. For SUM classes this sets the value this handle reads
    /// (other sessions are unaffected); for watermarks the mark.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn write(&self, session: SessionId, handle: HandleId, values: &[u64]) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if h.readonly {
                return Err(ErrorCode::PvarNoWrite.into());
            }
            if values.len() < h.count {
                return Err(Error::Invalid(
                    "buffer shorter than the handle's element count",
                ));
            }
            h.check_live(self.active(h.index))?;
            h.write(0, &values[..h.count])
        })
    }

    /// Writes elements `first..first + values.len()`: [`Registry::write`]
    /// for part of an array (see [`Registry::read_range`]).
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn write_range(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        values: &[u64],
    ) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if h.readonly {
                return Err(ErrorCode::PvarNoWrite.into());
            }
            check_range(h, first, values.len())?;
            h.check_live(self.active(h.index))?;
            h.write(first, values)
        })
    }

    /// Resets a handle to its starting value (`MPI_T_pvar_reset`):
    /// `PVAR_NO_WRITE` for read-only variables.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn reset(&self, session: SessionId, handle: HandleId) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if h.readonly {
                return Err(ErrorCode::PvarNoWrite.into());
            }
            h.check_live(self.active(h.index))?;
            h.reset(0, h.count, None)
        })
    }

    /// Reads and resets in one step (`MPI_T_pvar_readreset`):
    /// `PVAR_NO_ATOMIC` unless the variable is atomic. Per element, the value
    /// returned and the reset come from the same merged read, so no update
    /// is lost or counted twice.
    ///
    /// Async-signal-safe: yes, on an allocated session and handle: the
    /// value and the reset are one 128-bit CAS per element, so a handler
    /// that interrupts another operation on the handle never waits for it.
    pub fn readreset(&self, session: SessionId, handle: HandleId, out: &mut [u64]) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if !h.atomic {
                return Err(ErrorCode::PvarNoAtomic.into());
            }
            if h.readonly {
                return Err(ErrorCode::PvarNoWrite.into());
            }
            if out.len() < h.count {
                return Err(Error::Invalid(
                    "buffer shorter than the handle's element count",
                ));
            }
            h.check_live(self.active(h.index))?;
            h.reset(0, h.count, Some(&mut out[..h.count]))?;
            self.tool().reads.inc();
            Ok(())
        })
    }

    /// Read-resets elements `first..first + out.len()`:
    /// [`Registry::readreset`] for part of an array (atomic per element, as
    /// the whole-handle form is).
    ///
    /// Async-signal-safe: yes, on an allocated session and handle.
    pub fn readreset_range(
        &self,
        session: SessionId,
        handle: HandleId,
        first: usize,
        out: &mut [u64],
    ) -> Result<()> {
        self.with_handle(session, handle, |h| {
            if !h.atomic {
                return Err(ErrorCode::PvarNoAtomic.into());
            }
            if h.readonly {
                return Err(ErrorCode::PvarNoWrite.into());
            }
            check_range(h, first, out.len())?;
            h.check_live(self.active(h.index))?;
            let len = out.len();
            h.reset(first, len, Some(out))?;
            if first == 0 {
                self.tool().reads.inc();
            }
            Ok(())
        })
    }

    /// Applies `f` to every handle of `session`, collecting the first error.
    fn for_all(
        &self,
        session: SessionId,
        mut f: impl FnMut(&HandleData) -> Result<()>,
    ) -> Result<()> {
        let tool = self.tool();
        let handles = tool
            .sessions
            .get(session.0)
            .ok_or(Error::invalid_session())?;
        let mut result = Ok(());
        for key in handles.keys() {
            // A key freed since it was loaded fails the generation check.
            if let Some(h) = tool.handles.get(key)
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
        self.for_all(session, |h| {
            if h.continuous || h.is_started() == start {
                return Ok(());
            }
            h.check_live(self.active(h.index))
                .map(|_| if start { h.start() } else { h.stop() })
                .map_err(|_| ErrorCode::PvarNoStartstop.into())
        })
    }

    /// Resets every handle of the session (`ALL_HANDLES`): read-only
    /// variables are ignored; `PVAR_NO_WRITE` if any other could not be
    /// reset.
    ///
    /// Async-signal-safe: yes, on an allocated session.
    pub fn reset_all(&self, session: SessionId) -> Result<()> {
        self.for_all(session, |h| {
            if h.readonly {
                return Ok(());
            }
            h.check_live(self.active(h.index))
                .and_then(|_| h.reset(0, h.count, None))
                .map_err(|_| ErrorCode::PvarNoWrite.into())
        })
    }

    /// Counts of sessions and handles in use and reads served.
    ///
    /// Async-signal-safe: yes (three atomic loads).
    pub fn tool_stats(&self) -> ToolStats {
        self.tool().stats()
    }

    /// A Rust session over this registry that frees itself when dropped.
    ///
    /// Async-signal-safe: no, and neither is dropping the [`Session`].
    pub fn session(&self) -> Result<Session> {
        Session::new(self.clone())
    }

    /// Whether a handle is currently started.
    ///
    /// Async-signal-safe: yes.
    pub fn is_started(&self, session: SessionId, handle: HandleId) -> Result<bool> {
        self.with_handle(session, handle, |h| Ok(h.is_started()))
    }

    /// The class of the variable behind a handle.
    ///
    /// Async-signal-safe: yes.
    pub fn handle_class(&self, session: SessionId, handle: HandleId) -> Result<crate::PvarClass> {
        self.with_handle(session, handle, |h| Ok(h.class()))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::storage::Kind;
    use crate::{Callbacks, Notify, PvarClass};

    fn subscriptions(reg: &Registry, index: usize) -> usize {
        match &reg.variable(index).unwrap().body {
            crate::registry::Body::Unbound(s) => match &s.kind {
                Kind::Watermark(w) => w.subscriptions(),
                _ => panic!("not a watermark"),
            },
            _ => panic!("bound"),
        }
    }

    #[test]
    fn handle_table_exhaustion_gives_the_watermark_subscription_back() {
        let reg = Registry::with_tool_state(ToolState::with_handle_capacity(1));
        let w = reg.high_watermark::<u64>("w").register().unwrap();
        let s = reg.session_create().unwrap();
        let h = reg.handle_alloc(s, w.index(), None).unwrap().0;
        assert_eq!(subscriptions(&reg, w.index()), 1);
        for _ in 0..3 {
            let e = reg.handle_alloc(s, w.index(), None).unwrap_err();
            assert_eq!(e.code(), ErrorCode::OutOfHandles);
            assert_eq!(
                subscriptions(&reg, w.index()),
                1,
                "a refused handle keeps no subscription"
            );
        }
        // The live handle still works, and its own subscription goes back.
        reg.start(s, h).unwrap();
        w.update(9);
        let mut out = [0u64];
        reg.read(s, h, &mut out).unwrap();
        assert_eq!(out, [9]);
        reg.handle_free(s, h).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 0);
        reg.handle_alloc(s, w.index(), None).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 1, "slot reused");
        reg.session_free(s).unwrap();
        assert_eq!(subscriptions(&reg, w.index()), 0);
    }

    #[test]
    fn handle_table_exhaustion_tells_a_callback_variable_stop_and_free() {
        let reg = Registry::with_tool_state(ToolState::with_handle_capacity(1));
        let events = Arc::new(Mutex::new(Vec::new()));
        let ev = events.clone();
        let v = reg
            .callback_pvar(
                "cb",
                PvarClass::Size,
                crate::Datatype::UnsignedLongLong,
                Callbacks::new(|_, _| 1).with_notify(move |n, _| {
                    ev.lock().unwrap().push(n);
                    None
                }),
            )
            .register()
            .unwrap();
        let s = reg.session_create().unwrap();
        let _h = reg.handle_alloc(s, v.index(), None).unwrap();
        events.lock().unwrap().clear();
        let e = reg.handle_alloc(s, v.index(), None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutOfHandles);
        assert_eq!(
            *events.lock().unwrap(),
            [Notify::Bind, Notify::Start, Notify::Stop, Notify::Free],
            "the refused continuous handle is undone in full"
        );
    }
}
