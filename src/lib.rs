//! # pvar — a lock-free performance-variable engine implementing MPI_T
//!
//! Runtimes (**components**) register performance variables — counters,
//! timers, levels, watermarks, states — and update them on their hot paths.
//! Measured against a plain thread-local `+= 1` in the same run, on two
//! shared 2-CPU hosts (an AMD EPYC, an Intel Xeon; `docs/benchmarks.md`,
//! `pvar bench` on yours): a use-site macro (`pvar::counter!("sent").inc()`)
//! or a thread-bound handle 0.8–1.2×, a shared `Counter::inc` handle 2–4×,
//! a C `PVAR_COUNTER_INC` 1.0–1.2× a C thread-local in a `dlopen`ed
//! component and 0.9–2.3× one in an executable; prometheus and metrics-rs
//! counters took 6–25× (1 thread) and 13–79× (2 threads), following the
//! host's cost of a shared atomic add. **Tools** (profilers,
//! tracers, tuners) discover the variables, open sessions, bind handles and
//! start / stop / read / reset them with the semantics of the MPI tool
//! information interface (MPI_T), from any thread and, for sampling tools,
//! from signal handlers.
//!
//! ```toml
//! [dependencies]
//! pvar = "0.1"   # not yet on crates.io: pvar = { path = "…/pvar" } meanwhile
//! ```
//!
//! Its normal dependencies are `libc`, `portable-atomic` and `quanta`.
//! Features, all additive: `ffi` (the C interface: the component symbols
//! `pvar_*` of `include/pvar.h`, and the MPI_T functions Rust-callable as
//! `pvar::ffi::mpi_t`; the `pvar-capi` package builds `libpvar` on it and
//! exports `MPI_T_*`, the MPI interposer serves its own; a Rust program
//! does not need it). `metrics` adds `pvar::recorder`, a recorder for the
//! `metrics` crate that makes `metrics::counter!` & co. record into pvar
//! variables. `rsmpi` adds `pvar::report::rsmpi`, the cross-rank report over
//! the `mpi` crate (rsmpi) for Rust MPI programs. Not a feature: building
//! with `RUSTFLAGS="--cfg pvar_compile_out"` compiles every update to
//! nothing (registration and the tool side keep working; [`INSTRUMENTED`]
//! says which build this is) — a cfg the final program's builder sets, so
//! that no dependency can switch another crate's counters off.
//!
//! The shortest way, in the global registry (see
//! [`counter!`](crate::counter!) and the component guide):
//!
//! ```
//! fn on_send(bytes: usize) {
//!     pvar::counter!("lib_msgs_sent", description = "messages sent").inc(); // 1.0× thread-local
//!     pvar::aggregate!("lib_bytes_sent").add(bytes as u64);
//! }
//! on_send(64);
//! assert_eq!(pvar::counter!("lib_msgs_sent", description = "messages sent").get(), 1);
//! ```
//!
//! With handles, in a registry of your own, and a tool's session:
//!
//! ```
//! use pvar::Registry;
//!
//! let reg = Registry::new();
//! let sent = reg.counter("msgs_sent").description("messages sent").register()?;
//!
//! // Component side: any thread, no lock, exact totals (2.0× thread-local).
//! let threads: Vec<_> = (0..4)
//!     .map(|_| {
//!         let sent = sent.clone();
//!         std::thread::spawn(move || (0..1000).for_each(|_| sent.inc()))
//!     })
//!     .collect();
//! threads.into_iter().for_each(|t| t.join().unwrap());
//! assert_eq!(sent.get(), 4000);
//!
//! // Tool side: a session, a handle that counts from its start.
//! let session = reg.session()?;
//! let h = session.handle(sent.index())?.typed::<u64>()?;
//! h.start()?;
//! sent.add(5);
//! assert_eq!(h.read()?, 5);
//! # Ok::<(), pvar::Error>(())
//! ```
//!
//! ## How it works
//!
//! **Updates touch only the calling thread's memory.** Every summed
//! variable element (COUNTER, AGGREGATE, TIMER, LEVEL) has one 8-byte cell
//! in every thread's *record* of the registry's cell space; records are
//! cache-line isolated chunks that never move. An update finds the thread's
//! record through a one-entry thread-local cache, then does a relaxed load
//! and a relaxed store of its own cell: no lock, no read-modify-write, no
//! shared cache line. Thread ids (and with them records) are reused after a
//! thread exits, so counts of exited threads are kept.
//!
//! **Reads merge.** A read sums the element's cell over every thread's
//! record; each cell has one writer and moves only forward, so successive
//! sums never go backwards. Shared classes (STATE, SIZE, PERCENTAGE,
//! GENERIC) are one atomic per element; watermarks keep the level and each
//! started handle's mark, and an update walks the marks only when its value
//! passes a threshold kept below all of them: one store and one load in
//! steady state, with any number of started handles.
//!
//! **Handles keep their own state.** A tool handle never writes the hot
//! cells. A SUM handle keeps `accum − offset` per element in a 128-bit word
//! next to its run tag, so start, stop, reset and readreset are each one
//! compare-and-swap against one merged read: nothing is lost or counted
//! twice between a read and its reset, and sessions never see each other.
//! A stopped handle is frozen. All of this is atomics only, so sampling
//! tools may call it from signal handlers; keys are generation-checked
//! slots, so a stale or foreign key is an error code, never undefined
//! behaviour.
//!
//! ## The floors
//!
//! Each module imports only from the floors below it (checked by
//! `tests/layering.rs`):
//!
//! 1. `sync` — the one switch between `std` and loom primitives;
//! 2. `lockfree` — the structures: append vector, recycler and its index
//!    stack, the slot table behind every tool key and event registration,
//!    tagged words, striped counters, isolated slices, the walk gate, the
//!    variable table shape;
//! 3. `vocabulary` — the MPI_T vocabulary: [`PvarClass`], [`Datatype`],
//!    [`Error`], [`Enumeration`], [`PvarInfo`], [`CvarInfo`];
//! 4. `category` — the category tree ([`Categories`]); `hot` — per-thread
//!    cells (a safe cell range is their only face), storage per class, the
//!    [`Clock`];
//! 5. `pvar` — the performance-variable table ([`Pvars`]) and the
//!    component handles ([`Counter`], [`Timer`], …); `cvar` — control
//!    variables ([`Cvars`], [`Cvar`], [`cvar!`]); `event` — MPI 4 events
//!    and sources ([`Events`], [`Event`], [`EventRegistration`]);
//! 6. `tool` — sessions and handles: typed ([`Session`]) and keyed
//!    ([`Tool`]);
//! 7. `registry` — [`Registry`], the composition root;
//! 8. `export` — snapshots of a registry, the shared-memory region other
//!    processes read them from (`pvar top <pid>`), Prometheus text;
//!    `recorder` (feature `metrics`) — a `metrics` crate recorder;
//!    `sampler` — the [`Sampler`], a signal-driven sampling tool;
//! 9. `process` — [`global`], MPI_T init/finalize, the engine's own
//!    variables; `report` — the cross-rank report of an MPI job (the
//!    ranks' partials reduced along a binomial tree; over rsmpi with the
//!    feature `rsmpi`);
//! 10. `ffi` — the C interface (`libpvar`, `include/mpi_t.h`,
//!     `include/pvar.h`); the `pvar` CLI is a separate binary on top, and
//!     so is the MPI interposer (`mpi/`, `libpvar_mpi.so`, [`guides::mpi`]).
//!
//! ## Public paths
//!
//! Every public item has exactly one path (checked by
//! `tests/layering.rs`). What every component and tool uses — the
//! registry, the handles, sessions, events, control variables, the
//! vocabulary, [`Sampler`] — is at the crate root, re-exported from
//! private modules. An area a program opts into is a public module,
//! reached only through its own path and never re-exported at the root:
//! [`export`] (the view from outside the process), [`report`] (the
//! cross-rank report), `recorder` (feature `metrics`), [`process`] (MPI_T
//! initialisation by reference count, the engine's own variables),
//! [`guides`]. `#[doc(hidden)]` modules (`ffi`, `__private`, test hooks)
//! are not API.
//!
//! ## Guides
//!
//! `docs/` holds the guides, rendered here too: [`guides::component`]
//! (declaring and updating variables), [`guides::tool`] (sessions and
//! handles, the class × storage table), [`guides::events`] (MPI 4 events:
//! raising, callbacks by safety level, drops), [`guides::export`] (the
//! view from outside the process), [`guides::signal_safety`] (what a
//! handler may call), [`guides::design`] (storage layout, protocols),
//! [`guides::c_interface`] and [`guides::benchmarks`].
//!
//! Examples (`cargo run --release --example NAME` in the repository):
//! `quickstart` (a component and a tool's session, both sides on one
//! page), `use_sites` (the use-site macros: arrays, every hot class),
//! `sampler` (a `SIGPROF` sampling profiler reading handles in its signal
//! handler); in C, `examples/c/hello_tool.c` (a `pvar.h` component and an
//! `mpi_t.h` tool, built against an installed `libpvar`). The `pvar`
//! command (`cargo run --release -- demo`, `list`, `bench`) is a larger
//! worked example of both sides.

