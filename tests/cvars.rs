//! Control variables: registration, info, index, handles, read/write,
//! scopes, freezing, bound variables, environment overrides, the macro.
//!
//! Environment tests use variable names unique to each test, so they do
//! not race each other (the process environment is shared by test threads).

use pvar::{
    BindKind, CvarValue, Datatype, Enumeration, ErrorCode, ObjectRef, Registry, Scope, Verbosity,
};

fn set_env(name: &str, value: &str) {
    // SAFETY: every test uses its own variable names; no other thread reads
    // or writes these names.
    unsafe { std::env::set_var(name, value) };
}

#[test]
fn number_info_and_index() {
    let reg = Registry::new();
    assert_eq!(reg.cvars().len(), 0);
    let a = reg
        .cvar::<u64>("eager_limit")
        .default(65536)
        .description("eager threshold")
        .verbosity(Verbosity::TunerBasic)
        .scope(Scope::AllEq)
        .category("comm")
        .register()
        .unwrap();
    let b = reg.cvar::<f64>("backoff").default(0.5).register().unwrap();
    assert_eq!(reg.cvars().len(), 2);
    assert_eq!(a.index(), Some(0));
    assert_eq!(b.index(), Some(1));
    let info = reg.cvars().info(0).unwrap();
    assert_eq!(info.name, "eager_limit");
    assert_eq!(info.datatype, Datatype::UnsignedLongLong);
    assert_eq!(info.verbosity, Verbosity::TunerBasic);
    assert_eq!(info.scope, Scope::AllEq);
    assert_eq!(info.bind, BindKind::NoObject);
    assert_eq!(info.description, "eager threshold");
    assert_eq!(reg.cvars().info(1).unwrap().datatype, Datatype::Double);
    assert_eq!(reg.cvars().index("backoff").unwrap(), 1);
    assert_eq!(
        reg.cvars().index("nope").unwrap_err().code(),
        ErrorCode::InvalidName
    );
    assert_eq!(
        reg.cvars().info(2).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    assert_eq!(a.get(), 65536);
    assert_eq!(b.get(), 0.5);
}

#[test]
fn every_datatype_reads_and_writes_through_handles() {
    let reg = Registry::new();
    let i = reg.cvar::<i32>("i").default(-3).register().unwrap();
    let u = reg.cvar::<u32>("u").default(7u32).register().unwrap();
    let ul = reg
        .cvar::<u64>("ul")
        .datatype(Datatype::UnsignedLong)
        .default(8u64)
        .register()
        .unwrap();
    let ull = reg.cvar::<u64>("ull").default(9u64).register().unwrap();
    let c = reg.cvar::<i64>("count").default(-10i64).register().unwrap();
    let d = reg.cvar::<f64>("d").default(1.25).register().unwrap();
    let s = reg
        .cvar::<String>("s")
        .default("hello")
        .capacity(16)
        .register()
        .unwrap();
    let types: Vec<Datatype> = (0..7)
        .map(|k| reg.cvars().info(k).unwrap().datatype)
        .collect();
    assert_eq!(
        types,
        [
            Datatype::Int,
            Datatype::Unsigned,
            Datatype::UnsignedLong,
            Datatype::UnsignedLongLong,
            Datatype::Count,
            Datatype::Double,
            Datatype::Char
        ]
    );

    let h = |k| reg.cvars().handle_alloc(k, None).unwrap();
    let mut buf = [0u8; 16];

    let (hi, n) = h(0);
    assert_eq!(n, 1);
    reg.cvars().read(hi, &mut buf).unwrap();
    assert_eq!(i32::from_ne_bytes(buf[..4].try_into().unwrap()), -3);
    reg.cvars().write(hi, &(-42i32).to_ne_bytes()).unwrap();
    assert_eq!(i.get(), -42);

    let (hu, _) = h(1);
    reg.cvars()
        .write(hu, &4_000_000_000u32.to_ne_bytes())
        .unwrap();
    assert_eq!(u.get(), 4_000_000_000);

    let (hul, _) = h(2);
    reg.cvars().read(hul, &mut buf).unwrap();
    assert_eq!(u64::from_ne_bytes(buf[..8].try_into().unwrap()), 8);
    reg.cvars().write(hul, &u64::MAX.to_ne_bytes()).unwrap();
    assert_eq!(ul.get(), u64::MAX);

    let (hull, _) = h(3);
    reg.cvars()
        .write_value(hull, &CvarValue::Unsigned(11))
        .unwrap();
    assert_eq!(ull.get(), 11);
    assert_eq!(
        reg.cvars().read_value(hull).unwrap(),
        CvarValue::Unsigned(11)
    );

    let (hc, _) = h(4);
    reg.cvars().read(hc, &mut buf).unwrap();
    assert_eq!(i64::from_ne_bytes(buf[..8].try_into().unwrap()), -10);
    reg.cvars().write(hc, &i64::MIN.to_ne_bytes()).unwrap();
    assert_eq!(c.get(), i64::MIN);

    let (hd, _) = h(5);
    reg.cvars().write(hd, &2.5f64.to_ne_bytes()).unwrap();
    assert_eq!(d.get(), 2.5);
    reg.cvars().read(hd, &mut buf).unwrap();
    assert_eq!(f64::from_ne_bytes(buf[..8].try_into().unwrap()), 2.5);

    // MPI_CHAR: the count covers the terminating NUL.
    let (hs, n) = h(6);
    assert_eq!(n, 16);
    assert_eq!(
        reg.cvars().handle_info(hs).unwrap(),
        (6, Datatype::Char, 16)
    );
    assert_eq!(
        reg.cvars().handle_info(hul).unwrap(),
        (2, Datatype::UnsignedLong, 1)
    );
    let mut sbuf = [0xffu8; 16];
    reg.cvars().read(hs, &mut sbuf).unwrap();
    assert_eq!(&sbuf[..6], b"hello\0");
    reg.cvars().write(hs, b"world!\0garbage").unwrap();
    assert_eq!(s.get(), "world!");
    // 15 bytes + NUL fit, 16 do not.
    reg.cvars().write(hs, &[b'x'; 15]).unwrap();
    assert_eq!(s.get().len(), 15);
    assert_eq!(
        reg.cvars().write(hs, &[b'y'; 16]).unwrap_err().code(),
        ErrorCode::Invalid
    );
    // A too-small read buffer is refused.
    assert_eq!(
        reg.cvars().read(hs, &mut [0u8; 4]).unwrap_err().code(),
        ErrorCode::Invalid
    );
    assert_eq!(
        reg.cvars().read(hi, &mut [0u8; 2]).unwrap_err().code(),
        ErrorCode::Invalid
    );
}

#[test]
fn string_reads_see_every_write_and_old_values_stay_valid() {
    let reg = Registry::new();
    let s = reg
        .cvar::<String>("path")
        .default("/tmp")
        .register()
        .unwrap();
    let before = s.get();
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    reg.cvars()
        .write_value(h, &CvarValue::Text("/var".into()))
        .unwrap();
    assert_eq!(s.get(), "/var");
    assert_eq!(before, "/tmp"); // the old version is never freed under a reader
    s.set("/tmp").unwrap();
    assert_eq!(s.get(), "/tmp");
    assert!(s.set("a\0b").is_err());
}

#[test]
fn range_and_type_checks_on_typed_writes() {
    let reg = Registry::new();
    reg.cvar::<u32>("u").register().unwrap();
    reg.cvar::<i32>("i").register().unwrap();
    let (hu, _) = reg.cvars().handle_alloc(0, None).unwrap();
    let (hi, _) = reg.cvars().handle_alloc(1, None).unwrap();
    let err = |r: pvar::Result<()>| r.unwrap_err().code();
    assert_eq!(
        err(reg.cvars().write_value(hu, &CvarValue::Unsigned(1 << 32))),
        ErrorCode::Invalid
    );
    assert_eq!(
        err(reg.cvars().write_value(hu, &CvarValue::Double(1.0))),
        ErrorCode::Invalid
    );
    assert_eq!(
        err(reg.cvars().write_value(hi, &CvarValue::Signed(i64::MAX))),
        ErrorCode::Invalid
    );
}

#[test]
fn constant_and_readonly_scopes_refuse_writes_with_set_never() {
    let reg = Registry::new();
    for (k, scope) in Scope::ALL.iter().enumerate() {
        reg.cvar::<u64>(&format!("v{k}"))
            .scope(*scope)
            .register()
            .unwrap();
    }
    for (k, scope) in Scope::ALL.iter().enumerate() {
        let (h, _) = reg.cvars().handle_alloc(k, None).unwrap();
        let r = reg.cvars().write(h, &5u64.to_ne_bytes());
        if scope.is_read_only() {
            assert_eq!(r.unwrap_err().code(), ErrorCode::CvarSetNever, "{scope}");
        } else {
            r.unwrap();
        }
        // Reads always work.
        reg.cvars().read(h, &mut [0u8; 8]).unwrap();
    }
}

#[test]
fn readonly_variables_can_still_change_from_the_component() {
    let reg = Registry::new();
    let v = reg
        .cvar::<u64>("pool_size")
        .scope(Scope::Readonly)
        .register()
        .unwrap();
    v.set(99);
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    assert_eq!(reg.cvars().read_value(h).unwrap(), CvarValue::Unsigned(99));
}

#[test]
fn frozen_variables_refuse_writes_with_set_not_now_until_unfrozen() {
    let reg = Registry::new();
    let v = reg.cvar::<u64>("startup_only").register().unwrap();
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    v.freeze();
    assert!(v.is_frozen());
    assert_eq!(
        reg.cvars()
            .write(h, &1u64.to_ne_bytes())
            .unwrap_err()
            .code(),
        ErrorCode::CvarSetNotNow
    );
    assert_eq!(v.get(), 0);
    v.unfreeze();
    reg.cvars().write(h, &1u64.to_ne_bytes()).unwrap();
    assert_eq!(v.get(), 1);
}

#[test]
fn freed_and_forged_handles_give_invalid_handle() {
    let reg = Registry::new();
    reg.cvar::<u64>("x").register().unwrap();
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    assert_eq!(reg.cvars().handles_in_use(), 1);
    reg.cvars().handle_free(h).unwrap();
    assert_eq!(reg.cvars().handles_in_use(), 0);
    assert_eq!(
        reg.cvars().handle_info(h).unwrap_err().code(),
        ErrorCode::InvalidHandle
    );
    let code = |r: pvar::Result<()>| r.unwrap_err().code();
    assert_eq!(
        code(reg.cvars().read(h, &mut [0; 8])),
        ErrorCode::InvalidHandle
    );
    assert_eq!(
        code(reg.cvars().write(h, &[0; 8])),
        ErrorCode::InvalidHandle
    );
    assert_eq!(code(reg.cvars().handle_free(h)), ErrorCode::InvalidHandle);
    // The slot is reused with a new generation: the old handle stays dead.
    let (h2, _) = reg.cvars().handle_alloc(0, None).unwrap();
    assert_ne!(h, h2);
    assert_eq!(
        code(reg.cvars().read(h, &mut [0; 8])),
        ErrorCode::InvalidHandle
    );
    reg.cvars().read(h2, &mut [0; 8]).unwrap();
    let forged = pvar::CvarHandle::from_raw(0xdead_beef_0000_0042).unwrap();
    assert_eq!(
        code(reg.cvars().read(forged, &mut [0; 8])),
        ErrorCode::InvalidHandle
    );
    assert!(pvar::CvarHandle::from_raw(0).is_none());
    // A handle of another registry is not valid here.
    let other = Registry::new();
    other.cvar::<u64>("y").register().unwrap();
    assert_eq!(
        code(other.cvars().read(h2, &mut [0; 8])),
        ErrorCode::InvalidHandle
    );
    assert_eq!(
        reg.cvars().handle_alloc(5, None).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
}

#[test]
fn bound_variables_have_a_value_per_object() {
    let reg = Registry::new();
    let algo = reg
        .cvar::<u32>("bcast_algo")
        .bind(BindKind::Comm)
        .default(1u32)
        .register_bound()
        .unwrap();
    assert_eq!(reg.cvars().info(0).unwrap().bind, BindKind::Comm);
    let world = algo.create_instance(0x101).unwrap();
    let selfc = algo.create_instance(0x102).unwrap();
    assert!(algo.create_instance(0x101).is_err());
    assert_eq!(algo.objects(), vec![0x101, 0x102]);
    let comm = |h| Some(ObjectRef::new(BindKind::Comm, h));
    let (hw, n) = reg.cvars().handle_alloc(0, comm(0x101)).unwrap();
    assert_eq!(n, 1);
    reg.cvars().write(hw, &3u32.to_ne_bytes()).unwrap();
    assert_eq!(world.get(), 3);
    assert_eq!(selfc.get(), 1);
    // Missing object, wrong kind, unknown object.
    let code = |r: pvar::Result<(pvar::CvarHandle, usize)>| r.unwrap_err().code();
    assert_eq!(code(reg.cvars().handle_alloc(0, None)), ErrorCode::Invalid);
    assert_eq!(
        code(
            reg.cvars()
                .handle_alloc(0, Some(ObjectRef::new(BindKind::Win, 0x101)))
        ),
        ErrorCode::Invalid
    );
    assert_eq!(
        code(reg.cvars().handle_alloc(0, comm(0x999))),
        ErrorCode::Invalid
    );
    // Freezing the whole variable.
    algo.freeze();
    assert_eq!(
        reg.cvars()
            .write(hw, &4u32.to_ne_bytes())
            .unwrap_err()
            .code(),
        ErrorCode::CvarSetNotNow
    );
    algo.unfreeze();
    // Dropping the instance makes its handles inactive.
    algo.drop_instance(0x101).unwrap();
    let e = reg.cvars().read(hw, &mut [0; 4]).unwrap_err();
    assert_eq!(e, pvar::Error::inactive());
    assert_eq!(e.code(), ErrorCode::InvalidIndex);
    reg.cvars().handle_free(hw).unwrap();
    // register() refuses a bound variable, register_bound() an unbound one.
    assert!(
        reg.cvar::<u32>("b2")
            .bind(BindKind::Win)
            .register()
            .is_err()
    );
    assert!(reg.cvar::<u32>("b3").register_bound().is_err());
}

#[test]
fn enumerated_int_variables() {
    let reg = Registry::new();
    let e = Enumeration::new(
        "protocol",
        [("eager", 0), ("rendezvous", 1), ("pipeline", 2)],
    )
    .unwrap();
    let p = reg
        .cvar::<i32>("protocol")
        .enumeration(e.clone())
        .default(1)
        .register()
        .unwrap();
    let info = reg.cvars().info(0).unwrap();
    assert_eq!(info.enumeration.as_ref(), Some(&e));
    let idx = reg.enums().index_of(&e).unwrap();
    assert_eq!(reg.enums().get(idx).unwrap(), &e);
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    reg.cvars().write(h, &2i32.to_ne_bytes()).unwrap();
    assert_eq!(p.get(), 2);
    assert_eq!(
        reg.cvars()
            .write(h, &7i32.to_ne_bytes())
            .unwrap_err()
            .code(),
        ErrorCode::Invalid
    );
    // Enumerations only on i32; the default must be an item.
    assert!(
        reg.cvar::<u64>("x")
            .enumeration(e.clone())
            .register()
            .is_err()
    );
    assert!(
        reg.cvar::<i32>("y")
            .enumeration(e.clone())
            .default(9)
            .register()
            .is_err()
    );
    // Another enumeration with the same name is refused (names are unique).
    let other = Enumeration::new("protocol", [("a", 5)]).unwrap();
    assert!(
        reg.cvar::<i32>("z")
            .enumeration(other)
            .default(5)
            .register()
            .is_err()
    );
}

#[test]
fn bool_variables_are_ints_zero_or_one() {
    let reg = Registry::new();
    let b = reg.cvar::<bool>("flag").default(true).register().unwrap();
    assert_eq!(reg.cvars().info(0).unwrap().datatype, Datatype::Int);
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    reg.cvars().write(h, &0i32.to_ne_bytes()).unwrap();
    assert!(!b.get());
    reg.cvars().write(h, &17i32.to_ne_bytes()).unwrap();
    assert!(b.get());
    assert_eq!(reg.cvars().read_value(h).unwrap(), CvarValue::Signed(1));
}

#[test]
fn duplicate_registration_returns_the_same_variable_or_is_refused() {
    let reg = Registry::new();
    let a = reg.cvar::<u64>("dup").default(1u64).register().unwrap();
    let b = reg.cvar::<u64>("dup").default(1u64).register().unwrap();
    assert_eq!(a.index(), b.index());
    b.set(5);
    assert_eq!(a.get(), 5);
    assert_eq!(reg.cvars().len(), 1);
    let e = reg.cvar::<u64>("dup").default(2u64).register().unwrap_err();
    assert!(e.to_string().contains("dup"), "{e}");
    assert!(reg.cvar::<f64>("dup").register().is_err());
    assert!(reg.cvar::<u64>("").register().is_err());
    assert!(
        reg.cvar::<u32>("dt")
            .datatype(Datatype::Double)
            .register()
            .is_err()
    );
}

#[test]
fn deactivated_variables_keep_their_index_and_refuse_access() {
    let reg = Registry::new();
    let v = reg.cvar::<u64>("gone").register().unwrap();
    let (h, _) = reg.cvars().handle_alloc(0, None).unwrap();
    reg.cvars().deactivate(0).unwrap();
    assert!(!reg.cvars().is_active(0).unwrap());
    assert_eq!(
        reg.cvars().read(h, &mut [0; 8]).unwrap_err(),
        pvar::Error::inactive()
    );
    assert_eq!(
        reg.cvars().handle_alloc(0, None).unwrap_err(),
        pvar::Error::inactive()
    );
    assert_eq!(reg.cvars().info(0).unwrap().name, "gone");
    reg.cvar::<u64>("gone").register().unwrap();
    reg.cvars().read(h, &mut [0; 8]).unwrap();
    drop(v);
}

#[test]
fn cvars_join_their_category_even_if_defined_later() {
    let reg = Registry::new();
    reg.cvar::<u64>("a").category("later").register().unwrap();
    reg.cvar::<u64>("b").category("later").register().unwrap();
    assert_eq!(reg.categories().undefined(), vec!["later".to_string()]);
    let c = reg
        .categories()
        .define("later", "defined after its variables")
        .unwrap();
    assert_eq!(reg.categories().cvars(c).unwrap(), vec![0, 1]);
    reg.cvar::<u64>("c").category("later").register().unwrap();
    assert_eq!(reg.categories().info(c).unwrap().num_cvars, 3);
}

// --- environment overrides ---

#[test]
fn env_later_names_have_priority() {
    set_env("MPICH_T1_EAGER", "100");
    set_env("MPIR_PARAM_T1_EAGER", "200");
    set_env("MPIR_CVAR_T1_EAGER", "300");
    let reg = Registry::new();
    let v = reg
        .cvar::<u64>("MPIR_CVAR_T1_EAGER")
        .default(1u64)
        .env_mpich("T1_EAGER")
        .register()
        .unwrap();
    assert_eq!(v.get(), 300);
    assert_eq!(
        reg.cvars().env_source(0).unwrap(),
        Some("MPIR_CVAR_T1_EAGER")
    );
    assert_eq!(
        reg.cvars().info(0).unwrap().env,
        [
            "MPICH_T1_EAGER",
            "MPIR_PARAM_T1_EAGER",
            "MPIR_CVAR_T1_EAGER"
        ]
    );
}

#[test]
fn env_only_lower_priority_set() {
    set_env("MPICH_T2_X", "0x20");
    let reg = Registry::new();
    let v = reg
        .cvar::<u32>("t2")
        .default(1u32)
        .env(["MPICH_T2_X", "MPIR_PARAM_T2_X", "MPIR_CVAR_T2_X"])
        .register()
        .unwrap();
    assert_eq!(v.get(), 32);
    assert_eq!(reg.cvars().env_source(0).unwrap(), Some("MPICH_T2_X"));
}

#[test]
fn env_unset_keeps_the_default() {
    let reg = Registry::new();
    let v = reg
        .cvar::<f64>("t3")
        .default(0.25)
        .env(["PVAR_TEST_T3_NEVER_SET"])
        .register()
        .unwrap();
    assert_eq!(v.get(), 0.25);
    assert_eq!(reg.cvars().env_source(0).unwrap(), None);
    assert!(reg.cvars().warnings().is_empty());
}

#[test]
fn env_malformed_keeps_the_default_and_says_why() {
    set_env("PVAR_TEST_T4_LIMIT", "12abc");
    let reg = Registry::new();
    let v = reg
        .cvar::<u64>("t4_limit")
        .default(64u64)
        .env(["PVAR_TEST_T4_LIMIT"])
        .register()
        .unwrap();
    assert_eq!(v.get(), 64);
    assert_eq!(reg.cvars().env_source(0).unwrap(), None);
    let w = reg.cvars().warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("t4_limit"), "{}", w[0]);
    assert!(w[0].contains("PVAR_TEST_T4_LIMIT"), "{}", w[0]);
    assert!(w[0].contains("12abc"), "{}", w[0]);
    assert!(w[0].contains("default 64"), "{}", w[0]);
}

#[test]
fn env_malformed_higher_priority_falls_back_to_a_wellformed_lower_one() {
    set_env("PVAR_TEST_T5_A", "7");
    set_env("PVAR_TEST_T5_B", "-1"); // negative for an unsigned
    let reg = Registry::new();
    let v = reg
        .cvar::<u64>("t5")
        .env(["PVAR_TEST_T5_A", "PVAR_TEST_T5_B"])
        .register()
        .unwrap();
    assert_eq!(v.get(), 7);
    let w = reg.cvars().warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("PVAR_TEST_T5_B=\"-1\""), "{}", w[0]);
}

