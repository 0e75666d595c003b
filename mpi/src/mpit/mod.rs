//! One MPI_T for the job: the `MPI_T_*` symbols of `libpvar_mpi.so`,
//! serving the MPI library's variables and pvar's through one interface.
//!
//! A tool in an MPI job calls `MPI_T_*` and expects the MPI library's
//! variables; with the interposer preloaded it also sees pvar's (the
//! interposer's `pvar_mpi_*` and the engine's `pvar_engine_*`). Every call
//! is served here: forwarded to the library's `PMPI_T_*` (through the
//! pointers `c/library.c` collected, see [`crate::library`]) or to pvar's
//! engine (`pvar::ffi::mpi_t`), with pvar's constants translated into the
//! library's. The library's `PMPI_T_*` symbols are left alone: a tool
//! calling those sees the library alone.
//!
//! # Index space
//!
//! Performance variables, control variables and categories each have one
//! merged index space: an append-only table of entries "the library's
//! index i" or "pvar's index j" (module `index`). The table is refreshed from
//! both sides' counts on `*_get_num`, on `*_get_index`, and when an index
//! beyond it is asked for: the first refresh lists the library's entries,
//! then pvar's; variables either side adds later are appended. An index
//! therefore never changes meaning for the life of the process (also
//! across `MPI_T_finalize` and a new `MPI_T_init_thread`), as the standard
//! requires. Reverse maps give category contents (`get_pvars`,
//! `get_cvars`, `get_categories`) as merged indices; a library category
//! lists library entries only, a pvar category pvar's.
//! `MPI_T_category_changed` returns the sum of both sides' stamps, so it
//! moves when either does.
//!
//! Names are looked up on the library's side first, then on pvar's
//! (`pvar_get_index` with the class translated, `cvar_get_index`,
//! `category_get_index`): if both had a variable of the same name (and
//! class), the library's wins and pvar's is reachable by index only.
//! pvar's names all start with `pvar_`.
//!
//! # Handles
//!
//! pvar's handles carry [`TAG`], the top bit of the pointer-sized value,
//! which user-space addresses on x86_64 Linux never have (the library's
//! handles are addresses; Open MPI's `MPI_T_PVAR_ALL_HANDLES` is all ones
//! and is compared for before any tag test): pvar handles, cvar handles
//! and enumerations. A handle without the tag goes to the library, one
//! with it to pvar's engine, which validates it (a stale or made-up value
//! is an error code there, never a dereference). NULL handles
//! (`MPI_T_PVAR_HANDLE_NULL`, `MPI_T_CVAR_HANDLE_NULL`, `MPI_T_ENUM_NULL`
//! in MPICH and Open MPI) and NULL names are refused before the library
//! sees them; any other untagged value is the library's to validate.
//!
//! A merged `MPI_T_pvar_session` is a key of a slot table (module `session`),
//! holding the library's session and pvar's: nothing is dereferenced
//! through it, and a freed, stale or made-up key is
//! `MPI_T_ERR_INVALID_SESSION`. `MPI_T_PVAR_ALL_HANDLES` (the library's
//! value) starts, stops or resets the handles of both sides.
//!
//! # Threads and signals
//!
//! The tables behind the index spaces and event registrations are behind
//! mutexes, taken by the query, allocation and free calls. The access calls
//! — `MPI_T_pvar_read`, `_readreset`, `_write`, `_reset`, `_start`, `_stop`
//! — take no lock and allocate nothing on our side: the session lookup is
//! a few atomic loads and the dispatch a bit test; pvar's side of these is
//! async-signal-safe (the engine's guarantee), the library's is whatever
//! the library provides. `MPI_T_init_thread` provides the lower of the
//! library's thread level and pvar's (`MPI_THREAD_MULTIPLE`). Panics never
//! cross the boundary: they become the library's `MPI_T_ERR_INVALID`.
//!
//! # What is forwarded, what is not
//!
//! Forwarded: every MPI 3.1 call (init and finalize, enumerations, control
//! variables, performance variables, categories), the library's return
//! codes unchanged. pvar's own results are translated: return codes,
//! verbosity, class, binding, scope, datatypes (written as
//! `sizeof(MPI_Datatype)` bytes), enumerations, thread levels. Bound
//! objects for pvar's variables are read as `sizeof` the library's handle
//! type (an `MPI_Comm` is 4 bytes in MPICH, 8 in Open MPI) and given to
//! the engine zero-extended, as the interposer registers them.
//!
//! Not forwarded: the library's events (MPI 4). The event and source
//! functions (`MPI_T_event_*`, `MPI_T_source_*`,
//! `MPI_T_category_get_num_events` / `_get_events`) serve pvar's events
//! only: two event index spaces would need merged registrations, instances
//! and callbacks threaded through the library's own callback machinery,
//! for the few events MPI libraries expose today (MPICH 4.0: none by
//! default; Open MPI 4.1: no MPI_T events). Library categories report no
//! events; a library that has some gets one note on stderr at init. Event
//! records carry pvar's own values: the engine's `pvar_engine_handle_alloc`
//! reports pvar's index of the variable, not the merged one. The library's
//! `PMPI_T_*` symbols are not redefined: only `MPI_T_*` are merged.
//!
//! If the library's MPI_T cannot be used — `c/library.c`'s table does not
//! match this build, a `PMPI_T_*` function of MPI 3.1 is missing, or the
//! library's `MPI_T_init_thread` fails — the merged MPI_T serves pvar's
//! variables alone, and says so once on stderr. (With a mismatched table
//! it also speaks the MPI 5.0 ABI constants, which a tool compiled against
//! the library's `mpi.h` cannot read; `scripts/mpi-build.sh` compiles both
//! halves together, so that takes a broken build.)
//!
//! Event callbacks run through trampolines that hand the tool the
//! library's `MPI_T_cb_safety` value; registrations are pvar's own keys.

