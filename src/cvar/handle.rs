//! Tool-side control variable handles (`MPI_T_cvar_handle_alloc / read /
//! write / handle_free`).
//!
//! A [`CvarHandle`] is a non-zero `u64` with the layout of the tool-side
//! slot keys: slot number + 1 in the high 24 bits, a generation unique in
//! the process in the low 40 (`tool::slots::next_generation`). A freed,
//! forged or foreign (another registry's) handle is recognised and gets
//! `MPI_T_ERR_INVALID_HANDLE`, never undefined behaviour. The C interface
//! passes the value as its opaque `MPI_T_cvar_handle` pointer (0 is
//! `MPI_T_CVAR_HANDLE_NULL`).
//!
//! These operations take a mutex: they are thread-safe but not
//! async-signal-safe.

use std::num::NonZeroU64;

use crate::error::{Error, ErrorCode, Result};
use crate::kinds::{BindKind, ObjectRef};
use crate::sync::{Arc, MutexGuard, Ordering};

use super::types::CvarValue;
use super::types::sealed::{Init, Kind};
use super::value::{CvarCell, normalise};
use super::{CvarBody, CvarVar};

/// A tool's handle to a control variable (bound to an object if the
/// variable is). Copyable; the registry checks it on every use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CvarHandle(NonZeroU64);

impl CvarHandle {
    /// The raw value the C interface stores in its opaque pointer.
    pub fn to_raw(self) -> u64 {
        self.0.get()
    }

    /// A handle from its raw value (`None` for 0, the null handle). Any
    /// other value is accepted here and checked when used.
    pub fn from_raw(raw: u64) -> Option<Self> {
        NonZeroU64::new(raw).map(Self)
    }

    /// The slot index, or `None` for a value no handle ever had (slot
    /// bits 0: issued keys store slot + 1).
    fn slot(self) -> Option<usize> {
        (self.0.get() >> GEN_BITS)
            .checked_sub(1)
            .map(|s| s as usize)
    }

    fn generation(self) -> u64 {
        self.0.get() & ((1 << GEN_BITS) - 1)
    }
}

struct Target {
    var: usize,
    cell: Arc<CvarCell>,
}

/// Bits of a key's generation (as in the tool-side slot tables).
const GEN_BITS: u32 = 40;

#[derive(Default)]
struct Slot {
    generation: u64,
    target: Option<Target>,
}

/// The handle slots of a registry.
#[derive(Default)]
pub(crate) struct Slab {
    slots: Vec<Slot>,
    free: Vec<usize>,
    live: usize,
}

impl Slab {
    fn insert(&mut self, target: Target) -> Result<CvarHandle> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                if self.slots.len() >= (1 << (64 - GEN_BITS)) - 1 {
                    return Err(Error::Code(ErrorCode::OutOfHandles));
                }
                self.slots.push(Slot::default());
                self.slots.len() - 1
            }
        };
        let s = &mut self.slots[slot];
        s.target = Some(target);
        s.generation = crate::tool::next_generation();
        self.live += 1;
        let raw = ((slot as u64 + 1) << GEN_BITS) | s.generation;
        Ok(CvarHandle(NonZeroU64::new(raw).expect("slot + 1 > 0")))
    }

    fn get(&self, h: CvarHandle) -> Result<&Target> {
        h.slot()
            .and_then(|slot| self.slots.get(slot))
            .filter(|s| s.generation == h.generation())
            .and_then(|s| s.target.as_ref())
            .ok_or(Error::Code(ErrorCode::InvalidHandle))
    }

    fn remove(&mut self, h: CvarHandle) -> Result<()> {
        self.get(h)?;
        let slot = h.slot().expect("get() accepted the handle");
        let s = &mut self.slots[slot];
        s.target = None;
        // The next owner of the slot draws a new generation; until then
        // no key names it.
        s.generation = 0;
        self.free.push(slot);
        self.live -= 1;
        Ok(())
    }
}

