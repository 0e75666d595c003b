//! The MPI 4 event and source functions, for pvar's events only (the
//! library's are not forwarded: see the module documentation of
//! [`super`]). The event and source index spaces are pvar's own.
//!
//! Registrations are pvar's keys, passed as they are (no library
//! registration can reach a tool). Callbacks go through trampolines that
//! hand the tool the library's callback safety constant: a registered
//! callback's context ([`Callback`]) lives until the registration is freed
//! — pvar calls the free callback once no callback of it runs — and is then
//! released on a later, ordinary call (the free callback may run in a
//! signal handler, where nothing may be deallocated). Registrations left
//! open at the last `MPI_T_finalize` keep their (small) contexts.

use core::ffi::{c_char, c_int, c_void};
use core::ptr::null_mut;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use pvar::ffi::mpi_t as ours;

use super::{
    Ctx, LIBRARY, R, code, datatype_out_at, entry, enum_out, info_null_out, need, object_arg,
    our_bind, put, to_int,
};
use crate::library::Handle;

/// `MPI_T_event_instance`.
type Instance = *mut c_void;
/// `MPI_T_event_registration`.
type Registration = *mut c_void;
/// `MPI_Info` (4 bytes in MPICH, 8 in Open MPI: received in a full
/// register on x86_64 and never interpreted — pvar keeps no hints).
type Info = *mut c_void;
/// `MPI_Count`.
type Count = i64;
/// `MPI_T_event_cb_function *`.
type ToolCb = unsafe extern "C" fn(Instance, Registration, c_int, *mut c_void);
/// `MPI_T_event_free_cb_function *`.
type ToolFree = unsafe extern "C" fn(Registration, c_int, *mut c_void);
/// `MPI_T_event_dropped_cb_function *`.
type ToolDropped = unsafe extern "C" fn(Count, Registration, c_int, c_int, *mut c_void);

/// The library's callback safety value for pvar's (callbacks run after
/// init, so the table is loaded; pvar's value otherwise).
fn lib_safety(ours: c_int) -> c_int {
    LIBRARY.get().map_or(ours, |l| l.abi.cb_safety(ours))
}

// ---- sources ----------------------------------------------------------------

/// `MPI_T_source_get_num`: pvar's sources.
///
/// # Safety
/// `num_sources` is NULL (`MPI_T_ERR_INVALID`) or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_source_get_num(num_sources: *mut c_int) -> c_int {
    // SAFETY: the tool's pointer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_source_get_num(num_sources) }))
}

/// `MPI_T_source_get_info`: ordering in the library's constants, `info`
/// its `MPI_INFO_NULL`.
///
/// # Safety
/// OUT pointers NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut c_int,
    ticks_per_second: *mut Count,
    max_ticks: *mut Count,
    info: *mut c_void,
) -> c_int {
    entry(|c| {
        let mut order = 0;
        // SAFETY: the tool's pointers (NULL or valid), a local OUT value.
        c.ours(unsafe {
            ours::PMPI_T_source_get_info(
                source_index,
                name,
                name_len,
                desc,
                desc_len,
                &mut order,
                ticks_per_second,
                max_ticks,
                null_mut(),
            )
        })?;
        // SAFETY: NULL or valid (contract).
        unsafe {
            put(ordering, c.abi.source_order(order));
            info_null_out(c, info);
        }
        Ok(())
    })
}

/// `MPI_T_source_get_timestamp`.
///
/// # Safety
/// `timestamp` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_source_get_timestamp(
    source_index: c_int,
    timestamp: *mut Count,
) -> c_int {
    // SAFETY: the tool's pointer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_source_get_timestamp(source_index, timestamp) }))
}

// ---- event types ------------------------------------------------------------

/// `MPI_T_event_get_num`: pvar's event types.
///
/// # Safety
/// `num_events` NULL (`MPI_T_ERR_INVALID`) or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_get_num(num_events: *mut c_int) -> c_int {
    // SAFETY: the tool's pointer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_get_num(num_events) }))
}

