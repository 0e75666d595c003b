//! Handles that stand for a whole variable rather than for storage to
//! update: [`Bound`] (create and drop per-object instances) and
//! [`CallbackVar`] (a variable computed by callback).

use std::marker::PhantomData;

use super::var_id::{ComponentHandle, FromStorage, VarId};
use crate::hot::storage::Storage;
use crate::sync::Arc;
use crate::vocabulary::error::Result;

/// A variable bound to objects: the component creates an instance per
/// object (communicator, window, …), each with its own element count.
///
/// ```
/// use pvar::{BindKind, Registry};
/// let reg = Registry::new();
/// let per_peer = reg
///     .counter("msgs_per_peer")
///     .bind(BindKind::Comm)
///     .per_object_count()
///     .register_bound()
///     .unwrap();
/// let world = per_peer.create_instance(0x101, 4).unwrap(); // 4 peers
/// world.inc_at(3);
/// assert_eq!(world.get_at(3), 1);
/// per_peer.drop_instance(0x101).unwrap();
/// ```
pub struct Bound<H> {
    id: VarId,
    _h: PhantomData<fn() -> H>,
}

impl<H> Clone for Bound<H> {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            _h: PhantomData,
        }
    }
}

impl<H: ComponentHandle> Bound<H> {
    pub(crate) fn new(id: VarId) -> Self {
        Self {
            id,
            _h: PhantomData,
        }
    }

    /// Creates the instance for the object whose handle value is `object`,
    /// with `count` elements, and returns its update handle. Tools bind
    /// handles to it by passing the same handle value.
    ///
    /// Async-signal-safe: no (allocates, takes the instance mutex).
    pub fn create_instance(&self, object: u64, count: usize) -> Result<H> {
        let storage = self
            .id
            .pvars()
            .create_instance(self.id.index(), object, count)?;
        Ok(H::from_storage(self.id.clone(), storage))
    }

    /// The update handle of `object`'s instance (as
    /// [`Bound::create_instance`] returned it), or `MPI_T_ERR_INVALID` if
    /// the object has none.
    ///
    /// Async-signal-safe: no (takes the variable's instance mutex).
    pub fn instance(&self, object: u64) -> Result<H> {
        let storage = self.id.pvars().instance(self.id.index(), object)?;
        Ok(H::from_storage(self.id.clone(), storage))
    }

    /// Drops the instance for `object`: tool handles bound to it then fail
    /// with `MPI_T_ERR_INVALID_INDEX`; their memory is released when the
    /// last of them is freed.
    ///
    /// Async-signal-safe: no (takes the variable's instance mutex).
    pub fn drop_instance(&self, object: u64) -> Result<()> {
        self.id.pvars().drop_instance(self.id.index(), object)
    }

    /// The variable's index in its registry.
    pub fn index(&self) -> usize {
        self.id.index()
    }
}

/// A variable computed by callback; see
/// [`Registry::callback_pvar`](crate::Registry::callback_pvar).
///
/// Async-signal-safe: tool operations on it are as safe as its callbacks
/// (`read` for reads and resets, `notify` for allocation, start, stop and
/// free); keep them lock- and allocation-free for sampling tools.
#[derive(Clone)]
pub struct CallbackVar {
    id: VarId,
}

impl FromStorage for CallbackVar {
    fn from_storage(id: VarId, _storage: Arc<Storage>) -> Self {
        Self { id }
    }
}

impl CallbackVar {
    /// The variable's index in its registry.
    pub fn index(&self) -> usize {
        self.id.index()
    }

    /// Deactivates the variable (component unloaded).
    pub fn deactivate(&self) {
        self.id.deactivate()
    }
}
