//! The MPI library's MPI_T ABI, as `c/library.c` reads it from the
//! library's `mpi.h`, and the translation of pvar's own constants into the
//! library's.
//!
//! pvar's engine speaks the MPI 5.0 ABI (`include/mpi_t.h`: error codes
//! from 1001, verbosity 0x09…, classes 1…10, pointer-sized datatype handles
//! 0x209…). A tool in an MPI job is compiled against its library's
//! `mpi.h`, whose values differ (MPICH: classes from 240, `int` datatypes
//! such as `0x4c000405`; Open MPI: enumerations from 0, datatypes that are
//! addresses). [`LibraryAbi`] carries the library's values — `c/library.c`
//! fills it per library — and its methods map pvar's values onto them.
//!
//! Layout: [`LibraryAbi`] mirrors `struct pvar_mpi_library` field for
//! field; `version` and `size` are checked ([`load`]) before anything else
//! is read. If they do not match, or a `PMPI_T_*` function of MPI 3.1 is
//! missing, the merged MPI_T serves pvar's variables alone and speaks the
//! MPI 5.0 ABI values ([`MPI5`]).

use core::ffi::{CStr, c_char, c_int, c_void};

/// The layout version of `struct pvar_mpi_library` (`c/library.c`'s
/// `PVAR_MPI_LIBRARY_VERSION`).
pub const LIBRARY_VERSION: u32 = 2;

/// A pointer-sized MPI_T handle of the library (`MPI_T_pvar_session`,
/// `MPI_T_pvar_handle`, `MPI_T_cvar_handle`, `MPI_T_enum`).
pub type Handle = *mut c_void;

type F0 = Option<unsafe extern "C" fn() -> c_int>;
type FInt = Option<unsafe extern "C" fn(*mut c_int) -> c_int>;
type FIntInt = Option<unsafe extern "C" fn(c_int, *mut c_int) -> c_int>;
type FIndices = Option<unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int>;
type FName = Option<unsafe extern "C" fn(*const c_char, *mut c_int) -> c_int>;
type FHandleOut = Option<unsafe extern "C" fn(*mut Handle) -> c_int>;
type FSessH = Option<unsafe extern "C" fn(Handle, Handle) -> c_int>;
type FSessHBuf = Option<unsafe extern "C" fn(Handle, Handle, *mut c_void) -> c_int>;
type FSessHCBuf = Option<unsafe extern "C" fn(Handle, Handle, *const c_void) -> c_int>;

type CvarGetInfo = Option<
    unsafe extern "C" fn(
        c_int,
        *mut c_char,
        *mut c_int,
        *mut c_int,
        *mut c_void,
        *mut Handle,
        *mut c_char,
        *mut c_int,
        *mut c_int,
        *mut c_int,
    ) -> c_int,
>;
type PvarGetInfo = Option<
    unsafe extern "C" fn(
        c_int,
        *mut c_char,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_void,
        *mut Handle,
        *mut c_char,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
    ) -> c_int,
>;
type CategoryGetInfo = Option<
    unsafe extern "C" fn(
        c_int,
        *mut c_char,
        *mut c_int,
        *mut c_char,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
    ) -> c_int,
>;

