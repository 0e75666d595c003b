//! HIGHWATERMARK and LOWWATERMARK handles.

use std::marker::PhantomData;

use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::storage::reader::Following;
use crate::hot::storage::watermark::WatermarkStore;
use crate::hot::storage::{Backing, Storage};
use crate::sync::Arc;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::{Magnitude, Repr};
use crate::vocabulary::kinds::PvarClass;

macro_rules! watermark_handle {
    ($(#[$m:meta])* $name:ident, high: $high:expr) => {
        impl<T: Magnitude> ClassHandle for $name<T> {
            const CLASS: PvarClass = PvarClass::$name;
            const DATATYPE: Datatype = T::DATATYPE;
            fn var_index(&self) -> usize {
                self.index()
            }
        }

        $(#[$m])*
        pub struct $name<T: Magnitude> {
            storage: Arc<Storage>,
            /// The storage's watermark store, held directly: an update
            /// loads one pointer to reach it.
            store: Arc<WatermarkStore>,
            id: VarId,
            _t: PhantomData<T>,
        }

        impl<T: Magnitude> Clone for $name<T> {
            fn clone(&self) -> Self {
                Self {
                    storage: self.storage.clone(),
                    store: self.store.clone(),
                    id: self.id.clone(),
                    _t: PhantomData,
                }
            }
        }

        impl<T: Magnitude> FromStorage for $name<T> {
            fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
                let store = match &storage.backing {
                    Backing::Watermark(w) => w.clone(),
                    _ => unreachable!("watermark storage"),
                };
                Self { storage, store, id, _t: PhantomData }
            }
        }

        impl<T: Magnitude> $name<T> {
            #[inline(always)]
            fn store(&self) -> &WatermarkStore {
                &self.store
            }

            /// Sets the current level of every element to `x` (MPICH's
            /// `INIT(val)`); started tool handles see it as they see an
            /// update.
            pub fn init(&self, x: T) {
                self.store().set_all_levels(x.to_bits());
            }

            /// Records the current level of element 0 and pushes the mark
            /// of every started tool handle the value passes. One relaxed
            /// store and one load when the value passes no started mark
            /// (no handle started, or the marks already cover it, whatever
            /// the number of handles); else a CAS per mark it passes.
            #[inline(always)]
            pub fn update(&self, x: T) {
                self.update_at(0, x);
            }

            /// [`Self::update`] for element `i`. Panics if `i >= count`.
            #[inline(always)]
            pub fn update_at(&self, i: usize, x: T) {
                if ENABLED {
                    let bits = x.to_bits();
                    let key = Repr::of(T::DATATYPE).order_key(bits, $high);
                    self.store().update(i, bits, key);
                }
            }

            /// [`Self::update_at`] with a 64-bit pattern (the C interface's
            /// `pvar_watermark_update` of an `MPI_UNSIGNED` watermark): the
            /// level is kept whole and fitted to the datatype when read.
            #[cfg_attr(not(feature = "ffi"), allow(dead_code))]
            pub(crate) fn update_bits_at(&self, i: usize, bits: u64) {
                if ENABLED {
                    let key = Repr::of(T::DATATYPE).order_key(bits, $high);
                    self.store().update(i, bits, key);
                }
            }

            /// The current level of element 0 (the last value recorded), as
            /// a tool would read it (a negative `f64` reads 0).
            pub fn level(&self) -> T {
                self.level_at(0)
            }

            /// The current level of element `i`.
            pub fn level_at(&self, i: usize) -> T {
                T::from_bits(self.storage.to_output(self.storage.current(i)))
            }

            /// A mark of the component's own: the extreme level of every
            /// element from now on, as a started tool handle sees it,
            /// without a session. See [`WatermarkMark`].
            ///
            /// Allocates (a subscription in the variable's store): not
            /// async-signal-safe.
            pub fn watch(&self) -> WatermarkMark<T> {
                WatermarkMark {
                    watch: Following::new(self.storage.clone()),
                    count: self.storage.count,
                    _t: PhantomData,
                }
            }

            /// The variable's index in its registry.
            pub fn index(&self) -> usize {
                self.id.index()
            }

            /// Number of elements.
            pub fn count(&self) -> usize {
                self.storage.count
            }

            /// Deactivates the variable (component unloaded).
            pub fn deactivate(&self) {
                self.id.deactivate()
            }
        }
    };
}

watermark_handle! {
    /// A HIGHWATERMARK: each started tool handle sees the highest level
    /// since it was started or reset. The component itself reads the
    /// level ([`level`](Self::level)) and, through a mark it holds
    /// ([`watch`](Self::watch)), the highest level since the mark began.
    ///
    /// Async-signal-safe: yes, every method (atomics only; no per-thread
    /// state to prepare).
    HighWatermark, high: true
}

watermark_handle! {
    /// A LOWWATERMARK: each started tool handle sees the lowest level since
    /// it was started or reset; the component reads its own mark through
    /// [`watch`](Self::watch).
    ///
    /// Async-signal-safe: yes, every method (atomics only; no per-thread
    /// state to prepare).
    LowWatermark, high: false
}

/// A component's own mark of a watermark, from
/// [`HighWatermark::watch`] or [`LowWatermark::watch`]: the highest (lowest)
/// level of each element since the mark was made or last reset.
///
/// A watermark's mark belongs to whoever follows it: MPI_T gives one to
/// each started tool handle, and nothing keeps a mark of the variable as
/// a whole (that would be a second shared word written by every update).
/// A `WatermarkMark` is the same subscription a tool handle holds, kept by
/// the component: while it lives, an update that reaches a new extreme
/// also pushes it into the mark (a compare-and-swap); any other update
/// costs what it did (one store of the level and one load). Dropping it
/// gives the subscription back.
///
/// ```
/// let reg = pvar::Registry::new();
/// let depth = reg.high_watermark::<u64>("queue_depth").register()?;
/// let deepest = depth.watch(); // the component's own mark, from now on
/// for d in [3, 9, 4] {
///     depth.update(d);
/// }
/// assert_eq!(depth.level(), 4); // the last value recorded
/// assert_eq!(deepest.get(), 9); // the highest since the mark began
/// assert_eq!(deepest.reset(), 9); // read and start again at the level now
/// depth.update(2);
/// assert_eq!(deepest.get(), 4);
/// # Ok::<(), pvar::Error>(())
/// ```
///
/// Async-signal-safe: `get`, `get_at`, `reset`, `reset_at` (atomics; a
/// reset also makes one `membarrier` system call). Making one
/// ([`HighWatermark::watch`]) allocates and is not.
pub struct WatermarkMark<T: Magnitude> {
    watch: Following,
    count: usize,
    _t: PhantomData<T>,
}

impl<T: Magnitude> WatermarkMark<T> {
    /// The mark of element 0.
    pub fn get(&self) -> T {
        self.get_at(0)
    }

    /// The mark of element `i`. Panics if `i` is out of range.
    pub fn get_at(&self, i: usize) -> T {
        assert!(
            i < self.count,
            "watermark element {i} out of range (count {})",
            self.count
        );
        T::from_bits(
            self.watch
                .reader()
                .mark(i)
                .expect("a watermark reader has marks"),
        )
    }

    /// Returns the mark of element 0 and starts it again at the level
    /// now, in one step (an update lands either in the value returned or
    /// in the new mark).
    pub fn reset(&self) -> T {
        self.reset_at(0)
    }

    /// [`reset`](Self::reset) for element `i`. Panics if `i` is out of
    /// range.
    pub fn reset_at(&self, i: usize) -> T {
        assert!(
            i < self.count,
            "watermark element {i} out of range (count {})",
            self.count
        );
        T::from_bits(
            self.watch
                .reader()
                .reset_mark(i)
                .expect("a watermark reader has marks"),
        )
    }

    /// Number of elements.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl<T: Magnitude> std::fmt::Debug for WatermarkMark<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatermarkMark")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}
