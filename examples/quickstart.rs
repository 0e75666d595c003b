//! A component updates a few variables from several threads; a tool's
//! session reads them: the engine, both sides, on one page.
//!
//! The component declares its hot variables where it updates them, with
//! the use-site macros (in [`pvar::global`]): the first use registers the
//! variable, later ones are a thread-local access and the cell's update. A
//! variable with an enumeration (or any other metadata a macro does not
//! take) is registered once with the builder. The tool finds the variables
//! by name, as an MPI_T tool does.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```

use pvar::{Counter, Enumeration, PvarClass, SiteRef};

/// The component's message counter: one use site, called from `send` and
/// read back in `main`.
fn msgs_sent() -> SiteRef<Counter> {
    pvar::counter!("msgs_sent", description = "messages sent")
}

/// The component's hot path: one message sent.
fn send(payload: &[u8]) {
    let _busy = pvar::timer!("busy_time", description = "time spent sending").scoped();
    msgs_sent().inc();
    pvar::aggregate!("bytes_sent", description = "payload bytes sent").add(payload.len() as u64);
}

fn main() {
    let reg = pvar::global();
    let states = Enumeration::new("phase", [("idle", 0), ("working", 1)]).unwrap();
    let phase = reg
        .state("phase")
        .description("what the component is doing")
        .enumeration(states.clone())
        .register()
        .unwrap();

    // Before the tool starts: the component counts it, the session will
    // not. (This first use also registers the use sites' variables.)
    send(b"hello");

    // A tool's session: typed handles that free themselves when dropped;
    // non-continuous ones count from their start.
    let session = reg.session().unwrap();
    let handle = |name, class| session.handle(reg.pvars().index(name, class).unwrap());
    let sent_h = handle("msgs_sent", PvarClass::Counter).unwrap();
    let bytes_h = handle("bytes_sent", PvarClass::Aggregate).unwrap();
    let busy_h = handle("busy_time", PvarClass::Timer).unwrap();
    let phase_h = handle("phase", PvarClass::State).unwrap();
    let (sent_h, bytes_h) = (
        sent_h.typed::<u64>().unwrap(),
        bytes_h.typed::<u64>().unwrap(),
    );
    let (busy_h, phase_h) = (
        busy_h.typed::<f64>().unwrap(),
        phase_h.typed::<i32>().unwrap(),
    );
    session.start_all().unwrap();

    phase.set(1);
    let payload = [7u8; 128];
    let workers: Vec<_> = (0..4)
        .map(|w| {
            std::thread::spawn(move || {
                for i in 0..250_000usize {
                    send(&payload[..64 + (i + w) % 64]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let during = phase_h.read().unwrap();
    phase.set(0);

    println!(
        "{:<12} {:>14} {:>14}",
        "variable", "component", "tool session"
    );
    println!(
        "{:<12} {:>14} {:>14}",
        "msgs_sent",
        msgs_sent().get(),
        sent_h.read().unwrap()
    );
    println!(
        "{:<12} {:>14} {:>14}",
        "bytes_sent",
        "",
        bytes_h.read().unwrap()
    );
    println!(
        "{:<12} {:>14} {:>12.6} s",
        "busy_time",
        "",
        busy_h.read().unwrap()
    );
    println!(
        "{:<12} {:>14} {:>14}",
        "phase",
        states.name_of(phase.get()).unwrap_or("?"),
        states.name_of(during).unwrap_or("?")
    );
    assert_eq!(msgs_sent().get(), 1_000_001, "exact across threads");
    assert_eq!(sent_h.read().unwrap(), 1_000_000, "counted from the start");
}
