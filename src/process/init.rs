//! The process-wide registry ([`global`]) and the initialisation and
//! finalisation of the tool interface over it (`MPI_T_init_thread` /
//! `MPI_T_finalize`, MPI 4.1 §15.3.4).
//!
//! The interface is reference-counted: every successful init adds one,
//! every finalize removes one; it is initialised while the count is
//! positive. Finalizing more often than initialising fails with
//! `MPI_T_ERR_NOT_INITIALIZED`, and initialising again after the last
//! finalize works.
//!
//! Two ways in:
//!
//! - Rust: [`init_thread`] returns the provided thread level and a
//!   [`ToolGuard`]; holding the guard *is* being initialised, and dropping
//!   it (or calling [`ToolGuard::finalize`]) finalizes once. The guard
//!   gives the registry ([`ToolGuard::registry`]).
//! - The C interface: [`init_count_increment`] and
//!   [`init_count_decrement`] are the counted primitives behind
//!   `MPI_T_init_thread` / `MPI_T_finalize`, and [`check_initialized`] is
//!   what every other `MPI_T_*` entry point calls first so that calls made
//!   before init, or after the last finalize, return
//!   `MPI_T_ERR_NOT_INITIALIZED`. Do not mix a guard and raw decrements
//!   for the same init: a guard dropped after the count already reached
//!   zero does nothing.
//!
//! Thread level: the engine is fully thread-safe, so it can provide any
//! level; it provides the level required, as MPICH and Open MPI do (the
//! standard: "if possible, the call will return provided = required"). A
//! `required` that is none of [`THREAD_SINGLE`], [`THREAD_FUNNELED`],
//! [`THREAD_SERIALIZED`], [`THREAD_MULTIPLE`] is refused with `MPI_ERR_ARG`
//! ([`Error::Arg`], MPICH's code for it), and the interface is not
//! initialised. A tool that asked for less than `MULTIPLE` may still call
//! from any thread: the engine does not hold it to its request.
//!
//! Self-observation: the first init registers the engine's own variables
//! in [`global`] (see [`observe`](super::observe)).
//! Isolated [`Registry`] values are never touched.
//!
//! The Rust [`Registry`] methods themselves do not check
//! the count: a component or test may use a registry without initialising
//! the tool interface.

use super::observe::register_engine_vars;
use crate::cvar::Cvars;
use crate::pvar::Pvars;
use crate::registry::Registry;
use crate::sync::unmodelled::{AtomicUsize, OnceLock};
use crate::sync::{Arc, Ordering};
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{
    THREAD_FUNNELED, THREAD_MULTIPLE, THREAD_SERIALIZED, THREAD_SINGLE,
};

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// The process-wide registry, created (and its clock calibrated) on first
/// call. Call it once before installing signal handlers that use it.
///
/// With `PVAR_EXPORT=1` in the environment, creating it also starts
/// exporting it (see [`export`](crate::export): `pvar top <pid>` then
/// sees it), for the rest of the process.
pub fn global() -> &'static Registry {
    GLOBAL.get_or_init(|| {
        let reg = Registry::new();
        #[cfg(not(loom))]
        export_from_env(&reg);
        reg
    })
}

/// Starts exporting `reg` if the environment asks for it
/// (`PVAR_EXPORT`); a failure is reported on standard error, the registry
/// works without.
#[cfg(not(loom))]
fn export_from_env(reg: &Registry) {
    if let Some(options) = crate::export::ExportOptions::from_env() {
        match crate::export::Exporter::start(reg, options) {
            Ok(e) => {
                if let Some(n) = e.notice() {
                    eprintln!("pvar: {n}");
                }
                crate::export::leak_for_process(e)
            }
            Err(e) => eprintln!("pvar: PVAR_EXPORT is set but exporting failed: {e}"),
        }
    }
}

/// The global registry's performance variables: where a use-site macro
/// ([`counter!`](crate::counter!), …) registers its variable (the macro
/// passes this function).
#[doc(hidden)]
pub fn global_pvars() -> &'static Arc<Pvars> {
    global().pvars_shared()
}

/// The address of the global registry's variable table: how a use site's
/// entry in the list of declared sites names its registry (the macros
/// pass this function).
#[doc(hidden)]
pub fn global_pvars_addr() -> *const () {
    Arc::as_ptr(global_pvars()).cast()
}

