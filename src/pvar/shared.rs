//! STATE, SIZE, PERCENTAGE and GENERIC handles: one process-wide value per
//! element, written with a plain atomic store.

use std::marker::PhantomData;

use super::var_id::{ClassHandle, ENABLED, FromStorage, VarId};
use crate::hot::storage::{Backing, Storage};
use crate::sync::{Arc, Ordering};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::{Magnitude, Value};
use crate::vocabulary::kinds::PvarClass;

#[derive(Clone)]
pub(crate) struct SharedRef {
    storage: Arc<Storage>,
    id: VarId,
}

impl SharedRef {
    fn new(id: VarId, storage: Arc<Storage>) -> Self {
        Self { storage, id }
    }

    #[inline(always)]
    fn set(&self, i: usize, bits: u64) {
        if ENABLED && let Backing::Shared { values } = &self.storage.backing {
            values[i].store(bits, Ordering::Relaxed);
        }
    }

    /// Element `i` as a tool reads it (fitted to the class and datatype:
    /// `Storage::to_output`).
    fn get(&self, i: usize) -> u64 {
        assert!(i < self.storage.count, "pvar element {i} out of range");
        self.storage.to_output(self.storage.current(i))
    }

    /// Replaces element `i`'s bits by `f(bits)` with a compare-and-swap
    /// loop on its one shared atomic (lock-free; other threads' updates
    /// of the element are never lost).
    #[inline]
    fn update(&self, i: usize, f: impl Fn(u64) -> u64) {
        if ENABLED && let Backing::Shared { values } = &self.storage.backing {
            let cell = &values[i];
            let mut old = cell.load(Ordering::Relaxed);
            while let Err(now) =
                cell.compare_exchange_weak(old, f(old), Ordering::Relaxed, Ordering::Relaxed)
            {
                old = now;
            }
        }
    }
}

macro_rules! shared_common {
    () => {
        /// The variable's index in its registry.
        pub fn index(&self) -> usize {
            self.core.id.index()
        }

        /// Number of elements.
        pub fn count(&self) -> usize {
            self.core.storage.count
        }

        /// Deactivates the variable (component unloaded).
        pub fn deactivate(&self) {
            self.core.id.deactivate()
        }
    };
}

