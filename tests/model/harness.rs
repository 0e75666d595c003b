//! Replays operations against two [`pvar::Registry`]s and a [`Model`] of
//! each, and panics on the first disagreement (value or return code),
//! naming the step, the registry and the operation.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pvar::{
    Aggregate, BindKind, Bound, CallbackVar, Callbacks, Clock, Counter, Datatype, ErrorCode,
    Generic, HandleId, HighWatermark, Level, LowWatermark, MockTime, ObjectRef, Percentage,
    PvarClass, Registry, SessionId, Size, State, Timer,
};

use super::ops::{self, HRef, Op, RegOp, SRef, Upd, VarKind, sel};
use super::spec::{self, LastSet, Meta, Model, Mutant, Val};

/// The values a callback variable's read function returns, one atomic per
/// element (bits of the variable's values).
pub type Cells = Arc<[AtomicU64]>;

/// A component-side handle, one variant per Rust type.
#[derive(Clone)]
pub enum Comp {
    Counter(Counter),
    AggU64(Aggregate<u64>),
    AggU32(Aggregate<u32>),
    AggF64(Aggregate<f64>),
    Timer(Timer),
    LevelU64(Level<u64>),
    LevelF64(Level<f64>),
    HighU64(HighWatermark<u64>),
    HighF64(HighWatermark<f64>),
    LowU64(LowWatermark<u64>),
    LowF64(LowWatermark<f64>),
    State(State),
    SizeU64(Size<u64>),
    SizeF64(Size<f64>),
    Percentage(Percentage),
    GenU64(Generic<u64>),
    GenF64(Generic<f64>),
    GenI32(Generic<i32>),
    /// A callback variable, its value cells and which of the callback kinds.
    Cb(CallbackVar, Cells, VarKind),
}

impl Comp {
    fn index(&self) -> usize {
        match self {
            Comp::Counter(c) => c.index(),
            Comp::AggU64(c) => c.index(),
            Comp::AggU32(c) => c.index(),
            Comp::AggF64(c) => c.index(),
            Comp::Timer(c) => c.index(),
            Comp::LevelU64(c) => c.index(),
            Comp::LevelF64(c) => c.index(),
            Comp::HighU64(c) => c.index(),
            Comp::HighF64(c) => c.index(),
            Comp::LowU64(c) => c.index(),
            Comp::LowF64(c) => c.index(),
            Comp::State(c) => c.index(),
            Comp::SizeU64(c) => c.index(),
            Comp::SizeF64(c) => c.index(),
            Comp::Percentage(c) => c.index(),
            Comp::GenU64(c) => c.index(),
            Comp::GenF64(c) => c.index(),
            Comp::GenI32(c) => c.index(),
            Comp::Cb(c, ..) => c.index(),
        }
    }

    fn deactivate(&self) {
        match self {
            Comp::Counter(c) => c.deactivate(),
            Comp::AggU64(c) => c.deactivate(),
            Comp::AggU32(c) => c.deactivate(),
            Comp::AggF64(c) => c.deactivate(),
            Comp::Timer(c) => c.deactivate(),
            Comp::LevelU64(c) => c.deactivate(),
            Comp::LevelF64(c) => c.deactivate(),
            Comp::HighU64(c) => c.deactivate(),
            Comp::HighF64(c) => c.deactivate(),
            Comp::LowU64(c) => c.deactivate(),
            Comp::LowF64(c) => c.deactivate(),
            Comp::State(c) => c.deactivate(),
            Comp::SizeU64(c) => c.deactivate(),
            Comp::SizeF64(c) => c.deactivate(),
            Comp::Percentage(c) => c.deactivate(),
            Comp::GenU64(c) => c.deactivate(),
            Comp::GenF64(c) => c.deactivate(),
            Comp::GenI32(c) => c.deactivate(),
            Comp::Cb(c, ..) => c.deactivate(),
        }
    }
}

/// A bound variable's registration handle.
#[derive(Clone)]
pub enum BoundComp {
    Counter(Bound<Counter>),
    AggF64(Bound<Aggregate<f64>>),
}

/// Class and default datatype of each component type.
pub fn class_of(k: VarKind) -> (PvarClass, Datatype) {
    use Datatype as D;
    use PvarClass as C;
    match k {
        VarKind::Counter => (C::Counter, D::UnsignedLongLong),
        VarKind::AggU64 => (C::Aggregate, D::UnsignedLongLong),
        VarKind::AggU32 => (C::Aggregate, D::Unsigned),
        VarKind::AggF64 => (C::Aggregate, D::Double),
        VarKind::Timer => (C::Timer, D::Double),
        VarKind::LevelU64 => (C::Level, D::UnsignedLongLong),
        VarKind::LevelF64 => (C::Level, D::Double),
        VarKind::HighU64 => (C::HighWatermark, D::UnsignedLongLong),
        VarKind::HighF64 => (C::HighWatermark, D::Double),
        VarKind::LowU64 => (C::LowWatermark, D::UnsignedLongLong),
        VarKind::LowF64 => (C::LowWatermark, D::Double),
        VarKind::State => (C::State, D::Int),
        VarKind::SizeU64 => (C::Size, D::UnsignedLongLong),
        VarKind::SizeF64 => (C::Size, D::Double),
        VarKind::Percentage => (C::Percentage, D::Double),
        VarKind::BoundCounter => (C::Counter, D::UnsignedLongLong),
        VarKind::BoundAggF64 => (C::Aggregate, D::Double),
        VarKind::GenU64 => (C::Generic, D::UnsignedLongLong),
        VarKind::GenF64 => (C::Generic, D::Double),
        VarKind::GenI32 => (C::Generic, D::Int),
        VarKind::CbHighU64 => (C::HighWatermark, D::UnsignedLongLong),
        VarKind::CbLowF64 => (C::LowWatermark, D::Double),
        VarKind::CbGeneric => (C::Generic, D::Count),
        VarKind::CbCounter => (C::Counter, D::UnsignedLongLong),
    }
}

/// Datatype overrides: for engine storage mostly ones the class or the
/// component's value type refuses (an override must keep the value
/// representation), for callbacks (which choose freely) mostly accepted.
fn override_of(k: VarKind, sel: u8) -> Option<Datatype> {
    use Datatype as D;
    if sel < 200 {
        return None;
    }
    let list: &[Datatype] = match k {
        VarKind::Counter | VarKind::BoundCounter => {
            &[D::UnsignedLong, D::Unsigned, D::Double, D::Int, D::Char]
        }
        VarKind::AggU64
        | VarKind::AggU32
        | VarKind::LevelU64
        | VarKind::HighU64
        | VarKind::LowU64
        | VarKind::SizeU64 => &[D::UnsignedLong, D::Unsigned, D::Int, D::Count, D::Char],
        VarKind::Timer => &[D::UnsignedLongLong, D::UnsignedLong, D::Int, D::Count],
        VarKind::State => &[D::Count, D::Unsigned, D::Double],
        VarKind::Percentage => &[D::UnsignedLongLong, D::Int],
        VarKind::GenU64 => &[D::UnsignedLong, D::Unsigned, D::Int, D::Double, D::Char],
        VarKind::GenI32 => &[D::Count, D::Unsigned, D::Double, D::Char],
        VarKind::CbHighU64 => &[D::Unsigned, D::UnsignedLong, D::Double, D::Int, D::Char],
        VarKind::CbLowF64 => &[D::UnsignedLongLong, D::Unsigned, D::Int],
        VarKind::CbGeneric => &[D::Int, D::Double, D::UnsignedLongLong, D::Char],
        VarKind::CbCounter => &[D::Unsigned, D::UnsignedLong, D::Double, D::Int],
        _ => &[D::Int, D::Count, D::Char],
    };
    Some(list[sel as usize % list.len()])
}

