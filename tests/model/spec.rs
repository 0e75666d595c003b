//! The reference model: what every operation must do, written as plainly
//! as possible, with no concurrency and no cleverness. Values are exact:
//! integers wrap at 64 bits, doubles stay exact because the generators
//! only produce multiples of 1/8 far below 2^50.
//!
//! Rules (MPI 4.1 §15.3.7, `docs/tool-guide.md`):
//! - SUM classes (COUNTER, AGGREGATE, TIMER): a handle keeps `accum` and,
//!   while started, `offset` = the variable's total when it was (re)started;
//!   it reads `accum + (total − offset)` started, `accum` stopped; reset
//!   sets the read value to 0, write to the written value.
//! - WATERMARKS (engine storage): a handle keeps a `mark`: at allocation,
//!   start and reset it is the current level; while started each new level
//!   that passes it replaces it; a write sets it (while started, the level
//!   at the time of the write still counts, as it is a level "since the
//!   write"). A stopped handle's mark never moves: a value written to it,
//!   or the level a reset gave it, stays until the next start.
//! - SNAPSHOTS (not continuous, no history: GENERIC, and HIGH/LOWWATERMARK
//!   computed by callback): started, the current value; stopped, the value
//!   at allocation before the first start, the value at the stop after it.
//!   Read-only, not atomic.
//! - STATE, LEVEL, SIZE, PERCENTAGE, continuous GENERIC and callback
//!   variables outside the SUM classes: no handle state, the current value.
//!   Read-only, not atomic (callback variables outside COUNTER, AGGREGATE
//!   and TIMER included: there are no write callbacks).
//! - Start of a started handle and stop of a stopped one change nothing.
//! - Errors, checked in this order: session (`INVALID_SESSION`), handle
//!   (`INVALID_HANDLE`, also when it belongs to another session), the
//!   variable's flags (`PVAR_NO_STARTSTOP` / `PVAR_NO_ATOMIC` /
//!   `PVAR_NO_WRITE`), inactive variable or dropped instance
//!   (`INVALID_INDEX`: its count means nothing any more), element range
//!   (`INVALID`).
//! - Keys: a model registry knows only its own sessions and handles. The
//!   harness passes `None` for a key that names none of them (freed,
//!   made up, or a key of the *other* registry), so a session key of
//!   another registry is `INVALID_SESSION`, a handle key of another
//!   registry with an own live session `INVALID_HANDLE`, and neither
//!   changes anything here (the harness checks the other registry too).

use std::collections::HashMap;

use pvar::{Datatype, ErrorCode, PvarClass};

/// A value: an integer (u64 bits, wrapping) or a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val {
    I(u64),
    F(f64),
}

impl Val {
    pub fn zero(float: bool) -> Val {
        if float { Val::F(0.0) } else { Val::I(0) }
    }
    pub fn add(self, o: Val) -> Val {
        match (self, o) {
            (Val::I(a), Val::I(b)) => Val::I(a.wrapping_add(b)),
            (Val::F(a), Val::F(b)) => Val::F(a + b),
            _ => panic!("model: mixed value kinds"),
        }
    }
    pub fn sub(self, o: Val) -> Val {
        match (self, o) {
            (Val::I(a), Val::I(b)) => Val::I(a.wrapping_sub(b)),
            (Val::F(a), Val::F(b)) => Val::F(a - b),
            _ => panic!("model: mixed value kinds"),
        }
    }
    /// Whether `self` passes mark `m`: strictly above (high) or below.
    /// `signed` compares integers as i64.
    pub fn passes(self, m: Val, high: bool, signed: bool) -> bool {
        let ord = match (self, m) {
            (Val::I(a), Val::I(b)) if signed => (a as i64).cmp(&(b as i64)),
            (Val::I(a), Val::I(b)) => a.cmp(&b),
            (Val::F(a), Val::F(b)) => match a.partial_cmp(&b) {
                Some(o) => o,
                None => return false,
            },
            _ => panic!("model: mixed value kinds"),
        };
        if high { ord.is_gt() } else { ord.is_lt() }
    }
    pub fn bits(self) -> u64 {
        match self {
            Val::I(v) => v,
            Val::F(f) => f.to_bits(),
        }
    }
}

