//! MPI 4 events through the C interface: the 20 `MPI_T_event_*` /
//! `MPI_T_source_*` / `MPI_T_category_get_{num_,}events` functions called
//! directly, as a C tool would, and the component side of `pvar.h`
//! (`pvar_source_register`, `pvar_event_register`, the raise behind its
//! inline functions, `pvar_event_deliver`). Registrations live, freed
//! (stale) and made up; safety values valid and not; NULL and misaligned
//! pointers; indices negative and out of range; instances live (inside the
//! callbacks), dead (after them) and made up; callbacks that read, copy,
//! register and remove callbacks, free their own registration, allocate,
//! raise nested events and run delivery points; init/finalize in between.
//!
//! Asserts: no crash; every return code a valid MPI_T code, and the one
//! the documentation gives where the model knows it; no success on a dead
//! registration or instance; nothing written past a buffer; every callback
//! call is for a registration not freed yet, at the lowest registered
//! level that allows the requirement it is told, with that level's
//! current `user_data`; dropped handlers report a count ≥ 1, the event's
//! source and the chosen callback's `user_data` (a registration without
//! callbacks: `NONE` and NULL); every free callback runs
//! exactly once, after its free started, before the top-level call
//! returns; `MPI_T_event_read` agrees with `MPI_T_event_copy`; get_info
//! agrees with the Rust API; after each input, nothing is left registered
//! or waiting.
#![no_main]

use core::cell::{Cell, RefCell};
use core::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pvar::{BindKind, Datatype};

mod c_common;
use c_common::*;

// ---- the component -----------------------------------------------------------

static CLOCK: AtomicI64 = AtomicI64::new(1);

unsafe extern "C" fn fake_clock(_: Ptr) -> i64 {
    CLOCK.fetch_add(1, Ordering::Relaxed)
}

/// The record of `fe.rec`: u64, i32, f64, char, i64 at 0, 8, 16, 24, 32.
const REC_TYPES: [c_int; 5] = [0x20f, 0x209, 0x214, 0x243, 0x202];
const REC_DISPS: [isize; 5] = [0, 8, 16, 24, 32];

struct Component {
    /// `fe.rec` (fake clock), `fe.nots` (a source without timestamps),
    /// `fe.comm` (bound to communicators), `fe.empty`, and the engine's two.
    events: [c_int; 6],
}

fn cstr(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).unwrap()
}

fn component() -> &'static Component {
    static C: OnceLock<Component> = OnceLock::new();
    C.get_or_init(|| {
        let mut provided = 0;
        // SAFETY (this block): valid pointers to locals and statics.
        unsafe {
            assert_eq!(MPI_T_init_thread(0, &mut provided), SUCCESS);
            let (mut clk, mut nots) = (-1, -1);
            let n = cstr("fe.clock");
            assert_eq!(
                pvar_source_register(
                    n.as_ptr(),
                    core::ptr::null(),
                    1,
                    1000,
                    i64::MAX,
                    Some(fake_clock),
                    core::ptr::null_mut(),
                    &mut clk
                ),
                SUCCESS
            );
            let n = cstr("fe.nots");
            assert_eq!(
                pvar_source_register(
                    n.as_ptr(),
                    core::ptr::null(),
                    2,
                    1,
                    0,
                    None,
                    core::ptr::null_mut(),
                    &mut nots
                ),
                SUCCESS
            );
            let cat = cstr("fe.cat");
            let int = [0x209];
            let u64t = [0x20f];
            let zero = [0isize];
            let reg = |name: &str, n: c_int, t: *const c_int, extent, src, bind| {
                let name = cstr(name);
                let info = PvarEventInfo {
                    name: name.as_ptr(),
                    description: core::ptr::null(),
                    verbosity: 0,
                    bind,
                    num_elements: n,
                    datatypes: t,
                    displacements: if n == 1 {
                        zero.as_ptr()
                    } else {
                        REC_DISPS.as_ptr()
                    },
                    extent,
                    source: src,
                    category: cat.as_ptr(),
                };
                let mut ev = PvarEvent {
                    observed: core::ptr::null(),
                    index: -1,
                };
                assert_eq!(pvar_event_register(&info, &mut ev), SUCCESS);
                ev.index
            };
            let rec = reg("fe.rec", 5, REC_TYPES.as_ptr(), 40, clk, 0);
            let nots_ev = reg("fe.nots_ev", 1, int.as_ptr(), 4, nots, 0);
            let comm = reg("fe.comm", 1, u64t.as_ptr(), 8, 0, 2);
            let empty = reg("fe.empty", 0, core::ptr::null(), 0, clk, 0);
            let mut idx = -1;
            let d = cstr("events of the fuzz target");
            assert_eq!(
                pvar_category_define(cat.as_ptr(), d.as_ptr(), &mut idx),
                SUCCESS
            );
            let (mut ea, mut ef) = (-1, -1);
            let a = cstr("pvar_engine_handle_alloc");
            let f = cstr("pvar_engine_handle_free");
            assert_eq!(MPI_T_event_get_index(a.as_ptr(), &mut ea), SUCCESS);
            assert_eq!(MPI_T_event_get_index(f.as_ptr(), &mut ef), SUCCESS);
            Component {
                events: [rec, nots_ev, comm, empty, ea, ef],
            }
        }
    })
}

fn events() -> &'static pvar::Events {
    pvar::global().events()
}

// ---- what the callbacks saw -----------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Effect {
    Cb {
        raw: u64,
        ud: usize,
        ctx: c_int,
    },
    Dropped {
        raw: u64,
        ud: usize,
        ctx: c_int,
        count: i64,
        source: c_int,
    },
    FreeStart {
        raw: u64,
        free_ud: Option<usize>,
    },
    FreeDone {
        raw: u64,
        rc: c_int,
    },
    FreeCb {
        raw: u64,
        ud: usize,
        ctx: c_int,
    },
    SetCb {
        raw: u64,
        level: c_int,
        ud: Option<usize>,
        rc: c_int,
    },
    Alloc {
        raw: u64,
        event: c_int,
    },
}

/// What every callback of one top-level call does (besides its checks).
#[derive(Debug, Clone, Copy, Arbitrary)]
struct Plan {
    /// The element read (any value).
    element: i8,
    null_buffer: bool,
    /// Which callbacks (by call number, bit k) act below.
    mask: u16,
    set_cb: Option<(Level, bool)>,
    /// 1: free with a free callback, 2: without, else keep.
    free_self: u8,
    nested: Option<(u8, Level)>,
    deliver: Option<Level>,
    alloc: Option<u8>,
}

