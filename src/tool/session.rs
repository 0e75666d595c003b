//! [`Session`]: an owned performance-experiment session for Rust tools.

use crate::error::Result;
use crate::kinds::ObjectRef;
use crate::registry::Registry;

use super::{HandleId, SessionId};

/// A session that frees itself (and its handles) when dropped. Every
/// method forwards to the keyed API on [`Registry`] and is exactly as
/// async-signal-safe as the method it forwards to; creating and dropping a
/// `Session` (which frees it) are not. A signal handler should use the
/// keys ([`Session::id`], [`HandleId`]) with the [`Registry`] methods.
///
/// ```
/// let reg = pvar::Registry::new();
/// let sent = reg.counter("sent").register().unwrap();
/// let session = reg.session().unwrap();
/// let (h, count) = session.alloc(sent.index(), None).unwrap();
/// assert_eq!(count, 1);
/// sent.add(5); // before start: not seen by this handle
/// session.start(h).unwrap();
/// sent.add(3);
/// assert_eq!(session.read_u64(h).unwrap(), 3);
/// session.reset(h).unwrap();
/// assert_eq!(session.read_u64(h).unwrap(), 0);
/// ```
#[derive(Debug)]
pub struct Session {
    registry: Registry,
    id: SessionId,
}

impl Session {
    pub(crate) fn new(registry: Registry) -> Result<Self> {
        let id = registry.session_create()?;
        Ok(Self { registry, id })
    }

    /// The session's key.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Allocates a handle; see [`Registry::handle_alloc`].
    pub fn alloc(&self, index: usize, object: Option<ObjectRef>) -> Result<(HandleId, usize)> {
        self.registry.handle_alloc(self.id, index, object)
    }

    /// Frees a handle.
    pub fn free(&self, handle: HandleId) -> Result<()> {
        self.registry.handle_free(self.id, handle)
    }

    /// Starts a handle.
    pub fn start(&self, handle: HandleId) -> Result<()> {
        self.registry.start(self.id, handle)
    }

    /// Stops a handle.
    pub fn stop(&self, handle: HandleId) -> Result<()> {
        self.registry.stop(self.id, handle)
    }

    /// Reads a handle into `out`; see [`Registry::read`].
    pub fn read(&self, handle: HandleId, out: &mut [u64]) -> Result<()> {
        self.registry.read(self.id, handle, out)
    }

    /// Reads element 0 of an integer handle.
    pub fn read_u64(&self, handle: HandleId) -> Result<u64> {
        self.registry.read_u64(self.id, handle)
    }

    /// Reads element 0 of a double handle.
    pub fn read_f64(&self, handle: HandleId) -> Result<f64> {
        self.registry.read_f64(self.id, handle)
    }

    /// Writes a handle.
    pub fn write(&self, handle: HandleId, values: &[u64]) -> Result<()> {
        self.registry.write(self.id, handle, values)
    }

    /// Resets a handle.
    pub fn reset(&self, handle: HandleId) -> Result<()> {
        self.registry.reset(self.id, handle)
    }

    /// Reads and resets a handle.
    pub fn readreset(&self, handle: HandleId, out: &mut [u64]) -> Result<()> {
        self.registry.readreset(self.id, handle, out)
    }

    /// Starts every handle of the session.
    pub fn start_all(&self) -> Result<()> {
        self.registry.start_all(self.id)
    }

    /// Stops every handle of the session.
    pub fn stop_all(&self) -> Result<()> {
        self.registry.stop_all(self.id)
    }

    /// Resets every handle of the session.
    pub fn reset_all(&self) -> Result<()> {
        self.registry.reset_all(self.id)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.registry.session_free(self.id);
    }
}
