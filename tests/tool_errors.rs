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
    let s = reg.session_create().unwrap();
    let other = reg.session_create().unwrap();
    let (counter_h, _) = reg.handle_alloc(s, counter, None).unwrap();
    let (continuous_h, _) = reg.handle_alloc(s, continuous, None).unwrap();
    let (readonly_h, _) = reg.handle_alloc(s, readonly, None).unwrap();
    let (level_h, _) = reg.handle_alloc(s, level, None).unwrap();
    let (freed_h, _) = reg.handle_alloc(s, counter, None).unwrap();
    reg.handle_free(s, freed_h).unwrap();
    let (foreign_h, _) = reg.handle_alloc(other, counter, None).unwrap();
    let freed_session = reg.session_create().unwrap();
    reg.session_free(freed_session).unwrap();
    let (inactive_h, _) = reg.handle_alloc(s, doomed.index(), None).unwrap();
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

type Case = (
    &'static str,
    fn(&Fixture) -> Result<(), pvar::Error>,
    ErrorCode,
);

/// Runs an ALL_HANDLES call on a session holding a counter, a continuous
/// counter, a read-only counter and a level (no inactive variable).
fn all_clean(
    f: &Fixture,
    call: fn(&Registry, SessionId) -> Result<(), pvar::Error>,
) -> Result<(), pvar::Error> {
    let s = f.reg.session_create()?;
    for name in ["c", "cc", "ro"] {
        let i = f.reg.pvar_index(name, PvarClass::Counter)?;
        f.reg.handle_alloc(s, i, None)?;
    }
    f.reg
        .handle_alloc(s, f.reg.pvar_index("lvl", PvarClass::Level)?, None)?;
    call(&f.reg, s)?;
    call(&f.reg, s)
}

fn code(r: Result<(), pvar::Error>) -> ErrorCode {
    match r {
        Ok(()) => ErrorCode::Success,
        Err(e) => e.code(),
    }
}

