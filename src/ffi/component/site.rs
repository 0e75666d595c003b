//! C use sites: the slow path behind `pvar.h`'s `PVAR_COUNTER_INC`,
//! `PVAR_AGGREGATE_ADD`, `PVAR_LEVEL_INC`, … macros.
//!
//! Each macro call declares a `static __thread pvar_site` in the C
//! component: the handle it was filled for and that handle's serial, the
//! calling thread's cell of element 0, the element count, the owner word
//! of the thread's record and the thread's incarnation. The header's
//! inline fast path uses the cell while the handle matches (its address
//! *and* its serial, the first word of every handle: a handle freed and
//! another made at the same address has another serial), the element is
//! in range and the owner word still holds the incarnation (see
//! `hot::cells::site_cache` for why that proves the cell is still the
//! thread's); otherwise it calls
//! [`pvar_site_fill_v2`], which refills the cache and returns the cell to
//! update now, or NULL, and the macro then calls the update function
//! (`pvar_add_at`, …), which knows every other case (exiting thread,
//! element out of range, a class the macro does not apply to).

use core::ffi::{c_int, c_void};

use super::deref;
use super::register::{Var, VarHandle};
use crate::hot::cells::OwnedCell;
use crate::hot::cells::site_cache;
use crate::sync::Ordering;
use crate::sync::unmodelled::AtomicU64;

/// `PVAR_SITE_INT`: the macro adds integers to the cell (integer COUNTER,
/// AGGREGATE, LEVEL).
const SITE_INT: c_int = 0;
/// `PVAR_SITE_DOUBLE`: the macro adds doubles to the cell's bits (double
/// AGGREGATE, LEVEL).
const SITE_DOUBLE: c_int = 1;

/// `pvar_site` of `pvar.h`, field for field.
#[repr(C)]
pub struct CSite {
    var: *mut c_void,
    serial: u64,
    cell: *mut u64,
    count: usize,
    owner: *const u64,
    incarnation: u64,
}

/// The cell of element `i` of `var` for the calling thread, and what makes
/// it cacheable, if `var` holds per-thread cells of the `kind` the macro
/// adds.
fn owned_cell(var: &Var, kind: c_int, i: usize) -> Option<(OwnedCell<'_>, usize)> {
    let (cell, count) = match (var, kind) {
        (Var::Counter(x), SITE_INT) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::AggU32(x), SITE_INT) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::AggU64(x), SITE_INT) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::LevelU32(x), SITE_INT) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::LevelU64(x), SITE_INT) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::AggF64(x), SITE_DOUBLE) if i < x.count() => (x.owned_cell_at(0), x.count()),
        (Var::LevelF64(x), SITE_DOUBLE) if i < x.count() => (x.owned_cell_at(0), x.count()),
        _ => return None,
    };
    Some((cell?, count))
}

/// Fills `site` (a C use site's thread-local cache) for `var` and returns
/// the calling thread's cell of element `i`, for the macro to update with
/// a relaxed load and store; or NULL, and the macro calls the update
/// function instead: for a NULL `var`, an element out of range, a class
/// or datatype that `kind` (`PVAR_SITE_INT` / `PVAR_SITE_DOUBLE`) does not
/// apply to, a thread that is exiting, or with updates compiled out.
///
/// The cache is left as it was when this call interrupts another fill on
/// the same thread (a signal handler), or when the thread's C sites cache
/// cells of another record (not possible through `pvar.h`, whose
/// variables are all in the process-wide registry).
///
/// Allocates on the first call on a thread (its record and cells), like
/// any first update; async-signal-safe afterwards.
///
/// # Safety
/// `site` points to a `pvar_site` of the calling thread; `var` is NULL or
/// a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_site_fill_v2(
    site: *mut CSite,
    var: *mut c_void,
    i: usize,
    kind: c_int,
) -> *mut u64 {
    if site.is_null() || !crate::pvar::ENABLED {
        return core::ptr::null_mut();
    }
    // SAFETY: caller's contract (`var` NULL or live, `site` the calling
    // thread's own cache).
    unsafe {
        fill_site(var, i, kind, |first, count, owned, h| {
            // SAFETY: `site` is the calling thread's own `static __thread`
            // cache, written by no other thread; a handler interrupting
            // these writes finds `begin_c_fill` refused and leaves the
            // cache alone. The cell is nulled first and set last, so a
            // handler's fast path, which needs a non-null cell, never
            // uses a half-written cache.
            let s = &mut *site;
            core::ptr::write_volatile(&mut s.cell, core::ptr::null_mut());
            core::ptr::write_volatile(&mut s.var, var);
            core::ptr::write_volatile(&mut s.serial, h.serial);
            core::ptr::write_volatile(&mut s.count, count);
            core::ptr::write_volatile(&mut s.owner, owned.owner.as_ptr().cast_const());
            core::ptr::write_volatile(&mut s.incarnation, owned.incarnation);
            core::ptr::write_volatile(&mut s.cell, first);
        })
    }
}

