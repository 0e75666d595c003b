//! The process-wide face: the [`global`] registry that the C interface
//! and tools use, the reference-counted MPI_T initialisation
//! ([`init_thread`], `MPI_T_init_thread` / `MPI_T_finalize`), and the
//! engine's own variables registered at the first init ([`observe`]).
//!
//! Sits above the [`Registry`](crate::Registry): nothing below it knows there is a global
//! registry (a `cvar!` static is handed [`global_cvars`] by its macro).

mod init;
pub mod observe;
#[cfg(all(target_os = "linux", not(loom)))]
pub mod sampler;

pub use init::{
    ToolGuard, check_initialized, global, global_cvars, global_pvars, init_count,
    init_count_decrement, init_count_increment, init_thread, is_initialized,
};
pub use observe::register_engine_vars;