/// `MPI_T_event_get_info`: datatypes written as the library's
/// `MPI_Datatype`s (its size each), verbosity and binding translated,
/// `info` the library's `MPI_INFO_NULL`.
///
/// # Safety
/// As the standard's C binding: the arrays hold `*num_elements` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_get_info(
    event_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    array_of_datatypes: *mut c_void,
    array_of_displacements: *mut isize,
    num_elements: *mut c_int,
    enumtype: *mut Handle,
    info: *mut c_void,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
) -> c_int {
    entry(|c| {
        let cap = if num_elements.is_null() {
            0
        } else {
            // SAFETY: non-NULL; valid by contract.
            let n = unsafe { num_elements.read_unaligned() };
            usize::try_from(n).map_err(|_| c.e(code::INVALID))?
        };
        let mut types: Vec<*mut c_void> = if array_of_datatypes.is_null() || cap == 0 {
            Vec::new()
        } else {
            // The event type's element count first: the local array is
            // bounded by it, not by the tool's (possibly huge) capacity.
            let mut have: c_int = 0;
            // SAFETY: only the count is requested (a capacity of 0: no
            // array is written; NULL elsewhere: ignored).
            c.ours(unsafe {
                ours::PMPI_T_event_get_info(
                    event_index,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    &mut have,
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                )
            })?;
            vec![null_mut(); cap.min(usize::try_from(have).unwrap_or(0))]
        };
        let types_ptr = if types.is_empty() {
            null_mut()
        } else {
            types.as_mut_ptr()
        };
        // The capacity pvar sees: never more than the local array holds
        // (nor than the tool's arrays, `cap`).
        let mut n = to_int(if types.is_empty() { cap } else { types.len() });
        let n_ptr: *mut c_int = if num_elements.is_null() {
            null_mut()
        } else {
            &mut n
        };
        let (mut v, mut e, mut b) = (0, null_mut(), 0);
        // SAFETY: the tool's strings and displacements (NULL or valid for
        // `cap >= n` entries), the local array (`n` entries when passed)
        // and OUT values.
        c.ours(unsafe {
            ours::PMPI_T_event_get_info(
                event_index,
                name,
                name_len,
                &mut v,
                types_ptr,
                array_of_displacements,
                n_ptr,
                &mut e,
                null_mut(),
                desc,
                desc_len,
                &mut b,
            )
        })?;
        let filled = cap.min(usize::try_from(n).unwrap_or(0));
        for (k, &t) in types.iter().take(filled).enumerate() {
            // SAFETY: the tool's array holds `cap > k` datatypes.
            unsafe { datatype_out_at(c, array_of_datatypes, k, t) }?;
        }
        // SAFETY: NULL or valid (contract).
        unsafe {
            put(num_elements, n);
            put(verbosity, c.abi.verbosity(v));
            put(enumtype, enum_out(c, e));
            put(bind, c.abi.bind(b));
            info_null_out(c, info);
        }
        Ok(())
    })
}

/// `MPI_T_event_get_index`.
///
/// # Safety
/// `name` NULL or NUL-terminated; `event_index` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_get_index(
    name: *const c_char,
    event_index: *mut c_int,
) -> c_int {
    // SAFETY: the tool's pointers.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_get_index(name, event_index) }))
}

// ---- registrations ----------------------------------------------------------

/// The state shared by a registration's callbacks.
#[derive(Default)]
struct Shared {
    /// The tool's dropped handler (`ToolDropped` as an address; 0: none).
    dropped: AtomicUsize,
}

/// One registered callback: what the trampoline calls.
struct Callback {
    f: ToolCb,
    user_data: *mut c_void,
    shared: Arc<Shared>,
}

/// A registration's contexts, kept until it is freed.
#[derive(Default)]
struct RegState {
    shared: Arc<Shared>,
    /// Boxed: the trampolines hold their addresses while the vector grows.
    #[allow(clippy::vec_box)]
    callbacks: Vec<Box<Callback>>,
}

/// The contexts of live registrations, by key.
struct Regs(HashMap<u64, RegState>);

// SAFETY: the raw `user_data` pointers are only handed back to the tool's
// own callbacks, which the standard requires to cope with any thread.
unsafe impl Send for Regs {}

static REGS: Mutex<Option<Regs>> = Mutex::new(None);

fn regs() -> MutexGuard<'static, Option<Regs>> {
    REGS.lock().unwrap_or_else(|p| p.into_inner())
}

fn with_regs<T>(f: impl FnOnce(&mut HashMap<u64, RegState>) -> T) -> T {
    let mut g = regs();
    f(&mut g.get_or_insert_with(|| Regs(HashMap::new())).0)
}

/// The last `MPI_T_finalize` freed every registration without a free
/// callback: their contexts are kept (a callback may still be returning)
/// and the table starts afresh.
pub(crate) fn forget_registrations() {
    let old = regs().take();
    core::mem::forget(old);
    reap();
}

/// What the free trampoline needs, pushed on [`GRAVEYARD`] once it ran.
struct FreeCtx {
    next: *mut FreeCtx,
    f: Option<ToolFree>,
    user_data: *mut c_void,
    state: Option<RegState>,
}