/// Leave out operations that trigger a known open bug (an ignored test in
/// `tests/regressions.rs`) where `update` and `write_values` check it.
/// None is open now; set it and add the check while one is.
pub const SKIP_KNOWN_BUGS: bool = false;

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

fn fmt_vals(dt: Datatype, v: &[u64]) -> String {
    if dt == Datatype::Double {
        format!(
            "{:?}",
            v.iter().map(|b| f64::from_bits(*b)).collect::<Vec<_>>()
        )
    } else {
        format!("{v:?}")
    }
}

fn same_vals(dt: Datatype, a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            if dt == Datatype::Double {
                let (x, y) = (f64::from_bits(*x), f64::from_bits(*y));
                x == y || (x.is_nan() && y.is_nan())
            } else {
                x == y
            }
        })
}

/// One registry and its model: the component handles, sessions and handles
/// created in it.
pub struct Side {
    pub reg: Registry,
    pub time: MockTime,
    pub model: Model,
    /// Every component handle kept, with its variable and model instance.
    pub comps: Vec<(Comp, usize, usize)>,
    /// Every bound variable registered, with its index.
    pub bounds: Vec<(BoundComp, usize)>,
    /// Every session ever created: engine key, model id.
    pub sessions: Vec<(SessionId, usize)>,
    /// Every handle ever allocated: engine key, model id, engine session.
    pub handles: Vec<(HandleId, usize, SessionId)>,
    /// The value cells of each callback variable, by index (a variable
    /// registered again keeps its first read function, so its cells).
    pub cells: HashMap<usize, Cells>,
}

impl Side {
    fn new() -> Self {
        let (clock, time) = Clock::mock();
        Self {
            reg: Registry::with_clock(clock),
            time,
            model: Model::default(),
            comps: Vec::new(),
            bounds: Vec::new(),
            sessions: Vec::new(),
            handles: Vec::new(),
            cells: HashMap::new(),
        }
    }

    /// Meta of the variable behind a model handle, if it is live, and the
    /// handle's element count.
    fn handle_meta(&self, m: Option<usize>) -> Option<(Meta, usize)> {
        let m = m?;
        let h = self.model.handles.get(&m)?;
        Some((self.model.vars[h.var].meta.clone(), self.model.count_of(m)))
    }
}

/// How often a run reached the situations the rules are about: a stopped
/// handle read after an update that would have moved it, keys of the other
/// registry refused. Counted on explicit reads that agreed with the model,
/// so that a test can check that the random sequences get there.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// A stopped engine watermark handle read after a level passed its mark,
    /// by the operation that set the mark: its stop, a write, a reset (or
    /// the allocation, before the first start).
    pub frozen_mark_after_stop: usize,
    pub frozen_mark_after_write: usize,
    pub frozen_mark_after_reset: usize,
    pub frozen_mark_at_alloc: usize,
    /// A stopped snapshot handle read after its variable changed: engine
    /// GENERIC, callback (watermark or GENERIC); of which before the first
    /// start.
    pub frozen_generic: usize,
    pub frozen_callback: usize,
    pub frozen_snapshot_at_alloc: usize,
    /// Operations with a key of the other registry refused as the model
    /// said, by error code.
    pub foreign_session_refused: usize,
    pub foreign_handle_refused: usize,
    /// Values read (and agreed) in the second registry.
    pub second_registry_reads: usize,
    /// `Op::Cycle` scripts run.
    pub cycles: usize,
}

impl Coverage {
    /// Adds the counts of `o`.
    pub fn merge(&mut self, o: &Coverage) {
        self.frozen_mark_after_stop += o.frozen_mark_after_stop;
        self.frozen_mark_after_write += o.frozen_mark_after_write;
        self.frozen_mark_after_reset += o.frozen_mark_after_reset;
        self.frozen_mark_at_alloc += o.frozen_mark_at_alloc;
        self.frozen_generic += o.frozen_generic;
        self.frozen_callback += o.frozen_callback;
        self.frozen_snapshot_at_alloc += o.frozen_snapshot_at_alloc;
        self.foreign_session_refused += o.foreign_session_refused;
        self.foreign_handle_refused += o.foreign_handle_refused;
        self.second_registry_reads += o.second_registry_reads;
        self.cycles += o.cycles;
    }

    /// Every count, named.
    pub fn counts(&self) -> [(&'static str, usize); 11] {
        [
            ("frozen_mark_after_stop", self.frozen_mark_after_stop),
            ("frozen_mark_after_write", self.frozen_mark_after_write),
            ("frozen_mark_after_reset", self.frozen_mark_after_reset),
            ("frozen_mark_at_alloc", self.frozen_mark_at_alloc),
            ("frozen_generic", self.frozen_generic),
            ("frozen_callback", self.frozen_callback),
            ("frozen_snapshot_at_alloc", self.frozen_snapshot_at_alloc),
            ("foreign_session_refused", self.foreign_session_refused),
            ("foreign_handle_refused", self.foreign_handle_refused),
            ("second_registry_reads", self.second_registry_reads),
            ("cycles", self.cycles),
        ]
    }
}

pub struct Harness {
    /// The two registries; operations go to `sides[cur]`.
    pub sides: [Side; 2],
    pub cur: usize,
    /// Read every live handle after every step. Reads must not change what
    /// a handle reads later, so sequences run both with and without.
    pub check_each_step: bool,
    pub cov: Coverage,
    step: usize,
    /// The operation being applied resolved a key of the other registry.
    foreign: Cell<bool>,
    trace: bool,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

fn same_result<T, U>(engine: &Result<T, pvar::Error>, model: &Result<U, ErrorCode>) -> bool {
    match (engine, model) {
        (Ok(_), Ok(_)) => true,
        (Err(e), Err(m)) => e.code() == *m,
        _ => false,
    }
}

impl Harness {
    pub fn new() -> Self {
        Self {
            sides: [Side::new(), Side::new()],
            cur: 0,
            check_each_step: true,
            cov: Coverage::default(),
            step: 0,
            foreign: Cell::new(false),
            trace: std::env::var_os("PVAR_MODEL_TRACE").is_some(),
        }
    }

