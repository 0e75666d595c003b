//! Metadata of a control variable (`MPI_T_cvar_get_info`), kept apart
//! from its value.

use super::datatype::Datatype;
use super::enumeration::Enumeration;
use super::kinds::{BindKind, Scope, Verbosity};

/// Everything the standard lets a tool query about a control variable
/// (`MPI_T_cvar_get_info`), plus its category and environment names.
/// Immutable once registered.
#[derive(Debug, Clone, PartialEq)]
pub struct CvarInfo {
    /// Unique among control variables.
    pub name: String,
    /// The datatype a tool reads and writes.
    pub datatype: Datatype,
    /// Intended audience and detail.
    pub verbosity: Verbosity,
    /// Optional enumeration (only with `MPI_INT`), registered with the
    /// variable; its `MPI_T_enum` index comes from
    /// [`Enumerations::index_of`](crate::Enumerations::index_of).
    pub enumeration: Option<Enumeration>,
    /// Free text; should say what the scope requires of writers.
    pub description: String,
    /// Kind of object a handle must be bound to.
    pub bind: BindKind,
    /// Where and when the variable may be changed.
    pub scope: Scope,
    /// Name of the category the variable belongs to, if any.
    pub category: Option<String>,
    /// Environment variables that override the default, in ascending
    /// priority (the last one set wins).
    pub env: Vec<String>,
}