/// `pvar_use_site` of `pvar.h`, field for field: what the macros cache.
#[repr(C)]
pub struct UseSite {
    var: *mut c_void,
    epoch: u64,
    cell: *mut u64,
    count: usize,
    epoch_word: *const u64,
}

/// Fills `site` (a macro's thread-local cache) for `var` and returns the
/// calling thread's cell of element `i`, or NULL, as
/// [`pvar_site_fill_v2`] does. The cache keeps the handle's address and
/// the site epoch read before anything else (so a move of the epoch while
/// this runs leaves the cache stale, never wrong); `pvar.h`'s fast path
/// uses it while it is given that handle and the epoch word is unchanged
/// (`hot::cells::site_cache`: the epoch moves before a handle is freed and
/// when a thread that filled C sites exits).
///
/// # Safety
/// `site` points to a `pvar_use_site` of the calling thread; `var` is NULL
/// or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_use_site_fill_v1(
    site: *mut UseSite,
    var: *mut c_void,
    i: usize,
    kind: c_int,
) -> *mut u64 {
    if site.is_null() || !crate::pvar::ENABLED {
        return core::ptr::null_mut();
    }
    // The epoch before anything else: a move while this runs leaves the
    // cache stale, never wrong.
    let word = site_cache::c_epoch();
    let epoch = word.load(Ordering::Acquire);
    // SAFETY: caller's contract (`var` NULL or live, `site` the calling
    // thread's own cache).
    unsafe {
        fill_site(var, i, kind, |first, count, _, _| {
            // SAFETY: `site` is the calling thread's own `static __thread`
            // cache, written by no other thread; a handler interrupting
            // these writes finds `begin_c_fill` refused and leaves the
            // cache alone. The epoch is zeroed first (a value the word
            // never holds) and set last, so a handler's fast path never
            // uses a half-written cache.
            let s = &mut *site;
            core::ptr::write_volatile(&mut s.epoch, 0);
            core::ptr::write_volatile(&mut s.var, var);
            core::ptr::write_volatile(&mut s.cell, first);
            core::ptr::write_volatile(&mut s.count, count);
            core::ptr::write_volatile(&mut s.epoch_word, word.as_ptr().cast_const());
            core::ptr::write_volatile(&mut s.epoch, epoch);
        })
    }
}

/// What both fills share: the calling thread's cells of `var` (element
/// `i`, of `kind`), the cache written by `write` (given the first cell,
/// the element count, the owned cell and the handle) only when this
/// thread owns its record and no fill is in progress on it (a handler
/// interrupting one), and the cell of element `i` returned (NULL for a
/// NULL handle, another class or kind, or `i` out of range).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`; `write` writes only the calling
/// thread's own cache.
unsafe fn fill_site(
    var: *mut c_void,
    i: usize,
    kind: c_int,
    write: impl FnOnce(*mut u64, usize, &OwnedCell<'_>, &VarHandle),
) -> *mut u64 {
    // SAFETY: caller's contract.
    let Some(h) = (unsafe { deref::<VarHandle>(var) }) else {
        return core::ptr::null_mut();
    };
    let Some((owned, count)) = owned_cell(&h.var, kind, i) else {
        return core::ptr::null_mut();
    };
    let first = owned.cell.as_ptr();
    if site_cache::note_c_owner(owned.owner) && site_cache::begin_c_fill() {
        write(first, count, &owned, h);
        site_cache::end_c_fill();
    }
    // SAFETY: element `i < count` (`owned_cell` checked it); the
    // variable's cells are consecutive in one chunk of the thread's record.
    unsafe { first.add(i) }
}

// `pvar_use_site` has five 8-byte fields in this order.
const _: () = assert!(core::mem::offset_of!(UseSite, epoch) == 8);
const _: () = assert!(core::mem::offset_of!(UseSite, epoch_word) == 32);
const _: () = assert!(core::mem::size_of::<UseSite>() == 40);

// The header's mirror of the owner word is a plain `uint64_t` read with a
// relaxed atomic load: same size and alignment.
const _: () = assert!(core::mem::size_of::<AtomicU64>() == 8);

// `pvar.h` reads a handle's serial as the `uint64_t` at the handle's
// address, and `pvar_site` has six 8-byte fields in this order.
const _: () = assert!(core::mem::offset_of!(VarHandle, serial) == 0);
const _: () = assert!(core::mem::offset_of!(CSite, serial) == 8);
const _: () = assert!(core::mem::size_of::<CSite>() == 48);