    /// A harness whose models (both) apply a wrong rule: a run over a
    /// sequence that reaches it must disagree.
    pub fn with_mutant(m: Mutant) -> Self {
        let mut h = Self::new();
        for side in &mut h.sides {
            side.model.mutant = Some(m);
        }
        h
    }

    /// The registry operations go to, and the other one.
    pub fn me(&self) -> &Side {
        &self.sides[self.cur]
    }
    fn me_mut(&mut self) -> &mut Side {
        &mut self.sides[self.cur]
    }
    pub fn other(&self) -> &Side {
        &self.sides[1 - self.cur]
    }

    fn fail(&self, op: &Op, what: String) -> ! {
        panic!(
            "model and engine disagree at step {} (registry {}, {op:?}): {what}",
            self.step, self.cur
        )
    }

    fn agree<T: std::fmt::Debug, U: std::fmt::Debug>(
        &mut self,
        op: &Op,
        engine: &Result<T, pvar::Error>,
        model: &Result<U, ErrorCode>,
    ) {
        if !same_result(engine, model) {
            self.fail(op, format!("engine returned {engine:?}, model {model:?}"));
        }
        if self.foreign.get() {
            match model {
                Err(ErrorCode::InvalidSession) => self.cov.foreign_session_refused += 1,
                Err(ErrorCode::InvalidHandle) => self.cov.foreign_handle_refused += 1,
                _ => {}
            }
        }
    }

    /// A key near `k`: a wrong generation or a neighbouring slot.
    fn near(k: u64, raw: u64) -> u64 {
        match raw % 4 {
            0 => k + 1,
            1 => k.wrapping_sub(1),
            2 => k + (1 << 32),
            _ => k ^ (1 << 40),
        }
    }

    fn made_up(raw: u64) -> u64 {
        match raw % 4 {
            0 => 0,
            1 => 1, // MPI_T_PVAR_ALL_HANDLES is not a handle here
            2 => raw | (1 << 32),
            _ => raw,
        }
    }

    /// The session key an `SRef` designates, and the model session it is
    /// (`None`: no live session of this registry has this key).
    fn session(&self, r: SRef) -> (SessionId, Option<usize>) {
        let (me, other) = (self.me(), self.other());
        if r.sel < sel::FOREIGN && !me.sessions.is_empty() {
            let (k, m) = me.sessions[r.sel as usize % me.sessions.len()];
            return (k, Some(m));
        }
        if r.sel < sel::WRONG_GENERATION && !other.sessions.is_empty() {
            self.foreign.set(true);
            let (k, _) = other.sessions[r.raw as usize % other.sessions.len()];
            return (k, None);
        }
        let raw = if r.sel < sel::MADE_UP && !me.sessions.is_empty() {
            let (k, _) = me.sessions[r.raw as usize % me.sessions.len()];
            Self::near(k.to_raw(), r.raw)
        } else {
            Self::made_up(r.raw)
        };
        let model = me
            .sessions
            .iter()
            .find(|(k, m)| k.to_raw() == raw && me.model.sessions.get(m) == Some(&true))
            .map(|(_, m)| *m);
        (SessionId::from_raw(raw), model)
    }

    /// As [`Harness::session`], for handles.
    fn handle(&self, r: HRef) -> (HandleId, Option<usize>) {
        let (me, other) = (self.me(), self.other());
        if r.sel < sel::FOREIGN && !me.handles.is_empty() {
            let (k, m, _) = me.handles[r.sel as usize % me.handles.len()];
            return (k, Some(m));
        }
        if r.sel < sel::WRONG_GENERATION && !other.handles.is_empty() {
            self.foreign.set(true);
            let (k, _, _) = other.handles[r.raw as usize % other.handles.len()];
            return (k, None);
        }
        let raw = if r.sel < sel::MADE_UP && !me.handles.is_empty() {
            let (k, _, _) = me.handles[r.raw as usize % me.handles.len()];
            Self::near(k.to_raw(), r.raw)
        } else {
            Self::made_up(r.raw)
        };
        let model = me
            .handles
            .iter()
            .find(|(k, m, _)| k.to_raw() == raw && me.model.handles.contains_key(m))
            .map(|(_, m, _)| *m);
        (HandleId::from_raw(raw), model)
    }

    fn buf_len(count: usize, sel: u8) -> usize {
        match sel % 8 {
            0 => count.saturating_sub(1),
            1 => 0,
            2 => count + 2,
            _ => count,
        }
    }

    /// The model's read, readreset and write take the whole handle with a
    /// buffer of `len` elements (`INVALID` if shorter than the count); the
    /// keyed API takes an element range. The engine is given the handle's
    /// `count` elements from this element: 0 for a buffer that holds them
    /// (a longer one is cut to the count), or, for a shorter one, its
    /// shortfall, so that the range runs past the count by as much
    /// (`INVALID`, checked where the buffer length was).
    fn first_of(count: usize, len: usize) -> usize {
        count.saturating_sub(len)
    }

    /// Values to write, in the datatype of `meta` (exact in the model).
    fn write_values(meta: Option<&Meta>, len: usize, seed: u32) -> Vec<u64> {
        (0..len)
            .map(|i| {
                let s = seed.wrapping_add(i as u32 * 7919);
                match meta {
                    // Seconds, sometimes beyond 2^52 ticks (regression
                    // `double_timer_beyond_2_pow_52_ticks`).
                    Some(m)
                        if m.class == PvarClass::Timer
                            && m.datatype == Datatype::Double
                            && !m.callback =>
                    {
                        if s.is_multiple_of(5) {
                            (1.0e7 + (s % 4000) as f64).to_bits()
                        } else {
                            ((s % 4000) as f64 / 8.0).to_bits()
                        }
                    }
                    Some(m) if m.class == PvarClass::Timer => (s % 4_000_000_000) as u64,
                    Some(m) if m.float() => ((s % 4096) as f64 / 8.0 - 256.0).to_bits(),
                    _ if s & (1 << 31) != 0 => u64::MAX - (s & 0xffff) as u64,
                    _ => s as u64,
                }
            })
            .collect()
    }

    /// Applies one operation, then (with `check_each_step`) reads every
    /// handle of the registry it went to.
    pub fn exec(&mut self, op: &Op) {
        if self.trace {
            eprintln!("step {} registry {}: {op:?}", self.step, self.cur);
        }
        self.foreign.set(false);
        self.apply(op);
        if self.check_each_step {
            self.check_side(op, self.cur);
        }
    }

