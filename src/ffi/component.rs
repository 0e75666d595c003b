//! `include/pvar.h`: the component side from C — registering performance
//! variables of every class (arrays, bound instances, callback variables
//! with C function pointers and a `void *` context), categories and control
//! variables in the process-wide registry, and updating them.
//!
//! A `pvar_var` is a `Box` of the typed Rust handle ([`Var`]); an update is
//! one call into Rust that matches the class and runs the inlined Rust fast
//! path (a relaxed load and store of the calling thread's cell for
//! counters). Updates on a NULL handle, on an element out of range, or of a
//! kind the class does not support (e.g. `pvar_dec` on a counter) do
//! nothing: they return `void` to stay as cheap as the Rust calls.
//!
//! Component handles are plain owned pointers (like `FILE *`): using one
//! after `pvar_var_free` is a bug in the caller, as in any C API. The tool
//! side (`mpi_t.h`) is where every handle is validated.

use core::ffi::{c_char, c_int, c_long, c_void};
use std::cell::RefCell;
use std::ffi::CString;
use std::time::Duration;

use super::strings::{arg_str, opt_str, put_string};
use super::{CResult, ERR_INVALID, guarded, index, registry, require, set_req, to_int};
use crate::component::PvarBuilder;
use crate::cvar::CvarBuilder;
use crate::error::Error;
use crate::kinds::{BindKind, Datatype, PvarClass, Scope, Verbosity};
use crate::{
    Aggregate, Bound, BoundCvar, Callbacks, Counter, Cvar, Enumeration, Generic, HighWatermark,
    Level, LowWatermark, Notify, Percentage, Size, State, Timer,
};

// ---------------------------------------------------------------------------
// Errors: the code is returned, the message kept for `pvar_last_error`.

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn fail(e: Error) -> c_int {
    let msg = CString::new(e.to_string().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(msg));
    e.code().raw()
}

trait Recorded<T> {
    fn rec(self) -> CResult<T>;
}

impl<T> Recorded<T> for crate::Result<T> {
    fn rec(self) -> CResult<T> {
        self.map_err(fail)
    }
}

/// The message of the last failed `pvar_*` registration call on this
/// thread (e.g. why a registration was refused), or NULL. Valid until the
/// next failing call on the same thread.
#[unsafe(no_mangle)]
pub extern "C" fn pvar_last_error() -> *const c_char {
    LAST_ERROR.with(|l| {
        l.borrow()
            .as_ref()
            .map_or(core::ptr::null(), |s| s.as_ptr())
    })
}

// ---------------------------------------------------------------------------
// Descriptions passed from C.

/// `pvar_enum_item`.
#[repr(C)]
pub struct CEnumItem {
    name: *const c_char,
    value: c_int,
}

/// `pvar_info` (must match `include/pvar.h`).
#[repr(C)]
pub struct CPvarInfo {
    name: *const c_char,
    description: *const c_char,
    var_class: c_int,
    datatype: c_int,
    verbosity: c_int,
    bind: c_int,
    count: c_long,
    category: *const c_char,
    readonly: c_int,
    continuous: c_int,
    atomic: c_int,
    enum_name: *const c_char,
    enum_items: *const CEnumItem,
    enum_len: c_int,
}

/// `pvar_cvar_info` (must match `include/pvar.h`).
#[repr(C)]
pub struct CCvarInfo {
    name: *const c_char,
    description: *const c_char,
    datatype: c_int,
    verbosity: c_int,
    scope: c_int,
    bind: c_int,
    category: *const c_char,
    env: *const c_char,
    default_int: i64,
    default_unsigned: u64,
    default_double: f64,
    default_string: *const c_char,
    capacity: usize,
    enum_name: *const c_char,
    enum_items: *const CEnumItem,
    enum_len: c_int,
}

const PVAR_YES: c_int = 1;
const PVAR_NO: c_int = 2;
const COUNT_PER_OBJECT: c_long = -1;

fn tri(v: c_int) -> CResult<Option<bool>> {
    match v {
        0 => Ok(None),
        PVAR_YES => Ok(Some(true)),
        PVAR_NO => Ok(Some(false)),
        _ => Err(ERR_INVALID),
    }
}

fn verbosity(v: c_int) -> CResult<Verbosity> {
    if v == 0 {
        Ok(Verbosity::UserBasic)
    } else {
        Verbosity::from_raw(v).ok_or(ERR_INVALID)
    }
}

