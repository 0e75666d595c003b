//! The tool side: performance-experiment sessions and handles with the
//! MPI_T semantics (MPI 4.1 §15.3.7).
//!
//! Two faces over the same sessions and handles:
//!
//! - **The typed API** ([`Session`], [`Handle`], [`TypedHandle`], from
//!   [`Registry::session`](crate::Registry::session)): owned values that
//!   free themselves when dropped; a handle is validated once, when it is
//!   allocated, and knows its variable's datatype, so a read returns `u64`,
//!   `i32`, `f64` or arrays of them ([`Values`] where the type is known only
//!   at run time), and asking for the wrong type is an error, never
//!   reinterpreted bits. For Rust tools.
//! - **The keyed API** ([`Tool`], from [`Registry::tool`](crate::Registry::tool)):
//!   every call takes a [`SessionId`] and a [`HandleId`], `Copy` keys that
//!   are generation-checked on every call, and moves raw `u64` element
//!   values (the datatype's bits). The C interface's shape, and the one a
//!   signal handler uses: nothing in it is dropped, so a handler can call
//!   it with keys kept in `static`s.
//!
//! Keys name slots of lock-free [slot tables](crate::lockfree::slot_table):
//! a freed, stale, made-up or foreign (another registry's) key is detected
//! and gets `MPI_T_ERR_INVALID_SESSION` / `MPI_T_ERR_INVALID_HANDLE`, never
//! undefined behaviour. The C interface passes the same keys as its opaque
//! handle values.
//!
//! Async-signal-safe (on sessions and handles that exist): `start`,
//! `stop`, `read`, `write`, `reset`, `readreset`, and `start_all` /
//! `stop_all` / `reset_all`, plus the handle queries and [`Tool::stats`].
//! They take no lock, allocate nothing, read no thread-local and clone no
//! `Arc`: a reader reference on the session and handle slots is one CAS,
//! a handle's state is one 64-bit run word and one 128-bit word per element
//! changed by CAS (see `handle.rs`), so a handler that interrupts any of
//! these, or an allocation or free, on its own thread never waits for it.
//! Before the first signal: create the registry (`pvar::global()`),
//! allocate the session and handles. Allocation and freeing of sessions
//! and handles are not async-signal-safe. Each method's documentation ends
//! with its "Async-signal-safe:" line; the contract is
//! `docs/signal-safety.md`.

mod handle;
mod keyed;
mod session;
mod session_handles;

#[cfg(feature = "ffi")]
pub(crate) use handle::HandleData;
pub use handle::HandleInfo;
pub(crate) use keyed::EngineEvents;
pub use keyed::{HandleId, SessionId, Tool, ToolStats};
pub use session::{Handle, Session, TypedHandle, Values};
