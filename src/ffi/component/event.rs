//! The component side of events from C (`include/pvar.h`): declare event
//! sources and event types, raise events, and run delivery points.
//!
//! A raise is inline in `pvar.h`: it loads the event's subscriber word
//! (the address `pvar_event_register` returns in the `pvar_event` handle)
//! and calls [`pvar_event_raise_slow`] only when a tool has a callback.

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::AtomicU32;

use super::Recorded;
use super::desc::{bind, verbosity};
use crate::ffi::boundary::{
    CResult, ERR_INVALID, PassBack, guarded, registry, require, set_req, to_int,
};
use crate::ffi::strings::{arg_str, opt_str};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::event_info::{EventInfo, SourceInfo};
use crate::vocabulary::kinds::{BindKind, CbSafety, ObjectRef, SourceOrder};

/// `pvar_event_info` (must match `include/pvar.h`).
#[repr(C)]
pub struct CEventInfo {
    name: *const c_char,
    description: *const c_char,
    verbosity: c_int,
    bind: c_int,
    num_elements: c_int,
    datatypes: *const c_int,
    displacements: *const isize,
    extent: usize,
    source: c_int,
    category: *const c_char,
}

/// `pvar_event` (must match `include/pvar.h`).
#[repr(C)]
pub struct CEvent {
    observed: *const AtomicU32,
    index: c_int,
}

/// `pvar_timestamp_fn`.
type TimestampFn = unsafe extern "C" fn(*mut c_void) -> i64;

/// Registers an event source; `now` may be NULL (no timestamps on demand:
/// raise its events with `pvar_event_raise_at`). `*index` receives its
/// index.
///
/// # Safety
/// Strings are NUL-terminated (description may be NULL); `now` is NULL or
/// a function safe wherever events of the source are raised; `index` is
/// valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_source_register(
    name: *const c_char,
    description: *const c_char,
    ordering: c_int,
    ticks_per_second: i64,
    max_ticks: i64,
    now: Option<TimestampFn>,
    user_data: *mut c_void,
    index: *mut c_int,
) -> c_int {
    guarded(|| {
        require(index)?;
        // SAFETY: caller's contract.
        let (name, description) = unsafe { (arg_str(name, ERR_INVALID)?, opt_str(description)?) };
        let ordering = SourceOrder::from_raw(ordering).ok_or(ERR_INVALID)?;
        let ticks = u64::try_from(ticks_per_second).map_err(|_| ERR_INVALID)?;
        let max = u64::try_from(max_ticks).map_err(|_| ERR_INVALID)?;
        let ud = PassBack(user_data);
        let now = now.map(|f| -> crate::event::TimestampFn {
            Box::new(move || {
                // SAFETY: the component's function, with its own pointer.
                unsafe { f(ud.get()) as u64 }
            })
        });
        let info = SourceInfo {
            name: name.to_string(),
            description: description.unwrap_or("").to_string(),
            ordering,
            ticks_per_second: ticks,
            max_ticks: max,
        };
        let i = registry().events().register_source(info, now).rec()?;
        // SAFETY: checked by `require`.
        unsafe { set_req(index, to_int(i)) }
    })
}

unsafe fn read_info(p: *const CEventInfo) -> CResult<EventInfo> {
    // SAFETY: caller's contract: NULL or a valid `pvar_event_info`.
    let d = unsafe { p.as_ref() }.ok_or(ERR_INVALID)?;
    // SAFETY: as above, for its strings.
    let (name, description, category) = unsafe {
        (
            arg_str(d.name, ERR_INVALID)?,
            opt_str(d.description)?,
            opt_str(d.category)?,
        )
    };
    let n = usize::try_from(d.num_elements).map_err(|_| ERR_INVALID)?;
    if n > 0 && (d.datatypes.is_null() || d.displacements.is_null()) {
        return Err(ERR_INVALID);
    }
    let mut elements = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: both arrays hold `num_elements` entries (contract).
        let (dt, disp) = unsafe { (*d.datatypes.add(i), *d.displacements.add(i)) };
        let dt = Datatype::from_raw(dt).ok_or(ERR_INVALID)?;
        let disp = usize::try_from(disp).map_err(|_| ERR_INVALID)?;
        elements.push((dt, disp));
    }
    Ok(EventInfo {
        name: name.to_string(),
        description: description.unwrap_or("").to_string(),
        verbosity: verbosity(d.verbosity)?,
        bind: if d.bind == 0 {
            BindKind::NoObject
        } else {
            bind(d.bind)?
        },
        elements,
        extent: d.extent,
        source: usize::try_from(d.source).map_err(|_| ERR_INVALID)?,
        category: category.map(str::to_string),
    })
}

/// Declares an event type; `*event` receives its handle (index and
/// subscriber word). The same name with the same description again gives
/// the same type.
///
/// # Safety
/// `info` points to a valid `pvar_event_info`; `event` is valid for a
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_event_register(info: *const CEventInfo, event: *mut CEvent) -> c_int {
    guarded(|| {
        require(event)?;
        // SAFETY: caller's contract.
        let info = unsafe { read_info(info) }?;
        let events = registry().events();
        let index = events.declare(info).rec()?;
        let observed = events.observed_word(index).rec()?;
        // SAFETY: checked by `require`.
        unsafe {
            set_req(
                event,
                CEvent {
                    observed,
                    index: to_int(index),
                },
            )
        }
    })
}

/// The raise behind `pvar.h`'s inline functions, once a tool listens.
/// `cb_safety` is the point's requirement (`PVAR_CB_REQUIRE_*`), `object`
/// NULL or the object's handle value, `timestamp` NULL (the source's
/// clock) or the timestamp. Does nothing for an unknown index or safety
/// value. Async-signal-safe with `PVAR_CB_REQUIRE_ASYNC_SIGNAL_SAFE`.
///
/// # Safety
/// `record` points to a record of the event type's layout; `object` and
/// `timestamp` are NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_event_raise_slow(
    index: c_int,
    cb_safety: c_int,
    object: *const u64,
    timestamp: *const i64,
    record: *const c_void,
) {
    let (Ok(index), Some(required)) = (usize::try_from(index), CbSafety::from_raw(cb_safety))
    else {
        return;
    };
    let _ = guarded(|| {
        let events = registry().events();
        let bind = events.info(index).map_err(|_| ERR_INVALID)?.bind;
        // SAFETY: NULL or readable (contract).
        let object = unsafe { object.as_ref() }.map(|&h| ObjectRef::new(bind, h));
        // SAFETY: NULL or readable (contract).
        let ts = unsafe { timestamp.as_ref() }.map(|&t| t as u64);
        if record.is_null()
            && !events
                .info(index)
                .map_err(|_| ERR_INVALID)?
                .elements
                .is_empty()
        {
            return Err(ERR_INVALID);
        }
        // SAFETY: a record of the type's layout (contract).
        unsafe { events.raise_raw(index, object, record.cast(), required, ts) };
        Ok(())
    });
}

/// A delivery point: delivers events waiting in thread buffers whose
/// callbacks may run where the requirement is `cb_safety`; returns how
/// many callbacks ran (-1 for a bad safety value).
#[unsafe(no_mangle)]
pub extern "C" fn pvar_event_deliver(cb_safety: c_int) -> c_int {
    match CbSafety::from_raw(cb_safety) {
        Some(s) => to_int(registry().events().deliver(s)),
        None => -1,
    }
}
