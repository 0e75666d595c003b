//! The component side: registering variables and updating them, typed per
//! class as in the MPICH design table.
//!
//! | class | handle | methods |
//! |---|---|---|
//! | STATE | [`State`] | `set`, `get` |
//! | SIZE | [`Size<T>`] | `set`, `get` |
//! | PERCENTAGE | [`Percentage`] | `set`, `get` |
//! | LEVEL | [`Level<T>`] | `set`, `inc`, `dec`, `get` |
//! | COUNTER | [`Counter`] | `inc`, `add`, `local`, `get` |
//! | AGGREGATE | [`Aggregate<T>`] | `add` (`u32`, `u64`, `f64`), `get` |
//! | TIMER | [`Timer`] | `start`, `stop`, `scoped`, `add_elapsed`, `get_seconds` |
//! | HIGH/LOWWATERMARK | [`HighWatermark<T>`], [`LowWatermark<T>`] | `init`, `update`, `level` |
//! | GENERIC | [`Generic<T>`] | `set`, `get` |
//!
//! Every update has an `_at(i, …)` form for arrays. Variables bound to
//! objects are registered with [`PvarBuilder::register_bound`], which gives
//! a [`Bound`] from which the component creates one instance per object.
//! Variables computed by callback come from [`Registry::callback_pvar`].
//!
//! With the `compile-out` cargo feature every update compiles to nothing
//! (registration and the tool side still work; values stay at zero).
//!
//! ## Signal safety
//!
//! Every update method is async-signal-safe once the calling thread has
//! touched the variable's per-thread cells: by an earlier update on that
//! thread, or by [`Registry::prepare_thread`] called after the variable was
//! registered (the first touch assigns a thread id and allocates). Watermark
//! and STATE / SIZE / PERCENTAGE / GENERIC updates need no preparation.
//! Every `get` is async-signal-safe (a merged read, like a tool's).
//! Registration, [`Bound::create_instance`] and [`Bound::drop_instance`]
//! are not. A handler must not update an element that the code it
//! interrupted on the same thread may be updating: an update is a load and
//! a store of the thread's own cell, so one of the two would be lost. Each
//! type's documentation ends with its "Async-signal-safe:" line; the full
//! contract is `docs/signal-safety.md`.

mod builder;
mod shared;
mod sum;
mod value;
mod watermark;

use std::marker::PhantomData;
use std::sync::Arc;

use builder::FromStorage;
pub use builder::{ComponentHandle, PvarBuilder};
pub use shared::{Generic, Percentage, Size, State};
pub use sum::{Aggregate, Counter, Level, LocalCounter, Timer, TimerGuard};
pub use value::{Magnitude, Value};
pub use watermark::{HighWatermark, LowWatermark};

use crate::callback::Callbacks;
use crate::error::Result;
use crate::kinds::{Datatype, PvarClass};
use crate::registry::Registry;
use crate::storage::Storage;

/// False when the `compile-out` feature removes all instrumentation.
pub(crate) const ENABLED: bool = !cfg!(feature = "compile-out");

/// A variable bound to objects: the component creates an instance per
/// object (communicator, window, …), each with its own element count.
///
/// ```
/// use pvar::{BindKind, Registry};
/// let reg = Registry::new();
/// let per_peer = reg
///     .counter("msgs_per_peer")
///     .bind(BindKind::Comm)
///     .per_object_count()
///     .register_bound()
///     .unwrap();
/// let world = per_peer.create_instance(0x101, 4).unwrap(); // 4 peers
/// world.inc_at(3);
/// assert_eq!(world.get_at(3), 1);
/// per_peer.drop_instance(0x101).unwrap();
/// ```
pub struct Bound<H> {
    registry: Registry,
    index: usize,
    _h: PhantomData<fn() -> H>,
}

impl<H> Clone for Bound<H> {
    fn clone(&self) -> Self {
        Self {
            registry: self.registry.clone(),
            index: self.index,
            _h: PhantomData,
        }
    }
}

impl<H: ComponentHandle> Bound<H> {
    pub(crate) fn new(registry: Registry, index: usize) -> Self {
        Self {
            registry,
            index,
            _h: PhantomData,
        }
    }