thread_local! {
    static LOG: RefCell<Vec<Effect>> = const { RefCell::new(Vec::new()) };
    static PLAN: Cell<Option<Plan>> = const { Cell::new(None) };
    static INIT: Cell<bool> = const { Cell::new(true) };
    static LAST_INSTANCE: Cell<usize> = const { Cell::new(0) };
    static BUDGET: Cell<u32> = const { Cell::new(0) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn log(e: Effect) {
    LOG.with(|l| l.borrow_mut().push(e));
}

/// `user_data` of a callback: our table index, the event and the level.
const MARK: usize = 0x5eed << 40;

fn ud_of(idx: usize, event: c_int, rank: usize) -> usize {
    MARK | idx << 16 | (event as usize & 0xff) << 8 | rank
}

fn decode(ud: usize) -> (usize, c_int, usize) {
    assert_eq!(
        ud & !((1 << 40) - 1),
        MARK,
        "user_data {ud:#x} is not one of ours"
    );
    (
        (ud >> 16) & 0xff_ffff,
        ((ud >> 8) & 0xff) as c_int,
        ud & 0xff,
    )
}

fn rank_of(level: c_int) -> Option<usize> {
    CB_LEVELS.iter().position(|&l| l == level)
}

fn init_expect(rc: c_int, what: &str) -> bool {
    check_code(what, rc);
    if !INIT.get() {
        assert_eq!(rc, ERR_NOT_INITIALIZED, "{what} while not initialised");
        return false;
    }
    true
}

/// A buffer with a canary after `bytes` bytes.
struct Canary {
    words: Vec<u64>,
    bytes: usize,
}

impl Canary {
    fn new(bytes: usize) -> Self {
        let mut c = Canary {
            words: vec![0x5a5a_5a5a_5a5a_5a5a; bytes / 8 + 4],
            bytes,
        };
        for b in &mut c.all_mut()[bytes..] {
            *b = 0xa5;
        }
        c
    }
    fn all_mut(&mut self) -> &mut [u8] {
        // SAFETY: u64 storage viewed as bytes.
        unsafe {
            core::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), self.words.len() * 8)
        }
    }
    fn all(&self) -> &[u8] {
        // SAFETY: as above.
        unsafe { core::slice::from_raw_parts(self.words.as_ptr().cast(), self.words.len() * 8) }
    }
    fn ptr(&mut self) -> Ptr {
        self.words.as_mut_ptr().cast()
    }
    #[track_caller]
    fn check(&self, what: &str) {
        assert!(
            self.all()[self.bytes..].iter().all(|&b| b == 0xa5),
            "{what}: wrote past {} bytes",
            self.bytes
        );
    }
}

// ---- callbacks ----------------------------------------------------------------------

unsafe extern "C" fn event_cb(inst: Ptr, reg: Ptr, ctx: c_int, ud: Ptr) {
    let ud = ud as usize;
    let raw = reg as u64;
    log(Effect::Cb { raw, ud, ctx });
    assert!(rank_of(ctx).is_some(), "callback told cb_safety {ctx:#x}");
    let (idx, event, _) = decode(ud);
    LAST_INSTANCE.set(inst as usize);
    let info = events().info(event as usize).expect("the event exists");
    let n = info.elements.len();
    let plan = PLAN.get();
    // SAFETY (this function): `inst` is the live instance; every buffer is
    // at least as large as what the call writes (checked by canaries).
    unsafe {
        // Every element, then the whole record: they agree.
        let mut copy = Canary::new(info.extent);
        let rc = MPI_T_event_copy(inst, copy.ptr());
        if init_expect(rc, "copy") {
            assert_eq!(rc, SUCCESS, "copy");
        }
        copy.check("event_copy");
        for (i, &(dt, disp)) in info.elements.iter().enumerate() {
            let mut one = Canary::new(dt.size());
            let rc = MPI_T_event_read(inst, i as c_int, one.ptr());
            one.check("event_read");
            if init_expect(rc, "read") {
                assert_eq!(rc, SUCCESS, "read of element {i}");
                assert_eq!(
                    &one.all()[..dt.size()],
                    &copy.all()[disp..disp + dt.size()],
                    "read and copy differ for element {i}"
                );
            }
        }
        if let Some(p) = plan {
            let e = c_int::from(p.element);
            let mut one = Canary::new(16);
            let bp = if p.null_buffer {
                core::ptr::null_mut()
            } else {
                one.ptr()
            };
            let rc = MPI_T_event_read(inst, e, bp);
            one.check("event_read");
            if init_expect(rc, "read") {
                let expect = if e < 0 || e as usize >= n {
                    ERR_INVALID_INDEX
                } else if p.null_buffer {
                    ERR_INVALID
                } else {
                    SUCCESS
                };
                assert_eq!(
                    rc, expect,
                    "read({e}) of {n} elements, null {}",
                    p.null_buffer
                );
            }
            let rc = MPI_T_event_copy(inst, core::ptr::null_mut());
            if init_expect(rc, "copy") {
                assert_eq!(rc, ERR_INVALID);
            }
        }
        let mut ts = -1i64;
        let rc = MPI_T_event_get_timestamp(inst, &mut ts);
        if init_expect(rc, "get_timestamp") {
            assert_eq!(rc, SUCCESS);
        }
        let mut src = -1;
        let rc = MPI_T_event_get_source(inst, &mut src);
        if init_expect(rc, "get_source") {
            assert_eq!((rc, src as usize), (SUCCESS, info.source));
        }
        // Not instances, even here.
        let fake = (inst as *mut u8).wrapping_add(8).cast::<c_void>();
        let rc = MPI_T_event_get_source(fake, &mut src);
        if init_expect(rc, "get_source") {
            assert_eq!(rc, ERR_INVALID_HANDLE);
        }

        let Some(p) = plan else { return };
        let k = CALLS.get();
        CALLS.set(k + 1);
        if k >= 16 || p.mask & (1 << k) == 0 {
            return;
        }
        if let Some((level, remove)) = p.set_cb {
            let l = level.raw();
            let new_ud = rank_of(l).map(|r| ud_of(idx, event, r));
            set_cb(raw, l, if remove { None } else { new_ud.or(Some(ud)) });
        }
        if let Some(ev) = p.alloc {
            let c = component();
            let index = c.events[ev as usize % c.events.len()];
            let mut obj: usize = 0x101;
            let mut r: Ptr = core::ptr::null_mut();
            let rc = MPI_T_event_handle_alloc(
                index,
                (&mut obj as *mut usize).cast(),
                INFO_NULL as Ptr,
                &mut r,
            );
            if init_expect(rc, "alloc in a callback") {
                assert_eq!(rc, SUCCESS, "alloc in a callback");
                log(Effect::Alloc {
                    raw: r as u64,
                    event: index,
                });
            }
        }
        if let Some((ev, level)) = p.nested {
            if BUDGET.get() > 0 {
                BUDGET.set(BUDGET.get() - 1);
                let c = component();
                let index = c.events[ev as usize % c.events.len()];
                let rec = [0x0123_4567_89ab_cdefu64; 24];
                let obj = 0x101u64;
                pvar_event_raise_slow(
                    index,
                    level.raw(),
                    &obj,
                    core::ptr::null(),
                    rec.as_ptr().cast(),
                );
            }
        }
        if let Some(level) = p.deliver {
            let l = level.raw();
            let n = pvar_event_deliver(l);
            assert_eq!(n < 0, rank_of(l).is_none(), "deliver({l:#x}) = {n}");
        }
        match p.free_self {
            1 => free_reg(raw, Some(MARK | idx)),
            2 => free_reg(raw, None),
            _ => {}
        }
    }
}

