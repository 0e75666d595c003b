//! An event instance: what a callback receives (`MPI_T_event_instance`),
//! valid only during that callback and only on its thread.
//!
//! The instance lives on the delivering thread's stack. So that the C
//! interface can refuse any other pointer (a stale instance, another
//! callback's, garbage) instead of reading through it, every delivery
//! pushes its instance's address on a small per-thread stack of live
//! instances (a `const`-initialised thread-local: no lazy initialisation,
//! no destructor, async-signal-safe), and the C functions accept only an
//! address on the calling thread's stack. A delivery nested deeper than
//! [`MAX_NESTED`] (callbacks raising events whose callbacks raise events…)
//! is dropped and counted instead.

use core::cell::Cell;

use crate::sync::{Ordering, compiler_fence};

use super::record::Element;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::event_info::EventInfo;
use crate::vocabulary::kinds::{CbSafety, ObjectRef};

/// Deliveries one thread may have in progress at once (nested).
pub(crate) const MAX_NESTED: usize = 16;

crate::sync::engine_thread_local! {
    static LIVE: [Cell<usize>; MAX_NESTED] = [const { Cell::new(0) }; MAX_NESTED];
    static DEPTH: Cell<usize> = Cell::new(0);
    static CONTEXT: Cell<CbSafety> = Cell::new(CbSafety::None);
    /// The requirement of the raise or delivery point in progress on this
    /// thread, outside its callbacks (where a free callback may run).
    static POINT: Cell<CbSafety> = Cell::new(CbSafety::None);
}

/// Touches this thread's delivery thread-locals, so that a first delivery
/// in a signal handler does not set them up (in a `dlopen`ed `libpvar`, a
/// thread's first access to its thread-locals may allocate).
pub(crate) fn touch_thread_locals() {
    DEPTH.with(|d| d.get());
    LIVE.with(|l| l[0].get());
    CONTEXT.with(|c| c.get());
    POINT.with(|p| p.get());
}

/// Runs `f` as a raise or delivery point whose requirement is `ctx` (what a
/// free callback run by it, after its callbacks returned, is told).
/// Async-signal-safe.
pub(crate) fn at_point<R>(ctx: CbSafety, f: impl FnOnce() -> R) -> R {
    let outer = POINT.with(|p| p.replace(ctx));
    let r = f();
    POINT.with(|p| p.set(outer));
    r
}

/// One raised event as one registration's callback sees it.
///
/// ```
/// use pvar::{CbSafety, Registry};
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// let reg = Registry::new();
/// let deep = reg.event::<(u64, i32)>("inbox_deep").description("depth, peer").register()?;
/// let sum = Arc::new(AtomicU64::new(0));
/// let r = reg.event_registration(deep.index(), None)?;
/// let s = sum.clone();
/// r.on_event(CbSafety::ThreadSafe, move |inst, _| {
///     let depth: u64 = inst.read(0).unwrap();
///     let peer: i32 = inst.read(1).unwrap();
///     s.fetch_add(depth + peer as u64, Ordering::Relaxed);
/// })?;
/// deep.raise(&(40, 2));
/// assert_eq!(sum.load(Ordering::Relaxed), 42);
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct EventInstance<'a> {
    pub(crate) info: &'a EventInfo,
    pub(crate) event: usize,
    pub(crate) registration: u64,
    pub(crate) timestamp: u64,
    pub(crate) object: Option<ObjectRef>,
    pub(crate) record: &'a [u8],
}

impl std::fmt::Debug for EventInstance<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventInstance")
            .field("event", &self.info.name)
            .field("timestamp", &self.timestamp)
            .field("object", &self.object)
            .finish_non_exhaustive()
    }
}

impl<'a> EventInstance<'a> {
    /// The event type's index (`MPI_T_event_get_info`).
    pub fn event_index(&self) -> usize {
        self.event
    }

