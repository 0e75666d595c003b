//! Tool interface init / finalize on the global registry: counting,
//! thread level, NOT_INITIALIZED before init and after the last finalize,
//! finalize more often than init, re-initialisation, the guard, and the
//! engine's own variables.
//!
//! The init count is process-wide, so everything runs in one test function
//! (tests in one binary run in parallel threads).

use pvar::mpit::{self, THREAD_MULTIPLE, THREAD_SERIALIZED, THREAD_SINGLE};
use pvar::{ErrorCode, PvarClass, Scope};

fn not_initialized() -> bool {
    mpit::check_initialized().map_err(|e| e.code()) == Err(ErrorCode::NotInitialized)
}

#[test]
fn init_finalize_lifecycle() {
    // Before any init.
    assert_eq!(mpit::init_count(), 0);
    assert!(!mpit::is_initialized());
    assert!(not_initialized());
    assert_eq!(
        mpit::init_count_decrement().unwrap_err().code(),
        ErrorCode::NotInitialized
    );

    // Counted: two inits need two finalizes; MULTIPLE is provided whatever
    // is asked.
    assert_eq!(
        mpit::init_count_increment(THREAD_SINGLE).unwrap(),
        THREAD_MULTIPLE
    );
    assert_eq!(mpit::init_count_increment(12345).unwrap(), THREAD_MULTIPLE);
    assert_eq!(mpit::init_count(), 2);
    mpit::check_initialized().unwrap();
    mpit::init_count_decrement().unwrap();
    assert!(
        mpit::is_initialized(),
        "still initialised after 1 of 2 finalizes"
    );
    mpit::init_count_decrement().unwrap();
    assert!(not_initialized());
    // Finalize more often than init.
    assert_eq!(
        mpit::init_count_decrement().unwrap_err().code(),
        ErrorCode::NotInitialized
    );
    assert_eq!(mpit::init_count(), 0);

    // Re-initialisation works; the guard finalizes when dropped.
    {
        let (provided, guard) = mpit::init_thread(THREAD_SERIALIZED).unwrap();
        assert_eq!(provided, THREAD_MULTIPLE);
        assert!(mpit::is_initialized());
        let (_, inner) = mpit::init_thread(THREAD_SINGLE).unwrap();
        assert_eq!(mpit::init_count(), 2);
        drop(inner);
        assert_eq!(mpit::init_count(), 1);

        // The engine's own variables are in the global registry.
        let reg = guard.registry();
        let cat = reg.categories().index(pvar::observe::CATEGORY).unwrap();
        let info = reg.categories().info(cat).unwrap();
        assert_eq!(info.num_pvars, pvar::observe::PVARS.len());
        assert_eq!(info.num_cvars, pvar::observe::CVARS.len());
        let live = reg
            .pvar_index("pvar_engine_live_threads", PvarClass::Level)
            .unwrap();
        assert!(reg.pvar_info(live).unwrap().readonly);
        reg.pvar_index("pvar_engine_reads", PvarClass::Counter)
            .unwrap();
        let ver = reg.cvar_index("PVAR_ENGINE_VERSION").unwrap();
        assert_eq!(reg.cvar_info(ver).unwrap().scope, Scope::Constant);
        let (h, count) = reg.cvar_handle_alloc(ver, None).unwrap();
        let mut buf = vec![0u8; count];
        reg.cvar_read(h, &mut buf).unwrap();
        let end = buf.iter().position(|&b| b == 0).unwrap();
        assert_eq!(&buf[..end], env!("CARGO_PKG_VERSION").as_bytes());
        assert_eq!(
            reg.cvar_write(h, b"9.9\0").unwrap_err().code(),
            ErrorCode::CvarSetNever
        );
        reg.cvar_handle_free(h).unwrap();
        let lvl = reg.cvar_index("PVAR_ENGINE_THREAD_LEVEL").unwrap();
        let e = reg.cvar_info(lvl).unwrap().enumeration.clone().unwrap();
        assert_eq!(e.value_of("MPI_THREAD_MULTIPLE"), Some(THREAD_MULTIPLE));

        // Registering again (a second first-init path) adds nothing.
        let n = (reg.num_pvars(), reg.num_cvars());
        pvar::observe::register_engine_vars(reg).unwrap();
        assert_eq!((reg.num_pvars(), reg.num_cvars()), n);

        // Explicit finalize consumes the guard.
        guard.finalize().unwrap();
    }
    assert!(not_initialized());
    assert_eq!(mpit::init_count(), 0);

    // And once more from scratch.
    let (_, g) = mpit::init_thread(THREAD_MULTIPLE).unwrap();
    assert_eq!(mpit::init_count(), 1);
    drop(g);
    assert!(not_initialized());
}

#[test]
fn isolated_registries_get_no_engine_variables() {
    let reg = pvar::Registry::new();
    assert_eq!(reg.num_pvars(), 0);
    assert_eq!(reg.num_cvars(), 0);
    assert_eq!(reg.num_categories(), 0);
    // Unless asked.
    pvar::observe::register_engine_vars(&reg).unwrap();
    assert_eq!(reg.num_pvars(), pvar::observe::PVARS.len());
    assert_eq!(reg.num_cvars(), pvar::observe::CVARS.len());
    assert!(reg.undefined_categories().is_empty());
}

#[test]
fn engine_variables_observe_the_tool_side() {
    // An isolated registry so other tests' sessions do not interfere.
    let reg = pvar::Registry::new();
    pvar::observe::register_engine_vars(&reg).unwrap();
    let sessions = reg
        .pvar_index("pvar_engine_sessions", PvarClass::Level)
        .unwrap();
    let handles = reg
        .pvar_index("pvar_engine_handles", PvarClass::Level)
        .unwrap();
    let live = reg
        .pvar_index("pvar_engine_live_threads", PvarClass::Level)
        .unwrap();
    let s = reg.session_create().unwrap();
    let (hs, _) = reg.handle_alloc(s, sessions, None).unwrap();
    let (hh, _) = reg.handle_alloc(s, handles, None).unwrap();
    let (hl, _) = reg.handle_alloc(s, live, None).unwrap();
    let s2 = reg.session_create().unwrap();
    assert_eq!(reg.read_u64(s, hs).unwrap(), 2);
    assert_eq!(reg.read_u64(s, hh).unwrap(), 3);
    // This thread holds an id once it has updated anything.
    reg.counter("touch").register().unwrap().inc();
    assert!(reg.read_u64(s, hl).unwrap() >= 1);
    reg.session_free(s2).unwrap();
    assert_eq!(reg.read_u64(s, hs).unwrap(), 1);
    // Reads served keep increasing (a COUNTER handle counts from its
    // allocation).
    let reads = reg
        .pvar_index("pvar_engine_reads", PvarClass::Counter)
        .unwrap();
    let (hr, _) = reg.handle_alloc(s, reads, None).unwrap();
    let first = reg.read_u64(s, hr).unwrap();
    let second = reg.read_u64(s, hr).unwrap();
    assert!(second > first, "{first} then {second}");
}