fn decode(var: &CvarVar, buf: &[u8]) -> Result<CvarValue> {
    let need = if var.kind == Kind::Str {
        0
    } else {
        var.info.datatype.size()
    };
    if buf.len() < need {
        return Err(Error::Invalid("buffer too small for the variable's value"));
    }
    let b8 = |buf: &[u8]| u64::from_ne_bytes(buf[..8].try_into().expect("8 bytes"));
    let b4 = |buf: &[u8]| u32::from_ne_bytes(buf[..4].try_into().expect("4 bytes"));
    Ok(match var.kind {
        Kind::I32 | Kind::Bool => CvarValue::Signed(b4(buf) as i32 as i64),
        Kind::U32 => CvarValue::Unsigned(b4(buf) as u64),
        Kind::U64 => CvarValue::Unsigned(b8(buf)),
        Kind::I64 => CvarValue::Signed(b8(buf) as i64),
        Kind::F64 => CvarValue::Double(f64::from_bits(b8(buf))),
        Kind::Str => {
            let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
            let s = std::str::from_utf8(&buf[..end])
                .map_err(|_| Error::Invalid("string value is not valid UTF-8"))?;
            CvarValue::Text(s.to_string())
        }
    })
}

/// Checks a tool-supplied value against the variable and converts it.
fn convert(var: &CvarVar, value: &CvarValue) -> Result<Init> {
    let init = match (var.kind, value) {
        (Kind::I32, CvarValue::Signed(v)) => {
            let v =
                i32::try_from(*v).map_err(|_| Error::Invalid("value out of range for MPI_INT"))?;
            if let Some(e) = &var.info.enumeration
                && !e.contains_value(v)
            {
                return Err(Error::Invalid(
                    "value is not an item of the variable's enumeration",
                ));
            }
            Init::Bits(v as i64 as u64)
        }
        (Kind::Bool, CvarValue::Signed(v)) => Init::Bits((*v != 0) as u64),
        (Kind::I64, CvarValue::Signed(v)) => Init::Bits(*v as u64),
        (Kind::U32, CvarValue::Unsigned(v)) => Init::Bits(
            u32::try_from(*v).map_err(|_| Error::Invalid("value out of range for MPI_UNSIGNED"))?
                as u64,
        ),
        (Kind::U64, CvarValue::Unsigned(v)) => Init::Bits(*v),
        (Kind::F64, CvarValue::Double(v)) => Init::Bits(v.to_bits()),
        (Kind::Str, CvarValue::Text(s)) => {
            if s.contains('\0') || s.len() + 1 > var.count {
                return Err(Error::Invalid(
                    "string contains NUL or exceeds the variable's count",
                ));
            }
            Init::Text(s.clone())
        }
        _ => {
            return Err(Error::Invalid(
                "value type differs from the variable's datatype",
            ));
        }
    };
    Ok(normalise(var.kind, init))
}

fn encode(var: &CvarVar, cell: &CvarCell, buf: &mut [u8]) -> Result<()> {
    match cell.load() {
        Init::Text(s) => {
            if buf.len() < s.len() + 1 {
                return Err(Error::Invalid(
                    "buffer too small for the string and its NUL",
                ));
            }
            buf[..s.len()].copy_from_slice(s.as_bytes());
            buf[s.len()] = 0;
        }
        Init::Bits(bits) => {
            let size = var.info.datatype.size();
            if buf.len() < size {
                return Err(Error::Invalid("buffer too small for the variable's value"));
            }
            match size {
                4 => buf[..4].copy_from_slice(&(bits as u32).to_ne_bytes()),
                _ => buf[..8].copy_from_slice(&bits.to_ne_bytes()),
            }
        }
    }
    Ok(())
}

impl super::CvarTable {
    /// The handle slots (also after a panic while they were locked).
    fn slab(&self) -> MutexGuard<'_, Slab> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Tool-side handle operations.
impl crate::Registry {
    fn cvar_target(&self, h: CvarHandle) -> Result<(&CvarVar, Arc<CvarCell>)> {
        let (var, cell) = self
            .inner
            .cvars
            .slab()
            .get(h)
            .map(|t| (t.var, t.cell.clone()))?;
        let var = self.inner.cvars.var(var)?;
        if !var.is_active() || !cell.live.load(Ordering::Acquire) {
            return Err(Error::Inactive);
        }
        Ok((var, cell))
    }

