//! The merged MPI_T over a fake library (no MPI needed): MPICH-like
//! constants (`int` handles of 4 bytes, classes from 240, errors from 59)
//! and Open MPI's all-ones `MPI_T_PVAR_ALL_HANDLES`, so that every
//! translation and the tag test are exercised. The test binary defines
//! `pvar_mpi_library` itself (in the interposer, `c/library.c` does).
//!
//! The merged MPI_T is process-wide state: everything runs in one test.

use core::ffi::{CStr, c_char, c_int, c_void};
use core::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use super::*;
use crate::library::{Handle, LIBRARY_VERSION, LibraryAbi, MPI5};

// ---- the fake library -------------------------------------------------------

const ERR0: c_int = 59; // MPI_T_ERR_* = 59 + (pvar's code - 1001)
const fn err(ours: c_int) -> c_int {
    ERR0 + ours - 1001
}
const SUCCESS: c_int = 0;
const CLASS0: c_int = 240;
const VERB0: c_int = 221;
const BIND0: c_int = 9700;
const SCOPE0: c_int = 60438;
const DT_INT: u64 = 0x4c00_0405;
const DT_ULL: u64 = 0x4c00_0819;
const ALL_HANDLES: u64 = u64::MAX;

/// The library's pvar count (grows during the test).
static LIB_PVARS: AtomicI32 = AtomicI32::new(2);
static LIB_INIT: AtomicI32 = AtomicI32::new(0);
static STARTS_ALL: AtomicUsize = AtomicUsize::new(0);
static LIB_STAMP: AtomicI32 = AtomicI32::new(5);
const LIB_SESSION: usize = 0x5000;
/// While set, the library's pvar handles have the top bit (pvar's tag).
static LIB_TOP_BIT: AtomicBool = AtomicBool::new(false);
/// Top-bit handles the library was asked to free.
static LIB_FREED_TOP: AtomicUsize = AtomicUsize::new(0);
/// The fake MPI's state for `MPI_Initialized` / `MPI_Finalized`: 0 before
/// `MPI_Init`, 1 initialised, 2 finalised.
static LIB_MPI_STATE: AtomicI32 = AtomicI32::new(0);
/// Info objects the fake's `MPI_Info_create` made.
static LIB_INFOS: AtomicUsize = AtomicUsize::new(0);
/// The fake's `MPI_INFO_NULL` (4-byte handles, as MPICH's).
const INFO_NULL: u32 = 0x1c00_0000;

unsafe extern "C" fn f_info_create(info: *mut c_void) -> c_int {
    let n = LIB_INFOS.fetch_add(1, Ordering::SeqCst) as u32 + 1;
    // SAFETY: the merged layer passes the tool's `MPI_Info *` (4 bytes).
    unsafe { info.cast::<u32>().write_unaligned(0x9c00_0000 + n) };
    SUCCESS
}
unsafe extern "C" fn f_initialized(flag: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *flag = c_int::from(LIB_MPI_STATE.load(Ordering::SeqCst) >= 1) };
    SUCCESS
}
unsafe extern "C" fn f_finalized(flag: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *flag = c_int::from(LIB_MPI_STATE.load(Ordering::SeqCst) == 2) };
    SUCCESS
}

fn lib_handle(i: c_int) -> Handle {
    (0x6000 + i as usize) as Handle
}

unsafe fn put_str(s: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: test pointers: valid buffers of `*len` bytes.
    unsafe {
        if !buf.is_null() && *len > 0 {
            let k = s.len().min(*len as usize - 1);
            core::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), k);
            *buf.add(k) = 0;
        }
        *len = s.len() as c_int + 1;
    }
}

