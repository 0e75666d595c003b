//! The C interface: `include/mpi_t.h` (the MPI_T tool side) and
//! `include/pvar.h` (the component side), exported by `libpvar.so` /
//! `libpvar.a`. See `docs/c-interface.md`.
//!
//! Every `MPI_T_x` function is implemented here as a Rust-callable
//! `PMPI_T_x` ([`mpi_t`]); the C library (`capi/`) exports it under both
//! names.
//!
//! - `boundary`: the conventions kept by every module here (below): return
//!   codes, OUT pointers, the init check, panics caught;
//! - `strings`: the MPI_T string convention;
//! - `init`, `pvar`, `cvar`, `category`, `events`: the MPI_T functions;
//! - `component`: the component side of `include/pvar.h`;
//! - `types`: the opaque C handle types.
//!
//! Conventions kept by every module here:
//!
//! - Every `MPI_T_*` entry point other than `MPI_T_init_thread` first
//!   checks the init count ([`crate::process::check_initialized`]).
//! - Opaque C handles carry the Rust keys: `MPI_T_pvar_session` and
//!   `MPI_T_pvar_handle` are [`SessionId`](crate::SessionId) /
//!   [`HandleId`](crate::HandleId) raw values, `MPI_T_cvar_handle` a
//!   [`CvarHandle`](crate::CvarHandle) raw value, `MPI_T_enum` an
//!   enumeration index + 1. Nothing is ever dereferenced through them, so a
//!   stale or made-up value is an error code, never undefined behaviour.
//! - Pointers the caller passes are checked for NULL and alignment before
//!   use (`boundary::out`); what cannot be checked (that a non-NULL pointer points
//!   to enough writable memory) is the caller's contract, as in any C API.
//! - Panics never cross the boundary: each body runs under
//!   `catch_unwind` and a panic becomes `MPI_T_ERR_INVALID`.

pub(crate) mod boundary;
pub(crate) mod category;
pub(crate) mod component;
pub(crate) mod cvar;
pub(crate) mod events;
pub(crate) mod init;
pub(crate) mod pvar;
pub(crate) mod strings;
mod types;

/// The engine's MPI_T functions (`PMPI_T_*`, with the signatures and the
/// constants of `include/mpi_t.h`), callable from Rust: for a library that
/// serves `MPI_T_*` itself and forwards to these for pvar's variables (the
/// MPI interposer in `mpi/`). Not a stable API.
pub mod mpi_t {
    pub use super::category::*;
    pub use super::cvar::*;
    pub use super::events::*;
    pub use super::init::*;
    pub use super::pvar::*;
    pub use super::types::*;
}
