//! The typed tool API: a [`Session`] that owns its handles, and handles
//! that know their variable's type.
//!
//! A [`Handle`] is validated once, when it is allocated: it holds a reader
//! reference to its slot for its whole life, so no call looks its keys up
//! again. Dropping it frees it (the reference is given back first, so the
//! free usually finds nobody inside and releases the handle at once; it
//! never waits); dropping the session frees the session. Because a
//! typed handle holds its slot, the keyed API refuses to free a typed
//! session or handle (`INVALID_SESSION` / `INVALID_HANDLE`); every other
//! keyed call works with their keys ([`Session::id`], [`Handle::id`]), which
//! is how a signal handler uses them.

use core::marker::PhantomData;

use super::handle::{HandleData, HandleInfo};
use super::keyed::{HandleId, SessionId, Tool};
use crate::lockfree::slot_table::Ref;
use crate::lockfree::striped::StripedCounter;
use crate::sync::Arc;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::Value;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{ObjectRef, PvarClass};

/// A performance-experiment session that frees itself (and every handle
/// allocated in it) when dropped. From
/// [`Registry::session`](crate::Registry::session).
///
/// ```
/// use pvar::Registry;
/// let reg = Registry::new();
/// let sent = reg.counter("sent").register()?;
/// let timer = reg.timer("busy").register()?;
/// let session = reg.session()?;
/// let h = session.handle(sent.index())?.typed::<u64>()?;
/// let t = session.handle(timer.index())?.typed::<f64>()?; // a TIMER reads seconds
/// assert!(session.handle(timer.index())?.typed::<u64>().is_err()); // not bits
/// sent.add(5); // before start: not seen by this handle
/// h.start()?;
/// sent.add(3);
/// assert_eq!(h.read()?, 3);
/// assert_eq!(h.readreset()?, 3);
/// assert_eq!(h.read()?, 0);
/// assert_eq!(t.read()?, 0.0);
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct Session {
    tool: Arc<Tool>,
    id: SessionId,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish()
    }
}

impl Session {
    pub(crate) fn new(tool: Arc<Tool>) -> Result<Self> {
        let id = tool.create_session(true)?;
        Ok(Self { tool, id })
    }

    /// The session's key, for the keyed API ([`Tool`]) — e.g. in a signal
    /// handler.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The keyed tool side this session belongs to.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// A handle for variable `index`, not bound to an object
    /// (`MPI_T_pvar_handle_alloc`). A bound variable needs
    /// [`Session::handle_for`].
    ///
    /// Async-signal-safe: no (allocates).
    pub fn handle(&self, index: usize) -> Result<Handle<'_>> {
        self.alloc(index, None)
    }

    /// A handle for variable `index` bound to `object` (a communicator,
    /// window, …, by its handle value). For an unbound variable the object
    /// is ignored, as the standard says.
    ///
    /// Async-signal-safe: no (allocates).
    pub fn handle_for(&self, index: usize, object: ObjectRef) -> Result<Handle<'_>> {
        self.alloc(index, Some(object))
    }

    fn alloc(&self, index: usize, object: Option<ObjectRef>) -> Result<Handle<'_>> {
        let (key, _) = self.tool.alloc_handle(self.id, index, object, true)?;
        let data = self
            .tool
            .handle_slot(key)
            .expect("a handle just allocated, owned by this session, is live");
        let info = data.info();
        Ok(Handle {
            session: self,
            key,
            data: Some(data),
            info,
        })
    }

    /// Starts every handle of the session (`MPI_T_PVAR_ALL_HANDLES`):
    /// continuous and started ones are skipped.
    ///
    /// Async-signal-safe: yes.
    pub fn start_all(&self) -> Result<()> {
        self.tool.start_all(self.id)
    }

    /// Stops every handle of the session: continuous and stopped ones are
    /// skipped.
    ///
    /// Async-signal-safe: yes.
    pub fn stop_all(&self) -> Result<()> {
        self.tool.stop_all(self.id)
    }

    /// Resets every handle of the session: read-only ones are skipped.
    ///
    /// Async-signal-safe: yes.
    pub fn reset_all(&self) -> Result<()> {
        self.tool.reset_all(self.id)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Every typed handle borrowed this session and is gone; handles
        // allocated with its key through the keyed API go with it.
        let _ = self.tool.free_session(self.id);
    }
}

/// Values read from a handle whose type is known only at run time, one
/// vector variant per MPI_T datatype (`MPI_CHAR` as a string).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// `MPI_UNSIGNED`.
    U32(Vec<u32>),
    /// `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG`.
    U64(Vec<u64>),
    /// `MPI_INT`.
    I32(Vec<i32>),
    /// `MPI_COUNT`.
    I64(Vec<i64>),
    /// `MPI_DOUBLE`.
    F64(Vec<f64>),
    /// `MPI_CHAR`: the characters up to the first NUL.
    Text(String),
}

