//! Shared by the C-interface fuzz targets: the `MPI_T_*` declarations
//! (called directly, as a C tool would), the valid return codes, and a
//! fixed set of variables registered once in the global registry.

#![allow(dead_code)]

use core::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

// Links the C library's exported `MPI_T_*` symbols declared below.
use libpvar as _;
use pvar::{
    Aggregate, BindKind, Bound, Counter, Enumeration, HighWatermark, Level, LowWatermark,
    Percentage, Registry, State, Timer,
};

pub type Ptr = *mut c_void;

/// Up to `max` values decoded from the fuzzer's input, stopping at the
/// first that does not decode.
pub fn decode_all<'a, T: arbitrary::Arbitrary<'a>>(data: &'a [u8], max: usize) -> Vec<T> {
    let mut u = arbitrary::Unstructured::new(data);
    let mut out = Vec::new();
    while out.len() < max && !u.is_empty() {
        match T::arbitrary(&mut u) {
            Ok(v) => out.push(v),
            Err(_) => break,
        }
    }
    out
}

unsafe extern "C" {
    pub fn MPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int;
    pub fn MPI_T_finalize() -> c_int;
    pub fn MPI_T_pvar_get_num(num: *mut c_int) -> c_int;
    pub fn MPI_T_pvar_get_info(
        index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        var_class: *mut c_int,
        datatype: *mut Ptr,
        enumtype: *mut Ptr,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
        readonly: *mut c_int,
        continuous: *mut c_int,
        atomic: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_pvar_get_index(name: *const c_char, var_class: c_int, index: *mut c_int) -> c_int;
    pub fn MPI_T_pvar_session_create(session: *mut Ptr) -> c_int;
    pub fn MPI_T_pvar_session_free(session: *mut Ptr) -> c_int;
    pub fn MPI_T_pvar_handle_alloc(
        session: Ptr,
        index: c_int,
        obj_handle: Ptr,
        handle: *mut Ptr,
        count: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_pvar_handle_free(session: Ptr, handle: *mut Ptr) -> c_int;
    pub fn MPI_T_pvar_start(session: Ptr, handle: Ptr) -> c_int;
    pub fn MPI_T_pvar_stop(session: Ptr, handle: Ptr) -> c_int;
    pub fn MPI_T_pvar_reset(session: Ptr, handle: Ptr) -> c_int;
    pub fn MPI_T_pvar_read(session: Ptr, handle: Ptr, buf: Ptr) -> c_int;
    pub fn MPI_T_pvar_readreset(session: Ptr, handle: Ptr, buf: Ptr) -> c_int;
    pub fn MPI_T_pvar_write(session: Ptr, handle: Ptr, buf: *const c_void) -> c_int;
    pub fn MPI_T_cvar_get_num(num: *mut c_int) -> c_int;
    pub fn MPI_T_cvar_get_info(
        index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        datatype: *mut Ptr,
        enumtype: *mut Ptr,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
        scope: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_cvar_handle_alloc(
        index: c_int,
        obj_handle: Ptr,
        handle: *mut Ptr,
        count: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_cvar_handle_free(handle: *mut Ptr) -> c_int;
    pub fn MPI_T_cvar_read(handle: Ptr, buf: Ptr) -> c_int;
    pub fn MPI_T_cvar_write(handle: Ptr, buf: *const c_void) -> c_int;
    pub fn MPI_T_category_get_pvars(index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_cvars(index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_categories(index: c_int, len: c_int, indices: *mut c_int) -> c_int;
    pub fn MPI_T_cvar_get_index(name: *const c_char, index: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_index(name: *const c_char, index: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_num(num: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_info(
        index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        desc: *mut c_char,
        desc_len: *mut c_int,
        num_cvars: *mut c_int,
        num_pvars: *mut c_int,
        num_categories: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_enum_get_info(
        enumtype: Ptr,
        num: *mut c_int,
        name: *mut c_char,
        name_len: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_enum_get_item(
        enumtype: Ptr,
        index: c_int,
        value: *mut c_int,
        name: *mut c_char,
        name_len: *mut c_int,
    ) -> c_int;
}

/// `MPI_T_event_cb_function`.
pub type EventCb = unsafe extern "C" fn(inst: Ptr, reg: Ptr, cb_safety: c_int, user_data: Ptr);
/// `MPI_T_event_free_cb_function`.
pub type FreeCb = unsafe extern "C" fn(reg: Ptr, cb_safety: c_int, user_data: Ptr);
/// `MPI_T_event_dropped_cb_function`.
pub type DroppedCb =
    unsafe extern "C" fn(count: i64, reg: Ptr, source: c_int, cb_safety: c_int, user_data: Ptr);
/// `pvar_timestamp_fn`.
pub type TimestampCb = unsafe extern "C" fn(user_data: Ptr) -> i64;

/// `pvar_event_info` of `pvar.h`.
#[repr(C)]
pub struct PvarEventInfo {
    pub name: *const c_char,
    pub description: *const c_char,
    pub verbosity: c_int,
    pub bind: c_int,
    pub num_elements: c_int,
    pub datatypes: *const c_int,
    pub displacements: *const isize,
    pub extent: usize,
    pub source: c_int,
    pub category: *const c_char,
}

/// `pvar_event` of `pvar.h`.
#[repr(C)]
pub struct PvarEvent {
    pub observed: *const u32,
    pub index: c_int,
}

// MPI 4 events: the tool side (`mpi_t.h`) and the component side
// (`pvar.h`; `pvar_event_raise_slow` is what its inline raises call).
unsafe extern "C" {
    pub fn MPI_T_source_get_num(num: *mut c_int) -> c_int;
    pub fn MPI_T_source_get_info(
        index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        desc: *mut c_char,
        desc_len: *mut c_int,
        ordering: *mut c_int,
        ticks_per_second: *mut i64,
        max_ticks: *mut i64,
        info: *mut Ptr,
    ) -> c_int;
    pub fn MPI_T_source_get_timestamp(index: c_int, timestamp: *mut i64) -> c_int;
    pub fn MPI_T_event_get_num(num: *mut c_int) -> c_int;
    pub fn MPI_T_event_get_info(
        index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        datatypes: *mut Ptr,
        displacements: *mut isize,
        num_elements: *mut c_int,
        enumtype: *mut Ptr,
        info: *mut Ptr,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
    ) -> c_int;
    pub fn MPI_T_event_get_index(name: *const c_char, index: *mut c_int) -> c_int;
    pub fn MPI_T_event_handle_alloc(
        index: c_int,
        obj_handle: Ptr,
        info: Ptr,
        registration: *mut Ptr,
    ) -> c_int;
    pub fn MPI_T_event_handle_set_info(reg: Ptr, info: Ptr) -> c_int;
    pub fn MPI_T_event_handle_get_info(reg: Ptr, info_used: *mut Ptr) -> c_int;
    pub fn MPI_T_event_register_callback(
        reg: Ptr,
        cb_safety: c_int,
        info: Ptr,
        user_data: Ptr,
        cb: Option<EventCb>,
    ) -> c_int;
    pub fn MPI_T_event_callback_set_info(reg: Ptr, cb_safety: c_int, info: Ptr) -> c_int;
    pub fn MPI_T_event_callback_get_info(reg: Ptr, cb_safety: c_int, info_used: *mut Ptr) -> c_int;
    pub fn MPI_T_event_handle_free(reg: Ptr, user_data: Ptr, cb: Option<FreeCb>) -> c_int;
    pub fn MPI_T_event_set_dropped_handler(reg: Ptr, cb: Option<DroppedCb>) -> c_int;
    pub fn MPI_T_event_read(inst: Ptr, element: c_int, buffer: Ptr) -> c_int;
    pub fn MPI_T_event_copy(inst: Ptr, buffer: Ptr) -> c_int;
    pub fn MPI_T_event_get_timestamp(inst: Ptr, timestamp: *mut i64) -> c_int;
    pub fn MPI_T_event_get_source(inst: Ptr, source: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_num_events(index: c_int, num: *mut c_int) -> c_int;
    pub fn MPI_T_category_get_events(index: c_int, len: c_int, indices: *mut c_int) -> c_int;

    pub fn pvar_source_register(
        name: *const c_char,
        description: *const c_char,
        ordering: c_int,
        ticks_per_second: i64,
        max_ticks: i64,
        now: Option<TimestampCb>,
        user_data: Ptr,
        index: *mut c_int,
    ) -> c_int;
    pub fn pvar_event_register(info: *const PvarEventInfo, event: *mut PvarEvent) -> c_int;
    pub fn pvar_event_raise_slow(
        index: c_int,
        cb_safety: c_int,
        object: *const u64,
        timestamp: *const i64,
        record: *const c_void,
    );
    pub fn pvar_event_deliver(cb_safety: c_int) -> c_int;
    pub fn pvar_category_define(
        name: *const c_char,
        description: *const c_char,
        index: *mut c_int,
    ) -> c_int;
    pub fn pvar_prepare_thread();
}

/// `MPI_T_CB_REQUIRE_*`, lowest to highest.
pub const CB_LEVELS: [c_int; 4] = [0x00, 0x03, 0x0F, 0x3F];
/// `MPI_INFO_NULL` (MPI 5.0 ABI).
pub const INFO_NULL: usize = 0x130;
pub const ERR_INVALID_NAME: c_int = 1011;
pub const ERR_NOT_SUPPORTED: c_int = 1004;

pub const SUCCESS: c_int = 0;
pub const ERR_INVALID: c_int = 1006;
pub const ERR_INVALID_INDEX: c_int = 1007;
pub const ERR_INVALID_SESSION: c_int = 1009;
pub const ERR_INVALID_HANDLE: c_int = 1010;
pub const ERR_NOT_INITIALIZED: c_int = 1003;
pub const ALL_HANDLES: u64 = 1;

/// Every code an `MPI_T_*` call may return (`MPI_SUCCESS` and the
/// `MPI_T_ERR_*` classes, 1001..=1018 in the standard ABI).
pub fn valid_code(rc: c_int) -> bool {
    rc == SUCCESS || (1001..=1018).contains(&rc)
}

#[track_caller]
pub fn check_code(what: &str, rc: c_int) {
    assert!(valid_code(rc), "{what}: invalid return code {rc}");
}

/// The object handle value of the live instance of the bound variable.
pub const OBJECT: usize = 0x101;
/// An object with no instance.
pub const NO_OBJECT: usize = 0x999;

/// The variables the C targets use, registered once in `pvar::global()`.
pub struct Vars {
    pub reg: &'static Registry,
    pub counter: Counter,
    pub continuous: Counter,
    pub readonly: Counter,
    pub level: Level<u64>,
    pub hwm: HighWatermark<u64>,
    pub lwm: LowWatermark<f64>,
    pub state: State,
    pub pct: Percentage,
    pub timer: Timer,
    pub agg: Aggregate<f64>,
    pub agg32: Aggregate<u32>,
    pub big: Counter,
    pub bound: Bound<Counter>,
    pub doomed: Counter,
    /// Indices of all of the above (the bound variable included).
    pub indices: Vec<usize>,
}

fn register() -> Vars {
    let reg = pvar::global();
    let states = Enumeration::new("fz.states", [("idle", 0), ("busy", 1), ("blocked — µ", 2)])
        .expect("enumeration");
    let _ = reg.categories().define(
        "fz.cat",
        "fuzz category: ünïcode and a long description that goes on",
    );
    let counter = reg
        .counter("fz.c")
        .count(2)
        .category("fz.cat")
        .register()
        .unwrap();
    let continuous = reg.counter("fz.cc").continuous(true).register().unwrap();
    let readonly = reg.counter("fz.ro").readonly(true).register().unwrap();
    let level = reg.level::<u64>("fz.lvl").register().unwrap();
    let hwm = reg
        .high_watermark::<u64>("fz.hwm")
        .count(2)
        .register()
        .unwrap();
    let lwm = reg.low_watermark::<f64>("fz.lwm").register().unwrap();
    let state = reg
        .state("fz.state")
        .enumeration(states)
        .description("")
        .register()
        .unwrap();
    let pct = reg.percentage("fz.pct").register().unwrap();
    let timer = reg.timer("fz.t").register().unwrap();
    let agg = reg.aggregate::<f64>("fz.agg").register().unwrap();
    let agg32 = reg
        .aggregate::<u32>("fz.agg32")
        .count(300)
        .register()
        .unwrap();
    let big = reg
        .counter(&format!("fz.big.{}", "x".repeat(300)))
        .count(300)
        .description("d".repeat(1000))
        .register()
        .unwrap();
    let bound = reg
        .counter("fz.comm")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    let inst = bound.create_instance(OBJECT as u64, 3).unwrap();
    inst.add_at(2, 5);
    let doomed = reg.counter("fz.doomed").register().unwrap();
    let _ = reg
        .cvar::<u64>("fz.cvar.ünï")
        .description("a control variable")
        .category("fz.cat")
        .register();
    let _ = reg.cvar::<i32>("fz.cvar.nodesc").register();
    let indices = vec![
        counter.index(),
        continuous.index(),
        readonly.index(),
        level.index(),
        hwm.index(),
        lwm.index(),
        state.index(),
        pct.index(),
        timer.index(),
        agg.index(),
        agg32.index(),
        big.index(),
        bound.index(),
        doomed.index(),
    ];
    Vars {
        reg,
        counter,
        continuous,
        readonly,
        level,
        hwm,
        lwm,
        state,
        pct,
        timer,
        agg,
        agg32,
        big,
        bound,
        doomed,
        indices,
    }
}

/// The variables, registered on first use; the tool interface is then
/// initialised once for the whole process (init count 1 between inputs).
pub fn vars() -> &'static Vars {
    static VARS: OnceLock<Vars> = OnceLock::new();
    VARS.get_or_init(|| {
        let mut provided = 0;
        // SAFETY: valid OUT pointer.
        let rc = unsafe { MPI_T_init_thread(0, &mut provided) };
        assert_eq!(rc, SUCCESS);
        register()
    })
}