fn bind(v: c_int) -> CResult<BindKind> {
    if v == 0 {
        Ok(BindKind::NoObject)
    } else {
        BindKind::from_raw(v).ok_or(ERR_INVALID)
    }
}

/// Reads an enumeration description.
///
/// # Safety
/// `name` is NULL or a C string; `items` is NULL or valid for `len` items
/// whose names are C strings.
unsafe fn enumeration(
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
struct Desc {
    name: String,
    description: String,
    class: PvarClass,
    datatype: Datatype,
    verbosity: Verbosity,
    bind: BindKind,
    count: Option<usize>,
    category: Option<String>,
    readonly: Option<bool>,
    continuous: Option<bool>,
    atomic: Option<bool>,
    enumeration: Option<Enumeration>,
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
    unsafe fn read(p: *const CPvarInfo) -> CResult<Self> {
        if p.is_null() || !p.is_aligned() {
            return Err(ERR_INVALID);
        }
        // SAFETY: non-NULL, aligned, valid by contract.
        let c = unsafe { &*p };
        let class = PvarClass::from_raw(c.var_class).ok_or(ERR_INVALID)?;
        let datatype = if c.datatype == 0 {
            default_datatype(class)
        } else {
            Datatype::from_raw(c.datatype).ok_or(ERR_INVALID)?
        };
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

    fn apply<'r, H>(&self, mut b: PvarBuilder<'r, H>) -> PvarBuilder<'r, H> {
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

// ---------------------------------------------------------------------------
// The typed handles behind `pvar_var` and `pvar_bound`.

macro_rules! vars {
    ($($v:ident($t:ty)),* $(,)?) => {
        /// The Rust handle behind a `pvar_var`.
        pub(crate) enum Var { $($v($t),)* }
        /// The Rust handle behind a `pvar_bound`.
        pub(crate) enum BoundVar { $($v(Bound<$t>),)* }

        impl Var {
            fn index(&self) -> usize {
                match self { $(Self::$v(x) => x.index(),)* }
            }
            fn count(&self) -> usize {
                match self { $(Self::$v(x) => x.count(),)* }
            }
        }

        impl BoundVar {
            fn create(&self, object: u64, count: usize) -> crate::Result<Var> {
                match self { $(Self::$v(b) => b.create_instance(object, count).map(Var::$v),)* }
            }
            fn drop_instance(&self, object: u64) -> crate::Result<()> {
                match self { $(Self::$v(b) => b.drop_instance(object),)* }
            }
            fn index(&self) -> usize {
                match self { $(Self::$v(b) => b.index(),)* }
            }
        }
    };
}

vars! {
    Counter(Counter),
    AggU32(Aggregate<u32>), AggU64(Aggregate<u64>), AggF64(Aggregate<f64>),
    Timer(Timer),
    LevelU32(Level<u32>), LevelU64(Level<u64>), LevelF64(Level<f64>),
    SizeU32(Size<u32>), SizeU64(Size<u64>), SizeF64(Size<f64>),
    Percentage(Percentage),
    State(State),
    HighU32(HighWatermark<u32>), HighU64(HighWatermark<u64>), HighF64(HighWatermark<f64>),
    LowU32(LowWatermark<u32>), LowU64(LowWatermark<u64>), LowF64(LowWatermark<f64>),
    GenI32(Generic<i32>), GenU32(Generic<u32>), GenU64(Generic<u64>),
    GenI64(Generic<i64>), GenF64(Generic<f64>),
}

enum Registered {
    Var(Var),
    Bound(BoundVar),
}

#[derive(Clone, Copy)]
enum Elem {
    U32,
    U64,
    F64,
    I32,
    I64,
    Char,
}

fn elem(d: Datatype) -> Elem {
    match d {
        Datatype::Unsigned => Elem::U32,
        Datatype::UnsignedLong | Datatype::UnsignedLongLong => Elem::U64,
        Datatype::Double => Elem::F64,
        Datatype::Int => Elem::I32,
        Datatype::Count => Elem::I64,
        Datatype::Char => Elem::Char,
    }
}

fn register(d: &Desc, bound: bool) -> crate::Result<Registered> {
    let reg = registry();
    let name = d.name.as_str();
    macro_rules! one {
        ($builder:expr, $v:ident) => {{
            let b = d.apply($builder);
            if bound {
                Registered::Bound(BoundVar::$v(b.register_bound()?))
            } else {
                Registered::Var(Var::$v(b.register()?))
            }
        }};
    }
    use PvarClass as C;
    Ok(match (d.class, elem(d.datatype)) {
        (C::Counter, _) => one!(reg.counter(name), Counter),
        (C::Timer, _) => one!(reg.timer(name), Timer),
        (C::Percentage, _) => one!(reg.percentage(name), Percentage),
        (C::State, _) => one!(reg.state(name), State),
        (C::Aggregate, Elem::U32) => one!(reg.aggregate::<u32>(name), AggU32),
        (C::Aggregate, Elem::U64) => one!(reg.aggregate::<u64>(name), AggU64),
        (C::Aggregate, Elem::F64) => one!(reg.aggregate::<f64>(name), AggF64),
        (C::Level, Elem::U32) => one!(reg.level::<u32>(name), LevelU32),
        (C::Level, Elem::U64) => one!(reg.level::<u64>(name), LevelU64),
        (C::Level, Elem::F64) => one!(reg.level::<f64>(name), LevelF64),
        (C::Size, Elem::U32) => one!(reg.size::<u32>(name), SizeU32),
        (C::Size, Elem::U64) => one!(reg.size::<u64>(name), SizeU64),
        (C::Size, Elem::F64) => one!(reg.size::<f64>(name), SizeF64),
        (C::HighWatermark, Elem::U32) => one!(reg.high_watermark::<u32>(name), HighU32),
        (C::HighWatermark, Elem::U64) => one!(reg.high_watermark::<u64>(name), HighU64),
        (C::HighWatermark, Elem::F64) => one!(reg.high_watermark::<f64>(name), HighF64),
        (C::LowWatermark, Elem::U32) => one!(reg.low_watermark::<u32>(name), LowU32),
        (C::LowWatermark, Elem::U64) => one!(reg.low_watermark::<u64>(name), LowU64),
        (C::LowWatermark, Elem::F64) => one!(reg.low_watermark::<f64>(name), LowF64),
        (C::Generic, Elem::I32) => one!(reg.generic::<i32>(name), GenI32),
        (C::Generic, Elem::U32) => one!(reg.generic::<u32>(name), GenU32),
        (C::Generic, Elem::U64) => one!(reg.generic::<u64>(name), GenU64),
        (C::Generic, Elem::I64) => one!(reg.generic::<i64>(name), GenI64),
        (C::Generic, Elem::F64) => one!(reg.generic::<f64>(name), GenF64),
        _ => {
            return Err(Error::Registration(format!(
                "pvar '{name}': datatype {} is not allowed for {} (MPI_CHAR needs a callback \
                 variable)",
                d.datatype.c_name(),
                d.class.c_name()
            )));
        }
    })
}

/// Boxes `v` into an opaque C pointer.
fn into_ptr<T>(v: T) -> *mut c_void {
    Box::into_raw(Box::new(v)).cast()
}

/// # Safety
/// `p` is NULL or a pointer from [`into_ptr`] for a `T` not yet freed.
#[inline(always)]
unsafe fn deref<'a, T>(p: *mut c_void) -> Option<&'a T> {
    // SAFETY: forwarded contract.
    unsafe { p.cast::<T>().as_ref() }
}

/// # Safety
/// `p` is NULL or a pointer from [`into_ptr`] for a `T` not yet freed; it
/// is not used afterwards.
unsafe fn free_ptr<T>(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: from `Box::into_raw` (contract), freed once.
        drop(unsafe { Box::from_raw(p.cast::<T>()) });
    }
}

// ---------------------------------------------------------------------------
// Registration entry points.

/// Registers an unbound variable; `*var` receives its update handle.
///
/// # Safety
/// `info` points to a valid `pvar_info`; `var` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_register(info: *const CPvarInfo, var: *mut *mut c_void) -> c_int {
    guarded(|| {
        require(var)?;
        // SAFETY: caller's contract.
        let d = unsafe { Desc::read(info) }?;
        match register(&d, false).rec()? {
            // SAFETY: checked by `require`.
            Registered::Var(v) => unsafe { set_req(var, into_ptr(v)) },
            Registered::Bound(_) => Err(ERR_INVALID),
        }
    })
}

