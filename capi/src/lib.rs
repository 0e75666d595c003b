//! `libpvar`: the C library of the pvar engine.
//!
//! The engine (`pvar`, feature `ffi`) implements the MPI_T functions of
//! `include/mpi_t.h` as Rust-callable `extern "C"` functions
//! (`pvar::ffi::mpi_t::PMPI_T_*`, not exported) and exports the component
//! symbols `pvar_*` of `include/pvar.h`. This package adds the exported
//! names a C tool links against: every `PMPI_T_x` (calling the engine's)
//! and its `MPI_T_x` twin (calling `PMPI_T_x`, so that a PMPI-style tool
//! that defines its own `MPI_T_x` reaches the engine through `PMPI_T_x`).
//! They live here and not in the engine so that the engine's features stay
//! additive: a library that serves MPI_T itself (the MPI interposer,
//! `mpi/`) links the engine in the same build without these symbols.
//! See `docs/c-interface.md`.
//!
//! The list below is checked three ways: each call is type-checked against
//! the engine's function, `scripts/c-tests.sh` checks that every function
//! `include/mpi_t.h` declares is exported by `libpvar.so` under both names,
//! and the C tests call them.

use core::ffi::{c_char, c_int, c_void};

use engine::ffi::mpi_t;

/// `MPI_T_pvar_session`, `MPI_T_pvar_handle`, `MPI_T_cvar_handle`,
/// `MPI_T_enum`, `MPI_Datatype`, `MPI_Info`: opaque pointers.
type PvarSession = *mut c_void;
type PvarHandle = *mut c_void;
type CvarHandle = *mut c_void;
type Enum = *mut c_void;
type Datatype = *mut c_void;
type Info = *mut c_void;
/// `MPI_Count`.
type Count = i64;
/// `MPI_T_event_registration`, `MPI_T_event_instance`.
type EventRegistration = *mut c_void;
type EventInstance = *mut c_void;
/// `MPI_T_event_cb_function`, `MPI_T_event_free_cb_function`,
/// `MPI_T_event_dropped_cb_function`.
type EventCbFn = Option<unsafe extern "C" fn(EventInstance, EventRegistration, c_int, *mut c_void)>;
type EventFreeFn = Option<unsafe extern "C" fn(EventRegistration, c_int, *mut c_void)>;
type EventDroppedFn =
    Option<unsafe extern "C" fn(Count, EventRegistration, c_int, c_int, *mut c_void)>;

/// For each `fn PMPI_T_x / MPI_T_x(args);`: the exported `PMPI_T_x`, which
/// calls the engine's, and the exported `MPI_T_x`, which calls `PMPI_T_x`.
macro_rules! export {
    ($(
        $(#[$doc:meta])*
        fn $pname:ident / $name:ident ( $($arg:ident : $ty:ty),* $(,)? );
    )*) => {$(
        /// The engine's function of this name (`include/mpi_t.h`).
        ///
        /// # Safety
        /// Pointer arguments follow the MPI_T C binding: NULL where
        /// allowed, otherwise valid for the access the standard describes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> c_int {
            // SAFETY: the same arguments under the same contract.
            unsafe { mpi_t::$pname($($arg),*) }
        }

        /// The profiling-interface twin: calls the `PMPI_T_` symbol.
        ///
        /// # Safety
        /// As the `PMPI_T_` function.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            // SAFETY: the same arguments under the same contract.
            unsafe { $pname($($arg),*) }
        }
    )*};
}

