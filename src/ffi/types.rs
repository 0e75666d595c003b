//! Opaque C handle types: pointers to distinct incomplete structs in C,
//! plain pointer-sized values here.

use core::ffi::c_void;

/// `MPI_T_pvar_session`.
pub type PvarSession = *mut c_void;
/// `MPI_T_pvar_handle`.
pub type PvarHandle = *mut c_void;
/// `MPI_T_cvar_handle`.
pub type CvarHandle = *mut c_void;
/// `MPI_T_enum`.
pub type Enum = *mut c_void;
/// `MPI_Datatype`.
pub type Datatype = *mut c_void;
/// `MPI_Info`.
pub type Info = *mut c_void;
/// `MPI_Count`.
pub type Count = i64;
