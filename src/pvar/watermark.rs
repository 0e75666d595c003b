//! HIGHWATERMARK and LOWWATERMARK handles.

use std::marker::PhantomData;

use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
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
    /// since it was started or reset.
    ///
    /// Async-signal-safe: yes, every method (atomics only; no per-thread
    /// state to prepare).
    HighWatermark, high: true
}

watermark_handle! {
    /// A LOWWATERMARK: each started tool handle sees the lowest level since
    /// it was started or reset.
    ///
    /// Async-signal-safe: yes, every method (atomics only; no per-thread
    /// state to prepare).
    LowWatermark, high: false
}