unsafe extern "C" fn dropped_cb(count: i64, reg: Ptr, source: c_int, ctx: c_int, ud: Ptr) {
    log(Effect::Dropped {
        raw: reg as u64,
        ud: ud as usize,
        ctx,
        count,
        source,
    });
}

unsafe extern "C" fn free_cb(reg: Ptr, ctx: c_int, ud: Ptr) {
    log(Effect::FreeCb {
        raw: reg as u64,
        ud: ud as usize,
        ctx,
    });
}

fn set_cb(raw: u64, level: c_int, ud: Option<usize>) {
    // SAFETY: plain values; the callback is ours.
    let rc = unsafe {
        MPI_T_event_register_callback(
            raw as usize as Ptr,
            level,
            INFO_NULL as Ptr,
            ud.unwrap_or(0) as Ptr,
            ud.map(|_| event_cb as EventCb),
        )
    };
    check_code("register_callback", rc);
    log(Effect::SetCb { raw, level, ud, rc });
}

fn free_reg(raw: u64, free_ud: Option<usize>) {
    log(Effect::FreeStart { raw, free_ud });
    // SAFETY: plain values; the callback is ours.
    let rc = unsafe {
        MPI_T_event_handle_free(
            raw as usize as Ptr,
            free_ud.unwrap_or(0) as Ptr,
            free_ud.map(|_| free_cb as FreeCb),
        )
    };
    check_code("handle_free", rc);
    log(Effect::FreeDone { raw, rc });
}

// ---- the model ------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Life {
    Live,
    Dead,
    /// After the last finalize: the standard frees everything, the engine
    /// keeps registrations; either is accepted.
    Unknown,
}

struct Reg {
    raw: u64,
    event: c_int,
    life: Life,
    /// `user_data` of the callback at each level.
    cbs: [Option<usize>; 4],
}

struct Model {
    regs: Vec<Reg>,
    /// Frees that succeeded with a free callback not run yet.
    pending_free: Vec<(u64, usize)>,
    /// Frees started and not returned yet.
    started: Vec<(u64, Option<usize>)>,
    /// Free callbacks that ran inside their (not yet returned) free.
    ran_inside: Vec<u64>,
    extra_inits: usize,
}

impl Model {
    fn find(&self, raw: u64) -> Option<usize> {
        self.regs.iter().position(|r| r.raw == raw)
    }

    fn life(&self, raw: u64) -> Life {
        self.find(raw).map_or(Life::Dead, |i| self.regs[i].life)
    }

