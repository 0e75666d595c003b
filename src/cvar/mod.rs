//! Control variables (MPI 4.1 §15.3.6): typed settings with defaults,
//! scopes, binding, verbosity and enumerations, overridable from the
//! environment, declared next to the code that uses them, cheap to read on
//! a hot path, and written by tools with the `SET_NOT_NOW` / `SET_NEVER`
//! rules.
//!
//! - Declare one where it is used with the [`cvar!`](crate::cvar!) macro
//!   (a lazily registered `static` in [`global`](crate::global)), or with
//!   [`Registry::cvar`](crate::Registry::cvar) on any registry.
//! - Read it with [`Cvar::get`] / [`StaticCvar::get`]: one relaxed atomic
//!   load for numbers; a lock-free, allocation-free lookup for strings
//!   (every distinct string value stays allocated until the variable is
//!   dropped, so a reader never sees a freed string; see
//!   `docs/component-guide.md`).
//! - The component may [`freeze`](Cvar::freeze) a variable (tools then get
//!   `MPI_T_ERR_CVAR_SET_NOT_NOW`) and unfreeze it later. Variables of scope
//!   `CONSTANT` or `READONLY` refuse every tool write with
//!   `MPI_T_ERR_CVAR_SET_NEVER`; the component can still [`Cvar::set`]
//!   a `READONLY` one.
//! - Tools use the registry's [`Cvars`] table ([`Registry::cvars`](crate::Registry::cvars)):
//!   [`len`](Cvars::len), [`info`](Cvars::info), [`index`](Cvars::index),
//!   and handles: [`handle_alloc`](Cvars::handle_alloc),
//!   [`read`](Cvars::read) / [`read_value`](Cvars::read_value),
//!   [`write`](Cvars::write) / [`write_value`](Cvars::write_value),
//!   [`handle_free`](Cvars::handle_free).
//!
//! Signal safety: numeric reads through a component handle are a single
//! atomic load; string reads take no lock and allocate nothing. The
//! tool-side handle operations take a mutex and are **not**
//! async-signal-safe (the standard's signal advice concerns performance
//! variables).

mod builder;
mod decl;
mod env;
mod handle;
mod table;
mod types;
mod value;
mod var;

pub use builder::{BoundCvar, Cvar, CvarBuilder, DEFAULT_STRING_CAPACITY};
pub use decl::{CvarDecl, StaticCvar};
pub use handle::CvarHandle;
pub use table::Cvars;
pub use types::{CvarType, CvarValue, NumericCvar};