/// `struct pvar_mpi_library` of `c/library.c`: the library's handle sizes,
/// constants and `PMPI_T_*` functions. Arrays of constants are indexed by
/// pvar's value (see each field); handle values are their bits
/// zero-extended to 64.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LibraryAbi {
    /// [`LIBRARY_VERSION`].
    pub version: u32,
    /// `sizeof(struct pvar_mpi_library)`.
    pub size: u32,
    /// `MPI_VERSION`.
    pub mpi_version: i32,
    /// `MPI_SUBVERSION`.
    pub mpi_subversion: i32,
    /// `"MPICH"`, `"Open MPI"` or `"MPI"` (static, NUL-terminated).
    pub name: *const c_char,
    /// `MPI_SUCCESS`.
    pub success: c_int,
    /// `MPI_T_ERR_*` for pvar's codes 1001…1018, in that order; a code the
    /// library lacks is its `MPI_T_ERR_INVALID`.
    pub err: [c_int; 18],
    /// `MPI_T_VERBOSITY_*` in the order user, tuner, mpidev × basic,
    /// detail, all.
    pub verbosity: [c_int; 9],
    /// `MPI_T_BIND_*` for pvar's 1…12.
    pub bind: [c_int; 12],
    /// `MPI_T_SCOPE_*` for pvar's 1…7.
    pub scope: [c_int; 7],
    /// `MPI_T_PVAR_CLASS_*` for pvar's 1…10.
    pub pvar_class: [c_int; 10],
    /// `MPI_THREAD_SINGLE`, `_FUNNELED`, `_SERIALIZED`, `_MULTIPLE`.
    pub thread: [c_int; 4],
    /// `MPI_T_CB_REQUIRE_NONE`, `_MPI_RESTRICTED`, `_THREAD_SAFE`,
    /// `_ASYNC_SIGNAL_SAFE` (pvar's values for an MPI 3 library).
    pub cb_safety: [c_int; 4],
    /// `MPI_T_SOURCE_ORDERED`, `_UNORDERED` (pvar's for an MPI 3 library).
    pub source_order: [c_int; 2],
    /// `sizeof` the handle type each binding names, indexed by pvar's bind
    /// value (`[2]` is `sizeof(MPI_Comm)`); `[0]` and `[1]` are 0.
    pub object_size: [u32; 13],
    /// `sizeof(MPI_Datatype)`.
    pub datatype_size: u32,
    /// `sizeof(MPI_Info)`.
    pub info_size: u32,
    /// `MPI_INT`, `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`,
    /// `MPI_UNSIGNED_LONG_LONG`, `MPI_COUNT`, `MPI_CHAR`, `MPI_DOUBLE`.
    pub datatype: [u64; 7],
    /// `MPI_T_ENUM_NULL`.
    pub enum_null: u64,
    /// `MPI_T_PVAR_ALL_HANDLES`.
    pub pvar_all_handles: u64,
    /// `MPI_INFO_NULL`.
    pub info_null: u64,

    /// `PMPI_T_init_thread`.
    pub init_thread: Option<unsafe extern "C" fn(c_int, *mut c_int) -> c_int>,
    /// `PMPI_T_finalize`.
    pub finalize: F0,
    /// `PMPI_T_enum_get_info`.
    pub enum_get_info:
        Option<unsafe extern "C" fn(Handle, *mut c_int, *mut c_char, *mut c_int) -> c_int>,
    /// `PMPI_T_enum_get_item`.
    pub enum_get_item:
        Option<unsafe extern "C" fn(Handle, c_int, *mut c_int, *mut c_char, *mut c_int) -> c_int>,
    /// `PMPI_T_cvar_get_num`.
    pub cvar_get_num: FInt,
    /// `PMPI_T_cvar_get_info` (the datatype OUT argument points to an
    /// `MPI_Datatype` of [`datatype_size`](Self::datatype_size) bytes).
    pub cvar_get_info: CvarGetInfo,
    /// `PMPI_T_cvar_get_index`.
    pub cvar_get_index: FName,
    /// `PMPI_T_cvar_handle_alloc`.
    pub cvar_handle_alloc:
        Option<unsafe extern "C" fn(c_int, *mut c_void, *mut Handle, *mut c_int) -> c_int>,
    /// `PMPI_T_cvar_handle_free`.
    pub cvar_handle_free: FHandleOut,
    /// `PMPI_T_cvar_read`.
    pub cvar_read: Option<unsafe extern "C" fn(Handle, *mut c_void) -> c_int>,
    /// `PMPI_T_cvar_write`.
    pub cvar_write: Option<unsafe extern "C" fn(Handle, *const c_void) -> c_int>,
    /// `PMPI_T_pvar_get_num`.
    pub pvar_get_num: FInt,
    /// `PMPI_T_pvar_get_info` (datatype as for `cvar_get_info`).
    pub pvar_get_info: PvarGetInfo,
    /// `PMPI_T_pvar_get_index`.
    pub pvar_get_index: Option<unsafe extern "C" fn(*const c_char, c_int, *mut c_int) -> c_int>,
    /// `PMPI_T_pvar_session_create`.
    pub pvar_session_create: FHandleOut,
    /// `PMPI_T_pvar_session_free`.
    pub pvar_session_free: FHandleOut,
    /// `PMPI_T_pvar_handle_alloc`.
    pub pvar_handle_alloc:
        Option<unsafe extern "C" fn(Handle, c_int, *mut c_void, *mut Handle, *mut c_int) -> c_int>,
    /// `PMPI_T_pvar_handle_free`.
    pub pvar_handle_free: Option<unsafe extern "C" fn(Handle, *mut Handle) -> c_int>,
    /// `PMPI_T_pvar_start`.
    pub pvar_start: FSessH,
    /// `PMPI_T_pvar_stop`.
    pub pvar_stop: FSessH,
    /// `PMPI_T_pvar_read`.
    pub pvar_read: FSessHBuf,
    /// `PMPI_T_pvar_write`.
    pub pvar_write: FSessHCBuf,
    /// `PMPI_T_pvar_reset`.
    pub pvar_reset: FSessH,
    /// `PMPI_T_pvar_readreset`.
    pub pvar_readreset: FSessHBuf,
    /// `PMPI_T_category_get_num`.
    pub category_get_num: FInt,
    /// `PMPI_T_category_get_info`.
    pub category_get_info: CategoryGetInfo,
    /// `PMPI_T_category_get_index`.
    pub category_get_index: FName,
    /// `PMPI_T_category_get_cvars`.
    pub category_get_cvars: FIndices,
    /// `PMPI_T_category_get_pvars`.
    pub category_get_pvars: FIndices,
    /// `PMPI_T_category_get_categories`.
    pub category_get_categories: FIndices,
    /// `PMPI_T_category_changed`.
    pub category_changed: FInt,
    /// `PMPI_T_category_get_num_events` (MPI 4; `None` for MPI 3).
    pub category_get_num_events: FIntInt,
    /// `PMPI_T_category_get_events` (MPI 4).
    pub category_get_events: FIndices,
    /// `PMPI_T_event_get_num` (MPI 4).
    pub event_get_num: FInt,
    /// `PMPI_T_source_get_num` (MPI 4).
    pub source_get_num: FInt,
    /// `PMPI_Info_create` (the argument points to an `MPI_Info` of
    /// [`info_size`](Self::info_size) bytes): the new info objects the
    /// event `*_get_info` calls return while MPI is initialised.
    pub info_create: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
    /// `PMPI_Initialized`.
    pub initialized: FInt,
    /// `PMPI_Finalized`.
    pub finalized: FInt,
}

