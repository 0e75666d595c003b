//! The MPI 4 event and source functions, as an implementation without
//! events behaves: zero sources, zero events, `MPI_T_ERR_INVALID_INDEX` for
//! any source or event index, `MPI_T_ERR_INVALID_NAME` for any event name,
//! and `MPI_T_ERR_INVALID_HANDLE` for any registration or instance handle
//! (none can exist). Categories contain no events.

use core::ffi::{c_char, c_int, c_void};

use super::strings::arg_str;
use super::types::{Count, Datatype as CDatatype, Enum, Info};
use super::{
    ERR_INVALID_HANDLE, ERR_INVALID_INDEX, ERR_INVALID_NAME, index, mpi_t_fn, mpit_call, set_req,
};

/// `MPI_T_event_registration`.
type Registration = *mut c_void;
/// `MPI_T_event_instance`.
type Instance = *mut c_void;
/// `MPI_T_event_cb_function *`, `MPI_T_event_free_cb_function *`,
/// `MPI_T_event_dropped_cb_function *` (never called: no events).
type Callback = *mut c_void;

/// An MPI_T function whose index or handle argument can name nothing here
/// (no sources, events, registrations or instances exist): it ignores its
/// arguments and returns `$code` (after the initialisation check).
macro_rules! no_such_object {
    (
        $(#[$m:meta])*
        fn $pname:ident / $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) => $code:expr
    ) => {
        mpi_t_fn! {
            $(#[$m])*
            fn $pname / $name ( $($arg : $ty),* ) {
                let _ = ($($arg,)*);
                mpit_call(|_| Err($code))
            }
        }
    };
}

mpi_t_fn! {
    /// `MPI_T_source_get_num`: always 0.
    fn PMPI_T_source_get_num / MPI_T_source_get_num(num_sources: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment.
        mpit_call(|_| unsafe { set_req(num_sources, 0) })
    }
}

no_such_object! {
    /// `MPI_T_source_get_info`: no sources, `MPI_T_ERR_INVALID_INDEX`.
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
    ) => ERR_INVALID_INDEX
}

no_such_object! {
    /// `MPI_T_source_get_timestamp`: no sources, `MPI_T_ERR_INVALID_INDEX`.
    fn PMPI_T_source_get_timestamp / MPI_T_source_get_timestamp(
        source_index: c_int,
        timestamp: *mut Count,
    ) => ERR_INVALID_INDEX
}

mpi_t_fn! {
    /// `MPI_T_event_get_num`: always 0.
    fn PMPI_T_event_get_num / MPI_T_event_get_num(num_events: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment.
        mpit_call(|_| unsafe { set_req(num_events, 0) })
    }
}

no_such_object! {
    /// `MPI_T_event_get_info`: no events, `MPI_T_ERR_INVALID_INDEX`.
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
    ) => ERR_INVALID_INDEX
}

mpi_t_fn! {
    /// `MPI_T_event_get_index`: no events, `MPI_T_ERR_INVALID_NAME`
    /// (`MPI_T_ERR_INVALID` for NULL arguments).
    fn PMPI_T_event_get_index / MPI_T_event_get_index(
        name: *const c_char,
        event_index: *mut c_int,
    ) {
        mpit_call(|_| {
            super::require(event_index)?;
            // SAFETY: NULL checked by `arg_str`; NUL-terminated by contract.
            unsafe { arg_str(name, ERR_INVALID_NAME) }?;
            Err(ERR_INVALID_NAME)
        })
    }
}

no_such_object! {
    /// `MPI_T_event_handle_alloc`: no events, `MPI_T_ERR_INVALID_INDEX`.
    fn PMPI_T_event_handle_alloc / MPI_T_event_handle_alloc(
        event_index: c_int,
        obj_handle: *mut c_void,
        info: Info,
        event_registration: *mut Registration,
    ) => ERR_INVALID_INDEX
}

no_such_object! {
    /// `MPI_T_event_handle_set_info`: no registrations exist.
    fn PMPI_T_event_handle_set_info / MPI_T_event_handle_set_info(
        event_registration: Registration,
        info: Info,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_handle_get_info`: no registrations exist.
    fn PMPI_T_event_handle_get_info / MPI_T_event_handle_get_info(
        event_registration: Registration,
        info_used: *mut Info,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_register_callback`: no registrations exist.
    fn PMPI_T_event_register_callback / MPI_T_event_register_callback(
        event_registration: Registration,
        cb_safety: c_int,
        info: Info,
        user_data: *mut c_void,
        event_cb_function: Callback,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_callback_set_info`: no registrations exist.
    fn PMPI_T_event_callback_set_info / MPI_T_event_callback_set_info(
        event_registration: Registration,
        cb_safety: c_int,
        info: Info,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_callback_get_info`: no registrations exist.
    fn PMPI_T_event_callback_get_info / MPI_T_event_callback_get_info(
        event_registration: Registration,
        cb_safety: c_int,
        info_used: *mut Info,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_handle_free`: no registrations exist.
    fn PMPI_T_event_handle_free / MPI_T_event_handle_free(
        event_registration: Registration,
        user_data: *mut c_void,
        free_cb_function: Callback,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_set_dropped_handler`: no registrations exist.
    fn PMPI_T_event_set_dropped_handler / MPI_T_event_set_dropped_handler(
        event_registration: Registration,
        dropped_cb_function: Callback,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_read`: no instances exist.
    fn PMPI_T_event_read / MPI_T_event_read(
        event_instance: Instance,
        element_index: c_int,
        buffer: *mut c_void,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_copy`: no instances exist.
    fn PMPI_T_event_copy / MPI_T_event_copy(event_instance: Instance, buffer: *mut c_void) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_get_timestamp`: no instances exist.
    fn PMPI_T_event_get_timestamp / MPI_T_event_get_timestamp(
        event_instance: Instance,
        event_timestamp: *mut Count,
    ) => ERR_INVALID_HANDLE
}

no_such_object! {
    /// `MPI_T_event_get_source`: no instances exist.
    fn PMPI_T_event_get_source / MPI_T_event_get_source(
        event_instance: Instance,
        source_index: *mut c_int,
    ) => ERR_INVALID_HANDLE
}

mpi_t_fn! {
    /// `MPI_T_category_get_num_events`: 0 for every valid category.
    fn PMPI_T_category_get_num_events / MPI_T_category_get_num_events(
        cat_index: c_int,
        num_events: *mut c_int,
    ) {
        mpit_call(|reg| {
            reg.categories().info(index(cat_index, ERR_INVALID_INDEX)?).map_err(|e| e.code().raw())?;
            // SAFETY: `set_req` checks NULL/alignment.
            unsafe { set_req(num_events, 0) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_category_get_events`: a valid category has no events, so
    /// nothing is written.
    fn PMPI_T_category_get_events / MPI_T_category_get_events(
        cat_index: c_int,
        len: c_int,
        indices: *mut c_int,
    ) {
        let _ = indices;
        mpit_call(|reg| {
            reg.categories().info(index(cat_index, ERR_INVALID_INDEX)?).map_err(|e| e.code().raw())?;
            if len < 0 {
                return Err(super::ERR_INVALID);
            }
            Ok(())
        })
    }
}
