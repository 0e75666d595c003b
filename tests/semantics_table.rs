//! The class × storage kind × operation table: every tool operation behaves
//! for every class and storage kind as the standard (MPI 4.1 §15.3.7) and
//! `docs/tool-guide.md` say, checked for each combination that registers,
//! unbound and bound to an object, continuous and not, in one session, in
//! two sessions and across two registries.
//!
//! The expected behaviour of each cell comes from the rules ([`rule`]),
//! not from watching the engine; the engine is then driven through the
//! keyed tool API (the one the C interface uses) and must do exactly that.
//! The same rules render the table in `docs/tool-guide.md` (between the
//! `semantics-table` markers); the test fails if the guide's copy differs.
//! `PVAR_BLESS=1 cargo test --test semantics_table` rewrites it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pvar::{
    BindKind, Callbacks, Datatype, ErrorCode, HandleId, Notify, ObjectRef, PvarClass, Registry,
    SessionId,
};

/// How a variable's values are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// The engine's own storage for the class: per-thread cells (COUNTER,
    /// AGGREGATE, TIMER, LEVEL), one shared value (STATE, SIZE,
    /// PERCENTAGE, GENERIC) or a watermark store (HIGH/LOWWATERMARK).
    Engine,
    /// Values computed by the component's read function.
    Callback,
}

impl Storage {
    fn name(self, class: PvarClass) -> &'static str {
        use PvarClass as C;
        match (self, class) {
            (Storage::Callback, _) => "callback",
            (_, C::Counter | C::Aggregate | C::Timer | C::Level) => "per-thread cells",
            (_, C::HighWatermark | C::LowWatermark) => "watermark store",
            _ => "shared value",
        }
    }
}

/// What the rules say a handle does: the table's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rule {
    /// Started from allocation, `start`/`stop` refused (`PVAR_NO_STARTSTOP`).
    continuous: bool,
    /// Per-handle state kept: SUM (accum/offset) or a watermark mark.
    history: History,
    /// `write` and `reset` refused (`PVAR_NO_WRITE`).
    readonly: bool,
    /// `readreset` allowed.
    atomic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum History {
    /// COUNTER, AGGREGATE, TIMER: the sum since start; resets to 0.
    Sum,
    /// Engine HIGH/LOWWATERMARK: the extreme since start; resets to the level.
    Mark,
    /// No per-handle state: the current value (frozen in a snapshot while
    /// a non-continuous handle is stopped).
    None,
}

const CLASSES: [PvarClass; 10] = [
    PvarClass::State,
    PvarClass::Level,
    PvarClass::Size,
    PvarClass::Percentage,
    PvarClass::HighWatermark,
    PvarClass::LowWatermark,
    PvarClass::Counter,
    PvarClass::Aggregate,
    PvarClass::Timer,
    PvarClass::Generic,
];

/// The rules of the standard and the tool guide, for a variable registered
/// with its class's default flags. `None`: the combination cannot be
/// registered (a class without history is continuous, except GENERIC and
/// callback watermarks, which keep a snapshot).
fn rule(class: PvarClass, storage: Storage, continuous: bool) -> Option<Rule> {
    use PvarClass as C;
    let sum = matches!(class, C::Counter | C::Aggregate | C::Timer);
    let watermark = matches!(class, C::HighWatermark | C::LowWatermark);
    let memoryless = matches!(class, C::State | C::Level | C::Size | C::Percentage);
    if memoryless && !continuous {
        return None;
    }
    let history = if sum {
        History::Sum
    } else if watermark && storage == Storage::Engine {
        History::Mark
    } else {
        History::None
    };
    let writable = history != History::None;
    Some(Rule {
        continuous,
        history,
        readonly: !writable,
        atomic: writable,
    })
}

fn datatype(class: PvarClass) -> Datatype {
    match class {
        PvarClass::State => Datatype::Int,
        PvarClass::Percentage => Datatype::Double,
        _ => Datatype::UnsignedLongLong,
    }
}

/// A registered variable and what a test needs to drive it: `bump` moves
/// its value (up for a HIGHWATERMARK and every SUM class, down for a
/// LOWWATERMARK, to a new value otherwise) on every element; `level` is a
/// watermark element's current level.
struct Subject {
    index: usize,
    object: Option<ObjectRef>,
    bump: Box<dyn Fn()>,
    level: Box<dyn Fn() -> u64>,
}

