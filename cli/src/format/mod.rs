//! How the `pvar` command formats what it prints: numbers
//! ([`group`]), text from another process or a component made safe for a
//! terminal ([`terminal_safe`], [`terminal_safe_lines`]) or a web page
//! ([`html_escape`]), and aligned tables ([`Table`]). Every table cell
//! goes through [`terminal_safe`], so a name, label, description or value
//! that reaches a table cannot carry an escape sequence to the operator's
//! terminal; `pvar top` frames, error messages, `pvar export` on a
//! terminal and the page of `pvar serve` go through them too.

mod numbers;
mod table;
mod text;

pub use numbers::{group, group_signed, significant};
pub use table::{Col, Table};
pub use text::{html_escape, json_safe, shorten_middle, terminal_safe, terminal_safe_lines, width};