// SAFETY: a read-only table: `c/library.c` fills it once (under
// `pthread_once`) before returning it, and `name` points to a static
// string; the function pointers are plain code addresses.
unsafe impl Sync for LibraryAbi {}
// SAFETY: as above.
unsafe impl Send for LibraryAbi {}

/// pvar's own values (the MPI 5.0 ABI of `include/mpi_t.h`) and no
/// library functions: what the merged MPI_T speaks when the library's
/// table cannot be used.
pub static MPI5: LibraryAbi = LibraryAbi {
    version: LIBRARY_VERSION,
    size: core::mem::size_of::<LibraryAbi>() as u32,
    mpi_version: 5,
    mpi_subversion: 0,
    name: c"the MPI 5.0 ABI".as_ptr(),
    success: 0,
    err: [
        1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015,
        1016, 1017, 1018,
    ],
    verbosity: VERBOSITY,
    bind: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    scope: [1, 2, 3, 4, 5, 6, 7],
    pvar_class: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    thread: THREAD,
    cb_safety: CB_SAFETY,
    source_order: [1, 2],
    object_size: [0, 0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8],
    datatype_size: 8,
    info_size: 8,
    datatype: DATATYPES,
    enum_null: 0,
    pvar_all_handles: 1,
    info_null: 0x130,
    init_thread: None,
    finalize: None,
    enum_get_info: None,
    enum_get_item: None,
    cvar_get_num: None,
    cvar_get_info: None,
    cvar_get_index: None,
    cvar_handle_alloc: None,
    cvar_handle_free: None,
    cvar_read: None,
    cvar_write: None,
    pvar_get_num: None,
    pvar_get_info: None,
    pvar_get_index: None,
    pvar_session_create: None,
    pvar_session_free: None,
    pvar_handle_alloc: None,
    pvar_handle_free: None,
    pvar_start: None,
    pvar_stop: None,
    pvar_read: None,
    pvar_write: None,
    pvar_reset: None,
    pvar_readreset: None,
    category_get_num: None,
    category_get_info: None,
    category_get_index: None,
    category_get_cvars: None,
    category_get_pvars: None,
    category_get_categories: None,
    category_changed: None,
    category_get_num_events: None,
    category_get_events: None,
    event_get_num: None,
    source_get_num: None,
    info_create: None,
    initialized: None,
    finalized: None,
};

