//! The final report: every figure in one serialisable value, printed as
//! text or as one JSON document.

use std::collections::BTreeMap;

use serde::Serialize;

use super::sampler::{Sample, Samples};
use super::tool::{EventCounts, Snapshot, V};
use super::vars::{COMM_WORLD, INBOX_DEEP, STATE_NAMES};
use super::view::{bytes, rate};
use super::workload::RunStats;
use crate::format::group;

#[derive(Debug, Serialize)]
pub struct Report {
    /// False when built with the `pvar_compile_out` cfg: every update is
    /// compiled to nothing and the variables stay at zero.
    pub instrumentation: bool,
    pub config: RunConfig,
    pub cvars: Vec<CvarValueOut>,
    pub totals: Totals,
    pub rates: Rates,
    pub queues: Queues,
    pub workers: Workers,
    pub per_peer: PerPeer,
    pub sampler: SamplerOut,
    pub events: EventsOut,
    pub overhead: Overhead,
    pub checks: Vec<Check>,
    /// All checks passed.
    pub ok: bool,
}

#[derive(Debug, Serialize)]
pub struct RunConfig {
    pub threads: usize,
    pub pattern: &'static str,
    pub duration_s: f64,
    pub elapsed_s: f64,
    pub message_size: u64,
    pub eager_limit: u64,
    pub eager_window: u64,
    pub protocol: &'static str,
    pub messages_per_burst: usize,
    /// Flow control: most messages an inbox holds before senders back off.
    pub queue_capacity: u64,
}

#[derive(Debug, Serialize)]
pub struct CvarValueOut {
    pub name: String,
    pub value: String,
    /// The environment variable the value came from, if any.
    pub from_env: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Totals {
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Sum of the inbox depths (LEVEL) at the end.
    pub messages_in_flight: u64,
    /// The callback variable's value at the end.
    pub messages_in_flight_callback: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub send_time_s: f64,
    pub recv_time_s: f64,
    /// What the workers counted themselves, in plain locals.
    pub workers_counted_sent: u64,
    pub workers_counted_received: u64,
}

#[derive(Debug, Serialize)]
pub struct Rates {
    pub messages_per_s: f64,
    pub bytes_per_s: f64,
    /// Time in send per message sent.
    pub send_ns_per_msg: f64,
    /// Time in receive (waiting included) per message received.
    pub recv_ns_per_msg: f64,
}

#[derive(Debug, Serialize)]
pub struct Queues {
    pub depth_final: Vec<u64>,
    pub high_watermark: Vec<u64>,
    pub low_watermark: Vec<u64>,
    pub high_watermark_max: u64,
}

#[derive(Debug, Serialize)]
pub struct Workers {
    pub state_final: Vec<String>,
    pub busy_final: Vec<f64>,
}

#[derive(Debug, Serialize)]
pub struct PerPeer {
    /// Handle value of the communicator the counts are bound to.
    pub comm: String,
    /// `demo_msgs_to_peer` on that communicator: messages sent to each peer.
    pub to_peer: Vec<u64>,
    /// `demo_msgs_matrix`: `matrix[i][j]` messages from worker i to j.
    pub matrix: Vec<Vec<u64>>,
}

#[derive(Debug, Serialize)]
pub struct SamplerOut {
    pub signal: &'static str,
    pub interval_us: u64,
    pub taken: u64,
    pub failed: u64,
    pub kept: usize,
    pub timeline: Vec<TimelineRow>,
}

#[derive(Debug, Serialize)]
pub struct TimelineRow {
    pub t_start: f64,
    pub t_end: f64,
    pub samples: usize,
    pub messages_per_s: f64,
    pub depth_mean: f64,
    pub depth_max: u64,
    pub in_flight_mean: f64,
    pub busy_mean: f64,
    /// Share of worker samples in each state.
    pub states: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize)]
