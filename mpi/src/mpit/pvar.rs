//! `MPI_T_pvar_*` over both sides.
//!
//! The access calls (`start`, `stop`, `reset`, `read`, `readreset`,
//! `write`) take no lock and allocate nothing here: a session lookup
//! ([`session::get`]) and a dispatch on [`TAG`](super::TAG).

use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;

use pvar::ffi::mpi_t as ours;

use super::index::{self, Kind, Side};
use super::{
    Ctx, Made, R, code, datatype_out, entry, enum_out, hand_out, is_ours, need, object_arg,
    our_bind, put, session, untag,
};
use crate::library::{Handle, LibraryAbi};

/// `MPI_T_pvar_get_num`: the library's variables and pvar's (the merged
/// table, refreshed).
///
/// # Safety
/// `num_pvar` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { index::get_num(Kind::Pvar, num_pvar) }
}

/// `MPI_T_pvar_get_info`: the library's answer for its variables; for
/// pvar's, the constants translated into the library's (the datatype
/// written as `sizeof(MPI_Datatype)` bytes, the enumeration tagged).
///
/// # Safety
/// Every OUT pointer is NULL or valid for its write (the standard's C
/// binding).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut c_void,
    enumtype: *mut Handle,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> c_int {
    entry(|c| match index::resolve(c, Kind::Pvar, pvar_index)? {
        Side::Lib(i) => {
            let lib = c.lib_or(code::INVALID_INDEX)?;
            c.call(lib.pvar_get_info, |f| {
                // SAFETY: the tool's arguments, passed through unchanged.
                unsafe {
                    f(
                        i, name, name_len, verbosity, var_class, datatype, enumtype, desc,
                        desc_len, bind, readonly, continuous, atomic,
                    )
                }
            })
        }
        Side::Ours(i) => {
            let (mut v, mut cl, mut b) = (0, 0, 0);
            let (mut dt, mut e) = (null_mut(), null_mut());
            // SAFETY: pvar's get_info with the tool's string and flag
            // pointers (NULL or valid) and local OUT values.
            c.ours(unsafe {
                ours::PMPI_T_pvar_get_info(
                    i, name, name_len, &mut v, &mut cl, &mut dt, &mut e, desc, desc_len, &mut b,
                    readonly, continuous, atomic,
                )
            })?;
            // SAFETY: each OUT pointer is NULL or valid (contract).
            unsafe {
                put(verbosity, c.abi.verbosity(v));
                put(var_class, c.abi.class(cl));
                put(enumtype, enum_out(c, e));
                put(bind, c.abi.bind(b));
                datatype_out(c, datatype, dt)
            }
        }
    })
}

