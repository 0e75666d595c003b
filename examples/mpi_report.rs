//! A Rust MPI program that counts its own messages with pvar variables
//! and prints the cross-rank report at the end (feature `rsmpi`).
//!
//! Every rank passes messages around a ring — rank `r` sends
//! `1 KiB × (r + 1)` to rank `r + 1` — counting them in a COUNTER, an
//! AGGREGATE, per-destination arrays (shown as rank × rank matrices), a
//! TIMER and a HIGHWATERMARK; the collectives it calls are counted per
//! communicator (`MPI_COMM_WORLD` and the even / odd halves of it). At the
//! end the ranks' partial reports are reduced to rank 0, which prints the
//! text report and, given a path, writes the JSON one there.
//!
//! ```text
//! cargo build --features rsmpi --example mpi_report
//! mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2 \
//!     target/debug/examples/mpi_report [report.json]
//! ```

use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive_into;
use mpi::topology::Color;
use mpi::traits::*;
use pvar::report::{Collector, ReportOptions};
use pvar::{BindKind, Registry};

/// Messages each rank sends around the ring.
const ROUNDS: usize = 100;

/// Objects of the bound variable: our own numbers for the communicators.
const WORLD: u64 = 1;
const HALF: u64 = 2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = mpi::initialize().ok_or("MPI is already initialised")?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());

    // This program's variables, in a registry of its own.
    let reg = Registry::new();
    reg.categories()
        .define("ring", "messages passed around the ring")?;
    reg.categories()
        .define("ring_peer", "per destination rank: shown as matrices")?;
    let msgs = reg
        .counter("ring_msgs")
        .description("messages sent around the ring")
        .category("ring")
        .register()?;
    let bytes = reg
        .aggregate::<u64>("ring_bytes")
        .description("bytes sent around the ring")
        .category("ring")
        .register()?;
    let peer_msgs = reg
        .counter("ring_peer_msgs")
        .description("messages sent to each rank (element = destination rank)")
        .count(size as usize)
        .category("ring_peer")
        .register()?;
    let peer_bytes = reg
        .aggregate::<u64>("ring_peer_bytes")
        .description("bytes sent to each rank (element = destination rank)")
        .count(size as usize)
        .category("ring_peer")
        .register()?;
    let exchange_time = reg
        .timer("ring_exchange_time")
        .description("time in MPI_Sendrecv")
        .category("ring")
        .register()?;
    let peak = reg
        .high_watermark::<u64>("ring_message_peak_bytes")
        .description("largest message sent")
        .category("ring")
        .register()?;
    let coll_calls = reg
        .counter("ring_coll_calls")
        .description("collective calls per communicator")
        .bind(BindKind::Comm)
        .category("ring")
        .register_bound()?;
    // Marks and wall time from here on.
    let mut collector = Collector::new(&reg);

    let half = world
        .split_by_color(Color::with_value(rank % 2))
        .ok_or("MPI_Comm_split gave no communicator")?;
    let world_calls = coll_calls.create_instance(WORLD, 1)?;
    let half_calls = coll_calls.create_instance(HALF, 1)?;

    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let out = vec![rank as u8; 1024 * (rank as usize + 1)];
    let mut inbox = vec![0u8; 1024 * (prev as usize + 1)];
    for _ in 0..ROUNDS {
        {
            let _t = exchange_time.scoped();
            send_receive_into(
                &out[..],
                &world.process_at_rank(next),
                &mut inbox[..],
                &world.process_at_rank(prev),
            );
        }
        msgs.inc();
        bytes.add(out.len() as u64);
        peer_msgs.inc_at(next as usize);
        peer_bytes.add_at(next as usize, out.len() as u64);
        peak.update(out.len() as u64);
    }
    if inbox.iter().any(|&b| b != prev as u8) {
        return Err("a ring message arrived damaged".into());
    }

    // A few collectives, counted per communicator.
    let mut sum = 0u64;
    world.all_reduce_into(&msgs.get(), &mut sum, SystemOperation::sum());
    world_calls.inc();
    world.barrier();
    world_calls.inc();
    let mut half_sum = 0u64;
    half.all_reduce_into(&bytes.get(), &mut half_sum, SystemOperation::sum());
    half_calls.inc();
    assert_eq!(sum, ROUNDS as u64 * size as u64);

    // Labels name the communicators alike on every rank, as the interposer
    // does: `comm[<world ranks>]`, runs of consecutive ranks as `a-b` — of
    // which a half (every other rank) has none.
    let members: Vec<String> = (0..size)
        .filter(|r| r % 2 == rank % 2)
        .map(|r| r.to_string())
        .collect();
    let labels = vec![
        (WORLD, "MPI_COMM_WORLD".to_string()),
        (HALF, format!("comm[{}]", members.join(","))),
    ];
    let report = pvar::report::rsmpi::reduce_with(
        &mut collector,
        &world,
        &labels,
        0,
        ReportOptions::default(),
    )?;
    if let Some(report) = report {
        report.write_text(&mut std::io::stdout().lock())?;
        if let Some(path) = std::env::args_os().nth(1) {
            // Written beside the target, then renamed over it: whole.
            report.write_json_file(std::path::Path::new(&path))?;
            eprintln!("JSON report written to {}", path.to_string_lossy());
        }
    }
    Ok(())
}