#[test]
fn env_parses_each_type() {
    set_env("PVAR_TEST_T6_I", "-17");
    set_env("PVAR_TEST_T6_B", "off");
    set_env("PVAR_TEST_T6_D", "1e-3");
    set_env("PVAR_TEST_T6_S", "  spaced value ");
    set_env("PVAR_TEST_T6_E", "Rendezvous");
    set_env("PVAR_TEST_T6_C", "-0x10");
    set_env("PVAR_TEST_T6_U32", "4294967296"); // out of range
    let reg = Registry::new();
    let i = reg
        .cvar::<i32>("i")
        .env(["PVAR_TEST_T6_I"])
        .register()
        .unwrap();
    let b = reg
        .cvar::<bool>("b")
        .default(true)
        .env(["PVAR_TEST_T6_B"])
        .register()
        .unwrap();
    let d = reg
        .cvar::<f64>("d")
        .env(["PVAR_TEST_T6_D"])
        .register()
        .unwrap();
    let s = reg
        .cvar::<String>("s")
        .env(["PVAR_TEST_T6_S"])
        .register()
        .unwrap();
    let e = Enumeration::new("t6_proto", [("eager", 0), ("rendezvous", 1)]).unwrap();
    let en = reg
        .cvar::<i32>("e")
        .enumeration(e)
        .env(["PVAR_TEST_T6_E"])
        .register()
        .unwrap();
    let c = reg
        .cvar::<i64>("c")
        .env(["PVAR_TEST_T6_C"])
        .register()
        .unwrap();
    let u = reg
        .cvar::<u32>("u")
        .default(5u32)
        .env(["PVAR_TEST_T6_U32"])
        .register()
        .unwrap();
    assert_eq!(i.get(), -17);
    assert!(!b.get());
    assert_eq!(d.get(), 1e-3);
    assert_eq!(s.get(), "  spaced value ");
    assert_eq!(en.get(), 1);
    assert_eq!(c.get(), -16);
    assert_eq!(u.get(), 5);
    assert_eq!(reg.cvars().warnings().len(), 1);
}

