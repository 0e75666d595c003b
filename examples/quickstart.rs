//! Registers a few variables, updates them from several threads and prints
//! their values, as the component sees them and as a tool's session does:
//! the engine in fifty lines.

use pvar::{Enumeration, Registry};

fn main() {
    let reg = Registry::new();
    let sent = reg
        .counter("msgs_sent")
        .description("messages sent")
        .register()
        .unwrap();
    let bytes = reg.aggregate::<u64>("bytes_sent").register().unwrap();
    let busy = reg.timer("busy_time").register().unwrap();
    let queue = reg.level::<u64>("queue_len").register().unwrap();
    let states = Enumeration::new("phase", [("idle", 0), ("working", 1)]).unwrap();
    let phase = reg
        .state("phase")
        .enumeration(states.clone())
        .register()
        .unwrap();

    // A tool's session: typed handles that free themselves when dropped.
    // Non-continuous handles count from their start.
    let session = reg.session().unwrap();
    let sent_h = session
        .handle(sent.index())
        .unwrap()
        .typed::<u64>()
        .unwrap();
    let busy_h = session
        .handle(busy.index())
        .unwrap()
        .typed::<f64>()
        .unwrap();
    sent.add(7); // before the start: the component sees it, the session will not
    session.start_all().unwrap();

    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (sent, bytes, busy, queue) =
                (sent.clone(), bytes.clone(), busy.clone(), queue.clone());
            std::thread::spawn(move || {
                for i in 0..250_000u64 {
                    let _t = busy.scoped();
                    queue.inc();
                    sent.inc();
                    bytes.add(64 + (i + w) % 64);
                    queue.dec();
                }
            })
        })
        .collect();
    phase.set(1);
    for w in workers {
        w.join().unwrap();
    }
    phase.set(0);

    println!("{:<12} {:>14}", "variable", "value");
    println!("{:<12} {:>14}", "msgs_sent", sent.get());
    println!("{:<12} {:>14}", "bytes_sent", bytes.get());
    println!("{:<12} {:>14.6} s", "busy_time", busy.get_seconds());
    println!("{:<12} {:>14}", "queue_len", queue.get());
    println!(
        "{:<12} {:>14}",
        "phase",
        states.name_of(phase.get()).unwrap_or("?")
    );
    println!();
    println!("{:<12} {:>14}", "tool session", "since start");
    println!("{:<12} {:>14}", "msgs_sent", sent_h.read().unwrap());
    println!("{:<12} {:>14.6} s", "busy_time", busy_h.read().unwrap());
    assert_eq!(sent.get(), 1_000_007, "exact across threads");
    assert_eq!(sent_h.read().unwrap(), 1_000_000, "counted from the start");
}
