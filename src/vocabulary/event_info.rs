//! Metadata of an event type and of an event source (MPI 4.1 §15.3.8,
//! §15.3.9): what `MPI_T_event_get_info` and `MPI_T_source_get_info`
//! return, and the rules that keep an event's record layout honest.

use super::datatype::Datatype;
use super::error::{Error, Result};
use super::kinds::{BindKind, SourceOrder, Verbosity};

/// The largest record an event type may have, in bytes. Records are copied
/// whole into fixed-size per-thread buffer entries when an event has to
/// wait for delivery, so the bound keeps the buffers preallocated.
pub const MAX_RECORD_BYTES: usize = 192;

/// Everything a tool may query about an event type
/// (`MPI_T_event_get_info`), plus its category and source.
///
/// Immutable once registered. The record a tool reads with
/// `MPI_T_event_read` / `MPI_T_event_copy` is `elements`: element `i` has
/// datatype `elements[i].0` at byte displacement `elements[i].1` of a
/// buffer of `extent` bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct EventInfo {
    /// Unique among event types.
    pub name: String,
    /// What the event means and what its elements are.
    pub description: String,
    /// Intended audience.
    pub verbosity: Verbosity,
    /// The kind of object its raises are bound to (`NoObject`: none).
    pub bind: BindKind,
    /// Datatype and byte displacement of each element of the record.
    pub elements: Vec<(Datatype, usize)>,
    /// Size in bytes of the whole record (`MPI_T_event_copy` writes this
    /// many bytes).
    pub extent: usize,
    /// Index of the source that timestamps its raises.
    pub source: usize,
    /// The category it belongs to, if any.
    pub category: Option<String>,
}

impl EventInfo {
    /// Checks the record layout: every element inside `extent`, elements
    /// not overlapping, `extent` at most [`MAX_RECORD_BYTES`], no `MPI_CHAR`
    /// (string) elements wider than one byte are implied.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.name.is_empty() || self.name.contains('\0') {
            return Err(Error::refused(format!(
                "event name {:?} must be non-empty and free of NUL",
                self.name
            )));
        }
        if self.extent > MAX_RECORD_BYTES {
            return Err(Error::refused(format!(
                "event '{}': record of {} bytes is larger than the {MAX_RECORD_BYTES} bytes \
                 an event record may have",
                self.name, self.extent
            )));
        }
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(self.elements.len());
        for (i, &(dt, disp)) in self.elements.iter().enumerate() {
            let end = disp.checked_add(dt.size());
            if end.is_none_or(|end| end > self.extent) {
                return Err(Error::refused(format!(
                    "event '{}': element {i} ({dt} at byte {disp}) does not fit in the \
                     {}-byte record",
                    self.name, self.extent
                )));
            }
            let end = disp + dt.size();
            if let Some(&(a, b)) = spans.iter().find(|&&(a, b)| disp < b && a < end) {
                return Err(Error::refused(format!(
                    "event '{}': element {i} (bytes {disp}..{end}) overlaps bytes {a}..{b} \
                     of an earlier element",
                    self.name
                )));
            }
            spans.push((disp, end));
        }
        Ok(())
    }
}

/// Everything a tool may query about an event source
/// (`MPI_T_source_get_info`).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceInfo {
    /// Unique among sources.
    pub name: String,
    /// What the source counts.
    pub description: String,
    /// Whether its timestamps are ordered.
    pub ordering: SourceOrder,
    /// Ticks per second of its timestamps.
    pub ticks_per_second: u64,
    /// The largest timestamp before it wraps to 0.
    pub max_ticks: u64,
}
