//! Replays operations against a [`pvar::Registry`] and the [`Model`] and
//! panics on the first disagreement (value or return code), naming the
//! step and the operation.

use std::time::Duration;

use pvar::clock::MockTime;
use pvar::{
    Aggregate, BindKind, Bound, Clock, Counter, Datatype, ErrorCode, HandleId, HighWatermark,
    Level, LowWatermark, ObjectRef, Percentage, PvarClass, Registry, SessionId, Size, State, Timer,
};

use super::ops::{self, HRef, Op, RegOp, SRef, Upd, VarKind};
use super::spec::{self, Meta, Model, Val};

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
    }
}

/// Datatype overrides that keep the component's value representation
/// (integer or double), mostly ones the class refuses.
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

pub struct Harness {
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
    /// Read every live handle after every step. Reads must not change what
    /// a handle reads later, so sequences run both with and without.
    pub check_each_step: bool,
    step: usize,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    pub fn new() -> Self {
        let (clock, time) = Clock::mock();
        Self {
            reg: Registry::with_clock(clock),
            time,
            model: Model::default(),
            comps: Vec::new(),
            bounds: Vec::new(),
            sessions: Vec::new(),
            handles: Vec::new(),
            check_each_step: true,
            step: 0,
        }
    }

    fn fail(&self, op: &Op, what: String) -> ! {
        panic!(
            "model and engine disagree at step {} ({op:?}): {what}",
            self.step
        )
    }

    fn agree<T: std::fmt::Debug, U: std::fmt::Debug>(
        &self,
        op: &Op,
        engine: &Result<T, pvar::Error>,
        model: &Result<U, ErrorCode>,
    ) {
        let ok = match (engine, model) {
            (Ok(_), Ok(_)) => true,
            (Err(e), Err(m)) => e.code() == *m,
            _ => false,
        };
        if !ok {
            self.fail(op, format!("engine returned {engine:?}, model {model:?}"));
        }
    }

    /// The session key an `SRef` designates, and the model session it is
    /// (`None`: no live session has this key).
    fn session(&self, r: SRef) -> (SessionId, Option<usize>) {
        if r.sel < 232 && !self.sessions.is_empty() {
            let (k, m) = self.sessions[r.sel as usize % self.sessions.len()];
            return (k, Some(m));
        }
        let raw = if r.sel < 244 && !self.sessions.is_empty() {
            let (k, _) = self.sessions[r.raw as usize % self.sessions.len()];
            // A wrong generation or a neighbouring slot.
            match r.raw % 4 {
                0 => k.to_raw() + 1,
                1 => k.to_raw().wrapping_sub(1),
                2 => k.to_raw() + (1 << 32),
                _ => k.to_raw() ^ (1 << 40),
            }
        } else {
            match r.raw % 4 {
                0 => 0,
                1 => 1,
                2 => r.raw | (1 << 32),
                _ => r.raw,
            }
        };
        let model = self
            .sessions
            .iter()
            .find(|(k, m)| k.to_raw() == raw && self.model.sessions.get(m) == Some(&true))
            .map(|(_, m)| *m);
        (SessionId::from_raw(raw), model)
    }

    fn handle(&self, r: HRef) -> (HandleId, Option<usize>) {
        if r.sel < 232 && !self.handles.is_empty() {
            let (k, m, _) = self.handles[r.sel as usize % self.handles.len()];
            return (k, Some(m));
        }
        let raw = if r.sel < 244 && !self.handles.is_empty() {
            let (k, _, _) = self.handles[r.raw as usize % self.handles.len()];
            match r.raw % 4 {
                0 => k.to_raw() + 1,
                1 => k.to_raw().wrapping_sub(1),
                2 => k.to_raw() + (1 << 32),
                _ => k.to_raw() ^ (1 << 40),
            }
        } else {
            match r.raw % 4 {
                0 => 0,
                1 => 1, // MPI_T_PVAR_ALL_HANDLES is not a handle here
                2 => r.raw | (1 << 32),
                _ => r.raw,
            }
        };
        let model = self
            .handles
            .iter()
            .find(|(k, m, _)| k.to_raw() == raw && self.model.handles.contains_key(m))
            .map(|(_, m, _)| *m);
        (HandleId::from_raw(raw), model)
    }

