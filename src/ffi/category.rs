//! `MPI_T_category_*` and `MPI_T_enum_*`.
//!
//! An `MPI_T_enum` is the enumeration's stable index in the registry plus
//! one (so that `MPI_T_ENUM_NULL` is 0). A value that is not such a handle
//! (NULL, made up) gets `MPI_T_ERR_INVALID_HANDLE`, like every other bad
//! handle of the interface; an item index out of range gets
//! `MPI_T_ERR_INVALID_INDEX` (the MPI 4 rule; `MPI_T_ERR_INVALID_ITEM` is
//! never returned).

use core::ffi::{c_char, c_int};

use super::boundary::{
    CResult, ERR_INVALID, ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, OrCode, index,
    mpi_t_fn, mpit_call, require, set_opt, set_req, to_int,
};
use super::strings::{arg_str, put_string};
use super::types::Enum;
use crate::category::Categories;

mpi_t_fn! {
    /// `MPI_T_category_get_num`.
    fn PMPI_T_category_get_num / MPI_T_category_get_num(num_cat: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment; validity is the caller's.
        mpit_call(|reg| unsafe { set_req(num_cat, to_int(reg.categories().len())) })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_info`: every OUT pointer may be NULL (ignored).
    fn PMPI_T_category_get_info / MPI_T_category_get_info(
        cat_index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        desc: *mut c_char,
        desc_len: *mut c_int,
        num_cvars: *mut c_int,
        num_pvars: *mut c_int,
        num_categories: *mut c_int,
    ) {
        mpit_call(|reg| {
            let info = reg.categories().info(index(cat_index, ERR_INVALID_INDEX)?).c()?;
            // SAFETY: every pointer is NULL (ignored) or valid for its write
            // (caller's contract); the helpers check NULL and alignment.
            unsafe {
                put_string(info.name, name, name_len);
                put_string(info.description, desc, desc_len);
                set_opt(num_cvars, to_int(info.num_cvars));
                set_opt(num_pvars, to_int(info.num_pvars));
                set_opt(num_categories, to_int(info.num_categories));
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_index`.
    fn PMPI_T_category_get_index / MPI_T_category_get_index(
        name: *const c_char,
        cat_index: *mut c_int,
    ) {
        mpit_call(|reg| {
            require(cat_index)?;
            // SAFETY: NULL checked by `arg_str`; NUL-terminated by contract.
            let name = unsafe { arg_str(name, ERR_INVALID_NAME) }?;
            let i = reg.categories().index(name).c()?;
            // SAFETY: checked by `require` above.
            unsafe { set_req(cat_index, to_int(i)) }
        })
    }
}

/// The shared body of `get_cvars / get_pvars / get_categories`: writes the
/// first `len` indices, leaves the rest of the array untouched.
///
/// # Safety
/// `indices` is NULL or valid for writes of `len` ints.
unsafe fn members(
    cats: &Categories,
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
    into: fn(&Categories, usize, &mut [i32]) -> crate::vocabulary::error::Result<usize>,
) -> CResult {
    let i = index(cat_index, ERR_INVALID_INDEX)?;
    let len = usize::try_from(len).map_err(|_| ERR_INVALID)?;
    if len == 0 {
        return into(cats, i, &mut []).c().map(drop);
    }
    require(indices)?;
    // SAFETY: non-NULL and aligned (checked); valid for `len` ints (the
    // caller's contract).
    let out = unsafe { core::slice::from_raw_parts_mut(indices, len) };
    into(cats, i, out).c().map(drop)
}

mpi_t_fn! {
    /// `MPI_T_category_get_cvars`.
    fn PMPI_T_category_get_cvars / MPI_T_category_get_cvars(
        cat_index: c_int,
        len: c_int,
        indices: *mut c_int,
    ) {
        // SAFETY: `indices` holds `len` ints (caller's contract).
        mpit_call(|reg| unsafe {
            members(reg.categories(), cat_index, len, indices, Categories::cvars_into)
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_pvars`.
    fn PMPI_T_category_get_pvars / MPI_T_category_get_pvars(
        cat_index: c_int,
        len: c_int,
        indices: *mut c_int,
    ) {
        // SAFETY: `indices` holds `len` ints (caller's contract).
        mpit_call(|reg| unsafe {
            members(reg.categories(), cat_index, len, indices, Categories::pvars_into)
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_categories`.
    fn PMPI_T_category_get_categories / MPI_T_category_get_categories(
        cat_index: c_int,
        len: c_int,
        indices: *mut c_int,
    ) {
        // SAFETY: `indices` holds `len` ints (caller's contract).
        mpit_call(|reg| unsafe {
            members(reg.categories(), cat_index, len, indices, Categories::categories_into)
        })
    }
}

/// The engine's 64-bit change stamp as `MPI_T_category_changed` returns it:
/// modulo 2^31, so it stays non-negative and wraps to 0 after `INT_MAX`.
/// Equal values from two calls then mean no change in between, or a
/// multiple of 2^31 changes (saturating instead, as before, would hide
/// every change after the 2^31 − 1st).
pub(crate) fn c_stamp(stamp: u64) -> c_int {
    (stamp & c_int::MAX as u64) as c_int
}

mpi_t_fn! {
    /// `MPI_T_category_changed`: the change stamp modulo 2^31 (`c_stamp`);
    /// two calls that return the same value saw the same categories.
    fn PMPI_T_category_changed / MPI_T_category_changed(stamp: *mut c_int) {
        mpit_call(|reg| {
            let s = c_stamp(reg.categories().changed());
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(stamp, s) }
        })
    }
}

/// The enumeration index behind a live `MPI_T_enum`, or
/// `MPI_T_ERR_INVALID_HANDLE`.
fn enum_index(reg: &crate::registry::Registry, e: Enum) -> CResult<usize> {
    let i = (e as usize).checked_sub(1).ok_or(ERR_INVALID_HANDLE)?;
    reg.enums().get(i).map_err(|_| ERR_INVALID_HANDLE)?;
    Ok(i)
}

mpi_t_fn! {
    /// `MPI_T_enum_get_info`: OUT pointers may be NULL (ignored).
    fn PMPI_T_enum_get_info / MPI_T_enum_get_info(
        enumtype: Enum,
        num: *mut c_int,
        name: *mut c_char,
        name_len: *mut c_int,
    ) {
        mpit_call(|reg| {
            let (n, ename) = reg.enums().info(enum_index(reg, enumtype)?).c()?;
            // SAFETY: NULL (ignored) or valid (contract); helpers check.
            unsafe {
                set_opt(num, to_int(n));
                put_string(ename, name, name_len);
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_enum_get_item`: `value` is required; `name`/`name_len`
    /// follow the string convention.
    fn PMPI_T_enum_get_item / MPI_T_enum_get_item(
        enumtype: Enum,
        item_index: c_int,
        value: *mut c_int,
        name: *mut c_char,
        name_len: *mut c_int,
    ) {
        mpit_call(|reg| {
            let e = enum_index(reg, enumtype)?;
            require(value)?;
            let item = reg.enums().item(e, index(item_index, ERR_INVALID_INDEX)?).c()?;
            // SAFETY: `value` checked by `require`; the string pair is NULL
            // or valid (contract) and checked by `put_string`.
            unsafe {
                put_string(&item.name, name, name_len);
                set_req(value, item.value)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::c_stamp;

    #[test]
    fn the_c_stamp_wraps_modulo_2_31_and_stays_non_negative() {
        assert_eq!(c_stamp(0), 0);
        assert_eq!(c_stamp(7), 7);
        assert_eq!(c_stamp(i32::MAX as u64), i32::MAX);
        // Past INT_MAX: a change is still a different value (it saturated).
        assert_eq!(c_stamp(i32::MAX as u64 + 1), 0);
        assert_ne!(c_stamp(i32::MAX as u64 + 1), c_stamp(i32::MAX as u64));
        assert_ne!(c_stamp(i32::MAX as u64 + 2), c_stamp(i32::MAX as u64 + 1));
        assert_eq!(c_stamp(u64::MAX), i32::MAX);
        for s in [1u64 << 31, 1 << 32, (1 << 40) + 5, u64::MAX - 1] {
            assert!(c_stamp(s) >= 0);
            assert_ne!(c_stamp(s), c_stamp(s + 1), "{s}");
        }
    }
}
