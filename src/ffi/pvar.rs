//! `MPI_T_pvar_*`: queries, sessions, handles and access.
//!
//! Async-signal-safe (no allocation, no lock): `start`, `stop`, `read`,
//! `write`, `reset`, `readreset`, for handles of any size: values go
//! through a stack buffer of [`STACK`] elements, [`STACK`] at a time
//! (`Tool::read` with an element range, and friends).

use core::ffi::{c_char, c_int, c_void};

use super::boundary::{
    CResult, ERR_INVALID, ERR_INVALID_INDEX, ERR_INVALID_NAME, OrCode, index, mpi_t_fn, mpit_call,
    out, require, set_opt, set_req, to_int,
};
use super::strings::{arg_str, put_string};
use super::types::{Datatype as CDatatype, Enum, PvarHandle, PvarSession};
use crate::registry::Registry;
use crate::tool::{HandleData, HandleId, SessionId, Tool};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, ObjectRef, PvarClass};

/// Elements read or written through a stack buffer (2 KiB).
pub(crate) const STACK: usize = 256;

/// `MPI_T_PVAR_ALL_HANDLES`.
const ALL_HANDLES: u64 = 1;

fn sid(s: PvarSession) -> SessionId {
    SessionId::from_raw(s as u64)
}

fn hid(h: PvarHandle) -> HandleId {
    HandleId::from_raw(h as u64)
}

/// Reads the object handle a bound variable is bound to: the tool passes
/// the address of a variable holding the object's (pointer-sized) handle.
///
/// # Safety
/// `obj` is NULL or valid for reading one pointer-sized value.
pub(crate) unsafe fn object_at(obj: *mut c_void, kind: BindKind) -> Option<ObjectRef> {
    if kind == BindKind::NoObject {
        return None;
    }
    let p = obj.cast::<usize>();
    if p.is_null() || !p.is_aligned() {
        return None;
    }
    // SAFETY: non-NULL, aligned; readable by the caller's contract.
    let value = unsafe { p.read() };
    Some(ObjectRef::new(kind, value as u64))
}

