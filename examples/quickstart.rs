//! Registers a few variables, updates them from several threads and prints
//! their values: the engine in thirty lines.

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
    assert_eq!(sent.get(), 1_000_000, "exact across threads");
}