#[test]
fn env_string_longer_than_capacity_is_malformed() {
    set_env("PVAR_TEST_T7_S", "0123456789");
    let reg = Registry::new();
    let s = reg
        .cvar::<String>("t7")
        .default("ok")
        .capacity(8)
        .env(["PVAR_TEST_T7_S"])
        .register()
        .unwrap();
    assert_eq!(s.get(), "ok");
    assert!(reg.cvars().warnings()[0].contains("capacity"));
}

#[test]
fn env_sets_the_start_value_of_bound_instances() {
    set_env("PVAR_TEST_T8_ALGO", "4");
    let reg = Registry::new();
    let algo = reg
        .cvar::<u32>("t8")
        .bind(BindKind::Comm)
        .env(["PVAR_TEST_T8_ALGO"])
        .register_bound()
        .unwrap();
    assert_eq!(algo.create_instance(1).unwrap().get(), 4);
}

// --- the declaration macro (registers in the global registry) ---

pvar::cvar! {
    /// A test variable declared next to its use.
    static MACRO_LIMIT: u64 = 4096;
    name = "PVAR_TEST_MACRO_LIMIT";
    description = "limit declared by the macro";
    category = "pvar_test_macro";
    verbosity = Verbosity::TunerDetail;
    scope = Scope::AllEq;
    env = ["MPICH_TEST_MACRO_LIMIT", "MPIR_PARAM_TEST_MACRO_LIMIT", "MPIR_CVAR_TEST_MACRO_LIMIT"];
}

