//! A reference model of pvar's component and tool sides, and a harness
//! that replays one operation sequence against both the engine and the
//! model, asserting they agree on every value and every return code.
//!
//! Shared by the regular test suite (`tests/model_based.rs`, proptest) and
//! the fuzz target `fuzz/fuzz_targets/api_sequences.rs` (libFuzzer), which
//! includes this directory with `#[path]`.
//!
//! - [`spec`]: the model: plain `HashMap`/`Vec` state, one obviously-correct
//!   rule per operation (MPI 4.1 §15.3.7 and `docs/tool-guide.md`).
//! - [`ops`]: the operations, decodable from bytes with `arbitrary`.
//! - [`harness`]: applies each op to a [`pvar::Registry`] (with a mocked
//!   clock) and to the model and compares.

// Plain index loops read closest to the rules they state.
#![allow(dead_code, clippy::needless_range_loop)]

pub mod harness;
pub mod ops;
pub mod spec;
