//! Every row of the MPI_T return-code table that applies to performance
//! variables, driven from one table: each case sets up a situation and
//! names the code the call must return.

use pvar::{BindKind, ErrorCode, HandleId, ObjectRef, PvarClass, Registry, SessionId};

struct Fixture {
    reg: Registry,
    s: SessionId,
    other: SessionId,
    counter: usize,
    counter_h: HandleId,
    continuous_h: HandleId,
    readonly_h: HandleId,
    level_h: HandleId,
    freed_h: HandleId,
    foreign_h: HandleId,
    freed_session: SessionId,
    bound: usize,
    inactive_h: HandleId,
}

fn fixture() -> Fixture {
    let reg = Registry::new();
    let counter = reg.counter("c").register().unwrap().index();
    let continuous = reg
        .counter("cc")
        .continuous(true)
        .register()
        .unwrap()
        .index();
    let readonly = reg.counter("ro").readonly(true).register().unwrap().index();
    let level = reg.level::<u64>("lvl").register().unwrap().index();
    let bound = reg
        .counter("per_comm")
        .bind(BindKind::Comm)
        .per_object_count()
        .register_bound()
        .unwrap();
    bound.create_instance(0x101, 2).unwrap();
    let doomed = reg.counter("doomed").register().unwrap();
    let s = reg.tool().session_create().unwrap();
    let other = reg.tool().session_create().unwrap();
    let (counter_h, _) = reg.tool().handle_alloc(s, counter, None).unwrap();
    let (continuous_h, _) = reg.tool().handle_alloc(s, continuous, None).unwrap();
    let (readonly_h, _) = reg.tool().handle_alloc(s, readonly, None).unwrap();
    let (level_h, _) = reg.tool().handle_alloc(s, level, None).unwrap();
    let (freed_h, _) = reg.tool().handle_alloc(s, counter, None).unwrap();
    reg.tool().handle_free(s, freed_h).unwrap();
    let (foreign_h, _) = reg.tool().handle_alloc(other, counter, None).unwrap();
    let freed_session = reg.tool().session_create().unwrap();
    reg.tool().session_free(freed_session).unwrap();
    let (inactive_h, _) = reg.tool().handle_alloc(s, doomed.index(), None).unwrap();
    doomed.deactivate();
    Fixture {
        reg,
        s,
        other,
        counter,
        counter_h,
        continuous_h,
        readonly_h,
        level_h,
        freed_h,
        foreign_h,
        freed_session,
        bound: bound.index(),
        inactive_h,
    }
}

/// The code a call must return: an error code, or [`SUCCESS`].
type Expected = Option<ErrorCode>;

/// `MPI_SUCCESS` (not an error code).
const SUCCESS: Expected = None;

type Case = (
    &'static str,
    fn(&Fixture) -> Result<(), pvar::Error>,
    Expected,
);

/// Runs an ALL_HANDLES call on a session holding a counter, a continuous
/// counter, a read-only counter and a level (no inactive variable).
fn all_clean(
    f: &Fixture,
    call: fn(&Registry, SessionId) -> Result<(), pvar::Error>,
) -> Result<(), pvar::Error> {
    let s = f.reg.tool().session_create()?;
    for name in ["c", "cc", "ro"] {
        let i = f.reg.pvars().index(name, PvarClass::Counter)?;
        f.reg.tool().handle_alloc(s, i, None)?;
    }
    f.reg
        .tool()
        .handle_alloc(s, f.reg.pvars().index("lvl", PvarClass::Level)?, None)?;
    call(&f.reg, s)?;
    call(&f.reg, s)
}

fn code(r: Result<(), pvar::Error>) -> Expected {
    match r {
        Ok(()) => SUCCESS,
        Err(e) => Some(e.code()),
    }
}

fn code_name(c: Expected) -> &'static str {
    c.map_or("MPI_SUCCESS", ErrorCode::name)
}

