//! The MPI 4 event and source functions (`MPI_T_event_*`,
//! `MPI_T_source_*`, `MPI_T_category_get_{num_,}events`) over
//! [`crate::Events`].
//!
//! Handles: an `MPI_T_event_registration` is the registration's key (a
//! generation-checked slot key, as for pvar handles: a stale, freed or
//! foreign value is `MPI_T_ERR_INVALID_HANDLE`, never a dereference). An
//! `MPI_T_event_instance` is the address of the instance being delivered;
//! the functions taking one accept only an instance being delivered to a
//! callback up the calling thread's stack (anything else is
//! `MPI_T_ERR_INVALID_HANDLE`), so they are async-signal-safe and usable
//! from callbacks of every safety level. Info arguments are accepted and
//! ignored (the engine has no hints); `*_get_info` return `MPI_INFO_NULL`.

use core::ffi::{c_char, c_int, c_void};

use super::boundary::{
    CResult, ERR_INVALID, ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, OrCode,
    PassBack, index, mpi_t_fn, mpit_call, require, set_opt, set_req, to_int,
};
use super::pvar::object_at;
use super::strings::{arg_str, put_string};
use super::types::{Count, Datatype as CDatatype, Enum, Info};
use crate::event::{DroppedCallback, EventCallback, EventInstance, FreeCallback};
use crate::vocabulary::kinds::{BindKind, CbSafety};

/// `MPI_T_event_registration`.
type Registration = *mut c_void;
/// `MPI_T_event_instance`.
type Instance = *mut c_void;
/// `MPI_T_event_cb_function *`.
type CbFn = Option<unsafe extern "C" fn(Instance, Registration, c_int, *mut c_void)>;
/// `MPI_T_event_free_cb_function *`.
type FreeFn = Option<unsafe extern "C" fn(Registration, c_int, *mut c_void)>;
/// `MPI_T_event_dropped_cb_function *`.
type DroppedFn = Option<unsafe extern "C" fn(Count, Registration, c_int, c_int, *mut c_void)>;

/// `MPI_INFO_NULL` of the MPI 5.0 ABI.
const INFO_NULL: Info = 0x130 as Info;

fn key(r: Registration) -> u64 {
    r as usize as u64
}

fn safety(raw: c_int) -> CResult<CbSafety> {
    CbSafety::from_raw(raw).ok_or(ERR_INVALID)
}

/// The live instance `p`, or `MPI_T_ERR_INVALID_HANDLE`.
///
/// # Safety
/// The reference is used only within the calling MPI_T function.
unsafe fn instance<'a>(p: Instance) -> CResult<&'a EventInstance<'a>> {
    // SAFETY: forwarded: used within the current call, which runs inside
    // the callback that received `p` if `p` is live.
    unsafe { EventInstance::from_live(p) }.ok_or(ERR_INVALID_HANDLE)
}

// ---- sources ----------------------------------------------------------------

mpi_t_fn! {
    /// `MPI_T_source_get_num`.
    fn PMPI_T_source_get_num / MPI_T_source_get_num(num_sources: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment.
        mpit_call(|reg| unsafe { set_req(num_sources, to_int(reg.events().num_sources())) })
    }
}