#![deny(missing_docs)]

mod category;
mod cvar;
mod event;
#[cfg(not(loom))]
pub mod export;
#[cfg(all(feature = "ffi", not(loom)))]
#[doc(hidden)]
pub mod ffi;
pub mod guides;
mod hot;
mod lockfree;
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api;
#[cfg(all(test, not(loom)))]
mod miri_tests;
pub mod process;
mod pvar;
#[cfg(all(feature = "metrics", not(loom)))]
pub mod recorder;
mod registry;
#[cfg(not(loom))]
pub mod report;
#[cfg(all(target_os = "linux", not(loom)))]
mod sampler;
mod sync;
mod tool;
mod vocabulary;

pub use category::{Categories, CategoryInfo};
pub use cvar::{
    BoundCvar, Cvar, CvarBuilder, CvarHandle, CvarType, CvarValue, Cvars, DEFAULT_STRING_CAPACITY,
    NumericCvar, StaticCvar,
};
pub use event::{
    DEFAULT_BUFFER_ENTRIES, DroppedCallback, Element, Event, EventBuilder, EventCallback,
    EventInstance, EventRecord, EventRegistration, EventStats, Events, FreeCallback,
    MAX_REGISTRATIONS, TimestampFn,
};
pub use hot::clock::{Clock, MockTime};
pub use process::init::global;
pub use pvar::{
    Aggregate, Bound, CallbackVar, ClassHandle, ComponentHandle, Counter, Generic, HighWatermark,
    Level, LocalCounter, LowWatermark, Percentage, PvarBuilder, Pvars, Site, SiteDecl, SiteRef,
    Size, State, Timer, TimerGuard, WatermarkMark,
};

