//! The outside view: `pvar read`, `pvar top`, `pvar export` and
//! `pvar serve` read the variables of *another* process through the
//! shared-memory region its exporter publishes (see [`pvar::export`]);
//! the process opts in with `PVAR_EXPORT=1` (or calls
//! `pvar::export::Exporter::start`; `pvar demo` does by default).
//!
//! - `open`: opening a process's region with messages that say what to
//!   do about a failure, telling "the process ended" apart from other
//!   errors, listing the processes that export;
//! - `values`: a snapshot's values as every command shows them (numbers,
//!   STATE item names, bound objects);
//! - `json`: the JSON form of a snapshot (`pvar read --json`,
//!   `pvar export --format json`), a documented, versioned schema;
//! - `read`: one snapshot as a table or JSON, or the list of processes
//!   that export;
//! - `top`: the live view;
//! - `export`: one snapshot as OpenMetrics or Prometheus text, or JSON;
//! - `serve`: an HTTP server for Prometheus scrapes, of one process or
//!   of every process of the user.

pub mod export;
pub mod json;
pub mod open;
pub mod read;
pub mod serve;
pub mod top;
pub mod values;

pub use open::{Res, open, read};