unsafe extern "C" fn f_init(_: c_int, provided: *mut c_int) -> c_int {
    LIB_INIT.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the merged layer passes a valid pointer.
    unsafe { *provided = 2 }; // MPI_THREAD_SERIALIZED
    SUCCESS
}
unsafe extern "C" fn f_finalize() -> c_int {
    LIB_INIT.fetch_sub(1, Ordering::SeqCst);
    SUCCESS
}
unsafe extern "C" fn f_pvar_num(n: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *n = LIB_PVARS.load(Ordering::SeqCst) };
    SUCCESS
}
unsafe extern "C" fn f_one(n: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *n = 1 };
    SUCCESS
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn f_pvar_info(
    i: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    class: *mut c_int,
    dt: *mut c_void,
    e: *mut Handle,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    bind: *mut c_int,
    _ro: *mut c_int,
    cont: *mut c_int,
    _atomic: *mut c_int,
) -> c_int {
    if i < 0 || i >= LIB_PVARS.load(Ordering::SeqCst) {
        return err(1007);
    }
    // SAFETY: NULL or valid pointers (the test's).
    unsafe {
        put_str(&format!("lib_p{i}"), name, name_len);
        put(verbosity, VERB0);
        put(class, CLASS0 + 6);
        if !dt.is_null() {
            dt.cast::<u32>().write_unaligned(DT_INT as u32);
        }
        put(e, null_mut());
        put(bind, BIND0);
        put(cont, 1);
    }
    SUCCESS
}
unsafe extern "C" fn f_pvar_index(name: *const c_char, class: c_int, i: *mut c_int) -> c_int {
    // SAFETY: a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) }.to_str().unwrap();
    let n = LIB_PVARS.load(Ordering::SeqCst);
    match name
        .strip_prefix("lib_p")
        .and_then(|k| k.parse::<c_int>().ok())
    {
        Some(k) if k < n && class == CLASS0 + 6 => {
            // SAFETY: valid pointer.
            unsafe { *i = k };
            SUCCESS
        }
        _ => err(1011),
    }
}
unsafe extern "C" fn f_session_create(s: *mut Handle) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *s = LIB_SESSION as Handle };
    SUCCESS
}
unsafe extern "C" fn f_session_free(s: *mut Handle) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *s = null_mut() };
    SUCCESS
}
unsafe extern "C" fn f_handle_alloc(
    s: Handle,
    i: c_int,
    _obj: *mut c_void,
    h: *mut Handle,
    count: *mut c_int,
) -> c_int {
    if s as usize != LIB_SESSION {
        return err(1009);
    }
    let top = if LIB_TOP_BIT.load(Ordering::SeqCst) {
        1 << 63
    } else {
        0
    };
    // SAFETY: valid pointers.
    unsafe {
        *h = (lib_handle(i) as usize | top) as Handle;
        *count = 1;
    }
    SUCCESS
}
unsafe extern "C" fn f_handle_free(_: Handle, h: *mut Handle) -> c_int {
    // SAFETY: valid pointer.
    unsafe {
        if *h as usize >> 63 == 1 {
            LIB_FREED_TOP.fetch_add(1, Ordering::SeqCst);
        }
        *h = null_mut();
    }
    SUCCESS
}
unsafe extern "C" fn f_start(s: Handle, h: Handle) -> c_int {
    if s as usize != LIB_SESSION {
        return err(1009);
    }
    if h as u64 == ALL_HANDLES {
        STARTS_ALL.fetch_add(1, Ordering::SeqCst);
    }
    SUCCESS
}
unsafe extern "C" fn f_read(s: Handle, h: Handle, buf: *mut c_void) -> c_int {
    if s as usize != LIB_SESSION || (h as usize) < 0x6000 || h as u64 == ALL_HANDLES {
        return err(1010);
    }
    // SAFETY: one `int` (the test's buffer).
    unsafe {
        buf.cast::<c_int>()
            .write(100 + (h as usize - 0x6000) as c_int)
    };
    SUCCESS
}
unsafe extern "C" fn f_cat_info(
    i: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    _d: *mut c_char,
    _dl: *mut c_int,
    nc: *mut c_int,
    np: *mut c_int,
    nk: *mut c_int,
) -> c_int {
    if i != 0 {
        return err(1007);
    }
    // SAFETY: NULL or valid pointers.
    unsafe {
        put_str("lib_cat", name, name_len);
        put(nc, 0);
        put(np, 2);
        put(nk, 0);
    }
    SUCCESS
}
unsafe extern "C" fn f_cat_pvars(i: c_int, len: c_int, out: *mut c_int) -> c_int {
    if i != 0 {
        return err(1007);
    }
    for k in 0..len.min(2) {
        // SAFETY: `len` ints.
        unsafe { *out.add(k as usize) = k };
    }
    SUCCESS
}
unsafe extern "C" fn f_cat_none(_: c_int, _: c_int, _: *mut c_int) -> c_int {
    SUCCESS
}
unsafe extern "C" fn f_cat_index(name: *const c_char, i: *mut c_int) -> c_int {
    // SAFETY: NUL-terminated.
    if unsafe { CStr::from_ptr(name) } == c"lib_cat" {
        // SAFETY: valid pointer.
        unsafe { *i = 0 };
        SUCCESS
    } else {
        err(1011)
    }
}
unsafe extern "C" fn f_zero(n: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *n = 0 };
    SUCCESS
}
unsafe extern "C" fn f_stamp(n: *mut c_int) -> c_int {
    // SAFETY: valid pointer.
    unsafe { *n = LIB_STAMP.load(Ordering::SeqCst) };
    SUCCESS
}
unsafe extern "C" fn f_name_none(_: *const c_char, _: *mut c_int) -> c_int {
    err(1011)
}

