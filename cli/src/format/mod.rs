//! How the `pvar` command formats what it prints: numbers
//! ([`group`]), text from another process or a component made safe for a
//! terminal ([`terminal_safe`]), and aligned tables ([`Table`]). Every
//! table cell goes through [`terminal_safe`], so a name, label,
//! description or value that reaches a table cannot carry an escape
//! sequence to the operator's terminal.

mod numbers;
mod table;
mod text;

pub use numbers::{group, group_signed};
pub use table::{Col, Table};
pub use text::{shorten_middle, terminal_safe, width};
