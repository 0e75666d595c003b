//! Self-observation: the engine's own variables, so that a tool attached to
//! any process finds something.
//!
//! Everything lives in the category [`CATEGORY`] (`"pvar_engine"`).
//!
//! Performance variables (computed by callback, read-only, continuous):
//!
//! | name | class | value |
//! |---|---|---|
//! | `pvar_engine_sessions` | LEVEL | pvar sessions allocated ([`Tool::stats`](crate::Tool::stats)) |
//! | `pvar_engine_handles` | LEVEL | pvar handles allocated |
//! | `pvar_engine_reads` | COUNTER | pvar handle reads served (`read`, `readreset`); a handle counts those served since it was allocated |
//! | `pvar_engine_live_threads` | LEVEL | threads holding a per-thread id ([`live_threads`](crate::live_threads)) |
//! | `pvar_engine_thread_records` | LEVEL | per-thread records of this registry ([`Pvars::thread_records`](crate::Pvars::thread_records)) |
//! | `pvar_engine_events_delivered` | COUNTER | event callbacks run ([`EventStats`](crate::EventStats)) |
//! | `pvar_engine_events_deferred` | COUNTER | event deliveries that waited in a thread buffer |
//! | `pvar_engine_events_dropped` | COUNTER | event deliveries lost (no callback allowed, no room to wait) |
//! | `pvar_engine_events_waiting` | LEVEL | event deliveries waiting in thread buffers |
//!
//! Event types (MPI 4 events, unbound, source 0):
//!
//! | name | record | raised when |
//! |---|---|---|
//! | `pvar_engine_handle_alloc` | (`MPI_INT` pvar index, `MPI_INT` element count) | a pvar handle is allocated |
//! | `pvar_engine_handle_free` | (`MPI_INT` pvar index) | a pvar handle is freed |
//!
//! Control variables (read-only for tools):
//!
//! | name | type | scope | value |
//! |---|---|---|---|
//! | `PVAR_ENGINE_VERSION` | `MPI_CHAR` | CONSTANT | the crate version |
//! | `PVAR_ENGINE_INSTRUMENTATION` | `MPI_INT` (bool) | CONSTANT | 0 when built with `--cfg pvar_compile_out` |
//! | `PVAR_ENGINE_THREAD_LEVEL` | `MPI_INT` (enum `mpi_thread_level`) | READONLY | the highest thread level the tool interface supports, `MPI_THREAD_MULTIPLE` (`MPI_T_init_thread` provides the level required) |
//! | `PVAR_EVENT_BUFFER_ENTRIES` | `MPI_UNSIGNED_LONG_LONG` | LOCAL | entries of each thread's event buffer made from now on (default 256; environment `PVAR_EVENT_BUFFER_ENTRIES`) |
//!
//! When: they are registered in [`global`](crate::global) by the first
//! [`init_thread`](super::init_thread) (or
//! `init_count_increment`), not when `global()` is created, so that
//! components using `global()` without a tool see only their own
//! variables. Isolated registries get them only through
//! [`register_engine_vars`]. Registration is idempotent.

use crate::registry::Registry;
use crate::tool::ToolStats;
use crate::vocabulary::callback::Callbacks;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::enumeration::Enumeration;
use crate::vocabulary::error::Result;
use crate::vocabulary::kinds::{
    PvarClass, Scope, THREAD_FUNNELED, THREAD_MULTIPLE, THREAD_SERIALIZED, THREAD_SINGLE, Verbosity,
};

/// The category holding the engine's own variables.
pub const CATEGORY: &str = "pvar_engine";

/// Names of the engine's performance variables, in registration order.
pub const PVARS: [&str; 9] = [
    "pvar_engine_sessions",
    "pvar_engine_handles",
    "pvar_engine_reads",
    "pvar_engine_live_threads",
    "pvar_engine_thread_records",
    "pvar_engine_events_delivered",
    "pvar_engine_events_deferred",
    "pvar_engine_events_dropped",
    "pvar_engine_events_waiting",
];

/// Names of the engine's event types, in registration order.
pub const EVENTS: [&str; 2] = ["pvar_engine_handle_alloc", "pvar_engine_handle_free"];

/// Names of the engine's control variables, in registration order.
pub const CVARS: [&str; 4] = [
    "PVAR_ENGINE_VERSION",
    "PVAR_ENGINE_INSTRUMENTATION",
    "PVAR_ENGINE_THREAD_LEVEL",
    "PVAR_EVENT_BUFFER_ENTRIES",
];

/// A callback's view of a part of the registry that stores it (its tool
/// side, or its performance variables).
///
/// Not an `Arc` or `Weak`: upgrading or dropping one in a callback could
/// allocate or free, and tools may read these variables from a signal
/// handler (and an `Arc` would make the registry own itself). A plain
/// pointer is enough: the callbacks are stored inside this very registry
/// (in its variables' storage, which its `Pvars` owns), and the engine
/// calls them only from operations of this registry's `Tool` (which holds
/// its `Pvars`) or of a component handle (which holds them too). So
/// whenever a callback runs, the registry's `Tool` and `Pvars` — each
/// behind its own `Arc`, never moved — are alive.
struct Owner<T>(*const T);