unsafe extern "C" fn f_enum_info(_: Handle, _: *mut c_int, _: *mut c_char, _: *mut c_int) -> c_int {
    err(1010)
}
unsafe extern "C" fn f_enum_item(
    _: Handle,
    _: c_int,
    _: *mut c_int,
    _: *mut c_char,
    _: *mut c_int,
) -> c_int {
    err(1010)
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn f_cvar_info(
    _: c_int,
    _: *mut c_char,
    _: *mut c_int,
    _: *mut c_int,
    _: *mut c_void,
    _: *mut Handle,
    _: *mut c_char,
    _: *mut c_int,
    _: *mut c_int,
    _: *mut c_int,
) -> c_int {
    err(1007)
}
unsafe extern "C" fn f_cvar_alloc(
    _: c_int,
    _: *mut c_void,
    _: *mut Handle,
    _: *mut c_int,
) -> c_int {
    err(1007)
}
unsafe extern "C" fn f_cvar_free(_: *mut Handle) -> c_int {
    err(1010)
}
unsafe extern "C" fn f_cvar_read(_: Handle, _: *mut c_void) -> c_int {
    err(1010)
}
unsafe extern "C" fn f_cvar_write(_: Handle, _: *const c_void) -> c_int {
    err(1010)
}
unsafe extern "C" fn f_pvar_write(_: Handle, _: Handle, _: *const c_void) -> c_int {
    err(1016)
}

static FAKE: std::sync::OnceLock<LibraryAbi> = std::sync::OnceLock::new();

fn fake() -> LibraryAbi {
    LibraryAbi {
        version: LIBRARY_VERSION,
        size: core::mem::size_of::<LibraryAbi>() as u32,
        mpi_version: 4,
        mpi_subversion: 0,
        name: c"fake".as_ptr(),
        success: SUCCESS,
        err: core::array::from_fn(|k| ERR0 + k as c_int),
        verbosity: core::array::from_fn(|k| VERB0 + k as c_int),
        bind: core::array::from_fn(|k| BIND0 + k as c_int),
        scope: core::array::from_fn(|k| SCOPE0 + k as c_int),
        pvar_class: core::array::from_fn(|k| CLASS0 + k as c_int),
        thread: [0, 1, 2, 3],
        cb_safety: [0, 1, 2, 3],
        source_order: [0, 1],
        object_size: [0, 0, 4, 4, 8, 4, 4, 4, 4, 4, 4, 4, 4],
        datatype_size: 4,
        info_size: 4,
        datatype: [
            DT_INT,
            0x4c00_0406,
            0x4c00_0808,
            DT_ULL,
            0x4c00_0845,
            0x4c00_0101,
            0x4c00_080b,
        ],
        enum_null: 0,
        pvar_all_handles: ALL_HANDLES,
        info_null: INFO_NULL as u64,
        init_thread: Some(f_init),
        finalize: Some(f_finalize),
        ..MPI5
    }
    .with(|t| {
        t.enum_get_info = Some(f_enum_info);
        t.enum_get_item = Some(f_enum_item);
        t.cvar_get_info = Some(f_cvar_info);
        t.cvar_handle_alloc = Some(f_cvar_alloc);
        t.cvar_handle_free = Some(f_cvar_free);
        t.cvar_read = Some(f_cvar_read);
        t.cvar_write = Some(f_cvar_write);
        t.pvar_write = Some(f_pvar_write);
        t.pvar_get_num = Some(f_pvar_num);
        t.pvar_get_info = Some(f_pvar_info);
        t.pvar_get_index = Some(f_pvar_index);
        t.pvar_session_create = Some(f_session_create);
        t.pvar_session_free = Some(f_session_free);
        t.pvar_handle_alloc = Some(f_handle_alloc);
        t.pvar_handle_free = Some(f_handle_free);
        t.pvar_start = Some(f_start);
        t.pvar_stop = Some(f_start);
        t.pvar_reset = Some(f_start);
        t.pvar_read = Some(f_read);
        t.pvar_readreset = Some(f_read);
        t.cvar_get_num = Some(f_zero);
        t.cvar_get_index = Some(f_name_none);
        t.category_get_num = Some(f_one);
        t.category_get_info = Some(f_cat_info);
        t.category_get_index = Some(f_cat_index);
        t.category_get_pvars = Some(f_cat_pvars);
        t.category_get_cvars = Some(f_cat_none);
        t.category_get_categories = Some(f_cat_none);
        t.category_changed = Some(f_stamp);
        t.info_create = Some(f_info_create);
        t.initialized = Some(f_initialized);
        t.finalized = Some(f_finalized);
    })
}

trait With: Sized {
    fn with(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
impl With for LibraryAbi {}

/// The fake's table, in place of `c/library.c`'s.
#[unsafe(no_mangle)]
extern "C" fn pvar_mpi_library() -> *const LibraryAbi {
    FAKE.get_or_init(fake)
}

// ---- the test ---------------------------------------------------------------

fn num(f: unsafe extern "C" fn(*mut c_int) -> c_int) -> c_int {
    let mut n = -1;
    // SAFETY: a valid OUT pointer.
    assert_eq!(unsafe { f(&mut n) }, SUCCESS);
    n
}

fn pvar_name(i: c_int) -> String {
    let mut buf = [0u8; 128];
    let mut len = buf.len() as c_int;
    let n = null_mut();
    // SAFETY: valid buffers; NULL elsewhere.
    let rc = unsafe {
        pvar::MPI_T_pvar_get_info(
            i,
            buf.as_mut_ptr().cast(),
            &mut len,
            n,
            n,
            n.cast(),
            n.cast(),
            n.cast(),
            n,
            n,
            n,
            n,
            n,
        )
    };
    assert_eq!(rc, SUCCESS, "get_info({i})");
    CStr::from_bytes_until_nul(&buf)
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn merged_mpit_over_a_fake_library() {
    use super::category::*;
    use super::cvar::*;
    use super::init::*;
    use super::pvar::*;
    use ::pvar::BindKind;

    // Before init: the library's NOT_INITIALIZED.
    let mut n = 0;
    // SAFETY: a valid OUT pointer.
    assert_eq!(unsafe { MPI_T_pvar_get_num(&mut n) }, err(1003));

    let mut provided = -1;
    // SAFETY: valid OUT pointer.
    assert_eq!(unsafe { MPI_T_init_thread(3, &mut provided) }, SUCCESS);
    assert_eq!(provided, 2, "the lower level: the library's SERIALIZED");
    assert_eq!(LIB_INIT.load(Ordering::SeqCst), 1);

    // A comm-bound variable of pvar's, on a 4-byte communicator handle
    // whose top bit is set (zero-extended, as the interposer registers).
    let reg = ::pvar::global();
    let bound = reg
        .counter("pvar_test_comm_bytes")
        .bind(BindKind::Comm)
        .register_bound()
        .unwrap();
    let comm: u32 = 0x8400_0001;
    let inst = bound.create_instance(u64::from(comm), 1).unwrap();

    // Index space: the library's first, then pvar's.
    let total = num(MPI_T_pvar_get_num);
    let ours_n = total - 2;
    assert!(ours_n > 0);
    assert_eq!(pvar_name(0), "lib_p0");
    assert_eq!(pvar_name(1), "lib_p1");
    assert!(!pvar_name(2).starts_with("lib_"), "then pvar's");
    let mut i_comm = -1;
    // SAFETY: valid arguments.
    let rc =
        unsafe { MPI_T_pvar_get_index(c"pvar_test_comm_bytes".as_ptr(), CLASS0 + 6, &mut i_comm) };
    assert_eq!(rc, SUCCESS);
    assert!(i_comm >= 2 && i_comm < total);

    // The library adds a variable: appended, old indices unchanged.
    LIB_PVARS.store(3, Ordering::SeqCst);
    // (Other tests in this process may register variables meanwhile:
    // pvar's side may have grown too, appended after.)
    let total2 = num(MPI_T_pvar_get_num);
    assert!(total2 > total);
    assert_eq!(pvar_name(total), "lib_p2", "the library's first");
    assert_eq!(pvar_name(i_comm), "pvar_test_comm_bytes");
    let mut i = -1;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_get_index(c"lib_p2".as_ptr(), CLASS0 + 6, &mut i) },
        SUCCESS
    );
    assert_eq!(i, total);
    // Unknown names and classes: the library's INVALID_NAME.
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_get_index(c"nope".as_ptr(), CLASS0 + 6, &mut i) },
        err(1011)
    );
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_get_index(c"pvar_test_comm_bytes".as_ptr(), 7, &mut i) },
        err(1011),
        "pvar's own class value is not the library's"
    );

    // get_info of pvar's variable in the library's constants; the
    // datatype is 4 bytes.
    let (mut verb, mut class, mut bind, mut cont) = (0, 0, 0, 0);
    let mut dt = [0xffu8; 8];
    let mut e: Handle = 1usize as Handle;
    // SAFETY: valid OUT pointers; `dt` has room for 8 bytes.
    let rc = unsafe {
        MPI_T_pvar_get_info(
            i_comm,
            null_mut(),
            null_mut(),
            &mut verb,
            &mut class,
            dt.as_mut_ptr().cast(),
            &mut e,
            null_mut(),
            null_mut(),
            &mut bind,
            null_mut(),
            &mut cont,
            null_mut(),
        )
    };
    assert_eq!(rc, SUCCESS);
    assert_eq!(class, CLASS0 + 6, "COUNTER");
    assert_eq!(bind, BIND0 + 1, "MPI_T_BIND_MPI_COMM");
    assert_eq!(verb, VERB0, "USER_BASIC");
    assert!(e.is_null(), "MPI_T_ENUM_NULL");
    assert_eq!(
        u32::from_ne_bytes(dt[..4].try_into().unwrap()) as u64,
        DT_ULL
    );
    assert_eq!(
        dt[4..],
        [0xff; 4],
        "exactly sizeof(MPI_Datatype) bytes written"
    );

    // Sessions and handles of both sides.
    let mut s: Handle = null_mut();
    // SAFETY: valid OUT pointer.
    assert_eq!(unsafe { MPI_T_pvar_session_create(&mut s) }, SUCCESS);
    assert!(is_ours(s), "merged session keys are tagged");
    let (mut hl, mut ho, mut count) = (null_mut(), null_mut(), 0);
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_handle_alloc(s, 1, null_mut(), &mut hl, &mut count) },
        SUCCESS
    );
    assert_eq!(hl, lib_handle(1));
    // A library handle with pvar's tag bit would later be dispatched to
    // pvar: it is freed at the library and refused.
    LIB_TOP_BIT.store(true, Ordering::SeqCst);
    let (mut refused, mut refused_count) = (lib_handle(9), 7);
    // SAFETY: valid OUT pointers.
    let rc = unsafe { MPI_T_pvar_handle_alloc(s, 1, null_mut(), &mut refused, &mut refused_count) };
    LIB_TOP_BIT.store(false, Ordering::SeqCst);
    assert_eq!(rc, err(super::code::OUT_OF_HANDLES));
    assert!(refused.is_null() && refused_count == 0);
    assert_eq!(
        LIB_FREED_TOP.load(Ordering::SeqCst),
        1,
        "freed at the library"
    );
    // The tool's communicator: 4 bytes, then bytes that must not be read.
    let obj: [u32; 2] = [comm, 0xdead_beef];
    // SAFETY: valid arguments.
    let rc = unsafe {
        MPI_T_pvar_handle_alloc(
            s,
            i_comm,
            obj.as_ptr().cast_mut().cast(),
            &mut ho,
            &mut count,
        )
    };
    assert_eq!(rc, SUCCESS);
    assert!(is_ours(ho) && count == 1);
    inst.add(3);
    let mut v: c_int = 0;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(s, hl, (&mut v as *mut c_int).cast()) },
        SUCCESS
    );
    assert_eq!(v, 101);
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_start(s, ALL_HANDLES as usize as Handle) },
        SUCCESS
    );
    assert_eq!(
        STARTS_ALL.load(Ordering::SeqCst),
        1,
        "ALL_HANDLES reaches the library"
    );
    inst.add(4);
    let mut w: u64 = 0;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(s, ho, (&mut w as *mut u64).cast()) },
        SUCCESS
    );
    assert_eq!(w, 4, "started by ALL_HANDLES: counts from the start");
    // ALL_HANDLES (all ones, tagged-looking) is not one of pvar's handles.
    // SAFETY: as above.
    let rc = unsafe {
        MPI_T_pvar_read(
            s,
            ALL_HANDLES as usize as Handle,
            (&mut v as *mut c_int).cast(),
        )
    };
    assert_eq!(rc, err(1010));
    // Made-up values.
    let fake_h = (TAG | 0x1234) as usize as Handle;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(s, fake_h, (&mut w as *mut u64).cast()) },
        err(1010)
    );
    let fake_s = (TAG | 0x99 << 10 | 3) as usize as Handle;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(fake_s, ho, (&mut w as *mut u64).cast()) },
        err(1009)
    );
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(LIB_SESSION as Handle, hl, (&mut v as *mut c_int).cast()) },
        err(1009),
        "the library's own session is not a merged one"
    );
    // NULL handles and names are refused before the library sees them; a
    // tagged 1 is not pvar's ALL_HANDLES.
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(s, null_mut(), (&mut v as *mut c_int).cast()) },
        err(1010)
    );
    // SAFETY: values only.
    assert_eq!(unsafe { MPI_T_pvar_start(s, null_mut()) }, err(1010));
    // SAFETY: values only.
    let rc = unsafe { MPI_T_pvar_reset(s, (TAG | 1) as usize as Handle) };
    assert_eq!(rc, err(1010));
    let mut null_h: Handle = null_mut();
    // SAFETY: a valid pointer to a NULL handle.
    assert_eq!(unsafe { MPI_T_pvar_handle_free(s, &mut null_h) }, err(1010));
    let mut k = -1;
    // SAFETY: a NULL name, a valid OUT pointer.
    let rc = unsafe { MPI_T_pvar_get_index(core::ptr::null(), CLASS0 + 6, &mut k) };
    assert_eq!(rc, err(1006));
    // SAFETY: a NULL name, a valid OUT pointer.
    let rc = unsafe { MPI_T_cvar_get_index(core::ptr::null(), &mut k) };
    assert_eq!(rc, err(1006));
    // SAFETY: a NULL name, a valid OUT pointer.
    let rc = unsafe { MPI_T_category_get_index(core::ptr::null(), &mut k) };
    assert_eq!(rc, err(1006));
    // SAFETY: values and a valid buffer.
    let rc = unsafe { MPI_T_cvar_read(null_mut(), (&mut w as *mut u64).cast()) };
    assert_eq!(rc, err(1010));
    // SAFETY: NULL OUT pointers are ignored.
    let rc = unsafe { MPI_T_enum_get_info(null_mut(), null_mut(), null_mut(), null_mut()) };
    assert_eq!(rc, err(1010));
    // SAFETY: valid arguments.
    assert_eq!(unsafe { MPI_T_pvar_handle_free(s, &mut ho) }, SUCCESS);
    assert!(ho.is_null());
    let stale = s;
    // SAFETY: valid arguments.
    assert_eq!(unsafe { MPI_T_pvar_session_free(&mut s) }, SUCCESS);
    assert!(s.is_null());
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_pvar_read(stale, hl, (&mut v as *mut c_int).cast()) },
        err(1009)
    );

    // Categories: the library's lists merged indices of its variables.
    let cats = num(MPI_T_category_get_num);
    let mut lc = -1;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_category_get_index(c"lib_cat".as_ptr(), &mut lc) },
        SUCCESS
    );
    assert_eq!(lc, 0);
    let mut members = [-1; 2];
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_category_get_pvars(0, 2, members.as_mut_ptr()) },
        SUCCESS
    );
    assert_eq!(members, [0, 1]);
    let mut ec = -1;
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_category_get_index(c"pvar_engine".as_ptr(), &mut ec) },
        SUCCESS
    );
    assert!(ec >= 1 && ec < cats);
    let mut np = 0;
    // SAFETY: valid arguments.
    let rc = unsafe {
        MPI_T_category_get_info(
            ec,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            &mut np,
            null_mut(),
        )
    };
    assert_eq!(rc, SUCCESS);
    let mut ours = vec![-1; np as usize];
    assert_eq!(
        // SAFETY: test buffers and OUT pointers, valid for the call.
        unsafe { MPI_T_category_get_pvars(ec, np, ours.as_mut_ptr()) },
        SUCCESS
    );
    for &m in &ours {
        assert!(
            m >= 2 && m < total2 && m != total,
            "{m}: one of pvar's merged indices"
        );
        assert!(pvar_name(m).starts_with("pvar_engine_"));
    }
    let mut stamp = 0;
    // SAFETY: valid OUT pointer.
    assert_eq!(unsafe { MPI_T_category_changed(&mut stamp) }, SUCCESS);
    LIB_STAMP.fetch_add(1, Ordering::SeqCst);
    let mut stamp2 = 0;
    // SAFETY: valid OUT pointer.
    assert_eq!(unsafe { MPI_T_category_changed(&mut stamp2) }, SUCCESS);
    assert_eq!(stamp2, stamp + 1, "moves with the library's stamp");

    events_section();

    // Nested init; the last finalize finalizes the library once per init.
    // SAFETY: valid OUT pointer.
    assert_eq!(unsafe { MPI_T_init_thread(0, &mut provided) }, SUCCESS);
    assert_eq!(MPI_T_finalize(), SUCCESS);
    assert!(num(MPI_T_pvar_get_num) >= total2);
    assert_eq!(MPI_T_finalize(), SUCCESS);
    assert_eq!(LIB_INIT.load(Ordering::SeqCst), 0);
    assert_eq!(MPI_T_finalize(), err(1003));
    // SAFETY: a valid OUT pointer.
    assert_eq!(unsafe { MPI_T_pvar_get_num(&mut n) }, err(1003));
}

