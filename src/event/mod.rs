//! MPI 4 events (MPI 4.1 §15.3.8): event types a component raises, the
//! sources that timestamp them, and the tool registrations whose callbacks
//! receive them. `docs/events.md` explains which rule of the standard each
//! choice serves.
//!
//! - **Component side**: [`Registry::event`](crate::Registry::event)
//!   declares a typed event ([`Event`]); [`Event::raise`] costs one load
//!   and a branch while no tool has a callback or a dropped handler for it.
//! - **Tool side**: [`Registry::event_registration`](crate::Registry::event_registration)
//!   gives an RAII [`EventRegistration`] with callbacks at the four safety
//!   levels ([`CbSafety`](crate::CbSafety)), a dropped handler and a free
//!   callback; [`Events`] answers the queries.
//!
//! Delivery (`delivery.rs`): a raise takes its timestamp once, then for each
//! registration of the event picks the callback at the lowest safety level
//! the point allows. Callbacks registered `ThreadSafe` or
//! `AsyncSignalSafe` run at once on the raising thread (if the point's
//! requirement allows them). Callbacks registered `None` or
//! `MpiRestricted` promise neither reentrancy nor thread safety, so they
//! run only while the raising thread holds the registry's delivery token
//! (taken without waiting); otherwise the event goes to the thread's
//! bounded buffer (`buffer.rs`) and is delivered at the next delivery point
//! ([`Events::deliver`]); while a registration has events in buffers or
//! being delivered from one, its new raises wait behind them (per thread,
//! raise order). What can be neither delivered nor buffered is dropped,
//! counted in the engine's statistics and reported to the registration's
//! dropped handler before its next delivery — or, for a registration with
//! a dropped handler and no callback (every raise for it is a loss), at the
//! first point where nothing is required of a callback.
//!
//! The files, each on the ones before it: `record` (typed records),
//! `source` (timestamp sources), `buffer` (per-thread buffers),
//! `instance` (what a callback sees), `registration` (a tool's
//! registration and its callbacks), `types` (declared types and the
//! tables a raise reads), `delivery` (raising and delivering), `events`
//! ([`Events`]: the table's API), `handle` ([`Event`] to raise,
//! [`EventRegistration`] for tools).

pub(crate) mod buffer;
mod delivery;
mod events;
mod handle;
mod instance;
mod record;
mod registration;
pub(crate) mod source;
mod types;

pub use buffer::DEFAULT_BUFFER_ENTRIES;
pub use delivery::EventStats;
pub use events::{Events, MAX_REGISTRATIONS};
pub use handle::{Event, EventBuilder, EventRegistration};
pub use instance::EventInstance;
pub use record::{Element, EventRecord};
pub use registration::{DroppedCallback, EventCallback, FreeCallback};
pub use source::TimestampFn;