/// `MPI_T_pvar_get_index`: the library's variable of that name and class
/// first, then pvar's (the class translated); a merged index.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `pvar_index` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> c_int {
    entry(|c| {
        need(c, pvar_index)?;
        // Not forwarded NULL: a library may read it unchecked.
        need(c, name)?;
        let mut lib_rc = None;
        if let Some(f) = c.lib.and_then(|l| l.pvar_get_index) {
            let mut i = 0;
            // SAFETY: the tool's name, a local OUT value.
            let rc = unsafe { f(name, var_class, &mut i) };
            if rc == c.abi.success {
                let m = index::merged(c, Kind::Pvar, Side::Lib(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { pvar_index.write_unaligned(m) };
                return Ok(());
            }
            lib_rc = Some(rc);
        }
        let found = match c.abi.class_to_ours(var_class) {
            Some(class) => {
                let mut i = 0;
                // SAFETY: the tool's name, a local OUT value.
                match unsafe { ours::PMPI_T_pvar_get_index(name, class, &mut i) } {
                    0 => Ok(i),
                    rc => Err(rc),
                }
            }
            None => Err(code::INVALID_NAME),
        };
        match found {
            Ok(i) => {
                let m = index::merged(c, Kind::Pvar, Side::Ours(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { pvar_index.write_unaligned(m) };
                Ok(())
            }
            Err(rc) => Err(lib_rc.unwrap_or(c.e(rc))),
        }
    })
}

/// Frees a library session (errors ignored: a clean-up path).
fn free_lib_session(c: &Ctx, s: Handle) {
    if let (false, Some(f)) = (s.is_null(), c.lib.and_then(|l| l.pvar_session_free)) {
        let mut s = s;
        // SAFETY: a session the library created for this call.
        unsafe { f(&mut s) };
    }
}

/// `MPI_T_pvar_session_create`: a session of the library (while its
/// MPI_T is in use) and one of pvar's, under one merged key.
///
/// # Safety
/// `session` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_session_create(session: *mut Handle) -> c_int {
    entry(|c| {
        need(c, session)?;
        let mut lib_s: Handle = null_mut();
        if let Some(lib) = c.lib {
            // SAFETY: a local OUT value.
            c.call(lib.pvar_session_create, |f| unsafe { f(&mut lib_s) })?;
        }
        let mut our_s: Handle = null_mut();
        // SAFETY: a local OUT value.
        let rc = unsafe { ours::PMPI_T_pvar_session_create(&mut our_s) };
        if rc != 0 {
            free_lib_session(c, lib_s);
            return Err(c.e(rc));
        }
        let Some(key) = session::insert(lib_s as usize, our_s as u64) else {
            free_lib_session(c, lib_s);
            // SAFETY: the session just created.
            unsafe { ours::PMPI_T_pvar_session_free(&mut our_s) };
            return Err(c.e(code::OUT_OF_SESSIONS));
        };
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { session.write_unaligned(key as usize as Handle) };
        Ok(())
    })
}

/// `MPI_T_pvar_session_free`: frees both sides' sessions (and so their
/// handles); sets `*session` to `MPI_T_PVAR_SESSION_NULL`.
///
/// # Safety
/// `session` is NULL (`MPI_T_ERR_INVALID`) or valid for reads and writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_session_free(session: *mut Handle) -> c_int {
    entry(|c| {
        need(c, session)?;
        // SAFETY: checked non-NULL; valid by contract.
        let key = unsafe { session.read_unaligned() } as u64;
        let (lib_s, our_s) = session::remove(key).ok_or(c.e(code::INVALID_SESSION))?;
        let mut result = Ok(());
        if let (false, Some(lib)) = (lib_s == 0, c.lib) {
            let mut s = lib_s as Handle;
            // SAFETY: the library's session of this merged one.
            result = c.call(lib.pvar_session_free, |f| unsafe { f(&mut s) });
        }
        let mut s = our_s as usize as Handle;
        // SAFETY: pvar's session of this merged one.
        let mine = c.ours(unsafe { ours::PMPI_T_pvar_session_free(&mut s) });
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { session.write_unaligned(null_mut()) };
        result.and(mine)
    })
}

/// The (library, pvar) sessions of a merged key, or
/// `MPI_T_ERR_INVALID_SESSION`. Lock-free.
#[inline]
fn sessions(c: &Ctx, s: Handle) -> R<(Handle, Handle)> {
    let (lib, ours) = session::get(s as u64).ok_or(c.e(code::INVALID_SESSION))?;
    Ok((lib as Handle, ours as usize as Handle))
}

/// The library's functions for a call on one of its handles, `handle`,
/// in its session `lib_s`. `MPI_T_PVAR_HANDLE_NULL` (NULL in MPICH and
/// Open MPI) is refused here: a library may dereference it unchecked.
#[inline]
fn lib_side(c: &Ctx, lib_s: Handle, handle: Handle) -> R<&'static LibraryAbi> {
    let lib = c.lib_or(code::INVALID_HANDLE)?;
    if lib_s.is_null() {
        // A session created while the library's MPI_T was not in use.
        return Err(c.e(code::INVALID_SESSION));
    }
    if handle.is_null() {
        return Err(c.e(code::INVALID_HANDLE));
    }
    Ok(lib)
}