mpi_t_fn! {
    /// `MPI_T_pvar_get_num`. Async-signal-safe.
    fn PMPI_T_pvar_get_num / MPI_T_pvar_get_num(num_pvar: *mut c_int) {
        // SAFETY: `set_req` checks NULL/alignment; validity is the caller's.
        mpit_call(|reg| unsafe { set_req(num_pvar, to_int(reg.pvars().len())) })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_get_info`: every OUT pointer may be NULL (ignored).
    /// `*atomic = 1` means `MPI_T_pvar_readreset` is atomic per element,
    /// not across the elements of a handle (`PvarInfo::atomic`).
    fn PMPI_T_pvar_get_info / MPI_T_pvar_get_info(
        pvar_index: c_int,
        name: *mut c_char,
        name_len: *mut c_int,
        verbosity: *mut c_int,
        var_class: *mut c_int,
        datatype: *mut CDatatype,
        enumtype: *mut Enum,
        desc: *mut c_char,
        desc_len: *mut c_int,
        bind: *mut c_int,
        readonly: *mut c_int,
        continuous: *mut c_int,
        atomic: *mut c_int,
    ) {
        mpit_call(|reg| {
            let info = reg.pvars().info(index(pvar_index, ERR_INVALID_INDEX)?).c()?;
            let e = match &info.enumeration {
                // Registered with the variable: always found.
                Some(e) if info.datatype == crate::vocabulary::datatype::Datatype::Int => reg
                    .enums()
                    .index_of(e)
                    .map_or(core::ptr::null_mut(), |i| (i + 1) as Enum),
                _ => core::ptr::null_mut(),
            };
            // SAFETY: every pointer is NULL (ignored) or valid for the
            // write the standard describes (caller's contract); `set_opt`
            // and `put_string` check NULL and alignment.
            unsafe {
                put_string(&info.name, name, name_len);
                put_string(&info.description, desc, desc_len);
                set_opt(verbosity, info.verbosity.raw());
                set_opt(var_class, info.class.raw());
                set_opt(datatype, info.datatype.raw() as usize as CDatatype);
                set_opt(enumtype, e);
                set_opt(bind, info.bind.raw());
                set_opt(readonly, info.readonly as c_int);
                set_opt(continuous, info.continuous as c_int);
                set_opt(atomic, info.atomic as c_int);
            }
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_get_index`: `MPI_T_ERR_INVALID_NAME` if no variable has
    /// this name and class, also when the class is not one of the ten
    /// constants (no variable has such a class: the standard's wording,
    /// and what MPICH returns; Open MPI has no class check and finds no
    /// name for 11); `MPI_T_ERR_INVALID` for a NULL name or index pointer.
    fn PMPI_T_pvar_get_index / MPI_T_pvar_get_index(
        name: *const c_char,
        var_class: c_int,
        pvar_index: *mut c_int,
    ) {
        mpit_call(|reg| {
            require(pvar_index)?;
            // SAFETY: NULL checked by `arg_str`; NUL-terminated by contract.
            let name = unsafe { arg_str(name, ERR_INVALID_NAME) }?;
            let class = PvarClass::from_raw(var_class).ok_or(ERR_INVALID_NAME)?;
            let i = reg.pvars().index(name, class).c()?;
            // SAFETY: checked by `require` above.
            unsafe { set_req(pvar_index, to_int(i)) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_session_create`.
    fn PMPI_T_pvar_session_create / MPI_T_pvar_session_create(session: *mut PvarSession) {
        mpit_call(|reg| {
            require(session)?;
            let s = reg.tool().session_create().c()?;
            super::init::track_session(s.to_raw(), true);
            // SAFETY: checked by `require` above.
            unsafe { set_req(session, s.to_raw() as PvarSession) }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_session_free`: frees the session and its handles and
    /// sets `*session` to `MPI_T_PVAR_SESSION_NULL`.
    fn PMPI_T_pvar_session_free / MPI_T_pvar_session_free(session: *mut PvarSession) {
        mpit_call(|reg| {
            // SAFETY: NULL/alignment checked by `out`; valid by contract.
            let s = unsafe { out(session) }.ok_or(ERR_INVALID)?;
            reg.tool().session_free(sid(*s)).c()?;
            super::init::track_session(*s as u64, false);
            *s = core::ptr::null_mut();
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_handle_alloc`. For a bound variable, `obj_handle` is the
    /// address of a variable holding the object's handle (e.g. `&comm`);
    /// it is ignored for unbound variables. On any error `*handle` is set
    /// to `MPI_T_PVAR_HANDLE_NULL` and `*count` to 0 (where the pointers
    /// are usable), so a tool that ignores the return code and later frees
    /// the handle gets `MPI_T_ERR_INVALID_HANDLE`, not someone else's
    /// handle.
    fn PMPI_T_pvar_handle_alloc / MPI_T_pvar_handle_alloc(
        session: PvarSession,
        pvar_index: c_int,
        obj_handle: *mut c_void,
        handle: *mut PvarHandle,
        count: *mut c_int,
    ) {
        // SAFETY: NULL (ignored) or valid for a write (caller's contract);
        // `set_opt` checks NULL and alignment.
        unsafe {
            set_opt(handle, core::ptr::null_mut());
            set_opt(count, 0);
        }
        mpit_call(|reg| {
            require(handle)?;
            require(count)?;
            let i = index(pvar_index, ERR_INVALID_INDEX)?;
            let object = match reg.pvars().info(i) {
                // SAFETY: `obj_handle` is NULL or the address of a handle
                // variable (caller's contract); `object_at` checks NULL.
                Ok(info) => unsafe { object_at(obj_handle, info.bind) },
                Err(_) => None,
            };
            let (h, n) = reg.tool().handle_alloc(sid(session), i, object).c()?;
            // SAFETY: both checked by `require` above.
            unsafe {
                set_req(handle, h.to_raw() as PvarHandle)?;
                set_req(count, to_int(n))
            }
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_handle_free`: sets `*handle` to
    /// `MPI_T_PVAR_HANDLE_NULL` on success.
    fn PMPI_T_pvar_handle_free / MPI_T_pvar_handle_free(
        session: PvarSession,
        handle: *mut PvarHandle,
    ) {
        mpit_call(|reg| {
            // SAFETY: NULL/alignment checked by `out`; valid by contract.
            let h = unsafe { out(handle) }.ok_or(ERR_INVALID)?;
            reg.tool().handle_free(sid(session), hid(*h)).c()?;
            *h = core::ptr::null_mut();
            Ok(())
        })
    }
}

/// Start / stop / reset: `MPI_T_PVAR_ALL_HANDLES` allowed.
fn each(
    session: PvarSession,
    handle: PvarHandle,
    one: fn(&Tool, SessionId, HandleId) -> crate::vocabulary::error::Result<()>,
    all: fn(&Tool, SessionId) -> crate::vocabulary::error::Result<()>,
) -> c_int {
    mpit_call(|reg| {
        if handle as u64 == ALL_HANDLES {
            all(reg.tool(), sid(session)).c()
        } else {
            one(reg.tool(), sid(session), hid(handle)).c()
        }
    })
}

mpi_t_fn! {
    /// `MPI_T_pvar_start`. Async-signal-safe.
    fn PMPI_T_pvar_start / MPI_T_pvar_start(session: PvarSession, handle: PvarHandle) {
        each(session, handle, Tool::start, Tool::start_all)
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_stop`. Async-signal-safe.
    fn PMPI_T_pvar_stop / MPI_T_pvar_stop(session: PvarSession, handle: PvarHandle) {
        each(session, handle, Tool::stop, Tool::stop_all)
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_reset`. Async-signal-safe.
    fn PMPI_T_pvar_reset / MPI_T_pvar_reset(session: PvarSession, handle: PvarHandle) {
        each(session, handle, Tool::reset, Tool::reset_all)
    }
}

/// A ranged read of one handle's elements: `Tool::read_handle` or
/// `Tool::readreset_handle`.
type RangeOp = fn(&Tool, &HandleData, usize, &mut [u64]) -> crate::vocabulary::error::Result<()>;

/// Runs `body` on the handle `h` of session `s`, looked up and validated
/// once, with its datatype and element count; `MPI_T_ERR_INVALID` if `buf`
/// is NULL (after the session and handle checks). Async-signal-safe.
fn with_buffer(
    reg: &Registry,
    s: SessionId,
    h: HandleId,
    buf: *const c_void,
    body: impl FnOnce(&Tool, &HandleData, Datatype, usize) -> CResult,
) -> CResult {
    let tool = reg.tool();
    let data = tool.handle(s, h).c()?;
    if buf.is_null() {
        return Err(ERR_INVALID);
    }
    let info = data.info();
    body(tool, &data, info.datatype, info.count)
}

/// The element ranges, [`STACK`] elements at most, in which `count`
/// elements go through a stack buffer: no allocation.
fn stack_pieces(count: usize) -> impl Iterator<Item = core::ops::Range<usize>> {
    (0..count)
        .step_by(STACK)
        .map(move |first| first..(first + STACK).min(count))
}

/// Encodes values (as produced by a read: `u64` bits of the datatype) into
/// the C representation of `datatype`, element after element. `out` holds
/// `values.len()` elements. Async-signal-safe (writes only `out`).
fn encode_values(datatype: Datatype, values: &[u64], out: &mut [u8]) {
    let size = datatype.size();
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(size)) {
        match size {
            4 => chunk.copy_from_slice(&(*v as u32).to_ne_bytes()),
            8 => chunk.copy_from_slice(&v.to_ne_bytes()),
            _ => chunk[0] = *v as u8,
        }
    }
}

/// Decodes C-representation values of `datatype` into `u64` bits (the
/// inverse of [`encode_values`]; `MPI_INT` is sign-extended).
/// Async-signal-safe (writes only `out`).
fn decode_values(datatype: Datatype, bytes: &[u8], out: &mut [u64]) {
    let size = datatype.size();
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(size)) {
        *o = match (size, datatype) {
            (4, Datatype::Int) => {
                i32::from_ne_bytes(chunk.try_into().expect("4 bytes")) as i64 as u64
            }
            (4, _) => u32::from_ne_bytes(chunk.try_into().expect("4 bytes")) as u64,
            (8, _) => u64::from_ne_bytes(chunk.try_into().expect("8 bytes")),
            _ => chunk[0] as u64,
        };
    }
}

/// Reads a handle's values into the caller's buffer in C layout, without
/// allocating: through a stack buffer of [`STACK`] elements, piece by piece
/// for larger handles (per element, a read or readreset is atomic either
/// way). `op` is `read_handle` or `readreset_handle`.
///
/// # Safety
/// `buf` is NULL or valid for writes of count × element-size bytes.
unsafe fn read_into(
    reg: &Registry,
    s: SessionId,
    h: HandleId,
    buf: *mut c_void,
    op: RangeOp,
) -> CResult {
    with_buffer(reg, s, h, buf, |tool, data, dt, count| {
        let size = dt.size();
        // SAFETY: `buf` is non-NULL and valid for `count * size` bytes (the
        // contract of MPI_T_pvar_read: the buffer holds `count` elements).
        let dst = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), count * size) };
        let mut tmp = [0u64; STACK];
        for r in stack_pieces(count) {
            let tmp = &mut tmp[..r.len()];
            op(tool, data, r.start, tmp).c()?;
            encode_values(dt, tmp, &mut dst[r.start * size..r.end * size]);
        }
        Ok(())
    })
}

mpi_t_fn! {
    /// `MPI_T_pvar_read`. Async-signal-safe (see the module docs).
    fn PMPI_T_pvar_read / MPI_T_pvar_read(
        session: PvarSession,
        handle: PvarHandle,
        buf: *mut c_void,
    ) {
        // SAFETY: `buf` is sized by the caller from get_info/handle_alloc.
        mpit_call(|reg| unsafe { read_into(reg, sid(session), hid(handle), buf, Tool::read_handle) })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_readreset`: atomic per element, not per handle.
    /// Async-signal-safe (see the module docs).
    fn PMPI_T_pvar_readreset / MPI_T_pvar_readreset(
        session: PvarSession,
        handle: PvarHandle,
        buf: *mut c_void,
    ) {
        // SAFETY: `buf` is sized by the caller from get_info/handle_alloc.
        mpit_call(|reg| unsafe {
            read_into(reg, sid(session), hid(handle), buf, Tool::readreset_handle)
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_pvar_write`. Async-signal-safe (see the module docs).
    fn PMPI_T_pvar_write / MPI_T_pvar_write(
        session: PvarSession,
        handle: PvarHandle,
        buf: *const c_void,
    ) {
        mpit_call(|reg| {
            with_buffer(reg, sid(session), hid(handle), buf, |_, data, dt, count| {
                let size = dt.size();
                // SAFETY: non-NULL; valid for `count * size` bytes (the
                // contract of MPI_T_pvar_write).
                let src = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count * size) };
                let mut tmp = [0u64; STACK];
                for r in stack_pieces(count) {
                    let tmp = &mut tmp[..r.len()];
                    decode_values(dt, &src[r.start * size..r.end * size], tmp);
                    data.write(r.start, tmp).c()?;
                }
                Ok(())
            })
        })
    }
}
