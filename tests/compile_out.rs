//! With the `compile-out` feature, every update is a no-op: values stay 0
//! while registration still works.

#[cfg(feature = "compile-out")]
#[test]
fn updates_compile_to_nothing() {
    let reg = pvar::Registry::new();
    let c = reg.counter("c").register().unwrap();
    let a = reg.aggregate::<f64>("a").register().unwrap();
    let l = reg.level::<u64>("l").register().unwrap();
    let s = reg.state("s").register().unwrap();
    c.inc();
    c.add(10);
    a.add(1.5);
    l.inc();
    s.set(3);
    assert_eq!(c.get(), 0);
    assert_eq!(a.get(), 0.0);
    assert_eq!(l.get(), 0);
    assert_eq!(s.get(), 0);
    assert_eq!(reg.pvars().len(), 4);
}

#[cfg(not(feature = "compile-out"))]
#[test]
fn updates_take_effect_without_the_feature() {
    let reg = pvar::Registry::new();
    let c = reg.counter("c").register().unwrap();
    c.add(10);
    assert_eq!(c.get(), 10);
}