    pub fn apply(&mut self, op: &Op) {
        match *op {
            Op::Register(r) => self.register(op, r),
            Op::Update(u) => self.update(u, false),
            Op::UpdateOnThread(u) => self.update(u, true),
            Op::CreateInstance { b, obj, count } => {
                let side = self.me_mut();
                if side.bounds.is_empty() {
                    return;
                }
                let (bc, var) = side.bounds[b as usize % side.bounds.len()].clone();
                let object = 0x100 + (obj % 4) as u64;
                let count = (count % 4) as usize;
                let e = match &bc {
                    BoundComp::Counter(b) => b.create_instance(object, count).map(Comp::Counter),
                    BoundComp::AggF64(b) => b.create_instance(object, count).map(Comp::AggF64),
                };
                let mr = side.model.create_instance(var, object, count);
                if let (Ok(c), Ok(inst)) = (&e, &mr)
                    && side.comps.len() < 64
                {
                    side.comps.push((c.clone(), var, *inst));
                }
                self.agree(op, &e.map(|_| ()), &mr);
            }
            Op::DropInstance { b, obj } => {
                let side = self.me_mut();
                if side.bounds.is_empty() {
                    return;
                }
                let (bc, var) = side.bounds[b as usize % side.bounds.len()].clone();
                let object = 0x100 + (obj % 4) as u64;
                let inst = side.model.vars[var].objects.get(&object).copied();
                let e = match &bc {
                    BoundComp::Counter(b) => b.drop_instance(object),
                    BoundComp::AggF64(b) => b.drop_instance(object),
                };
                let mr = side.model.drop_instance(var, object);
                // Let the storage go once the handles are freed, so that the
                // next instance recycles its cells.
                if let Some(inst) = inst {
                    side.comps.retain(|(_, _, i)| *i != inst);
                }
                self.agree(op, &e, &mr);
            }
            Op::Advance(ns) => {
                let side = self.me_mut();
                side.time.advance(Duration::from_nanos(ns as u64));
                side.model.now += ns as u64;
            }
            Op::Deactivate(sel) => {
                let side = self.me_mut();
                if !side.comps.is_empty() {
                    let (c, var, _) = &side.comps[sel as usize % side.comps.len()];
                    c.deactivate();
                    side.model.deactivate(*var);
                }
            }
            Op::SessionCreate => {
                let side = self.me_mut();
                if side.sessions.len() >= 64 {
                    return;
                }
                let k = side.reg.tool().session_create().expect("session_create");
                let m = side.model.session_create();
                side.sessions.push((k, m));
            }
            Op::SessionFree(s) => {
                let (k, m) = self.session(s);
                let side = self.me_mut();
                let e = side.reg.tool().session_free(k);
                let mr = side.model.session_free(m);
                self.agree(op, &e, &mr);
            }
            Op::HandleAlloc(s, sel, obj) => {
                let (k, m) = self.session(s);
                if self.me().handles.len() >= 128 {
                    return;
                }
                let side = self.me_mut();
                let n = side.model.vars.len();
                let index = sel as usize % (n + 2);
                let handle = 0x100 + (obj % 4) as u64;
                let (object, mobj) = match obj {
                    0..200 => (
                        Some(ObjectRef::new(BindKind::Comm, handle)),
                        Some((true, handle)),
                    ),
                    200..230 => (None, None),
                    _ => (
                        Some(ObjectRef::new(BindKind::Win, handle)),
                        Some((false, handle)),
                    ),
                };
                let e = side.reg.tool().handle_alloc(k, index, object);
                let mr = side.model.handle_alloc(m, index, mobj);
                self.agree(op, &e, &mr);
                if let (Ok((h, ec)), Ok((mh, mc))) = (e, mr) {
                    if ec != mc {
                        self.fail(op, format!("count: engine {ec}, model {mc}"));
                    }
                    self.me_mut().handles.push((h, mh, k));
                }
            }
            Op::HandleFree(s, h) | Op::Start(s, h) | Op::Stop(s, h) | Op::Reset(s, h) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let side = self.me_mut();
                let (tool, model) = (side.reg.tool(), &mut side.model);
                let (e, mr) = match op {
                    Op::HandleFree(..) => (tool.handle_free(sk, hk), model.handle_free(sm, hm)),
                    Op::Start(..) => (tool.start(sk, hk), model.start(sm, hm)),
                    Op::Stop(..) => (tool.stop(sk, hk), model.stop(sm, hm)),
                    _ => (tool.reset(sk, hk), model.reset(sm, hm)),
                };
                self.agree(op, &e, &mr);
            }
            Op::Read(s, h, b) | Op::ReadReset(s, h, b) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let (meta, count) = self.me().handle_meta(hm).unzip();
                let count = count.unwrap_or(1);
                let len = Self::buf_len(count, b);
                let first = Self::first_of(count, len);
                let mut out = vec![0xdead_beef_u64; count];
                let read = matches!(op, Op::Read(..));
                let side = self.me_mut();
                let (e, mr) = if read {
                    (
                        side.reg.tool().read(sk, hk, first, &mut out),
                        side.model.read(sm, hm, len),
                    )
                } else {
                    (
                        side.reg.tool().readreset(sk, hk, first, &mut out),
                        side.model.readreset(sm, hm, len),
                    )
                };
                self.agree(op, &e, &mr);
                if let (Ok(()), Ok(expect), Some(meta)) = (&e, &mr, &meta) {
                    let got = &out[..count];
                    if !same_vals(meta.datatype, got, expect) {
                        self.fail(
                            op,
                            format!(
                                "{:?} {} values: engine {}, model {}",
                                meta.class,
                                meta.datatype,
                                fmt_vals(meta.datatype, got),
                                fmt_vals(meta.datatype, expect)
                            ),
                        );
                    }
                    if self.cur == 1 {
                        self.cov.second_registry_reads += 1;
                    }
                    if let (true, Some(hm)) = (read, hm) {
                        self.note_read(hm);
                    }
                }
            }
            Op::ReadFirst(s, h) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let meta = self.me().handle_meta(hm).map(|(m, _)| m);
                let side = self.me_mut();
                // Element 0 (for `MPI_DOUBLE`, the bits of the `f64`).
                let mut v = [0u64];
                let e = side.reg.tool().read(sk, hk, 0, &mut v).map(|()| v[0]);
                let mr = side.model.read_first(sm, hm);
                self.agree(op, &e, &mr);
                if let (Ok(g), Ok(x), Some(meta)) = (&e, &mr, &meta)
                    && !same_vals(meta.datatype, &[*g], &[*x])
                {
                    self.fail(
                        op,
                        format!(
                            "element 0: engine {}, model {}",
                            fmt_vals(meta.datatype, &[*g]),
                            fmt_vals(meta.datatype, &[*x])
                        ),
                    );
                }
            }
            Op::Write(s, h, b, seed) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let (meta, count) = self.me().handle_meta(hm).unzip();
                let count = count.unwrap_or(1);
                let len = Self::buf_len(count, b);
                let vals = Self::write_values(meta.as_ref(), len, seed);
                // The engine is given `count` values, from `first_of`.
                let mut range = vals.clone();
                range.resize(count, 0);
                let side = self.me_mut();
                let e = side
                    .reg
                    .tool()
                    .write(sk, hk, Self::first_of(count, len), &range);
                let mr = side.model.write(sm, hm, &vals);
                self.agree(op, &e, &mr);
            }
            Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                let (k, m) = self.session(s);
                let side = self.me_mut();
                let (tool, model) = (side.reg.tool(), &mut side.model);
                let (e, mr) = match op {
                    Op::StartAll(_) => (tool.start_all(k), model.start_all(m)),
                    Op::StopAll(_) => (tool.stop_all(k), model.stop_all(m)),
                    _ => (tool.reset_all(k), model.reset_all(m)),
                };
                self.agree(op, &e, &mr);
            }
            Op::Switch => self.cur = 1 - self.cur,
            Op::Foreign {
                what,
                h,
                own_session,
                arg,
            } => self.foreign_op(op, what, h, own_session, arg),
            Op::Cycle { h, how, amounts } => self.cycle(h, how, amounts),
            Op::Setup {
                kind,
                name,
                continuous,
                session,
                count,
            } => self.setup(kind, name, continuous, session, count),
        }
    }

    /// `Op::Setup`: ordinary operations, each checked against the model.
    fn setup(&mut self, kind: u8, name: u8, continuous: Option<bool>, session: u8, count: u8) {
        if self.me().sessions.is_empty() {
            self.exec(&Op::SessionCreate);
        }
        let count = count % 3 + 1;
        self.exec(&Op::Register(RegOp {
            kind,
            name: name % 4,
            count,
            continuous,
            readonly: None,
            atomic: None,
            datatype: 0,
        }));
        let (class, _) = class_of(VarKind::ALL[kind as usize % VarKind::ALL.len()]);
        let me = self.me();
        let Some(index) = me
            .model
            .vars
            .iter()
            .position(|v| v.meta.name == NAMES[name as usize % 4] && v.meta.class == class)
        else {
            return;
        };
        if let Some(b) = me.bounds.iter().position(|(_, i)| *i == index) {
            self.exec(&Op::CreateInstance {
                b: b as u8,
                obj: session,
                count,
            });
        }
        let s = SRef {
            sel: session % sel::FOREIGN,
            raw: 0,
        };
        // Variable indices stay far below 256 (four names per class).
        self.exec(&Op::HandleAlloc(s, index as u8, session % 4));
    }

    /// Coverage of a read of model handle `hm` that agreed with the model
    /// (a read changes nothing there): a stopped handle whose variable
    /// moved since it was frozen.
    fn note_read(&mut self, hm: usize) {
        let model = &self.sides[self.cur].model;
        let cov = &mut self.cov;
        let Some(d) = model.handles.get(&hm) else {
            return;
        };
        let meta = &model.vars[d.var].meta;
        let vals = &model.insts[d.inst].vals;
        if meta.has_mark() {
            let passed =
                (0..vals.len()).any(|i| vals[i].passes(d.mark[i], meta.high(), meta.signed()));
            if !d.started && passed {
                match d.last {
                    LastSet::Stop => cov.frozen_mark_after_stop += 1,
                    LastSet::Write => cov.frozen_mark_after_write += 1,
                    LastSet::Reset => cov.frozen_mark_after_reset += 1,
                    LastSet::Alloc => cov.frozen_mark_at_alloc += 1,
                    LastSet::Start => {}
                }
            }
        } else if meta.snapshot() && !d.started && d.snap != *vals {
            if meta.callback {
                cov.frozen_callback += 1;
            } else {
                cov.frozen_generic += 1;
            }
            if d.last == LastSet::Alloc {
                cov.frozen_snapshot_at_alloc += 1;
            }
        }
    }

    /// `Op::Foreign`: the other registry's keys against this one, then
    /// the other registry is checked against its model (nothing moved).
    fn foreign_op(&mut self, op: &Op, what: u8, h: HRef, own_session: bool, arg: u8) {
        let (me, other) = (self.me(), self.other());
        let fh = (!other.handles.is_empty()).then(|| h.sel as usize % other.handles.len());
        let fs = match fh {
            Some(i) => other
                .sessions
                .iter()
                .position(|(k, _)| *k == other.handles[i].2),
            None if !other.sessions.is_empty() => Some(h.sel as usize % other.sessions.len()),
            None => None,
        };
        let Some(fs) = fs else {
            return; // the other registry has no session yet
        };
        let foreign_session = SRef {
            sel: sel::FOREIGN,
            raw: fs as u64,
        };
        let s = if own_session && !me.sessions.is_empty() {
            SRef {
                sel: (h.raw as usize % me.sessions.len()) as u8,
                raw: 0,
            }
        } else {
            foreign_session
        };
        let hr = fh.map(|i| HRef {
            sel: sel::FOREIGN,
            raw: i as u64,
        });
        if let (13, Some(hk)) = (what % 14, hr) {
            return self.foreign_queries(op, s, hk);
        }
        let sub = match (what % 14, hr) {
            (0, Some(h)) => Op::Read(s, h, 3),
            (1, Some(h)) => Op::ReadReset(s, h, 3),
            (2, Some(h)) => Op::Write(s, h, 3, u32::from(arg) * 977),
            (3, Some(h)) => Op::Start(s, h),
            (4, Some(h)) => Op::Stop(s, h),
            (5, Some(h)) => Op::Reset(s, h),
            (6, Some(h)) => Op::HandleFree(s, h),
            (7, Some(h)) => Op::ReadFirst(s, h),
            (8, _) => Op::SessionFree(foreign_session),
            (9, _) => Op::StartAll(foreign_session),
            (10, _) => Op::StopAll(foreign_session),
            (11, _) => Op::ResetAll(foreign_session),
            _ => Op::HandleAlloc(foreign_session, arg, arg),
        };
        self.exec(&sub);
        if !self.foreign.get() {
            self.fail(
                op,
                format!("{sub:?} did not pass a key of the other registry"),
            );
        }
        // Nothing of the other registry moved.
        self.check_side(&sub, 1 - self.cur);
    }

    /// The keyed queries and range operations with a handle key of the
    /// other registry: the error a read gets, and nothing changes.
    fn foreign_queries(&mut self, op: &Op, s: SRef, h: HRef) {
        self.foreign.set(false);
        let (sk, sm) = self.session(s);
        let (hk, hm) = self.handle(h);
        let side = self.me_mut();
        let expect = side.model.read_first(sm, hm).map(|_| ());
        if expect.is_ok() {
            self.fail(op, "the model accepted a key of the other registry".into());
        }
        let tool = self.me().reg.tool();
        let mut buf = [0u64; 1];
        let results: [(&str, pvar::Result<()>); 5] = [
            ("is_started", tool.is_started(sk, hk).map(|_| ())),
            ("handle_info", tool.handle_info(sk, hk).map(|_| ())),
            ("read of a range", tool.read(sk, hk, 0, &mut buf)),
            ("write of a range", tool.write(sk, hk, 0, &[1])),
            ("readreset of a range", tool.readreset(sk, hk, 0, &mut buf)),
        ];
        for (what, e) in results {
            if !same_result(&e, &expect) {
                self.fail(
                    op,
                    format!("{what}: engine returned {e:?}, model {expect:?}"),
                );
            }
            self.agree(op, &e, &expect);
        }
        if self.check_each_step {
            self.check_side(op, self.cur);
        }
        self.check_side(op, 1 - self.cur);
    }

    /// `Op::Cycle`: a start / update / stop / update / read / write /
    /// update / read / reset / update / read script on one handle, each
    /// step an ordinary operation checked against the model.
    fn cycle(&mut self, h: HRef, how: u8, amounts: [u32; 4]) {
        let me = self.me();
        if me.handles.is_empty() {
            return;
        }
        let frozen_kinds: Vec<usize> = (0..me.handles.len())
            .filter(|&j| {
                me.model.handles.get(&me.handles[j].1).is_some_and(|d| {
                    let meta = &me.model.vars[d.var].meta;
                    meta.has_mark() || meta.snapshot()
                })
            })
            .collect();
        let j = if how & 0x40 != 0 && !frozen_kinds.is_empty() {
            frozen_kinds[h.sel as usize % frozen_kinds.len()]
        } else {
            h.sel as usize % me.handles.len()
        };
        let (_, hm, sk) = me.handles[j];
        let Some(si) = me.sessions.iter().position(|(k, _)| *k == sk) else {
            return;
        };
        // The component updating the handle's instance, if kept.
        let comp = me
            .model
            .handles
            .get(&hm)
            .and_then(|d| me.comps.iter().position(|(_, _, inst)| *inst == d.inst));
        // Both below `sel::FOREIGN`: at most 64 sessions and 128 handles.
        let s = SRef {
            sel: si as u8,
            raw: 0,
        };
        let hr = HRef {
            sel: j as u8,
            raw: 0,
        };
        let upd = |k: usize| {
            let a = amounts[k % 4].rotate_left(7 * k as u32) ^ k as u32;
            comp.map(|c| {
                Op::Update(Upd {
                    comp: c as u8,
                    elem: (a >> 16) as u8,
                    how: (a >> 24) as u8,
                    amount: a,
                })
            })
        };
        let twice = how & 2 != 0;
        let mut script: Vec<Option<Op>> = Vec::new();
        if how & 1 != 0 {
            script.push(Some(Op::Start(s, hr)));
            if twice {
                script.push(Some(Op::Start(s, hr)));
            }
        }
        script.extend([upd(0), Some(Op::Read(s, hr, 3)), Some(Op::Stop(s, hr))]);
        if twice {
            script.push(Some(Op::Stop(s, hr)));
        }
        let seed = amounts[0] ^ amounts[3].rotate_left(13);
        let reset = if how & 4 != 0 {
            Op::ReadReset(s, hr, 3)
        } else {
            Op::Reset(s, hr)
        };
        script.extend([
            upd(1),
            Some(Op::Read(s, hr, 3)),
            Some(Op::Write(s, hr, 3, seed)),
            upd(2),
            Some(Op::Read(s, hr, 3)),
            Some(reset),
            upd(3),
            Some(Op::Read(s, hr, 3)),
        ]);
        if how & 8 != 0 {
            // Started again: the written or reset value is gone; a second
            // start changes nothing.
            script.extend([Some(Op::Start(s, hr)), upd(4), Some(Op::Read(s, hr, 3))]);
            if how & 0x10 != 0 {
                script.extend([Some(Op::Write(s, hr, 3, !seed)), upd(5)]);
            }
            if twice {
                script.extend([Some(Op::Start(s, hr)), Some(Op::Read(s, hr, 3))]);
            }
            script.extend([Some(Op::Stop(s, hr)), upd(6), Some(Op::Read(s, hr, 3))]);
        }
        for sub in script.into_iter().flatten() {
            self.exec(&sub);
        }
        self.cov.cycles += 1;
    }

    fn register(&mut self, op: &Op, r: RegOp) {
        let kind = VarKind::ALL[r.kind as usize % VarKind::ALL.len()];
        let name = if r.name % 16 == 15 {
            ""
        } else {
            NAMES[r.name as usize % NAMES.len()]
        };
        let count = match r.count % 8 {
            0 => Some(0),
            n @ 1..=3 => Some(n as usize),
            _ => None,
        };
        let dt = override_of(kind, r.datatype);
        let (class, default_dt) = class_of(kind);
        // The model applies the builder calls in the harness's order.
        let mut meta = if kind.is_callback() {
            spec::callback_meta(name, class, default_dt)
        } else {
            spec::default_meta(name, class, default_dt)
        };
        if matches!(kind, VarKind::BoundCounter | VarKind::BoundAggF64) {
            meta.bound = true;
            meta.count = 0;
        } else if let Some(n) = count {
            meta.count = n;
        }
        if let Some(c) = r.continuous {
            meta.continuous = c;
        }
        if let Some(ro) = r.readonly {
            meta.readonly = ro;
            if ro {
                meta.atomic = false;
            }
        }
        if let Some(a) = r.atomic {
            meta.atomic = a;
        }
        if let Some(d) = dt {
            meta.datatype = d;
        }
        // The settings every builder takes, when the operation gives them.
        macro_rules! options {
            ($b:expr) => {{
                let mut b = $b;
                if let Some(c) = r.continuous {
                    b = b.continuous(c);
                }
                if let Some(ro) = r.readonly {
                    b = b.readonly(ro);
                }
                if let Some(a) = r.atomic {
                    b = b.atomic(a);
                }
                if let Some(d) = dt {
                    b = b.datatype(d);
                }
                b
            }};
        }
        macro_rules! counted {
            ($b:expr) => {{
                let mut b = $b;
                if let Some(n) = count {
                    b = b.count(n);
                }
                options!(b)
            }};
        }
        macro_rules! build {
            ($b:expr, $variant:ident) => {
                counted!($b).register().map(Comp::$variant).map(Ok)
            };
        }
        let side = &mut self.sides[self.cur];
        let reg = &side.reg;
        macro_rules! build_bound {
            ($b:expr, $variant:ident) => {{
                options!($b.bind(BindKind::Comm).per_object_count())
                    .register_bound()
                    .map(BoundComp::$variant)
            }};
        }
        // A callback variable reads fresh cells (or, registered again, the
        // cells of its first registration).
        let cells: Cells = (0..count.unwrap_or(1).max(1))
            .map(|_| AtomicU64::new(0))
            .collect();
        let read_cells = cells.clone();
        let callbacks = Callbacks::new(move |_, i| read_cells[i].load(Ordering::Relaxed));
        let e: Result<Result<Comp, BoundComp>, pvar::Error> = match kind {
            VarKind::Counter => build!(reg.counter(name), Counter),
            VarKind::AggU64 => build!(reg.aggregate::<u64>(name), AggU64),
            VarKind::AggU32 => build!(reg.aggregate::<u32>(name), AggU32),
            VarKind::AggF64 => build!(reg.aggregate::<f64>(name), AggF64),
            VarKind::Timer => build!(reg.timer(name), Timer),
            VarKind::LevelU64 => build!(reg.level::<u64>(name), LevelU64),
            VarKind::LevelF64 => build!(reg.level::<f64>(name), LevelF64),
            VarKind::HighU64 => build!(reg.high_watermark::<u64>(name), HighU64),
            VarKind::HighF64 => build!(reg.high_watermark::<f64>(name), HighF64),
            VarKind::LowU64 => build!(reg.low_watermark::<u64>(name), LowU64),
            VarKind::LowF64 => build!(reg.low_watermark::<f64>(name), LowF64),
            VarKind::State => build!(reg.state(name), State),
            VarKind::SizeU64 => build!(reg.size::<u64>(name), SizeU64),
            VarKind::SizeF64 => build!(reg.size::<f64>(name), SizeF64),
            VarKind::Percentage => build!(reg.percentage(name), Percentage),
            VarKind::BoundCounter => build_bound!(reg.counter(name), Counter).map(Err),
            VarKind::BoundAggF64 => build_bound!(reg.aggregate::<f64>(name), AggF64).map(Err),
            VarKind::GenU64 => build!(reg.generic::<u64>(name), GenU64),
            VarKind::GenF64 => build!(reg.generic::<f64>(name), GenF64),
            VarKind::GenI32 => build!(reg.generic::<i32>(name), GenI32),
            VarKind::CbHighU64 | VarKind::CbLowF64 | VarKind::CbGeneric | VarKind::CbCounter => {
                counted!(reg.callback_pvar(name, class, default_dt, callbacks))
                    .register()
                    .map(|v| {
                        let cells = side.cells.entry(v.index()).or_insert(cells).clone();
                        Ok(Comp::Cb(v, cells, kind))
                    })
            }
        };
        let mr = side.model.register(meta, default_dt);
        let index = |c: &Result<Comp, BoundComp>| match c {
            Ok(c) => c.index(),
            Err(BoundComp::Counter(b)) => b.index(),
            Err(BoundComp::AggF64(b)) => b.index(),
        };
        let er = e.as_ref().map(index).map_err(Clone::clone);
        self.agree(op, &er, &mr);
        if let (Ok(c), Ok(i)) = (e, mr) {
            if index(&c) != i {
                self.fail(op, format!("index: engine {}, model {i}", index(&c)));
            }
            let side = self.me_mut();
            match c {
                Ok(c) if side.comps.len() < 64 => {
                    let inst = side.model.vars[i].inst.expect("unbound");
                    side.comps.push((c, i, inst));
                }
                Err(b) if side.bounds.len() < 16 => side.bounds.push((b, i)),
                _ => {}
            }
        }
    }

    /// A component update, on this thread or on a new one.
    fn update(&mut self, u: Upd, other_thread: bool) {
        let side = self.me_mut();
        if side.comps.is_empty() {
            return;
        }
        let (c, var, inst) = side.comps[u.comp as usize % side.comps.len()].clone();
        let count = side.model.insts[inst].vals.len();
        let i = u.elem as usize % count;
        let m = &mut side.model;
        // How an open bug is skipped (this one was
        // `watermark_init_never_lowers_a_started_high_watermark`).
        if SKIP_KNOWN_BUGS && m.vars[var].meta.is_watermark() && u.how % 8 == 7 {
            return;
        }
        let mut u = u;
        if other_thread && matches!(c, Comp::Timer(_)) {
            // A timer's start tick is per thread: add elapsed ticks instead.
            u.how = 2;
        }
        if other_thread {
            std::thread::scope(|sc| {
                sc.spawn(|| engine_update(&c, i, u));
            });
        } else {
            engine_update(&c, i, u);
        }
        model_update(m, &c, inst, i, u);
    }

    /// Counts agree, and every live handle of registry `s` reads the same
    /// in the engine and the model (values, errors, started state).
    pub fn check_side(&mut self, op: &Op, s: usize) {
        let side = &mut self.sides[s];
        let mut problems = Vec::new();
        if side.reg.pvars().len() != side.model.vars.len() {
            problems.push(format!(
                "num_pvars: engine {}, model {}",
                side.reg.pvars().len(),
                side.model.vars.len()
            ));
        }
        let stats = side.reg.tool().stats();
        if stats.sessions != side.model.live_sessions() || stats.handles != side.model.handles.len()
        {
            problems.push(format!(
                "tool_stats {stats:?}, model {} sessions {} handles",
                side.model.live_sessions(),
                side.model.handles.len()
            ));
        }
        for (i, v) in side.model.vars.iter().enumerate() {
            if side.reg.pvars().is_active(i) != Ok(v.active) {
                problems.push(format!("variable {i} active: model {}", v.active));
            }
        }
        for &(hk, hm, sk) in &side.handles {
            let Some(h) = side.model.handles.get(&hm) else {
                continue;
            };
            let meta = side.model.vars[h.var].meta.clone();
            let count = side.model.count_of(hm);
            let sm = side
                .sessions
                .iter()
                .find(|(k, _)| *k == sk)
                .map(|(_, m)| *m);
            let mut out = vec![0u64; count];
            let e = side.reg.tool().read(sk, hk, 0, &mut out);
            let mr = side.model.read(sm, Some(hm), count);
            if !same_result(&e, &mr) {
                problems.push(format!("handle {hm}: engine returned {e:?}, model {mr:?}"));
            } else if let (Ok(()), Ok(x)) = (&e, &mr)
                && !same_vals(meta.datatype, &out, x)
            {
                problems.push(format!(
                    "handle {hm} ({:?} {}, started {}) reads engine {}, model {}",
                    meta.class,
                    meta.datatype,
                    side.model.is_started(hm),
                    fmt_vals(meta.datatype, &out),
                    fmt_vals(meta.datatype, x)
                ));
            }
            let started = side.reg.tool().is_started(sk, hk);
            if started != Ok(side.model.is_started(hm)) {
                problems.push(format!(
                    "handle {hm} started: engine {started:?}, model {}",
                    side.model.is_started(hm)
                ));
            }
        }
        if let Some(p) = problems.first() {
            self.fail(op, format!("registry {s}: {p}"));
        }
    }

    pub fn run(&mut self, ops: &[Op]) {
        for op in ops {
            self.exec(op);
            self.step += 1;
        }
        if let Some(op) = ops.last() {
            self.check_side(op, 0);
            self.check_side(op, 1);
        }
    }
}