mpi_t_fn! {
    /// `MPI_T_source_get_info`: NULL OUT arguments are ignored; `info` is
    /// `MPI_INFO_NULL`.
    fn PMPI_T_source_get_info / MPI_T_source_get_info(
        source_index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        desc: *mut c_char,
        desc_len: *mut c_int,
        ordering: *mut c_int,
        ticks_per_second: *mut Count,
        max_ticks: *mut Count,
        info: *mut Info,
    ) {
        mpit_call(|reg| {
            let s = reg
                .events()
                .source_info(index(source_index, ERR_INVALID_INDEX)?)
                .c()?;
            // SAFETY: each pointer is NULL (ignored) or valid for writes
            // (caller's contract); the helpers check NULL/alignment.
            unsafe {
                put_string(&s.name, name, name_len);
                put_string(&s.description, desc, desc_len);
                set_opt(ordering, s.ordering.raw());
                set_opt(ticks_per_second, s.ticks_per_second.min(i64::MAX as u64) as Count);
                set_opt(max_ticks, s.max_ticks.min(i64::MAX as u64) as Count);
                set_opt(info, INFO_NULL);
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_source_get_timestamp`: `MPI_T_ERR_NOT_SUPPORTED` for a source
    /// without a timestamp function. Async-signal-safe for source 0.
    fn PMPI_T_source_get_timestamp / MPI_T_source_get_timestamp(
        source_index: c_int,
        timestamp: *mut Count,
    ) {
        mpit_call(|reg| {
            require(timestamp)?;
            let t = reg
                .events()
                .source_timestamp(index(source_index, ERR_INVALID_INDEX)?)
                .c()?;
            // SAFETY: checked by `require`.
            unsafe { set_req(timestamp, t as Count) }
        })
    }
}

// ---- event types ------------------------------------------------------------

mpi_t_fn! {
    /// `MPI_T_event_get_num`.
    fn PMPI_T_event_get_num / MPI_T_event_get_num(num_events: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment.
        mpit_call(|reg| unsafe { set_req(num_events, to_int(reg.events().len())) })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_get_info`: NULL OUT arguments are ignored;
    /// `*num_elements` is the element count on return. On entry it is the
    /// capacity of the arrays, read only if one of them is not NULL (they
    /// are filled up to it; a negative capacity is `MPI_T_ERR_INVALID`):
    /// with both arrays NULL there is nothing to fill and the input is
    /// ignored, as the string convention ignores a length with a NULL
    /// buffer, so a tool that only asks for the count may leave it
    /// uninitialised. `enumtype` is `MPI_T_ENUM_NULL`, `info`
    /// `MPI_INFO_NULL`.
    fn PMPI_T_event_get_info / MPI_T_event_get_info(
        event_index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        array_of_datatypes: *mut CDatatype,
        array_of_displacements: *mut isize,
        num_elements: *mut c_int,
        enumtype: *mut Enum,
        info: *mut Info,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
    ) {
        mpit_call(|reg| {
            let e = reg.events().info(index(event_index, ERR_INVALID_INDEX)?).c()?;
            // SAFETY: each pointer is NULL (ignored) or valid for writes,
            // the arrays for `*num_elements` entries (caller's contract).
            unsafe {
                if let Some(n) = super::boundary::out(num_elements) {
                    let cap = if array_of_datatypes.is_null() && array_of_displacements.is_null() {
                        0
                    } else {
                        usize::try_from(*n).map_err(|_| ERR_INVALID)?
                    };
                    for (i, &(dt, disp)) in e.elements.iter().take(cap).enumerate() {
                        if !array_of_datatypes.is_null() {
                            *array_of_datatypes.add(i) = dt.raw() as usize as CDatatype;
                        }
                        if !array_of_displacements.is_null() {
                            *array_of_displacements.add(i) = disp as isize;
                        }
                    }
                    *n = to_int(e.elements.len());
                }
                put_string(&e.name, name, name_len);
                put_string(&e.description, desc, desc_len);
                set_opt(verbosity, e.verbosity.raw());
                set_opt(enumtype, core::ptr::null_mut());
                set_opt(info, INFO_NULL);
                set_opt(bind, e.bind.raw());
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_get_index`: `MPI_T_ERR_INVALID_NAME` if no event type
    /// has that name, `MPI_T_ERR_INVALID` for NULL arguments.
    fn PMPI_T_event_get_index / MPI_T_event_get_index(
        name: *const c_char,
        event_index: *mut c_int,
    ) {
        mpit_call(|reg| {
            require(event_index)?;
            // SAFETY: NULL checked by `arg_str`; NUL-terminated by contract.
            let name = unsafe { arg_str(name, ERR_INVALID_NAME) }?;
            let i = reg.events().index(name).c()?;
            // SAFETY: checked by `require`.
            unsafe { set_req(event_index, to_int(i)) }
        })
    }
}

// ---- registrations ----------------------------------------------------------

mpi_t_fn! {
    /// `MPI_T_event_handle_alloc`. For an event bound to objects,
    /// `obj_handle` is the address of a variable holding the object's
    /// handle (NULL: `MPI_T_ERR_INVALID`); it is ignored otherwise. On an
    /// error `*event_registration` is set to NULL (when usable).
    fn PMPI_T_event_handle_alloc / MPI_T_event_handle_alloc(
        event_index: c_int,
        obj_handle: *mut c_void,
        info: Info,
        event_registration: *mut Registration,
    ) {
        let _ = info;
        // SAFETY: NULL (ignored) or valid for a write (caller's contract).
        unsafe { set_opt(event_registration, core::ptr::null_mut()) };
        mpit_call(|reg| {
            require(event_registration)?;
            let i = index(event_index, ERR_INVALID_INDEX)?;
            let bind = reg.events().info(i).c()?.bind;
            // SAFETY: `obj_handle` is NULL or the address of a handle
            // variable (caller's contract); `object_at` checks NULL.
            let object = unsafe { object_at(obj_handle, bind) };
            if bind != BindKind::NoObject && object.is_none() {
                return Err(ERR_INVALID);
            }
            let k = reg.events().handle_alloc(i, object).c()?;
            super::init::track_event_registration(k, true);
            // SAFETY: checked by `require`.
            unsafe { set_req(event_registration, k as usize as Registration) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_handle_set_info`: hints are ignored.
    fn PMPI_T_event_handle_set_info / MPI_T_event_handle_set_info(
        event_registration: Registration,
        info: Info,
    ) {
        let _ = info;
        mpit_call(|reg| {
            reg.events().registration_info(key(event_registration)).c()?;
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_handle_get_info`: `MPI_INFO_NULL` (no hints).
    fn PMPI_T_event_handle_get_info / MPI_T_event_handle_get_info(
        event_registration: Registration,
        info_used: *mut Info,
    ) {
        mpit_call(|reg| {
            reg.events().registration_info(key(event_registration)).c()?;
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(info_used, INFO_NULL) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_register_callback`: replaces the callback at
    /// `cb_safety` (NULL removes it); `MPI_T_ERR_INVALID` for a value that
    /// is not a safety level.
    fn PMPI_T_event_register_callback / MPI_T_event_register_callback(
        event_registration: Registration,
        cb_safety: c_int,
        info: Info,
        user_data: *mut c_void,
        event_cb_function: CbFn,
    ) {
        let _ = info;
        mpit_call(|reg| {
            let k = key(event_registration);
            reg.events().registration_info(k).c()?;
            let level = safety(cb_safety)?;
            let ud = PassBack(user_data);
            let f = event_cb_function.map(|f| -> EventCallback {
                Box::new(move |inst: &EventInstance<'_>, ctx: CbSafety| {
                    let p = inst as *const EventInstance<'_> as Instance;
                    // SAFETY: the tool's callback, called as the standard
                    // says, with an instance live for the call.
                    unsafe { f(p, k as usize as Registration, ctx.raw(), ud.get()) }
                })
            });
            reg.events().register_callback(k, level, f, user_data as usize).c()
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_callback_set_info`: hints are ignored;
    /// `MPI_T_ERR_INVALID` if no callback is registered at `cb_safety`.
    fn PMPI_T_event_callback_set_info / MPI_T_event_callback_set_info(
        event_registration: Registration,
        cb_safety: c_int,
        info: Info,
    ) {
        let _ = info;
        mpit_call(|reg| {
            reg.events().registration_info(key(event_registration)).c()?;
            let has = reg
                .events()
                .has_callback(key(event_registration), safety(cb_safety)?)
                .c()?;
            if has { Ok(()) } else { Err(ERR_INVALID) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_callback_get_info`: `MPI_INFO_NULL`;
    /// `MPI_T_ERR_INVALID` if no callback is registered at `cb_safety`.
    fn PMPI_T_event_callback_get_info / MPI_T_event_callback_get_info(
        event_registration: Registration,
        cb_safety: c_int,
        info_used: *mut Info,
    ) {
        mpit_call(|reg| {
            reg.events().registration_info(key(event_registration)).c()?;
            let has = reg
                .events()
                .has_callback(key(event_registration), safety(cb_safety)?)
                .c()?;
            if !has {
                return Err(ERR_INVALID);
            }
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(info_used, INFO_NULL) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_handle_free`: returns at once; no callback of the
    /// registration starts afterwards, and `free_cb_function` (if not
    /// NULL) runs once none is running — here if none is, else on the
    /// thread of the last one, after it returns. Allowed from the
    /// registration's own callback.
    fn PMPI_T_event_handle_free / MPI_T_event_handle_free(
        event_registration: Registration,
        user_data: *mut c_void,
        free_cb_function: FreeFn,
    ) {
        mpit_call(|reg| {
            let (ud, h) = (PassBack(user_data), PassBack(event_registration));
            let f = free_cb_function.map(|f| -> FreeCallback {
                Box::new(move |ctx: CbSafety| {
                    // SAFETY: the tool's free callback, called once.
                    unsafe { f(h.get(), ctx.raw(), ud.get()) }
                })
            });
            reg.events().handle_free(key(event_registration), f).c()?;
            super::init::track_event_registration(key(event_registration), false);
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_set_dropped_handler`: replaces the handler (NULL
    /// removes it; drops are then not counted for this registration); it
    /// hears the `user_data` of the callback chosen for the delivery it
    /// precedes. A registration with a handler and no callback loses every
    /// event raised for it; its handler hears them where the requirement is
    /// NONE, with `user_data` NULL (see [`crate::Events::set_dropped_handler`]).
    fn PMPI_T_event_set_dropped_handler / MPI_T_event_set_dropped_handler(
        event_registration: Registration,
        dropped_cb_function: DroppedFn,
    ) {
        mpit_call(|reg| {
            let h = PassBack(event_registration);
            let f = dropped_cb_function.map(|f| -> DroppedCallback {
                Box::new(move |n: u64, source: usize, ctx: CbSafety, ud: usize| {
                    let n = n.min(i64::MAX as u64) as Count;
                    // SAFETY: the tool's dropped handler, called as the
                    // standard says.
                    unsafe { f(n, h.get(), to_int(source), ctx.raw(), ud as *mut c_void) }
                })
            });
            reg.events().set_dropped_handler(key(event_registration), f).c()
        })
    }
}

// ---- instances (from callbacks; async-signal-safe) ---------------------------

mpi_t_fn! {
    /// `MPI_T_event_read`: copies element `element_index` (its datatype's
    /// size) to `buffer`; `MPI_T_ERR_INVALID_INDEX` if there is no such
    /// element.
    fn PMPI_T_event_read / MPI_T_event_read(
        event_instance: Instance,
        element_index: c_int,
        buffer: *mut c_void,
    ) {
        mpit_call(|_| {
            // SAFETY: used within this call only.
            let inst = unsafe { instance(event_instance) }?;
            let i = index(element_index, ERR_INVALID_INDEX)?;
            let bytes = inst.element_bytes(i).c()?;
            if buffer.is_null() {
                return Err(ERR_INVALID);
            }
            // SAFETY: `buffer` holds one element of the datatype (caller's
            // contract); `bytes` is exactly that many bytes.
            unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.cast(), bytes.len()) };
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_copy`: copies the whole record (the extent given by
    /// `MPI_T_event_get_info`'s displacements and datatypes) to `buffer`.
    fn PMPI_T_event_copy / MPI_T_event_copy(event_instance: Instance, buffer: *mut c_void) {
        mpit_call(|_| {
            // SAFETY: used within this call only.
            let inst = unsafe { instance(event_instance) }?;
            if buffer.is_null() {
                return Err(ERR_INVALID);
            }
            let r = inst.record();
            // SAFETY: `buffer` holds the event type's extent (caller's
            // contract); `r` is exactly that many bytes.
            unsafe { core::ptr::copy_nonoverlapping(r.as_ptr(), buffer.cast(), r.len()) };
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_get_timestamp`: when the event was raised, in ticks of
    /// its source.
    fn PMPI_T_event_get_timestamp / MPI_T_event_get_timestamp(
        event_instance: Instance,
        event_timestamp: *mut Count,
    ) {
        mpit_call(|_| {
            // SAFETY: used within this call only.
            let inst = unsafe { instance(event_instance) }?;
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(event_timestamp, inst.timestamp() as Count) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_event_get_source`.
    fn PMPI_T_event_get_source / MPI_T_event_get_source(
        event_instance: Instance,
        source_index: *mut c_int,
    ) {
        mpit_call(|_| {
            // SAFETY: used within this call only.
            let inst = unsafe { instance(event_instance) }?;
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(source_index, to_int(inst.source())) }
        })
    }
}

// ---- categories -------------------------------------------------------------

mpi_t_fn! {
    /// `MPI_T_category_get_num_events`.
    fn PMPI_T_category_get_num_events / MPI_T_category_get_num_events(
        cat_index: c_int,
        num_events: *mut c_int,
    ) {
        mpit_call(|reg| {
            let info = reg.categories().info(index(cat_index, ERR_INVALID_INDEX)?).c()?;
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(num_events, to_int(info.num_events)) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_events`: writes the first `len` event indices of
    /// the category; entries past the category's count are left untouched.
    fn PMPI_T_category_get_events / MPI_T_category_get_events(
        cat_index: c_int,
        len: c_int,
        indices: *mut c_int,
    ) {
        mpit_call(|reg| {
            let cat = index(cat_index, ERR_INVALID_INDEX)?;
            reg.categories().info(cat).c()?;
            let len = usize::try_from(len).map_err(|_| ERR_INVALID)?;
            if len == 0 {
                return Ok(());
            }
            if indices.is_null() || !indices.is_aligned() {
                return Err(ERR_INVALID);
            }
            // SAFETY: `indices` holds `len` ints (caller's contract).
            let out = unsafe { core::slice::from_raw_parts_mut(indices, len) };
            reg.categories().events_into(cat, out).c()?;
            Ok(())
        })
    }
}
