//! Enumerations: construction rules, get-info / get-item, the MPI 4
//! out-of-range rule, and stable registry indices.

use pvar::{Enumeration, ErrorCode, Registry};

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
    let idx = reg.enums().index_of(&e);
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
    let idx = reg.enums().index_of(&e);
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
    let ia = reg.enums().index_of(&a);
    let ib = reg.enums().index_of(&b);
    assert_ne!(ia, ib);
    // An equal enumeration built separately maps to the same index.
    let a2 = Enumeration::new("a", [("x", 0)]).unwrap();
    assert!(!a.ptr_eq(&a2));
    assert_eq!(reg.enums().index_of(&a2), ia);
    assert_eq!(reg.enums().len(), 2);
    // Indices never move.
    for k in 0..50 {
        reg.enums()
            .index_of(&Enumeration::new(format!("e{k}"), [("v", k)]).unwrap());
    }
    assert_eq!(reg.enums().index_of(&a), ia);
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
