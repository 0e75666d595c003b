//! Tool-side control variable handles (`MPI_T_cvar_handle_alloc / read /
//! write / handle_free`).
//!
//! A [`CvarHandle`] is a key of the registry's [`SlotTable`] of cvar
//! handles, with the layout of every tool key (pvar sessions and handles
//! too): a generation unique in the process, so a freed, forged or foreign
//! (another registry's) handle is recognised and gets
//! `MPI_T_ERR_INVALID_HANDLE`, never undefined behaviour. The C interface
//! passes the value as its opaque `MPI_T_cvar_handle` pointer (0 is
//! `MPI_T_CVAR_HANDLE_NULL`).
//!
//! Looking a handle up is lock-free; allocation may append a slot (a
//! mutex), and string values allocate: these operations
//! are thread-safe but not async-signal-safe (the standard's signal advice
//! concerns performance variables).
//!
//! [`SlotTable`]: crate::lockfree::slot_table::SlotTable

use std::num::NonZeroU64;

use super::types::CvarValue;
use super::types::sealed::{Init, ValueKind};
use super::value::{CvarCell, normalise};
use super::var::CvarVar;
use crate::sync::Arc;
use crate::vocabulary::error::{Error, Result};

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
}

/// What a cvar handle refers to: the variable and its value (one bound
/// object's, for a bound variable).
pub(crate) struct Target {
    pub(super) var: usize,
    pub(super) cell: Arc<CvarCell>,
}

/// A freed handle's target is dropped when its slot is reclaimed (at the
/// next allocation), nothing earlier.
impl crate::lockfree::slot_table::Retire for Target {}

pub(super) fn decode(var: &CvarVar, buf: &[u8]) -> Result<CvarValue> {
    let need = if var.kind == ValueKind::Str {
        0
    } else {
        var.info.datatype.size()
    };
    if buf.len() < need {
        return Err(Error::invalid("buffer too small for the variable's value"));
    }
    let b8 = |buf: &[u8]| u64::from_ne_bytes(buf[..8].try_into().expect("8 bytes"));
    let b4 = |buf: &[u8]| u32::from_ne_bytes(buf[..4].try_into().expect("4 bytes"));
    Ok(match var.kind {
        ValueKind::I32 | ValueKind::Bool => CvarValue::Signed(b4(buf) as i32 as i64),
        ValueKind::U32 => CvarValue::Unsigned(b4(buf) as u64),
        ValueKind::U64 => CvarValue::Unsigned(b8(buf)),
        ValueKind::I64 => CvarValue::Signed(b8(buf) as i64),
        ValueKind::F64 => CvarValue::Double(f64::from_bits(b8(buf))),
        ValueKind::Str => {
            let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
            let s = std::str::from_utf8(&buf[..end])
                .map_err(|_| Error::invalid("string value is not valid UTF-8"))?;
            CvarValue::Text(s.to_string())
        }
    })
}

/// Checks a tool-supplied value against the variable and converts it.
pub(super) fn convert(var: &CvarVar, value: &CvarValue) -> Result<Init> {
    let init = match (var.kind, value) {
        (ValueKind::I32, CvarValue::Signed(v)) => {
            let v =
                i32::try_from(*v).map_err(|_| Error::invalid("value out of range for MPI_INT"))?;
            if let Some(e) = &var.info.enumeration
                && !e.contains_value(v)
            {
                return Err(Error::invalid(
                    "value is not an item of the variable's enumeration",
                ));
            }
            Init::Bits(v as i64 as u64)
        }
        (ValueKind::Bool, CvarValue::Signed(v)) => Init::Bits((*v != 0) as u64),
        (ValueKind::I64, CvarValue::Signed(v)) => Init::Bits(*v as u64),
        (ValueKind::U32, CvarValue::Unsigned(v)) => Init::Bits(
            u32::try_from(*v).map_err(|_| Error::invalid("value out of range for MPI_UNSIGNED"))?
                as u64,
        ),
        (ValueKind::U64, CvarValue::Unsigned(v)) => Init::Bits(*v),
        (ValueKind::F64, CvarValue::Double(v)) => Init::Bits(v.to_bits()),
        (ValueKind::Str, CvarValue::Text(s)) => {
            if s.contains('\0') || s.len() + 1 > var.count {
                return Err(Error::invalid(
                    "string contains NUL or exceeds the variable's count",
                ));
            }
            Init::Text(s.clone())
        }
        _ => {
            return Err(Error::invalid(
                "value type differs from the variable's datatype",
            ));
        }
    };
    Ok(normalise(var.kind, init))
}

pub(super) fn encode(var: &CvarVar, cell: &CvarCell, buf: &mut [u8]) -> Result<()> {
    match cell.load() {
        Init::Text(s) => {
            if buf.len() < s.len() + 1 {
                return Err(Error::invalid(
                    "buffer too small for the string and its NUL",
                ));
            }
            buf[..s.len()].copy_from_slice(s.as_bytes());
            buf[s.len()] = 0;
        }
        Init::Bits(bits) => {
            let size = var.info.datatype.size();
            if buf.len() < size {
                return Err(Error::invalid("buffer too small for the variable's value"));
            }
            match size {
                4 => buf[..4].copy_from_slice(&(bits as u32).to_ne_bytes()),
                _ => buf[..8].copy_from_slice(&bits.to_ne_bytes()),
            }
        }
    }
    Ok(())
}