/// Registers a variable bound to objects of `info->bind`; instances are
/// created per object with [`pvar_bound_create`].
///
/// # Safety
/// `info` points to a valid `pvar_info`; `bound` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_register_bound(
    info: *const CPvarInfo,
    bound: *mut *mut c_void,
) -> c_int {
    guarded(|| {
        require(bound)?;
        // SAFETY: caller's contract.
        let d = unsafe { Desc::read(info) }?;
        match register(&d, true).rec()? {
            // SAFETY: checked by `require`.
            Registered::Bound(b) => unsafe { set_req(bound, into_ptr(b)) },
            Registered::Var(_) => Err(ERR_INVALID),
        }
    })
}

/// Creates the instance of a bound variable for the object whose handle
/// value is `object` (e.g. `(uint64_t)(uintptr_t)MPI_COMM_WORLD`), with
/// `count` elements (0: the registered fixed count).
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound`; `var` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_create(
    bound: *mut c_void,
    object: u64,
    count: usize,
    var: *mut *mut c_void,
) -> c_int {
    guarded(|| {
        require(var)?;
        // SAFETY: caller's contract.
        let b = unsafe { deref::<BoundVar>(bound) }.ok_or(ERR_INVALID)?;
        let count = if count == 0 {
            match registry().pvar_info(b.index()).rec()?.count {
                crate::ElementCount::Fixed(n) => n,
                crate::ElementCount::PerObject => return Err(ERR_INVALID),
            }
        } else {
            count
        };
        let v = b.create(object, count).rec()?;
        // SAFETY: checked by `require`.
        unsafe { set_req(var, into_ptr(v)) }
    })
}

/// Drops the instance for `object`: tool handles bound to it then fail with
/// `MPI_T_ERR_INVALID_INDEX`. Update handles of the instance stay safe to
/// use (their updates go nowhere a tool can see) until freed.
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_drop(bound: *mut c_void, object: u64) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let b = unsafe { deref::<BoundVar>(bound) }.ok_or(ERR_INVALID)?;
        b.drop_instance(object).rec()
    })
}

/// Frees a `pvar_bound` (the variable stays registered).
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_free(bound: *mut c_void) {
    // SAFETY: caller's contract.
    unsafe { free_ptr::<BoundVar>(bound) }
}

/// The index of a bound variable, or -1 for NULL.
///
/// # Safety
/// `bound` is NULL or a live `pvar_bound`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_bound_index(bound: *mut c_void) -> c_int {
    // SAFETY: caller's contract.
    unsafe { deref::<BoundVar>(bound) }.map_or(-1, |b| to_int(b.index()))
}

/// Frees an update handle (the variable stays registered).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_var_free(var: *mut c_void) {
    // SAFETY: caller's contract.
    unsafe { free_ptr::<Var>(var) }
}

/// The variable's index (as `MPI_T_pvar_get_info` knows it), or -1.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_var_index(var: *mut c_void) -> c_int {
    // SAFETY: caller's contract.
    unsafe { deref::<Var>(var) }.map_or(-1, |v| to_int(v.index()))
}

/// The number of elements of the handle (0 for NULL).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_var_count(var: *mut c_void) -> usize {
    // SAFETY: caller's contract.
    unsafe { deref::<Var>(var) }.map_or(0, Var::count)
}

/// Deactivates variable `index` (component unloaded): tools' accesses fail
/// with `MPI_T_ERR_INVALID_INDEX`; registering it again reactivates it.
#[unsafe(no_mangle)]
pub extern "C" fn pvar_deactivate(index_: c_int) -> c_int {
    guarded(|| {
        registry()
            .deactivate_pvar(index(index_, super::ERR_INVALID_INDEX)?)
            .rec()
    })
}

/// Allocates the calling thread's cells for every variable registered so
/// far, so that later updates from this thread (also from a signal
/// handler) never allocate.
#[unsafe(no_mangle)]
pub extern "C" fn pvar_prepare_thread() {
    registry().prepare_thread();
}

// ---------------------------------------------------------------------------
// Callback variables.

/// `pvar_read_fn`.
type ReadFn = unsafe extern "C" fn(*mut c_void, u64, c_int, usize) -> u64;
/// `pvar_write_fn`.
type WriteFn = unsafe extern "C" fn(*mut c_void, u64, c_int, usize, u64);
/// `pvar_notify_fn`.
type NotifyFn = unsafe extern "C" fn(*mut c_void, c_int, u64, c_int) -> c_long;

/// The component's context pointer, handed back to its callbacks.
#[derive(Clone, Copy)]
struct Ctx(*mut c_void);

// SAFETY: the engine only passes the pointer back to the component's own
// callbacks; `pvar.h` documents that the callbacks (and so their use of the
// context) must be thread-safe, as a read may come from any thread.
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

impl Ctx {
    // A method, so closures capture the whole `Ctx` (Send + Sync), not
    // its raw-pointer field.
    fn get(self) -> *mut c_void {
        self.0
    }
}

fn split(object: Option<u64>) -> (u64, c_int) {
    (object.unwrap_or(0), object.is_some() as c_int)
}

/// Registers a variable of any class whose values the component computes.
/// `read` is required; `write` (NULL: none) is called for tool writes of
/// classes without per-handle state; `notify` (NULL: none) hears
/// `PVAR_NOTIFY_BIND/START/STOP/FREE` and, for BIND, returns the element
/// count for the object (-1: the registered count). `*index_out` (may be
/// NULL) receives the variable's index.
///
/// # Safety
/// `info` points to a valid `pvar_info`; the function pointers are NULL or
/// valid for the lifetime of the process, and thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_register_callback(
    info: *const CPvarInfo,
    read: Option<ReadFn>,
    write: Option<WriteFn>,
    notify: Option<NotifyFn>,
    context: *mut c_void,
    index_out: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let d = unsafe { Desc::read(info) }?;
        let read = read.ok_or(ERR_INVALID)?;
        let ctx = Ctx(context);
        let mut cbs = Callbacks::new(move |obj, i| {
            let (o, b) = split(obj);
            // SAFETY: the component's read function and context (contract).
            unsafe { read(ctx.get(), o, b, i) }
        });
        if let Some(write) = write {
            cbs = cbs.with_write(move |obj, i, v| {
                let (o, b) = split(obj);
                // SAFETY: the component's write function (contract).
                unsafe { write(ctx.get(), o, b, i, v) }
            });
        }
        if let Some(notify) = notify {
            cbs = cbs.with_notify(move |ev, obj| {
                let (o, b) = split(obj);
                let ev = match ev {
                    Notify::Bind => 0,
                    Notify::Start => 1,
                    Notify::Stop => 2,
                    Notify::Free => 3,
                };
                // SAFETY: the component's notify function (contract).
                let n = unsafe { notify(ctx.get(), ev, o, b) };
                usize::try_from(n).ok()
            });
        }
        let reg = registry();
        let b = d.apply(reg.callback_pvar(&d.name, d.class, d.datatype, cbs));
        let index = if d.bind == BindKind::NoObject {
            b.register().rec()?.index()
        } else {
            b.register_bound().rec()?.index()
        };
        // SAFETY: NULL (ignored) or valid (contract).
        unsafe { super::set_opt(index_out, to_int(index)) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Updates: void, cheap, no-ops on NULL / out of range / unsupported.

macro_rules! update {
    ($(#[$m:meta])* $name:ident, $name_at:ident ( $($arg:ident : $ty:ty),* ) => |$v:ident, $i:ident| $body:expr) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `var` is NULL or a live `pvar_var`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "C" fn $name(var: *mut c_void $(, $arg: $ty)*) {
            // SAFETY: caller's contract.
            if let Some($v) = unsafe { deref::<Var>(var) } {
                let $i = 0usize;
                $body
            }
        }

        $(#[$m])*
        /// (Element `i` of an array variable.)
        ///
        /// # Safety
        /// `var` is NULL or a live `pvar_var`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "C" fn $name_at(var: *mut c_void, i: usize $(, $arg: $ty)*) {
            // SAFETY: caller's contract.
            if let Some($v) = unsafe { deref::<Var>(var) } {
                if i < $v.count() {
                    let $i = i;
                    $body
                }
            }
        }
    };
}

update! {
    /// Adds 1: COUNTER, AGGREGATE, LEVEL.
    pvar_inc, pvar_inc_at() => |v, i| match v {
        Var::Counter(x) => x.inc_at(i),
        Var::AggU32(x) => x.add_at(i, 1),
        Var::AggU64(x) => x.add_at(i, 1),
        Var::AggF64(x) => x.add_at(i, 1.0),
        Var::LevelU32(x) => x.inc_at(i),
        Var::LevelU64(x) => x.inc_at(i),
        Var::LevelF64(x) => x.inc_at(i),
        _ => {}
    }
}

update! {
    /// Subtracts 1: LEVEL.
    pvar_dec, pvar_dec_at() => |v, i| match v {
        Var::LevelU32(x) => x.dec_at(i),
        Var::LevelU64(x) => x.dec_at(i),
        Var::LevelF64(x) => x.dec_at(i),
        _ => {}
    }
}

update! {
    /// Adds `n`: COUNTER, AGGREGATE.
    pvar_add, pvar_add_at(n: u64) => |v, i| match v {
        Var::Counter(x) => x.add_at(i, n),
        Var::AggU32(x) => x.add_at(i, n as u32),
        Var::AggU64(x) => x.add_at(i, n),
        Var::AggF64(x) => x.add_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Adds `x`: AGGREGATE of `MPI_DOUBLE` (integer aggregates add `x`
    /// truncated).
    pvar_add_double, pvar_add_double_at(d: f64) => |v, i| match v {
        Var::AggF64(x) => x.add_at(i, d),
        Var::AggU32(x) => x.add_at(i, d as u32),
        Var::AggU64(x) => x.add_at(i, d as u64),
        _ => {}
    }
}

update! {
    /// Sets an integer value: LEVEL, SIZE, STATE, GENERIC.
    pvar_set, pvar_set_at(n: u64) => |v, i| match v {
        Var::LevelU32(x) => x.set_at(i, n as u32),
        Var::LevelU64(x) => x.set_at(i, n),
        Var::LevelF64(x) => x.set_at(i, n as f64),
        Var::SizeU32(x) => x.set_at(i, n as u32),
        Var::SizeU64(x) => x.set_at(i, n),
        Var::SizeF64(x) => x.set_at(i, n as f64),
        Var::State(x) => x.set_at(i, n as i32),
        Var::GenI32(x) => x.set_at(i, n as i32),
        Var::GenU32(x) => x.set_at(i, n as u32),
        Var::GenU64(x) => x.set_at(i, n),
        Var::GenI64(x) => x.set_at(i, n as i64),
        Var::GenF64(x) => x.set_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Sets a signed value: STATE and signed GENERIC (others as `pvar_set`).
    pvar_set_int, pvar_set_int_at(n: i64) => |v, i| match v {
        Var::State(x) => x.set_at(i, n as i32),
        Var::GenI32(x) => x.set_at(i, n as i32),
        Var::GenI64(x) => x.set_at(i, n),
        Var::GenF64(x) => x.set_at(i, n as f64),
        Var::LevelF64(x) => x.set_at(i, n as f64),
        Var::SizeF64(x) => x.set_at(i, n as f64),
        Var::LevelU32(x) => x.set_at(i, n.max(0) as u32),
        Var::LevelU64(x) => x.set_at(i, n.max(0) as u64),
        Var::SizeU32(x) => x.set_at(i, n.max(0) as u32),
        Var::SizeU64(x) => x.set_at(i, n.max(0) as u64),
        Var::GenU32(x) => x.set_at(i, n as u32),
        Var::GenU64(x) => x.set_at(i, n as u64),
        _ => {}
    }
}

update! {
    /// Sets a double value: PERCENTAGE and `MPI_DOUBLE` LEVEL, SIZE,
    /// GENERIC.
    pvar_set_double, pvar_set_double_at(d: f64) => |v, i| match v {
        Var::Percentage(x) => x.set_at(i, d),
        Var::LevelF64(x) => x.set_at(i, d),
        Var::SizeF64(x) => x.set_at(i, d),
        Var::GenF64(x) => x.set_at(i, d),
        _ => {}
    }
}

update! {
    /// Records the current level of a HIGH/LOWWATERMARK (integer).
    pvar_watermark_update, pvar_watermark_update_at(n: u64) => |v, i| match v {
        Var::HighU32(x) => x.update_at(i, n as u32),
        Var::HighU64(x) => x.update_at(i, n),
        Var::HighF64(x) => x.update_at(i, n as f64),
        Var::LowU32(x) => x.update_at(i, n as u32),
        Var::LowU64(x) => x.update_at(i, n),
        Var::LowF64(x) => x.update_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Records the current level of a HIGH/LOWWATERMARK (double).
    pvar_watermark_update_double, pvar_watermark_update_double_at(d: f64) => |v, i| match v {
        Var::HighF64(x) => x.update_at(i, d),
        Var::LowF64(x) => x.update_at(i, d),
        Var::HighU32(x) => x.update_at(i, d as u32),
        Var::HighU64(x) => x.update_at(i, d as u64),
        Var::LowU32(x) => x.update_at(i, d as u32),
        Var::LowU64(x) => x.update_at(i, d as u64),
        _ => {}
    }
}

update! {
    /// Starts timing on the calling thread: TIMER.
    pvar_timer_start, pvar_timer_start_at() => |v, i| if let Var::Timer(x) = v { x.start_at(i) }
}

update! {
    /// Stops timing on the calling thread and adds the elapsed time: TIMER.
    pvar_timer_stop, pvar_timer_stop_at() => |v, i| if let Var::Timer(x) = v { x.stop_at(i) }
}

update! {
    /// Adds an externally measured duration in nanoseconds: TIMER.
    pvar_timer_add_ns, pvar_timer_add_ns_at(ns: u64) => |v, i| if let Var::Timer(x) = v {
        x.add_ticks_at(i, x.clock().duration_to_ticks(Duration::from_nanos(ns)))
    }
}

/// Sets every element's current level of a watermark (MPICH's `INIT`).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_watermark_init(var: *mut c_void, d: f64) {
    // SAFETY: caller's contract.
    match unsafe { deref::<Var>(var) } {
        Some(Var::HighU32(x)) => x.init(d as u32),
        Some(Var::HighU64(x)) => x.init(d as u64),
        Some(Var::HighF64(x)) => x.init(d),
        Some(Var::LowU32(x)) => x.init(d as u32),
        Some(Var::LowU64(x)) => x.init(d as u64),
        Some(Var::LowF64(x)) => x.init(d),
        _ => {}
    }
}

/// The component's own view of element `i`, as a double (integers
/// converted; TIMER in seconds). 0 for NULL or out of range.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_get_double_at(var: *mut c_void, i: usize) -> f64 {
    // SAFETY: caller's contract.
    let Some(v) = (unsafe { deref::<Var>(var) }) else {
        return 0.0;
    };
    if i >= v.count() {
        return 0.0;
    }
    match v {
        Var::Counter(x) => x.get_at(i) as f64,
        Var::AggU32(x) => x.get_at(i) as f64,
        Var::AggU64(x) => x.get_at(i) as f64,
        Var::AggF64(x) => x.get_at(i),
        Var::Timer(x) => x.get_seconds_at(i),
        Var::LevelU32(x) => x.get_at(i) as f64,
        Var::LevelU64(x) => x.get_at(i) as f64,
        Var::LevelF64(x) => x.get_at(i),
        Var::SizeU32(x) => x.get_at(i) as f64,
        Var::SizeU64(x) => x.get_at(i) as f64,
        Var::SizeF64(x) => x.get_at(i),
        Var::Percentage(x) => x.get_at(i),
        Var::State(x) => x.get_at(i) as f64,
        Var::HighU32(x) => x.level_at(i) as f64,
        Var::HighU64(x) => x.level_at(i) as f64,
        Var::HighF64(x) => x.level_at(i),
        Var::LowU32(x) => x.level_at(i) as f64,
        Var::LowU64(x) => x.level_at(i) as f64,
        Var::LowF64(x) => x.level_at(i),
        Var::GenI32(x) => x.get_at(i) as f64,
        Var::GenU32(x) => x.get_at(i) as f64,
        Var::GenU64(x) => x.get_at(i) as f64,
        Var::GenI64(x) => x.get_at(i) as f64,
        Var::GenF64(x) => x.get_at(i),
    }
}

/// The component's own view of element `i` as an unsigned integer
/// (doubles truncated, TIMER in nanoseconds). 0 for NULL or out of range.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_get_at(var: *mut c_void, i: usize) -> u64 {
    // SAFETY: caller's contract.
    let Some(v) = (unsafe { deref::<Var>(var) }) else {
        return 0;
    };
    if i >= v.count() {
        return 0;
    }
    match v {
        Var::Counter(x) => x.get_at(i),
        Var::AggU32(x) => x.get_at(i) as u64,
        Var::AggU64(x) => x.get_at(i),
        Var::LevelU32(x) => x.get_at(i) as u64,
        Var::LevelU64(x) => x.get_at(i),
        Var::SizeU32(x) => x.get_at(i) as u64,
        Var::SizeU64(x) => x.get_at(i),
        Var::HighU32(x) => x.level_at(i) as u64,
        Var::HighU64(x) => x.level_at(i),
        Var::LowU32(x) => x.level_at(i) as u64,
        Var::LowU64(x) => x.level_at(i),
        Var::GenU32(x) => x.get_at(i) as u64,
        Var::GenU64(x) => x.get_at(i),
        Var::GenI32(x) => x.get_at(i) as u64,
        Var::GenI64(x) => x.get_at(i) as u64,
        Var::State(x) => x.get_at(i) as u64,
        Var::Timer(x) => (x.get_seconds_at(i) * 1e9) as u64,
        // SAFETY: same live handle.
        _ => (unsafe { pvar_get_double_at(var, i) }) as u64,
    }
}

// ---------------------------------------------------------------------------
// Categories.

/// Defines a category (or returns the existing one with the same
/// description); `*index_out` (may be NULL) receives its index.
///
/// # Safety
/// `name` is a C string; `description` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_category_define(
    name: *const c_char,
    description: *const c_char,
    index_out: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let (name, desc) = unsafe { (arg_str(name, ERR_INVALID)?, opt_str(description)?) };
        let i = registry().define_category(name, desc.unwrap_or("")).rec()?;
        // SAFETY: NULL (ignored) or valid (contract).
        unsafe { super::set_opt(index_out, to_int(i)) };
        Ok(())
    })
}

/// Makes category `child` a member of category `parent` (either may be
/// defined later); refused if it would make a category contain itself.
///
/// # Safety
/// Both are C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_category_add_subcategory(
    parent: *const c_char,
    child: *const c_char,
) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let (p, c) = unsafe { (arg_str(parent, ERR_INVALID)?, arg_str(child, ERR_INVALID)?) };
        registry().categories().add_subcategory(p, c).rec()
    })
}

// ---------------------------------------------------------------------------
// Control variables.

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
    fn apply<'r, T: crate::CvarType>(&self, b: CvarBuilder<'r, T>) -> CvarBuilder<'r, T> {
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
    let dt = if c.datatype == 0 {
        Datatype::Int
    } else {
        Datatype::from_raw(c.datatype).ok_or(ERR_INVALID)?
    };
    let scope = if c.scope == 0 {
        Scope::Local
    } else {
        Scope::from_raw(c.scope).ok_or(ERR_INVALID)?
    };
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
        let c = match b {
            CBoundCvar::I32(b) => CCvar::I32(b.create_instance(object).rec()?),
            CBoundCvar::U32(b) => CCvar::U32(b.create_instance(object).rec()?),
            CBoundCvar::U64(b) => CCvar::U64(b.create_instance(object).rec()?),
            CBoundCvar::I64(b) => CCvar::I64(b.create_instance(object).rec()?),
            CBoundCvar::F64(b) => CCvar::F64(b.create_instance(object).rec()?),
            CBoundCvar::Str(b) => CCvar::Str(b.create_instance(object).rec()?),
        };
        // SAFETY: checked by `require`.
        unsafe { set_req(cvar, into_ptr(c)) }
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
    super::SUCCESS
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
    super::SUCCESS
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
    macro_rules! f {
        ($c:expr) => {
            if frozen != 0 {
                $c.freeze()
            } else {
                $c.unfreeze()
            }
        };
    }
    // SAFETY: caller's contract.
    match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => f!(c),
        Some(CCvar::U32(c)) => f!(c),
        Some(CCvar::U64(c)) => f!(c),
        Some(CCvar::I64(c)) => f!(c),
        Some(CCvar::F64(c)) => f!(c),
        Some(CCvar::Str(c)) => f!(c),
        None => {}
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
    let i = match unsafe { cvar(cvar_) } {
        Some(CCvar::I32(c)) => c.index(),
        Some(CCvar::U32(c)) => c.index(),
        Some(CCvar::U64(c)) => c.index(),
        Some(CCvar::I64(c)) => c.index(),
        Some(CCvar::F64(c)) => c.index(),
        Some(CCvar::Str(c)) => c.index(),
        None => None,
    };
    i.map_or(-1, to_int)
}
