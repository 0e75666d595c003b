//! Tool interface init / finalize on the global registry: counting,
//! thread level, NOT_INITIALIZED before init and after the last finalize,
//! finalize more often than init, re-initialisation, the guard, and the
//! engine's own variables.
//!
//! The init count is process-wide, so everything runs in one test function
//! (tests in one binary run in parallel threads).

use pvar::process;
use pvar::{
    ErrorCode, HandleId, PvarClass, Registry, Scope, SessionId, THREAD_FUNNELED, THREAD_MULTIPLE,
    THREAD_SERIALIZED, THREAD_SINGLE,
};

/// Element 0 of a handle.
fn read_u64(reg: &Registry, s: SessionId, h: HandleId) -> pvar::Result<u64> {
    let mut v = [0u64];
    reg.tool().read(s, h, 0, &mut v)?;
    Ok(v[0])
}

fn not_initialized() -> bool {
    process::check_initialized().map_err(|e| e.code()) == Err(ErrorCode::NotInitialized)
}

#[test]
fn init_finalize_lifecycle() {
    // Before any init.
    assert_eq!(process::init_count(), 0);
    assert!(!process::is_initialized());
    assert!(not_initialized());
    assert_eq!(
        process::init_count_decrement().unwrap_err().code(),
        ErrorCode::NotInitialized
    );

    // A level that is none of the four: MPI_ERR_ARG (MPICH's code), and
    // the interface stays uninitialised.
    for bad in [12345, -1, 1, 4095, 4097, i32::MIN, i32::MAX] {
        assert_eq!(
            process::init_count_increment(bad).unwrap_err().code(),
            ErrorCode::Arg,
            "required = {bad}"
        );
        assert_eq!(process::init_thread(bad).unwrap_err(), pvar::Error::Arg);
    }
    assert_eq!(process::init_count(), 0);
    assert!(not_initialized());

    // Counted: two inits need two finalizes; the level required is the
    // level provided (MPICH and Open MPI do the same; a tool may check it
    // is not downgraded nor upgraded).
    for level in [
        THREAD_SINGLE,
        THREAD_FUNNELED,
        THREAD_SERIALIZED,
        THREAD_MULTIPLE,
    ] {
        assert_eq!(process::init_count_increment(level).unwrap(), level);
        process::init_count_decrement().unwrap();
    }
    assert_eq!(
        process::init_count_increment(THREAD_SINGLE).unwrap(),
        THREAD_SINGLE
    );
    assert_eq!(
        process::init_count_increment(THREAD_MULTIPLE).unwrap(),
        THREAD_MULTIPLE
    );
    assert_eq!(process::init_count(), 2);
    process::check_initialized().unwrap();
    process::init_count_decrement().unwrap();
    assert!(
        process::is_initialized(),
        "still initialised after 1 of 2 finalizes"
    );
    process::init_count_decrement().unwrap();
    assert!(not_initialized());
    // Finalize more often than init.
    assert_eq!(
        process::init_count_decrement().unwrap_err().code(),
        ErrorCode::NotInitialized
    );
    assert_eq!(process::init_count(), 0);

    // Re-initialisation works; the guard finalizes when dropped.
    {
        let (provided, guard) = process::init_thread(THREAD_SERIALIZED).unwrap();
        assert_eq!(provided, THREAD_SERIALIZED);
        assert!(process::is_initialized());
        let (_, inner) = process::init_thread(THREAD_SINGLE).unwrap();
        assert_eq!(process::init_count(), 2);
        drop(inner);
        assert_eq!(process::init_count(), 1);

        // The engine's own variables are in the global registry.
        let reg = guard.registry();
        let cat = reg
            .categories()
            .index(pvar::process::observe::CATEGORY)
            .unwrap();
        let info = reg.categories().info(cat).unwrap();
        assert_eq!(info.num_pvars, pvar::process::observe::PVARS.len());
        assert_eq!(info.num_cvars, pvar::process::observe::CVARS.len());
        let live = reg
            .pvars()
            .index("pvar_engine_live_threads", PvarClass::Level)
            .unwrap();
        assert!(reg.pvars().info(live).unwrap().readonly);
        reg.pvars()
            .index("pvar_engine_reads", PvarClass::Counter)
            .unwrap();
        let ver = reg.cvars().index("PVAR_ENGINE_VERSION").unwrap();
        assert_eq!(reg.cvars().info(ver).unwrap().scope, Scope::Constant);
        let (h, count) = reg.cvars().handle_alloc(ver, None).unwrap();
        let mut buf = vec![0u8; count];
        reg.cvars().read(h, &mut buf).unwrap();
        let end = buf.iter().position(|&b| b == 0).unwrap();
        assert_eq!(&buf[..end], env!("CARGO_PKG_VERSION").as_bytes());
        assert_eq!(
            reg.cvars().write(h, b"9.9\0").unwrap_err().code(),
            ErrorCode::CvarSetNever
        );
        reg.cvars().handle_free(h).unwrap();
        let lvl = reg.cvars().index("PVAR_ENGINE_THREAD_LEVEL").unwrap();
        let e = reg.cvars().info(lvl).unwrap().enumeration.clone().unwrap();
        assert_eq!(e.value_of("MPI_THREAD_MULTIPLE"), Some(THREAD_MULTIPLE));

        // Registering again (a second first-init path) adds nothing.
        let n = (reg.pvars().len(), reg.cvars().len());
        pvar::process::observe::register_engine_vars(reg).unwrap();
        assert_eq!((reg.pvars().len(), reg.cvars().len()), n);

        // Explicit finalize consumes the guard.
        guard.finalize().unwrap();
    }
    assert!(not_initialized());
    assert_eq!(process::init_count(), 0);

    // And once more from scratch.
    let (_, g) = process::init_thread(THREAD_MULTIPLE).unwrap();
    assert_eq!(process::init_count(), 1);
    drop(g);
    assert!(not_initialized());
}