/// Metadata the model keeps per variable (the subset the harness varies).
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub name: String,
    pub class: PvarClass,
    pub datatype: Datatype,
    /// Fixed element count (0 with `bound`: decided per object).
    pub count: usize,
    /// Bound to communicators, with a per-object element count.
    pub bound: bool,
    pub readonly: bool,
    pub continuous: bool,
    pub atomic: bool,
    /// Values computed by the component's read callback.
    pub callback: bool,
}

impl Meta {
    /// Values are doubles (TIMER totals are kept in integer nanoseconds).
    pub fn float(&self) -> bool {
        self.datatype == Datatype::Double && self.class != PvarClass::Timer
    }
    pub fn signed(&self) -> bool {
        matches!(self.datatype, Datatype::Int | Datatype::Count)
    }
    pub fn is_sum(&self) -> bool {
        matches!(
            self.class,
            PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer
        )
    }
    pub fn is_watermark(&self) -> bool {
        matches!(
            self.class,
            PvarClass::HighWatermark | PvarClass::LowWatermark
        )
    }
    pub fn high(&self) -> bool {
        self.class == PvarClass::HighWatermark
    }
    /// A handle keeps its own mark: engine HIGH/LOWWATERMARK storage.
    pub fn has_mark(&self) -> bool {
        self.is_watermark() && !self.callback
    }
    /// A handle reads a snapshot while stopped: not continuous, no history
    /// (GENERIC, callback watermarks).
    pub fn snapshot(&self) -> bool {
        !self.continuous && !self.is_sum() && !self.has_mark()
    }
}

/// The last tool operation that set a handle's state (for the harness's
/// coverage counts; no rule depends on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LastSet {
    Alloc,
    Start,
    Stop,
    Write,
    Reset,
}

/// A deliberately wrong rule, to check that the harness notices it (tests
/// in `tests/model_based.rs` run a sequence with each and expect a
/// disagreement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// Updates push the marks of stopped watermark handles too.
    StoppedMarkMoves,
    /// A stopped snapshot handle reads the current value.
    SnapshotNotFrozen,
    /// Starting a started watermark handle sets its mark to the level.
    RestartResetsMark,
    /// Stopping a stopped snapshot handle takes a new snapshot.
    RestopSnapshots,
}

#[derive(Debug, Clone)]
pub struct Var {
    pub meta: Meta,
    pub active: bool,
    /// Unbound: its one instance. Bound: none.
    pub inst: Option<usize>,
    /// Bound: the live instance of each object.
    pub objects: HashMap<u64, usize>,
}

/// The values of an unbound variable or of one object instance of a bound
/// one. A dropped instance stays, not live: handles bound to it fail.
#[derive(Debug, Clone)]
pub struct Inst {
    pub var: usize,
    pub live: bool,
    /// Per element: the total (SUM), the level (LEVEL, WATERMARK), the value.
    pub vals: Vec<Val>,
    /// TIMER: per element, the mocked time of a component `start`.
    pub timer_started: Vec<Option<u64>>,
}

#[derive(Debug, Clone)]
pub struct Handle {
    pub session: usize,
    pub var: usize,
    pub inst: usize,
    pub started: bool,
    pub accum: Vec<Val>,
    pub offset: Vec<Val>,
    pub mark: Vec<Val>,
    /// Snapshot handles: the value read while stopped.
    pub snap: Vec<Val>,
    pub last: LastSet,
}

/// The whole model state. Sessions and handles are identified by the
/// order of their creation; freed ones stay in the maps as not live.
#[derive(Debug, Default)]
pub struct Model {
    pub vars: Vec<Var>,
    pub insts: Vec<Inst>,
    pub sessions: HashMap<usize, bool>,
    pub handles: HashMap<usize, Handle>,
    pub next_session: usize,
    pub next_handle: usize,
    /// The mocked clock, in nanoseconds (ticks).
    pub now: u64,
    /// A wrong rule to apply (see [`Mutant`]); `None` in every real run.
    pub mutant: Option<Mutant>,
}