    /// `MPI_T_cvar_handle_alloc`: a handle to control variable `index`,
    /// bound to `object` if the variable is bound (ignored otherwise), and
    /// the element count (1 for numbers; for strings the capacity including
    /// the NUL).
    ///
    /// Errors: `INVALID_INDEX` (no such variable, or inactive:
    /// [`Error::Inactive`]); `INVALID` (missing object, wrong kind, or no
    /// value for that object).
    pub fn cvar_handle_alloc(
        &self,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<(CvarHandle, usize)> {
        let var = self.inner.cvars.var(index)?;
        if !var.is_active() {
            return Err(Error::Inactive);
        }
        let cell = match &var.body {
            CvarBody::Unbound(cell) => cell.clone(),
            CvarBody::Bound(map) => {
                let object = object.ok_or(Error::Invalid(
                    "a bound variable needs an object of its bind kind",
                ))?;
                if object.kind != var.info.bind || object.kind == BindKind::NoObject {
                    return Err(Error::Invalid(
                        "the object's kind differs from the variable's bind kind",
                    ));
                }
                map.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&object.handle)
                    .cloned()
                    .ok_or(Error::Invalid("no value of the variable for this object"))?
            }
        };
        let count = cell.count;
        let h = self
            .inner
            .cvars
            .slab()
            .insert(Target { var: index, cell })?;
        Ok((h, count))
    }

    /// `MPI_T_cvar_handle_free`; `INVALID_HANDLE` if `h` is not live.
    pub fn cvar_handle_free(&self, h: CvarHandle) -> Result<()> {
        self.inner.cvars.slab().remove(h)
    }

    /// What a live handle refers to: the variable's index, its datatype and
    /// the element count returned at allocation (so the C layer can size
    /// `MPI_T_cvar_read/write` buffers without a table of its own);
    /// `INVALID_HANDLE` if `h` is not live.
    pub fn cvar_handle_info(&self, h: CvarHandle) -> Result<(usize, crate::Datatype, usize)> {
        let (var, count) = self
            .inner
            .cvars
            .slab()
            .get(h)
            .map(|t| (t.var, t.cell.count))?;
        Ok((var, self.inner.cvars.var(var)?.info.datatype, count))
    }

    /// Number of control variable handles currently allocated.
    pub fn cvar_handles_in_use(&self) -> usize {
        self.inner.cvars.slab().live
    }

    /// `MPI_T_cvar_read`: writes the value into `buf` in the C layout of
    /// the variable's datatype (native-endian `int`, `unsigned`, …; for
    /// `MPI_CHAR` the bytes and a NUL). `INVALID` if `buf` is too small.
    pub fn cvar_read(&self, h: CvarHandle, buf: &mut [u8]) -> Result<()> {
        let (var, cell) = self.cvar_target(h)?;
        encode(var, &cell, buf)
    }

    /// The value behind `h`, typed.
    pub fn cvar_read_value(&self, h: CvarHandle) -> Result<CvarValue> {
        let (var, cell) = self.cvar_target(h)?;
        Ok(match cell.load() {
            Init::Text(s) => CvarValue::Text(s),
            Init::Bits(b) => var.kind.value(b),
        })
    }

    fn cvar_store(
        &self,
        h: CvarHandle,
        value: impl FnOnce(&CvarVar) -> Result<CvarValue>,
    ) -> Result<()> {
        let (var, cell) = self.cvar_target(h)?;
        if var.info.scope.is_read_only() {
            return Err(Error::Code(ErrorCode::CvarSetNever));
        }
        if var.frozen.load(Ordering::Acquire) || cell.is_frozen() {
            return Err(Error::Code(ErrorCode::CvarSetNotNow));
        }
        let init = convert(var, &value(var)?)?;
        cell.store(&init);
        Ok(())
    }

    /// `MPI_T_cvar_write`: reads the new value from `buf` in the C layout
    /// (for `MPI_CHAR`, up to the first NUL or the end of `buf`).
    ///
    /// Errors: `CVAR_SET_NEVER` for `CONSTANT` / `READONLY` scopes;
    /// `CVAR_SET_NOT_NOW` while the component has frozen the variable;
    /// `INVALID` for a short buffer, an out-of-range or non-item value, or
    /// a string longer than the count.
    pub fn cvar_write(&self, h: CvarHandle, buf: &[u8]) -> Result<()> {
        self.cvar_store(h, |var| decode(var, buf))
    }

    /// [`Registry::cvar_write`](crate::Registry::cvar_write) with a typed value.
    pub fn cvar_write_value(&self, h: CvarHandle, value: &CvarValue) -> Result<()> {
        self.cvar_store(h, |_| Ok(value.clone()))
    }
}