mod category;
mod cvar;
mod events;
mod index;
mod init;
mod pvar;
mod session;
#[cfg(test)]
mod tests;

use core::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use core::ptr::null_mut;

use crate::library::{self, Handle, Library, LibraryAbi};

/// The bit that marks a handle as pvar's (see the module documentation).
pub const TAG: u64 = 1 << 63;

/// pvar's return codes (the MPI 5.0 ABI), translated by
/// [`LibraryAbi::err`] before a tool sees them.
pub(crate) mod code {
    use core::ffi::c_int;

    use ::pvar::ErrorCode;

    pub const NOT_INITIALIZED: c_int = ErrorCode::NotInitialized.raw();
    pub const INVALID: c_int = ErrorCode::Invalid.raw();
    pub const INVALID_INDEX: c_int = ErrorCode::InvalidIndex.raw();
    pub const INVALID_SESSION: c_int = ErrorCode::InvalidSession.raw();
    pub const INVALID_HANDLE: c_int = ErrorCode::InvalidHandle.raw();
    pub const INVALID_NAME: c_int = ErrorCode::InvalidName.raw();
    pub const OUT_OF_HANDLES: c_int = ErrorCode::OutOfHandles.raw();
    pub const OUT_OF_SESSIONS: c_int = ErrorCode::OutOfSessions.raw();
}

/// pvar's `MPI_T_BIND_NO_OBJECT`.
pub(crate) const BIND_NO_OBJECT: c_int = ::pvar::BindKind::NoObject.raw();

/// The binding (pvar's constant) of pvar's variable or event type `i`,
/// as `info` reads it from the process registry through the engine's Rust
/// API; pvar's error, translated, if there is no such index.
pub(crate) fn our_bind(
    c: &Ctx,
    i: c_int,
    info: impl FnOnce(&::pvar::Registry, usize) -> ::pvar::Result<::pvar::BindKind>,
) -> R<c_int> {
    let i = usize::try_from(i).map_err(|_| c.e(code::INVALID_INDEX))?;
    info(::pvar::global(), i)
        .map(|b| b.raw())
        .map_err(|e| c.e(e.code().raw()))
}

/// Whether `h` is one of pvar's handles.
#[inline]
pub(crate) fn is_ours(h: *mut c_void) -> bool {
    h as u64 & TAG != 0
}

/// pvar's raw handle value with the tag; `None` if the value already has
/// the top bit (the engine's keys stay far below it: see [`TAG`]).
#[inline]
pub(crate) fn tag(raw: u64) -> Option<*mut c_void> {
    (raw & TAG == 0).then_some((raw | TAG) as usize as *mut c_void)
}

/// pvar's raw handle value of a tagged handle.
#[inline]
pub(crate) fn untag(h: *mut c_void) -> *mut c_void {
    (h as u64 & !TAG) as usize as *mut c_void
}