pub type R<T> = Result<T, ErrorCode>;

/// A registration request after the builder calls (the final flags).
pub fn default_meta(name: &str, class: PvarClass, datatype: Datatype) -> Meta {
    let history = matches!(
        class,
        PvarClass::Counter
            | PvarClass::Aggregate
            | PvarClass::Timer
            | PvarClass::HighWatermark
            | PvarClass::LowWatermark
    );
    Meta {
        name: name.to_string(),
        class,
        datatype,
        count: 1,
        bound: false,
        readonly: !history,
        continuous: !history,
        atomic: history,
        callback: false,
    }
}

/// The same for a variable computed by callback (`callback_pvar`): a
/// callback watermark keeps no mark, so it starts read-only, not atomic.
pub fn callback_meta(name: &str, class: PvarClass, datatype: Datatype) -> Meta {
    let mut m = default_meta(name, class, datatype);
    m.callback = true;
    if m.is_watermark() {
        m.readonly = true;
        m.atomic = false;
    }
    m
}

/// How values are kept in a datatype: unsigned, signed or double (a
/// component type's datatype may only be overridden within it).
fn repr(d: Datatype) -> u8 {
    match d {
        Datatype::Double => 2,
        Datatype::Int | Datatype::Count => 1,
        _ => 0,
    }
}

fn datatype_allowed(class: PvarClass, d: Datatype) -> bool {
    let unsigned = matches!(
        d,
        Datatype::Unsigned | Datatype::UnsignedLong | Datatype::UnsignedLongLong
    );
    match class {
        PvarClass::State => d == Datatype::Int,
        PvarClass::Counter => unsigned,
        PvarClass::Percentage => d == Datatype::Double,
        PvarClass::Generic => true,
        _ => unsigned || d == Datatype::Double,
    }
}

impl Model {
    /// Registration rules (`PvarInfo::validate` and the builder's datatype
    /// check): returns the index, existing or new. `made_for` is the
    /// datatype of the component's value type (engine storage only: an
    /// override must keep its representation, except for a TIMER).
    pub fn register(&mut self, m: Meta, made_for: Datatype) -> R<usize> {
        let memoryless = matches!(
            m.class,
            PvarClass::State | PvarClass::Level | PvarClass::Size | PvarClass::Percentage
        );
        // Only the SUM classes keep per-handle state over a callback, and
        // an engine GENERIC keeps none.
        let stateless = (m.callback && !m.is_sum()) || m.class == PvarClass::Generic;
        let ok = !m.name.is_empty()
            && (m.callback || m.class == PvarClass::Timer || repr(m.datatype) == repr(made_for))
            && datatype_allowed(m.class, m.datatype)
            && (m.datatype != Datatype::Char || m.callback)
            && (m.count > 0 || m.bound)
            && (!memoryless || (m.continuous && m.readonly && !m.atomic))
            && (!stateless || (m.readonly && !m.atomic))
            && !(m.atomic && m.readonly);
        if !ok {
            return Err(ErrorCode::Invalid);
        }
        if let Some(i) = self
            .vars
            .iter()
            .position(|v| v.meta.name == m.name && v.meta.class == m.class)
        {
            if self.vars[i].meta != m {
                return Err(ErrorCode::Invalid);
            }
            self.vars[i].active = true;
            return Ok(i);
        }
        let index = self.vars.len();
        let inst = (!m.bound).then(|| self.new_inst(index, m.count, m.float()));
        self.vars.push(Var {
            meta: m,
            active: true,
            inst,
            objects: HashMap::new(),
        });
        Ok(index)
    }

    /// Every level and total starts at 0 (a LOWWATERMARK's too).
    fn new_inst(&mut self, var: usize, count: usize, float: bool) -> usize {
        self.insts.push(Inst {
            var,
            live: true,
            vals: vec![Val::zero(float); count],
            timer_started: vec![None; count],
        });
        self.insts.len() - 1
    }