/// pvar's verbosity values, in the order of [`LibraryAbi::verbosity`].
const VERBOSITY: [c_int; 9] = [0x09, 0x0a, 0x0c, 0x11, 0x12, 0x14, 0x21, 0x22, 0x24];
/// pvar's thread levels, in the order of [`LibraryAbi::thread`].
const THREAD: [c_int; 4] = [0, 1024, 2048, 4096];
/// pvar's callback safety levels, in the order of
/// [`LibraryAbi::cb_safety`].
const CB_SAFETY: [c_int; 4] = [0x00, 0x03, 0x0F, 0x3F];
/// pvar's datatype handles, in the order of [`LibraryAbi::datatype`].
const DATATYPES: [u64; 7] = [0x209, 0x20d, 0x20e, 0x20f, 0x202, 0x243, 0x214];
/// pvar's `MPI_T_ERR_INVALID`: the code for an unknown pvar code.
const OURS_ERR_INVALID: c_int = 1006;

/// Element `k` of `table` for pvar's value `first + k`; `None` outside.
fn by_offset(table: &[c_int], ours: c_int, first: c_int) -> Option<c_int> {
    let k = usize::try_from(ours.checked_sub(first)?).ok()?;
    table.get(k).copied()
}

impl LibraryAbi {
    /// The library's name (`"MPICH"`, `"Open MPI"`, …).
    pub fn name(&self) -> &str {
        if self.name.is_null() {
            return "MPI";
        }
        // SAFETY: non-NULL: a static NUL-terminated string (library.c's
        // literal or `MPI5`'s).
        unsafe { CStr::from_ptr(self.name) }
            .to_str()
            .unwrap_or("MPI")
    }

    /// The library's code for pvar's return code `ours`: `MPI_SUCCESS` for
    /// 0, its `MPI_T_ERR_INVALID` for a code pvar does not define.
    pub fn err(&self, ours: c_int) -> c_int {
        if ours == 0 {
            return self.success;
        }
        by_offset(&self.err, ours, 1001)
            .unwrap_or_else(|| self.err[(OURS_ERR_INVALID - 1001) as usize])
    }

    /// The library's verbosity for pvar's `ours` (unknown: unchanged).
    pub fn verbosity(&self, ours: c_int) -> c_int {
        VERBOSITY
            .iter()
            .position(|&v| v == ours)
            .map_or(ours, |k| self.verbosity[k])
    }

    /// The library's binding for pvar's `ours` (unknown: unchanged).
    pub fn bind(&self, ours: c_int) -> c_int {
        by_offset(&self.bind, ours, 1).unwrap_or(ours)
    }