/// Decodes `data` into at most `max` operations and replays them; the
/// first byte's low bit chooses whether every step is checked.
pub fn run_bytes(data: &[u8], max: usize) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let ops = ops::decode(rest, max);
    let mut h = Harness::new();
    h.check_each_step = first & 1 == 0;
    h.run(&ops);
}

/// Integer amounts, sometimes near `u64::MAX` to exercise wrapping.
fn big(u: Upd) -> u64 {
    if u.how & 0x80 != 0 {
        u64::MAX - u.amount as u64
    } else {
        u.amount as u64
    }
}

/// Multiples of 1/8 below `m / 8`: exact in `f64` sums.
fn eighths(u: Upd, m: u32) -> f64 {
    (u.amount % m) as f64 / 8.0
}

/// A callback variable's new value (not the COUNTER's: it adds).
fn callback_value(kind: VarKind, u: Upd) -> Val {
    match kind {
        VarKind::CbHighU64 => Val::I(u.amount as u64),
        VarKind::CbLowF64 => Val::F(eighths(u, 4096) - 256.0),
        VarKind::CbGeneric if u.how & 0x40 != 0 => Val::I(big(u)),
        VarKind::CbGeneric => Val::I(u.amount as i32 as i64 as u64),
        other => unreachable!("{other:?} is not a callback kind that sets values"),
    }
}

