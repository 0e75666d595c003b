//! The descriptions C passes (`pvar_info`, `pvar_cvar_info`,
//! `pvar_enum_item`), checked and copied into Rust values.

use core::ffi::{c_char, c_int, c_long};

use super::Recorded;
use crate::ffi::boundary::{CResult, ERR_INVALID};
use crate::ffi::strings::{arg_str, opt_str};
use crate::pvar::PvarBuilder;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::enumeration::Enumeration;
use crate::vocabulary::kinds::{BindKind, PvarClass, Verbosity};

/// `pvar_enum_item`.
#[repr(C)]
pub struct CEnumItem {
    pub(super) name: *const c_char,
    pub(super) value: c_int,
}

/// `pvar_info` (must match `include/pvar.h`).
#[repr(C)]
pub struct CPvarInfo {
    pub(super) name: *const c_char,
    pub(super) description: *const c_char,
    pub(super) var_class: c_int,
    pub(super) datatype: c_int,
    pub(super) verbosity: c_int,
    pub(super) bind: c_int,
    pub(super) count: c_long,
    pub(super) category: *const c_char,
    pub(super) readonly: c_int,
    pub(super) continuous: c_int,
    pub(super) atomic: c_int,
    pub(super) enum_name: *const c_char,
    pub(super) enum_items: *const CEnumItem,
    pub(super) enum_len: c_int,
}

/// `pvar_cvar_info` (must match `include/pvar.h`).
#[repr(C)]
pub struct CCvarInfo {
    pub(super) name: *const c_char,
    pub(super) description: *const c_char,
    pub(super) datatype: c_int,
    pub(super) verbosity: c_int,
    pub(super) scope: c_int,
    pub(super) bind: c_int,
    pub(super) category: *const c_char,
    pub(super) env: *const c_char,
    pub(super) default_int: i64,
    pub(super) default_unsigned: u64,
    pub(super) default_double: f64,
    pub(super) default_string: *const c_char,
    pub(super) capacity: usize,
    pub(super) enum_name: *const c_char,
    pub(super) enum_items: *const CEnumItem,
    pub(super) enum_len: c_int,
}

const PVAR_YES: c_int = 1;
const PVAR_NO: c_int = 2;
const COUNT_PER_OBJECT: c_long = -1;

pub(super) fn tri(v: c_int) -> CResult<Option<bool>> {
    match v {
        0 => Ok(None),
        PVAR_YES => Ok(Some(true)),
        PVAR_NO => Ok(Some(false)),
        _ => Err(ERR_INVALID),
    }
}

/// The kind with ABI value `v`, `default` for 0 (the field left unset);
/// `MPI_T_ERR_INVALID` for any other value.
pub(super) fn raw_or<T>(v: c_int, default: T, from_raw: fn(i32) -> Option<T>) -> CResult<T> {
    if v == 0 {
        Ok(default)
    } else {
        from_raw(v).ok_or(ERR_INVALID)
    }
}

pub(super) fn verbosity(v: c_int) -> CResult<Verbosity> {
    raw_or(v, Verbosity::UserBasic, Verbosity::from_raw)
}

pub(super) fn bind(v: c_int) -> CResult<BindKind> {
    raw_or(v, BindKind::NoObject, BindKind::from_raw)
}

/// Reads an enumeration description.
///
/// # Safety
/// `name` is NULL or a C string; `items` is NULL or valid for `len` items
/// whose names are C strings.
pub(super) unsafe fn enumeration(
    name: *const c_char,
    items: *const CEnumItem,
    len: c_int,
) -> CResult<Option<Enumeration>> {
    // SAFETY: forwarded contract.
    let Some(name) = (unsafe { opt_str(name) })? else {
        return Ok(None);
    };
    let len = usize::try_from(len).map_err(|_| ERR_INVALID)?;
    if len > 0 && (items.is_null() || !items.is_aligned()) {
        return Err(ERR_INVALID);
    }
    let items = if len == 0 {
        &[][..]
    } else {
        // SAFETY: non-NULL, aligned, valid for `len` items (contract).
        unsafe { core::slice::from_raw_parts(items, len) }
    };
    let mut v = Vec::with_capacity(len);
    for it in items {
        // SAFETY: item names are C strings (contract).
        v.push((unsafe { arg_str(it.name, ERR_INVALID) }?, it.value));
    }
    Enumeration::new(name, v).rec().map(Some)
}

/// An owned, checked copy of a `pvar_info`.
pub(super) struct Desc {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) class: PvarClass,
    pub(super) datatype: Datatype,
    pub(super) verbosity: Verbosity,
    pub(super) bind: BindKind,
    pub(super) count: Option<usize>,
    pub(super) category: Option<String>,
    pub(super) readonly: Option<bool>,
    pub(super) continuous: Option<bool>,
    pub(super) atomic: Option<bool>,
    pub(super) enumeration: Option<Enumeration>,
}

fn default_datatype(class: PvarClass) -> Datatype {
    match class {
        PvarClass::Timer | PvarClass::Percentage => Datatype::Double,
        PvarClass::State => Datatype::Int,
        _ => Datatype::UnsignedLongLong,
    }
}

impl Desc {
    /// # Safety
    /// `p` is NULL or a valid `pvar_info` whose strings are C strings.
    pub(super) unsafe fn read(p: *const CPvarInfo) -> CResult<Self> {
        if p.is_null() || !p.is_aligned() {
            return Err(ERR_INVALID);
        }
        // SAFETY: non-NULL, aligned, valid by contract.
        let c = unsafe { &*p };
        let class = PvarClass::from_raw(c.var_class).ok_or(ERR_INVALID)?;
        let datatype = raw_or(c.datatype, default_datatype(class), Datatype::from_raw)?;
        let count = match c.count {
            0 => Some(1),
            COUNT_PER_OBJECT => None,
            n => Some(usize::try_from(n).map_err(|_| ERR_INVALID)?),
        };
        // SAFETY: the strings and the enumeration are valid (contract).
        unsafe {
            Ok(Self {
                name: arg_str(c.name, ERR_INVALID)?.to_string(),
                description: opt_str(c.description)?.unwrap_or("").to_string(),
                class,
                datatype,
                verbosity: verbosity(c.verbosity)?,
                bind: bind(c.bind)?,
                count,
                category: opt_str(c.category)?.map(str::to_string),
                readonly: tri(c.readonly)?,
                continuous: tri(c.continuous)?,
                atomic: tri(c.atomic)?,
                enumeration: enumeration(c.enum_name, c.enum_items, c.enum_len)?,
            })
        }
    }

    pub(super) fn apply<'r, H>(&self, mut b: PvarBuilder<'r, H>) -> PvarBuilder<'r, H> {
        b = b
            .description(self.description.clone())
            .verbosity(self.verbosity)
            .bind(self.bind)
            .datatype(self.datatype);
        b = match self.count {
            Some(n) => b.count(n),
            None => b.per_object_count(),
        };
        if let Some(c) = &self.category {
            b = b.category(c.clone());
        }
        if let Some(r) = self.readonly {
            b = b.readonly(r);
        }
        if let Some(c) = self.continuous {
            b = b.continuous(c);
        }
        if let Some(a) = self.atomic {
            b = b.atomic(a);
        }
        if let Some(e) = &self.enumeration {
            b = b.enumeration(e.clone());
        }
        b
    }
}