    /// The library's scope for pvar's `ours` (unknown: unchanged).
    pub fn scope(&self, ours: c_int) -> c_int {
        by_offset(&self.scope, ours, 1).unwrap_or(ours)
    }

    /// The library's class for pvar's `ours` (unknown: unchanged).
    pub fn class(&self, ours: c_int) -> c_int {
        by_offset(&self.pvar_class, ours, 1).unwrap_or(ours)
    }

    /// pvar's class for the library's `theirs`; `None` if it is none of the
    /// ten.
    pub fn class_to_ours(&self, theirs: c_int) -> Option<c_int> {
        let k = self.pvar_class.iter().position(|&c| c == theirs)?;
        Some(k as c_int + 1)
    }

    /// pvar's thread level for the library's `theirs` (unknown: single).
    pub fn thread_to_ours(&self, theirs: c_int) -> c_int {
        self.thread
            .iter()
            .position(|&t| t == theirs)
            .map_or(THREAD[0], |k| THREAD[k])
    }

    /// The library's thread level for pvar's `ours` (unknown: single).
    pub fn thread(&self, ours: c_int) -> c_int {
        THREAD
            .iter()
            .position(|&t| t == ours)
            .map_or(self.thread[0], |k| self.thread[k])
    }

    /// The library's callback safety level for pvar's `ours` (unknown:
    /// unchanged).
    pub fn cb_safety(&self, ours: c_int) -> c_int {
        CB_SAFETY
            .iter()
            .position(|&s| s == ours)
            .map_or(ours, |k| self.cb_safety[k])
    }

    /// pvar's callback safety level for the library's `theirs`; `None` if
    /// it is none of the four.
    pub fn cb_safety_to_ours(&self, theirs: c_int) -> Option<c_int> {
        let k = self.cb_safety.iter().position(|&s| s == theirs)?;
        Some(CB_SAFETY[k])
    }

    /// The library's source ordering for pvar's `ours` (unknown:
    /// unchanged).
    pub fn source_order(&self, ours: c_int) -> c_int {
        by_offset(&self.source_order, ours, 1).unwrap_or(ours)
    }

    /// The library's datatype handle (bits) for pvar's datatype handle
    /// `ours`; `None` for one pvar does not use.
    pub fn datatype(&self, ours: u64) -> Option<u64> {
        let k = DATATYPES.iter().position(|&d| d == ours)?;
        Some(self.datatype[k])
    }

    /// The size in bytes of the handle an object bound with pvar's binding
    /// `ours` is named by (0: no object, or unknown).
    pub fn object_size(&self, ours: c_int) -> usize {
        usize::try_from(ours)
            .ok()
            .and_then(|k| self.object_size.get(k))
            .map_or(0, |&n| n as usize)
    }