/// Which side made a handle that a `*_handle_alloc` gives the tool.
#[derive(Clone, Copy)]
pub(crate) enum Made {
    /// The library: passed on as it is.
    Lib,
    /// pvar: passed on tagged.
    Ours,
}

/// Gives the tool a new handle `h` with `k` elements through `handle` and
/// `count`: the library's as it is, pvar's tagged. A handle that the
/// dispatch would later send to the wrong side (a library handle with the
/// top bit set, never seen on x86_64 Linux; a pvar value that already has
/// it) is freed with `free`, the OUT arguments are emptied and the call
/// fails with `MPI_T_ERR_OUT_OF_HANDLES`.
///
/// # Safety
/// `handle` and `count` are non-NULL and valid for writes.
pub(crate) unsafe fn hand_out(
    c: &Ctx,
    made: Made,
    h: Handle,
    k: c_int,
    free: impl FnOnce(&mut Handle),
    handle: *mut Handle,
    count: *mut c_int,
) -> R {
    let given = match made {
        Made::Lib => (!is_ours(h)).then_some(h),
        Made::Ours => tag(h as u64),
    };
    let (out, k) = match given {
        Some(out) => (out, k),
        None => {
            let mut h = h;
            free(&mut h);
            (null_mut(), 0)
        }
    };
    // SAFETY: non-NULL and valid for writes (contract).
    unsafe {
        handle.write_unaligned(out);
        count.write_unaligned(k);
    }
    if given.is_some() {
        Ok(())
    } else {
        Err(c.e(code::OUT_OF_HANDLES))
    }
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

/// The library's table, read once.
pub(crate) fn library() -> &'static Library {
    LIBRARY.get_or_init(library::load)
}

/// Merged init count: `MPI_T_init_thread` calls minus `MPI_T_finalize`
/// calls.
static MERGED_INIT: AtomicUsize = AtomicUsize::new(0);
/// Successful library `PMPI_T_init_thread` calls not finalized yet: the
/// library's functions are called only while this is positive.
static LIB_INITS: AtomicUsize = AtomicUsize::new(0);

/// A result whose error is a code in the library's numbering.
pub(crate) type R<T = ()> = Result<T, c_int>;

/// What one call needs: the constants, and the library's functions if they
/// may be called now.
#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    /// The constants tools see (the library's, or MPI 5.0's).
    pub abi: &'static LibraryAbi,
    /// The library's functions, while its MPI_T is initialised.
    pub lib: Option<&'static LibraryAbi>,
}

impl Ctx {
    fn now() -> Self {
        let l = library();
        let active = l.usable() && LIB_INITS.load(Ordering::Acquire) > 0;
        Self {
            abi: l.abi,
            lib: active.then_some(l.abi),
        }
    }

    /// pvar's code `ours` as the library's error.
    #[inline]
    pub fn e(&self, ours: c_int) -> c_int {
        self.abi.err(ours)
    }

    /// pvar's return code as a result in the library's numbering.
    #[inline]
    pub fn ours(&self, rc: c_int) -> R {
        if rc == 0 { Ok(()) } else { Err(self.e(rc)) }
    }

    /// The library's return code as a result (passed through).
    #[inline]
    pub fn theirs(&self, rc: c_int) -> R {
        if rc == self.abi.success {
            Ok(())
        } else {
            Err(rc)
        }
    }

    /// The library's functions, or `err` (pvar's code) if its MPI_T is not
    /// in use.
    #[inline]
    pub fn lib_or(&self, err: c_int) -> R<&'static LibraryAbi> {
        self.lib.ok_or(self.e(err))
    }

    /// Calls one of the library's functions (`None` in the table:
    /// `MPI_T_ERR_INVALID`).
    #[inline]
    pub fn call<F: Copy>(&self, f: Option<F>, run: impl FnOnce(F) -> c_int) -> R {
        let f = f.ok_or(self.e(code::INVALID))?;
        self.theirs(run(f))
    }
}

/// Runs `body` with the call's context once the merged MPI_T is
/// initialised (`MPI_T_ERR_NOT_INITIALIZED` otherwise); errors are the
/// library's codes, a panic its `MPI_T_ERR_INVALID`. Lock-free and
/// allocation-free itself.
#[inline]
pub(crate) fn entry(body: impl FnOnce(&Ctx) -> R) -> c_int {
    guard(|| {
        let c = Ctx::now();
        if MERGED_INIT.load(Ordering::Acquire) == 0 {
            return Err(c.e(code::NOT_INITIALIZED));
        }
        body(&c)
    })
}