pvar::cvar! {
    static MACRO_NAME: String = "default-name";
    scope = Scope::Constant;
}

pvar::cvar! {
    static MACRO_MODE: i32 = 1;
    enumeration = ("pvar_test_macro_mode", [("off", 0), ("on", 1), ("auto", 2)]);
    env = ["PVAR_TEST_MACRO_MODE"];
    name = "PVAR_TEST_MACRO_MODE";
}

#[test]
fn macro_declared_variables_register_on_first_use() {
    set_env("MPIR_PARAM_TEST_MACRO_LIMIT", "8192");
    set_env("PVAR_TEST_MACRO_MODE", "auto");
    let reg = pvar::global();
    assert!(reg.cvars().index("PVAR_TEST_MACRO_LIMIT").is_err());
    assert_eq!(MACRO_LIMIT.get(), 8192);
    let i = reg.cvars().index("PVAR_TEST_MACRO_LIMIT").unwrap();
    let info = reg.cvars().info(i).unwrap();
    assert_eq!(info.scope, Scope::AllEq);
    assert_eq!(info.verbosity, Verbosity::TunerDetail);
    assert_eq!(info.category.as_deref(), Some("pvar_test_macro"));
    assert_eq!(info.description, "limit declared by the macro");
    // Tool writes are seen by the next read.
    let (h, _) = reg.cvars().handle_alloc(i, None).unwrap();
    reg.cvars().write(h, &1u64.to_ne_bytes()).unwrap();
    assert_eq!(MACRO_LIMIT.get(), 1);
    MACRO_LIMIT.cvar().freeze();
    assert_eq!(
        reg.cvars()
            .write(h, &2u64.to_ne_bytes())
            .unwrap_err()
            .code(),
        ErrorCode::CvarSetNotNow
    );
    reg.cvars().handle_free(h).unwrap();

    // Explicit early registration; the MPI_T name defaults to the identifier.
    let n = MACRO_NAME.register();
    assert_eq!(n.get(), "default-name");
    let i = reg.cvars().index("MACRO_NAME").unwrap();
    assert_eq!(reg.cvars().info(i).unwrap().datatype, Datatype::Char);
    let (h, count) = reg.cvars().handle_alloc(i, None).unwrap();
    assert!(count > "default-name".len());
    assert_eq!(
        reg.cvars().write(h, b"x\0").unwrap_err().code(),
        ErrorCode::CvarSetNever
    );

    assert_eq!(MACRO_MODE.get(), 2);
    let i = reg.cvars().index("PVAR_TEST_MACRO_MODE").unwrap();
    let e = reg.cvars().info(i).unwrap().enumeration.clone().unwrap();
    assert_eq!(e.name(), "pvar_test_macro_mode");
    assert_eq!(e.len(), 3);
}