/// Freed registrations' contexts, released by [`reap`] (a lock-free
/// stack: the free trampoline may run in a signal handler).
static GRAVEYARD: AtomicPtr<FreeCtx> = AtomicPtr::new(null_mut());

/// Releases the contexts of freed registrations (not from a signal
/// handler).
fn reap() {
    let mut p = GRAVEYARD.swap(null_mut(), Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: pushed by `free_trampoline` after its last use; each
        // node was made by `Box::into_raw` and is on the stack once.
        let b = unsafe { Box::from_raw(p) };
        p = b.next;
    }
}

unsafe extern "C" fn cb_trampoline(
    instance: Instance,
    registration: Registration,
    cb_safety: c_int,
    user_data: *mut c_void,
) {
    // SAFETY: `user_data` is the `Callback` registered with this
    // trampoline, alive until the registration's free callback ran.
    let cb = unsafe { &*user_data.cast::<Callback>() };
    // SAFETY: the tool's callback, called as the standard says.
    unsafe { (cb.f)(instance, registration, lib_safety(cb_safety), cb.user_data) }
}

unsafe extern "C" fn dropped_trampoline(
    count: Count,
    registration: Registration,
    source_index: c_int,
    cb_safety: c_int,
    user_data: *mut c_void,
) {
    if user_data.is_null() {
        return;
    }
    // SAFETY: pvar passes the `user_data` of the callback chosen for the
    // delivery: a live `Callback` (see `cb_trampoline`).
    let cb = unsafe { &*user_data.cast::<Callback>() };
    let f = cb.shared.dropped.load(Ordering::Acquire);
    if f == 0 {
        return;
    }
    // SAFETY: a non-zero value is a `ToolDropped` stored by
    // `MPI_T_event_set_dropped_handler`.
    let f: ToolDropped = unsafe { core::mem::transmute::<usize, ToolDropped>(f) };
    // SAFETY: the tool's handler, called as the standard says.
    unsafe {
        f(
            count,
            registration,
            source_index,
            lib_safety(cb_safety),
            cb.user_data,
        )
    }
}

unsafe extern "C" fn free_trampoline(
    registration: Registration,
    cb_safety: c_int,
    user_data: *mut c_void,
) {
    let ctx = user_data.cast::<FreeCtx>();
    // SAFETY: the `FreeCtx` given with this trampoline; pvar calls it
    // once, after the registration's last callback returned.
    let (f, ud) = unsafe { ((*ctx).f, (*ctx).user_data) };
    if let Some(f) = f {
        // SAFETY: the tool's free callback, called once.
        unsafe { f(registration, lib_safety(cb_safety), ud) };
    }
    // Deallocation waits for `reap`: this may be a signal handler.
    let mut head = GRAVEYARD.load(Ordering::Relaxed);
    loop {
        // SAFETY: `ctx` is ours alone until pushed.
        unsafe { (*ctx).next = head };
        match GRAVEYARD.compare_exchange_weak(head, ctx, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => break,
            Err(h) => head = h,
        }
    }
}

/// `MPI_T_event_handle_alloc`: the bound object read as the library's
/// handle type; `info` ignored.
///
/// # Safety
/// `obj_handle` NULL or the address of the object's handle;
/// `event_registration` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_handle_alloc(
    event_index: c_int,
    obj_handle: *mut c_void,
    info: Info,
    event_registration: *mut Registration,
) -> c_int {
    let _ = info;
    // SAFETY: NULL or valid (contract).
    unsafe { put(event_registration, null_mut()) };
    entry(|c| {
        reap();
        need(c, event_registration)?;
        let bind = our_bind(c, event_index, |r, i| r.events().info(i).map(|e| e.bind))?;
        let mut slot = 0u64;
        // SAFETY: NULL or the library's handle of this binding (contract).
        let obj = unsafe { object_arg(c, bind, obj_handle, &mut slot) };
        // SAFETY: `obj` as above or `&slot`; the tool's OUT pointer.
        c.ours(unsafe {
            ours::PMPI_T_event_handle_alloc(event_index, obj, null_mut(), event_registration)
        })
    })
}

/// `MPI_T_event_handle_set_info`: hints are ignored.
///
/// # Safety
/// Values only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_handle_set_info(
    event_registration: Registration,
    info: Info,
) -> c_int {
    let _ = info;
    // SAFETY: pvar validates the key.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_handle_set_info(event_registration, null_mut()) }))
}