/// Elements of a bound instance (per-object count); unbound: 1.
const BOUND_COUNT: usize = 2;
const COMM: u64 = 0x101;
/// The level a LOWWATERMARK starts from (it moves down).
const LOW_START: u64 = 1_000_000;

fn register(
    reg: &Registry,
    name: &str,
    class: PvarClass,
    storage: Storage,
    continuous: bool,
    bound: bool,
) -> Subject {
    let object = bound.then(|| ObjectRef::new(BindKind::Comm, COMM));
    if storage == Storage::Callback {
        return register_callback(reg, name, class, continuous, object);
    }
    macro_rules! build {
        ($b:expr) => {{
            let b = $b.continuous(continuous);
            if bound {
                let b = b.bind(BindKind::Comm).per_object_count();
                let bound = b.register_bound().unwrap();
                (
                    bound.index(),
                    bound.create_instance(COMM, BOUND_COUNT).unwrap(),
                )
            } else {
                let h = b.register().unwrap();
                (h.index(), h)
            }
        }};
    }
    let n = if bound { BOUND_COUNT } else { 1 };
    let step = Arc::new(AtomicU64::new(0));
    let next = move || step.fetch_add(1, Ordering::Relaxed) + 1;
    let no_level: Box<dyn Fn() -> u64> = Box::new(|| 0);
    let (index, bump, level): (usize, Box<dyn Fn()>, _) = match class {
        PvarClass::Counter => {
            let (i, c) = build!(reg.counter(name));
            (
                i,
                Box::new(move || (0..n).for_each(|e| c.inc_at(e))),
                no_level,
            )
        }
        PvarClass::Aggregate => {
            let (i, a) = build!(reg.aggregate::<u64>(name));
            (
                i,
                Box::new(move || (0..n).for_each(|e| a.add_at(e, 3))),
                no_level,
            )
        }
        PvarClass::Timer => {
            let (i, t) = build!(reg.timer(name).datatype(Datatype::UnsignedLongLong));
            (
                i,
                Box::new(move || (0..n).for_each(|e| t.add_ticks_at(e, 5))),
                no_level,
            )
        }
        PvarClass::Level => {
            let (i, l) = build!(reg.level::<u64>(name));
            (
                i,
                Box::new(move || (0..n).for_each(|e| l.inc_at(e))),
                no_level,
            )
        }
        PvarClass::Size => {
            let (i, z) = build!(reg.size::<u64>(name));
            (
                i,
                Box::new(move || {
                    let v = next();
                    (0..n).for_each(|e| z.set_at(e, v))
                }),
                no_level,
            )
        }
        PvarClass::Percentage => {
            let (i, p) = build!(reg.percentage(name));
            (
                i,
                Box::new(move || {
                    let v = (next() % 100) as f64 / 100.0;
                    (0..n).for_each(|e| p.set_at(e, v))
                }),
                no_level,
            )
        }
        PvarClass::State => {
            let (i, s) = build!(reg.state(name));
            (
                i,
                Box::new(move || {
                    let v = next() as i32;
                    (0..n).for_each(|e| s.set_at(e, v))
                }),
                no_level,
            )
        }
        PvarClass::Generic => {
            let (i, g) = build!(reg.generic::<u64>(name));
            (
                i,
                Box::new(move || {
                    let v = next();
                    (0..n).for_each(|e| g.set_at(e, v))
                }),
                no_level,
            )
        }
        PvarClass::HighWatermark => {
            let (i, w) = build!(reg.high_watermark::<u64>(name));
            let w2 = w.clone();
            (
                i,
                Box::new(move || {
                    let v = next();
                    (0..n).for_each(|e| w.update_at(e, v))
                }),
                Box::new(move || w2.level()),
            )
        }
        PvarClass::LowWatermark => {
            let (i, w) = build!(reg.low_watermark::<u64>(name));
            w.init(LOW_START);
            let w2 = w.clone();
            (
                i,
                Box::new(move || {
                    let v = LOW_START - next();
                    (0..n).for_each(|e| w.update_at(e, v))
                }),
                Box::new(move || w2.level()),
            )
        }
    };
    Subject {
        index,
        object,
        bump,
        level,
    }
}

