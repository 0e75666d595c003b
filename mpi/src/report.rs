//! The cross-rank report's C entry points, called by the wrappers
//! (`c/lifecycle.c`): the collector made at `MPI_Init`, each rank's
//! payload, and on the root the report of all of them.
//!
//! ```c
//! int  pvar_mpi_report_init(void);
//! int  pvar_mpi_report_local(const uint64_t *objects, const char *const *labels, size_t nlabels,
//!                            uint8_t **buf, size_t *len);
//! int  pvar_mpi_report_write(const uint8_t *all, const size_t *lens, int nranks, int text_fd,
//!                            const char *json_path);
//! void pvar_mpi_report_free(uint8_t *buf, size_t len);
//! ```
//!
//! Every function returns [`PVAR_MPI_REPORT_OK`] (0) or one of the error
//! codes below (and, for an error worth a person's attention — a payload
//! that does not decode, a file that cannot be written — prints one line
//! to stderr saying why); none unwinds into C (panics are caught).
//!
//! The collector (a [`pvar::report::Collector`] over
//! [`pvar::global`], which follows watermark marks) lives in a
//! `static` mutex: **not async-signal-safe**, meant to be called from
//! `MPI_Init` / `MPI_Finalize` (or a collective every N calls) only.

use std::ffi::{CStr, c_char, c_int};
use std::io::Write;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard};

use pvar::report::{Collector, JobReport, ReportOptions, decode_concatenated};

/// Success.
pub const PVAR_MPI_REPORT_OK: c_int = 0;
/// An argument is invalid: a NULL pointer where one is needed, a rank
/// count below 1, lengths whose sum overflows.
pub const PVAR_MPI_REPORT_EINVAL: c_int = 1;
/// A rank's payload does not decode (or the payloads do not form a job).
pub const PVAR_MPI_REPORT_EPAYLOAD: c_int = 2;
/// Writing the text or the JSON failed (a bad fd, a path that cannot be
/// created).
pub const PVAR_MPI_REPORT_EIO: c_int = 3;
/// A panic in the report code was caught (a bug: please report it).
pub const PVAR_MPI_REPORT_EPANIC: c_int = 4;

/// The collector made at `MPI_Init`.
static COLLECTOR: Mutex<Option<Collector>> = Mutex::new(None);

/// The element names of the interposer's per-collective arrays, in their
/// element order (see the variables' descriptions in `c/vars.c`).
const COLL_KINDS: [&str; 15] = [
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "scatter",
    "scatterv",
    "alltoall",
    "alltoallv",
    "reduce_scatter",
    "scan",
    "exscan",
];

/// The interposer's arrays indexed by collective kind.
const COLL_ARRAYS: [&str; 3] = [
    "pvar_mpi_coll_calls",
    "pvar_mpi_coll_bytes",
    "pvar_mpi_coll_time",
];