/// What a COUNTER update adds.
fn counter_amount(u: Upd) -> u64 {
    if u.how.is_multiple_of(2) { 1 } else { big(u) }
}

/// The engine side of a component update of element `i`.
fn engine_update(c: &Comp, i: usize, u: Upd) {
    let a = u.amount;
    match c {
        Comp::Counter(c) => {
            if u.how.is_multiple_of(2) {
                c.inc_at(i)
            } else {
                c.add_at(i, big(u))
            }
        }
        Comp::AggU64(c) => c.add_at(i, big(u)),
        Comp::AggU32(c) => c.add_at(i, a),
        Comp::AggF64(c) => c.add_at(i, eighths(u, 1 << 16)),
        Comp::Timer(c) => match u.how % 3 {
            0 => c.start_at(i),
            1 => c.stop_at(i),
            _ => c.add_ticks_at(i, (a % 1_000_000) as u64),
        },
        Comp::LevelU64(c) => match u.how % 3 {
            0 => c.inc_at(i),
            1 => c.dec_at(i),
            _ => c.set_at(i, (a % 64) as u64),
        },
        Comp::LevelF64(c) => match u.how % 3 {
            0 => c.inc_at(i),
            1 => c.dec_at(i),
            _ => c.set_at(i, eighths(u, 512)),
        },
        Comp::HighU64(c) => {
            if u.how % 8 == 7 {
                c.init(a as u64)
            } else {
                c.update_at(i, a as u64)
            }
        }
        Comp::LowU64(c) => {
            if u.how % 8 == 7 {
                c.init(a as u64)
            } else {
                c.update_at(i, a as u64)
            }
        }
        Comp::HighF64(c) => {
            let x = eighths(u, 4096) - 256.0;
            if u.how % 8 == 7 {
                c.init(x)
            } else {
                c.update_at(i, x)
            }
        }
        Comp::LowF64(c) => {
            let x = eighths(u, 4096) - 256.0;
            if u.how % 8 == 7 {
                c.init(x)
            } else {
                c.update_at(i, x)
            }
        }
        Comp::State(c) => c.set_at(i, a as i32),
        Comp::SizeU64(c) => c.set_at(i, big(u)),
        Comp::SizeF64(c) => c.set_at(i, eighths(u, 1 << 16)),
        Comp::Percentage(c) => c.set_at(i, eighths(u, 32) - 1.0),
        Comp::GenU64(c) => c.set_at(i, big(u)),
        Comp::GenF64(c) => c.set_at(i, eighths(u, 1 << 16) - 4096.0),
        Comp::GenI32(c) => c.set_at(i, a as i32),
        Comp::Cb(_, cells, VarKind::CbCounter) => {
            // A running total, as the read function of a SUM class returns.
            let total = cells[i].load(Ordering::Relaxed);
            cells[i].store(total.wrapping_add(counter_amount(u)), Ordering::Relaxed);
        }
        Comp::Cb(_, cells, kind) => {
            cells[i].store(callback_value(*kind, u).bits(), Ordering::Relaxed)
        }
    }
}

