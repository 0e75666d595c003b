//! Registration rules: class/datatype combinations, duplicate names,
//! deactivation and reactivation, lookups.

// Values stay at zero with the `pvar_compile_out` cfg (see tests/compile_out.rs).
#![cfg(not(pvar_compile_out))]

use pvar::{BindKind, Callbacks, Datatype, Enumeration, Error, ErrorCode, PvarClass, Registry};

/// Registers `name` with `class` and `datatype` through the class's typed
/// builder, with the handle value type that fits the datatype (`f64` for
/// `MPI_DOUBLE`, `i32`/`i64` for `MPI_INT`/`MPI_COUNT`, `u64` otherwise), so
/// that only the class rules decide; returns the index.
fn register(reg: &Registry, name: &str, class: PvarClass, dt: Datatype) -> pvar::Result<usize> {
    use PvarClass as C;
    macro_rules! typed {
        ($method:ident) => {
            if dt == Datatype::Double {
                reg.$method::<f64>(name)
                    .datatype(dt)
                    .register()
                    .map(|h| h.index())
            } else {
                reg.$method::<u64>(name)
                    .datatype(dt)
                    .register()
                    .map(|h| h.index())
            }
        };
    }
    match class {
        C::Counter => reg.counter(name).datatype(dt).register().map(|h| h.index()),
        C::Aggregate => typed!(aggregate),
        C::Timer => reg.timer(name).datatype(dt).register().map(|h| h.index()),
        C::Level => typed!(level),
        C::Size => typed!(size),
        C::Percentage => reg
            .percentage(name)
            .datatype(dt)
            .register()
            .map(|h| h.index()),
        C::State => reg.state(name).datatype(dt).register().map(|h| h.index()),
        C::HighWatermark => typed!(high_watermark),
        C::LowWatermark => typed!(low_watermark),
        C::Generic => match dt {
            Datatype::Int => reg.generic::<i32>(name).register().map(|h| h.index()),
            Datatype::Count => reg.generic::<i64>(name).register().map(|h| h.index()),
            _ => typed!(generic),
        },
    }
}

#[test]
fn a_datatype_override_must_fit_the_handle_value_type() {
    let reg = Registry::new();
    let e = reg
        .level::<u64>("l")
        .datatype(Datatype::Double)
        .register()
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(&e, Error::Invalid(m) if m.contains("'l'")), "{e}");
    // Unsigned widths may be swapped, and timers read in any allowed type.
    reg.counter("c")
        .datatype(Datatype::Unsigned)
        .register()
        .unwrap();
    reg.timer("t")
        .datatype(Datatype::UnsignedLong)
        .register()
        .unwrap();
}

/// The datatypes the standard allows for each class (MPI 4.1 §15.3.7).
/// `MPI_CHAR` needs a callback (tested separately).
fn allowed(class: PvarClass, dt: Datatype) -> bool {
    use Datatype as D;
    use PvarClass as C;
    let unsigned = matches!(dt, D::Unsigned | D::UnsignedLong | D::UnsignedLongLong);
    match class {
        C::State => dt == D::Int,
        C::Counter => unsigned,
        C::Percentage => dt == D::Double,
        C::Level | C::Size | C::HighWatermark | C::LowWatermark | C::Aggregate | C::Timer => {
            unsigned || dt == D::Double
        }
        C::Generic => dt != D::Char,
    }
}

fn registration_message(e: Error) -> String {
    match e {
        Error::Invalid(m) => m.into_owned(),
        other => panic!("expected a registration error, got {other:?}"),
    }
}

#[test]
fn every_class_datatype_combination_is_checked() {
    let reg = Registry::new();
    let mut accepted = 0;
    for &class in PvarClass::ALL {
        for &dt in Datatype::ALL {
            let name = format!("v_{}_{}", class.c_name(), dt.c_name());
            let r = register(&reg, &name, class, dt);
            if allowed(class, dt) {
                let index = r.unwrap_or_else(|e| panic!("{name} refused: {e}"));
                let info = reg.pvars().info(index).unwrap();
                assert_eq!((info.class, info.datatype), (class, dt), "{name}");
                accepted += 1;
            } else {
                let e = r.expect_err(&name);
                assert_eq!(e.code(), ErrorCode::Invalid);
                let msg = registration_message(e);
                assert!(msg.contains(&name), "message must name the variable: {msg}");
                assert!(
                    reg.pvars().index(&name, class).is_err(),
                    "{name} not registered"
                );
            }
        }
    }
    assert_eq!(reg.pvars().len(), accepted);
    // 1 + 3 + 1 + 6 * 4 + 6 (generic without MPI_CHAR)
    assert_eq!(accepted, 35);
}