fn collector() -> MutexGuard<'static, Option<Collector>> {
    // A panic while holding the lock leaves a collector that is still
    // usable (an observer between snapshots): carry on with it.
    COLLECTOR.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f`, turning a panic into [`PVAR_MPI_REPORT_EPANIC`].
fn guarded(f: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(PVAR_MPI_REPORT_EPANIC)
}

/// Starts following the process registry for the report: makes the
/// collector (watermark marks and the wall time count from now). Called
/// from `MPI_Init`/`MPI_Init_thread`; a second call keeps the first
/// collector. Returns 0.
///
/// # Safety
///
/// None beyond the module's: call it from one thread at a time with the
/// other functions (they serialise on a mutex; not from a signal handler).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_mpi_report_init() -> c_int {
    guarded(|| {
        let mut c = collector();
        if c.is_none() {
            *c = Some(Collector::new(pvar::global()));
        }
        PVAR_MPI_REPORT_OK
    })
}

/// This rank's payload: a snapshot of the process registry taken by the
/// collector (made now if `pvar_mpi_report_init` was not called: marks are
/// then the current levels), with `nlabels` object labels
/// (`objects[i]` is named `labels[i]`, a NUL-terminated string; invalid
/// UTF-8 is replaced). On success `*buf` points to `*len` bytes to give
/// back with [`pvar_mpi_report_free`]; on failure `*buf` is NULL and
/// `*len` 0 (where those pointers are not NULL).
///
/// # Safety
///
/// `buf` and `len` are NULL or writable; if `nlabels > 0`, `objects` and
/// `labels` are NULL or point to `nlabels` readable elements, and each
/// label is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_mpi_report_local(
    objects: *const u64,
    labels: *const *const c_char,
    nlabels: usize,
    buf: *mut *mut u8,
    len: *mut usize,
) -> c_int {
    guarded(|| {
        if buf.is_null() || len.is_null() {
            return PVAR_MPI_REPORT_EINVAL;
        }
        // SAFETY: both checked non-NULL; the caller makes them writable.
        unsafe {
            *buf = std::ptr::null_mut();
            *len = 0;
        }
        if nlabels > 0 && (objects.is_null() || labels.is_null()) {
            return PVAR_MPI_REPORT_EINVAL;
        }
        let mut named = Vec::with_capacity(nlabels.min(1 << 16));
        for i in 0..nlabels {
            // SAFETY: `i < nlabels` and both arrays hold `nlabels`
            // readable elements (checked non-NULL above).
            let (object, label) = unsafe { (*objects.add(i), *labels.add(i)) };
            if label.is_null() {
                return PVAR_MPI_REPORT_EINVAL;
            }
            // SAFETY: a non-NULL label is a NUL-terminated string (the
            // caller's contract), alive for this call.
            let label = unsafe { CStr::from_ptr(label) };
            named.push((object, label.to_string_lossy().into_owned()));
        }
        let payload = {
            let mut c = collector();
            let c = c.get_or_insert_with(|| Collector::new(pvar::global()));
            c.payload(None, &named)
        };
        let bytes: Box<[u8]> = payload.into_boxed_slice();
        let n = bytes.len();
        let p = Box::into_raw(bytes) as *mut u8;
        // SAFETY: checked non-NULL and writable above.
        unsafe {
            *buf = p;
            *len = n;
        }
        PVAR_MPI_REPORT_OK
    })
}

/// On the root rank: the report of all ranks' payloads, laid end to end
/// in `all` (rank `i`'s is `lens[i]` bytes after rank `i - 1`'s, as
/// `MPI_Gatherv` leaves them), written as text to `text_fd` (a duplicate
/// of it: the caller's fd stays open; negative for none) and as JSON to
/// the file `json_path` (created or truncated; NULL or `""` for none).
///
/// # Safety
///
/// `lens` is NULL or points to `nranks` readable `size_t`; `all` is NULL
/// or points to their sum of readable bytes; `text_fd` is negative or an
/// open file descriptor for the duration of the call; `json_path` is NULL
/// or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_mpi_report_write(
    all: *const u8,
    lens: *const usize,
    nranks: c_int,
    text_fd: c_int,
    json_path: *const c_char,
) -> c_int {
    guarded(|| {
        let Ok(n) = usize::try_from(nranks) else {
            return PVAR_MPI_REPORT_EINVAL;
        };
        if n == 0 || lens.is_null() {
            return PVAR_MPI_REPORT_EINVAL;
        }
        // SAFETY: `lens` is non-NULL and holds `nranks` elements.
        let lens = unsafe { std::slice::from_raw_parts(lens, n) };
        let Some(total) = lens.iter().try_fold(0usize, |a, &b| a.checked_add(b)) else {
            return PVAR_MPI_REPORT_EINVAL;
        };
        if total > isize::MAX as usize || (all.is_null() && total > 0) {
            return PVAR_MPI_REPORT_EINVAL;
        }
        let all: &[u8] = if total == 0 {
            &[]
        } else {
            // SAFETY: non-NULL, `total` readable bytes (the caller's
            // contract), at most isize::MAX.
            unsafe { std::slice::from_raw_parts(all, total) }
        };
        let report = match decode_concatenated(all, lens)
            .and_then(|inputs| JobReport::from_ranks_with(inputs, options()))
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("pvar_mpi: no report: {e}");
                return PVAR_MPI_REPORT_EPAYLOAD;
            }
        };
        if text_fd >= 0 {
            // SAFETY: the caller keeps `text_fd` open for the call; it is
            // only borrowed to be duplicated.
            let borrowed = unsafe { BorrowedFd::borrow_raw(text_fd) };
            let written = borrowed
                .try_clone_to_owned()
                .map(std::fs::File::from)
                .and_then(|f| {
                    let mut w = std::io::BufWriter::new(f);
                    report.write_text(&mut w)?;
                    w.flush()
                });
            if let Err(e) = written {
                eprintln!("pvar_mpi: writing the report to fd {text_fd}: {e}");
                return PVAR_MPI_REPORT_EIO;
            }
        }
        if !json_path.is_null() {
            // SAFETY: a non-NULL path is a NUL-terminated string.
            let path = unsafe { CStr::from_ptr(json_path) };
            if !path.is_empty() {
                let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
                let written = std::fs::File::create(path).and_then(|f| {
                    let mut w = std::io::BufWriter::new(f);
                    report.write_json(&mut w)?;
                    w.flush()
                });
                if let Err(e) = written {
                    eprintln!(
                        "pvar_mpi: writing the JSON report to {}: {e}",
                        path.display()
                    );
                    return PVAR_MPI_REPORT_EIO;
                }
            }
        }
        PVAR_MPI_REPORT_OK
    })
}

/// Gives back a payload of [`pvar_mpi_report_local`]. NULL is ignored.
///
/// # Safety
///
/// `buf` is NULL or a pointer `pvar_mpi_report_local` returned with this
/// `len`, not given back before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_mpi_report_free(buf: *mut u8, len: usize) {
    if buf.is_null() {
        return;
    }
    // SAFETY: `buf`/`len` are a boxed slice's pointer and length from
    // `Box::into_raw` in `pvar_mpi_report_local`, given back once.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(buf, len)) });
}

/// The report options of the interposer: its per-collective arrays'
/// element names.
fn options() -> ReportOptions {
    ReportOptions {
        element_names: COLL_ARRAYS
            .iter()
            .map(|a| {
                (
                    a.to_string(),
                    COLL_KINDS.iter().map(|k| k.to_string()).collect(),
                )
            })
            .collect(),
        ..ReportOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(labels: &[(u64, &CStr)]) -> Vec<u8> {
        let objects: Vec<u64> = labels.iter().map(|l| l.0).collect();
        let names: Vec<*const c_char> = labels.iter().map(|l| l.1.as_ptr()).collect();
        let (mut buf, mut len) = (std::ptr::null_mut(), 0usize);
        // SAFETY: valid arrays of `labels.len()` elements and out-pointers.
        let rc = unsafe {
            pvar_mpi_report_local(
                objects.as_ptr(),
                names.as_ptr(),
                names.len(),
                &mut buf,
                &mut len,
            )
        };
        assert_eq!(rc, PVAR_MPI_REPORT_OK);
        // SAFETY: `buf` holds `len` bytes until freed below.
        let out = unsafe { std::slice::from_raw_parts(buf, len) }.to_vec();
        // SAFETY: given back once, with its length.
        unsafe { pvar_mpi_report_free(buf, len) };
        out
    }

    #[test]
    fn payloads_make_a_report_on_a_file_descriptor_and_in_json() {
        // SAFETY: no arguments.
        assert_eq!(unsafe { pvar_mpi_report_init() }, PVAR_MPI_REPORT_OK);
        pvar::counter!("report_glue_test_msgs").add(5);
        let a = local(&[(1, c"MPI_COMM_WORLD")]);
        let b = local(&[(1, c"MPI_COMM_WORLD")]);
        let lens = [a.len(), b.len()];
        let all = [a, b].concat();
        let dir = std::env::temp_dir().join(format!("pvar-mpi-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text_path = dir.join("report.txt");
        let json_path = dir.join("report.json");
        let text = std::fs::File::create(&text_path).unwrap();
        let json_c = std::ffi::CString::new(json_path.as_os_str().as_bytes()).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: valid buffers, an open fd, a C string.
        let rc = unsafe {
            pvar_mpi_report_write(
                all.as_ptr(),
                lens.as_ptr(),
                2,
                text.as_raw_fd(),
                json_c.as_ptr(),
            )
        };
        assert_eq!(rc, PVAR_MPI_REPORT_OK);
        drop(text);
        let text = std::fs::read_to_string(&text_path).unwrap();
        assert!(text.contains("report_glue_test_msgs"), "{text}");
        assert!(text.contains("@ Ranks          : 2"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        assert_eq!(json["schema"], "pvar.report.v1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_arguments_are_refused() {
        let (mut buf, mut len) = (std::ptr::null_mut(), 7usize);
        // SAFETY: NULL arrays with a nonzero count: refused before use.
        let rc = unsafe {
            pvar_mpi_report_local(std::ptr::null(), std::ptr::null(), 3, &mut buf, &mut len)
        };
        assert_eq!((rc, buf.is_null(), len), (PVAR_MPI_REPORT_EINVAL, true, 0));
        // SAFETY: NULL out-pointers: refused before use.
        let rc = unsafe {
            pvar_mpi_report_local(
                std::ptr::null(),
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, PVAR_MPI_REPORT_EINVAL);
        let objects = [1u64];
        let labels = [std::ptr::null::<c_char>()];
        // SAFETY: one-element arrays; the NULL label is refused.
        let rc = unsafe {
            pvar_mpi_report_local(objects.as_ptr(), labels.as_ptr(), 1, &mut buf, &mut len)
        };
        assert_eq!(rc, PVAR_MPI_REPORT_EINVAL);

        let lens = [4usize, usize::MAX];
        let bytes = [0u8; 4];
        // SAFETY: each call is refused before reading past what is valid.
        unsafe {
            assert_eq!(
                pvar_mpi_report_write(bytes.as_ptr(), lens.as_ptr(), 0, -1, std::ptr::null()),
                PVAR_MPI_REPORT_EINVAL
            );
            assert_eq!(
                pvar_mpi_report_write(bytes.as_ptr(), std::ptr::null(), 1, -1, std::ptr::null()),
                PVAR_MPI_REPORT_EINVAL
            );
            assert_eq!(
                pvar_mpi_report_write(bytes.as_ptr(), lens.as_ptr(), 2, -1, std::ptr::null()),
                PVAR_MPI_REPORT_EINVAL
            );
            assert_eq!(
                pvar_mpi_report_write(bytes.as_ptr(), lens.as_ptr(), 1, -1, c"".as_ptr()),
                PVAR_MPI_REPORT_EPAYLOAD
            );
            pvar_mpi_report_free(std::ptr::null_mut(), 0);
        }
    }
}