/// The model side of the same update, on instance `inst`.
fn model_update(m: &mut Model, c: &Comp, inst: usize, i: usize, u: Upd) {
    let a = u.amount;
    let n = m.insts[inst].vals.len();
    let set_all = |m: &mut Model, v: Val| {
        for e in 0..n {
            m.set_value(inst, e, v);
        }
    };
    match c {
        Comp::Counter(_) => {
            if u.how.is_multiple_of(2) {
                m.add(inst, i, Val::I(1))
            } else {
                m.add(inst, i, Val::I(big(u)))
            }
        }
        Comp::AggU64(_) => m.add(inst, i, Val::I(big(u))),
        Comp::AggU32(_) => m.add(inst, i, Val::I(a as u64)),
        Comp::AggF64(_) => m.add(inst, i, Val::F(eighths(u, 1 << 16))),
        Comp::Timer(_) => match u.how % 3 {
            0 => m.timer_start(inst, i),
            1 => m.timer_stop(inst, i),
            _ => m.add(inst, i, Val::I((a % 1_000_000) as u64)),
        },
        Comp::LevelU64(_) => match u.how % 3 {
            0 => m.add(inst, i, Val::I(1)),
            1 => m.add(inst, i, Val::I(u64::MAX)),
            _ => m.set_value(inst, i, Val::I((a % 64) as u64)),
        },
        Comp::LevelF64(_) => match u.how % 3 {
            0 => m.add(inst, i, Val::F(1.0)),
            1 => m.add(inst, i, Val::F(-1.0)),
            _ => m.set_value(inst, i, Val::F(eighths(u, 512))),
        },
        Comp::HighU64(_) | Comp::LowU64(_) => {
            if u.how % 8 == 7 {
                set_all(m, Val::I(a as u64))
            } else {
                m.set_value(inst, i, Val::I(a as u64))
            }
        }
        Comp::HighF64(_) | Comp::LowF64(_) => {
            let x = Val::F(eighths(u, 4096) - 256.0);
            if u.how % 8 == 7 {
                set_all(m, x)
            } else {
                m.set_value(inst, i, x)
            }
        }
        Comp::State(_) => m.set_value(inst, i, Val::I(a as i32 as i64 as u64)),
        Comp::SizeU64(_) => m.set_value(inst, i, Val::I(big(u))),
        Comp::SizeF64(_) => m.set_value(inst, i, Val::F(eighths(u, 1 << 16))),
        Comp::Percentage(_) => m.set_value(inst, i, Val::F((eighths(u, 32) - 1.0).clamp(0.0, 1.0))),
        Comp::GenU64(_) => m.set_value(inst, i, Val::I(big(u))),
        Comp::GenF64(_) => m.set_value(inst, i, Val::F(eighths(u, 1 << 16) - 4096.0)),
        Comp::GenI32(_) => m.set_value(inst, i, Val::I(a as i32 as i64 as u64)),
        Comp::Cb(_, _, VarKind::CbCounter) => m.add(inst, i, Val::I(counter_amount(u))),
        Comp::Cb(_, _, kind) => m.set_value(inst, i, callback_value(*kind, u)),
    }
}