pub struct Overhead {
    /// Best worker CPU ns per message of the hot loop without pvar calls.
    pub baseline_ns_per_msg: f64,
    /// Same loop with every pvar update (no tool attached).
    pub instrumented_ns_per_msg: f64,
    /// instrumented / baseline.
    pub ratio: f64,
    /// Worker CPU ns per message in the main run (live tool and sampler
    /// attached).
    pub main_run_ns_per_msg: f64,
    /// Wall-clock ns per message in the main run, all workers together.
    pub main_run_wall_ns_per_msg: f64,
    pub rounds: usize,
    pub seconds_per_round: f64,
}

/// The MPI 4 event of the run, as the tool's callback saw it.
#[derive(Debug, Serialize)]
pub struct EventsOut {
    pub event: &'static str,
    pub index: usize,
    /// Inbox depth at or above which a receive raises it.
    pub threshold: u64,
    /// Raises the workers counted themselves.
    pub raised_by_workers: u64,
    /// Callbacks the tool's registration received.
    pub delivered: u64,
    /// Deliveries its dropped handler heard of.
    pub dropped: u64,
    /// Deliveries the engine dropped, all registrations.
    pub engine_dropped: u64,
    /// Deepest inbox the callbacks read from the records.
    pub max_depth: u64,
}