#[test]
fn every_pvar_row_of_the_return_code_table() {
    let mut buf = [0u64; 8];
    let _ = &mut buf;
    let cases: &[Case] = &[
        // Query functions.
        (
            "get_info out of range",
            |f| f.reg.pvar_info(f.reg.num_pvars()).map(|_| ()),
            ErrorCode::InvalidIndex,
        ),
        (
            "get_info in range",
            |f| f.reg.pvar_info(0).map(|_| ()),
            ErrorCode::Success,
        ),
        (
            "get_index unknown name",
            |f| f.reg.pvar_index("nope", PvarClass::Counter).map(|_| ()),
            ErrorCode::InvalidName,
        ),
        (
            "get_index wrong class",
            |f| f.reg.pvar_index("c", PvarClass::Timer).map(|_| ()),
            ErrorCode::InvalidName,
        ),
        (
            "get_index found",
            |f| f.reg.pvar_index("c", PvarClass::Counter).map(|_| ()),
            ErrorCode::Success,
        ),
        // Session functions.
        (
            "session_free twice",
            |f| f.reg.session_free(f.freed_session),
            ErrorCode::InvalidSession,
        ),
        (
            "session_free made-up key",
            |f| f.reg.session_free(SessionId::from_raw(12345)),
            ErrorCode::InvalidSession,
        ),
        // Handle allocation.
        (
            "handle_alloc index out of range",
            |f| f.reg.handle_alloc(f.s, 10_000, None).map(|_| ()),
            ErrorCode::InvalidIndex,
        ),
        (
            "handle_alloc freed session",
            |f| {
                f.reg
                    .handle_alloc(f.freed_session, f.counter, None)
                    .map(|_| ())
            },
            ErrorCode::InvalidSession,
        ),
        (
            "handle_alloc bound without object",
            |f| f.reg.handle_alloc(f.s, f.bound, None).map(|_| ()),
            ErrorCode::Invalid,
        ),
        (
            "handle_alloc bound, wrong object kind",
            |f| {
                f.reg
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Win, 0x101)))
                    .map(|_| ())
            },
            ErrorCode::Invalid,
        ),
        (
            "handle_alloc bound, no instance",
            |f| {
                f.reg
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Comm, 0x102)))
                    .map(|_| ())
            },
            ErrorCode::Invalid,
        ),
        (
            "handle_alloc bound, live instance",
            |f| {
                f.reg
                    .handle_alloc(f.s, f.bound, Some(ObjectRef::new(BindKind::Comm, 0x101)))
                    .map(|_| ())
            },
            ErrorCode::Success,
        ),
        // Handle free.
        (
            "handle_free freed handle",
            |f| f.reg.handle_free(f.s, f.freed_h),
            ErrorCode::InvalidHandle,
        ),
        (
            "handle_free foreign handle",
            |f| f.reg.handle_free(f.s, f.foreign_h),
            ErrorCode::InvalidHandle,
        ),
        (
            "handle_free made-up handle",
            |f| f.reg.handle_free(f.s, HandleId::from_raw(1)),
            ErrorCode::InvalidHandle,
        ),
        (
            "handle_free freed session",
            |f| f.reg.handle_free(f.freed_session, f.counter_h),
            ErrorCode::InvalidSession,
        ),
        // Start / stop.
        (
            "start freed handle",
            |f| f.reg.start(f.s, f.freed_h),
            ErrorCode::InvalidHandle,
        ),
        (
            "start foreign handle",
            |f| f.reg.start(f.s, f.foreign_h),
            ErrorCode::InvalidHandle,
        ),
        (
            "start in freed session",
            |f| f.reg.start(f.freed_session, f.counter_h),
            ErrorCode::InvalidSession,
        ),
        (
            "start continuous",
            |f| f.reg.start(f.s, f.continuous_h),
            ErrorCode::PvarNoStartstop,
        ),
        (
            "stop continuous",
            |f| f.reg.stop(f.s, f.continuous_h),
            ErrorCode::PvarNoStartstop,
        ),
        (
            "start level (continuous class)",
            |f| f.reg.start(f.s, f.level_h),
            ErrorCode::PvarNoStartstop,
        ),
        (
            "start ok",
            |f| f.reg.start(f.s, f.counter_h),
            ErrorCode::Success,
        ),
        (
            "stop ok",
            |f| f.reg.stop(f.s, f.counter_h),
            ErrorCode::Success,
        ),
        // Read / write / reset / readreset.
        (
            "read freed handle",
            |f| f.reg.read(f.s, f.freed_h, &mut [0; 8]),
            ErrorCode::InvalidHandle,
        ),
        (
            "read foreign handle",
            |f| f.reg.read(f.s, f.foreign_h, &mut [0; 8]),
            ErrorCode::InvalidHandle,
        ),
        (
            "read foreign handle from its own session",
            |f| f.reg.read(f.other, f.foreign_h, &mut [0; 8]),
            ErrorCode::Success,
        ),
        (
            "read freed session",
            |f| f.reg.read(f.freed_session, f.counter_h, &mut [0; 8]),
            ErrorCode::InvalidSession,
        ),
        (
            "read short buffer",
            |f| f.reg.read(f.s, f.counter_h, &mut []),
            ErrorCode::Invalid,
        ),
        (
            "read inactive variable",
            |f| f.reg.read(f.s, f.inactive_h, &mut [0; 8]),
            ErrorCode::InvalidIndex,
        ),
        (
            "write read-only",
            |f| f.reg.write(f.s, f.readonly_h, &[1]),
            ErrorCode::PvarNoWrite,
        ),
        (
            "write level (no history)",
            |f| f.reg.write(f.s, f.level_h, &[1]),
            ErrorCode::PvarNoWrite,
        ),
        (
            "write counter",
            |f| f.reg.write(f.s, f.counter_h, &[1]),
            ErrorCode::Success,
        ),
        (
            "reset read-only",
            |f| f.reg.reset(f.s, f.readonly_h),
            ErrorCode::PvarNoWrite,
        ),
        (
            "reset freed handle",
            |f| f.reg.reset(f.s, f.freed_h),
            ErrorCode::InvalidHandle,
        ),
        (
            "reset counter",
            |f| f.reg.reset(f.s, f.counter_h),
            ErrorCode::Success,
        ),
        (
            "readreset level (not atomic)",
            |f| f.reg.readreset(f.s, f.level_h, &mut [0; 8]),
            ErrorCode::PvarNoAtomic,
        ),
        (
            "readreset counter",
            |f| f.reg.readreset(f.s, f.counter_h, &mut [0; 8]),
            ErrorCode::Success,
        ),
        (
            "readreset foreign handle",
            |f| f.reg.readreset(f.s, f.foreign_h, &mut [0; 8]),
            ErrorCode::InvalidHandle,
        ),
        // ALL_HANDLES.
        (
            "start_all skips continuous",
            |f| all_clean(f, |r, s| r.start_all(s)),
            ErrorCode::Success,
        ),
        (
            "stop_all skips stopped",
            |f| all_clean(f, |r, s| r.stop_all(s)),
            ErrorCode::Success,
        ),
        (
            "reset_all skips read-only",
            |f| all_clean(f, |r, s| r.reset_all(s)),
            ErrorCode::Success,
        ),
        (
            "start_all with an inactive variable",
            |f| f.reg.start_all(f.s),
            ErrorCode::PvarNoStartstop,
        ),
        (
            "reset_all with an inactive variable",
            |f| f.reg.reset_all(f.s),
            ErrorCode::PvarNoWrite,
        ),
        (
            "start_all on empty session",
            |f| f.reg.start_all(f.other).and(f.reg.start_all(f.other)),
            ErrorCode::Success,
        ),
        (
            "start_all freed session",
            |f| f.reg.start_all(f.freed_session),
            ErrorCode::InvalidSession,
        ),
    ];
    let mut failures = Vec::new();
    for (name, call, expected) in cases {
        let f = fixture();
        let got = code(call(&f));
        if got != *expected {
            failures.push(format!(
                "{name}: expected {}, got {}",
                expected.name(),
                got.name()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