    /// The names of the MPI 3.1 `PMPI_T_*` functions the table lacks.
    fn missing(&self) -> Vec<&'static str> {
        let present = [
            ("PMPI_T_init_thread", self.init_thread.is_some()),
            ("PMPI_T_finalize", self.finalize.is_some()),
            ("PMPI_T_enum_get_info", self.enum_get_info.is_some()),
            ("PMPI_T_enum_get_item", self.enum_get_item.is_some()),
            ("PMPI_T_cvar_get_num", self.cvar_get_num.is_some()),
            ("PMPI_T_cvar_get_info", self.cvar_get_info.is_some()),
            ("PMPI_T_cvar_get_index", self.cvar_get_index.is_some()),
            ("PMPI_T_cvar_handle_alloc", self.cvar_handle_alloc.is_some()),
            ("PMPI_T_cvar_handle_free", self.cvar_handle_free.is_some()),
            ("PMPI_T_cvar_read", self.cvar_read.is_some()),
            ("PMPI_T_cvar_write", self.cvar_write.is_some()),
            ("PMPI_T_pvar_get_num", self.pvar_get_num.is_some()),
            ("PMPI_T_pvar_get_info", self.pvar_get_info.is_some()),
            ("PMPI_T_pvar_get_index", self.pvar_get_index.is_some()),
            (
                "PMPI_T_pvar_session_create",
                self.pvar_session_create.is_some(),
            ),
            ("PMPI_T_pvar_session_free", self.pvar_session_free.is_some()),
            ("PMPI_T_pvar_handle_alloc", self.pvar_handle_alloc.is_some()),
            ("PMPI_T_pvar_handle_free", self.pvar_handle_free.is_some()),
            ("PMPI_T_pvar_start", self.pvar_start.is_some()),
            ("PMPI_T_pvar_stop", self.pvar_stop.is_some()),
            ("PMPI_T_pvar_read", self.pvar_read.is_some()),
            ("PMPI_T_pvar_write", self.pvar_write.is_some()),
            ("PMPI_T_pvar_reset", self.pvar_reset.is_some()),
            ("PMPI_T_pvar_readreset", self.pvar_readreset.is_some()),
            ("PMPI_T_category_get_num", self.category_get_num.is_some()),
            ("PMPI_T_category_get_info", self.category_get_info.is_some()),
            (
                "PMPI_T_category_get_index",
                self.category_get_index.is_some(),
            ),
            (
                "PMPI_T_category_get_cvars",
                self.category_get_cvars.is_some(),
            ),
            (
                "PMPI_T_category_get_pvars",
                self.category_get_pvars.is_some(),
            ),
            (
                "PMPI_T_category_get_categories",
                self.category_get_categories.is_some(),
            ),
            ("PMPI_T_category_changed", self.category_changed.is_some()),
        ];
        present
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Whether the values look like a real table: sizes the merged layer
    /// can read and write (4 or 8 bytes).
    fn sizes_ok(&self) -> bool {
        let ok = |n: u32| n == 4 || n == 8;
        ok(self.datatype_size) && ok(self.info_size) && self.object_size[2..].iter().all(|&n| ok(n))
    }
}

/// The library as the merged MPI_T uses it.
#[derive(Debug)]
pub struct Library {
    /// The constants spoken to tools: the library's, or [`MPI5`] if its
    /// table is unusable.
    pub abi: &'static LibraryAbi,
    /// Why the library's MPI_T functions cannot be used (`None`: they
    /// can).
    pub unavailable: Option<String>,
}

impl Library {
    /// Whether the library's `PMPI_T_*` functions may be called.
    pub fn usable(&self) -> bool {
        self.unavailable.is_none()
    }
}

unsafe extern "C" {
    /// `c/library.c`: the library's table (static; never freed).
    fn pvar_mpi_library() -> *const LibraryAbi;
}

/// Reads and checks the library's table (`c/library.c`).
pub fn load() -> Library {
    // SAFETY: `pvar_mpi_library` takes no argument and returns NULL or a
    // pointer to a static table.
    let p = unsafe { pvar_mpi_library() };
    check(p)
}

/// Checks the table at `p` (NULL allowed).
fn check(p: *const LibraryAbi) -> Library {
    let fallback = |why: String| Library {
        abi: &MPI5,
        unavailable: Some(why),
    };
    if p.is_null() {
        return fallback("pvar_mpi_library() returned NULL".into());
    }
    // The two leading words first: a table of another layout may be
    // shorter than ours.
    // SAFETY: non-NULL; every layout version starts with two u32 words.
    let (version, size) = unsafe { (p.cast::<u32>().read(), p.cast::<u32>().add(1).read()) };
    if version != LIBRARY_VERSION || size as usize != core::mem::size_of::<LibraryAbi>() {
        return fallback(format!(
            "c/library.c describes layout {version} of {size} bytes, \
             the Rust half expects layout {LIBRARY_VERSION} of {} bytes",
            core::mem::size_of::<LibraryAbi>()
        ));
    }
    // SAFETY: version and size match this layout; the table is static.
    let abi: &'static LibraryAbi = unsafe { &*p };
    if !abi.sizes_ok() {
        return fallback("c/library.c reports handle sizes other than 4 or 8 bytes".into());
    }
    let missing = abi.missing();
    let unavailable = (!missing.is_empty()).then(|| format!("no {}", missing.join(", ")));
    Library { abi, unavailable }
}

