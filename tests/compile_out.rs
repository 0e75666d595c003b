//! With the `pvar_compile_out` cfg, every update is a no-op: values stay 0
//! while registration still works.

#[cfg(pvar_compile_out)]
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

#[cfg(pvar_compile_out)]
#[test]
fn use_sites_compile_to_nothing() {
    for i in 0..3 {
        pvar::counter!("co_site_counter", count = 3).inc_at(i);
        pvar::aggregate!("co_site_sum": f64).add(1.5);
        pvar::level!("co_site_level").inc();
        pvar::high_watermark!("co_site_high").update(7);
        pvar::state!("co_site_state").set(2);
        pvar::timer!("co_site_timer").start();
        pvar::timer!("co_site_timer").stop();
    }
    assert_eq!(pvar::counter!("co_site_counter", count = 3).get_at(2), 0);
    assert_eq!(pvar::aggregate!("co_site_sum": f64).get(), 0.0);
    assert_eq!(pvar::level!("co_site_level").get(), 0);
    assert_eq!(pvar::high_watermark!("co_site_high").handle().level(), 0);
    assert_eq!(pvar::state!("co_site_state").get(), 0);
    assert_eq!(pvar::timer!("co_site_timer").get_seconds(), 0.0);
}

#[cfg(not(pvar_compile_out))]
#[test]
fn updates_take_effect_without_the_feature() {
    let reg = pvar::Registry::new();
    let c = reg.counter("c").register().unwrap();
    c.add(10);
    assert_eq!(c.get(), 10);
    pvar::counter!("co_site_counter").add(10);
    assert_eq!(pvar::counter!("co_site_counter").get(), 10);
}
