//! `include/pvar.h`: the component side from C — registering performance
//! variables of every class (arrays, bound instances, callback variables
//! with C function pointers and a `void *` context), categories and control
//! variables in the process-wide registry, and updating them.
//!
//! A `pvar_var` is a `Box` of the typed Rust handle (`register::Var`); an update is
//! one call into Rust that matches the class and runs the inlined Rust fast
//! path (a relaxed load and store of the calling thread's cell for
//! counters). Updates on a NULL handle, on an element out of range, or of a
//! kind the class does not support (e.g. `pvar_dec` on a counter) do
//! nothing: they return `void` to stay as cheap as the Rust calls.
//!
//! Component handles are plain owned pointers (like `FILE *`): using one
//! after `pvar_var_free` is a bug in the caller, as in any C API. The tool
//! side (`mpi_t.h`) is where every handle is validated.
//!
//! Modules: `desc` (the C descriptions), `register` (registration of
//! performance variables, bound instances, callback variables, categories),
//! `update` (the update and component-side read functions), `site` (the
//! slow path of the header's use-site macros), `cvar`
//! (control variables).

mod cvar;
mod desc;
mod event;
mod register;
mod site;
mod update;

use core::ffi::{c_char, c_int, c_void};
use std::cell::RefCell;
use std::ffi::CString;

use super::boundary::CResult;
use crate::sync::unmodelled;
use crate::vocabulary::error::Error;

// ---------------------------------------------------------------------------
// Errors: the code is returned, the message kept for `pvar_last_error`.

unmodelled::thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

pub(super) fn fail(e: Error) -> c_int {
    let msg = CString::new(e.to_string().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(msg));
    e.code().raw()
}

pub(super) trait Recorded<T> {
    fn rec(self) -> CResult<T>;
}

impl<T> Recorded<T> for crate::vocabulary::error::Result<T> {
    fn rec(self) -> CResult<T> {
        self.map_err(fail)
    }
}

/// The message of the last failed `pvar_*` registration call on this
/// thread (e.g. why a registration was refused), or NULL. Valid until the
/// next failing call on the same thread.
#[unsafe(no_mangle)]
pub extern "C" fn pvar_last_error() -> *const c_char {
    LAST_ERROR.with(|l| {
        l.borrow()
            .as_ref()
            .map_or(core::ptr::null(), |s| s.as_ptr())
    })
}

// ---------------------------------------------------------------------------
// Owned pointers behind the opaque C handles.

/// Boxes `v` into an opaque C pointer.
pub(super) fn into_ptr<T>(v: T) -> *mut c_void {
    Box::into_raw(Box::new(v)).cast()
}

/// # Safety
/// `p` is NULL or a pointer from [`into_ptr`] for a `T` not yet freed.
#[inline(always)]
pub(super) unsafe fn deref<'a, T>(p: *mut c_void) -> Option<&'a T> {
    // SAFETY: forwarded contract.
    unsafe { p.cast::<T>().as_ref() }
}

/// # Safety
/// `p` is NULL or a pointer from [`into_ptr`] for a `T` not yet freed; it
/// is not used afterwards.
pub(super) unsafe fn free_ptr<T>(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: from `Box::into_raw` (contract), freed once.
        drop(unsafe { Box::from_raw(p.cast::<T>()) });
    }
}