    /// `Bound::create_instance`: `INVALID` for 0 elements or an object that
    /// has a live instance.
    pub fn create_instance(&mut self, var: usize, object: u64, count: usize) -> R<usize> {
        if count == 0 || self.vars[var].objects.contains_key(&object) {
            return Err(ErrorCode::Invalid);
        }
        let float = self.vars[var].meta.float();
        let i = self.new_inst(var, count, float);
        self.vars[var].objects.insert(object, i);
        Ok(i)
    }

    /// `Bound::drop_instance`: handles bound to it then fail.
    pub fn drop_instance(&mut self, var: usize, object: u64) -> R<()> {
        let i = self.vars[var]
            .objects
            .remove(&object)
            .ok_or(ErrorCode::Invalid)?;
        self.insts[i].live = false;
        Ok(())
    }

    // ---- component side -------------------------------------------------

    /// A new level or total: pushes the marks of started watermark handles
    /// (a stopped handle's mark never moves).
    pub fn set_value(&mut self, inst: usize, i: usize, v: Val) {
        self.insts[inst].vals[i] = v;
        let meta = self.vars[self.insts[inst].var].meta.clone();
        let stopped_too = self.mutant == Some(Mutant::StoppedMarkMoves);
        if meta.has_mark() {
            for h in self.handles.values_mut() {
                if h.inst == inst
                    && (h.started || stopped_too)
                    && v.passes(h.mark[i], meta.high(), meta.signed())
                {
                    h.mark[i] = v;
                }
            }
        }
    }

    pub fn add(&mut self, inst: usize, i: usize, d: Val) {
        let v = self.insts[inst].vals[i].add(d);
        self.set_value(inst, i, v);
    }

    pub fn timer_start(&mut self, inst: usize, i: usize) {
        self.insts[inst].timer_started[i] = Some(self.now);
    }

    pub fn timer_stop(&mut self, inst: usize, i: usize) {
        if let Some(t) = self.insts[inst].timer_started[i].take() {
            self.add(inst, i, Val::I(self.now.saturating_sub(t)));
        }
    }

    pub fn deactivate(&mut self, var: usize) {
        self.vars[var].active = false;
    }

    // ---- tool side --------------------------------------------------------

    pub fn session_create(&mut self) -> usize {
        let id = self.next_session;
        self.next_session += 1;
        self.sessions.insert(id, true);
        id
    }

    fn check_session(&self, s: Option<usize>) -> R<usize> {
        match s {
            Some(s) if self.sessions.get(&s) == Some(&true) => Ok(s),
            _ => Err(ErrorCode::InvalidSession),
        }
    }

    fn check_handle(&self, s: Option<usize>, h: Option<usize>) -> R<usize> {
        let s = self.check_session(s)?;
        match h.and_then(|h| self.handles.get(&h).map(|d| (h, d))) {
            Some((h, d)) if d.session == s => Ok(h),
            _ => Err(ErrorCode::InvalidHandle),
        }
    }

    pub fn session_free(&mut self, s: Option<usize>) -> R<()> {
        let s = self.check_session(s)?;
        self.sessions.insert(s, false);
        self.handles.retain(|_, h| h.session != s);
        Ok(())
    }

    pub fn live_sessions(&self) -> usize {
        self.sessions.values().filter(|l| **l).count()
    }

