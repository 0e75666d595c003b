//! The component side: registering variables and updating them, typed per
//! class as in the MPICH design table.
//!
//! | class | handle | methods |
//! |---|---|---|
//! | STATE | [`State`] | `set`, `get` |
//! | SIZE | [`Size<T>`] | `set`, `get` |
//! | PERCENTAGE | [`Percentage`] | `set`, `get` |
//! | LEVEL | [`Level<T>`] | `set`, `inc`, `dec`, `add`, `sub`, `get` |
//! | COUNTER | [`Counter`] | `inc`, `add`, `local`, `get` |
//! | AGGREGATE | [`Aggregate<T>`] | `add` (`u32`, `u64`, `f64`), `get` |
//! | TIMER | [`Timer`] | `start`, `stop`, `scoped`, `add_elapsed`, `get_seconds` |
//! | HIGH/LOWWATERMARK | [`HighWatermark<T>`], [`LowWatermark<T>`] | `init`, `update`, `level`, `watch` (a mark of its own: [`WatermarkMark`]) |
//! | GENERIC | [`Generic<T>`] | `set`, `get` |
//!
//! Every update has an `_at(i, …)` form for arrays. Variables bound to
//! objects are registered with [`PvarBuilder::register_bound`], which gives
//! a [`Bound`] from which the component creates one instance per object.
//! Variables computed by callback come from
//! [`Registry::callback_pvar`](crate::Registry::callback_pvar). The table
//! of a registry's variables (indices, metadata, registration rules) is
//! [`Pvars`].
//!
//! With the `pvar_compile_out` cfg every update compiles to nothing
//! (registration and the tool side still work; values stay at zero).
//!
//! ## Signal safety
//!
//! Every update method is async-signal-safe once the calling thread has
//! touched the variable's per-thread cells: by an earlier update on that
//! thread, or by [`Registry::prepare_thread`](crate::Registry::prepare_thread) called after the variable was
//! registered (the first touch assigns a thread id and allocates). Watermark
//! and STATE / SIZE / PERCENTAGE / GENERIC updates need no preparation.
//! Every `get` is async-signal-safe (a merged read, like a tool's).
//! Registration, [`Bound::create_instance`] and [`Bound::drop_instance`]
//! are not. A handler must not update an element that the code it
//! interrupted on the same thread may be updating: an update is a load and
//! a store of the thread's own cell, so one of the two would be lost. Each
//! type's documentation ends with its "Async-signal-safe:" line; the full
//! contract is `docs/signal-safety.md`.

mod bound;
mod builder;
mod counter;
mod declared;
mod level;
mod sharded;
mod shared;
mod site;
mod site_macros;
pub(crate) mod table;
mod timer;
mod var_id;
mod watermark;

pub use bound::{Bound, CallbackVar};
pub use builder::PvarBuilder;
pub use counter::{Aggregate, Counter, LocalCounter};
pub use declared::DeclaredSite;
pub use level::Level;
pub use shared::{Generic, Percentage, Size, State};
pub use site::{Site, SiteDecl, SiteRef};
pub use table::Pvars;
pub use timer::{Timer, TimerGuard};
pub(crate) use var_id::ENABLED;
pub use var_id::{ClassHandle, ComponentHandle};
pub use watermark::{HighWatermark, LowWatermark, WatermarkMark};