#[test]
fn every_pvar_row_of_the_return_code_table() {
    let mut buf = [0u64; 8];
    let _ = &mut buf;
    let cases: &[Case] = &[
        // Query functions.
        (
            "get_info out of range",
            |f| f.reg.pvars().info(f.reg.pvars().len()).map(|_| ()),
            Some(ErrorCode::InvalidIndex),
        ),
        (
            "get_info in range",
            |f| f.reg.pvars().info(0).map(|_| ()),
            SUCCESS,
        ),
        (
            "get_index unknown name",
            |f| f.reg.pvars().index("nope", PvarClass::Counter).map(|_| ()),
            Some(ErrorCode::InvalidName),
        ),
        (
            "get_index wrong class",
            |f| f.reg.pvars().index("c", PvarClass::Timer).map(|_| ()),
            Some(ErrorCode::InvalidName),
        ),
        (
            "get_index found",
            |f| f.reg.pvars().index("c", PvarClass::Counter).map(|_| ()),
            SUCCESS,
        ),
        // Session functions.
        (
            "session_free twice",
            |f| f.reg.tool().session_free(f.freed_session),
            Some(ErrorCode::InvalidSession),
        ),
        (
            "session_free made-up key",
            |f| f.reg.tool().session_free(SessionId::from_raw(12345)),
            Some(ErrorCode::InvalidSession),
        ),
        // Handle allocation.
        (
            "handle_alloc index out of range",
            |f| f.reg.tool().handle_alloc(f.s, 10_000, None).map(|_| ()),
            Some(ErrorCode::InvalidIndex),
        ),
        (
            "handle_alloc freed session",
            |f| {
                f.reg
                    .tool()
                    .handle_alloc(f.freed_session, f.counter, None)
                    .map(|_| ())
            },
            Some(ErrorCode::InvalidSession),
        ),
        (
            "handle_alloc bound without object",
            |f| f.reg.tool().handle_alloc(f.s, f.bound, None).map(|_| ()),
            Some(ErrorCode::Invalid),
        ),
        (
            "handle_alloc bound, wrong object kind",
            |f| {
                f.reg
                    .tool()
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Win, 0x101)))
                    .map(|_| ())
            },
            Some(ErrorCode::Invalid),
        ),
        (
            "handle_alloc bound, no instance",
            |f| {
                f.reg
                    .tool()
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Comm, 0x102)))
                    .map(|_| ())
            },
            Some(ErrorCode::Invalid),
        ),
        (
            "handle_alloc bound, live instance",
            |f| {
                f.reg
                    .tool()
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Comm, 0x101)))
                    .map(|_| ())
            },
            SUCCESS,
        ),
        // Handle free.
        (
            "handle_free freed handle",
            |f| f.reg.tool().handle_free(f.s, f.freed_h),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "handle_free foreign handle",
            |f| f.reg.tool().handle_free(f.s, f.foreign_h),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "handle_free made-up handle",
            |f| f.reg.tool().handle_free(f.s, HandleId::from_raw(1)),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "handle_free freed session",
            |f| f.reg.tool().handle_free(f.freed_session, f.counter_h),
            Some(ErrorCode::InvalidSession),
        ),
        // Start / stop.
        (
            "start freed handle",
            |f| f.reg.tool().start(f.s, f.freed_h),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "start foreign handle",
            |f| f.reg.tool().start(f.s, f.foreign_h),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "start in freed session",
            |f| f.reg.tool().start(f.freed_session, f.counter_h),
            Some(ErrorCode::InvalidSession),
        ),
        (
            "start continuous",
            |f| f.reg.tool().start(f.s, f.continuous_h),
            Some(ErrorCode::PvarNoStartstop),
        ),
        (
            "stop continuous",
            |f| f.reg.tool().stop(f.s, f.continuous_h),
            Some(ErrorCode::PvarNoStartstop),
        ),
        (
            "start level (continuous class)",
            |f| f.reg.tool().start(f.s, f.level_h),
            Some(ErrorCode::PvarNoStartstop),
        ),
        (
            "start ok",
            |f| f.reg.tool().start(f.s, f.counter_h),
            SUCCESS,
        ),
        ("stop ok", |f| f.reg.tool().stop(f.s, f.counter_h), SUCCESS),
        // Read / write / reset / readreset.
        (
            "read freed handle",
            |f| f.reg.tool().read(f.s, f.freed_h, 0, &mut [0; 1]),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "read foreign handle",
            |f| f.reg.tool().read(f.s, f.foreign_h, 0, &mut [0; 1]),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "read foreign handle from its own session",
            |f| f.reg.tool().read(f.other, f.foreign_h, 0, &mut [0; 1]),
            SUCCESS,
        ),
        (
            "read freed session",
            |f| {
                f.reg
                    .tool()
                    .read(f.freed_session, f.counter_h, 0, &mut [0; 1])
            },
            Some(ErrorCode::InvalidSession),
        ),
        (
            // A buffer shorter than the count now reads a prefix
            // (`first` + length): the INVALID row is a range past the count.
            "read range past the count",
            |f| f.reg.tool().read(f.s, f.counter_h, 0, &mut [0; 2]),
            Some(ErrorCode::Invalid),
        ),
        (
            "read inactive variable",
            |f| f.reg.tool().read(f.s, f.inactive_h, 0, &mut [0; 1]),
            Some(ErrorCode::InvalidIndex),
        ),
        (
            "write read-only",
            |f| f.reg.tool().write(f.s, f.readonly_h, 0, &[1]),
            Some(ErrorCode::PvarNoWrite),
        ),
        (
            "write level (no history)",
            |f| f.reg.tool().write(f.s, f.level_h, 0, &[1]),
            Some(ErrorCode::PvarNoWrite),
        ),
        (
            "write counter",
            |f| f.reg.tool().write(f.s, f.counter_h, 0, &[1]),
            SUCCESS,
        ),
        (
            "reset read-only",
            |f| f.reg.tool().reset(f.s, f.readonly_h),
            Some(ErrorCode::PvarNoWrite),
        ),
        (
            "reset freed handle",
            |f| f.reg.tool().reset(f.s, f.freed_h),
            Some(ErrorCode::InvalidHandle),
        ),
        (
            "reset counter",
            |f| f.reg.tool().reset(f.s, f.counter_h),
            SUCCESS,
        ),
        (
            "readreset level (not atomic)",
            |f| f.reg.tool().readreset(f.s, f.level_h, 0, &mut [0; 1]),
            Some(ErrorCode::PvarNoAtomic),
        ),
        (
            "readreset counter",
            |f| f.reg.tool().readreset(f.s, f.counter_h, 0, &mut [0; 1]),
            SUCCESS,
        ),
        (
            "readreset foreign handle",
            |f| f.reg.tool().readreset(f.s, f.foreign_h, 0, &mut [0; 1]),
            Some(ErrorCode::InvalidHandle),
        ),
        // ALL_HANDLES.
        (
            "start_all skips continuous",
            |f| all_clean(f, |r, s| r.tool().start_all(s)),
            SUCCESS,
        ),
        (
            "stop_all skips stopped",
            |f| all_clean(f, |r, s| r.tool().stop_all(s)),
            SUCCESS,
        ),
        (
            "reset_all skips read-only",
            |f| all_clean(f, |r, s| r.tool().reset_all(s)),
            SUCCESS,
        ),
        (
            "start_all with an inactive variable",
            |f| f.reg.tool().start_all(f.s),
            Some(ErrorCode::PvarNoStartstop),
        ),
        (
            "reset_all with an inactive variable",
            |f| f.reg.tool().reset_all(f.s),
            Some(ErrorCode::PvarNoWrite),
        ),
        (
            "start_all on empty session",
            |f| {
                f.reg
                    .tool()
                    .start_all(f.other)
                    .and(f.reg.tool().start_all(f.other))
            },
            SUCCESS,
        ),
        (
            "start_all freed session",
            |f| f.reg.tool().start_all(f.freed_session),
            Some(ErrorCode::InvalidSession),
        ),
    ];
    let mut failures = Vec::new();
    for (name, call, expected) in cases {
        let f = fixture();
        let got = code(call(&f));
        if got != *expected {
            failures.push(format!(
                "{name}: expected {}, got {}",
                code_name(*expected),
                code_name(got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