    /// `handle_alloc`: the new handle's id and count. `index` may be out of
    /// range; `object` is `(right kind, handle value)` (ignored for unbound
    /// variables).
    pub fn handle_alloc(
        &mut self,
        s: Option<usize>,
        index: usize,
        object: Option<(bool, u64)>,
    ) -> R<(usize, usize)> {
        let s = self.check_session(s)?;
        let var = self.vars.get(index).ok_or(ErrorCode::InvalidIndex)?;
        if !var.active {
            return Err(ErrorCode::InvalidIndex);
        }
        let inst = match (var.inst, object) {
            (Some(i), _) => i,
            (None, Some((true, o))) => *var.objects.get(&o).ok_or(ErrorCode::Invalid)?,
            (None, _) => return Err(ErrorCode::Invalid),
        };
        let vals = self.insts[inst].vals.clone();
        let n = vals.len();
        let float = var.meta.float();
        let mut h = Handle {
            session: s,
            var: index,
            inst,
            started: false,
            accum: vec![Val::zero(float); n],
            offset: vec![Val::zero(float); n],
            mark: vals.clone(),
            snap: vals.clone(),
            last: LastSet::Alloc,
        };
        if var.meta.continuous {
            h.started = true;
            h.offset = vals;
        }
        let id = self.next_handle;
        self.next_handle += 1;
        self.handles.insert(id, h);
        Ok((id, n))
    }

    /// Element count of a live handle.
    pub fn count_of(&self, h: usize) -> usize {
        self.insts[self.handles[&h].inst].vals.len()
    }

    pub fn handle_free(&mut self, s: Option<usize>, h: Option<usize>) -> R<()> {
        let h = self.check_handle(s, h)?;
        self.handles.remove(&h);
        Ok(())
    }

    fn meta_of(&self, h: usize) -> Meta {
        self.vars[self.handles[&h].var].meta.clone()
    }

    fn active_of(&self, h: usize) -> R<()> {
        let d = &self.handles[&h];
        if self.vars[d.var].active && self.insts[d.inst].live {
            Ok(())
        } else {
            Err(ErrorCode::InvalidIndex)
        }
    }

    /// Starts handle `h` (already checked): a no-op when started. A SUM
    /// handle counts from now on; a watermark's mark is the level now; a
    /// snapshot handle reads the current value while started.
    fn do_start(&mut self, h: usize) {
        let vals = self.insts[self.handles[&h].inst].vals.clone();
        let meta = self.meta_of(h);
        let restart = self.mutant == Some(Mutant::RestartResetsMark);
        let d = self.handles.get_mut(&h).unwrap();
        if d.started {
            if restart && meta.has_mark() {
                d.mark = vals;
            }
            return;
        }
        d.started = true;
        d.last = LastSet::Start;
        if meta.is_sum() {
            d.offset = vals;
        } else if meta.has_mark() {
            d.mark = vals;
        }
    }

    /// Stops handle `h`: a no-op when stopped. A SUM handle keeps what it
    /// counted; a watermark's mark freezes; a snapshot handle keeps the
    /// value now.
    fn do_stop(&mut self, h: usize) {
        let vals = self.insts[self.handles[&h].inst].vals.clone();
        let meta = self.meta_of(h);
        let restop = self.mutant == Some(Mutant::RestopSnapshots);
        let d = self.handles.get_mut(&h).unwrap();
        if !d.started {
            if restop && meta.snapshot() {
                d.snap = vals;
            }
            return;
        }
        d.started = false;
        d.last = LastSet::Stop;
        if meta.is_sum() {
            for i in 0..vals.len() {
                d.accum[i] = d.accum[i].add(vals[i].sub(d.offset[i]));
            }
        } else if meta.snapshot() {
            d.snap = vals;
        }
    }

    /// What handle `h` reads (in the model's value domain).
    fn value(&self, h: usize) -> Vec<Val> {
        let d = &self.handles[&h];
        let meta = &self.vars[d.var].meta;
        let vals = &self.insts[d.inst].vals;
        if meta.is_sum() {
            (0..vals.len())
                .map(|i| {
                    if d.started {
                        d.accum[i].add(vals[i].sub(d.offset[i]))
                    } else {
                        d.accum[i]
                    }
                })
                .collect()
        } else if meta.has_mark() {
            d.mark.clone()
        } else if meta.snapshot() && !d.started && self.mutant != Some(Mutant::SnapshotNotFrozen) {
            d.snap.clone()
        } else {
            vals.clone()
        }
    }