/// Writes the info object an event `*_get_info` call returns through
/// `p` (non-NULL): MPI 4.1 asks for a new info object holding the hints
/// in effect. pvar keeps no hints, so while the library's MPI is
/// initialised (and not finalised) that is a new, empty object made by
/// its `MPI_Info_create`, which the tool frees with `MPI_Info_free`; before
/// `MPI_Init`, after `MPI_Finalize`, or with the library's MPI_T unusable,
/// its `MPI_INFO_NULL` (as the standalone `libpvar` always returns).
///
/// # Safety
/// `p` is non-NULL and valid for a write of the library's `MPI_Info`.
unsafe fn info_used_out(c: &Ctx, p: *mut c_void) -> R {
    if let Some(lib) = c.lib
        && let (Some(create), Some(initialized), Some(finalized)) =
            (lib.info_create, lib.initialized, lib.finalized)
    {
        let (mut init, mut fin) = (0, 0);
        // SAFETY: `MPI_Initialized` / `MPI_Finalized` may be called at any
        // time; local OUT values.
        let live =
            unsafe { initialized(&mut init) == lib.success && finalized(&mut fin) == lib.success };
        if live && init != 0 && fin == 0 {
            // SAFETY: `p` holds an `MPI_Info` of the library (contract);
            // MPI is initialised.
            return c.theirs(unsafe { create(p) });
        }
    }
    // SAFETY: as above.
    unsafe { info_null_out(c, p) };
    Ok(())
}

/// `MPI_T_event_handle_get_info`: a new, empty info object of the library
/// while MPI is initialised, else its `MPI_INFO_NULL` ([`info_used_out`]).
///
/// # Safety
/// `info_used` NULL (`MPI_T_ERR_INVALID`) or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_handle_get_info(
    event_registration: Registration,
    info_used: *mut c_void,
) -> c_int {
    entry(|c| {
        need(c, info_used)?;
        let mut i = null_mut();
        // SAFETY: pvar validates the key; a local OUT value.
        c.ours(unsafe { ours::PMPI_T_event_handle_get_info(event_registration, &mut i) })?;
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { info_used_out(c, info_used) }
    })
}

/// The library's callback safety value as pvar's, or `MPI_T_ERR_INVALID`.
fn safety(c: &Ctx, theirs: c_int) -> R<c_int> {
    c.abi.cb_safety_to_ours(theirs).ok_or(c.e(code::INVALID))
}

/// `MPI_T_event_register_callback`: through a trampoline that hands the
/// tool the library's safety constant.
///
/// # Safety
/// `event_cb_function` NULL or a valid callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_register_callback(
    event_registration: Registration,
    cb_safety: c_int,
    info: Info,
    user_data: *mut c_void,
    event_cb_function: Option<ToolCb>,
) -> c_int {
    let _ = info;
    entry(|c| {
        reap();
        let level = safety(c, cb_safety)?;
        let key = event_registration as u64;
        with_regs(|regs| {
            let Some(f) = event_cb_function else {
                // SAFETY: pvar validates the key; NULL removes.
                return c.ours(unsafe {
                    ours::PMPI_T_event_register_callback(
                        event_registration,
                        level,
                        null_mut(),
                        null_mut(),
                        None,
                    )
                });
            };
            let shared = regs.get(&key).map(|s| s.shared.clone()).unwrap_or_default();
            let cb = Box::new(Callback {
                f,
                user_data,
                shared: shared.clone(),
            });
            let ud = (&*cb as *const Callback).cast_mut().cast::<c_void>();
            // SAFETY: pvar validates the key; `ud` lives in `regs` until
            // the registration's free callback ran.
            c.ours(unsafe {
                ours::PMPI_T_event_register_callback(
                    event_registration,
                    level,
                    null_mut(),
                    ud,
                    Some(cb_trampoline),
                )
            })?;
            regs.entry(key)
                .or_insert_with(|| RegState {
                    shared,
                    callbacks: Vec::new(),
                })
                .callbacks
                .push(cb);
            Ok(())
        })
    })
}

/// `MPI_T_event_callback_set_info`: hints are ignored.
///
/// # Safety
/// Values only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_callback_set_info(
    event_registration: Registration,
    cb_safety: c_int,
    info: Info,
) -> c_int {
    let _ = info;
    entry(|c| {
        let level = safety(c, cb_safety)?;
        // SAFETY: pvar validates the key.
        c.ours(unsafe {
            ours::PMPI_T_event_callback_set_info(event_registration, level, null_mut())
        })
    })
}

