//! Self-observation: the engine's own variables, so that a tool attached to
//! any process finds something.
//!
//! Everything lives in the category [`CATEGORY`] (`"pvar_engine"`).
//!
//! Performance variables (computed by callback, read-only, continuous):
//!
//! | name | class | value |
//! |---|---|---|
//! | `pvar_engine_sessions` | LEVEL | pvar sessions allocated ([`Registry::tool_stats`](crate::Registry::tool_stats)) |
//! | `pvar_engine_handles` | LEVEL | pvar handles allocated |
//! | `pvar_engine_reads` | COUNTER | pvar handle reads served (`read`, `readreset`); a handle counts those served since it was allocated |
//! | `pvar_engine_live_threads` | LEVEL | threads holding a per-thread id ([`crate::live_threads`]) |
//! | `pvar_engine_thread_records` | LEVEL | per-thread records of this registry ([`Registry::thread_records`](crate::Registry::thread_records)) |
//!
//! Control variables (read-only for tools):
//!
//! | name | type | scope | value |
//! |---|---|---|---|
//! | `PVAR_ENGINE_VERSION` | `MPI_CHAR` | CONSTANT | the crate version |
//! | `PVAR_ENGINE_INSTRUMENTATION` | `MPI_INT` (bool) | CONSTANT | 0 when built with `compile-out` |
//! | `PVAR_ENGINE_THREAD_LEVEL` | `MPI_INT` (enum `mpi_thread_level`) | READONLY | the thread level provided, `MPI_THREAD_MULTIPLE` |
//!
//! When: they are registered in [`global`](crate::global) by the first
//! [`mpit::init_thread`](crate::mpit::init_thread) (or
//! `init_count_increment`), not when `global()` is created, so that
//! components using `global()` without a tool see only their own
//! variables. Isolated registries get them only through
//! [`register_engine_vars`]. Registration is idempotent.

use std::sync::OnceLock;

use crate::callback::Callbacks;
use crate::enums::Enumeration;
use crate::error::Result;
use crate::kinds::{Datatype, PvarClass, Scope, Verbosity};
use crate::registry::{Registry, RegistryInner};

/// The category holding the engine's own variables.
pub const CATEGORY: &str = "pvar_engine";

/// Names of the engine's performance variables, in registration order.
pub const PVARS: [&str; 5] = [
    "pvar_engine_sessions",
    "pvar_engine_handles",
    "pvar_engine_reads",
    "pvar_engine_live_threads",
    "pvar_engine_thread_records",
];

/// Names of the engine's control variables, in registration order.
pub const CVARS: [&str; 3] = [
    "PVAR_ENGINE_VERSION",
    "PVAR_ENGINE_INSTRUMENTATION",
    "PVAR_ENGINE_THREAD_LEVEL",
];

/// A callback's view of the registry that owns it.
///
/// Not an `Arc` or `Weak`: upgrading or dropping one in a callback could
/// allocate or free, and tools may read these variables from a signal
/// handler. A plain pointer is enough: the callbacks are stored inside this
/// very registry (in its variables' storage) and the engine only calls them
/// from tool operations made through a `&Registry`, so whenever a callback
/// runs, the registry it points to is alive.
#[derive(Clone, Copy)]
struct Owner(*const RegistryInner);

// SAFETY: `RegistryInner` is `Sync`; `Owner` only hands out shared
// references to it, under the liveness argument above.
unsafe impl Send for Owner {}
// SAFETY: as above.
unsafe impl Sync for Owner {}

impl Owner {
    fn of(reg: &Registry) -> Self {
        Self(&*reg.inner as *const RegistryInner)
    }

    fn get(&self) -> &RegistryInner {
        // SAFETY: see the type's documentation: the registry owning the
        // callback that calls this is alive for the duration of the call.
        unsafe { &*self.0 }
    }
}

/// Registers the engine's own category, performance variables and control
/// variables in `reg`. Idempotent.
pub fn register_engine_vars(reg: &Registry) -> Result<()> {
    reg.define_category(
        CATEGORY,
        "The pvar engine itself: tool sessions and handles, threads, reads served, build settings",
    )?;
    let stat = |f: fn(crate::tool::ToolStats) -> u64| {
        let owner = Owner::of(reg);
        Callbacks::new(move |_, _| f(owner.get().tool.stats()))
    };
    let level = |name: &str, desc: &str, cb: Callbacks| {
        reg.callback_pvar(name, PvarClass::Level, Datatype::UnsignedLongLong, cb)
            .description(desc)
            .verbosity(Verbosity::MpidevBasic)
            .category(CATEGORY)
            .register()
            .map(|_| ())
    };
    level(
        PVARS[0],
        "pvar sessions currently allocated",
        stat(|s| s.sessions as u64),
    )?;
    level(
        PVARS[1],
        "pvar handles currently allocated",
        stat(|s| s.handles as u64),
    )?;
    reg.callback_pvar(
        PVARS[2],
        PvarClass::Counter,
        Datatype::UnsignedLongLong,
        stat(|s| s.reads),
    )
    .description(
        "pvar handle reads served (read and readreset); like every COUNTER, a handle \
         counts from its allocation: the reads served since then",
    )
    .verbosity(Verbosity::MpidevBasic)
    .category(CATEGORY)
    .readonly(true)
    .continuous(true)
    .register()?;
    level(
        PVARS[3],
        "threads currently holding a per-thread id (all registries)",
        Callbacks::new(|_, _| crate::live_threads() as u64),
    )?;
    let owner = Owner::of(reg);
    level(
        PVARS[4],
        "per-thread records in this registry (threads that ever updated a summed variable)",
        Callbacks::new(move |_, _| owner.get().hot.cells.thread_records() as u64),
    )?;

    reg.cvar::<String>(CVARS[0])
        .default(env!("CARGO_PKG_VERSION"))
        .description("version of the pvar engine")
        .scope(Scope::Constant)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    reg.cvar::<bool>(CVARS[1])
        .default(crate::component::ENABLED)
        .description("1 if component updates are compiled in, 0 if built with `compile-out`")
        .scope(Scope::Constant)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    let levels = Enumeration::new(
        "mpi_thread_level",
        [
            ("MPI_THREAD_SINGLE", crate::mpit::THREAD_SINGLE),
            ("MPI_THREAD_FUNNELED", crate::mpit::THREAD_FUNNELED),
            ("MPI_THREAD_SERIALIZED", crate::mpit::THREAD_SERIALIZED),
            ("MPI_THREAD_MULTIPLE", crate::mpit::THREAD_MULTIPLE),
        ],
    )?;
    reg.cvar::<i32>(CVARS[2])
        .default(crate::mpit::THREAD_MULTIPLE)
        .enumeration(levels)
        .description("thread level the tool interface provides (always MPI_THREAD_MULTIPLE)")
        .scope(Scope::Readonly)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    Ok(())
}

/// Registers the engine's variables in [`global`](crate::global) once per
/// process; a failure is reported on standard error (it would mean a
/// component took one of the names).
pub(crate) fn register_global() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if let Err(e) = register_engine_vars(crate::global()) {
            eprintln!("pvar: registering the engine's own variables failed: {e}");
        }
    });
}