export! {
    // Initialisation (engine: `src/ffi/init.rs`).
    fn PMPI_T_init_thread / MPI_T_init_thread(required: c_int, provided: *mut c_int);
    fn PMPI_T_finalize / MPI_T_finalize();
    // Control variables (engine: `src/ffi/cvar.rs`).
    fn PMPI_T_cvar_get_num / MPI_T_cvar_get_num(num_cvar: *mut c_int);
    fn PMPI_T_cvar_get_info / MPI_T_cvar_get_info(cvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, datatype: *mut Datatype, enumtype: *mut Enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, scope: *mut c_int);
    fn PMPI_T_cvar_get_index / MPI_T_cvar_get_index(name: *const c_char, cvar_index: *mut c_int);
    fn PMPI_T_cvar_handle_alloc / MPI_T_cvar_handle_alloc(cvar_index: c_int, obj_handle: *mut c_void, handle: *mut CvarHandle, count: *mut c_int);
    fn PMPI_T_cvar_handle_free / MPI_T_cvar_handle_free(handle: *mut CvarHandle);
    fn PMPI_T_cvar_read / MPI_T_cvar_read(handle: CvarHandle, buf: *mut c_void);
    fn PMPI_T_cvar_write / MPI_T_cvar_write(handle: CvarHandle, buf: *const c_void);
    // Performance variables, sessions and handles (engine: `src/ffi/pvar.rs`).
    fn PMPI_T_pvar_get_num / MPI_T_pvar_get_num(num_pvar: *mut c_int);
    fn PMPI_T_pvar_get_info / MPI_T_pvar_get_info(pvar_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, var_class: *mut c_int, datatype: *mut Datatype, enumtype: *mut Enum, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int, readonly: *mut c_int, continuous: *mut c_int, atomic: *mut c_int);
    fn PMPI_T_pvar_get_index / MPI_T_pvar_get_index(name: *const c_char, var_class: c_int, pvar_index: *mut c_int);
    fn PMPI_T_pvar_session_create / MPI_T_pvar_session_create(session: *mut PvarSession);
    fn PMPI_T_pvar_session_free / MPI_T_pvar_session_free(session: *mut PvarSession);
    fn PMPI_T_pvar_handle_alloc / MPI_T_pvar_handle_alloc(session: PvarSession, pvar_index: c_int, obj_handle: *mut c_void, handle: *mut PvarHandle, count: *mut c_int);
    fn PMPI_T_pvar_handle_free / MPI_T_pvar_handle_free(session: PvarSession, handle: *mut PvarHandle);
    fn PMPI_T_pvar_start / MPI_T_pvar_start(session: PvarSession, handle: PvarHandle);
    fn PMPI_T_pvar_stop / MPI_T_pvar_stop(session: PvarSession, handle: PvarHandle);
    fn PMPI_T_pvar_reset / MPI_T_pvar_reset(session: PvarSession, handle: PvarHandle);
    fn PMPI_T_pvar_read / MPI_T_pvar_read(session: PvarSession, handle: PvarHandle, buf: *mut c_void);
    fn PMPI_T_pvar_readreset / MPI_T_pvar_readreset(session: PvarSession, handle: PvarHandle, buf: *mut c_void);
    fn PMPI_T_pvar_write / MPI_T_pvar_write(session: PvarSession, handle: PvarHandle, buf: *const c_void);
    // Categories and enumerations (engine: `src/ffi/category.rs`).
    fn PMPI_T_category_get_num / MPI_T_category_get_num(num_cat: *mut c_int);
    fn PMPI_T_category_get_info / MPI_T_category_get_info(cat_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, num_cvars: *mut c_int, num_pvars: *mut c_int, num_categories: *mut c_int);
    fn PMPI_T_category_get_index / MPI_T_category_get_index(name: *const c_char, cat_index: *mut c_int);
    fn PMPI_T_category_get_cvars / MPI_T_category_get_cvars(cat_index: c_int, len: c_int, indices: *mut c_int);
    fn PMPI_T_category_get_pvars / MPI_T_category_get_pvars(cat_index: c_int, len: c_int, indices: *mut c_int);
    fn PMPI_T_category_get_categories / MPI_T_category_get_categories(cat_index: c_int, len: c_int, indices: *mut c_int);
    fn PMPI_T_category_changed / MPI_T_category_changed(stamp: *mut c_int);
    fn PMPI_T_enum_get_info / MPI_T_enum_get_info(enumtype: Enum, num: *mut c_int, name: *mut c_char, name_len: *mut c_int);
    fn PMPI_T_enum_get_item / MPI_T_enum_get_item(enumtype: Enum, item_index: c_int, value: *mut c_int, name: *mut c_char, name_len: *mut c_int);
    // Events and sources (engine: `src/ffi/events.rs`).
    fn PMPI_T_source_get_num / MPI_T_source_get_num(num_sources: *mut c_int);
    fn PMPI_T_source_get_info / MPI_T_source_get_info(source_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, ordering: *mut c_int, ticks_per_second: *mut Count, max_ticks: *mut Count, info: *mut Info);
    fn PMPI_T_source_get_timestamp / MPI_T_source_get_timestamp(source_index: c_int, timestamp: *mut Count);
    fn PMPI_T_event_get_num / MPI_T_event_get_num(num_events: *mut c_int);
    fn PMPI_T_event_get_info / MPI_T_event_get_info(event_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, array_of_datatypes: *mut Datatype, array_of_displacements: *mut isize, num_elements: *mut c_int, enumtype: *mut Enum, info: *mut Info, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int);
    fn PMPI_T_event_get_index / MPI_T_event_get_index(name: *const c_char, event_index: *mut c_int);
    fn PMPI_T_event_handle_alloc / MPI_T_event_handle_alloc(event_index: c_int, obj_handle: *mut c_void, info: Info, event_registration: *mut EventRegistration);
    fn PMPI_T_event_handle_set_info / MPI_T_event_handle_set_info(event_registration: EventRegistration, info: Info);
    fn PMPI_T_event_handle_get_info / MPI_T_event_handle_get_info(event_registration: EventRegistration, info_used: *mut Info);
    fn PMPI_T_event_register_callback / MPI_T_event_register_callback(event_registration: EventRegistration, cb_safety: c_int, info: Info, user_data: *mut c_void, event_cb_function: EventCbFn);
    fn PMPI_T_event_callback_set_info / MPI_T_event_callback_set_info(event_registration: EventRegistration, cb_safety: c_int, info: Info);
    fn PMPI_T_event_callback_get_info / MPI_T_event_callback_get_info(event_registration: EventRegistration, cb_safety: c_int, info_used: *mut Info);
    fn PMPI_T_event_handle_free / MPI_T_event_handle_free(event_registration: EventRegistration, user_data: *mut c_void, free_cb_function: EventFreeFn);
    fn PMPI_T_event_set_dropped_handler / MPI_T_event_set_dropped_handler(event_registration: EventRegistration, dropped_cb_function: EventDroppedFn);
    fn PMPI_T_event_read / MPI_T_event_read(event_instance: EventInstance, element_index: c_int, buffer: *mut c_void);
    fn PMPI_T_event_copy / MPI_T_event_copy(event_instance: EventInstance, buffer: *mut c_void);
    fn PMPI_T_event_get_timestamp / MPI_T_event_get_timestamp(event_instance: EventInstance, event_timestamp: *mut Count);
    fn PMPI_T_event_get_source / MPI_T_event_get_source(event_instance: EventInstance, source_index: *mut c_int);
    fn PMPI_T_category_get_num_events / MPI_T_category_get_num_events(cat_index: c_int, num_events: *mut c_int);
    fn PMPI_T_category_get_events / MPI_T_category_get_events(cat_index: c_int, len: c_int, indices: *mut c_int);
}
