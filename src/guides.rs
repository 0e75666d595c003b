//! The guides of `docs/`, rendered here so that they are read where the
//! API is, and so that their Rust examples run as doctests
//! (`cargo test --doc`).

#[doc = include_str!("../docs/component-guide.md")]
pub mod component {}

#[doc = include_str!("../docs/tool-guide.md")]
pub mod tool {}

#[doc = include_str!("../docs/events.md")]
pub mod events {}

#[doc = include_str!("../docs/export.md")]
pub mod export {}

// Rendered with the `metrics` feature, whose API its examples use.
#[cfg(feature = "metrics")]
#[doc = include_str!("../docs/metrics-recorder.md")]
pub mod metrics_recorder {}

#[doc = include_str!("../docs/mpi.md")]
pub mod mpi {}

#[doc = include_str!("../docs/signal-safety.md")]
pub mod signal_safety {}

#[doc = include_str!("../docs/design.md")]
pub mod design {}

#[doc = include_str!("../docs/c-interface.md")]
pub mod c_interface {}

#[doc = include_str!("../docs/benchmarks.md")]
pub mod benchmarks {}