fn register_callback(
    reg: &Registry,
    name: &str,
    class: PvarClass,
    continuous: bool,
    object: Option<ObjectRef>,
) -> Subject {
    let start = match class {
        PvarClass::LowWatermark => LOW_START,
        PvarClass::Percentage => 0.5f64.to_bits(),
        _ => 0,
    };
    let value = Arc::new(AtomicU64::new(start));
    let v = value.clone();
    let mut cb = Callbacks::new(move |_, _| v.load(Ordering::Relaxed));
    if object.is_some() {
        cb = cb.with_notify(|n, _| (n == Notify::Bind).then_some(BOUND_COUNT));
    }
    let b = reg
        .callback_pvar(name, class, datatype(class), cb)
        .continuous(continuous);
    let index = match object {
        Some(_) => b
            .bind(BindKind::Comm)
            .per_object_count()
            .register_bound()
            .unwrap()
            .index(),
        None => b.register().unwrap().index(),
    };
    let bump: Box<dyn Fn()> = match class {
        PvarClass::LowWatermark => Box::new(move || {
            value.fetch_sub(1, Ordering::Relaxed);
        }),
        PvarClass::Percentage => Box::new(move || {
            let p = f64::from_bits(value.load(Ordering::Relaxed));
            value.store(
                ((p * 100.0 + 1.0) % 100.0 / 100.0).to_bits(),
                Ordering::Relaxed,
            );
        }),
        _ => Box::new(move || {
            value.fetch_add(1, Ordering::Relaxed);
        }),
    };
    Subject {
        index,
        object,
        bump,
        level: Box::new(|| 0),
    }
}

/// A tool's view: the keyed API on one registry.
struct Tool<'a> {
    reg: &'a Registry,
    what: String,
}

impl Tool<'_> {
    fn read(&self, s: SessionId, h: HandleId, n: usize) -> Vec<u64> {
        let mut v = vec![0; n];
        self.reg.tool().read(s, h, 0, &mut v).unwrap();
        v
    }
    fn code<T>(&self, r: pvar::Result<T>) -> Result<T, ErrorCode> {
        r.map_err(|e| e.code())
    }
}

/// A value to write: above the levels for a HIGHWATERMARK, below them for
/// a LOWWATERMARK (a started watermark's read also covers the level).
fn written(class: PvarClass) -> u64 {
    match class {
        PvarClass::LowWatermark => 7,
        _ => 70_000_000,
    }
}