/// `MPI_T_pvar_handle_alloc`: the library's handle for its variables
/// (`obj_handle` passed through); a tagged pvar handle for pvar's, the
/// bound object read as the library's handle type. On any error `*handle`
/// is `MPI_T_PVAR_HANDLE_NULL` and `*count` 0 where usable.
///
/// # Safety
/// As the standard's C binding: `obj_handle` NULL or the address of the
/// object's handle; `handle`, `count` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_handle_alloc(
    session: Handle,
    pvar_index: c_int,
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
        let (lib_s, our_s) = sessions(c, session)?;
        match index::resolve(c, Kind::Pvar, pvar_index)? {
            Side::Lib(i) => {
                let lib = c.lib_or(code::INVALID_INDEX)?;
                if lib_s.is_null() {
                    return Err(c.e(code::INVALID_SESSION));
                }
                // SAFETY: the tool's arguments, passed through.
                c.call(lib.pvar_handle_alloc, |f| unsafe {
                    f(lib_s, i, obj_handle, handle, count)
                })?;
                // SAFETY: written by the library; valid by contract.
                let (h, k) = unsafe { (handle.read_unaligned(), count.read_unaligned()) };
                let free = |h: &mut Handle| {
                    if let Some(f) = lib.pvar_handle_free {
                        // SAFETY: the handle just allocated.
                        unsafe { f(lib_s, h) };
                    }
                };
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { hand_out(c, Made::Lib, h, k, free, handle, count) }
            }
            Side::Ours(i) => {
                let bind = our_bind(c, i, |r, i| r.pvars().info(i).map(|v| v.bind))?;
                let mut slot = 0u64;
                // SAFETY: `obj_handle` is NULL or holds the library's
                // handle of this binding (contract).
                let obj = unsafe { object_arg(c, bind, obj_handle, &mut slot) };
                let (mut h, mut k) = (null_mut(), 0);
                // SAFETY: local OUT values; `obj` as above or `&slot`.
                c.ours(unsafe { ours::PMPI_T_pvar_handle_alloc(our_s, i, obj, &mut h, &mut k) })?;
                // SAFETY: the handle just allocated.
                let free = |h: &mut Handle| unsafe {
                    ours::PMPI_T_pvar_handle_free(our_s, h);
                };
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { hand_out(c, Made::Ours, h, k, free, handle, count) }
            }
        }
    })
}

/// `MPI_T_pvar_handle_free`: sets `*handle` to `MPI_T_PVAR_HANDLE_NULL`.
///
/// # Safety
/// `handle` is NULL (`MPI_T_ERR_INVALID`) or valid for reads and writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_handle_free(session: Handle, handle: *mut Handle) -> c_int {
    entry(|c| {
        need(c, handle)?;
        let (lib_s, our_s) = sessions(c, session)?;
        // SAFETY: checked non-NULL; valid by contract.
        let h = unsafe { handle.read_unaligned() };
        if is_ours(h) && h as u64 != c.abi.pvar_all_handles {
            let mut raw = untag(h);
            // SAFETY: pvar's session and handle key.
            c.ours(unsafe { ours::PMPI_T_pvar_handle_free(our_s, &mut raw) })?;
            // SAFETY: as above.
            unsafe { handle.write_unaligned(null_mut()) };
            Ok(())
        } else {
            let lib = lib_side(c, lib_s, h)?;
            // SAFETY: the tool's handle pointer, passed through.
            c.call(lib.pvar_handle_free, |f| unsafe { f(lib_s, handle) })
        }
    })
}

/// A library function of a session and a handle.
type LibSH = unsafe extern "C" fn(Handle, Handle) -> c_int;

/// Start / stop / reset: one handle of either side, or
/// `MPI_T_PVAR_ALL_HANDLES` for both sides (the library's first; the
/// first error is returned). Lock-free.
#[inline]
fn each(
    session: Handle,
    handle: Handle,
    theirs: fn(&LibraryAbi) -> Option<LibSH>,
    mine: unsafe extern "C" fn(Handle, Handle) -> c_int,
) -> c_int {
    entry(|c| {
        let (lib_s, our_s) = sessions(c, session)?;
        if handle as u64 == c.abi.pvar_all_handles {
            let lib_r = match c.lib {
                Some(lib) if !lib_s.is_null() => {
                    // SAFETY: the library's session and its ALL_HANDLES.
                    c.call(theirs(lib), |f| unsafe { f(lib_s, handle) })
                }
                _ => Ok(()),
            };
            // SAFETY: pvar's session and its MPI_T_PVAR_ALL_HANDLES (1).
            let our_r = c.ours(unsafe { mine(our_s, 1usize as Handle) });
            return lib_r.and(our_r);
        }
        if is_ours(handle) {
            let raw = untag(handle);
            if raw as usize == 1 {
                // Not a handle pvar gives out: pvar's own ALL_HANDLES.
                return Err(c.e(code::INVALID_HANDLE));
            }
            // SAFETY: pvar validates the session and handle keys.
            c.ours(unsafe { mine(our_s, raw) })
        } else {
            let lib = lib_side(c, lib_s, handle)?;
            // SAFETY: the tool's library handle, passed through.
            c.call(theirs(lib), |f| unsafe { f(lib_s, handle) })
        }
    })
}

