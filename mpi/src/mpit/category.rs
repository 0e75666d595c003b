//! `MPI_T_category_*` over both sides; category contents as merged
//! indices. Events: pvar's categories only (the library's are not
//! forwarded; its categories report none).

use core::ffi::{c_char, c_int};
use core::ptr::null_mut;
use std::sync::atomic::{AtomicI32, Ordering};

use pvar::ffi::mpi_t as ours;

use super::index::{self, Kind, Side};
use super::{Ctx, R, code, entry, need, to_int};
use crate::library::LibraryAbi;

/// `MPI_T_category_get_num`: the library's categories and pvar's.
///
/// # Safety
/// `num_cat` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_num(num_cat: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { index::get_num(Kind::Category, num_cat) }
}

/// `MPI_T_category_get_info`: the owning side's answer (names and counts
/// need no translation).
///
/// # Safety
/// Every OUT pointer is NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> c_int {
    entry(|c| match index::resolve(c, Kind::Category, cat_index)? {
        Side::Lib(i) => {
            let lib = c.lib_or(code::INVALID_INDEX)?;
            c.call(lib.category_get_info, |f| {
                // SAFETY: the tool's arguments, passed through.
                unsafe {
                    f(
                        i,
                        name,
                        name_len,
                        desc,
                        desc_len,
                        num_cvars,
                        num_pvars,
                        num_categories,
                    )
                }
            })
        }
        // SAFETY: the tool's arguments, passed through.
        Side::Ours(i) => c.ours(unsafe {
            ours::PMPI_T_category_get_info(
                i,
                name,
                name_len,
                desc,
                desc_len,
                num_cvars,
                num_pvars,
                num_categories,
            )
        }),
    })
}

/// `MPI_T_category_get_index`: the library's first, then pvar's.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `cat_index` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_index(
    name: *const c_char,
    cat_index: *mut c_int,
) -> c_int {
    entry(|c| {
        need(c, cat_index)?;
        // Not forwarded NULL: a library may read it unchecked.
        need(c, name)?;
        let mut lib_rc = None;
        if let Some(f) = c.lib.and_then(|l| l.category_get_index) {
            let mut i = 0;
            // SAFETY: the tool's name, a local OUT value.
            let rc = unsafe { f(name, &mut i) };
            if rc == c.abi.success {
                let m = index::merged(c, Kind::Category, Side::Lib(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { cat_index.write_unaligned(m) };
                return Ok(());
            }
            lib_rc = Some(rc);
        }
        let mut i = 0;
        // SAFETY: the tool's name, a local OUT value.
        match unsafe { ours::PMPI_T_category_get_index(name, &mut i) } {
            0 => {
                let m = index::merged(c, Kind::Category, Side::Ours(i))?;
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { cat_index.write_unaligned(m) };
                Ok(())
            }
            rc => Err(lib_rc.unwrap_or(c.e(rc))),
        }
    })
}

/// The (cvars, pvars, categories) counts of a side's category.
fn counts(c: &Ctx, side: Side) -> R<[c_int; 3]> {
    let mut n = [0; 3];
    let [a, b, d] = &mut n;
    match side {
        Side::Lib(i) => {
            let lib = c.lib_or(code::INVALID_INDEX)?;
            c.call(lib.category_get_info, |f| {
                // SAFETY: only the counts are requested (NULL: ignored).
                unsafe { f(i, null_mut(), null_mut(), null_mut(), null_mut(), a, b, d) }
            })?;
        }
        Side::Ours(i) => {
            // SAFETY: only the counts are requested (NULL: ignored).
            c.ours(unsafe {
                ours::PMPI_T_category_get_info(
                    i,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    a,
                    b,
                    d,
                )
            })?;
        }
    }
    Ok(n)
}

/// A library `category_get_{cvars,pvars,categories}`.
type LibMembers = unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int;

/// The shared body of `get_cvars / get_pvars / get_categories`: the owning
/// side fills the first `len` entries with its indices, mapped here to
/// merged ones.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
unsafe fn members(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
    which: Kind,
    theirs: fn(&LibraryAbi) -> Option<LibMembers>,
    mine: unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int,
) -> c_int {
    entry(|c| {
        let side = index::resolve(c, Kind::Category, cat_index)?;
        let len = usize::try_from(len).map_err(|_| c.e(code::INVALID))?;
        let n = counts(c, side)?;
        let have = match which {
            Kind::Cvar => n[0],
            Kind::Pvar => n[1],
            Kind::Category => n[2],
        };
        let k = len.min(usize::try_from(have).unwrap_or(0));
        if k == 0 {
            return Ok(());
        }
        need(c, indices)?;
        // The side is asked for `k` entries, not `len`: if the category
        // grew since `counts`, entries past `k` would be left in the side's
        // numbering, unmapped.
        let lib = match side {
            Side::Lib(i) => {
                let lib = c.lib_or(code::INVALID_INDEX)?;
                // SAFETY: `indices` holds `len >= k` ints (contract).
                c.call(theirs(lib), |f| unsafe { f(i, to_int(k), indices) })?;
                true
            }
            Side::Ours(i) => {
                // SAFETY: `indices` holds `len >= k` ints (contract).
                c.ours(unsafe { mine(i, to_int(k), indices) })?;
                false
            }
        };
        // SAFETY: non-NULL, valid for `len >= k` ints (contract), the
        // first `k` written by the side just called.
        let written = unsafe { core::slice::from_raw_parts_mut(indices, k) };
        index::merged_all(c, which, lib, written)
    })
}

/// `MPI_T_category_get_cvars`: merged control variable indices.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_cvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        members(
            cat_index,
            len,
            indices,
            Kind::Cvar,
            |l| l.category_get_cvars,
            ours::PMPI_T_category_get_cvars,
        )
    }
}