/// Drives one combination through every operation and checks each against
/// the rule.
fn check(class: PvarClass, storage: Storage, continuous: bool, bound: bool, rule: Rule) {
    let reg = Registry::with_clock(pvar::Clock::mock().0);
    let v = register(&reg, "v", class, storage, continuous, bound);
    let what = format!(
        "{} {storage:?} continuous={continuous} bound={bound}",
        class.c_name()
    );
    let t = Tool {
        reg: &reg,
        what: what.clone(),
    };
    let info = reg.pvars().info(v.index).unwrap();
    assert_eq!(
        (info.continuous, info.readonly, info.atomic),
        (rule.continuous, rule.readonly, rule.atomic),
        "{what}: get_info flags"
    );

    let s = reg.tool().session_create().unwrap();
    let (h, n) = reg.tool().handle_alloc(s, v.index, v.object).unwrap();
    assert_eq!(n, if bound { BOUND_COUNT } else { 1 }, "{what}: count");
    let read = |h| t.read(s, h, n);
    let bump = &v.bump;
    let is_started = |h| reg.tool().is_started(s, h).unwrap();
    assert_eq!(is_started(h), continuous, "{what}: started at allocation");

    // Allocation: a non-continuous handle is stopped, frozen.
    let a0 = read(h);
    bump();
    let a1 = read(h);
    if continuous {
        assert_ne!(a0, a1, "{what}: a continuous handle follows updates");
    } else {
        assert_eq!(a0, a1, "{what}: stopped after allocation, frozen");
        if rule.history == History::Sum {
            assert!(
                a0.iter().all(|&x| x == 0),
                "{what}: a SUM handle starts at 0"
            );
        }
    }

    // start / stop.
    let startstop = |r: pvar::Result<()>| {
        let r = t.code(r);
        if continuous {
            assert_eq!(r, Err(ErrorCode::PvarNoStartstop), "{}", t.what);
        } else {
            assert_eq!(r, Ok(()), "{}", t.what);
        }
    };
    startstop(reg.tool().start(s, h));
    startstop(reg.tool().start(s, h)); // a started handle: nothing changes
    let b0 = read(h);
    bump();
    let b1 = read(h);
    assert_ne!(b0, b1, "{what}: a started handle follows updates");
    if rule.history == History::Sum && !continuous {
        // Counted since the start only (the bump before it is not).
        let per_bump = b1[0].wrapping_sub(b0[0]);
        assert_eq!(b0[0], 0, "{what}: SUM counts from the start");
        assert!(per_bump > 0);
    }
    startstop(reg.tool().stop(s, h));
    if !continuous {
        assert!(!is_started(h));
        let c0 = read(h);
        bump();
        assert_eq!(read(h), c0, "{what}: stopped, frozen");
    }

    // write: this handle's value, nothing else; frozen while stopped.
    let w = written(class);
    let r = t.code(reg.tool().write(s, h, 0, &vec![w; n]));
    if rule.readonly {
        assert_eq!(r, Err(ErrorCode::PvarNoWrite), "{what}: write");
    } else {
        assert_eq!(r, Ok(()), "{what}: write");
        assert_eq!(read(h), vec![w; n], "{what}: reads what was written");
        if !continuous {
            bump();
            assert_eq!(
                read(h),
                vec![w; n],
                "{what}: a written stopped handle keeps the value"
            );
        }
    }

    // reset: the starting value (0, or a watermark's level), frozen while stopped.
    let r = t.code(reg.tool().reset(s, h));
    let starting = || match rule.history {
        History::Sum => vec![0; n],
        _ => vec![(v.level)(); n],
    };
    if rule.readonly {
        assert_eq!(r, Err(ErrorCode::PvarNoWrite), "{what}: reset");
    } else {
        assert_eq!(r, Ok(()), "{what}: reset");
        assert_eq!(read(h), starting(), "{what}: reset to the starting value");
        if !continuous {
            let r0 = read(h);
            bump();
            assert_eq!(
                read(h),
                r0,
                "{what}: a reset stopped handle keeps the starting value"
            );
        }
    }

    // readreset: atomic read and reset.
    if !continuous {
        startstop(reg.tool().start(s, h));
    }
    bump();
    let before = read(h);
    let mut out = vec![0; n];
    let r = t.code(reg.tool().readreset(s, h, 0, &mut out));
    if rule.atomic {
        assert_eq!(r, Ok(()), "{what}: readreset");
        assert_eq!(out, before, "{what}: readreset returns the value");
        assert_eq!(read(h), starting(), "{what}: readreset resets");
    } else {
        assert_eq!(r, Err(ErrorCode::PvarNoAtomic), "{what}: readreset");
    }

    // Two sessions: nothing one does changes what the other reads. `h2`
    // and `h3` (two more sessions) live the same life; session 1 does
    // everything to `h` in between.
    let s2 = reg.tool().session_create().unwrap();
    let s3 = reg.tool().session_create().unwrap();
    let (h2, _) = reg.tool().handle_alloc(s2, v.index, v.object).unwrap();
    let (h3, _) = reg.tool().handle_alloc(s3, v.index, v.object).unwrap();
    if !continuous {
        reg.tool().start(s2, h2).unwrap();
        reg.tool().start(s3, h3).unwrap();
    }
    bump();
    let _ = reg.tool().stop(s, h);
    let _ = reg.tool().write(s, h, 0, &vec![w; n]);
    let _ = reg.tool().reset(s, h);
    let _ = reg.tool().start(s, h);
    let _ = reg.tool().readreset(s, h, 0, &mut out);
    reg.tool().stop_all(s).unwrap();
    reg.tool().start_all(s).unwrap();
    reg.tool().reset_all(s).unwrap();
    bump();
    assert_eq!(
        t.read(s2, h2, n),
        t.read(s3, h3, n),
        "{what}: another session's operations changed this handle"
    );

    // Two registries: the other registry's keys are refused and touch
    // nothing.
    let other = Registry::with_clock(pvar::Clock::mock().0);
    let ov = register(&other, "v", class, storage, continuous, bound);
    let os = other.tool().session_create().unwrap();
    let (oh, _) = other.tool().handle_alloc(os, ov.index, ov.object).unwrap();
    let ot = Tool {
        reg: &other,
        what: what.clone(),
    };
    let theirs = ot.read(os, oh, n);
    let mut buf = vec![0; n];
    assert_eq!(
        ot.code(other.tool().read(s, h, 0, &mut buf)),
        Err(ErrorCode::InvalidSession),
        "{what}"
    );
    assert_eq!(
        ot.code(other.tool().read(os, h, 0, &mut buf)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert_eq!(
        ot.code(other.tool().start(os, h)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert_eq!(
        ot.code(other.tool().reset(os, h)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert_eq!(
        ot.code(other.tool().handle_free(os, h)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert_eq!(
        ot.code(other.tool().session_free(s)),
        Err(ErrorCode::InvalidSession),
        "{what}"
    );
    assert_eq!(
        ot.read(os, oh, n),
        theirs,
        "{what}: the other registry's handle moved"
    );
    assert_eq!(other.tool().stats().handles, 1);
    assert!(
        reg.tool().read(s, h, 0, &mut buf).is_ok(),
        "{what}: our handle survives"
    );

    // ALL_HANDLES: continuous (start/stop) and read-only (reset) handles
    // are skipped, so the calls succeed.
    for _ in 0..2 {
        assert_eq!(t.code(reg.tool().start_all(s)), Ok(()), "{what}: start_all");
        assert_eq!(t.code(reg.tool().stop_all(s)), Ok(()), "{what}: stop_all");
        assert_eq!(t.code(reg.tool().reset_all(s)), Ok(()), "{what}: reset_all");
    }
    assert_eq!(is_started(h), continuous, "{what}: stop_all");

    // free: the key is dead, the other handles live on.
    reg.tool().handle_free(s, h).unwrap();
    assert_eq!(
        t.code(reg.tool().read(s, h, 0, &mut buf)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert_eq!(
        t.code(reg.tool().handle_free(s, h)),
        Err(ErrorCode::InvalidHandle),
        "{what}"
    );
    assert!(reg.tool().read(s2, h2, 0, &mut buf).is_ok(), "{what}");
    reg.tool().session_free(s).unwrap();
    reg.tool().session_free(s2).unwrap();
    reg.tool().session_free(s3).unwrap();
    assert_eq!(reg.tool().stats().handles, 0, "{what}: every handle freed");
}

/// Every combination the rules allow, with its rule.
fn combinations() -> Vec<(PvarClass, Storage, bool, Rule)> {
    let mut v = Vec::new();
    for class in CLASSES {
        for storage in [Storage::Engine, Storage::Callback] {
            for continuous in [true, false] {
                if let Some(r) = rule(class, storage, continuous) {
                    v.push((class, storage, continuous, r));
                }
            }
        }
    }
    v
}

#[test]
fn every_class_and_storage_kind_behaves_as_the_rules_say() {
    let combos = combinations();
    for &(class, storage, continuous, rule) in &combos {
        for bound in [false, true] {
            check(class, storage, continuous, bound, rule);
        }
    }
    // Every class appears, with both storage kinds.
    assert_eq!(combos.len(), 32);
}

/// A combination the rules refuse is refused at registration.
#[test]
fn combinations_outside_the_rules_do_not_register() {
    let reg = Registry::new();
    for class in CLASSES {
        for storage in [Storage::Engine, Storage::Callback] {
            if rule(class, storage, false).is_some() {
                continue;
            }
            let name = format!("{}_{storage:?}", class.c_name());
            let r = match storage {
                Storage::Callback => reg
                    .callback_pvar(&name, class, datatype(class), Callbacks::new(|_, _| 0))
                    .continuous(false)
                    .register()
                    .map(|_| ()),
                Storage::Engine => match class {
                    PvarClass::State => reg.state(&name).continuous(false).register().map(|_| ()),
                    PvarClass::Level => reg
                        .level::<u64>(&name)
                        .continuous(false)
                        .register()
                        .map(|_| ()),
                    PvarClass::Size => reg
                        .size::<u64>(&name)
                        .continuous(false)
                        .register()
                        .map(|_| ()),
                    PvarClass::Percentage => reg
                        .percentage(&name)
                        .continuous(false)
                        .register()
                        .map(|_| ()),
                    other => unreachable!("{other:?} can be non-continuous"),
                },
            };
            assert_eq!(r.map_err(|e| e.code()), Err(ErrorCode::Invalid), "{name}");
        }
    }
}

/// The table in `docs/tool-guide.md`, rendered from the rules.
fn table() -> String {
    let mut t = String::from(
        "| class | storage | continuous | before start / after stop | while started | \
         write | reset | readreset | ALL_HANDLES |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for (class, storage, continuous, r) in combinations() {
        let class_name = class.c_name().trim_start_matches("MPI_T_PVAR_CLASS_");
        let stopped = if continuous {
            "— (`start`/`stop`: `PVAR_NO_STARTSTOP`)".to_string()
        } else {
            match r.history {
                History::Sum => "frozen (0 before the first start)".into(),
                History::Mark => "frozen (the level at allocation before the first start)".into(),
                History::None => "frozen: the value at allocation, then at the stop".into(),
            }
        };
        let started = match (r.history, class) {
            (History::Sum, _) => "sum since start (or allocation)",
            (History::Mark, PvarClass::HighWatermark) => "highest level since start or reset",
            (History::Mark, _) => "lowest level since start or reset",
            (History::None, _) => "current value",
        };
        let (write, reset, readreset) = if r.readonly {
            ("`PVAR_NO_WRITE`", "`PVAR_NO_WRITE`", "`PVAR_NO_ATOMIC`")
        } else {
            (
                "this handle's value only",
                match r.history {
                    History::Sum => "to 0",
                    _ => "to the current level",
                },
                "atomic, per element",
            )
        };
        let all = match (continuous, r.readonly) {
            (true, true) => "start/stop skip it (continuous); reset skips it (read-only)",
            (true, false) => "start/stop skip it (continuous)",
            (false, true) => "reset skips it (read-only)",
            (false, false) => "applied",
        };
        t.push_str(&format!(
            "| {class_name} | {} | {} | {stopped} | {started} | {write} | {reset} | {readreset} | {all} |\n",
            storage.name(class),
            if continuous { "yes" } else { "no" },
        ));
    }
    t
}

const BEGIN: &str = "<!-- semantics-table:begin (generated by tests/semantics_table.rs) -->\n";
const END: &str = "<!-- semantics-table:end -->";

#[test]
fn the_tool_guide_shows_this_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tool-guide.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/tool-guide.md has no semantics-table markers");
    };
    let current = &doc[b + BEGIN.len()..e];
    let wanted = table();
    if current != wanted {
        if std::env::var_os("PVAR_BLESS").is_some() {
            let new = format!("{}{BEGIN}{wanted}{}", &doc[..b], &doc[e..]);
            std::fs::write(path, new).unwrap();
        } else {
            panic!(
                "docs/tool-guide.md's table differs from the rules; run \
                 `PVAR_BLESS=1 cargo test --test semantics_table` to rewrite it:\n{wanted}"
            );
        }
    }
}

/// Every place that states what `atomic` (`MPI_T_pvar_get_info`) promises
/// says what the engine does: readreset is atomic per element, not across
/// the elements of a handle (each element's word has its own CAS,
/// `src/tool/handle.rs`); and `mpi_t.h` names no exception to the
/// signal-safety of the access functions (there is none: large handles go
/// through the stack buffer in pieces).
#[test]
fn the_atomic_flag_is_stated_per_element_everywhere() {
    let read = |rel: &str| {
        std::fs::read_to_string(format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let header = flat(&read("include/mpi_t.h"));
    let get_info = header.find("int MPI_T_pvar_get_info(").unwrap();
    let before_get_info = &header[..get_info];
    let comment = &before_get_info[before_get_info.rfind("/*").unwrap()..];
    assert!(
        comment.contains("*atomic = 1") && comment.contains("PER ELEMENT"),
        "mpi_t.h does not say what atomic means next to MPI_T_pvar_get_info: {comment}"
    );
    assert!(
        !header.contains("more than 256 elements"),
        "mpi_t.h lists a signal-safety exception the code does not have"
    );
    for (file, phrase) in [
        ("docs/tool-guide.md", "`atomic` is per element"),
        ("docs/c-interface.md", "atomic per element"),
        (
            "src/vocabulary/pvar_info.rs",
            "reset atomically (`readreset`), **per element**",
        ),
        ("src/ffi/pvar.rs", "atomic per element, not per handle"),
    ] {
        let text = flat(&read(file));
        assert!(text.contains(phrase), "{file} does not say {phrase:?}");
    }
}
