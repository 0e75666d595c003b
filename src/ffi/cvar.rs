//! `MPI_T_cvar_*`: queries, handles, read and write. Thread-safe; not
//! async-signal-safe (the Rust cvar handle table takes a mutex).

use core::ffi::{c_char, c_int, c_void};

use super::boundary::{
    ERR_INVALID, ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, OrCode, index, mpi_t_fn,
    mpit_call, out, require, set_opt, set_req, to_int,
};
use super::pvar::object_at;
use super::strings::{arg_str, put_string};
use super::types::{CvarHandle as CHandle, Datatype as CDatatype, Enum};
use crate::cvar::CvarHandle;
use crate::vocabulary::datatype::Datatype;

/// A live handle with the geometry (datatype, element count) of the C
/// buffer `buf` its value travels through: the Rust API takes byte slices,
/// C passes bare pointers sized from get_info and handle_alloc.
/// `MPI_T_ERR_INVALID_HANDLE` if `h` is not live, then `MPI_T_ERR_INVALID`
/// if `buf` is NULL.
fn lookup(
    reg: &crate::registry::Registry,
    h: CHandle,
    buf: *const c_void,
) -> Result<(CvarHandle, Datatype, usize), c_int> {
    let ch = CvarHandle::from_raw(h as u64).ok_or(ERR_INVALID_HANDLE)?;
    let (_, dt, n) = reg.cvars().handle_info(ch).c()?;
    if buf.is_null() {
        return Err(ERR_INVALID);
    }
    Ok((ch, dt, n))
}

mpi_t_fn! {
    /// `MPI_T_cvar_get_num`.
    fn PMPI_T_cvar_get_num / MPI_T_cvar_get_num(num_cvar: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment; validity is the caller's.
        mpit_call(|reg| unsafe { set_req(num_cvar, to_int(reg.cvars().len())) })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_get_info`: every OUT pointer may be NULL (ignored).
    fn PMPI_T_cvar_get_info / MPI_T_cvar_get_info(
        cvar_index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        datatype: *mut CDatatype,
        enumtype: *mut Enum,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
        scope: *mut c_int,
    ) {
        mpit_call(|reg| {
            let info = reg.cvars().info(index(cvar_index, ERR_INVALID_INDEX)?).c()?;
            let e = match &info.enumeration {
                // Registered with the variable: always found.
                Some(e) if info.datatype == Datatype::Int => reg
                    .enums()
                    .index_of(e)
                    .map_or(core::ptr::null_mut(), |i| (i + 1) as Enum),
                _ => core::ptr::null_mut(),
            };
            // SAFETY: every pointer is NULL (ignored) or valid for its write
            // (caller's contract); the helpers check NULL and alignment.
            unsafe {
                put_string(&info.name, name, name_len);
                put_string(&info.description, desc, desc_len);
                set_opt(verbosity, info.verbosity.raw());
                set_opt(datatype, info.datatype.raw() as usize as CDatatype);
                set_opt(enumtype, e);
                set_opt(bind, info.bind.raw());
                set_opt(scope, info.scope.raw());
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_get_index`.
    fn PMPI_T_cvar_get_index / MPI_T_cvar_get_index(name: *const c_char, cvar_index: *mut c_int) {
        mpit_call(|reg| {
            require(cvar_index)?;
            // SAFETY: NULL checked by `arg_str`; NUL-terminated by contract.
            let name = unsafe { arg_str(name, ERR_INVALID_NAME) }?;
            let i = reg.cvars().index(name).c()?;
            // SAFETY: checked by `require` above.
            unsafe { set_req(cvar_index, to_int(i)) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_handle_alloc`. For a bound variable `obj_handle` is the
    /// address of a variable holding the object's handle.
    fn PMPI_T_cvar_handle_alloc / MPI_T_cvar_handle_alloc(
        cvar_index: c_int,
        obj_handle: *mut c_void,
        handle: *mut CHandle,
        count: *mut c_int,
    ) {
        mpit_call(|reg| {
            require(handle)?;
            require(count)?;
            let i = index(cvar_index, ERR_INVALID_INDEX)?;
            let info = reg.cvars().info(i).c()?;
            // SAFETY: `obj_handle` is NULL or the address of a handle
            // variable (caller's contract); `object_at` checks NULL.
            let object = unsafe { object_at(obj_handle, info.bind) };
            let (h, n) = reg.cvars().handle_alloc(i, object).c()?;
            super::init::track_cvar_handle(h.to_raw(), true);
            // SAFETY: both checked by `require` above.
            unsafe {
                set_req(handle, h.to_raw() as CHandle)?;
                set_req(count, to_int(n))
            }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_handle_free`: sets `*handle` to `MPI_T_CVAR_HANDLE_NULL`.
    fn PMPI_T_cvar_handle_free / MPI_T_cvar_handle_free(handle: *mut CHandle) {
        mpit_call(|reg| {
            // SAFETY: NULL/alignment checked by `out`; valid by contract.
            let h = unsafe { out(handle) }.ok_or(ERR_INVALID)?;
            let ch = CvarHandle::from_raw(*h as u64).ok_or(ERR_INVALID_HANDLE)?;
            reg.cvars().handle_free(ch).c()?;
            super::init::track_cvar_handle(ch.to_raw(), false);
            *h = core::ptr::null_mut();
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_read`: `buf` holds count elements of the datatype.
    fn PMPI_T_cvar_read / MPI_T_cvar_read(handle: CHandle, buf: *mut c_void) {
        mpit_call(|reg| {
            let (h, dt, n) = lookup(reg, handle, buf)?;
            // SAFETY: non-NULL; valid for `n` elements of `dt` (contract:
            // sized from get_info and handle_alloc).
            let dst = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), n * dt.size()) };
            reg.cvars().read(h, dst).c()
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_cvar_write`: `buf` holds count elements of the datatype; for
    /// `MPI_CHAR`, a NUL-terminated string (read up to the NUL or `count`
    /// bytes, never beyond).
    fn PMPI_T_cvar_write / MPI_T_cvar_write(handle: CHandle, buf: *const c_void) {
        mpit_call(|reg| {
            let (h, dt, n) = lookup(reg, handle, buf)?;
            let bytes = if dt == Datatype::Char {
                let p = buf.cast::<u8>();
                // Scan for the NUL within the count so that a short string
                // literal is never over-read.
                // SAFETY: bytes before the first NUL (at most `n`) belong to
                // the caller's string.
                (0..n).find(|&i| unsafe { p.add(i).read() } == 0).map_or(n, |i| i + 1)
            } else {
                n * dt.size()
            };
            // SAFETY: non-NULL; valid for `bytes` bytes (see above).
            let src = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), bytes) };
            reg.cvars().write(h, src).c()
        })
    }
}