    /// The event type's metadata.
    pub fn info(&self) -> &'a EventInfo {
        self.info
    }

    /// The key of the registration this delivery is for.
    pub fn registration(&self) -> u64 {
        self.registration
    }

    /// When the event was raised, in ticks of its source
    /// (`MPI_T_event_get_timestamp`): taken once per raise, so every
    /// registration, and a delivery deferred to later, sees the same value.
    pub fn timestamp(&self) -> u64 {
        self.timestamp
    }

    /// The source that timestamped it (`MPI_T_event_get_source`).
    pub fn source(&self) -> usize {
        self.info.source
    }

    /// The object the raise was bound to, for events bound to objects.
    pub fn object(&self) -> Option<ObjectRef> {
        self.object
    }

    /// The whole record (`MPI_T_event_copy`): `info().extent` bytes, each
    /// element at its displacement, padding zeroed.
    pub fn record(&self) -> &'a [u8] {
        self.record
    }

    /// The bytes of element `i` (`MPI_T_event_read`);
    /// `MPI_T_ERR_INVALID_INDEX` if there is no such element.
    pub fn element_bytes(&self, i: usize) -> Result<&'a [u8]> {
        let &(dt, disp) = self.info.elements.get(i).ok_or(Error::no_such_index())?;
        Ok(&self.record[disp..disp + dt.size()])
    }

    /// Element `i` as `T`: `MPI_T_ERR_INVALID_INDEX` if there is no such
    /// element, `MPI_T_ERR_INVALID` if its datatype is not `T`'s.
    pub fn read<T: Element>(&self, i: usize) -> Result<T> {
        let &(dt, _) = self.info.elements.get(i).ok_or(Error::no_such_index())?;
        let same = dt == T::DATATYPE
            || (T::DATATYPE == Datatype::UnsignedLongLong
                && dt == Datatype::UnsignedLong
                && dt.size() == 8);
        if !same {
            return Err(Error::invalid("the element has another datatype"));
        }
        let bytes = self.element_bytes(i)?;
        // SAFETY: `bytes` holds exactly `size_of::<T>()` bytes (the
        // datatype's size, checked equal to T's above) of an element the
        // component wrote as that datatype; every bit pattern is a valid
        // value of the `Element` types; the read is unaligned-safe.
        Ok(unsafe { core::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) })
    }

    /// Runs `f` with this instance registered as live on this thread for
    /// the C interface. `None` (without calling `f`) if deliveries are
    /// nested [`MAX_NESTED`] deep already. Async-signal-safe.
    pub(crate) fn with_live<R>(&self, ctx: CbSafety, f: impl FnOnce(&Self) -> R) -> Option<R> {
        let depth = DEPTH.with(|d| d.get());
        if depth >= MAX_NESTED {
            return None;
        }
        let me = self as *const Self as usize;
        // Claim the slot before filling it: a signal handler's delivery
        // that interrupts us between the two then takes the next slot
        // instead of this one (and clearing it on its way out).
        DEPTH.with(|d| d.set(depth + 1));
        compiler_fence(Ordering::SeqCst);
        LIVE.with(|l| l[depth].set(me));
        let outer = CONTEXT.with(|c| c.replace(ctx));
        let r = f(self);
        CONTEXT.with(|c| c.set(outer));
        LIVE.with(|l| l[depth].set(0));
        compiler_fence(Ordering::SeqCst);
        DEPTH.with(|d| d.set(depth));
        Some(r)
    }

    /// The instance at address `p` if it is live on this thread (being
    /// delivered to a callback up this thread's stack).
    ///
    /// # Safety
    /// The returned reference must not outlive the callback that `p` was
    /// given to (the C interface uses it within one MPI_T call made from
    /// that callback).
    #[cfg(feature = "ffi")]
    pub(crate) unsafe fn from_live<'x>(
        p: *const core::ffi::c_void,
    ) -> Option<&'x EventInstance<'x>> {
        let p = p as usize;
        if p == 0 {
            return None;
        }
        let depth = DEPTH.with(|d| d.get());
        let live = LIVE.with(|l| l[..depth].iter().any(|c| c.get() == p));
        // SAFETY: `p` is the address of an `EventInstance` that a delivery
        // up this thread's stack registered with `with_live` and has not
        // yet unregistered: it is alive until that delivery returns, which
        // is after the caller's use (function contract).
        live.then(|| unsafe { &*(p as *const EventInstance<'x>) })
    }
}

/// The callback-safety requirement in force on this thread: the delivery
/// in progress, else the raise or delivery point in progress, else `None`
/// (a free called from normal code). What a free callback is told.
pub(crate) fn current_requirement() -> CbSafety {
    if DEPTH.with(|d| d.get()) == 0 {
        POINT.with(|p| p.get())
    } else {
        CONTEXT.with(|c| c.get())
    }
}