#[test]
fn isolated_registries_get_no_engine_variables() {
    let reg = pvar::Registry::new();
    assert_eq!(reg.pvars().len(), 0);
    assert_eq!(reg.cvars().len(), 0);
    assert_eq!(reg.categories().len(), 0);
    // Unless asked.
    pvar::process::observe::register_engine_vars(&reg).unwrap();
    assert_eq!(reg.pvars().len(), pvar::process::observe::PVARS.len());
    assert_eq!(reg.cvars().len(), pvar::process::observe::CVARS.len());
    assert!(reg.categories().undefined().is_empty());
}

#[test]
fn engine_variables_observe_the_tool_side() {
    // An isolated registry so other tests' sessions do not interfere.
    let reg = pvar::Registry::new();
    pvar::process::observe::register_engine_vars(&reg).unwrap();
    let sessions = reg
        .pvars()
        .index("pvar_engine_sessions", PvarClass::Level)
        .unwrap();
    let handles = reg
        .pvars()
        .index("pvar_engine_handles", PvarClass::Level)
        .unwrap();
    let live = reg
        .pvars()
        .index("pvar_engine_live_threads", PvarClass::Level)
        .unwrap();
    let s = reg.tool().session_create().unwrap();
    let (hs, _) = reg.tool().handle_alloc(s, sessions, None).unwrap();
    let (hh, _) = reg.tool().handle_alloc(s, handles, None).unwrap();
    let (hl, _) = reg.tool().handle_alloc(s, live, None).unwrap();
    let s2 = reg.tool().session_create().unwrap();
    assert_eq!(read_u64(&reg, s, hs).unwrap(), 2);
    assert_eq!(read_u64(&reg, s, hh).unwrap(), 3);
    // This thread holds an id once it has updated anything.
    reg.counter("touch").register().unwrap().inc();
    assert!(read_u64(&reg, s, hl).unwrap() >= 1);
    reg.tool().session_free(s2).unwrap();
    assert_eq!(read_u64(&reg, s, hs).unwrap(), 1);
    // Reads served keep increasing (a COUNTER handle counts from its
    // allocation).
    let reads = reg
        .pvars()
        .index("pvar_engine_reads", PvarClass::Counter)
        .unwrap();
    let (hr, _) = reg.tool().handle_alloc(s, reads, None).unwrap();
    let first = read_u64(&reg, s, hr).unwrap();
    let second = read_u64(&reg, s, hr).unwrap();
    assert!(second > first, "{first} then {second}");
}