/// Reads a handle of `size` bytes (4 or 8) at `p`, zero-extended.
///
/// # Safety
/// `p` is valid for reads of `size` bytes.
pub unsafe fn read_handle(p: *const c_void, size: usize) -> u64 {
    // SAFETY: valid for `size` bytes (contract); unaligned reads.
    unsafe {
        match size {
            4 => u64::from(p.cast::<u32>().read_unaligned()),
            _ => p.cast::<u64>().read_unaligned(),
        }
    }
}

/// Writes a handle value of `size` bytes (4 or 8) at `p`.
///
/// # Safety
/// `p` is valid for writes of `size` bytes.
pub unsafe fn write_handle(p: *mut c_void, size: usize, value: u64) {
    // SAFETY: valid for `size` bytes (contract); unaligned writes.
    unsafe {
        match size {
            4 => p.cast::<u32>().write_unaligned(value as u32),
            _ => p.cast::<u64>().write_unaligned(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi5_translates_to_itself() {
        let a = &MPI5;
        for code in 1001..=1018 {
            assert_eq!(a.err(code), code);
        }
        assert_eq!(a.err(0), 0);
        assert_eq!(a.err(77), 1006, "unknown codes are MPI_T_ERR_INVALID");
        assert_eq!(a.verbosity(0x12), 0x12);
        assert_eq!(a.class(7), 7);
        assert_eq!(a.class_to_ours(11), None);
        assert_eq!(a.thread(4096), 4096);
        assert_eq!(a.datatype(0x214), Some(0x214));
        assert_eq!(a.datatype(0x999), None);
        assert!(!check(&MPI5).usable(), "no functions");
        assert!(check(core::ptr::null()).unavailable.is_some());
    }

    #[test]
    fn translates_to_another_abi() {
        let mut t = MPI5;
        t.err = core::array::from_fn(|k| 59 + k as c_int);
        t.verbosity = core::array::from_fn(|k| 221 + k as c_int);
        t.pvar_class = core::array::from_fn(|k| 240 + k as c_int);
        t.thread = [0, 1, 2, 3];
        assert_eq!(t.err(1010), 68);
        assert_eq!(t.err(-5), 64, "unknown: MPI_T_ERR_INVALID");
        assert_eq!(t.verbosity(0x0c), 223);
        assert_eq!(t.class(1), 240);
        assert_eq!(t.class_to_ours(249), Some(10));
        assert_eq!(t.class_to_ours(250), None);
        assert_eq!(t.thread(4096), 3);
        assert_eq!(t.thread_to_ours(2), 2048);
    }

    #[test]
    fn handles_round_trip_by_size() {
        let mut four = [0xffu8; 8];
        // SAFETY: 8 valid bytes.
        unsafe { write_handle(four.as_mut_ptr().cast(), 4, 0x8400_0001) };
        assert_eq!(four[4..], [0xff; 4], "only 4 bytes written");
        // SAFETY: 8 valid bytes.
        assert_eq!(unsafe { read_handle(four.as_ptr().cast(), 4) }, 0x8400_0001);
        let mut eight = [0u8; 8];
        // SAFETY: 8 valid bytes.
        unsafe { write_handle(eight.as_mut_ptr().cast(), 8, u64::MAX - 1) };
        // SAFETY: 8 valid bytes.
        assert_eq!(
            // SAFETY: test buffers and OUT pointers, valid for the call.
            unsafe { read_handle(eight.as_ptr().cast(), 8) },
            u64::MAX - 1
        );
    }
}
