//! Shared by the C-interface fuzz targets: the `MPI_T_*` declarations
//! (called directly, as a C tool would), the valid return codes, and a
//! fixed set of variables registered once in the global registry.

#![allow(dead_code)]

use core::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

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
