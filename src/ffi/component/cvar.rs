//! Control variables declared from C.

use core::ffi::{c_char, c_int, c_void};

use super::desc::{CCvarInfo, bind, enumeration, raw_or, verbosity};
use super::{Recorded, deref, free_ptr, into_ptr};
use crate::cvar::CvarBuilder;
use crate::cvar::{BoundCvar, Cvar};
use crate::ffi::boundary::{CResult, ERR_INVALID, guarded, registry, require, set_req, to_int};
use crate::ffi::strings::{arg_str, opt_str, put_string};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, Scope, Verbosity};

/// The Rust handle behind a `pvar_cvar`.
enum CCvar {
    I32(Cvar<i32>),
    U32(Cvar<u32>),
    U64(Cvar<u64>),
    I64(Cvar<i64>),
    F64(Cvar<f64>),
    Str(Cvar<String>),
}

/// The Rust handle behind a `pvar_bound_cvar`.
enum CBoundCvar {
    I32(BoundCvar<i32>),
    U32(BoundCvar<u32>),
    U64(BoundCvar<u64>),
    I64(BoundCvar<i64>),
    F64(BoundCvar<f64>),
    Str(BoundCvar<String>),
}

/// `$body` on the typed handle `$x` inside whichever variant `$e` (a
/// `CCvar` or `CBoundCvar`) is; with `=> $to`, wrapped in `$to`'s variant
/// of the same type.
macro_rules! each_type {
    ($e:expr, $from:ident, |$x:ident| $body:expr) => {
        match $e {
            $from::I32($x) => $body,
            $from::U32($x) => $body,
            $from::U64($x) => $body,
            $from::I64($x) => $body,
            $from::F64($x) => $body,
            $from::Str($x) => $body,
        }
    };
    ($e:expr, $from:ident => $to:ident, |$x:ident| $body:expr) => {
        match $e {
            $from::I32($x) => $to::I32($body),
            $from::U32($x) => $to::U32($body),
            $from::U64($x) => $to::U64($body),
            $from::I64($x) => $to::I64($body),
            $from::F64($x) => $to::F64($body),
            $from::Str($x) => $to::Str($body),
        }
    };
}

enum RegisteredCvar {
    One(CCvar),
    Bound(CBoundCvar),
}

/// What every control variable declaration sets, whatever its type.
struct CvarCommon<'a> {
    desc: &'a str,
    verbosity: Verbosity,
    scope: Scope,
    bind: BindKind,
    category: Option<&'a str>,
    env: Option<&'a str>,
}

impl CvarCommon<'_> {
    fn apply<'r, T: crate::cvar::CvarType>(&self, b: CvarBuilder<'r, T>) -> CvarBuilder<'r, T> {
        let mut b = b
            .description(self.desc)
            .verbosity(self.verbosity)
            .scope(self.scope)
            .bind(self.bind);
        if let Some(cat) = self.category {
            b = b.category(cat);
        }
        if let Some(env) = self.env {
            b = b.env(env.split(',').map(str::trim).filter(|s| !s.is_empty()));
        }
        b
    }
}

/// # Safety
/// `p` is NULL or a valid `pvar_cvar_info` whose strings are C strings.
unsafe fn register_cvar(p: *const CCvarInfo, bound: bool) -> CResult<RegisteredCvar> {
    if p.is_null() || !p.is_aligned() {
        return Err(ERR_INVALID);
    }
    // SAFETY: non-NULL, aligned, valid by contract.
    let c = unsafe { &*p };
    let dt = raw_or(c.datatype, Datatype::Int, Datatype::from_raw)?;
    let scope = raw_or(c.scope, Scope::Local, Scope::from_raw)?;
    // SAFETY: the strings and the enumeration are valid (contract).
    let (name, desc, category, env, default_string, e) = unsafe {
        (
            arg_str(c.name, ERR_INVALID)?,
            opt_str(c.description)?.unwrap_or(""),
            opt_str(c.category)?,
            opt_str(c.env)?,
            opt_str(c.default_string)?.unwrap_or(""),
            enumeration(c.enum_name, c.enum_items, c.enum_len)?,
        )
    };
    let (verbosity, bind) = (verbosity(c.verbosity)?, bind(c.bind)?);
    let reg = registry();
    let common = CvarCommon {
        desc,
        verbosity,
        scope,
        bind,
        category,
        env,
    };
    macro_rules! one {
        ($t:ty, $v:ident, $default:expr, |$b:ident| $extra:expr) => {{
            let $b = common.apply(reg.cvar::<$t>(name)).default($default);
            let b = $extra;
            if bound {
                RegisteredCvar::Bound(CBoundCvar::$v(b.register_bound().rec()?))
            } else {
                RegisteredCvar::One(CCvar::$v(b.register().rec()?))
            }
        }};
    }
    Ok(match dt {
        Datatype::Int => one!(i32, I32, c.default_int as i32, |b| match &e {
            Some(e) => b.enumeration(e.clone()),
            None => b,
        }),
        Datatype::Unsigned => one!(u32, U32, c.default_unsigned as u32, |b| b),
        Datatype::UnsignedLongLong => one!(u64, U64, c.default_unsigned, |b| b),
        Datatype::UnsignedLong => one!(u64, U64, c.default_unsigned, |b| b
            .datatype(Datatype::UnsignedLong)),
        Datatype::Count => one!(i64, I64, c.default_int, |b| b),
        Datatype::Double => one!(f64, F64, c.default_double, |b| b),
        Datatype::Char => one!(String, Str, default_string, |b| if c.capacity > 0 {
            b.capacity(c.capacity)
        } else {
            b
        }),
    })
}

