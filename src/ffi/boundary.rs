//! The conventions every MPI_T function of the C interface keeps (see
//! the module documentation of `ffi`): return codes, the init check,
//! panics caught, OUT pointers checked, indices and counts converted.

use core::ffi::c_int;

use crate::registry::Registry;
use crate::vocabulary::error::{Error, ErrorCode};

// Session and handle keys are 64-bit values stored in pointer-sized C
// handles: the C interface needs 64-bit pointers.
const _: () = assert!(core::mem::size_of::<usize>() == 8);

pub(crate) const SUCCESS: c_int = 0;
pub(crate) const ERR_INVALID: c_int = ErrorCode::Invalid as c_int;
pub(crate) const ERR_INVALID_INDEX: c_int = ErrorCode::InvalidIndex as c_int;
pub(crate) const ERR_INVALID_HANDLE: c_int = ErrorCode::InvalidHandle as c_int;
pub(crate) const ERR_INVALID_NAME: c_int = ErrorCode::InvalidName as c_int;

/// A C return code as the error of a `Result`.
pub(crate) type CResult<T = ()> = Result<T, c_int>;

/// Maps a Rust error to its MPI_T return code.
pub(crate) trait OrCode<T> {
    fn c(self) -> CResult<T>;
}

impl<T> OrCode<T> for crate::vocabulary::error::Result<T> {
    #[inline]
    fn c(self) -> CResult<T> {
        self.map_err(|e: Error| e.code().raw())
    }
}

/// The registry the C interface serves.
#[inline]
pub(crate) fn registry() -> &'static Registry {
    crate::process::init::global()
}

/// Runs `body` unless the interface is uninitialised, catching panics.
/// Allocation-free (so usable on the async-signal-safe paths).
#[inline]
pub(crate) fn mpit_call(body: impl FnOnce(&'static Registry) -> CResult) -> c_int {
    if let Err(e) = crate::process::check_initialized() {
        return e.code().raw();
    }
    guarded(|| body(registry()))
}

/// Runs `body`, turning `Err(code)` into `code` and a panic into
/// `MPI_T_ERR_INVALID`.
#[inline]
pub(crate) fn guarded(body: impl FnOnce() -> CResult) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => ERR_INVALID,
    }
}

/// A writable reference from an OUT pointer: `None` if NULL or misaligned.
///
/// # Safety
/// `p` must be NULL or point to memory valid for reads and writes of a `T`
/// for the lifetime `'a` (the caller's contract in the C API).
#[inline]
pub(crate) unsafe fn out<'a, T>(p: *mut T) -> Option<&'a mut T> {
    if p.is_null() || !p.is_aligned() {
        return None;
    }
    // SAFETY: non-NULL and aligned checked above; validity is the
    // function's contract.
    unsafe { p.as_mut() }
}

/// Writes `v` through an optional OUT pointer (NULL: ignored, as the
/// standard allows for every OUT parameter of the `get_info` calls).
///
/// # Safety
/// As [`out`].
#[inline]
pub(crate) unsafe fn set_opt<T>(p: *mut T, v: T) {
    // SAFETY: forwarded contract.
    if let Some(r) = unsafe { out(p) } {
        *r = v;
    }
}

/// Writes `v` through a required OUT pointer: `MPI_T_ERR_INVALID` if NULL
/// or misaligned.
///
/// # Safety
/// As [`out`].
#[inline]
pub(crate) unsafe fn set_req<T>(p: *mut T, v: T) -> CResult {
    // SAFETY: forwarded contract.
    let r = unsafe { out(p) }.ok_or(ERR_INVALID)?;
    *r = v;
    Ok(())
}

/// Checks a required OUT pointer before any side effect.
#[inline]
pub(crate) fn require<T>(p: *mut T) -> CResult {
    if p.is_null() || !p.is_aligned() {
        Err(ERR_INVALID)
    } else {
        Ok(())
    }
}

/// An index argument as `usize`; negative values are `err`.
#[inline]
pub(crate) fn index(i: c_int, err: c_int) -> CResult<usize> {
    usize::try_from(i).map_err(|_| err)
}

/// A count as a C `int` (saturating).
#[inline]
pub(crate) fn to_int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// A C pointer the engine only hands back to the C code that gave it (a
/// component's context, a tool's `user_data`, a registration handle),
/// carried by callbacks that may run on any thread.
#[derive(Clone, Copy)]
pub(crate) struct PassBack(pub(crate) *mut core::ffi::c_void);

// SAFETY: never dereferenced by the engine, only passed back to the C
// code's own callbacks, which `pvar.h` and the standard require to cope
// with any thread.
unsafe impl Send for PassBack {}
// SAFETY: as above.
unsafe impl Sync for PassBack {}

impl PassBack {
    /// The pointer. A method, so that closures capture the whole
    /// `PassBack` (Send + Sync), not its raw-pointer field.
    #[inline]
    pub(crate) fn get(self) -> *mut core::ffi::c_void {
        self.0
    }
}

/// Defines `PMPI_T_<name>` with `body`: a Rust-callable `extern "C"`
/// function (reached through [`mpi_t`]), not an exported symbol. The
/// exported `PMPI_T_*` / `MPI_T_*` names are the C library's (`capi/`); a
/// library that serves MPI_T itself (the MPI interposer, `mpi/`) defines
/// its own. (`MPI_T_<name>` after the slash is the C name the function
/// serves, for the reader.)
macro_rules! mpi_t_fn {
    (
        $(#[$m:meta])*
        fn $pname:ident / $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $body:block
    ) => {
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments follow the MPI_T C binding: NULL where allowed,
        /// otherwise valid for the access the standard describes.
        #[allow(non_snake_case)] // the C name
        #[inline]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> core::ffi::c_int $body
    };
}
pub(crate) use mpi_t_fn;