#[test]
fn char_needs_a_callback() {
    let reg = Registry::new();
    let e = reg
        .generic::<u64>("text")
        .datatype(Datatype::Char)
        .register();
    assert!(registration_message(e.map(|_| ()).unwrap_err()).contains("text"));
    reg.callback_pvar(
        "text",
        PvarClass::Generic,
        Datatype::Char,
        Callbacks::new(|_, _| 0),
    )
    .count(8)
    .register()
    .unwrap();
}

#[test]
fn illegal_metadata_is_rejected_naming_the_variable() {
    let reg = Registry::new();
    let cases: Vec<(&str, pvar::Result<()>)> = vec![
        ("", reg.counter("").register().map(|_| ())),
        (
            "zero_count",
            reg.counter("zero_count").count(0).register().map(|_| ()),
        ),
        (
            "enum_on_unsigned",
            reg.generic::<u64>("enum_on_unsigned")
                .enumeration(Enumeration::new("e", [("a", 0), ("b", 1)]).unwrap())
                .register()
                .map(|_| ()),
        ),
        (
            "per_object_unbound",
            reg.counter("per_object_unbound")
                .per_object_count()
                .register_bound()
                .map(|_| ()),
        ),
        (
            "bound_via_register",
            reg.counter("bound_via_register")
                .bind(BindKind::Comm)
                .register()
                .map(|_| ()),
        ),
        (
            "level_not_continuous",
            reg.level::<u64>("level_not_continuous")
                .continuous(false)
                .register()
                .map(|_| ()),
        ),
        (
            "level_writable",
            reg.level::<u64>("level_writable")
                .readonly(false)
                .register()
                .map(|_| ()),
        ),
        (
            "state_atomic",
            reg.state("state_atomic")
                .atomic(true)
                .register()
                .map(|_| ()),
        ),
        (
            "generic_atomic",
            reg.generic::<u64>("generic_atomic")
                .readonly(false)
                .atomic(true)
                .register()
                .map(|_| ()),
        ),
        (
            "counter_readonly_atomic",
            reg.counter("counter_readonly_atomic")
                .readonly(true)
                .atomic(true)
                .register()
                .map(|_| ()),
        ),
        (
            "callback_writable_no_write_fn",
            reg.callback_pvar(
                "callback_writable_no_write_fn",
                PvarClass::Size,
                Datatype::UnsignedLongLong,
                Callbacks::new(|_, _| 0),
            )
            .readonly(false)
            .register()
            .map(|_| ()),
        ),
    ];
    for (name, r) in cases {
        let msg = registration_message(r.expect_err(name));
        assert!(msg.contains(&format!("'{name}'")), "{name}: {msg}");
    }
    assert_eq!(reg.pvars().len(), 0, "nothing was registered");
}

#[test]
fn same_name_and_class_with_identical_metadata_is_the_same_variable() {
    let reg = Registry::new();
    let a = reg
        .counter("sent")
        .description("messages sent")
        .count(2)
        .register()
        .unwrap();
    reg.level::<u64>("other").register().unwrap();
    let b = reg
        .counter("sent")
        .description("messages sent")
        .count(2)
        .register()
        .unwrap();
    assert_eq!(a.index(), b.index());
    assert_eq!(reg.pvars().len(), 2);
    a.inc_at(1);
    b.add_at(1, 2);
    assert_eq!(
        (a.get_at(1), b.get_at(1)),
        (3, 3),
        "one variable, one value"
    );
}

#[test]
fn same_name_and_class_with_different_metadata_is_an_error_naming_both() {
    let reg = Registry::new();
    let a = reg
        .counter("sent")
        .description("old text")
        .register()
        .unwrap();
    let e = reg
        .counter("sent")
        .description("new text")
        .register()
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Invalid);
    let msg = registration_message(e);
    assert!(msg.contains("'sent'"), "{msg}");
    assert!(msg.contains("description"), "says what differs: {msg}");
    assert!(
        msg.contains("old text") && msg.contains("new text"),
        "names both: {msg}"
    );
    assert!(msg.contains(&format!("index {}", a.index())), "{msg}");
    // Other differences too.
    for r in [
        reg.counter("sent")
            .description("old text")
            .count(2)
            .register()
            .map(|_| ()),
        reg.counter("sent")
            .description("old text")
            .datatype(Datatype::Unsigned)
            .register()
            .map(|_| ()),
        reg.counter("sent")
            .description("old text")
            .verbosity(pvar::Verbosity::TunerDetail)
            .register()
            .map(|_| ()),
        reg.counter("sent")
            .description("old text")
            .category("cat")
            .register()
            .map(|_| ()),
    ] {
        assert!(matches!(r, Err(Error::Invalid(_))), "{r:?}");
    }
    assert_eq!(reg.pvars().len(), 1);
}

