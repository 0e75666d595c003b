//! # pvar — a lock-free performance-variable engine implementing MPI_T
//!
//! Runtimes (**components**) register performance variables — counters,
//! timers, levels, watermarks, states — and update them on their hot paths
//! at about the cost of a thread-local `+= 1`. **Tools** (profilers,
//! tracers, tuners) discover the variables, open sessions, bind handles and
//! start / stop / read / reset them with the semantics of the MPI tool
//! information interface (MPI_T), from any thread and, for sampling tools,
//! from signal handlers.
//!
//! ```
//! use pvar::Registry;
//!
//! let reg = Registry::new();
//! let sent = reg.counter("msgs_sent").description("messages sent").register().unwrap();
//! let threads: Vec<_> = (0..4)
//!     .map(|_| {
//!         let sent = sent.clone();
//!         std::thread::spawn(move || (0..1000).for_each(|_| sent.inc()))
//!     })
//!     .collect();
//! threads.into_iter().for_each(|t| t.join().unwrap());
//! assert_eq!(sent.get(), 4000); // exact, across threads
//! ```
//!
//! Layout of the crate:
//!
//! - [`registry`](Registry): indices, metadata ([`PvarInfo`]), registration rules;
//! - `cells`: per-thread sharded cells, the hot storage;
//! - [`component`]: the typed handles components update, one per class;
//! - `storage`: how each class keeps its values (sums, shared values,
//!   watermarks with subscriber lists, callbacks);
//! - [`clock`]: the calibrated timer clock;
//! - `sync`: the one place that picks `std` or `loom` primitives.
//!
//! See `docs/design.md` for the storage layout and why updates need no lock
//! and no read-modify-write.

#![warn(missing_docs)]

mod callback;
mod category;
mod cells;
pub mod clock;
pub mod component;
pub mod cvar;
mod enums;
mod error;
#[cfg(not(loom))]
mod ffi;
mod kinds;
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api;
pub mod mpit;
pub mod observe;
mod registry;
mod storage;
mod sync;
mod tool;

pub use callback::{Callbacks, Notify};
pub use category::{Categories, CategoryInfo};
pub use clock::Clock;
pub use component::{
    Aggregate, Bound, CallbackVar, Counter, Generic, HighWatermark, Level, LocalCounter,
    LowWatermark, Percentage, PvarBuilder, Size, State, Timer, TimerGuard,
};
pub use cvar::{
    BoundCvar, Cvar, CvarBuilder, CvarHandle, CvarInfo, CvarType, CvarValue, StaticCvar,
};
pub use enums::{EnumItem, Enumeration};
pub use error::{Error, ErrorCode, Result};
pub use kinds::{BindKind, Datatype, ObjectRef, PvarClass, Scope, Verbosity};
pub use registry::{ElementCount, PvarInfo, Registry, global};
pub use tool::{HandleId, Session, SessionId, ToolStats, decode_values, encode_values};

/// Number of threads currently registered with the engine (holding a
/// per-thread id), across all registries.
pub fn live_threads() -> u32 {
    cells::live_threads()
}