    /// Meta of the variable behind a model handle, if it is live, and the
    /// handle's element count.
    fn handle_meta(&self, m: Option<usize>) -> Option<(Meta, usize)> {
        let m = m?;
        let h = self.model.handles.get(&m)?;
        Some((self.model.vars[h.var].meta.clone(), self.model.count_of(m)))
    }

    fn buf_len(count: usize, sel: u8) -> usize {
        match sel % 8 {
            0 => count.saturating_sub(1),
            1 => 0,
            2 => count + 2,
            _ => count,
        }
    }

    /// Values to write, in the datatype of `meta` (exact in the model).
    fn write_values(meta: Option<&Meta>, len: usize, seed: u32) -> Vec<u64> {
        (0..len)
            .map(|i| {
                let s = seed.wrapping_add(i as u32 * 7919);
                match meta {
                    // Seconds, sometimes beyond 2^52 ticks (regression
                    // `double_timer_beyond_2_pow_52_ticks`).
                    Some(m) if m.class == PvarClass::Timer && m.datatype == Datatype::Double => {
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

    pub fn apply(&mut self, op: &Op) {
        match *op {
            Op::Register(r) => self.register(op, r),
            Op::Update(u) => self.update(u, false),
            Op::UpdateOnThread(u) => self.update(u, true),
            Op::CreateInstance { b, obj, count } => {
                if self.bounds.is_empty() {
                    return;
                }
                let (bc, var) = self.bounds[b as usize % self.bounds.len()].clone();
                let object = 0x100 + (obj % 4) as u64;
                let count = (count % 4) as usize;
                let e = match &bc {
                    BoundComp::Counter(b) => b.create_instance(object, count).map(Comp::Counter),
                    BoundComp::AggF64(b) => b.create_instance(object, count).map(Comp::AggF64),
                };
                let mr = self.model.create_instance(var, object, count);
                self.agree(op, &e.as_ref().map(|_| ()).map_err(Clone::clone), &mr);
                if let (Ok(c), Ok(inst)) = (e, mr)
                    && self.comps.len() < 64
                {
                    self.comps.push((c, var, inst));
                }
            }
            Op::DropInstance { b, obj } => {
                if self.bounds.is_empty() {
                    return;
                }
                let (bc, var) = self.bounds[b as usize % self.bounds.len()].clone();
                let object = 0x100 + (obj % 4) as u64;
                let inst = self.model.vars[var].objects.get(&object).copied();
                let e = match &bc {
                    BoundComp::Counter(b) => b.drop_instance(object),
                    BoundComp::AggF64(b) => b.drop_instance(object),
                };
                let mr = self.model.drop_instance(var, object);
                self.agree(op, &e, &mr);
                // Let the storage go once the handles are freed, so that the
                // next instance recycles its cells.
                if let Some(inst) = inst {
                    self.comps.retain(|(_, _, i)| *i != inst);
                }
            }
            Op::Advance(ns) => {
                self.time.advance(Duration::from_nanos(ns as u64));
                self.model.now += ns as u64;
            }
            Op::Deactivate(sel) => {
                if !self.comps.is_empty() {
                    let (c, var, _) = &self.comps[sel as usize % self.comps.len()];
                    c.deactivate();
                    self.model.deactivate(*var);
                }
            }
            Op::SessionCreate => {
                if self.sessions.len() >= 64 {
                    return;
                }
                let k = self.reg.session_create().expect("session_create");
                let m = self.model.session_create();
                self.sessions.push((k, m));
            }
            Op::SessionFree(s) => {
                let (k, m) = self.session(s);
                let e = self.reg.session_free(k);
                let mr = self.model.session_free(m);
                self.agree(op, &e, &mr);
            }
            Op::HandleAlloc(s, sel, obj) => {
                if self.handles.len() >= 128 {
                    return;
                }
                let (k, m) = self.session(s);
                let n = self.model.vars.len();
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
                let e = self.reg.handle_alloc(k, index, object);
                let mr = self.model.handle_alloc(m, index, mobj);
                self.agree(op, &e, &mr);
                if let (Ok((h, ec)), Ok((mh, mc))) = (e, mr) {
                    if ec != mc {
                        self.fail(op, format!("count: engine {ec}, model {mc}"));
                    }
                    self.handles.push((h, mh, k));
                }
            }
            Op::HandleFree(s, h) | Op::Start(s, h) | Op::Stop(s, h) | Op::Reset(s, h) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let (e, mr) = match op {
                    Op::HandleFree(..) => {
                        (self.reg.handle_free(sk, hk), self.model.handle_free(sm, hm))
                    }
                    Op::Start(..) => (self.reg.start(sk, hk), self.model.start(sm, hm)),
                    Op::Stop(..) => (self.reg.stop(sk, hk), self.model.stop(sm, hm)),
                    _ => (self.reg.reset(sk, hk), self.model.reset(sm, hm)),
                };
                self.agree(op, &e, &mr);
            }
            Op::Read(s, h, b) | Op::ReadReset(s, h, b) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let (meta, count) = self.handle_meta(hm).unzip();
                let count = count.unwrap_or(1);
                let len = Self::buf_len(count, b);
                let mut out = vec![0xdead_beef_u64; len];
                let (e, mr) = if matches!(op, Op::Read(..)) {
                    (
                        self.reg.read(sk, hk, &mut out),
                        self.model.read(sm, hm, len),
                    )
                } else {
                    (
                        self.reg.readreset(sk, hk, &mut out),
                        self.model.readreset(sm, hm, len),
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
                }
            }
            Op::ReadFirst(s, h) => {
                let (sk, sm) = self.session(s);
                let (hk, hm) = self.handle(h);
                let meta = self.handle_meta(hm).map(|(m, _)| m);
                let float = meta
                    .as_ref()
                    .is_some_and(|m| m.datatype == Datatype::Double);
                let e = if float {
                    self.reg.read_f64(sk, hk).map(f64::to_bits)
                } else {
                    self.reg.read_u64(sk, hk)
                };
                let mr = self.model.read_first(sm, hm);
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
                let (meta, count) = self.handle_meta(hm).unzip();
                let count = count.unwrap_or(1);
                let vals = Self::write_values(meta.as_ref(), Self::buf_len(count, b), seed);
                let e = self.reg.write(sk, hk, &vals);
                let mr = self.model.write(sm, hm, &vals);
                self.agree(op, &e, &mr);
            }
            Op::StartAll(s) | Op::StopAll(s) | Op::ResetAll(s) => {
                let (k, m) = self.session(s);
                let (e, mr) = match op {
                    Op::StartAll(_) => (self.reg.start_all(k), self.model.start_all(m)),
                    Op::StopAll(_) => (self.reg.stop_all(k), self.model.stop_all(m)),
                    _ => (self.reg.reset_all(k), self.model.reset_all(m)),
                };
                self.agree(op, &e, &mr);
            }
        }
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
        let mut meta = spec::default_meta(name, class, default_dt);
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
        macro_rules! build {
            ($b:expr, $variant:ident) => {{
                let mut b = $b;
                if let Some(n) = count {
                    b = b.count(n);
                }
                options!(b).register().map(Comp::$variant).map(Ok)
            }};
        }
        let reg = &self.reg;
        macro_rules! build_bound {
            ($b:expr, $variant:ident) => {{
                options!($b.bind(BindKind::Comm).per_object_count())
                    .register_bound()
                    .map(BoundComp::$variant)
            }};
        }
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
        };
        let mr = self.model.register(meta);
        let index = |c: &Result<Comp, BoundComp>| match c {
            Ok(c) => c.index(),
            Err(BoundComp::Counter(b)) => b.index(),
            Err(BoundComp::AggF64(b)) => b.index(),
        };
        self.agree(op, &e.as_ref().map(index).map_err(Clone::clone), &mr);
        if let (Ok(c), Ok(i)) = (e, mr) {
            if index(&c) != i {
                self.fail(op, format!("index: engine {}, model {i}", index(&c)));
            }
            match c {
                Ok(c) if self.comps.len() < 64 => {
                    let inst = self.model.vars[i].inst.expect("unbound");
                    self.comps.push((c, i, inst));
                }
                Err(b) if self.bounds.len() < 16 => self.bounds.push((b, i)),
                _ => {}
            }
        }
    }

    /// A component update, on this thread or on a new one.
    fn update(&mut self, u: Upd, other_thread: bool) {
        if self.comps.is_empty() {
            return;
        }
        let (c, var, inst) = self.comps[u.comp as usize % self.comps.len()].clone();
        let count = self.model.insts[inst].vals.len();
        let i = u.elem as usize % count;
        let m = &mut self.model;
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

    /// After every step: counts agree, and every live handle reads the same
    /// in the engine and the model (values, errors, started state).
    pub fn check_all(&mut self, op: &Op) {
        if self.reg.num_pvars() != self.model.vars.len() {
            self.fail(
                op,
                format!(
                    "num_pvars: engine {}, model {}",
                    self.reg.num_pvars(),
                    self.model.vars.len()
                ),
            );
        }
        let stats = self.reg.tool_stats();
        if stats.sessions != self.model.live_sessions() || stats.handles != self.model.handles.len()
        {
            self.fail(
                op,
                format!(
                    "tool_stats {stats:?}, model {} sessions {} handles",
                    self.model.live_sessions(),
                    self.model.handles.len()
                ),
            );
        }
        for (i, v) in self.model.vars.iter().enumerate() {
            if self.reg.pvar_is_active(i) != Ok(v.active) {
                self.fail(op, format!("variable {i} active: model {}", v.active));
            }
        }
        let sids: Vec<(SessionId, usize)> = self.sessions.clone();
        for &(hk, hm, sk) in &self.handles.clone() {
            let Some(h) = self.model.handles.get(&hm) else {
                continue;
            };
            let meta = self.model.vars[h.var].meta.clone();
            let count = self.model.count_of(hm);
            let sm = sids.iter().find(|(k, _)| *k == sk).map(|(_, m)| *m);
            let mut out = vec![0u64; count];
            let e = self.reg.read(sk, hk, &mut out);
            let mr = self.model.read(sm, Some(hm), count);
            self.agree(op, &e, &mr);
            if let (Ok(()), Ok(x)) = (&e, &mr)
                && !same_vals(meta.datatype, &out, x)
            {
                self.fail(
                    op,
                    format!(
                        "handle {hm} ({:?} {}, started {}) reads engine {}, model {}",
                        meta.class,
                        meta.datatype,
                        self.model.is_started(hm),
                        fmt_vals(meta.datatype, &out),
                        fmt_vals(meta.datatype, x)
                    ),
                );
            }
            let started = self.reg.is_started(sk, hk);
            if started != Ok(self.model.is_started(hm)) {
                self.fail(
                    op,
                    format!(
                        "handle {hm} started: engine {started:?}, model {}",
                        self.model.is_started(hm)
                    ),
                );
            }
        }
    }

    pub fn run(&mut self, ops: &[Op]) {
        let trace = std::env::var_os("PVAR_MODEL_TRACE").is_some();
        for op in ops {
            if trace {
                eprintln!("step {}: {op:?}", self.step);
            }
            self.apply(op);
            if self.check_each_step {
                self.check_all(op);
            }
            self.step += 1;
        }
        if let Some(op) = ops.last() {
            self.check_all(op);
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
    }
}
