//! The one place that chooses between `std`'s synchronisation primitives
//! and loom's models of them — the ground floor of the crate.
//!
//! Everything in the engine that is shared between threads takes its
//! atomics, `Arc`, `Mutex`, `UnsafeCell`, fences and thread-locals from
//! here, never from `std` or `loom` directly. Under `--cfg loom` the same
//! engine code then runs inside loom's model checker (see `loom-tests/`),
//! in the manner of tokio's `src/loom/`:
//!
//! - [`AtomicU64`] and friends, [`Arc`], [`fence`], [`UnsafeCell`] (with
//!   loom's closure API in both builds);
//! - [`AtomicU128`]: `portable-atomic`'s in the real build, under loom a
//!   version index in a loom atomic (weak loads modelled); [`check_lock_free`] verifies at
//!   registry creation that it is lock-free on this CPU;
//! - [`Mutex`]: never poisoned (a panic while it was held leaves the data
//!   as it was; every engine structure behind a mutex stays consistent
//!   between statements), so `lock` returns the guard;
//! - `engine_thread_local!`: `std`'s
//!   `thread_local!` with `const` initialisers (no lazy initialisation, so
//!   readable from a signal handler), or loom's;
//! - [`unmodelled`]: `std` atomics and `OnceLock` for process-wide
//!   `static`s (id sources, counters) that loom cannot hold and that no
//!   model checks;
//! - [`asymmetric`]: the asymmetric fence (`membarrier` on the tool side,
//!   a compiler fence on the update side), fences under loom;
//! - `signal`: loom only, the modelled signal handler.

pub(crate) mod asymmetric;

#[cfg(not(loom))]
mod imp {
    #[allow(unused_imports)]
    pub(crate) use std::sync::Arc;
    /// Flags of the fast paths, the running sampler, the list of declared
    /// use sites: outside every model (the list is linked before `main`,
    /// the others' users are not built under loom).
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr};
    #[allow(unused_imports)]
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
    pub(crate) use std::sync::{Mutex as RawMutex, MutexGuard};

    pub(crate) use portable_atomic::AtomicU128;
}

#[cfg(loom)]
mod imp {
    #[allow(unused_imports)]
    pub(crate) use loom::sync::Arc;
    #[allow(unused_imports)]
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
    pub(crate) use loom::sync::{Mutex as RawMutex, MutexGuard};

    /// loom has no 128-bit atomic. Modelled as a loom `AtomicUsize` holding
    /// the index of a version in an append-only history of the word's
    /// values: a load is a real loom load of the index (so it may see an
    /// older version, as a weak-memory load may), a compare-and-swap a
    /// real loom read-modify-write of it (so it sees the latest). The
    /// history itself is bookkeeping outside the model: a version's value
    /// never changes once pushed, and loom runs one thread at a time.
    /// (Earlier a loom mutex modelled the word; that made every 128-bit
    /// load a synchronising lock, stronger than the hardware's, and hid
    /// missing fences around these words.)
    #[derive(Debug)]
    pub(crate) struct AtomicU128 {
        version: loom::sync::atomic::AtomicUsize,
        history: std::sync::Mutex<Vec<u128>>,
    }

    impl AtomicU128 {
        pub(crate) fn new(v: u128) -> Self {
            Self {
                version: loom::sync::atomic::AtomicUsize::new(0),
                history: std::sync::Mutex::new(vec![v]),
            }
        }
        fn value(&self, version: usize) -> u128 {
            self.history.lock().unwrap()[version]
        }
        pub(crate) fn load(&self, o: core::sync::atomic::Ordering) -> u128 {
            self.value(self.version.load(o))
        }
        pub(crate) fn compare_exchange(
            &self,
            current: u128,
            new: u128,
            s: core::sync::atomic::Ordering,
            f: core::sync::atomic::Ordering,
        ) -> Result<u128, u128> {
            let next = {
                let mut h = self.history.lock().unwrap();
                h.push(new);
                h.len() - 1
            };
            self.version
                .fetch_update(s, f, |v| (self.value(v) == current).then_some(next))
                .map(|_| current)
                .map_err(|v| self.value(v))
        }
        pub(crate) const fn is_lock_free() -> bool {
            true
        }
    }
}

