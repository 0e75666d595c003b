//! Variables computed by callback, after the Open MPI design: a read
//! function, and an optional notify function that hears about handle
//! binding, start, stop and free, and returns the element count when a
//! handle is bound to an object.
//!
//! There is no write function. A tool's write (and reset) of a pvar changes
//! only what that handle reads: the standard keeps sessions from
//! influencing each other, and `docs/tool-guide.md` promises it. A write
//! function would hand the value to the component, where every session
//! sees it. So callback variables of the SUM classes are writable per
//! handle (their handles keep `accum / offset` over the running total the
//! read function returns), and callback variables of every other class are
//! read-only. A value the tool should set belongs in a control variable.
//!
//! Values cross the callback boundary as `u64` bit patterns of the
//! variable's datatype: unsigned values as they are, `MPI_INT`/`MPI_COUNT`
//! as two's complement, `MPI_DOUBLE` as `f64::to_bits`.

use std::fmt;

/// What a notify function is told, about one tool handle at a time (as
/// Open MPI's `mca_base_pvar` notify: bind, start, stop, free).
///
/// The sequence a handle produces:
///
/// - allocation: [`Bind`](Notify::Bind) (object `None` for an unbound
///   variable), then, for a **continuous** variable, whose handles run from
///   allocation, [`Start`](Notify::Start);
/// - each tool `start` / `stop` of a non-continuous handle:
///   [`Start`](Notify::Start) / [`Stop`](Notify::Stop);
/// - free (`handle_free`, or freeing its session): [`Stop`](Notify::Stop)
///   if the handle is still started (always for a continuous one), then
///   [`Free`](Notify::Free).
///
/// So a continuous handle hears `Bind, Start, Stop, Free`, and a
/// non-continuous one `Bind, (Start, Stop)*, Free`. An allocation refused
/// after `Bind` (no element count for the object, no free handle slot) is
/// undone with the same ending (`Stop` if started, `Free`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    /// A handle is being bound (allocated); for a bound variable, return
    /// the object's element count (ignored for an unbound variable).
    Bind,
    /// A handle was started (by the tool, or at allocation if continuous).
    Start,
    /// A handle was stopped (by the tool, or at free if still started).
    Stop,
    /// A handle was freed.
    Free,
}

type ReadFn = dyn Fn(Option<u64>, usize) -> u64 + Send + Sync;
type NotifyFn = dyn Fn(Notify, Option<u64>) -> Option<usize> + Send + Sync;

/// The functions behind a callback variable.
///
/// - `read(object, element)` returns element `element` of the variable for
///   the bound object's handle value (`None` when unbound).
/// - Only the SUM classes (COUNTER, AGGREGATE, TIMER) may be writable
///   (`readonly(false)`) and atomic: their handles keep their own
///   accum/offset over the values `read` returns. Every other class is
///   read-only and not atomic (see the module documentation); the builder
///   makes a callback HIGH/LOWWATERMARK so by default.
/// - `notify(event, object)` is called on bind / start / stop / free (see
///   [`Notify`] for the sequence); on [`Notify::Bind`] it returns the
///   element count for that object (`None` keeps the registered count;
///   required for per-object counts).
///
/// The engine calls `read` from wherever a tool reads, which may be a
/// signal handler: keep it lock- and allocation-free if sampling tools are
/// to read the variable.
pub struct Callbacks {
    pub(crate) read: Box<ReadFn>,
    pub(crate) notify: Option<Box<NotifyFn>>,
}

impl fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callbacks")
            .field("notify", &self.notify.is_some())
            .finish()
    }
}

impl Callbacks {
    /// Callbacks with only a read function.
    pub fn new(read: impl Fn(Option<u64>, usize) -> u64 + Send + Sync + 'static) -> Self {
        Self {
            read: Box::new(read),
            notify: None,
        }
    }

    /// Adds a notify function.
    pub fn with_notify(
        mut self,
        notify: impl Fn(Notify, Option<u64>) -> Option<usize> + Send + Sync + 'static,
    ) -> Self {
        self.notify = Some(Box::new(notify));
        self
    }

    pub(crate) fn read(&self, object: Option<u64>, i: usize) -> u64 {
        (self.read)(object, i)
    }

    pub(crate) fn notify(&self, event: Notify, object: Option<u64>) -> Option<usize> {
        self.notify.as_ref().and_then(|n| n(event, object))
    }
}
