//! The Rust half of `libpvar_mpi.so`, the PMPI interposer (docs/mpi.md).
//!
//! The C half (`c/`) is compiled against the MPI library's `mpi.h`: it wraps
//! the communication calls and records them through the component C API
//! (`include/pvar.h`), and it describes the library's MPI_T ABI
//! (`c/library.c`). This half:
//!
//! - [`library`] — the library's MPI_T constants and `PMPI_T_*` functions,
//!   as `c/library.c` describes them, and the translation of pvar's own
//!   constants into the library's;
//! - [`mpit`] — the merged MPI_T: the exported `MPI_T_*` symbols a tool in
//!   the job calls, serving the library's variables and pvar's in one index
//!   space;
//! - [`report`] — the cross-rank report's C entry points, called by the
//!   wrappers at `MPI_Finalize`.

pub mod library;
pub mod mpit;
pub mod report;