    /// Checks the effects logged since the last call, in order.
    fn process(&mut self) {
        let log = LOG.with(|l| std::mem::take(&mut *l.borrow_mut()));
        if std::env::var_os("PVAR_FUZZ_STATS").is_some() {
            for e in &log {
                let k = match e {
                    Effect::Cb { .. } => 0,
                    Effect::Dropped { .. } => 1,
                    Effect::FreeStart { .. } | Effect::FreeDone { .. } => 2,
                    Effect::FreeCb { .. } => 3,
                    Effect::SetCb { .. } => 4,
                    Effect::Alloc { .. } => 5,
                };
                STATS[k].fetch_add(1, Ordering::Relaxed);
            }
        }
        let init = INIT.get();
        for e in log {
            match e {
                Effect::Cb { raw, ud, ctx } => {
                    let (idx, _, rank) = decode(ud);
                    let r = &self.regs[idx];
                    assert_eq!(
                        r.raw, raw,
                        "callback's registration differs from its user_data's"
                    );
                    assert_ne!(
                        r.life,
                        Life::Dead,
                        "callback of a freed registration {raw:#x}"
                    );
                    let need = rank_of(ctx).expect("checked in the callback");
                    let lowest = (need..4).find(|&k| r.cbs[k].is_some());
                    assert_eq!(
                        lowest,
                        Some(rank),
                        "told cb_safety {ctx:#x}: ran the level-{rank} callback, registered {:?}",
                        r.cbs
                    );
                    assert_eq!(r.cbs[rank], Some(ud), "stale user_data");
                }
                Effect::Dropped {
                    raw,
                    ud,
                    ctx,
                    count,
                    source,
                } => {
                    assert!(count >= 1, "dropped count {count}");
                    let idx = self
                        .find(raw)
                        .expect("dropped handler of a registration not ours");
                    let r = &self.regs[idx];
                    assert_ne!(
                        r.life,
                        Life::Dead,
                        "dropped handler of a freed registration"
                    );
                    let need = rank_of(ctx).expect("dropped handler told a bad cb_safety");
                    let lowest = (need..4).find(|&k| r.cbs[k].is_some());
                    if ud == 0 {
                        // A registration without callbacks: told NONE.
                        assert_eq!(
                            (need, r.cbs),
                            (0, [None; 4]),
                            "dropped handler without user_data"
                        );
                    } else {
                        let (i, _, rank) = decode(ud);
                        assert_eq!(i, idx, "dropped handler: another registration's user_data");
                        assert_eq!(
                            lowest,
                            Some(rank),
                            "dropped handler: not the chosen callback's user_data"
                        );
                        assert_eq!(r.cbs[rank], Some(ud));
                    }
                    let info = events().info(r.event as usize).unwrap();
                    assert_eq!(source as usize, info.source, "dropped handler's source");
                }
                Effect::FreeStart { raw, free_ud } => self.started.push((raw, free_ud)),
                Effect::FreeDone { raw, rc } => {
                    let pos = self.started.iter().rposition(|s| s.0 == raw).unwrap();
                    let (_, free_ud) = self.started.remove(pos);
                    let inside = self.ran_inside.iter().position(|&r| r == raw);
                    if let Some(i) = inside {
                        self.ran_inside.remove(i);
                        assert_eq!(rc, SUCCESS, "a failed free ran its free callback");
                    } else if let (SUCCESS, Some(ud)) = (rc, free_ud) {
                        self.pending_free.push((raw, ud));
                    }
                    let life = self.life(raw);
                    if rc == SUCCESS || rc == ERR_INVALID_HANDLE {
                        if let Some(i) = self.find(raw) {
                            self.regs[i].life = Life::Dead;
                        }
                    }
                    if !init {
                        assert_eq!(rc, ERR_NOT_INITIALIZED);
                        continue;
                    }
                    match life {
                        Life::Live => assert_eq!(rc, SUCCESS, "free of a live registration"),
                        Life::Dead => assert_eq!(rc, ERR_INVALID_HANDLE, "free of {raw:#x}"),
                        Life::Unknown => assert!(rc == SUCCESS || rc == ERR_INVALID_HANDLE),
                    }
                }
                Effect::FreeCb { raw, ud, ctx } => {
                    assert!(rank_of(ctx).is_some(), "free callback told {ctx:#x}");
                    if let Some(p) = self.pending_free.iter().position(|&x| x == (raw, ud)) {
                        // After its free returned (a delivery was running).
                        self.pending_free.remove(p);
                    } else {
                        // Inside its free, which must be running, once.
                        let started = self.started.iter().any(|&(r, u)| r == raw && u == Some(ud));
                        assert!(
                            started,
                            "free callback of {raw:#x} without its free, or twice"
                        );
                        assert!(!self.ran_inside.contains(&raw), "free callback ran twice");
                        self.ran_inside.push(raw);
                    }
                }
                Effect::SetCb { raw, level, ud, rc } => {
                    if !init {
                        assert_eq!(rc, ERR_NOT_INITIALIZED);
                        continue;
                    }
                    let life = self.life(raw);
                    let expect = match (life, rank_of(level)) {
                        (Life::Dead, _) => Some(ERR_INVALID_HANDLE),
                        (Life::Live, None) => Some(ERR_INVALID),
                        (Life::Live, Some(_)) => Some(SUCCESS),
                        (Life::Unknown, _) => None,
                    };
                    if let Some(x) = expect {
                        assert_eq!(rc, x, "register_callback({raw:#x}, {level:#x}) in {life:?}");
                    }
                    if rc == SUCCESS {
                        let i = self.find(raw).unwrap();
                        self.regs[i].cbs[rank_of(level).unwrap()] = ud;
                    }
                }
                Effect::Alloc { raw, event } => {
                    assert!(self.find(raw).is_none(), "a key issued twice");
                    self.regs.push(Reg {
                        raw,
                        event,
                        life: Life::Live,
                        cbs: [None; 4],
                    });
                }
            }
        }
        assert!(
            self.started.is_empty() && self.ran_inside.is_empty(),
            "a free did not return"
        );
        assert!(
            self.pending_free.is_empty(),
            "free callbacks not run by the end of the call: {:?}",
            self.pending_free
        );
    }
}

// ---- operations -------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Level {
    Valid(u8),
    Raw(i32),
}

impl Level {
    fn raw(self) -> c_int {
        match self {
            Level::Valid(k) => CB_LEVELS[k as usize % 4],
            Level::Raw(x) => x,
        }
    }
}

