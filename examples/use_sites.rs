//! A component instrumented where it works: each `pvar::counter!`,
//! `aggregate!`, `level!`, `high_watermark!` and `timer!` call declares its
//! variable in the global registry on first use and keeps, per thread, a
//! cached cell, so the steady-state update costs about a thread-local
//! `+= 1`. A tool reads the same variables through a session.
//!
//! `cargo run --release --example use_sites`

use std::collections::VecDeque;

/// The component: a queue that workers push messages into and drain.
fn send(queue: &mut VecDeque<Vec<u8>>, peer: usize, msg: Vec<u8>) {
    pvar::counter!(
        "ex_msgs_sent",
        count = 4,
        description = "messages sent, per peer"
    )
    .inc_at(peer);
    pvar::aggregate!("ex_bytes_sent", description = "payload bytes sent").add(msg.len() as u64);
    queue.push_back(msg);
    pvar::level!("ex_queue_depth", description = "messages queued").inc();
    pvar::high_watermark!("ex_queue_peak", description = "deepest queue seen")
        .update(queue.len() as u64);
}

fn drain(queue: &mut VecDeque<Vec<u8>>) -> u64 {
    let _t = pvar::timer!("ex_drain_time", description = "time spent draining").scoped();
    let mut sum = 0u64;
    while let Some(m) = queue.pop_front() {
        pvar::level!("ex_queue_depth", description = "messages queued").dec();
        sum += m.iter().map(|&b| b as u64).sum::<u64>();
    }
    sum
}

fn main() {
    // A tool's session on the global registry, started before the work.
    let reg = pvar::global();
    // Registers the variables now (first use), so the tool can find them.
    let sent = pvar::counter!(
        "ex_msgs_sent",
        count = 4,
        description = "messages sent, per peer"
    );
    let peak = pvar::high_watermark!("ex_queue_peak", description = "deepest queue seen");
    let session = reg.session().unwrap();
    let sent_h = session
        .handle(sent.index())
        .unwrap()
        .typed::<u64>()
        .unwrap();
    let peak_h = session
        .handle(peak.index())
        .unwrap()
        .typed::<u64>()
        .unwrap();
    session.start_all().unwrap();

    let workers: Vec<_> = (0..4)
        .map(|w| {
            std::thread::spawn(move || {
                let mut queue = VecDeque::new();
                let mut checksum = 0;
                for i in 0..100_000usize {
                    send(&mut queue, (w + i) % 4, vec![w as u8; 16 + i % 32]);
                    if i % (8 + w) == 0 {
                        checksum += drain(&mut queue);
                    }
                }
                checksum + drain(&mut queue)
            })
        })
        .collect();
    for w in workers {
        std::hint::black_box(w.join().unwrap());
    }

    let mut per_peer = [0u64; 4];
    sent_h.read_into(&mut per_peer).unwrap();
    println!("messages per peer (tool session): {per_peer:?}");
    println!(
        "queue peak (tool session):        {}",
        peak_h.read().unwrap()
    );
    println!(
        "bytes sent (component):           {}",
        pvar::aggregate!("ex_bytes_sent", description = "payload bytes sent").get()
    );
    println!(
        "drain time (component):           {:.6} s",
        pvar::timer!("ex_drain_time", description = "time spent draining").get_seconds()
    );
    assert_eq!(
        per_peer.iter().sum::<u64>(),
        400_000,
        "exact across threads"
    );
    assert_eq!(
        pvar::level!("ex_queue_depth", description = "messages queued").get(),
        0
    );
}
