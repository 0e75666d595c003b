//! Registration of performance variables (unbound, bound instances,
//! callback variables) and of categories.

use core::ffi::{c_char, c_int, c_long, c_void};

use super::desc::{CPvarInfo, Desc};
use super::{Recorded, deref, free_ptr, into_ptr};
use crate::ffi::boundary::{
    ERR_INVALID, PassBack, guarded, index, registry, require, set_req, to_int,
};
use crate::ffi::strings::{arg_str, opt_str};
use crate::pvar::{
    Aggregate, Bound, Counter, Generic, HighWatermark, Level, LowWatermark, Percentage, Size,
    State, Timer,
};
use crate::sync::Ordering;
use crate::sync::unmodelled::AtomicU64;
use crate::vocabulary::callback::{Callbacks, Notify};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::error::Error;
use crate::vocabulary::kinds::{BindKind, PvarClass};

macro_rules! vars {
    ($($v:ident($t:ty)),* $(,)?) => {
        /// The Rust handle behind a `pvar_var`.
        pub(crate) enum Var { $($v($t),)* }
        /// The Rust handle behind a `pvar_bound`.
        pub(crate) enum BoundVar { $($v(Bound<$t>),)* }

        impl Var {
            pub(super) fn index(&self) -> usize {
                match self { $(Self::$v(x) => x.index(),)* }
            }
            pub(super) fn count(&self) -> usize {
                match self { $(Self::$v(x) => x.count(),)* }
            }
        }

        impl BoundVar {
            fn create(&self, object: u64, count: usize) -> crate::vocabulary::error::Result<Var> {
                match self { $(Self::$v(b) => b.create_instance(object, count).map(Var::$v),)* }
            }
            fn drop_instance(&self, object: u64) -> crate::vocabulary::error::Result<()> {
                match self { $(Self::$v(b) => b.drop_instance(object),)* }
            }
            pub(super) fn index(&self) -> usize {
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

/// What a `pvar_var` points to: a serial, then the typed handle.
///
/// The serial is the handle's first word, which `pvar.h`'s use-site
/// caches read inline (`pvar_site.serial`, see `site.rs`). No two handles
/// of the process ever have the same serial, so a cache filled for a
/// handle that was freed never serves a later handle that the allocator
/// gave the same address.
#[repr(C)]
pub(crate) struct VarHandle {
    pub(super) serial: u64,
    pub(super) var: Var,
}

/// The next handle's serial; 0 is never given (a zeroed `pvar_site`).
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

impl VarHandle {
    fn new(var: Var) -> Self {
        // Uniqueness is all that is asked: a relaxed increment gives each
        // caller its own value. 2^64 handles are never made.
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        Self { serial, var }
    }
}

/// The `Var` behind a `pvar_var`.
///
/// # Safety
/// `p` is NULL or a live `pvar_var`.
#[inline(always)]
pub(super) unsafe fn var_of<'a>(p: *mut c_void) -> Option<&'a Var> {
    // SAFETY: forwarded contract: `p` came from `into_ptr(VarHandle)`.
    unsafe { deref::<VarHandle>(p) }.map(|h| &h.var)
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

fn register(d: &Desc, bound: bool) -> crate::vocabulary::error::Result<Registered> {
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
            return Err(Error::refused(format!(
                "pvar '{name}': datatype {} is not allowed for {} (MPI_CHAR needs a callback \
                 variable)",
                d.datatype.c_name(),
                d.class.c_name()
            )));
        }
    })
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
            Registered::Var(v) => unsafe { set_req(var, into_ptr(VarHandle::new(v))) },
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
            match registry().pvars().info(b.index()).rec()?.count {
                crate::vocabulary::ElementCount::Fixed(n) => n,
                crate::vocabulary::ElementCount::PerObject => return Err(ERR_INVALID),
            }
        } else {
            count
        };
        let v = b.create(object, count).rec()?;
        // SAFETY: checked by `require`.
        unsafe { set_req(var, into_ptr(VarHandle::new(v))) }
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

/// Names `object` (a handle value of bind kind `bind`, a `PVAR_BIND_*`
/// constant) for readers outside MPI_T: exported snapshots, `pvar read`
/// and `pvar top` show the name instead of the handle value
/// ([`Pvars::label_object`](crate::Pvars::label_object)). `label` NULL
/// forgets the name (do so before the handle value can be reused).
/// `MPI_T_ERR_INVALID` for an unknown bind kind, `PVAR_BIND_NO_OBJECT`, or
/// a label that is not UTF-8.
///
/// # Safety
/// `label` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_object_label(
    bind: c_int,
    object: u64,
    label: *const c_char,
) -> c_int {
    guarded(|| {
        let kind = BindKind::from_raw(bind)
            .filter(|k| *k != BindKind::NoObject)
            .ok_or(ERR_INVALID)?;
        // SAFETY: caller's contract.
        let label = unsafe { opt_str(label) }?;
        let pvars = registry().pvars();
        match label {
            Some(l) => pvars.label_object(kind, object, l),
            None => pvars.forget_object_label(kind, object),
        }
        Ok(())
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
    if !var.is_null() {
        // Before the address can be given to another handle: `pvar.h`'s
        // use-site caches keyed by this address are stale from now on.
        crate::hot::cells::site_cache::bump_c_epoch();
    }
    // SAFETY: caller's contract.
    unsafe { free_ptr::<VarHandle>(var) }
}

/// The variable's index (as `MPI_T_pvar_get_info` knows it), or -1.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_var_index(var: *mut c_void) -> c_int {
    // SAFETY: caller's contract.
    unsafe { var_of(var) }.map_or(-1, |v| to_int(v.index()))
}

/// The number of elements of the handle (0 for NULL).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_var_count(var: *mut c_void) -> usize {
    // SAFETY: caller's contract.
    unsafe { var_of(var) }.map_or(0, Var::count)
}

/// Deactivates variable `index` (component unloaded): tools' accesses fail
/// with `MPI_T_ERR_INVALID_INDEX`; registering it again reactivates it.
#[unsafe(no_mangle)]
pub extern "C" fn pvar_deactivate(index_: c_int) -> c_int {
    guarded(|| {
        registry()
            .pvars()
            .deactivate(index(index_, crate::ffi::boundary::ERR_INVALID_INDEX)?)
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
/// `pvar_notify_fn`.
type NotifyFn = unsafe extern "C" fn(*mut c_void, c_int, u64, c_int) -> c_long;

fn split(object: Option<u64>) -> (u64, c_int) {
    (object.unwrap_or(0), object.is_some() as c_int)
}

/// Registers a variable of any class whose values the component computes.
/// `read` is required; `notify` (NULL: none) hears
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
    notify: Option<NotifyFn>,
    context: *mut c_void,
    index_out: *mut c_int,
) -> c_int {
    guarded(|| {
        // SAFETY: caller's contract.
        let d = unsafe { Desc::read(info) }?;
        let read = read.ok_or(ERR_INVALID)?;
        let ctx = PassBack(context);
        let mut cbs = Callbacks::new(move |obj, i| {
            let (o, b) = split(obj);
            // SAFETY: the component's read function and context (contract).
            unsafe { read(ctx.get(), o, b, i) }
        });
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
        unsafe { crate::ffi::boundary::set_opt(index_out, to_int(index)) };
        Ok(())
    })
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
        let i = registry()
            .categories()
            .define(name, desc.unwrap_or(""))
            .rec()?;
        // SAFETY: NULL (ignored) or valid (contract).
        unsafe { crate::ffi::boundary::set_opt(index_out, to_int(i)) };
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