/// Declares an unbound control variable; `*cvar` receives its handle.
///
/// # Safety
/// `info` points to a valid `pvar_cvar_info`; `cvar` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_register(
    info: *const CCvarInfo,
    cvar: *mut *mut c_void,
) -> c_int {
    guarded(|| {
        require(cvar)?;
        // SAFETY: caller's contract.
        match unsafe { register_cvar(info, false) }? {
            // SAFETY: checked by `require`.
            RegisteredCvar::One(c) => unsafe { set_req(cvar, into_ptr(c)) },
            RegisteredCvar::Bound(_) => Err(ERR_INVALID),
        }
    })
}

/// Declares a control variable bound to objects of `info->bind`.
///
/// # Safety
/// `info` points to a valid `pvar_cvar_info`; `bound` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_register_bound(
    info: *const CCvarInfo,
    bound: *mut *mut c_void,
) -> c_int {
    guarded(|| {
        require(bound)?;
        // SAFETY: caller's contract.
        match unsafe { register_cvar(info, true) }? {
            // SAFETY: checked by `require`.
            RegisteredCvar::Bound(b) => unsafe { set_req(bound, into_ptr(b)) },
            RegisteredCvar::One(_) => Err(ERR_INVALID),
        }
    })
}

/// Creates the value of a bound control variable for `object`.
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound_cvar`; `cvar` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_cvar_create(
    bound: *mut c_void,
    object: u64,
    cvar: *mut *mut c_void,
) -> c_int {
    guarded(|| {
        require(cvar)?;
        // SAFETY: caller's contract.
        let b = unsafe { deref::<CBoundCvar>(bound) }.ok_or(ERR_INVALID)?;
        let c = each_type!(b, CBoundCvar => CCvar, |b| b.create_instance(object).rec()?);
        // SAFETY: checked by `require`.
        unsafe { set_req(cvar, into_ptr(c)) }
    })
}

/// Drops the value of a bound control variable for `object`: tool handles
/// bound to it then fail with `MPI_T_ERR_INVALID_INDEX`.
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_cvar_drop(bound: *mut c_void, object: u64) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let b = unsafe { deref::<CBoundCvar>(bound) }.ok_or(ERR_INVALID)?;
        each_type!(b, CBoundCvar, |b| b.drop_instance(object)).rec()
    })
}

/// Frees a `pvar_bound_cvar` (the variable stays registered).
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound_cvar`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_cvar_free(bound: *mut c_void) {
    // SAFETY: caller's contract.
    unsafe { free_ptr::<CBoundCvar>(bound) }
}

/// Frees a `pvar_cvar` (the variable stays registered).
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_free(cvar: *mut c_void) {
    // SAFETY: caller's contract.
    unsafe { free_ptr::<CCvar>(cvar) }
}

/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
unsafe fn cvar<'a>(p: *mut c_void) -> Option<&'a CCvar> {
    // SAFETY: forwarded contract.
    unsafe { deref::<CCvar>(p) }
}

/// The value as a signed integer (doubles truncated; 0 for strings/NULL).
/// One relaxed atomic load.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_get_int(cvar_: *mut c_void) -> i64 {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => c.get() as i64,
        Some(CCvar::U32(c)) => c.get() as i64,
        Some(CCvar::U64(c)) => c.get() as i64,
        Some(CCvar::I64(c)) => c.get(),
        Some(CCvar::F64(c)) => c.get() as i64,
        _ => 0,
    }
}

