//! Hot storage: where component updates land and tool reads merge from.
//!
//! - [`cells`]: per-thread sharded cells (summed classes), with a safe
//!   [`CellRange`](cells::CellRange) as the only way out;
//! - [`storage`]: how each class keeps its values (per-thread cells, one
//!   shared value, a watermark store, callbacks);
//! - [`clock`]: the calibrated timer clock.
//!
//! Uses [`crate::sync`], [`crate::lockfree`] and [`crate::vocabulary`].

pub(crate) mod cells;
pub mod clock;
pub(crate) mod storage;