/// `MPI_T_pvar_start`.
///
/// # Safety
/// Handles are values; nothing is dereferenced on pvar's side.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_start(session: Handle, handle: Handle) -> c_int {
    each(session, handle, |l| l.pvar_start, ours::PMPI_T_pvar_start)
}

/// `MPI_T_pvar_stop`.
///
/// # Safety
/// As [`MPI_T_pvar_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_stop(session: Handle, handle: Handle) -> c_int {
    each(session, handle, |l| l.pvar_stop, ours::PMPI_T_pvar_stop)
}

/// `MPI_T_pvar_reset`.
///
/// # Safety
/// As [`MPI_T_pvar_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_reset(session: Handle, handle: Handle) -> c_int {
    each(session, handle, |l| l.pvar_reset, ours::PMPI_T_pvar_reset)
}

/// A library read or readreset.
type LibRead = unsafe extern "C" fn(Handle, Handle, *mut c_void) -> c_int;

/// Read / readreset: dispatch on the tag (`MPI_T_PVAR_ALL_HANDLES` goes to
/// the library, which refuses it). Lock-free, allocation-free.
#[inline]
fn read_with(
    session: Handle,
    handle: Handle,
    buf: *mut c_void,
    theirs: fn(&LibraryAbi) -> Option<LibRead>,
    mine: unsafe extern "C" fn(Handle, Handle, *mut c_void) -> c_int,
) -> c_int {
    entry(|c| {
        let (lib_s, our_s) = sessions(c, session)?;
        if is_ours(handle) && handle as u64 != c.abi.pvar_all_handles {
            // SAFETY: pvar validates the keys; `buf` is sized from
            // get_info and handle_alloc (contract).
            c.ours(unsafe { mine(our_s, untag(handle), buf) })
        } else {
            let lib = lib_side(c, lib_s, handle)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(theirs(lib), |f| unsafe { f(lib_s, handle, buf) })
        }
    })
}

/// `MPI_T_pvar_read`: lock-free and allocation-free here; on pvar's
/// variables async-signal-safe.
///
/// # Safety
/// `buf` holds the handle's count elements of its datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_read(
    session: Handle,
    handle: Handle,
    buf: *mut c_void,
) -> c_int {
    read_with(
        session,
        handle,
        buf,
        |l| l.pvar_read,
        ours::PMPI_T_pvar_read,
    )
}

/// `MPI_T_pvar_readreset`: as [`MPI_T_pvar_read`], then reset.
///
/// # Safety
/// As [`MPI_T_pvar_read`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_readreset(
    session: Handle,
    handle: Handle,
    buf: *mut c_void,
) -> c_int {
    read_with(
        session,
        handle,
        buf,
        |l| l.pvar_readreset,
        ours::PMPI_T_pvar_readreset,
    )
}

/// `MPI_T_pvar_write`: lock-free and allocation-free here.
///
/// # Safety
/// `buf` holds the handle's count elements of its datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_pvar_write(
    session: Handle,
    handle: Handle,
    buf: *const c_void,
) -> c_int {
    entry(|c| {
        let (lib_s, our_s) = sessions(c, session)?;
        if is_ours(handle) && handle as u64 != c.abi.pvar_all_handles {
            // SAFETY: pvar validates the keys; `buf` is sized by contract.
            c.ours(unsafe { ours::PMPI_T_pvar_write(our_s, untag(handle), buf) })
        } else {
            let lib = lib_side(c, lib_s, handle)?;
            // SAFETY: the tool's arguments, passed through.
            c.call(lib.pvar_write, |f| unsafe { f(lib_s, handle, buf) })
        }
    })
}
