//! `MPI_T_cvar_*` and `MPI_T_enum_*` over both sides.

use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;

use pvar::ffi::mpi_t as ours;

use super::index::{self, Kind, Side};
use super::{
    Ctx, Made, R, code, datatype_out, entry, enum_out, hand_out, is_ours, need, object_arg,
    our_bind, put, untag,
};
use crate::library::{Handle, LibraryAbi};

/// The library's functions for a call on its control variable handle
/// `h`: `MPI_T_CVAR_HANDLE_NULL` (NULL in MPICH and Open MPI) is refused
/// here, as a library may dereference it unchecked.
fn lib_handle(c: &Ctx, h: Handle) -> R<&'static LibraryAbi> {
    let lib = c.lib_or(code::INVALID_HANDLE)?;
    if h.is_null() {
        return Err(c.e(code::INVALID_HANDLE));
    }
    Ok(lib)
}

/// The library's functions for a call on its enumeration `e`:
/// `MPI_T_ENUM_NULL` (and NULL) is refused here.
fn lib_enum(c: &Ctx, e: Handle) -> R<&'static LibraryAbi> {
    let lib = c.lib_or(code::INVALID_HANDLE)?;
    if e.is_null() || e as u64 == c.abi.enum_null {
        return Err(c.e(code::INVALID_HANDLE));
    }
    Ok(lib)
}

/// `MPI_T_cvar_get_num`: the library's control variables and pvar's.
///
/// # Safety
/// `num_cvar` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { index::get_num(Kind::Cvar, num_cvar) }
}

/// `MPI_T_cvar_get_info`: the library's answer for its variables; pvar's
/// with the constants translated.
///
/// # Safety
/// Every OUT pointer is NULL or valid for its write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype: *mut c_void,
    enumtype: *mut Handle,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> c_int {
    entry(|c| match index::resolve(c, Kind::Cvar, cvar_index)? {
        Side::Lib(i) => {
            let lib = c.lib_or(code::INVALID_INDEX)?;
            c.call(lib.cvar_get_info, |f| {
                // SAFETY: the tool's arguments, passed through.
                unsafe {
                    f(
                        i, name, name_len, verbosity, datatype, enumtype, desc, desc_len, bind,
                        scope,
                    )
                }
            })
        }
        Side::Ours(i) => {
            let (mut v, mut b, mut s) = (0, 0, 0);
            let (mut dt, mut e) = (null_mut(), null_mut());
            // SAFETY: the tool's string pointers (NULL or valid), local OUT
            // values.
            c.ours(unsafe {
                ours::PMPI_T_cvar_get_info(
                    i, name, name_len, &mut v, &mut dt, &mut e, desc, desc_len, &mut b, &mut s,
                )
            })?;
            // SAFETY: each OUT pointer is NULL or valid (contract).
            unsafe {
                put(verbosity, c.abi.verbosity(v));
                put(enumtype, enum_out(c, e));
                put(bind, c.abi.bind(b));
                put(scope, c.abi.scope(s));
                datatype_out(c, datatype, dt)
            }
        }
    })
}