impl<T> Clone for Owner<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Owner<T> {}

// SAFETY: `T` (`Tool`, `Pvars`) is `Sync`; `Owner` only hands out shared
// references to it, under the liveness argument above.
unsafe impl<T: Sync> Send for Owner<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Owner<T> {}

impl<T> Owner<T> {
    fn of(part: &T) -> Self {
        Self(part as *const T)
    }

    fn get(&self) -> &T {
        // SAFETY: see the type's documentation: the registry part owning
        // the callback that calls this is alive for the duration of the
        // call.
        unsafe { &*self.0 }
    }
}

/// Registers the engine's own category, performance variables and control
/// variables in `reg`. Idempotent.
pub fn register_engine_vars(reg: &Registry) -> Result<()> {
    reg.categories().define(
        CATEGORY,
        "The pvar engine itself: tool sessions and handles, threads, reads served, build settings",
    )?;
    let stat = |f: fn(ToolStats) -> u64| {
        let tool = Owner::of(reg.tool());
        Callbacks::new(move |_, _| f(tool.get().stats()))
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
        Callbacks::new(|_, _| crate::hot::cells::live_threads() as u64),
    )?;
    let pvars = Owner::of(reg.pvars());
    level(
        PVARS[4],
        "per-thread records in this registry (threads that ever updated a summed variable)",
        Callbacks::new(move |_, _| pvars.get().thread_records() as u64),
    )?;
    let events = Owner::of(reg.events());
    let event_stat = |name: &str, class, desc: &str, f: fn(crate::event::EventStats) -> u64| {
        reg.callback_pvar(
            name,
            class,
            Datatype::UnsignedLongLong,
            Callbacks::new(move |_, _| f(events.get().stats())),
        )
        .description(desc)
        .verbosity(Verbosity::MpidevBasic)
        .category(CATEGORY)
        .readonly(true)
        .continuous(true)
        .register()
        .map(|_| ())
    };
    event_stat(
        PVARS[5],
        PvarClass::Counter,
        "event callbacks run (at the raise or later from a thread buffer)",
        |s| s.delivered,
    )?;
    event_stat(
        PVARS[6],
        PvarClass::Counter,
        "event deliveries that waited in a thread buffer for a delivery point",
        |s| s.deferred,
    )?;
    event_stat(
        PVARS[7],
        PvarClass::Counter,
        "event deliveries lost: no callback allowed at the point and no room (or no buffer) to wait",
        |s| s.dropped,
    )?;
    level(
        PVARS[8],
        "event deliveries waiting in thread buffers",
        Callbacks::new(move |_, _| events.get().waiting()),
    )?;
    let handle_alloc = reg
        .event::<(i32, i32)>(EVENTS[0])
        .description("a pvar handle was allocated: pvar index, element count")
        .verbosity(Verbosity::MpidevBasic)
        .category(CATEGORY)
        .register()?;
    let handle_free = reg
        .event::<i32>(EVENTS[1])
        .description("a pvar handle was freed: pvar index")
        .verbosity(Verbosity::MpidevBasic)
        .category(CATEGORY)
        .register()?;
    reg.tool().set_engine_events(crate::tool::EngineEvents {
        handle_alloc,
        handle_free,
    });

    reg.cvar::<String>(CVARS[0])
        .default(env!("CARGO_PKG_VERSION"))
        .description("version of the pvar engine")
        .scope(Scope::Constant)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    reg.cvar::<bool>(CVARS[1])
        .default(crate::pvar::ENABLED)
        .description(
            "1 if component updates are compiled in, 0 if built with `--cfg pvar_compile_out`",
        )
        .scope(Scope::Constant)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    let levels = Enumeration::new(
        "mpi_thread_level",
        [
            ("MPI_THREAD_SINGLE", THREAD_SINGLE),
            ("MPI_THREAD_FUNNELED", THREAD_FUNNELED),
            ("MPI_THREAD_SERIALIZED", THREAD_SERIALIZED),
            ("MPI_THREAD_MULTIPLE", THREAD_MULTIPLE),
        ],
    )?;
    reg.cvar::<i32>(CVARS[2])
        .default(THREAD_MULTIPLE)
        .enumeration(levels)
        .description(
            "highest thread level the tool interface supports (MPI_THREAD_MULTIPLE); \
             MPI_T_init_thread provides the level required",
        )
        .scope(Scope::Readonly)
        .verbosity(Verbosity::UserDetail)
        .category(CATEGORY)
        .register()?;
    let entries = reg
        .cvar::<u64>(CVARS[3])
        .default(crate::event::DEFAULT_BUFFER_ENTRIES as u64)
        .env(["PVAR_EVENT_BUFFER_ENTRIES"])
        .description(
            "entries of each thread's event buffer, where event deliveries wait when no \
             callback may run at the raise; applies to buffers made after a change",
        )
        .verbosity(Verbosity::TunerBasic)
        .category(CATEGORY)
        .register()?;
    reg.events()
        .set_buffer_entries_from(Box::new(move || entries.get() as usize));
    Ok(())
}
