//! `libpvar`: the C library of the pvar engine.
//!
//! The symbols (`MPI_T_*` and their `PMPI_T_*` twins for tools,
//! `pvar_*` for components) are defined in the engine crate's C interface
//! module, compiled in by its `capi` feature; this package only links them
//! into `libpvar.so` and `libpvar.a`. See `docs/c-interface.md`.

// Links the engine, and with it every exported symbol of its C interface.
pub use engine::global;