pvar::cvar! {
    static HOT_STATIC: u64 = 3;
    name = "PVAR_TEST_HOT_STATIC";
}

/// Repeated hot-path reads (handle, `cvar!` static, string) return the
/// value every time. What they cost is measured by the `cvar_read` group of
/// `benches/tool.rs` (about one relaxed atomic load), not asserted here.
#[test]
fn hot_path_reads_return_the_value() {
    let reg = Registry::new();
    let v = reg.cvar::<u64>("hot").default(3).register().unwrap();
    let s = reg
        .cvar::<String>("hot_s")
        .default("abc")
        .register()
        .unwrap();
    const N: u64 = 100_000;
    let sum = |f: &dyn Fn() -> u64| (0..N).fold(0u64, |t, _| t.wrapping_add(f()));
    assert_eq!(sum(&|| std::hint::black_box(&v).get()), 3 * N);
    assert_eq!(sum(&|| std::hint::black_box(&HOT_STATIC).get()), 3 * N);
    assert_eq!(sum(&|| std::hint::black_box(&s).get().len() as u64), 3 * N);
}

pvar::cvar! {
    static CLASHING: u64 = 5;
    name = "PVAR_TEST_CLASH";
}

#[test]
fn a_static_whose_name_is_taken_works_detached() {
    pvar::global()
        .cvar::<f64>("PVAR_TEST_CLASH")
        .register()
        .unwrap();
    let e = CLASHING.try_register().unwrap_err();
    assert!(e.to_string().contains("PVAR_TEST_CLASH"), "{e}");
    // The component still gets its default, without a registry index.
    assert_eq!(CLASHING.get(), 5);
    assert_eq!(CLASHING.cvar().index(), None);
    let i = pvar::global().cvars().index("PVAR_TEST_CLASH").unwrap();
    assert_eq!(
        pvar::global().cvars().info(i).unwrap().datatype,
        Datatype::Double
    );
}