/// The value as an unsigned integer. One relaxed atomic load.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_get_unsigned(cvar_: *mut c_void) -> u64 {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::U32(c)) => c.get() as u64,
        Some(CCvar::U64(c)) => c.get(),
        // SAFETY: same live handle.
        _ => (unsafe { pvar_cvar_get_int(cvar_) }) as u64,
    }
}

/// The value as a double. One relaxed atomic load.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_get_double(cvar_: *mut c_void) -> f64 {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::F64(c)) => c.get(),
        Some(CCvar::U32(c)) => c.get() as f64,
        Some(CCvar::U64(c)) => c.get() as f64,
        // SAFETY: same live handle.
        _ => (unsafe { pvar_cvar_get_int(cvar_) }) as f64,
    }
}

/// A string variable's value, with the MPI_T string convention on
/// `(buf, len)`. `MPI_T_ERR_INVALID` for NULL or a non-string variable.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`; `(buf, len)` as in MPI_T.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_get_string(
    cvar_: *mut c_void,
    buf: *mut c_char,
    len: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        match unsafe { cvar(cvar_) } {
            Some(CCvar::Str(c)) => {
                // SAFETY: caller's contract on `(buf, len)`.
                unsafe { put_string(c.get(), buf, len) };
                Ok(())
            }
            _ => Err(ERR_INVALID),
        }
    })
}

/// Sets a numeric value from the component side (no scope or freeze
/// check); `MPI_T_ERR_INVALID` for NULL or a string variable.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_set_double(cvar_: *mut c_void, v: f64) -> c_int {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => c.set(v as i32),
        Some(CCvar::U32(c)) => c.set(v as u32),
        Some(CCvar::U64(c)) => c.set(v as u64),
        Some(CCvar::I64(c)) => c.set(v as i64),
        Some(CCvar::F64(c)) => c.set(v),
        _ => return ERR_INVALID,
    }
    crate::ffi::boundary::SUCCESS
}

/// Sets an integer value from the component side (no scope or freeze
/// check).
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_set_int(cvar_: *mut c_void, v: i64) -> c_int {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => c.set(v as i32),
        Some(CCvar::U32(c)) => c.set(v as u32),
        Some(CCvar::U64(c)) => c.set(v as u64),
        Some(CCvar::I64(c)) => c.set(v),
        Some(CCvar::F64(c)) => c.set(v as f64),
        _ => return ERR_INVALID,
    }
    crate::ffi::boundary::SUCCESS
}

/// Sets an unsigned value from the component side (no scope or freeze
/// check); for the full `uint64_t` range.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_set_unsigned(cvar_: *mut c_void, v: u64) -> c_int {
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => c.set(v as i32),
        Some(CCvar::U32(c)) => c.set(v as u32),
        Some(CCvar::U64(c)) => c.set(v),
        Some(CCvar::I64(c)) => c.set(v as i64),
        Some(CCvar::F64(c)) => c.set(v as f64),
        _ => return ERR_INVALID,
    }
    crate::ffi::boundary::SUCCESS
}

/// Sets a string value from the component side.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`; `s` a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_set_string(cvar_: *mut c_void, s: *const c_char) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let (c, s) = unsafe { (cvar(cvar_), arg_str(s, ERR_INVALID)?) };
        match c {
            Some(CCvar::Str(c)) => c.set(s).rec(),
            _ => Err(ERR_INVALID),
        }
    })
}

/// Forbids (`frozen != 0`) or allows tool writes: while frozen they fail
/// with `MPI_T_ERR_CVAR_SET_NOT_NOW`.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_freeze(cvar_: *mut c_void, frozen: c_int) {
    // SAFETY: caller's contract.
    if let Some(c) = unsafe { cvar(cvar_) } {
        each_type!(c, CCvar, |c| if frozen != 0 {
            c.freeze()
        } else {
            c.unfreeze()
        })
    }
}

/// The control variable's index (as `MPI_T_cvar_get_info` knows it), -1
/// for NULL.
///
/// # Safety
/// `cvar` is NULL or a live `pvar_cvar`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_cvar_index(cvar_: *mut c_void) -> c_int {
    // SAFETY: caller's contract.
    let i = unsafe { cvar(cvar_) }.and_then(|c| each_type!(c, CCvar, |c| c.index()));
    i.map_or(-1, to_int)
}