impl EventsOut {
    /// The figures of the demo's event: what the tool saw, what the
    /// workers raised, at which threshold.
    pub fn new(seen: EventCounts, raised_by_workers: u64, threshold: u64) -> Self {
        Self {
            event: INBOX_DEEP,
            index: seen.index,
            threshold,
            raised_by_workers,
            delivered: seen.delivered,
            dropped: seen.dropped,
            engine_dropped: seen.engine_dropped,
            max_depth: seen.max_depth,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Everything the report is built from.
pub struct Inputs<'a> {
    pub config: RunConfig,
    pub cvars: Vec<CvarValueOut>,
    pub fin: &'a Snapshot,
    pub stats: RunStats,
    pub samples: &'a Samples,
    pub events: EventsOut,
    pub overhead: Overhead,
}

pub fn build(i: Inputs<'_>) -> Report {
    let s = i.fin;
    let n = i.config.threads;
    let elapsed = i.stats.elapsed.as_secs_f64().max(1e-9);
    let totals = Totals {
        messages_sent: s.u(V::Sent),
        messages_received: s.u(V::Recv),
        messages_in_flight: s.sum(V::Depth),
        messages_in_flight_callback: s.u(V::InFlight),
        bytes_sent: s.u(V::BytesSent),
        bytes_received: s.u(V::BytesRecv),
        send_time_s: s.f(V::SendTime),
        recv_time_s: s.f(V::RecvTime),
        workers_counted_sent: i.stats.sent,
        workers_counted_received: i.stats.received,
    };
    let rates = Rates {
        messages_per_s: totals.messages_sent as f64 / elapsed,
        bytes_per_s: totals.bytes_sent as f64 / elapsed,
        send_ns_per_msg: totals.send_time_s * 1e9 / totals.messages_sent.max(1) as f64,
        recv_ns_per_msg: totals.recv_time_s * 1e9 / totals.messages_received.max(1) as f64,
    };
    let queues = Queues {
        depth_final: s.elems(V::Depth).to_vec(),
        high_watermark: s.elems(V::Hwm).to_vec(),
        low_watermark: s.elems(V::Lwm).to_vec(),
        high_watermark_max: s.max(V::Hwm),
    };
    let workers = Workers {
        state_final: s
            .ints(V::State)
            .into_iter()
            .map(|x| {
                STATE_NAMES
                    .get(x as usize)
                    .copied()
                    .unwrap_or("?")
                    .to_string()
            })
            .collect(),
        busy_final: s.fs(V::Busy),
    };
    let m = s.elems(V::Matrix);
    let per_peer = PerPeer {
        comm: format!("{COMM_WORLD:#x}"),
        to_peer: s.elems(V::PerPeer).to_vec(),
        matrix: (0..n).map(|r| m[r * n..(r + 1) * n].to_vec()).collect(),
    };
    let sampler = SamplerOut {
        signal: "SIGPROF",
        interval_us: i.samples.interval.as_micros() as u64,
        taken: i.samples.taken,
        failed: i.samples.failed,
        kept: i.samples.samples.len(),
        timeline: timeline(&i.samples.samples, 10),
    };

    let size = i.config.message_size;
    let per_peer_sum: u64 = per_peer.to_peer.iter().sum();
    let matrix_sum: u64 = m.iter().sum();
    let t = &totals;
    let mut checks = vec![
        Check {
            name: "sent = received + in flight",
            ok: t.messages_sent == t.messages_received + t.messages_in_flight,
            detail: format!(
                "{} = {} + {}",
                t.messages_sent, t.messages_received, t.messages_in_flight
            ),
        },
        Check {
            name: "in flight (LEVEL) = in flight (callback)",
            ok: t.messages_in_flight == t.messages_in_flight_callback,
            detail: format!(
                "{} = {}",
                t.messages_in_flight, t.messages_in_flight_callback
            ),
        },
        Check {
            name: "bytes sent = messages sent x size",
            ok: t.bytes_sent == t.messages_sent * size,
            detail: format!("{} = {} x {}", t.bytes_sent, t.messages_sent, size),
        },
        Check {
            name: "bytes received = messages received x size",
            ok: t.bytes_received == t.messages_received * size,
            detail: format!("{} = {} x {}", t.bytes_received, t.messages_received, size),
        },
        Check {
            name: "per-peer sum = sent",
            ok: per_peer_sum == t.messages_sent,
            detail: format!("{per_peer_sum} = {}", t.messages_sent),
        },
        Check {
            name: "matrix sum = sent",
            ok: matrix_sum == t.messages_sent,
            detail: format!("{matrix_sum} = {}", t.messages_sent),
        },
        Check {
            name: "pvar totals = the workers' own counts",
            ok: t.messages_sent == t.workers_counted_sent
                && t.messages_received == t.workers_counted_received,
            detail: format!(
                "sent {} = {}, received {} = {}",
                t.messages_sent,
                t.workers_counted_sent,
                t.messages_received,
                t.workers_counted_received
            ),
        },
    ];
    let e = &i.events;
    checks.push(Check {
        name: "event callbacks = raises (+ drops)",
        ok: e.delivered + e.dropped == e.raised_by_workers,
        detail: format!(
            "{} delivered + {} dropped = {} raised",
            e.delivered, e.dropped, e.raised_by_workers
        ),
    });
    checks.push(Check {
        name: "the sampler's reads succeeded",
        ok: i.samples.failed == 0,
        detail: format!(
            "{} failed of {}",
            i.samples.failed,
            i.samples.taken + i.samples.failed
        ),
    });
    let instrumentation = pvar::INSTRUMENTED;
    if !instrumentation {
        // Built with `--cfg pvar_compile_out`: the variables exist but stay at zero.
        checks = vec![Check {
            name: "instrumentation compiled out: every value stays 0",
            ok: t.messages_sent == 0 && per_peer_sum == 0 && i.samples.failed == 0,
            detail: format!(
                "pvar says {} sent, the workers counted {}",
                t.messages_sent, t.workers_counted_sent
            ),
        }];
    }
    let ok = checks.iter().all(|c| c.ok);
    Report {
        instrumentation,
        config: i.config,
        cvars: i.cvars,
        totals,
        rates,
        queues,
        workers,
        per_peer,
        sampler,
        events: i.events,
        overhead: i.overhead,
        checks,
        ok,
    }
}

/// Condenses the samples into at most `rows` equal time slices.
fn timeline(samples: &[Sample], rows: usize) -> Vec<TimelineRow> {
    let Some(last) = samples.last() else {
        return Vec::new();
    };
    let t_end = last.t.max(1e-9);
    let step = t_end / rows as f64;
    let mut out = Vec::new();
    let mut base: Option<Sample> = None;
    let mut k = 0;
    for r in 0..rows {
        let hi = if r + 1 == rows {
            f64::INFINITY
        } else {
            step * (r + 1) as f64
        };
        let start = k;
        while k < samples.len() && samples[k].t < hi {
            k += 1;
        }
        let b = &samples[start..k];
        let (Some(first), Some(lastb)) = (b.first(), b.last()) else {
            continue;
        };
        let from = base.unwrap_or(*first);
        let dt = lastb.t - from.t;
        let mps = if dt > 0.0 {
            (lastb.sent - from.sent) as f64 / dt
        } else {
            f64::NAN
        };
        let len = b.len() as f64;
        let mut states = BTreeMap::new();
        let workers: f64 = b
            .iter()
            .map(|s| s.states.iter().map(|&c| c as f64).sum::<f64>())
            .sum();
        for (v, name) in STATE_NAMES.iter().enumerate() {
            let c: f64 = b.iter().map(|s| s.states[v] as f64).sum();
            if c > 0.0 {
                states.insert(name.to_string(), c / workers.max(1.0));
            }
        }
        out.push(TimelineRow {
            t_start: step * r as f64,
            t_end: if r + 1 == rows {
                t_end
            } else {
                step * (r + 1) as f64
            },
            samples: b.len(),
            messages_per_s: if mps.is_finite() { mps } else { 0.0 },
            depth_mean: b.iter().map(|s| s.depth as f64).sum::<f64>() / len,
            depth_max: b.iter().map(|s| s.depth_max).max().unwrap_or(0),
            in_flight_mean: b.iter().map(|s| s.in_flight as f64).sum::<f64>() / len,
            busy_mean: b.iter().map(|s| s.busy).sum::<f64>() / len,
            states,
        });
        base = Some(*lastb);
    }
    out
}

fn mark(ok: bool) -> &'static str {
    if ok { "ok  " } else { "FAIL" }
}

fn vec_str<T>(xs: &[T], f: impl Fn(&T) -> String) -> String {
    xs.iter().map(f).collect::<Vec<_>>().join(" ")
}

/// The report as text.
pub fn print_text(r: &Report) {
    let c = &r.config;
    let t = &r.totals;
    let proto = if c.protocol == "eager" {
        format!(
            "eager (limit {} B, bursts of {})",
            c.eager_limit, c.eager_window
        )
    } else {
        format!("rendezvous (above the {} B eager limit)", c.eager_limit)
    };
    println!("pvar demo report");
    if !r.instrumentation {
        println!(
            "  note       built with the pvar_compile_out cfg: every pvar update compiles to nothing, values stay 0"
        );
    }
    println!(
        "  run        {} workers, {}, {:.2} s, {} B messages, {proto}",
        c.threads, c.pattern, c.elapsed_s, c.message_size
    );
    println!(
        "  cvars      {}",
        r.cvars
            .iter()
            .map(|v| match &v.from_env {
                Some(e) => format!("{} = {} (from {e})", v.name, v.value),
                None => format!("{} = {}", v.name, v.value),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("totals (one tool session, handles started before the run)");
    println!(
        "  messages   sent {}  received {}  in flight {} (callback says {})",
        group(t.messages_sent),
        group(t.messages_received),
        group(t.messages_in_flight),
        group(t.messages_in_flight_callback)
    );
    println!(
        "  bytes      sent {}  received {}",
        bytes(t.bytes_sent as f64),
        bytes(t.bytes_received as f64)
    );
    println!(
        "  time       in send {:.3} s ({:.0} ns/msg)  in receive {:.3} s ({:.0} ns/msg, waiting included)",
        t.send_time_s, r.rates.send_ns_per_msg, t.recv_time_s, r.rates.recv_ns_per_msg
    );
    println!(
        "  rates      {} msg/s  {}/s",
        rate(r.rates.messages_per_s),
        bytes(r.rates.bytes_per_s)
    );
    let q = &r.queues;
    println!(
        "  queues     depth at end [{}]  high watermark [{}] (max {}; senders back off at {})  low watermark [{}]",
        vec_str(&q.depth_final, |x| x.to_string()),
        vec_str(&q.high_watermark, |x| x.to_string()),
        q.high_watermark_max,
        c.queue_capacity,
        vec_str(&q.low_watermark, |x| x.to_string())
    );
    println!(
        "  workers    state [{}]  busy [{}]",
        vec_str(&r.workers.state_final, |s| s.clone()),
        vec_str(&r.workers.busy_final, |p| format!("{:.0}%", p * 100.0))
    );
    println!(
        "per-peer messages (demo_msgs_matrix: row = sender, column = receiver; last row: demo_msgs_to_peer bound to the communicator)"
    );
    let w = r
        .per_peer
        .matrix
        .iter()
        .flatten()
        .chain(&r.per_peer.to_peer)
        .map(|x| group(*x).len())
        .max()
        .unwrap_or(1)
        .max(4);
    let mut head = format!("  {:>14}", "");
    for j in 0..c.threads {
        head.push_str(&format!(" {:>w$}", format!("w{j}")));
    }
    println!("{head}");
    for (i, row) in r.per_peer.matrix.iter().enumerate() {
        let mut line = format!("  {:>14}", format!("w{i}"));
        for x in row {
            line.push_str(&format!(
                " {:>w$}",
                if *x == 0 { "-".into() } else { group(*x) }
            ));
        }
        println!("{line}");
    }
    let mut line = format!("  {:>14}", format!("to peer {}", r.per_peer.comm));
    for x in &r.per_peer.to_peer {
        line.push_str(&format!(" {:>w$}", group(*x)));
    }
    println!("{line}");
    let s = &r.sampler;
    println!(
        "sampled timeline ({} every {} us: {} samples, {} failed, {} kept)",
        s.signal,
        s.interval_us,
        group(s.taken),
        s.failed,
        s.kept
    );
    println!(
        "  {:>11} {:>7} {:>12} {:>6} {:>5} {:>9} {:>5}  states (share of worker samples)",
        "t (s)", "samples", "msg/s", "depth", "max", "in flight", "busy"
    );
    for row in &s.timeline {
        println!(
            "  {:>11} {:>7} {:>12} {:>6.1} {:>5} {:>9.1} {:>4.0}%  {}",
            format!("{:.2}-{:.2}", row.t_start, row.t_end),
            row.samples,
            rate(row.messages_per_s),
            row.depth_mean,
            row.depth_max,
            row.in_flight_mean,
            row.busy_mean * 100.0,
            row.states
                .iter()
                .filter(|(_, v)| **v >= 0.005)
                .map(|(k, v)| format!("{k} {:.0}%", v * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let e = &r.events;
    println!(
        "events (MPI 4: {} raised when a receive finds its inbox at depth >= {}; a THREAD_SAFE callback counts)",
        e.event, e.threshold
    );
    println!(
        "  raised {}  delivered {}  dropped {}  deepest inbox seen {}",
        group(e.raised_by_workers),
        group(e.delivered),
        group(e.dropped),
        e.max_depth
    );
    let o = &r.overhead;
    println!(
        "overhead of instrumentation (worker CPU time per message, same hot loop, best of {} rounds of {:.2} s)",
        o.rounds, o.seconds_per_round
    );
    println!(
        "  without pvar calls {:.0} ns/msg   with pvar calls {:.0} ns/msg   ratio {:.2}",
        o.baseline_ns_per_msg, o.instrumented_ns_per_msg, o.ratio
    );
    println!(
        "  main run with the live tool and the sampler attached: {:.0} ns/msg CPU, {:.0} ns/msg wall clock",
        o.main_run_ns_per_msg, o.main_run_wall_ns_per_msg
    );
    println!("checks");
    for ch in &r.checks {
        println!("  {} {:<42} {}", mark(ch.ok), ch.name, ch.detail);
    }
}