/// Runs `body`, turning `Err(code)` into `code`, `Ok` into `MPI_SUCCESS`
/// and a panic into the library's `MPI_T_ERR_INVALID`.
#[inline]
pub(crate) fn guard(body: impl FnOnce() -> R) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => library().abi.success,
        Ok(Err(code)) => code,
        Err(_) => library().abi.err(code::INVALID),
    }
}

/// Writes `v` through an optional OUT pointer (NULL: nothing).
///
/// # Safety
/// `p` is NULL or valid for a write of a `T`.
#[inline]
pub(crate) unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and valid (contract); unaligned-tolerant.
        unsafe { p.write_unaligned(v) };
    }
}

/// A required pointer: `MPI_T_ERR_INVALID` if NULL.
#[inline]
pub(crate) fn need<T>(c: &Ctx, p: *const T) -> R {
    if p.is_null() {
        Err(c.e(code::INVALID))
    } else {
        Ok(())
    }
}

/// The object value pvar's engine expects for a variable with pvar's
/// binding `bind`, read from the tool's `obj_handle`: `sizeof` the
/// library's handle type, zero-extended into `slot`; the returned pointer
/// is what to pass as `obj_handle` (the tool's own pointer when there is
/// nothing to convert).
///
/// # Safety
/// `obj_handle` is NULL or valid for reads of the library's handle of
/// that binding.
pub(crate) unsafe fn object_arg(
    c: &Ctx,
    bind: c_int,
    obj_handle: *mut c_void,
    slot: &mut u64,
) -> *mut c_void {
    let size = c.abi.object_size(bind);
    if bind == BIND_NO_OBJECT || obj_handle.is_null() || size == 0 {
        return obj_handle;
    }
    // SAFETY: non-NULL; holds the library's handle of `size` bytes
    // (contract).
    *slot = unsafe { library::read_handle(obj_handle, size) };
    (slot as *mut u64).cast()
}

/// Turns pvar's enumeration handle into the tool's: tagged, or the
/// library's `MPI_T_ENUM_NULL`.
pub(crate) fn enum_out(c: &Ctx, ours: *mut c_void) -> *mut c_void {
    if ours.is_null() {
        return c.abi.enum_null as usize as *mut c_void;
    }
    tag(ours as u64).unwrap_or(c.abi.enum_null as usize as *mut c_void)
}

/// Writes pvar's datatype handle `ours` to the tool's `MPI_Datatype` OUT
/// pointer in the library's value and size.
///
/// # Safety
/// `p` is NULL or valid for a write of an `MPI_Datatype`.
pub(crate) unsafe fn datatype_out(c: &Ctx, p: *mut c_void, ours: *mut c_void) -> R {
    if p.is_null() {
        return Ok(());
    }
    let v = c.abi.datatype(ours as u64).ok_or(c.e(code::INVALID))?;
    // SAFETY: non-NULL; holds an `MPI_Datatype` (contract).
    unsafe { library::write_handle(p, c.abi.datatype_size as usize, v) };
    Ok(())
}

/// A count as a C `int` (saturating).
#[inline]
pub(crate) fn to_int(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Writes the library's `MPI_INFO_NULL` to an optional `MPI_Info` OUT
/// pointer (pvar's engine keeps no hints).
///
/// # Safety
/// `p` is NULL or valid for a write of an `MPI_Info`.
pub(crate) unsafe fn info_null_out(c: &Ctx, p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: non-NULL; holds an `MPI_Info` (contract).
        unsafe { library::write_handle(p, c.abi.info_size as usize, c.abi.info_null) };
    }
}

/// Writes pvar's datatype handle `ours` as element `k` of the tool's
/// `MPI_Datatype` array, in the library's value and size.
///
/// # Safety
/// `base` is valid for writes of more than `k` `MPI_Datatype`s.
pub(crate) unsafe fn datatype_out_at(c: &Ctx, base: *mut c_void, k: usize, ours: *mut c_void) -> R {
    let size = c.abi.datatype_size as usize;
    // SAFETY: element `k` is inside the array (contract).
    unsafe { datatype_out(c, base.cast::<u8>().add(k * size).cast(), ours) }
}