impl Values {
    fn from_bits(datatype: Datatype, bits: &[u64]) -> Self {
        fn conv<T: Value>(bits: &[u64]) -> Vec<T> {
            bits.iter().map(|&b| T::from_bits(b)).collect()
        }
        match datatype {
            Datatype::Unsigned => Values::U32(conv(bits)),
            Datatype::UnsignedLong | Datatype::UnsignedLongLong => Values::U64(conv(bits)),
            Datatype::Int => Values::I32(conv(bits)),
            Datatype::Count => Values::I64(conv(bits)),
            Datatype::Double => Values::F64(conv(bits)),
            Datatype::Char => Values::Text(
                bits.iter()
                    .map(|&b| b as u8)
                    .take_while(|&c| c != 0)
                    .map(char::from)
                    .collect(),
            ),
        }
    }

    /// Every element as `f64` (a string's characters have none: empty).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Values::U32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::U64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::F64(v) => v.clone(),
            Values::Text(_) => Vec::new(),
        }
    }
}

/// A handle of a [`Session`], freed when dropped. It knows its variable's
/// datatype: [`Handle::read`] returns [`Values`]; [`Handle::typed`] turns
/// it into a [`TypedHandle`] whose reads return the Rust type directly.
pub struct Handle<'s> {
    session: &'s Session,
    key: u64,
    /// The reader reference taken at allocation (given back first on drop).
    data: Option<Ref<'s, HandleData>>,
    info: HandleInfo,
}

impl std::fmt::Debug for Handle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("id", &self.id())
            .field("info", &self.info)
            .finish()
    }
}

/// Elements converted per call of the keyed read: a stack buffer.
const CHUNK: usize = 64;

impl<'s> Handle<'s> {
    fn data(&self) -> &HandleData {
        self.data
            .as_deref()
            .expect("the reference lives until drop")
    }

    fn tool(&self) -> &'s Tool {
        &self.session.tool
    }

    /// The handle's key, for the keyed API ([`Tool`]) — e.g. in a signal
    /// handler.
    pub fn id(&self) -> HandleId {
        HandleId(self.key)
    }

    /// The variable's index.
    pub fn index(&self) -> usize {
        self.info.index
    }

    /// The key of the handle's session (for the sampler).
    #[cfg(all(target_os = "linux", not(loom)))]
    pub(crate) fn session_id(&self) -> SessionId {
        self.session.id
    }

    /// The variable's class.
    pub fn class(&self) -> PvarClass {
        self.info.class
    }

    /// The datatype of each element.
    pub fn datatype(&self) -> Datatype {
        self.info.datatype
    }

    /// Number of elements (of the bound object's instance, if bound).
    pub fn count(&self) -> usize {
        self.info.count
    }

    /// Whether the handle is started.
    pub fn is_started(&self) -> bool {
        self.data().is_started()
    }

    /// Starts the handle (`PVAR_NO_STARTSTOP` if continuous).
    ///
    /// Async-signal-safe: yes.
    pub fn start(&self) -> Result<()> {
        self.data().start()
    }

    /// Stops the handle (`PVAR_NO_STARTSTOP` if continuous).
    ///
    /// Async-signal-safe: yes.
    pub fn stop(&self) -> Result<()> {
        self.data().stop()
    }

    /// Resets the handle to its starting value (`PVAR_NO_WRITE` if
    /// read-only).
    ///
    /// Async-signal-safe: yes.
    pub fn reset(&self) -> Result<()> {
        self.data().reset()
    }

    /// Every element, as the variable's datatype says.
    ///
    /// Async-signal-safe: no (allocates the result).
    pub fn read(&self) -> Result<Values> {
        let mut bits = vec![0u64; self.count()];
        self.data().read(0, &mut bits, &self.tool().reads)?;
        Ok(Values::from_bits(self.datatype(), &bits))
    }

    /// Read and reset in one step (`PVAR_NO_ATOMIC` if not atomic): every
    /// element's value before the reset.
    ///
    /// Async-signal-safe: no (allocates the result).
    pub fn readreset(&self) -> Result<Values> {
        let mut bits = vec![0u64; self.count()];
        self.data().readreset(0, &mut bits, &self.tool().reads)?;
        Ok(Values::from_bits(self.datatype(), &bits))
    }

    /// This handle as a [`TypedHandle`] of `T`; `MPI_T_ERR_INVALID` if the
    /// variable's datatype is not `T`'s (`u32`: `MPI_UNSIGNED`; `u64`:
    /// `MPI_UNSIGNED_LONG(_LONG)`; `i32`: `MPI_INT`; `i64`: `MPI_COUNT`;
    /// `f64`: `MPI_DOUBLE`, which a TIMER read in seconds is).
    pub fn typed<T: Value>(self) -> Result<TypedHandle<'s, T>> {
        check_type::<T>(self.datatype())?;
        Ok(TypedHandle {
            handle: self,
            _t: PhantomData,
        })
    }
}

