//! Enumerations: construction rules, get-info / get-item, the MPI 4
//! out-of-range rule, stable registry indices, and unique names (MPI 4.1
//! §15.3.5) across performance and control variables.

use pvar::{Enumeration, ErrorCode, PvarClass, Registry};

/// Registers a STATE variable using `e` (named after it) and returns the
/// enumeration's registry index.
fn indexed(reg: &Registry, e: &Enumeration) -> usize {
    reg.state(&format!("state_of_{}", e.name()))
        .enumeration(e.clone())
        .register()
        .unwrap();
    reg.enums().index_of(e).unwrap()
}

#[test]
fn construction_rules() {
    assert!(Enumeration::new("empty", Vec::<(&str, i32)>::new()).is_err());
    assert!(Enumeration::new("", [("a", 0)]).is_err());
    assert!(Enumeration::new("dup", [("a", 0), ("a", 1)]).is_err());
    assert!(Enumeration::new("blank", [("", 0)]).is_err());
    // Values may repeat; names may not.
    let e = Enumeration::new("ok", [("a", 0), ("b", 0)]).unwrap();
    assert_eq!(e.len(), 2);
    assert!(!e.is_empty());
}

#[test]
fn info_and_items_through_the_registry() {
    let reg = Registry::new();
    let e = Enumeration::new("state", [("idle", 0), ("busy", 4), ("done", 9)]).unwrap();
    let idx = indexed(&reg, &e);
    let (num, name) = reg.enums().info(idx).unwrap();
    assert_eq!((num, name), (3, "state"));
    let item = reg.enums().item(idx, 1).unwrap();
    assert_eq!((item.name.as_str(), item.value), ("busy", 4));
    assert_eq!(e.name_of(9), Some("done"));
    assert_eq!(e.value_of("DONE"), Some(9));
    assert!(e.contains_value(0));
    assert!(!e.contains_value(1));
}

#[test]
fn out_of_range_item_is_invalid_index() {
    let reg = Registry::new();
    let e = Enumeration::new("two", [("x", 1), ("y", 2)]).unwrap();
    let idx = indexed(&reg, &e);
    assert_eq!(
        reg.enums().item(idx, 2).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    assert_eq!(
        e.item(usize::MAX).unwrap_err().code(),
        ErrorCode::InvalidIndex
    );
    // An enumeration index the registry never gave out.
    assert_eq!(
        reg.enums().info(idx + 1).unwrap_err().code(),
        ErrorCode::Invalid
    );
}

#[test]
fn indices_are_stable_and_shared_by_equal_enumerations() {
    let reg = Registry::new();
    let a = Enumeration::new("a", [("x", 0)]).unwrap();
    let b = Enumeration::new("b", [("x", 0)]).unwrap();
    // Not used by any variable: no index.
    assert_eq!(reg.enums().index_of(&a), None);
    let ia = indexed(&reg, &a);
    let ib = indexed(&reg, &b);
    assert_ne!(ia, ib);
    // An equal enumeration built separately maps to the same index.
    let a2 = Enumeration::new("a", [("x", 0)]).unwrap();
    assert!(!a.ptr_eq(&a2));
    assert_eq!(reg.enums().index_of(&a2), Some(ia));
    reg.state("another_a").enumeration(a2).register().unwrap();
    assert_eq!(reg.enums().len(), 2);
    // Indices never move.
    for k in 0..50 {
        indexed(
            &reg,
            &Enumeration::new(format!("e{k}"), [("v", k)]).unwrap(),
        );
    }
    assert_eq!(reg.enums().index_of(&a), Some(ia));
    assert_eq!(reg.enums().get(ib).unwrap(), &b);
}

#[test]
fn pvar_and_cvar_enumerations_get_indices() {
    let reg = Registry::new();
    let e = Enumeration::new("worker", [("computing", 0), ("sending", 1)]).unwrap();
    reg.state("worker_state")
        .enumeration(e.clone())
        .register()
        .unwrap();
    reg.cvar::<i32>("worker_mode")
        .enumeration(e.clone())
        .register()
        .unwrap();
    // The cvar registered the enumeration; the pvar's shares its index.
    assert_eq!(reg.enums().len(), 1);
    let from_pvar = reg.pvars().info(0).unwrap().enumeration.clone().unwrap();
    let from_cvar = reg.cvars().info(0).unwrap().enumeration.clone().unwrap();
    assert_eq!(
        reg.enums().index_of(&from_pvar),
        reg.enums().index_of(&from_cvar)
    );
    assert_eq!(reg.enums().len(), 1);
}

/// MPI 4.1 §15.3.5: an enumeration's name "must be unique with respect to
/// all other names for enumerations". Two different enumerations with one
/// name would show a tool two `MPI_T_enum`s it cannot tell apart; the
/// second registration is refused, whichever kind of variable brings it.
#[test]
fn enumeration_names_are_unique_across_pvars_and_cvars() {
    let mode = Enumeration::new("mode", [("eager", 0), ("rndv", 1)]).unwrap();
    let other_mode = Enumeration::new("mode", [("eager", 0), ("pipeline", 2)]).unwrap();

    // pvar, then pvar.
    let reg = Registry::new();
    reg.state("send_mode")
        .enumeration(mode.clone())
        .register()
        .unwrap();
    let Err(err) = reg
        .state("recv_mode")
        .enumeration(other_mode.clone())
        .register()
    else {
        panic!("a second enumeration named 'mode' was accepted");
    };
    assert_eq!(err.code(), ErrorCode::Invalid);
    let why = err.reason().unwrap();
    assert!(
        why.contains("recv_mode") && why.contains("'mode'") && why.contains("unique"),
        "{why}"
    );
    assert_eq!(reg.pvars().len(), 1, "nothing registered");
    assert_eq!(
        reg.pvars()
            .index("recv_mode", PvarClass::State)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidName
    );
    // The same enumeration again is fine (one index for both variables).
    reg.state("recv_mode")
        .enumeration(mode.clone())
        .register()
        .unwrap();
    // pvar, then cvar.
    let err = reg
        .cvar::<i32>("mode_cvar")
        .enumeration(other_mode.clone())
        .register()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Invalid);
    assert!(err.reason().unwrap().contains("mode_cvar"), "{err}");
    assert_eq!(reg.enums().len(), 1);
    assert_eq!(reg.enums().index_of(&other_mode), None);

    // cvar, then pvar.
    let reg = Registry::new();
    reg.cvar::<i32>("mode_cvar")
        .enumeration(mode.clone())
        .register()
        .unwrap();
    assert!(
        reg.state("send_mode")
            .enumeration(other_mode.clone())
            .register()
            .is_err()
    );
    // Every name a tool can see is unique.
    let names: Vec<String> = (0..reg.enums().len())
        .map(|i| reg.enums().info(i).unwrap().1.to_string())
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(names.len(), unique.len(), "{names:?}");

    // A pvar's enumeration has its index as soon as the pvar exists (a
    // tool's MPI_T_pvar_get_info finds it; before, it was assigned there).
    let reg = Registry::new();
    reg.state("lone")
        .enumeration(mode.clone())
        .register()
        .unwrap();
    assert_eq!(reg.enums().index_of(&mode), Some(0));
}