/// A second registration, freed by the first one's free callback.
static SECOND: AtomicUsize = AtomicUsize::new(0);
static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn free_second(_: *mut c_void, _: c_int, _: *mut c_void) {
    let r = SECOND.load(Ordering::SeqCst) as *mut c_void;
    // A tool calling MPI_T from its free callback, which pvar runs inside
    // MPI_T_event_handle_free: must not deadlock on the registrations.
    // SAFETY: a valid registration, no callback.
    let rc = unsafe { super::events::MPI_T_event_handle_free(r, null_mut(), None) };
    assert_eq!(rc, SUCCESS);
    FREED.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn on_event(_: *mut c_void, _: *mut c_void, _: c_int, _: *mut c_void) {}

/// Events: a huge capacity in `event_get_info` is not allocated, and a
/// free callback may call MPI_T.
fn events_section() {
    use super::events::*;
    let reg = ::pvar::global();
    let _ev = reg
        .event::<(u64, i32)>("pvar_mpit_test_event")
        .register()
        .unwrap();
    let mut i = -1;
    // SAFETY: a C string and a valid OUT pointer.
    let rc = unsafe { MPI_T_event_get_index(c"pvar_mpit_test_event".as_ptr(), &mut i) };
    assert_eq!(rc, SUCCESS);
    // The tool claims room for i32::MAX elements: answered from the two.
    let mut n = c_int::MAX;
    let mut types = [0u32; 2];
    let mut displs = [0isize; 2];
    // SAFETY: arrays that hold the event's two elements (all the merged
    // layer may write); NULL elsewhere.
    let rc = unsafe {
        MPI_T_event_get_info(
            i,
            null_mut(),
            null_mut(),
            null_mut(),
            types.as_mut_ptr().cast(),
            displs.as_mut_ptr(),
            &mut n,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!((rc, n), (SUCCESS, 2));
    assert_eq!(types, [DT_ULL as u32, DT_INT as u32]);

    let (mut first, mut second) = (null_mut(), null_mut());
    // SAFETY: unbound event; valid OUT pointers.
    unsafe {
        assert_eq!(
            MPI_T_event_handle_alloc(i, null_mut(), null_mut(), &mut first),
            SUCCESS
        );
        assert_eq!(
            MPI_T_event_handle_alloc(i, null_mut(), null_mut(), &mut second),
            SUCCESS
        );
        assert_eq!(
            MPI_T_event_register_callback(first, 0, null_mut(), null_mut(), Some(on_event)),
            SUCCESS
        );
    }
    info_objects(first);
    SECOND.store(second as usize, Ordering::SeqCst);
    // SAFETY: a live registration and a valid free callback.
    let rc = unsafe { MPI_T_event_handle_free(first, null_mut(), Some(free_second)) };
    assert_eq!(rc, SUCCESS);
    assert_eq!(FREED.load(Ordering::SeqCst), 1, "ran inside the free");
    // SAFETY: values only; freed by the callback.
    let rc = unsafe { MPI_T_event_handle_free(second, null_mut(), None) };
    assert_ne!(rc, SUCCESS);
}

/// The info objects of `MPI_T_event_handle_get_info` and
/// `MPI_T_event_callback_get_info` for a live registration with a
/// callback at the library's level 0: the library's `MPI_INFO_NULL` while
/// its MPI is not initialised or finalised, a new object from its
/// `MPI_Info_create` (one per call) while it is; errors make none.
fn info_objects(reg: *mut c_void) {
    use super::events::*;
    let handle = |r: *mut c_void| {
        let mut info = 0u32;
        // SAFETY: a 4-byte OUT value, the fake's `MPI_Info`.
        let rc = unsafe { MPI_T_event_handle_get_info(r, (&raw mut info).cast()) };
        (rc, info)
    };
    let callback = |level: c_int| {
        let mut info = 0u32;
        // SAFETY: as above.
        let rc = unsafe { MPI_T_event_callback_get_info(reg, level, (&raw mut info).cast()) };
        (rc, info)
    };
    let made = LIB_INFOS.load(Ordering::SeqCst);
    LIB_MPI_STATE.store(0, Ordering::SeqCst);
    assert_eq!(handle(reg), (SUCCESS, INFO_NULL), "before MPI_Init");
    assert_eq!(callback(0), (SUCCESS, INFO_NULL));
    LIB_MPI_STATE.store(1, Ordering::SeqCst);
    let (rc, a) = handle(reg);
    let (rc2, b) = callback(0);
    assert_eq!((rc, rc2), (SUCCESS, SUCCESS));
    assert!(
        a != INFO_NULL && b != INFO_NULL && a != b,
        "new objects: {a:#x} {b:#x}"
    );
    assert_eq!(LIB_INFOS.load(Ordering::SeqCst), made + 2);
    // Errors: a made-up registration, a level without a callback, a NULL
    // OUT pointer; no object is made.
    assert_eq!(handle(0x1234 as *mut c_void).0, err(code::INVALID_HANDLE));
    assert_eq!(
        callback(3).0,
        err(code::INVALID),
        "no callback at that level"
    );
    // SAFETY: a NULL OUT pointer is refused before anything is written.
    let rc = unsafe { MPI_T_event_handle_get_info(reg, null_mut()) };
    assert_eq!(rc, err(1006));
    assert_eq!(LIB_INFOS.load(Ordering::SeqCst), made + 2);
    LIB_MPI_STATE.store(2, Ordering::SeqCst);
    assert_eq!(handle(reg), (SUCCESS, INFO_NULL), "after MPI_Finalize");
    LIB_MPI_STATE.store(0, Ordering::SeqCst);
}