#[test]
fn same_name_with_another_class_is_another_variable() {
    let reg = Registry::new();
    let c = reg.counter("queue").register().unwrap();
    let l = reg.level::<u64>("queue").register().unwrap();
    let h = reg.high_watermark::<u64>("queue").register().unwrap();
    assert_eq!((c.index(), l.index(), h.index()), (0, 1, 2));
    assert_eq!(reg.pvars().index("queue", PvarClass::Counter), Ok(0));
    assert_eq!(reg.pvars().index("queue", PvarClass::Level), Ok(1));
    assert_eq!(reg.pvars().index("queue", PvarClass::HighWatermark), Ok(2));
    assert_eq!(
        reg.pvars()
            .index("queue", PvarClass::Timer)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidName
    );
    c.add(5);
    l.inc();
    assert_eq!((c.get(), l.get()), (5, 1));
}

#[test]
fn deactivation_keeps_index_and_metadata_and_registering_again_reactivates() {
    let reg = Registry::new();
    let c = reg.counter("sent").description("d").register().unwrap();
    let other = reg.state("s").register().unwrap();
    c.add(3);
    let s = reg.session().unwrap();
    let h = s.handle(c.index()).unwrap().typed::<u64>().unwrap();
    let info_before = reg.pvars().info(c.index()).unwrap().clone();

    c.deactivate();
    assert_eq!(reg.pvars().is_active(c.index()), Ok(false));
    assert_eq!(reg.pvars().is_active(other.index()), Ok(true));
    assert_eq!(reg.pvars().len(), 2, "the index stays");
    assert_eq!(
        reg.pvars().info(c.index()).unwrap(),
        &info_before,
        "metadata stays"
    );
    assert_eq!(reg.pvars().index("sent", PvarClass::Counter), Ok(c.index()));
    assert_eq!(h.read(), Err(Error::inactive()));
    assert_eq!(Error::inactive().code(), ErrorCode::InvalidIndex);
    assert_eq!(s.handle(c.index()).unwrap_err(), Error::inactive());

    let again = reg.counter("sent").description("d").register().unwrap();
    assert_eq!(again.index(), c.index(), "same index");
    assert_eq!(reg.pvars().is_active(c.index()), Ok(true));
    assert_eq!(reg.pvars().len(), 2);
    assert_eq!(again.get(), 3, "a reloaded component keeps its values");
    assert!(s.handle(c.index()).is_ok());

    // Deactivating through the registry works the same.
    reg.pvars().deactivate(other.index()).unwrap();
    assert_eq!(reg.pvars().is_active(other.index()), Ok(false));
    assert_eq!(
        reg.pvars().deactivate(99).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
}

#[test]
fn lookups_out_of_range_fail_cleanly() {
    let reg = Registry::new();
    reg.counter("c").register().unwrap();
    assert_eq!(
        reg.pvars().info(1).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    assert_eq!(
        reg.pvars().is_active(usize::MAX).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    assert_eq!(
        reg.pvars()
            .index("nope", PvarClass::Counter)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidName
    );
}

#[test]
fn default_flags_per_class() {
    let reg = Registry::new();
    let c = reg.counter("c").register().unwrap();
    let l = reg.level::<u64>("l").register().unwrap();
    let ci = reg.pvars().info(c.index()).unwrap();
    assert!(!ci.readonly && !ci.continuous && ci.atomic, "{ci:?}");
    let li = reg.pvars().info(l.index()).unwrap();
    assert!(li.readonly && li.continuous && !li.atomic, "{li:?}");
    assert_eq!(ci.count, pvar::ElementCount::Fixed(1));
    assert_eq!(ci.bind, BindKind::NoObject);
}

#[test]
fn registries_are_isolated() {
    let r1 = Registry::new();
    let r2 = Registry::new();
    r1.counter("a").register().unwrap();
    r1.counter("b").register().unwrap();
    let x = r2.counter("b").register().unwrap();
    assert_eq!(x.index(), 0);
    assert_eq!((r1.pvars().len(), r2.pvars().len()), (2, 1));
    assert!(!r1.ptr_eq(&r2));
    assert!(r1.ptr_eq(&r1.clone()));
}

/// Every class with `datatype`s a typed builder accepts: `MPI_INT` for
/// STATE, `MPI_DOUBLE` for PERCENTAGE and TIMER, `MPI_UNSIGNED_LONG_LONG`
/// otherwise.
const CLASSES: [(PvarClass, Datatype); 10] = [
    (PvarClass::State, Datatype::Int),
    (PvarClass::Level, Datatype::UnsignedLongLong),
    (PvarClass::Size, Datatype::UnsignedLongLong),
    (PvarClass::Percentage, Datatype::Double),
    (PvarClass::HighWatermark, Datatype::UnsignedLongLong),
    (PvarClass::LowWatermark, Datatype::UnsignedLongLong),
    (PvarClass::Counter, Datatype::UnsignedLongLong),
    (PvarClass::Aggregate, Datatype::UnsignedLongLong),
    (PvarClass::Timer, Datatype::Double),
    (PvarClass::Generic, Datatype::UnsignedLongLong),
];

/// How the variable's values are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Storage {
    /// Engine storage, through the class's typed builder.
    Engine,
    /// A callback variable with only a read function.
    ReadCallback,
}

/// Registers `name` with the given storage and the flags that are `Some`
/// (the class defaults otherwise); returns the index.
fn register_flags(
    reg: &Registry,
    name: &str,
    (class, dt): (PvarClass, Datatype),
    storage: Storage,
    readonly: Option<bool>,
    atomic: Option<bool>,
) -> pvar::Result<usize> {
    use PvarClass as C;
    macro_rules! flags {
        ($b:expr) => {{
            let mut b = $b;
            if let Some(r) = readonly {
                b = b.readonly(r);
            }
            if let Some(a) = atomic {
                b = b.atomic(a);
            }
            b.register().map(|h| h.index())
        }};
    }
    match storage {
        Storage::Engine => match class {
            C::State => flags!(reg.state(name)),
            C::Level => flags!(reg.level::<u64>(name)),
            C::Size => flags!(reg.size::<u64>(name)),
            C::Percentage => flags!(reg.percentage(name)),
            C::HighWatermark => flags!(reg.high_watermark::<u64>(name)),
            C::LowWatermark => flags!(reg.low_watermark::<u64>(name)),
            C::Counter => flags!(reg.counter(name)),
            C::Aggregate => flags!(reg.aggregate::<u64>(name)),
            C::Timer => flags!(reg.timer(name)),
            C::Generic => flags!(reg.generic::<u64>(name)),
        },
        Storage::ReadCallback => {
            flags!(reg.callback_pvar(name, class, dt, Callbacks::new(|_, _| 5)))
        }
    }
}

/// Whether a tool write can change that handle's value alone: the SUM
/// classes and engine watermarks keep per-handle state; every other
/// variable is read-only.
fn writable(class: PvarClass, storage: Storage) -> bool {
    resettable(class, storage)
}

/// Whether `readreset` has per-handle state to reset.
fn resettable(class: PvarClass, storage: Storage) -> bool {
    let sum = matches!(
        class,
        PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer
    );
    let watermark = matches!(class, PvarClass::HighWatermark | PvarClass::LowWatermark);
    sum || (watermark && storage == Storage::Engine)
}

#[test]
fn writable_only_where_a_tool_write_works() {
    let reg = Registry::new();
    let cases = [
        (
            "generic_writable",
            register_flags(
                &reg,
                "generic_writable",
                (PvarClass::Generic, Datatype::UnsignedLongLong),
                Storage::Engine,
                Some(false),
                None,
            ),
        ),
        (
            "cb_high_no_write_fn",
            register_flags(
                &reg,
                "cb_high_no_write_fn",
                (PvarClass::HighWatermark, Datatype::UnsignedLongLong),
                Storage::ReadCallback,
                Some(false),
                None,
            ),
        ),
        (
            "cb_low_no_write_fn",
            register_flags(
                &reg,
                "cb_low_no_write_fn",
                (PvarClass::LowWatermark, Datatype::Double),
                Storage::ReadCallback,
                Some(false),
                None,
            ),
        ),
        (
            "cb_high_atomic",
            register_flags(
                &reg,
                "cb_high_atomic",
                (PvarClass::HighWatermark, Datatype::UnsignedLongLong),
                Storage::ReadCallback,
                Some(false),
                Some(true),
            ),
        ),
    ];
    for (name, r) in cases {
        let msg = registration_message(r.expect_err(name));
        assert!(msg.contains(&format!("'{name}'")), "{name}: {msg}");
    }
    assert_eq!(reg.pvars().len(), 0, "nothing was registered");

    // A callback watermark has no per-handle mark: the class defaults
    // (writable, atomic) do not apply. It defaults to read-only and not
    // atomic; asked for writable explicitly it is refused (above);
    // read-only it registers.
    let dflt = register_flags(
        &reg,
        "cb_high_defaults",
        (PvarClass::HighWatermark, Datatype::UnsignedLongLong),
        Storage::ReadCallback,
        None,
        None,
    )
    .unwrap();
    let info = reg.pvars().info(dflt).unwrap();
    assert!(info.readonly && !info.atomic, "{info:?}");
    let ro = register_flags(
        &reg,
        "cb_high",
        (PvarClass::HighWatermark, Datatype::UnsignedLongLong),
        Storage::ReadCallback,
        Some(true),
        None,
    )
    .unwrap();
    let info = reg.pvars().info(ro).unwrap();
    assert!(info.readonly && !info.atomic, "{info:?}");
    // An engine GENERIC stays read-only, as before.
    let g = reg.generic::<u64>("generic").register().unwrap();
    assert!(reg.pvars().info(g.index()).unwrap().readonly);
}

/// For every class, storage kind and flag combination that registers, what
/// `get_info` reports is what the tool calls do: `readonly = 0` exactly
/// when write and reset succeed, `atomic = 1` exactly when readreset does;
/// and a flag the variable cannot honour is refused at registration.
#[test]
fn get_info_matches_write_and_reset_for_every_class_and_storage_kind() {
    let reg = Registry::new();
    let session = reg.session().unwrap();
    let (tool, s) = (session.tool(), session.id());
    let mut n = 0;
    for (ci, &cd) in CLASSES.iter().enumerate() {
        let (class, dt) = cd;
        for storage in [Storage::Engine, Storage::ReadCallback] {
            for readonly in [None, Some(true), Some(false)] {
                for atomic in [None, Some(true), Some(false)] {
                    n += 1;
                    let name = format!("v{ci}_{n}");
                    let what = format!(
                        "{} {storage:?} readonly={readonly:?} atomic={atomic:?}",
                        class.c_name()
                    );
                    let r = register_flags(&reg, &name, cd, storage, readonly, atomic);
                    // The flags asked for, over the class defaults
                    // (`readonly(true)` also clears `atomic`); a callback
                    // watermark defaults to read-only and not atomic.
                    let history = resettable(class, Storage::Engine);
                    let cb_watermark =
                        matches!(class, PvarClass::HighWatermark | PvarClass::LowWatermark)
                            && storage != Storage::Engine;
                    let ro = readonly.unwrap_or(cb_watermark || !history);
                    let at = atomic.unwrap_or(!cb_watermark && history && readonly != Some(true));
                    let honourable = (ro || writable(class, storage))
                        && (!at || (!ro && resettable(class, storage)));
                    let Ok(index) = r else {
                        let msg = registration_message(r.unwrap_err());
                        assert!(msg.contains(&format!("'{name}'")), "{what}: {msg}");
                        assert!(!honourable, "{what}: refused: {msg}");
                        continue;
                    };
                    assert!(honourable, "{what}: registered");
                    let info = reg.pvars().info(index).unwrap();
                    if !info.readonly {
                        assert!(writable(class, storage), "{what}: {info:?}");
                    }
                    if info.atomic {
                        assert!(resettable(class, storage), "{what}: {info:?}");
                    }
                    let (h, count) = tool.handle_alloc(s, index, None).unwrap();
                    let one = if dt == Datatype::Double {
                        1.0f64.to_bits()
                    } else {
                        1
                    };
                    let values = vec![one; count];
                    let mut out = vec![0u64; count];
                    let write = tool.write(s, h, 0, &values);
                    let reset = tool.reset(s, h);
                    let readreset = tool.readreset(s, h, 0, &mut out);
                    if info.readonly {
                        assert_eq!(write.map_err(|e| e.code()), Err(ErrorCode::PvarNoWrite));
                        assert_eq!(reset.map_err(|e| e.code()), Err(ErrorCode::PvarNoWrite));
                        assert!(readreset.is_err(), "{what}");
                    } else {
                        assert_eq!(write.map_err(|e| e.code()), Ok(()), "{what}: write");
                        assert_eq!(reset.map_err(|e| e.code()), Ok(()), "{what}: reset");
                    }
                    if info.atomic {
                        assert_eq!(readreset.map_err(|e| e.code()), Ok(()), "{what}");
                    } else if !info.readonly {
                        assert_eq!(
                            readreset.map_err(|e| e.code()),
                            Err(ErrorCode::PvarNoAtomic),
                            "{what}"
                        );
                    }
                    tool.handle_free(s, h).unwrap();
                }
            }
        }
    }
}
