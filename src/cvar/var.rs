//! A registered control variable: its metadata, value kind, starting
//! value, and the cells that hold its value (one, or one per bound object).

use super::types::sealed::{Init, ValueKind};
use super::value::CvarCell;
use crate::lockfree::var_table::Instances;
use crate::sync::{Arc, AtomicBool};
use crate::vocabulary::CvarInfo;

/// What backs a control variable's value.
pub(crate) enum CvarBody {
    /// One value for the process.
    Unbound(Arc<CvarCell>),
    /// One value per object instance, keyed by the object's handle value.
    Bound(Instances<Arc<CvarCell>>),
}

/// A registered control variable (its active flag is the table's).
pub(crate) struct CvarVar {
    pub(crate) info: CvarInfo,
    pub(crate) kind: ValueKind,
    /// Element count a handle reports: 1 for numbers, the capacity
    /// (including the NUL) for strings.
    pub(crate) count: usize,
    /// The default as declared.
    pub(crate) declared: Init,
    /// The starting value after environment overrides (also the value new
    /// bound instances start with).
    pub(crate) start: Init,
    /// The environment variable the start value came from.
    pub(crate) source: Option<String>,
    /// Variable-wide freeze (for bound variables; unbound ones use their
    /// cell's flag).
    pub(crate) frozen: AtomicBool,
    pub(crate) body: CvarBody,
}