    /// The values as `read` returns them: datatype bits; an engine TIMER in
    /// nanoseconds (or seconds as a double); an engine integer LEVEL
    /// clamped at 0; a double LEVEL, SIZE or watermark (engine or
    /// callback) negative or NaN as 0; a PERCENTAGE clamped to [0, 1] (NaN
    /// 0); `MPI_UNSIGNED` wrapped at 32 bits for a class that can overflow,
    /// saturated for one that cannot. Callback values are otherwise the
    /// read function's, in the datatype's units.
    fn output(&self, h: usize, vals: Vec<Val>) -> Vec<u64> {
        let meta = self.meta_of(h);
        vals.into_iter()
            .map(|v| match (meta.class, v) {
                (PvarClass::Timer, Val::I(ns))
                    if !meta.callback && meta.datatype == Datatype::Double =>
                {
                    (ns as f64 / 1e9).to_bits()
                }
                (PvarClass::Level, Val::I(x)) if !meta.callback && (x as i64) < 0 => 0,
                (
                    PvarClass::Level
                    | PvarClass::Size
                    | PvarClass::HighWatermark
                    | PvarClass::LowWatermark,
                    _,
                ) if meta.datatype == Datatype::Double => {
                    let x = f64::from_bits(v.bits());
                    // Negative or NaN: 0.
                    if x >= 0.0 { v.bits() } else { 0f64.to_bits() }
                }
                (PvarClass::Percentage, _) => {
                    let x = f64::from_bits(v.bits());
                    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }.to_bits()
                }
                _ => v.bits(),
            })
            .map(|bits| {
                const MAX: u64 = u32::MAX as u64;
                match meta.datatype {
                    Datatype::Unsigned if meta.class.can_overflow() => bits & MAX,
                    Datatype::Unsigned => bits.min(MAX),
                    _ => bits,
                }
            })
            .collect()
    }

    /// A written datatype value in the model's domain (engine TIMER:
    /// nanoseconds).
    fn input(&self, meta: &Meta, bits: u64) -> Val {
        if meta.class == PvarClass::Timer && !meta.callback {
            if meta.datatype == Datatype::Double {
                Val::I((f64::from_bits(bits) * 1e9).max(0.0) as u64)
            } else {
                Val::I(bits)
            }
        } else if meta.float() {
            Val::F(f64::from_bits(bits))
        } else {
            Val::I(bits)
        }
    }

    pub fn start(&mut self, s: Option<usize>, h: Option<usize>) -> R<()> {
        let h = self.check_handle(s, h)?;
        if self.meta_of(h).continuous {
            return Err(ErrorCode::PvarNoStartstop);
        }
        self.active_of(h)?;
        self.do_start(h);
        Ok(())
    }

    pub fn stop(&mut self, s: Option<usize>, h: Option<usize>) -> R<()> {
        let h = self.check_handle(s, h)?;
        if self.meta_of(h).continuous {
            return Err(ErrorCode::PvarNoStartstop);
        }
        self.active_of(h)?;
        self.do_stop(h);
        Ok(())
    }

    /// `read` with a buffer of `len` elements.
    pub fn read(&mut self, s: Option<usize>, h: Option<usize>, len: usize) -> R<Vec<u64>> {
        let h = self.check_handle(s, h)?;
        self.active_of(h)?;
        if len < self.count_of(h) {
            return Err(ErrorCode::Invalid);
        }
        Ok(self.output(h, self.value(h)))
    }

    /// `read` of element 0 alone (a one-element range from 0).
    pub fn read_first(&mut self, s: Option<usize>, h: Option<usize>) -> R<u64> {
        let h = self.check_handle(s, h)?;
        self.active_of(h)?;
        Ok(self.output(h, self.value(h))[0])
    }

    pub fn write(&mut self, s: Option<usize>, h: Option<usize>, values: &[u64]) -> R<()> {
        let h = self.check_handle(s, h)?;
        let meta = self.meta_of(h);
        if meta.readonly {
            return Err(ErrorCode::PvarNoWrite);
        }
        let n = self.count_of(h);
        self.active_of(h)?;
        if values.len() < n {
            return Err(ErrorCode::Invalid);
        }
        if !(meta.is_sum() || meta.has_mark()) {
            return Err(ErrorCode::PvarNoWrite);
        }
        let vals = self.insts[self.handles[&h].inst].vals.clone();
        let written: Vec<Val> = values[..n].iter().map(|&b| self.input(&meta, b)).collect();
        let d = self.handles.get_mut(&h).unwrap();
        d.last = LastSet::Write;
        for i in 0..n {
            if meta.is_sum() {
                // Reads `written` from now on.
                d.accum[i] = written[i];
                d.offset[i] = vals[i];
            } else {
                d.mark[i] = written[i];
                if d.started && vals[i].passes(d.mark[i], meta.high(), meta.signed()) {
                    d.mark[i] = vals[i];
                }
            }
        }
        Ok(())
    }

    /// Resets to the starting value: 0 (SUM), the level now (watermark);
    /// a stopped handle keeps it until the next start.
    fn do_reset(&mut self, h: usize) {
        let vals = self.insts[self.handles[&h].inst].vals.clone();
        let meta = self.meta_of(h);
        let d = self.handles.get_mut(&h).unwrap();
        d.last = LastSet::Reset;
        if meta.is_sum() {
            for i in 0..vals.len() {
                d.accum[i] = Val::zero(meta.float());
                d.offset[i] = vals[i];
            }
        } else if meta.has_mark() {
            d.mark = vals;
        }
    }

    pub fn reset(&mut self, s: Option<usize>, h: Option<usize>) -> R<()> {
        let h = self.check_handle(s, h)?;
        if self.meta_of(h).readonly {
            return Err(ErrorCode::PvarNoWrite);
        }
        self.active_of(h)?;
        self.do_reset(h);
        Ok(())
    }

    pub fn readreset(&mut self, s: Option<usize>, h: Option<usize>, len: usize) -> R<Vec<u64>> {
        let h = self.check_handle(s, h)?;
        let meta = self.meta_of(h);
        if !meta.atomic {
            return Err(ErrorCode::PvarNoAtomic);
        }
        if meta.readonly {
            return Err(ErrorCode::PvarNoWrite);
        }
        self.active_of(h)?;
        if len < self.count_of(h) {
            return Err(ErrorCode::Invalid);
        }
        let out = self.output(h, self.value(h));
        self.do_reset(h);
        Ok(out)
    }

    fn session_handles(&self, s: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .handles
            .iter()
            .filter(|(_, d)| d.session == s)
            .map(|(k, _)| *k)
            .collect();
        v.sort();
        v
    }

    /// `start_all`: continuous and started handles are ignored; every other
    /// handle is started; `PVAR_NO_STARTSTOP` if any could not be.
    pub fn start_all(&mut self, s: Option<usize>) -> R<()> {
        self.start_stop_all(s, true)
    }

    /// `stop_all`: as `start_all`, stopping the started handles.
    pub fn stop_all(&mut self, s: Option<usize>) -> R<()> {
        self.start_stop_all(s, false)
    }

    fn start_stop_all(&mut self, s: Option<usize>, start: bool) -> R<()> {
        let s = self.check_session(s)?;
        let mut res = Ok(());
        for h in self.session_handles(s) {
            let d = &self.handles[&h];
            if self.meta_of(h).continuous || d.started == start {
                continue;
            }
            if self.active_of(h).is_err() {
                res = Err(ErrorCode::PvarNoStartstop);
                continue;
            }
            if start {
                self.do_start(h);
            } else {
                self.do_stop(h);
            }
        }
        res
    }

    /// `reset_all`: read-only handles are ignored.
    pub fn reset_all(&mut self, s: Option<usize>) -> R<()> {
        let s = self.check_session(s)?;
        let mut res = Ok(());
        for h in self.session_handles(s) {
            if self.meta_of(h).readonly {
                continue;
            }
            if self.active_of(h).is_err() {
                res = Err(ErrorCode::PvarNoWrite);
                continue;
            }
            self.do_reset(h);
        }
        res
    }

    pub fn is_started(&self, h: usize) -> bool {
        self.handles[&h].started
    }
}