/// The global registry's control variables: where a
/// [`cvar!`](crate::cvar!) static registers itself (the macro passes this
/// function).
#[doc(hidden)]
pub fn global_cvars() -> &'static Arc<Cvars> {
    global().cvars_shared()
}

/// Registers the engine's variables in [`global`] once per process; a
/// failure is reported on standard error (it would mean a component took
/// one of the names).
fn register_engine_vars_once() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if let Err(e) = register_engine_vars(global()) {
            eprintln!("pvar: registering the engine's own variables failed: {e}");
        }
    });
}

/// A process-wide counter (a `static`: `std`'s atomic in both builds).
static INIT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Adds one to the init count (`MPI_T_init_thread`) and returns the
/// provided thread level: `required` itself. `MPI_ERR_ARG`
/// ([`Error::Arg`]) if `required` is not one of the four levels; the count
/// is then unchanged. The first call in the process also registers the
/// engine's own variables in [`global`].
pub fn init_count_increment(required: i32) -> Result<i32> {
    if ![
        THREAD_SINGLE,
        THREAD_FUNNELED,
        THREAD_SERIALIZED,
        THREAD_MULTIPLE,
    ]
    .contains(&required)
    {
        return Err(Error::Arg);
    }
    register_engine_vars_once();
    INIT_COUNT
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_add(1))
        .map_err(|_| Error::CannotInit)?;
    Ok(required)
}

/// Removes one from the init count (`MPI_T_finalize`);
/// `MPI_T_ERR_NOT_INITIALIZED` if the count is already zero (finalize
/// called more often than init).
pub fn init_count_decrement() -> Result<()> {
    INIT_COUNT
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .map(|_| ())
        .map_err(|_| Error::NotInitialized)
}

/// The current init count (inits minus finalizes).
pub fn init_count() -> usize {
    INIT_COUNT.load(Ordering::Acquire)
}

/// Whether the tool interface is initialised (count > 0).
/// Async-signal-safe (one atomic load).
pub fn is_initialized() -> bool {
    init_count() > 0
}

/// `Ok` while initialised, `MPI_T_ERR_NOT_INITIALIZED` otherwise: the
/// first thing every `MPI_T_*` entry point other than init does.
pub fn check_initialized() -> Result<()> {
    if is_initialized() {
        Ok(())
    } else {
        Err(Error::NotInitialized)
    }
}

/// `MPI_T_init_thread` for Rust callers: the provided thread level (the
/// one required) and a guard that finalizes once when dropped.
/// `MPI_ERR_ARG` ([`Error::Arg`]) for a `required` that is not one of the
/// four levels.
///
/// ```
/// let (provided, guard) = pvar::process::init_thread(pvar::THREAD_SINGLE).unwrap();
/// assert_eq!(provided, pvar::THREAD_SINGLE);
/// assert_eq!(pvar::process::init_thread(7).unwrap_err(), pvar::Error::Arg);
/// assert!(pvar::process::is_initialized());
/// let n = guard.registry().pvars().len();
/// assert!(n > 0); // the engine's own variables
/// guard.finalize().unwrap();
/// ```
pub fn init_thread(required: i32) -> Result<(i32, ToolGuard)> {
    let provided = init_count_increment(required)?;
    Ok((provided, ToolGuard { _private: () }))
}

/// Proof of one `init_thread`: the tool interface stays initialised while
/// it lives. Dropping it finalizes once; [`ToolGuard::finalize`] does the
/// same and reports errors. Not `Clone`: each guard is one init.
#[must_use = "dropping the guard finalizes the tool interface"]
#[derive(Debug)]
pub struct ToolGuard {
    _private: (),
}

impl ToolGuard {
    /// The process-wide registry tools use.
    pub fn registry(&self) -> &'static Registry {
        global()
    }

    /// Finalizes once (`MPI_T_finalize`).
    pub fn finalize(self) -> Result<()> {
        // The explicit decrement replaces the one `Drop` would do.
        core::mem::forget(self);
        init_count_decrement()
    }
}

impl Drop for ToolGuard {
    fn drop(&mut self) {
        let _ = init_count_decrement();
    }
}