/// `MPI_T_category_get_pvars`: merged performance variable indices.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_pvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        members(
            cat_index,
            len,
            indices,
            Kind::Pvar,
            |l| l.category_get_pvars,
            ours::PMPI_T_category_get_pvars,
        )
    }
}

/// `MPI_T_category_get_categories`: merged category indices.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        members(
            cat_index,
            len,
            indices,
            Kind::Category,
            |l| l.category_get_categories,
            ours::PMPI_T_category_get_categories,
        )
    }
}

/// The library's last stamp, used while its MPI_T is not in use (so the
/// sum never goes back).
static LAST_LIB_STAMP: AtomicI32 = AtomicI32::new(0);

/// `MPI_T_category_changed`: the sum of the library's stamp and pvar's
/// (wrapping), so it changes when either does.
///
/// # Safety
/// `update_number` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_changed(update_number: *mut c_int) -> c_int {
    entry(|c| {
        need(c, update_number)?;
        let mut lib_stamp = LAST_LIB_STAMP.load(Ordering::Relaxed);
        if let Some(lib) = c.lib {
            let mut s = 0;
            // SAFETY: a local OUT value.
            c.call(lib.category_changed, |f| unsafe { f(&mut s) })?;
            LAST_LIB_STAMP.store(s, Ordering::Relaxed);
            lib_stamp = s;
        }
        let mut mine = 0;
        // SAFETY: a local OUT value.
        c.ours(unsafe { ours::PMPI_T_category_changed(&mut mine) })?;
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { update_number.write_unaligned(lib_stamp.wrapping_add(mine)) };
        Ok(())
    })
}

/// `MPI_T_category_get_num_events`: pvar's events of pvar's categories;
/// 0 for the library's (its events are not forwarded).
///
/// # Safety
/// `num_events` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> c_int {
    entry(|c| {
        need(c, num_events)?;
        match index::resolve(c, Kind::Category, cat_index)? {
            Side::Lib(_) => {
                // SAFETY: checked non-NULL; valid by contract.
                unsafe { num_events.write_unaligned(0) };
                Ok(())
            }
            // SAFETY: the tool's pointer.
            Side::Ours(i) => c.ours(unsafe { ours::PMPI_T_category_get_num_events(i, num_events) }),
        }
    })
}

/// `MPI_T_category_get_events`: pvar's event indices (the event index
/// space is pvar's alone); nothing for the library's categories.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_category_get_events(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    entry(|c| match index::resolve(c, Kind::Category, cat_index)? {
        Side::Lib(_) if len < 0 => Err(c.e(code::INVALID)),
        Side::Lib(_) => Ok(()),
        // SAFETY: the tool's arguments.
        Side::Ours(i) => c.ours(unsafe { ours::PMPI_T_category_get_events(i, len, indices) }),
    })
}