/// What the use-site macros expand to and nothing else may name.
#[doc(hidden)]
pub mod __private {
    pub use crate::cvar::CvarDecl;
    pub use crate::hot::cells::site_cache::SiteCache;
    pub use crate::process::init::{global_cvars, global_pvars, global_pvars_addr};
    pub use crate::pvar::DeclaredSite;
    #[cfg(loom)]
    pub use loom;
}
pub use registry::Registry;
#[cfg(all(target_os = "linux", not(loom)))]
pub use sampler::{Sample, SampleClock, Sampler, SamplerBuilder, SamplerStats};
pub use tool::{
    Handle, HandleId, HandleInfo, Session, SessionId, Tool, ToolStats, TypedHandle, Values,
};
pub use vocabulary::callback::{Callbacks, Notify};
pub use vocabulary::datatype::{Datatype, Magnitude, Value};
pub use vocabulary::enumeration::{EnumItem, Enumeration, Enumerations};
pub use vocabulary::error::{Error, ErrorCode, Reason, Result};
pub use vocabulary::kinds::{
    BindKind, CbSafety, ObjectRef, PvarClass, Scope, SourceOrder, THREAD_FUNNELED, THREAD_MULTIPLE,
    THREAD_SERIALIZED, THREAD_SINGLE, Verbosity,
};
pub use vocabulary::{CvarInfo, ElementCount, EventInfo, MAX_RECORD_BYTES, PvarInfo, SourceInfo};

/// `false` when this build compiles every component update to nothing
/// (`RUSTFLAGS="--cfg pvar_compile_out"`): variables register and tools
/// read them, but values stay at zero.
pub const INSTRUMENTED: bool = pvar::ENABLED;

/// Number of threads currently registered with the engine (holding a
/// per-thread id), across all registries. Async-signal-safe.
pub fn live_threads() -> u32 {
    hot::cells::live_threads()
}
