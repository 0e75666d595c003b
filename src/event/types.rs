//! What a raise and a delivery point look up: the declared event types
//! ([`EventType`]), the sources, and the registrations ([`Listed`]), held
//! together as [`Tables`].

use super::registration::Registration;
use super::source::Sources;
use crate::lockfree::append_vec::AppendVec;
use crate::lockfree::recycler::Recycler;
use crate::lockfree::slot_table::{Retire, SlotTable};
use crate::sync::{AtomicU32, AtomicU64};
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::event_info::EventInfo;

/// One declared event type.
pub(crate) struct EventType {
    pub(crate) info: EventInfo,
    /// Registrations of this type that observe it (a callback or a dropped
    /// handler, not freed): the raise's one load.
    pub(crate) subscribers: AtomicU32,
    /// Keys of the registrations of this type (0: a free entry); a free
    /// entry is reused first, so the list is as long as the most
    /// registrations this type had at once.
    pub(crate) subs: Recycler<AtomicU64>,
}

/// A registration in the registry's table, with its entry in its event
/// type's list (so that a free clears it without a search).
pub(crate) struct Listed {
    pub(crate) reg: Registration,
    pub(crate) entry: usize,
}

impl core::ops::Deref for Listed {
    type Target = Registration;
    fn deref(&self) -> &Registration {
        &self.reg
    }
}

impl Retire for Listed {
    fn finish(&self) {
        self.reg.finish();
    }
}

/// The tables of one registry's events that raising and delivering read.
pub(crate) struct Tables {
    pub(crate) types: AppendVec<EventType>,
    pub(crate) sources: Sources,
    /// Registrations by key. A free hands its last step (the free
    /// callback) to the last delivery inside; the data of such a slot is
    /// dropped at the next allocation.
    pub(crate) regs: SlotTable<Listed>,
}

impl Tables {
    /// Event type `index`: `MPI_T_ERR_INVALID_INDEX` if none.
    pub(crate) fn ty(&self, index: usize) -> Result<&EventType> {
        self.types.get(index).ok_or(Error::no_such_index())
    }
}