pub(crate) use core::sync::atomic::{Ordering, compiler_fence};
// loom must see fences: a `core` fence would be invisible to the model.
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;
pub(crate) use imp::*;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::fence;

/// A mutex that is never poisoned: `lock` returns the guard. The engine's
/// data behind mutexes (free lists, name maps, allocators) is consistent
/// between any two statements, so a panic in another holder leaves nothing
/// half-done to guard against.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(RawMutex<T>);

impl<T> Mutex<T> {
    /// A mutex holding `value` (`const` in the real build, for `static`s).
    #[cfg(not(loom))]
    pub(crate) const fn new(value: T) -> Self {
        Self(RawMutex::new(value))
    }

    /// A mutex holding `value`.
    #[cfg(loom)]
    pub(crate) fn new(value: T) -> Self {
        Self(RawMutex::new(value))
    }

    /// Locks, ignoring poisoning.
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `std`'s `thread_local!` with a `const` initialiser (no lazy
/// initialisation, no destructor registration unless the type needs one),
/// or loom's `thread_local!` under `--cfg loom`, which gives each modelled
/// thread its own value. Write the initialiser as a plain expression.
macro_rules! engine_thread_local {
    ($($(#[$m:meta])* $vis:vis static $name:ident: $t:ty = $init:expr;)+) => {
        #[cfg(not(loom))]
        std::thread_local! { $($(#[$m])* $vis static $name: $t = const { $init };)+ }
        #[cfg(loom)]
        loom::thread_local! { $($(#[$m])* $vis static $name: $t = $init;)+ }
    };
}
pub(crate) use engine_thread_local;

/// `std` primitives for process-wide `static`s: identifier sources and
/// counters that live for the whole process. loom's atomics cannot be
/// `static`s, and none of these is part of a protocol a model checks (a
/// model sees them as plain counters), so they are `std`'s in both builds.
pub(crate) mod unmodelled {
    /// For immutable values shared by reference (an enumeration's items),
    /// compared by pointer: no model needs to see their counts.
    pub(crate) use std::sync::Arc;
    /// `std`'s (poisoning) mutex, for process-wide `static` tables of the
    /// registration paths.
    pub(crate) use std::sync::Mutex;
    pub(crate) use std::sync::OnceLock;
    /// Flags of the fast paths, the running sampler, the list of declared
    /// use sites: outside every model (the list is linked before `main`,
    /// the others' users are not built under loom).
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr};
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
    /// `std`'s thread-locals, for state outside the engine (the C
    /// interface's last error message) that no model runs.
    #[cfg(feature = "ffi")]
    pub(crate) use std::thread_local;
}

/// The key of a thread-local declared by a use-site macro in the user's
/// crate: `std`'s, or loom's in a modelled build.
#[cfg(not(loom))]
pub type SiteLocal<T> = std::thread::LocalKey<T>;
/// The key of a thread-local declared by a use-site macro in the user's
/// crate: `std`'s, or loom's in a modelled build.
#[cfg(loom)]
pub type SiteLocal<T> = loom::thread::LocalKey<T>;

/// Declares the thread-local cache of a use site: `std`'s thread-local, or
/// loom's in a modelled build (chosen when `pvar` is compiled, so that the
/// user's crate needs no `loom` configuration of its own).
#[cfg(not(loom))]
#[doc(hidden)]
#[macro_export]
macro_rules! __pvar_site_cache {
    ($name:ident) => {
        ::std::thread_local! {
            static $name: $crate::__private::SiteCache =
                const { $crate::__private::SiteCache::new() };
        }
    };
}

/// Declares the thread-local cache of a use site (loom build).
#[cfg(loom)]
#[doc(hidden)]
#[macro_export]
macro_rules! __pvar_site_cache {
    ($name:ident) => {
        $crate::__private::loom::thread_local! {
            static $name: $crate::__private::SiteCache = $crate::__private::SiteCache::new();
        }
    };
}

/// Loom only: a static created afresh in every modelled execution.
#[cfg(loom)]
pub(crate) use loom::lazy_static;

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
    if AtomicU128::is_lock_free() {
        Ok(())
    } else {
        Err("128-bit atomics are not lock-free on this CPU; pvar's handle state needs them")
    }
}