    /// Creates the instance for the object whose handle value is `object`,
    /// with `count` elements, and returns its update handle. Tools bind
    /// handles to it by passing the same handle value.
    ///
    /// Async-signal-safe: no (allocates, takes the instance mutex).
    pub fn create_instance(&self, object: u64, count: usize) -> Result<H> {
        let storage = self.registry.create_instance(self.index, object, count)?;
        Ok(H::from_storage(&self.registry, self.index, storage))
    }

    /// Drops the instance for `object`: tool handles bound to it then fail
    /// with [`Error::Inactive`](crate::Error::Inactive); their memory is
    /// released when the last of them is freed.
    ///
    /// Async-signal-safe: no (takes the variable's instance mutex).
    pub fn drop_instance(&self, object: u64) -> Result<()> {
        self.registry.drop_instance(self.index, object)
    }

    /// The variable's index in its registry.
    pub fn index(&self) -> usize {
        self.index
    }
}

/// A variable computed by callback; see [`Registry::callback_pvar`].
///
/// Async-signal-safe: tool operations on it are as safe as its callbacks
/// (`read` for reads and resets, `write` for writes, `notify` for start and
/// stop); keep them lock- and allocation-free for sampling tools.
#[derive(Clone)]
pub struct CallbackVar {
    registry: Registry,
    index: usize,
}

impl FromStorage for CallbackVar {
    fn from_storage(registry: &Registry, index: usize, _storage: Arc<Storage>) -> Self {
        Self {
            registry: registry.clone(),
            index,
        }
    }
}

impl CallbackVar {
    /// The variable's index in its registry.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Deactivates the variable (component unloaded).
    pub fn deactivate(&self) {
        let _ = self.registry.deactivate_pvar(self.index);
    }
}

/// Component-side registration, one method per class.
impl Registry {
    /// A COUNTER (`MPI_UNSIGNED_LONG_LONG` unless [`PvarBuilder::datatype`]
    /// says otherwise).
    pub fn counter(&self, name: &str) -> PvarBuilder<'_, Counter> {
        PvarBuilder::new(self, name, PvarClass::Counter, Datatype::UnsignedLongLong)
    }

    /// An AGGREGATE of `T` (`u32`, `u64` or `f64`).
    pub fn aggregate<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Aggregate<T>> {
        PvarBuilder::new(self, name, PvarClass::Aggregate, T::DATATYPE)
    }

    /// A TIMER read in seconds (`MPI_DOUBLE`); choose an unsigned datatype
    /// with [`PvarBuilder::datatype`] to read nanoseconds.
    pub fn timer(&self, name: &str) -> PvarBuilder<'_, Timer> {
        PvarBuilder::new(self, name, PvarClass::Timer, Datatype::Double)
    }

    /// A LEVEL of `T`.
    pub fn level<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Level<T>> {
        PvarBuilder::new(self, name, PvarClass::Level, T::DATATYPE)
    }

    /// A SIZE of `T`.
    pub fn size<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, Size<T>> {
        PvarBuilder::new(self, name, PvarClass::Size, T::DATATYPE)
    }

    /// A PERCENTAGE (`MPI_DOUBLE` in [0, 1]).
    pub fn percentage(&self, name: &str) -> PvarBuilder<'_, Percentage> {
        PvarBuilder::new(self, name, PvarClass::Percentage, Datatype::Double)
    }

    /// A STATE (`MPI_INT`), usually with an enumeration.
    pub fn state(&self, name: &str) -> PvarBuilder<'_, State> {
        PvarBuilder::new(self, name, PvarClass::State, Datatype::Int)
    }

    /// A HIGHWATERMARK of `T`.
    pub fn high_watermark<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, HighWatermark<T>> {
        PvarBuilder::new(self, name, PvarClass::HighWatermark, T::DATATYPE)
    }

    /// A LOWWATERMARK of `T`.
    pub fn low_watermark<T: Magnitude>(&self, name: &str) -> PvarBuilder<'_, LowWatermark<T>> {
        PvarBuilder::new(self, name, PvarClass::LowWatermark, T::DATATYPE)
    }

    /// A GENERIC variable of `T`.
    pub fn generic<T: Value>(&self, name: &str) -> PvarBuilder<'_, Generic<T>> {
        PvarBuilder::new(self, name, PvarClass::Generic, T::DATATYPE)
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
    /// total, from which handles take their start/stop differences.
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
        PvarBuilder::new(self, name, class, datatype).with_callbacks(callbacks)
    }
}
