//! Rust API operation sequences (component updates, sessions, handles,
//! start/stop/read/write/reset/readreset, ALL_HANDLES forms, stale, freed,
//! foreign and made-up keys; engine, GENERIC and callback variables; two
//! registries, each given the other's keys) replayed against the engine and
//! the reference model of `tests/model/`; any disagreement or crash is a
//! finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/model/mod.rs"]
mod model;

fuzz_target!(|data: &[u8]| {
    model::harness::run_bytes(data, 512);
});