macro_rules! shared_handle {
    ($(#[$m:meta])* $name:ident < $t:ident : $bound:ident > $class:ident) => {
        $(#[$m])*
        pub struct $name<$t: $bound> {
            core: SharedRef,
            _t: PhantomData<$t>,
        }

        impl<$t: $bound> Clone for $name<$t> {
            fn clone(&self) -> Self {
                Self { core: self.core.clone(), _t: PhantomData }
            }
        }

        impl<$t: $bound> ClassHandle for $name<$t> {
            const CLASS: PvarClass = PvarClass::$class;
            const DATATYPE: Datatype = $t::DATATYPE;
            fn var_index(&self) -> usize {
                self.index()
            }
        }

        impl<$t: $bound> FromStorage for $name<$t> {
            fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
                Self { core: SharedRef::new(id, storage), _t: PhantomData }
            }
        }

        impl<$t: $bound> $name<$t> {
            /// Sets element 0. One relaxed store.
            #[inline(always)]
            pub fn set(&self, x: $t) {
                self.core.set(0, x.to_bits());
            }

            /// Sets element `i`. Panics if `i >= count`.
            #[inline(always)]
            pub fn set_at(&self, i: usize, x: $t) {
                assert!(i < self.core.storage.count, "pvar element {i} out of range");
                self.core.set(i, x.to_bits());
            }

            /// The current value of element 0, as a tool reads it (a SIZE:
            /// a negative `f64` reads 0; see the tool guide).
            pub fn get(&self) -> $t {
                $t::from_bits(self.core.get(0))
            }

            /// The current value of element `i`, as a tool reads it.
            pub fn get_at(&self, i: usize) -> $t {
                $t::from_bits(self.core.get(i))
            }

            shared_common!();
        }
    };
}

shared_handle! {
    /// A SIZE: the fixed size of a resource (`u32`, `u64` or `f64`).
    ///
    /// Async-signal-safe: yes, every method (one atomic store or load per
    /// element; no per-thread state to prepare).
    Size<T: Magnitude> Size
}

impl<T: Magnitude> Size<T> {
    /// [`Size::set_at`] with a 64-bit pattern (the C interface's
    /// `pvar_set` of an `MPI_UNSIGNED` SIZE): the value is stored whole and
    /// read saturated at `u32::MAX` (a SIZE must not overflow).
    #[cfg_attr(not(feature = "ffi"), allow(dead_code))]
    pub(crate) fn set_bits_at(&self, i: usize, bits: u64) {
        assert!(i < self.core.storage.count, "pvar element {i} out of range");
        self.core.set(i, bits);
    }
}

shared_handle! {
    /// A GENERIC variable of any element type; read-only for tools.
    ///
    /// Async-signal-safe: yes, every method (one atomic store or load per
    /// element; no per-thread state to prepare).
    Generic<T: Value> Generic
}

impl Generic<f64> {
    /// Adds `x` to element 0: a compare-and-swap loop on the shared value
    /// (what the `metrics` recorder's gauges do for `increment` and
    /// `decrement`).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    #[inline]
    pub(crate) fn add(&self, x: f64) {
        self.core
            .update(0, move |bits| (f64::from_bits(bits) + x).to_bits());
    }
}

/// A STATE: one of a set of discrete states (`MPI_INT`), usually described
/// by an [`Enumeration`](crate::Enumeration).
///
/// Async-signal-safe: yes, every method (one atomic store or load per
/// element; no per-thread state to prepare).
#[derive(Clone)]
pub struct State {
    core: SharedRef,
}

impl ClassHandle for State {
    const CLASS: PvarClass = PvarClass::State;
    const DATATYPE: Datatype = Datatype::Int;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl FromStorage for State {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        Self {
            core: SharedRef::new(id, storage),
        }
    }
}

impl State {
    /// Sets element 0 to state `s`. One relaxed store.
    #[inline(always)]
    pub fn set(&self, s: i32) {
        self.core.set(0, s.to_bits());
    }

    /// Sets element `i` (e.g. the state of worker `i`).
    #[inline(always)]
    pub fn set_at(&self, i: usize, s: i32) {
        assert!(i < self.core.storage.count, "pvar element {i} out of range");
        self.core.set(i, s.to_bits());
    }

    /// The current state of element 0.
    pub fn get(&self) -> i32 {
        i32::from_bits(self.core.get(0))
    }

    /// The current state of element `i`.
    pub fn get_at(&self, i: usize) -> i32 {
        i32::from_bits(self.core.get(i))
    }

    shared_common!();
}

/// A PERCENTAGE: utilisation of a finite resource, a double in [0, 1].
/// Values outside the range are clamped (NaN becomes 0).
///
/// Async-signal-safe: yes, every method (one atomic store or load per
/// element; no per-thread state to prepare).
#[derive(Clone)]
pub struct Percentage {
    core: SharedRef,
}

impl ClassHandle for Percentage {
    const CLASS: PvarClass = PvarClass::Percentage;
    const DATATYPE: Datatype = Datatype::Double;
    fn var_index(&self) -> usize {
        self.index()
    }
}

impl FromStorage for Percentage {
    fn from_storage(id: VarId, storage: Arc<Storage>) -> Self {
        Self {
            core: SharedRef::new(id, storage),
        }
    }
}

impl Percentage {
    /// Sets element 0 to `p`, clamped to [0, 1].
    #[inline(always)]
    pub fn set(&self, p: f64) {
        self.set_at(0, p);
    }

    /// Sets element `i` to `p`, clamped to [0, 1].
    #[inline(always)]
    pub fn set_at(&self, i: usize, p: f64) {
        assert!(i < self.core.storage.count, "pvar element {i} out of range");
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        self.core.set(i, p.to_bits());
    }

    /// The current value of element 0.
    pub fn get(&self) -> f64 {
        f64::from_bits(self.core.get(0))
    }

    /// The current value of element `i`.
    pub fn get_at(&self, i: usize) -> f64 {
        f64::from_bits(self.core.get(i))
    }

    shared_common!();
}