/// `MPI_T_event_callback_get_info`: as [`MPI_T_event_handle_get_info`].
///
/// # Safety
/// `info_used` NULL (`MPI_T_ERR_INVALID`) or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_callback_get_info(
    event_registration: Registration,
    cb_safety: c_int,
    info_used: *mut c_void,
) -> c_int {
    entry(|c| {
        need(c, info_used)?;
        let level = safety(c, cb_safety)?;
        let mut i = null_mut();
        // SAFETY: pvar validates the key; a local OUT value.
        c.ours(unsafe { ours::PMPI_T_event_callback_get_info(event_registration, level, &mut i) })?;
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { info_used_out(c, info_used) }
    })
}

/// `MPI_T_event_handle_free`: the tool's free callback (if any) runs once
/// no callback of the registration runs, with the library's safety value.
///
/// # Safety
/// `free_cb_function` NULL or a valid callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_handle_free(
    event_registration: Registration,
    user_data: *mut c_void,
    free_cb_function: Option<ToolFree>,
) -> c_int {
    let r = entry(|c| {
        let key = event_registration as u64;
        let ctx = Box::into_raw(Box::new(FreeCtx {
            next: null_mut(),
            f: free_cb_function,
            user_data,
            state: with_regs(|regs| regs.remove(&key)),
        }));
        // Not under `REGS`: pvar runs the free callback (the tool's) in
        // this call when no callback of the registration runs, and the
        // tool's callback may call `MPI_T_event_*` functions that take it.
        // SAFETY: pvar validates the key; `ctx` is released by
        // `free_trampoline` (through `reap`) once pvar calls it.
        let rc = unsafe {
            ours::PMPI_T_event_handle_free(event_registration, ctx.cast(), Some(free_trampoline))
        };
        if rc != 0 {
            // Not freed: pvar keeps no reference to `ctx`.
            // SAFETY: made by `Box::into_raw` above, not shared.
            let mut ctx = unsafe { Box::from_raw(ctx) };
            if let Some(state) = ctx.state.take() {
                with_regs(|regs| match regs.entry(key) {
                    // A callback registered meanwhile: keep both contexts.
                    std::collections::hash_map::Entry::Occupied(mut e) => {
                        e.get_mut().callbacks.extend(state.callbacks);
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(state);
                    }
                });
            }
        }
        c.ours(rc)
    });
    reap();
    r
}

/// `MPI_T_event_set_dropped_handler`.
///
/// # Safety
/// `dropped_cb_function` NULL or a valid handler.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_set_dropped_handler(
    event_registration: Registration,
    dropped_cb_function: Option<ToolDropped>,
) -> c_int {
    entry(|c| {
        let key = event_registration as u64;
        with_regs(|regs| {
            let tramp = dropped_cb_function.map(|_| dropped_trampoline as ToolDropped);
            // SAFETY: pvar validates the key.
            c.ours(unsafe { ours::PMPI_T_event_set_dropped_handler(event_registration, tramp) })?;
            regs.entry(key).or_default().shared.dropped.store(
                dropped_cb_function.map_or(0, |f| f as usize),
                Ordering::Release,
            );
            Ok(())
        })
    })
}

// ---- instances (from callbacks) -------------------------------------------

/// `MPI_T_event_read`.
///
/// # Safety
/// `buffer` holds one element of its datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_read(
    event_instance: Instance,
    element_index: c_int,
    buffer: *mut c_void,
) -> c_int {
    // SAFETY: pvar validates the instance; the tool's buffer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_read(event_instance, element_index, buffer) }))
}

/// `MPI_T_event_copy`.
///
/// # Safety
/// `buffer` holds the event type's extent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_copy(event_instance: Instance, buffer: *mut c_void) -> c_int {
    // SAFETY: pvar validates the instance; the tool's buffer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_copy(event_instance, buffer) }))
}

/// `MPI_T_event_get_timestamp`.
///
/// # Safety
/// `event_timestamp` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_get_timestamp(
    event_instance: Instance,
    event_timestamp: *mut Count,
) -> c_int {
    // SAFETY: pvar validates the instance; the tool's pointer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_get_timestamp(event_instance, event_timestamp) }))
}

/// `MPI_T_event_get_source`.
///
/// # Safety
/// `source_index` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_event_get_source(
    event_instance: Instance,
    source_index: *mut c_int,
) -> c_int {
    // SAFETY: pvar validates the instance; the tool's pointer.
    entry(|c| c.ours(unsafe { ours::PMPI_T_event_get_source(event_instance, source_index) }))
}