impl<'s> AsRef<Handle<'s>> for Handle<'s> {
    fn as_ref(&self) -> &Handle<'s> {
        self
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // Give the reader reference back first, so that the free is
        // usually the last one out and releases the handle itself.
        drop(self.data.take());
        let _ = self.tool().free_handle(self.session.id, self.key);
    }
}

fn check_type<T: Value>(datatype: Datatype) -> Result<()> {
    if T::accepts(datatype) {
        Ok(())
    } else {
        Err(Error::refused(format!(
            "the handle's datatype is {}, which a {} cannot hold",
            datatype.c_name(),
            core::any::type_name::<T>()
        )))
    }
}

/// A [`Handle`] whose elements are read and written as `T` (checked once,
/// by [`Handle::typed`]). Dropping it frees the handle.
pub struct TypedHandle<'s, T> {
    handle: Handle<'s>,
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for TypedHandle<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedHandle")
            .field("handle", &self.handle)
            .field("type", &core::any::type_name::<T>())
            .finish()
    }
}

impl<'s, T> AsRef<Handle<'s>> for TypedHandle<'s, T> {
    /// The untyped handle (what APIs that take either, such as the
    /// sampler's builder, use).
    fn as_ref(&self) -> &Handle<'s> {
        &self.handle
    }
}

impl<'s, T: Value> TypedHandle<'s, T> {
    /// The untyped handle (for its key, index, class, count).
    pub fn handle(&self) -> &Handle<'s> {
        &self.handle
    }

    /// Starts the handle. Async-signal-safe: yes.
    pub fn start(&self) -> Result<()> {
        self.handle.start()
    }

    /// Stops the handle. Async-signal-safe: yes.
    pub fn stop(&self) -> Result<()> {
        self.handle.stop()
    }

    /// Resets the handle to its starting value. Async-signal-safe: yes.
    pub fn reset(&self) -> Result<()> {
        self.handle.reset()
    }

    /// Element 0.
    ///
    /// Async-signal-safe: yes.
    pub fn read(&self) -> Result<T> {
        let mut v = [0u64];
        let served = &self.handle.tool().reads;
        self.handle.data().read(0, &mut v, served)?;
        Ok(T::from_bits(v[0]))
    }

    /// Elements `0..out.len()` (at most the count) into `out`.
    ///
    /// Async-signal-safe: yes (converts through a stack buffer).
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.in_chunks(out, HandleData::read)
    }

    /// Every element.
    ///
    /// Async-signal-safe: no (allocates the result).
    pub fn read_all(&self) -> Result<Vec<T>> {
        let mut out = vec![T::from_bits(0); self.handle.count()];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Element 0's value, and resets it (`PVAR_NO_ATOMIC` unless atomic).
    ///
    /// Async-signal-safe: yes.
    pub fn readreset(&self) -> Result<T> {
        let mut v = [0u64];
        let served = &self.handle.tool().reads;
        self.handle.data().readreset(0, &mut v, served)?;
        Ok(T::from_bits(v[0]))
    }

    /// Elements `0..out.len()`: their values into `out`, and resets them.
    ///
    /// Async-signal-safe: yes.
    pub fn readreset_into(&self, out: &mut [T]) -> Result<()> {
        self.in_chunks(out, HandleData::readreset)
    }

    /// Writes element 0 (`PVAR_NO_WRITE` if read-only).
    ///
    /// Async-signal-safe: yes.
    pub fn write(&self, value: T) -> Result<()> {
        self.handle.data().write(0, &[value.to_bits()])
    }

    /// Writes elements `0..values.len()`.
    ///
    /// Async-signal-safe: yes.
    pub fn write_all(&self, values: &[T]) -> Result<()> {
        let h = self.handle.data();
        let mut bits = [0u64; CHUNK];
        for (c, chunk) in values.chunks(CHUNK).enumerate() {
            for (b, v) in bits.iter_mut().zip(chunk) {
                *b = v.to_bits();
            }
            h.write(c * CHUNK, &bits[..chunk.len()])?;
        }
        Ok(())
    }

    /// Runs a counted element operation (read or readreset) over `out` in
    /// stack-sized chunks, converting the bits to `T`.
    fn in_chunks(
        &self,
        out: &mut [T],
        op: impl Fn(&HandleData, usize, &mut [u64], &StripedCounter) -> Result<()>,
    ) -> Result<()> {
        let (served, h) = (&self.handle.tool().reads, self.handle.data());
        let mut bits = [0u64; CHUNK];
        for (c, chunk) in out.chunks_mut(CHUNK).enumerate() {
            let bits = &mut bits[..chunk.len()];
            op(h, c * CHUNK, bits, served)?;
            for (o, &b) in chunk.iter_mut().zip(bits.iter()) {
                *o = T::from_bits(b);
            }
        }
        Ok(())
    }
}
