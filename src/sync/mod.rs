//! The one place that chooses between `std`'s synchronisation primitives
//! and loom's models of them.
//!
//! Everything in the engine that is shared between threads imports its
//! atomics, `Arc` and `Mutex` from here, never from `std` directly. Under
//! `--cfg loom` the same engine code then runs inside loom's model checker
//! (see `loom-tests/`), in the manner of tokio's `src/loom/`.
//!
//! [`AtomicU128`] comes from `portable-atomic`; [`check_lock_free`] verifies
//! at registry creation that the widths used on async-signal-safe paths are
//! lock-free on this CPU.

pub(crate) mod append_vec;
pub(crate) mod isolated;
#[cfg(all(test, not(loom)))]
mod miri_tests;
pub(crate) mod striped;
pub(crate) mod tagged;

#[cfg(not(loom))]
mod imp {
    #[allow(unused_imports)]
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
    #[allow(unused_imports)]
    pub(crate) use std::sync::{Arc, Mutex, MutexGuard};

    pub(crate) use portable_atomic::AtomicU128;

    /// A spin hint for the few bounded waits on tool-side slow paths.
    #[inline]
    pub(crate) fn spin_hint() {
        std::hint::spin_loop();
    }
}

#[cfg(loom)]
mod imp {
    #[allow(unused_imports)]
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
    #[allow(unused_imports)]
    pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};

    /// loom has no 128-bit atomic; model one with a loom mutex. The mutex is
    /// only a modelling device: in the real build this is portable-atomic's
    /// lock-free `cmpxchg16b` implementation.
    #[derive(Debug)]
    pub(crate) struct AtomicU128(loom::sync::Mutex<u128>);

    impl AtomicU128 {
        pub(crate) fn new(v: u128) -> Self {
            Self(loom::sync::Mutex::new(v))
        }
        pub(crate) fn load(&self, _o: core::sync::atomic::Ordering) -> u128 {
            *self.0.lock().unwrap()
        }
        #[allow(dead_code)]
        pub(crate) fn store(&self, v: u128, _o: core::sync::atomic::Ordering) {
            *self.0.lock().unwrap() = v;
        }
        pub(crate) fn compare_exchange(
            &self,
            current: u128,
            new: u128,
            _s: core::sync::atomic::Ordering,
            _f: core::sync::atomic::Ordering,
        ) -> Result<u128, u128> {
            let mut g = self.0.lock().unwrap();
            if *g == current {
                *g = new;
                Ok(current)
            } else {
                Err(*g)
            }
        }
        pub(crate) const fn is_lock_free() -> bool {
            true
        }
    }

    pub(crate) fn spin_hint() {
        loom::thread::yield_now();
    }
}

pub(crate) use core::sync::atomic::{Ordering, compiler_fence};
// loom must see fences: a `core` fence would be invisible to the model.
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;
pub(crate) use imp::*;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::fence;

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// Loom only: a modelled signal handler. A model arms a closure on its
/// thread; the engine calls [`signal::point`] between two steps of its
/// tool-side operations (see `Storage::current`), and the armed closure runs
/// there, on the interrupted thread, as a handler would. In the normal build
/// nothing of this exists and no call site is compiled.
#[cfg(loom)]
pub(crate) mod signal {
    use std::cell::RefCell;

    type Handler = Box<dyn FnOnce()>;

    loom::thread_local! {
        static ARMED: RefCell<Option<(usize, Handler)>> = RefCell::new(None);
    }

    /// Runs `handler` at the `skip`-th signal point (0 = the next one) this
    /// thread passes. Replaces an armed handler that has not run yet.
    pub(crate) fn arm(skip: usize, handler: Handler) {
        ARMED.with(|a| *a.borrow_mut() = Some((skip, handler)));
    }

    /// Whether an armed handler has not run yet.
    pub(crate) fn pending() -> bool {
        ARMED.with(|a| a.borrow().is_some())
    }

    /// Drops a handler that has not run yet; returns whether there was one.
    pub(crate) fn disarm() -> bool {
        ARMED.with(|a| a.borrow_mut().take().is_some())
    }

    /// A point where a signal may arrive.
    pub(crate) fn point() {
        let due = ARMED.with(|a| {
            let mut a = a.borrow_mut();
            match a.as_mut() {
                Some((0, _)) => a.take().map(|(_, h)| h),
                Some((n, _)) => {
                    *n -= 1;
                    None
                }
                None => None,
            }
        });
        // Disarmed before it runs: the handler's own signal points pass.
        if let Some(handler) = due {
            handler();
        }
    }
}

/// `std`'s `UnsafeCell` with loom's closure-based API, so that loom can
/// check every access to data guarded by the engine's own protocols.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(v: T) -> Self {
        Self(core::cell::UnsafeCell::new(v))
    }

    /// Calls `f` with a shared pointer to the contents.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Calls `f` with a mutable pointer to the contents.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Returns an error message if an atomic width used on an async-signal-safe
/// path would fall back to a lock on this CPU.
///
/// `portable-atomic` implements 128-bit atomics with `cmpxchg16b` on x86-64
/// (detected at run time) and with `ldxp/stxp` or LSE on AArch64; where the
/// CPU lacks them it falls back to a global spin-locked table, which a signal
/// handler that interrupted the lock holder would deadlock on.
pub(crate) fn check_lock_free() -> Result<(), &'static str> {
    tagged::detect_fast_loads();
    if AtomicU128::is_lock_free() {
        Ok(())
    } else {
        Err("128-bit atomics are not lock-free on this CPU; pvar's handle state needs them")
    }
}
