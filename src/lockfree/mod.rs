//! Lock-free structures, each written once and used by every floor above:
//!
//! - [`append_vec`]: an append-only vector whose elements never move, read
//!   without locks (variables, records, slots);
//! - [`recycler`]: an append vector with a free list of indices (slots,
//!   session handle lists, watermark subscriptions);
//! - [`index_stack`]: a lock-free stack of indices linked through the
//!   elements (the slot table's free lists);
//! - [`slot_table`]: the generation-checked slot table behind every key a
//!   tool holds (sessions, pvar handles, cvar handles, event
//!   registrations), whose frees hand the last step to the last reader;
//! - [`tagged`]: a 128-bit (value, run tag) word, a tool handle's
//!   per-element state;
//! - [`striped`]: an exact counter whose increments spread over cache
//!   lines;
//! - [`isolated`]: a boxed slice that shares no cache line with its heap
//!   neighbours;
//! - [`walk_gate`]: the threshold a watermark update must pass before it
//!   walks the subscriptions, kept a lower bound while tools lower marks;
//! - [`var_table`]: the shape the performance and control variable tables
//!   share (indexed variables with active flags and lock-free reads, a
//!   name map, per-object instance maps — the two maps behind a mutex).
//!
//! They use only [`crate::sync`].

pub(crate) mod append_vec;
pub(crate) mod index_stack;
pub(crate) mod isolated;
pub(crate) mod recycler;
pub(crate) mod slot_table;
pub(crate) mod striped;
pub(crate) mod tagged;
pub(crate) mod var_table;
pub(crate) mod walk_gate;
