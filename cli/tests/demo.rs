//! Runs the `pvar` binary: `pvar demo --json` briefly, checking that its
//! totals are consistent, and `pvar list --json`.
//!
//! The demo runs for a wall-clock duration, but what it does in that time
//! depends on the machine: its workers may hardly be scheduled, and its
//! `SIGPROF` sampler (`ITIMER_PROF`) fires per 2 ms of *CPU* time, which a
//! loaded machine hands out slowly. So the checks are in two parts: every
//! run's figures must be consistent (the engine's guarantees, whatever was
//! sent), and a run that made too little progress to show anything (no
//! message sent, no sample taken, no overhead figure) is repeated with
//! twice the duration, up to [`ATTEMPTS`] times, before the test fails.

use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pvar"))
        .args(args)
        .output()
        .expect("run the pvar binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pvar {args:?} failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{stdout}"))
}

fn u(v: &Value, path: &str) -> u64 {
    v.pointer(path)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{path} is not an unsigned integer in {v}"))
}

/// Demo runs tried before giving up, each twice as long as the previous.
const ATTEMPTS: u32 = 6;

/// Runs `pvar demo --json --duration D <args>` with D = `duration`, then
/// twice as long, and so on, until a run made enough progress (see the
/// module docs); checks every run with `check_demo`. Returns the report of
/// the run that made progress.
fn demo_until_progress(duration: f64, args: &[&str], threads: u64, size: u64) -> Value {
    let mut short = Vec::new();
    let mut d = duration;
    for _ in 0..ATTEMPTS {
        let ds = d.to_string();
        let mut all = vec!["demo", "--duration", &ds, "--json"];
        all.extend_from_slice(args);
        let r = run(&all);
        match check_demo(&r, threads, size) {
            Ok(()) => return r,
            Err(why) => short.push(format!("{d} s: {why}")),
        }
        d *= 2.0;
    }
    panic!("no demo run made enough progress to check: {short:?}");
}

/// Checks one demo report: its figures are consistent, whatever the run
/// did (panics otherwise); then `Err` if the run made too little progress
/// to show anything (nothing sent, no sample, no overhead figure).
fn check_demo(r: &Value, threads: u64, size: u64) -> Result<(), String> {
    assert_eq!(u(r, "/config/threads"), threads);
    assert_eq!(u(r, "/config/message_size"), size);
    if r["instrumentation"] == Value::Bool(false) {
        // Built with `--cfg pvar_compile_out`: the variables exist and stay at zero.
        assert_eq!(u(r, "/totals/messages_sent"), 0);
        assert_eq!(r["ok"], Value::Bool(true), "{}", r["checks"]);
        if u(r, "/totals/workers_counted_sent") == 0 {
            return Err("the workers sent nothing".into());
        }
        return Ok(());
    }
    let sent = u(r, "/totals/messages_sent");
    let received = u(r, "/totals/messages_received");
    let in_flight = u(r, "/totals/messages_in_flight");
    assert_eq!(sent, received + in_flight, "sent = received + in flight");
    assert_eq!(in_flight, u(r, "/totals/messages_in_flight_callback"));
    assert_eq!(
        u(r, "/totals/bytes_sent"),
        sent * size,
        "bytes = messages x size"
    );
    assert_eq!(u(r, "/totals/bytes_received"), received * size);
    // Exact totals: the pvars agree with the workers' own plain counts.
    assert_eq!(sent, u(r, "/totals/workers_counted_sent"));
    assert_eq!(received, u(r, "/totals/workers_counted_received"));

    let to_peer: Vec<u64> = r["per_peer"]["to_peer"]
        .as_array()
        .expect("per-peer counts")
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(to_peer.len() as u64, threads, "one element per peer");
    assert_eq!(to_peer.iter().sum::<u64>(), sent, "per-peer sum = sent");
    let matrix = r["per_peer"]["matrix"].as_array().expect("matrix");
    assert_eq!(matrix.len() as u64, threads);
    let mut total = 0;
    for (i, row) in matrix.iter().enumerate() {
        let row: Vec<u64> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        if threads > 1 {
            assert_eq!(row[i], 0, "a worker never sends to itself");
        }
        total += row.iter().sum::<u64>();
    }
    assert_eq!(total, sent, "matrix sum = sent");
    for (j, col) in to_peer.iter().enumerate() {
        let s: u64 = matrix.iter().map(|row| row[j].as_u64().unwrap()).sum();
        assert_eq!(s, *col, "column {j} of the matrix = messages to peer {j}");
    }

    // The MPI 4 event: every raise reached the tool's callback or its
    // dropped handler; the records carried depths at the threshold or above.
    let raised = u(r, "/events/raised_by_workers");
    assert_eq!(
        u(r, "/events/delivered") + u(r, "/events/dropped"),
        raised,
        "event deliveries + drops = raises"
    );
    if u(r, "/events/delivered") > 0 {
        assert!(u(r, "/events/max_depth") >= u(r, "/events/threshold"));
        // Senders test the depth before adding: each may overshoot by one.
        assert!(u(r, "/events/max_depth") <= u(r, "/config/queue_capacity") + threads);
    }
    if sent > 0 {
        // A sent message was in its peer's inbox, at depth 1 at least.
        assert!(u(r, "/queues/high_watermark_max") >= 1);
    }
    assert_eq!(
        u(r, "/sampler/failed"),
        0,
        "the signal handler's reads failed"
    );
    assert_eq!(
        r["ok"],
        Value::Bool(true),
        "the demo's own checks: {}",
        r["checks"]
    );
    // Progress: something to see.
    if sent == 0 {
        return Err("no message sent".into());
    }
    if u(r, "/sampler/taken") == 0 {
        return Err("no SIGPROF sample taken".into());
    }
    // The overhead runs are separate: a ratio needs messages in both.
    // Serialised as null when not finite.
    match r["overhead"]["ratio"].as_f64() {
        Some(ratio) if ratio.is_finite() => {
            assert!(ratio > 0.0, "overhead ratio {ratio}");
            Ok(())
        }
        _ => Err(format!("no overhead ratio: {}", r["overhead"])),
    }
}