/// `MPI_T_cvar_get_index`: the library's first, then pvar's.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `cvar_index` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_get_index(
    name: *const c_char,
    cvar_index: *mut c_int,
) -> c_int {
    entry(|c| {
        need(c, cvar_index)?;
        // Not forwarded NULL: a library may read it unchecked.
        need(c, name)?;
        let mut lib_rc = None;
        if let Some(f) = c.lib.and_then(|l| l.cvar_get_index) {
            let mut i = 0;
            // SAFETY: the tool's name, a local OUT value.
            let rc = unsafe { f(name, &mut i) };
            if rc == c.abi.success {
                let m = index::merged(c, Kind::Cvar, Side::Lib(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { cvar_index.write_unaligned(m) };
                return Ok(());
            }
            lib_rc = Some(rc);
        }
        let mut i = 0;
        // SAFETY: the tool's name, a local OUT value.
        match unsafe { ours::PMPI_T_cvar_get_index(name, &mut i) } {
            0 => {
                let m = index::merged(c, Kind::Cvar, Side::Ours(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { cvar_index.write_unaligned(m) };
                Ok(())
            }
            rc => Err(lib_rc.unwrap_or(c.e(rc))),
        }
    })
}

/// `MPI_T_cvar_handle_alloc`: the library's handle for its variables; a
/// tagged pvar handle for pvar's (the bound object read as the library's
/// handle type). On any error `*handle` is `MPI_T_CVAR_HANDLE_NULL` and
/// `*count` 0 where usable.
///
/// # Safety
/// `obj_handle` NULL or the address of the object's handle; `handle` and
/// `count` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_handle_alloc(
    cvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut Handle,
    count: *mut c_int,
) -> c_int {
    // SAFETY: NULL or valid (contract).
    unsafe {
        put(handle, null_mut());
        put(count, 0);
    }
    entry(|c| {
        need(c, handle)?;
        need(c, count)?;
        match index::resolve(c, Kind::Cvar, cvar_index)? {
            Side::Lib(i) => {
                let lib = c.lib_or(code::INVALID_INDEX)?;
                // SAFETY: the tool's arguments, passed through.
                c.call(lib.cvar_handle_alloc, |f| unsafe {
                    f(i, obj_handle, handle, count)
                })?;
                // SAFETY: written by the library; valid by contract.
                let (h, k) = unsafe { (handle.read_unaligned(), count.read_unaligned()) };
                let free = |h: &mut Handle| {
                    if let Some(f) = lib.cvar_handle_free {
                        // SAFETY: the handle just allocated.
                        unsafe { f(h) };
                    }
                };
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { hand_out(c, Made::Lib, h, k, free, handle, count) }
            }
            Side::Ours(i) => {
                let bind = our_bind(c, i, |r, i| r.cvars().info(i).map(|v| v.bind))?;
                let mut slot = 0u64;
                // SAFETY: `obj_handle` NULL or the library's handle of this
                // binding (contract).
                let obj = unsafe { object_arg(c, bind, obj_handle, &mut slot) };
                let (mut h, mut k) = (null_mut(), 0);
                // SAFETY: local OUT values; `obj` as above or `&slot`.
                c.ours(unsafe { ours::PMPI_T_cvar_handle_alloc(i, obj, &mut h, &mut k) })?;
                // SAFETY: the handle just allocated.
                let free = |h: &mut Handle| unsafe {
                    ours::PMPI_T_cvar_handle_free(h);
                };
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { hand_out(c, Made::Ours, h, k, free, handle, count) }
            }
        }
    })
}

/// `MPI_T_cvar_handle_free`: sets `*handle` to `MPI_T_CVAR_HANDLE_NULL`.
///
/// # Safety
/// `handle` is NULL (`MPI_T_ERR_INVALID`) or valid for reads and writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_handle_free(handle: *mut Handle) -> c_int {
    entry(|c| {
        need(c, handle)?;
        // SAFETY: checked non-NULL; valid by contract.
        let h = unsafe { handle.read_unaligned() };
        if is_ours(h) {
            let mut raw = untag(h);
            // SAFETY: pvar validates the key.
            c.ours(unsafe { ours::PMPI_T_cvar_handle_free(&mut raw) })?;
            // SAFETY: as above.
            unsafe { handle.write_unaligned(null_mut()) };
            Ok(())
        } else {
            let lib = lib_handle(c, h)?;
            // SAFETY: the tool's pointer, passed through.
            c.call(lib.cvar_handle_free, |f| unsafe { f(handle) })
        }
    })
}

/// `MPI_T_cvar_read`: `buf` holds the handle's count elements (the C
/// layout is the same on both sides).
///
/// # Safety
/// `buf` is sized from get_info and handle_alloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_read(handle: Handle, buf: *mut c_void) -> c_int {
    entry(|c| {
        if is_ours(handle) {
            // SAFETY: pvar validates the key; `buf` sized by contract.
            c.ours(unsafe { ours::PMPI_T_cvar_read(untag(handle), buf) })
        } else {
            let lib = lib_handle(c, handle)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(lib.cvar_read, |f| unsafe { f(handle, buf) })
        }
    })
}

/// `MPI_T_cvar_write`.
///
/// # Safety
/// `buf` is sized from get_info and handle_alloc (for `MPI_CHAR`, a
/// NUL-terminated string).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_cvar_write(handle: Handle, buf: *const c_void) -> c_int {
    entry(|c| {
        if is_ours(handle) {
            // SAFETY: pvar validates the key; `buf` sized by contract.
            c.ours(unsafe { ours::PMPI_T_cvar_write(untag(handle), buf) })
        } else {
            let lib = lib_handle(c, handle)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(lib.cvar_write, |f| unsafe { f(handle, buf) })
        }
    })
}

/// `MPI_T_enum_get_info`: pvar's enumerations are tagged.
///
/// # Safety
/// OUT pointers NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_enum_get_info(
    enumtype: Handle,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    entry(|c| {
        if is_ours(enumtype) {
            // SAFETY: pvar validates the enumeration; the tool's pointers.
            c.ours(unsafe { ours::PMPI_T_enum_get_info(untag(enumtype), num, name, name_len) })
        } else {
            let lib = lib_enum(c, enumtype)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(lib.enum_get_info, |f| unsafe {
                f(enumtype, num, name, name_len)
            })
        }
    })
}

/// `MPI_T_enum_get_item`.
///
/// # Safety
/// OUT pointers NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_enum_get_item(
    enumtype: Handle,
    item_index: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    entry(|c| {
        if is_ours(enumtype) {
            // SAFETY: pvar validates the enumeration; the tool's pointers.
            c.ours(unsafe {
                ours::PMPI_T_enum_get_item(untag(enumtype), item_index, value, name, name_len)
            })
        } else {
            let lib = lib_enum(c, enumtype)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(lib.enum_get_item, |f| unsafe {
                f(enumtype, item_index, value, name, name_len)
            })
        }
    })
}
