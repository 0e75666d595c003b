//! The process-wide face: the [`global`](crate::global) registry that the
//! C interface and tools use, the reference-counted MPI_T initialisation
//! ([`init_thread`], `MPI_T_init_thread` / `MPI_T_finalize`), and the
//! engine's own variables registered at the first init ([`observe`]).
//!
//! Sits above the [`Registry`](crate::Registry): nothing below it knows
//! there is a global registry (a `cvar!` static is handed the global
//! control-variable table by its macro).

pub(crate) mod init;
pub mod observe;

pub use init::{
    ToolGuard, check_initialized, init_count, init_count_decrement, init_count_increment,
    init_thread, is_initialized,
}; // `global` is public at the crate root (`pvar::global`), `global_pvars` and
// `global_cvars` (for the use-site macros) in `__private`: from `init`, one
// public path each.