#[test]
fn demo_json_totals_are_consistent() {
    let r = demo_until_progress(1.0, &["--threads", "3"], 3, 256);
    assert_eq!(r["config"]["protocol"], "eager");
}

#[test]
fn demo_rendezvous_with_large_messages() {
    let r = demo_until_progress(
        0.5,
        &["--threads", "2", "--message-size", "10000"],
        2,
        10000,
    );
    assert_eq!(r["config"]["protocol"], "rendezvous");
    assert_eq!(u(&r, "/config/messages_per_burst"), 1);
}

#[test]
fn list_json_has_every_kind_of_entry() {
    let l = run(&["list", "--json"]);
    let names = |key: &str| -> Vec<String> {
        l[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} missing"))
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_string())
            .collect()
    };
    let pvars = names("pvars");
    for n in [
        "demo_msgs_sent",
        "demo_bytes_sent",
        "demo_send_time",
        "demo_queue_depth",
        "demo_queue_depth_hwm",
        "demo_queue_depth_lwm",
        "demo_worker_state",
        "demo_worker_busy",
        "demo_msgs_to_peer",
        "demo_msgs_in_flight",
        "pvar_engine_sessions",
    ] {
        assert!(pvars.contains(&n.to_string()), "pvar {n} not listed");
    }
    let cvars = names("cvars");
    for n in [
        "demo_message_size",
        "demo_eager_limit",
        "PVAR_ENGINE_VERSION",
    ] {
        assert!(cvars.contains(&n.to_string()), "cvar {n} not listed");
    }
    assert!(names("categories").contains(&"demo_traffic".to_string()));
    let events = names("events");
    for n in [
        "demo_inbox_deep",
        "pvar_engine_handle_alloc",
        "pvar_engine_handle_free",
    ] {
        assert!(events.contains(&n.to_string()), "event {n} not listed");
    }
    let deep = l["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "demo_inbox_deep")
        .unwrap();
    assert_eq!(deep["elements"][0][0], "UNSIGNED_LONG_LONG");
    assert_eq!(deep["elements"][1][0], "INT");
    assert_eq!(deep["extent"].as_u64(), Some(16));
    assert_eq!(names("sources")[0], "pvar_monotonic");
    let queues = l["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "demo_queues")
        .unwrap();
    assert!(
        queues["events"]
            .as_array()
            .unwrap()
            .contains(&serde_json::Value::from("demo_inbox_deep")),
        "the category lists its event"
    );
    let enums = l["enumerations"].as_array().unwrap();
    let states = enums
        .iter()
        .find(|e| e["name"] == "demo_worker_state")
        .expect("the worker-state enumeration");
    assert!(states["items"].as_array().unwrap().len() >= 5);
    let peer = l["pvars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "demo_msgs_to_peer")
        .unwrap();
    assert_eq!(peer["bind"], "MPI_COMM");
    assert_eq!(peer["count"], serde_json::Value::Null);
    assert_eq!(peer["per_object_count"], true);
    let matrix = l["pvars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "demo_msgs_matrix")
        .unwrap();
    assert_eq!(
        matrix["count"].as_u64(),
        Some(16),
        "a number: 4 workers squared"
    );
    assert_eq!(matrix["per_object_count"], false);
}
