//! Runs the `pvar` binary: `pvar demo --json` briefly, checking that its
//! totals are consistent, and `pvar list --json`.

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

fn check_demo(r: &Value, threads: u64, size: u64) {
    assert_eq!(u(r, "/config/threads"), threads);
    assert_eq!(u(r, "/config/message_size"), size);
    if r["instrumentation"] == Value::Bool(false) {
        // Built with `compile-out`: the variables exist and stay at zero.
        assert_eq!(u(r, "/totals/messages_sent"), 0);
        assert!(u(r, "/totals/workers_counted_sent") > 0);
        assert_eq!(r["ok"], Value::Bool(true), "{}", r["checks"]);
        return;
    }
    let sent = u(r, "/totals/messages_sent");
    let received = u(r, "/totals/messages_received");
    let in_flight = u(r, "/totals/messages_in_flight");
    assert!(sent > 0, "no message sent");
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

    assert!(u(r, "/queues/high_watermark_max") >= 1);
    assert_eq!(
        u(r, "/sampler/failed"),
        0,
        "the signal handler's reads failed"
    );
    assert!(u(r, "/sampler/taken") > 0, "no SIGPROF sample taken");
    let ratio = r["overhead"]["ratio"].as_f64().expect("overhead ratio");
    assert!(ratio.is_finite() && ratio > 0.0, "overhead ratio {ratio}");
    assert_eq!(
        r["ok"],
        Value::Bool(true),
        "the demo's own checks: {}",
        r["checks"]
    );
}

#[test]
fn demo_json_totals_are_consistent() {
    let r = run(&["demo", "--duration", "1", "--json", "--threads", "3"]);
    check_demo(&r, 3, 256);
    assert_eq!(r["config"]["protocol"], "eager");
}

#[test]
fn demo_rendezvous_with_large_messages() {
    let r = run(&[
        "demo",
        "--duration",
        "0.5",
        "--json",
        "--threads",
        "2",
        "--message-size",
        "10000",
    ]);
    check_demo(&r, 2, 10000);
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
    assert_eq!(peer["count"], "per object");
}