#[derive(Debug, Clone, Copy, Arbitrary)]
struct Key {
    sel: u8,
    raw: u64,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Obj {
    Null,
    Value(u16),
    Misaligned,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Op {
    Alloc {
        ev: u8,
        index: i8,
        obj: Obj,
        null_out: bool,
    },
    Free {
        r: Key,
        with_cb: bool,
    },
    RegisterCallback {
        r: Key,
        level: Level,
        remove: bool,
    },
    CallbackInfo {
        r: Key,
        level: Level,
        get: bool,
        null: bool,
    },
    HandleInfo {
        r: Key,
        get: bool,
        null: bool,
    },
    SetDropped {
        r: Key,
        remove: bool,
    },
    Raise {
        ev: u8,
        index: Option<i8>,
        level: Level,
        obj: Option<u16>,
        ts: Option<i64>,
        null_record: bool,
        fill: u64,
        plan: Option<Plan>,
    },
    Deliver {
        level: Level,
        plan: Option<Plan>,
    },
    DeadInstance {
        which: u8,
        element: i8,
        null: bool,
        made_up: Option<u64>,
    },
    SourceInfo {
        index: i8,
        nulls: u8,
        name_cap: i8,
        desc_cap: i8,
    },
    SourceTimestamp {
        index: i8,
        null: bool,
    },
    EventInfo {
        index: i8,
        nulls: u16,
        cap: i8,
        name_cap: i8,
    },
    EventIndex {
        name: u8,
        null: bool,
    },
    CategoryEvents {
        index: i8,
        len: i8,
        null: bool,
        count: bool,
    },
    GetNum {
        events: bool,
        null: bool,
    },
    RegisterEvent(NewEvent),
    RegisterSource {
        name: u8,
        ordering: i8,
        tps: i64,
        max: i64,
        clock: bool,
        null_out: bool,
    },
    PrepareThread,
    Init,
    Finalize,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
struct NewEvent {
    name: u8,
    desc: bool,
    verbosity: u8,
    bind: i8,
    num: i8,
    types: [u8; 6],
    /// None: packed displacements.
    disps: Option<[u8; 6]>,
    extent: u8,
    source: i8,
    category: u8,
}

const DATATYPES: [c_int; 8] = [0x202, 0x209, 0x20d, 0x20e, 0x20f, 0x214, 0x243, 0x200];
const VERBOSITIES: [c_int; 10] = [0, 0x09, 0x0a, 0x0c, 0x11, 0x12, 0x14, 0x21, 0x24, 7];

fn made_up(k: Key) -> u64 {
    match k.sel % 4 {
        0 => 0,
        1 => 1,
        2 => (k.raw & 0xff_ffff_ffff) | 1 << 40,
        _ => k.raw,
    }
}

fn pick(m: &Model, k: Key) -> u64 {
    if k.sel < 200 && !m.regs.is_empty() {
        let r = m.regs[k.sel as usize % m.regs.len()].raw;
        // Sometimes a neighbour of a real key: another generation.
        if k.raw % 7 == 0 { r ^ 1 } else { r }
    } else {
        made_up(k)
    }
}

fn or_null<T>(null: bool, p: *mut T) -> *mut T {
    if null { core::ptr::null_mut() } else { p }
}

/// The string convention: `len` = strlen + 1; a NUL-terminated prefix of at
/// most `cap - 1` bytes; nothing after it.
#[track_caller]
fn check_string(s: &str, cap: i32, buf: &[u8], len: c_int, what: &str) {
    assert_eq!(len as usize, s.len() + 1, "{what}: length");
    if cap > 0 {
        let k = s.len().min(cap as usize - 1);
        assert_eq!(&buf[..k], &s.as_bytes()[..k], "{what}: prefix");
        assert_eq!(buf[k], 0, "{what}: NUL");
        assert!(
            buf[k + 1..].iter().all(|&b| b == 0xee),
            "{what}: wrote past {cap}"
        );
    } else {
        assert!(
            buf.iter().all(|&b| b == 0xee),
            "{what}: wrote with capacity {cap}"
        );
    }
}

const EVENT_NAMES: [&[u8]; 10] = [
    b"fe.rec\0",
    b"fe.comm\0",
    b"fe.empty\0",
    b"pvar_engine_handle_alloc\0",
    b"fe.dyn0\0",
    b"fe.dyn3\0",
    b"\0",
    b"\xff\xfe\0",
    b"fe.rec \0",
    b"FE.REC\0",
];

#[allow(clippy::too_many_lines)]
fn run(ops: &[Op]) {
    let comp = component();
    let ev = events();
    let mut m = Model {
        regs: Vec::new(),
        pending_free: Vec::new(),
        started: Vec::new(),
        ran_inside: Vec::new(),
        extra_inits: 0,
    };
    INIT.set(true);
    LAST_INSTANCE.set(0);
    // SAFETY (all calls below): every pointer is NULL, a valid pointer to a
    // local of the right type, a deliberately misaligned pointer into a
    // live local (rejected before use), or a buffer at least as large as
    // what the call may write (checked by canaries).
    for op in ops {
        PLAN.set(None);
        CALLS.set(0);
        BUDGET.set(40);
        let init = INIT.get();
        match *op {
            Op::Alloc {
                ev: e,
                index,
                obj,
                null_out,
            } => {
                if m.regs.len() >= 48 {
                    continue;
                }
                let index = if e < 200 {
                    comp.events[e as usize % comp.events.len()]
                } else {
                    c_int::from(index)
                };
                let mut objv: [u64; 2] = [0, 0];
                let objp: Ptr = match obj {
                    Obj::Null => core::ptr::null_mut(),
                    Obj::Value(v) => {
                        objv[0] = 0x100 + u64::from(v % 4);
                        objv.as_mut_ptr().cast()
                    }
                    Obj::Misaligned => objv.as_mut_ptr().cast::<u8>().wrapping_add(1).cast(),
                };
                let mut r: Ptr = 1 as Ptr;
                let rc = unsafe {
                    MPI_T_event_handle_alloc(
                        index,
                        objp,
                        INFO_NULL as Ptr,
                        or_null(null_out, &mut r),
                    )
                };
                if !null_out {
                    assert_eq!(
                        rc == SUCCESS,
                        !r.is_null(),
                        "alloc: registration vs rc {rc}"
                    );
                }
                if init_expect(rc, "handle_alloc") {
                    let n = ev.len() as c_int;
                    let bound = (0..n)
                        .contains(&index)
                        .then(|| ev.info(index as usize).unwrap().bind != BindKind::NoObject);
                    let expect = if null_out {
                        ERR_INVALID
                    } else if bound.is_none() {
                        ERR_INVALID_INDEX
                    } else if bound == Some(true) && !matches!(obj, Obj::Value(_)) {
                        ERR_INVALID
                    } else {
                        SUCCESS
                    };
                    assert_eq!(rc, expect, "{op:?}");
                }
                if rc == SUCCESS {
                    log(Effect::Alloc {
                        raw: r as u64,
                        event: index,
                    });
                }
            }
            Op::Free { r, with_cb } => {
                let raw = pick(&m, r);
                let ud = m.find(raw).map_or(MARK | 0xff_ffff, |i| MARK | i);
                free_reg(raw, with_cb.then_some(ud));
            }
            Op::RegisterCallback { r, level, remove } => {
                let raw = pick(&m, r);
                let l = level.raw();
                let ud = match (m.find(raw), rank_of(l)) {
                    (Some(i), Some(rank)) => ud_of(i, m.regs[i].event, rank),
                    // Never called: the registration is not ours or the
                    // level is refused.
                    _ => MARK | 0xff_ffff << 16,
                };
                set_cb(raw, l, (!remove).then_some(ud));
            }
            Op::CallbackInfo {
                r,
                level,
                get,
                null,
            } => {
                let raw = pick(&m, r);
                let l = level.raw();
                let mut info: Ptr = core::ptr::null_mut();
                let rc = unsafe {
                    if get {
                        MPI_T_event_callback_get_info(
                            raw as usize as Ptr,
                            l,
                            or_null(null, &mut info),
                        )
                    } else {
                        MPI_T_event_callback_set_info(raw as usize as Ptr, l, INFO_NULL as Ptr)
                    }
                };
                if init_expect(rc, "callback_{get,set}_info") {
                    let expect = match (m.life(raw), rank_of(l)) {
                        (Life::Dead, Some(_)) => Some(ERR_INVALID_HANDLE),
                        // The level is checked before the handle here (the
                        // other way round in register_callback).
                        (Life::Dead, None) => {
                            assert!(
                                rc == ERR_INVALID || rc == ERR_INVALID_HANDLE,
                                "{op:?}: {rc}"
                            );
                            None
                        }
                        (Life::Live, None) => Some(ERR_INVALID),
                        (Life::Live, Some(k)) => {
                            let has = m.regs[m.find(raw).unwrap()].cbs[k].is_some();
                            Some(if !has || (get && null) {
                                ERR_INVALID
                            } else {
                                SUCCESS
                            })
                        }
                        (Life::Unknown, _) => None,
                    };
                    if let Some(x) = expect {
                        assert_eq!(rc, x, "{op:?}");
                    }
                    if rc == SUCCESS && get {
                        assert_eq!(info as usize, INFO_NULL);
                    }
                }
            }
            Op::HandleInfo { r, get, null } => {
                let raw = pick(&m, r);
                let mut info: Ptr = core::ptr::null_mut();
                let rc = unsafe {
                    if get {
                        MPI_T_event_handle_get_info(raw as usize as Ptr, or_null(null, &mut info))
                    } else {
                        MPI_T_event_handle_set_info(raw as usize as Ptr, INFO_NULL as Ptr)
                    }
                };
                if init_expect(rc, "handle_{get,set}_info") {
                    let expect = match m.life(raw) {
                        Life::Dead => Some(ERR_INVALID_HANDLE),
                        Life::Live if get && null => Some(ERR_INVALID),
                        Life::Live => Some(SUCCESS),
                        Life::Unknown => None,
                    };
                    if let Some(x) = expect {
                        assert_eq!(rc, x, "{op:?}");
                    }
                    if rc == SUCCESS && get {
                        assert_eq!(info as usize, INFO_NULL);
                    }
                }
            }
            Op::SetDropped { r, remove } => {
                let raw = pick(&m, r);
                let rc = unsafe {
                    MPI_T_event_set_dropped_handler(
                        raw as usize as Ptr,
                        (!remove).then_some(dropped_cb as DroppedCb),
                    )
                };
                if init_expect(rc, "set_dropped_handler") {
                    match m.life(raw) {
                        Life::Dead => assert_eq!(rc, ERR_INVALID_HANDLE, "{op:?}"),
                        Life::Live => assert_eq!(rc, SUCCESS, "{op:?}"),
                        Life::Unknown => {}
                    }
                }
            }
            Op::Raise {
                ev: e,
                index,
                level,
                obj,
                ts,
                null_record,
                fill,
                plan,
            } => {
                let index = match index {
                    Some(i) if e >= 200 => c_int::from(i),
                    _ => comp.events[e as usize % comp.events.len()],
                };
                PLAN.set(plan);
                let rec = [fill; MAX_RECORD_WORDS];
                let objv = obj.map(|v| 0x100 + u64::from(v % 4));
                unsafe {
                    pvar_event_raise_slow(
                        index,
                        level.raw(),
                        objv.as_ref().map_or(core::ptr::null(), |v| v as *const u64),
                        ts.as_ref().map_or(core::ptr::null(), |t| t as *const i64),
                        if null_record {
                            core::ptr::null()
                        } else {
                            rec.as_ptr().cast()
                        },
                    )
                };
            }
            Op::Deliver { level, plan } => {
                PLAN.set(plan);
                let l = level.raw();
                let n = unsafe { pvar_event_deliver(l) };
                assert_eq!(n < 0, rank_of(l).is_none(), "deliver({l:#x}) = {n}");
            }
            Op::DeadInstance {
                which,
                element,
                null,
                made_up,
            } => {
                let inst = made_up.map_or(LAST_INSTANCE.get(), |v| v as usize) as Ptr;
                let mut buf = Canary::new(0);
                let bp = or_null(null, buf.ptr());
                let rc = unsafe {
                    match which % 4 {
                        0 => MPI_T_event_read(inst, c_int::from(element), bp),
                        1 => MPI_T_event_copy(inst, bp),
                        2 => MPI_T_event_get_timestamp(inst, bp.cast()),
                        _ => MPI_T_event_get_source(inst, bp.cast()),
                    }
                };
                buf.check("dead instance");
                if init_expect(rc, "instance function outside a callback") {
                    assert_eq!(rc, ERR_INVALID_HANDLE, "{op:?}");
                }
            }
            Op::SourceInfo {
                index,
                nulls,
                name_cap,
                desc_cap,
            } => {
                let index = c_int::from(index);
                let (mut name, mut desc) = ([0xeeu8; 160], [0xeeu8; 160]);
                let (mut nl, mut dl) = (c_int::from(name_cap), c_int::from(desc_cap));
                let (mut ord, mut tps, mut max) = (-1, -1i64, -1i64);
                let mut info: Ptr = core::ptr::null_mut();
                let b = |k: u8| nulls & (1 << k) != 0;
                let rc = unsafe {
                    MPI_T_source_get_info(
                        index,
                        or_null(b(0), name.as_mut_ptr().cast()),
                        or_null(b(1), &mut nl),
                        or_null(b(2), desc.as_mut_ptr().cast()),
                        or_null(b(3), &mut dl),
                        or_null(b(4), &mut ord),
                        or_null(b(5), &mut tps),
                        or_null(b(6), &mut max),
                        or_null(b(7), &mut info),
                    )
                };
                if init_expect(rc, "source_get_info") {
                    let s = (index >= 0)
                        .then(|| ev.source_info(index as usize).ok())
                        .flatten();
                    assert_eq!(rc == SUCCESS, s.is_some(), "{op:?}: {rc}");
                    if rc != SUCCESS {
                        assert_eq!(rc, ERR_INVALID_INDEX);
                    }
                    if let Some(s) = s {
                        if !b(1) {
                            let cap = if b(0) { 0 } else { c_int::from(name_cap) };
                            check_string(&s.name, cap, &name, nl, "source name");
                        }
                        if !b(3) {
                            let cap = if b(2) { 0 } else { c_int::from(desc_cap) };
                            check_string(&s.description, cap, &desc, dl, "source desc");
                        }
                        if !b(4) {
                            assert_eq!(ord, s.ordering.raw());
                        }
                        if !b(5) {
                            assert_eq!(tps as u64, s.ticks_per_second.min(i64::MAX as u64));
                        }
                        if !b(6) {
                            assert_eq!(max as u64, s.max_ticks.min(i64::MAX as u64));
                        }
                        if !b(7) {
                            assert_eq!(info as usize, INFO_NULL);
                        }
                    }
                }
            }
            Op::SourceTimestamp { index, null } => {
                let index = c_int::from(index);
                let mut t = -1i64;
                let rc = unsafe { MPI_T_source_get_timestamp(index, or_null(null, &mut t)) };
                if init_expect(rc, "source_get_timestamp") {
                    let expect = if null {
                        ERR_INVALID
                    } else if index < 0 || index as usize >= ev.num_sources() {
                        ERR_INVALID_INDEX
                    } else if ev.source_timestamp(index as usize).is_err() {
                        ERR_NOT_SUPPORTED
                    } else {
                        SUCCESS
                    };
                    assert_eq!(rc, expect, "{op:?}");
                }
            }
            Op::EventInfo {
                index,
                nulls,
                cap,
                name_cap,
            } => {
                let index = if nulls & (1 << 15) != 0 {
                    comp.events[index.unsigned_abs() as usize % comp.events.len()]
                } else {
                    c_int::from(index)
                };
                let b = |k: u8| nulls & (1 << k) != 0;
                let mut name = [0xeeu8; 160];
                let mut nl = c_int::from(name_cap);
                let (mut verb, mut bind, mut num) = (-1, -1, c_int::from(cap));
                let mut dts = [0x77 as Ptr; 20];
                let mut disps = [-77isize; 20];
                let (mut en, mut info) = (1 as Ptr, core::ptr::null_mut());
                let (mut dl, mut desc) = (0, [0xeeu8; 4]);
                let rc = unsafe {
                    MPI_T_event_get_info(
                        index,
                        or_null(b(0), name.as_mut_ptr().cast()),
                        or_null(b(1), &mut nl),
                        or_null(b(2), &mut verb),
                        or_null(b(3), dts.as_mut_ptr()),
                        or_null(b(4), disps.as_mut_ptr()),
                        or_null(b(5), &mut num),
                        or_null(b(6), &mut en),
                        or_null(b(7), &mut info),
                        or_null(b(8), desc.as_mut_ptr().cast()),
                        or_null(b(9), &mut dl),
                        or_null(b(10), &mut bind),
                    )
                };
                if init_expect(rc, "event_get_info") {
                    let e = (index >= 0).then(|| ev.info(index as usize).ok()).flatten();
                    let expect = match e {
                        None => ERR_INVALID_INDEX,
                        // A negative capacity only matters with an array to
                        // fill (both NULL: `*num_elements` is not read).
                        Some(_) if !b(5) && cap < 0 && !(b(3) && b(4)) => ERR_INVALID,
                        Some(_) => SUCCESS,
                    };
                    assert_eq!(rc, expect, "{op:?}");
                    if let (Some(e), SUCCESS) = (e, rc) {
                        let written = if b(5) {
                            0
                        } else {
                            (cap.max(0) as usize).min(e.elements.len())
                        };
                        if !b(5) {
                            assert_eq!(num as usize, e.elements.len(), "num_elements");
                        }
                        for k in 0..20 {
                            let dt = dts[k] as usize;
                            let want = e.elements.get(k).filter(|_| k < written);
                            match want {
                                Some(&(t, _)) if !b(3) => assert_eq!(dt, t.raw() as usize),
                                _ => assert_eq!(dt, 0x77, "datatype {k} written past {written}"),
                            }
                            match want {
                                Some(&(_, d)) if !b(4) => assert_eq!(disps[k], d as isize),
                                _ => assert_eq!(disps[k], -77, "displacement {k} written"),
                            }
                        }
                        if !b(1) {
                            let cap = if b(0) { 0 } else { c_int::from(name_cap) };
                            check_string(&e.name, cap, &name, nl, "event name");
                        }
                        if !b(2) {
                            assert_eq!(verb, e.verbosity.raw());
                        }
                        if !b(10) {
                            assert_eq!(bind, e.bind.raw());
                        }
                        if !b(6) {
                            assert!(en.is_null(), "enumtype");
                        }
                        if !b(7) {
                            assert_eq!(info as usize, INFO_NULL);
                        }
                        if !b(9) {
                            // desc_len 0 on entry: only the length.
                            assert_eq!(dl as usize, e.description.len() + 1);
                            assert_eq!(desc, [0xee; 4]);
                        }
                    }
                }
            }
            Op::EventIndex { name, null } => {
                let sel = name as usize % (EVENT_NAMES.len() + 1);
                let np: *const c_char = EVENT_NAMES
                    .get(sel)
                    .map_or(core::ptr::null(), |n| n.as_ptr().cast());
                let text = EVENT_NAMES
                    .get(sel)
                    .and_then(|n| std::str::from_utf8(&n[..n.len() - 1]).ok());
                let mut out = -1;
                let rc = unsafe { MPI_T_event_get_index(np, or_null(null, &mut out)) };
                if init_expect(rc, "event_get_index") {
                    let expect = if null || np.is_null() {
                        Err(ERR_INVALID)
                    } else {
                        text.and_then(|t| ev.index(t).ok()).ok_or(ERR_INVALID_NAME)
                    };
                    match expect {
                        Ok(i) => assert_eq!((rc, out as usize), (SUCCESS, i), "{op:?}"),
                        Err(x) => assert_eq!((rc, out), (x, -1), "{op:?}"),
                    }
                }
            }
            Op::CategoryEvents {
                index,
                len,
                null,
                count,
            } => {
                let ncat = pvar::global().categories().len() as c_int;
                let index = c_int::from(index).rem_euclid(ncat + 4) - 2;
                let cat = (index >= 0)
                    .then(|| pvar::global().categories().info(index as usize).ok())
                    .flatten();
                if count {
                    let mut n = -1;
                    let rc = unsafe { MPI_T_category_get_num_events(index, or_null(null, &mut n)) };
                    if init_expect(rc, "category_get_num_events") {
                        match cat {
                            None => assert_eq!(rc, ERR_INVALID_INDEX),
                            Some(_) if null => assert_eq!(rc, ERR_INVALID),
                            Some(c) => assert_eq!((rc, n as usize), (SUCCESS, c.num_events)),
                        }
                    }
                } else {
                    let len = c_int::from(len % 12);
                    let mut out = [-1 as c_int; 16];
                    let rc = unsafe {
                        MPI_T_category_get_events(index, len, or_null(null, out.as_mut_ptr()))
                    };
                    if init_expect(rc, "category_get_events") {
                        let expect = match cat {
                            None => ERR_INVALID_INDEX,
                            Some(_) if len < 0 => ERR_INVALID,
                            Some(_) if len == 0 => SUCCESS,
                            Some(_) if null => ERR_INVALID,
                            Some(_) => SUCCESS,
                        };
                        assert_eq!(rc, expect, "{op:?}");
                        let written = match (cat, rc) {
                            (Some(c), SUCCESS) => c.num_events.min(len.max(0) as usize),
                            _ => 0,
                        };
                        for (k, &x) in out.iter().enumerate() {
                            if k < written {
                                assert!(x >= 0 && (x as usize) < ev.len(), "not an event: {x}");
                            } else {
                                assert_eq!(x, -1, "category_get_events wrote entry {k}");
                            }
                        }
                    }
                }
            }
            Op::GetNum { events: e, null } => {
                let mut n = -1;
                let rc = unsafe {
                    if e {
                        MPI_T_event_get_num(or_null(null, &mut n))
                    } else {
                        MPI_T_source_get_num(or_null(null, &mut n))
                    }
                };
                if init_expect(rc, "get_num") {
                    let want = if e { ev.len() } else { ev.num_sources() };
                    if null {
                        assert_eq!(rc, ERR_INVALID);
                    } else {
                        assert_eq!((rc, n as usize), (SUCCESS, want));
                    }
                }
            }
            Op::RegisterEvent(ne) => register_event(ne),
            Op::RegisterSource {
                name,
                ordering,
                tps,
                max,
                clock,
                null_out,
            } => {
                let n = cstr(&format!("fs.dyn{}", name % 4));
                let mut idx = -1;
                let rc = unsafe {
                    pvar_source_register(
                        n.as_ptr(),
                        core::ptr::null(),
                        c_int::from(ordering % 4),
                        tps % 5,
                        max,
                        clock.then_some(fake_clock as TimestampCb),
                        core::ptr::null_mut(),
                        or_null(null_out, &mut idx),
                    )
                };
                check_code("pvar_source_register", rc);
                if rc == SUCCESS {
                    let s = ev.source_info(idx as usize).expect("registered source");
                    assert!(
                        !null_out && tps % 5 > 0 && max >= 0 && (1..=2).contains(&(ordering % 4))
                    );
                    assert_eq!(s.name, n.to_str().unwrap());
                }
            }
            Op::PrepareThread => unsafe { pvar_prepare_thread() },
            Op::Init => {
                if m.extra_inits < 4 {
                    let mut provided = 0;
                    let rc = unsafe { MPI_T_init_thread(0, &mut provided) };
                    assert_eq!(rc, SUCCESS);
                    if init {
                        m.extra_inits += 1;
                    } else {
                        INIT.set(true);
                    }
                }
            }
            Op::Finalize => {
                let rc = unsafe { MPI_T_finalize() };
                if !init {
                    assert_eq!(rc, ERR_NOT_INITIALIZED);
                } else {
                    assert_eq!(rc, SUCCESS);
                    if m.extra_inits > 0 {
                        m.extra_inits -= 1;
                    } else {
                        INIT.set(false);
                        for r in &mut m.regs {
                            if r.life == Life::Live {
                                r.life = Life::Unknown;
                            }
                        }
                    }
                }
            }
        }
        m.process();
    }
    // Back to the state between inputs: init count 1, nothing registered,
    // nothing waiting.
    PLAN.set(None);
    unsafe {
        if !INIT.get() {
            let mut provided = 0;
            assert_eq!(MPI_T_init_thread(0, &mut provided), SUCCESS);
            INIT.set(true);
        }
        for _ in 0..m.extra_inits {
            assert_eq!(MPI_T_finalize(), SUCCESS);
        }
    }
    let live: Vec<u64> = m
        .regs
        .iter()
        .filter(|r| r.life != Life::Dead)
        .map(|r| r.raw)
        .collect();
    for raw in live {
        free_reg(raw, None);
    }
    m.process();
    while unsafe { pvar_event_deliver(CB_LEVELS[0]) } > 0 {}
    m.process();
    assert_eq!(ev.registrations(), 0, "registrations leaked");
    assert_eq!(ev.waiting(), 0, "deliveries left waiting");
}

/// The largest record, in words.
const MAX_RECORD_WORDS: usize = pvar::MAX_RECORD_BYTES / 8 + 1;

fn register_event(ne: NewEvent) {
    let ev = events();
    let name = cstr(&format!("fe.dyn{}", ne.name % 8));
    let desc = cstr("a fuzzed event");
    let cats = [cstr("fe.cat"), cstr("fe.undefined")];
    let num = c_int::from(ne.num % 8);
    let types: Vec<c_int> = ne
        .types
        .iter()
        .map(|&t| {
            if t < 240 {
                DATATYPES[t as usize % 8]
            } else {
                c_int::from(t)
            }
        })
        .collect();
    let disps: Vec<isize> = match ne.disps {
        Some(d) => d.iter().map(|&x| x as isize - 8).collect(),
        None => {
            let mut at = 0;
            types
                .iter()
                .map(|&t| {
                    let here = at;
                    at += Datatype::from_raw(t).map_or(1, |d| d.size()) as isize;
                    here
                })
                .collect()
        }
    };
    let info = PvarEventInfo {
        name: name.as_ptr(),
        description: if ne.desc {
            desc.as_ptr()
        } else {
            core::ptr::null()
        },
        verbosity: VERBOSITIES[ne.verbosity as usize % VERBOSITIES.len()],
        bind: c_int::from(ne.bind % 16),
        num_elements: num,
        datatypes: types.as_ptr(),
        displacements: disps.as_ptr(),
        extent: ne.extent as usize,
        source: c_int::from(ne.source % 6),
        category: match ne.category % 3 {
            0 => core::ptr::null(),
            k => cats[k as usize - 1].as_ptr(),
        },
    };
    // `num_elements` up to 7 reads at most 6 entries: clamp to what exists.
    if num > 6 {
        return;
    }
    let mut out = PvarEvent {
        observed: core::ptr::null(),
        index: -1,
    };
    // SAFETY: `info` is valid with `num` entries in both arrays.
    let rc = unsafe { pvar_event_register(&info, &mut out) };
    check_code("pvar_event_register", rc);
    if rc != SUCCESS {
        return;
    }
    // A registered layout is sound: elements inside the extent (at most
    // 192 bytes), known datatypes, no overlap.
    let e = ev.info(out.index as usize).expect("registered");
    assert!(e.extent <= pvar::MAX_RECORD_BYTES && !out.observed.is_null());
    assert_eq!(e.name, name.to_str().unwrap());
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (k, &(dt, d)) in e.elements.iter().enumerate() {
        assert!(d + dt.size() <= e.extent, "element {k} outside the record");
        assert!(
            spans.iter().all(|&(a, b)| d + dt.size() <= a || b <= d),
            "overlap"
        );
        spans.push((d, d + dt.size()));
        assert_eq!(dt.raw(), types[k]);
        assert_eq!(d as isize, disps[k]);
    }
    assert_eq!(e.elements.len(), num as usize);
}

fuzz_target!(|data: &[u8]| {
    let ops = decode_all::<Op>(data, 200);
    if std::env::var_os("PVAR_FUZZ_TRACE").is_some() {
        for op in &ops {
            eprintln!("{op:?}");
        }
    }
    run(&ops);
    if std::env::var_os("PVAR_FUZZ_STATS").is_some() {
        let n: Vec<u64> = STATS.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        eprintln!(
            "callbacks {} dropped {} frees {} free-callbacks {} set-callback {} allocs {}",
            n[0],
            n[1],
            n[2] / 2,
            n[3],
            n[4],
            n[5]
        );
    }
});

/// Effects seen so far (PVAR_FUZZ_STATS=1: printed after each input).
static STATS: [std::sync::atomic::AtomicU64; 6] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 6];
