//! The cross-rank report's C entry points, called by the wrappers
//! (`c/lifecycle.c`): the collector made at `MPI_Init`, and one rank's part
//! of a report — its partial made, the partials reduced along the tree of
//! [`pvar::report::tree`] over C callbacks that move bytes with `PMPI_`
//! point-to-point calls, the report written on the root.
//!
//! ```c
//! int pvar_mpi_report_init(void);
//! typedef int (*pvar_mpi_send_fn)(void *ctx, int to, const uint8_t *buf, size_t len);
//! typedef int (*pvar_mpi_recv_fn)(void *ctx, int from, uint8_t **buf, size_t *len);
//! int pvar_mpi_report_reduce(int rank, int size, const uint64_t *objects,
//!                            const char *const *labels, size_t nlabels,
//!                            pvar_mpi_send_fn send, pvar_mpi_recv_fn recv, void *ctx,
//!                            int text_fd, const char *json_path);
//! ```
//!
//! Every function returns [`PVAR_MPI_REPORT_OK`] (0) or one of the error
//! codes below (and, for an error worth a person's attention — a partial
//! that does not decode, a file that cannot be written — prints one line
//! to stderr saying why); none unwinds into C (panics are caught).
//!
//! The collector (a [`pvar::report::Collector`] over
//! [`pvar::global`], which follows watermark marks) lives in a
//! `static` mutex: **not async-signal-safe**, meant to be called from
//! `MPI_Init` / `MPI_Finalize` (or a collective every N calls) only.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::Write;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard};

use pvar::report::tree::{self, Link};
use pvar::report::{Collector, JobReport, Partial, ProfileSeries, ReportError, ReportOptions};

/// Success.
pub const PVAR_MPI_REPORT_OK: c_int = 0;
/// An argument is invalid: a NULL pointer where one is needed, a rank
/// outside `0..size`.
pub const PVAR_MPI_REPORT_EINVAL: c_int = 1;
/// The report has ranks left out (a partial that did not arrive or did
/// not decode): it was written, and says so.
pub const PVAR_MPI_REPORT_EPAYLOAD: c_int = 2;
/// Writing the text or the JSON failed (a bad fd, a path that cannot be
/// created), or this rank's partial could not be sent.
pub const PVAR_MPI_REPORT_EIO: c_int = 3;
/// A panic in the report code was caught (a bug: please report it).
pub const PVAR_MPI_REPORT_EPANIC: c_int = 4;

/// Sends `len` bytes to rank `to`; 0 on success.
pub type SendFn =
    unsafe extern "C" fn(ctx: *mut c_void, to: c_int, buf: *const u8, len: usize) -> c_int;
/// Receives the bytes rank `from` sends into a buffer from `malloc`
/// (`*buf`, `*len`; NULL for none), which the caller frees; 0 on success.
pub type RecvFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    from: c_int,
    buf: *mut *mut u8,
    len: *mut usize,
) -> c_int;

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

/// The profile series of the interposer's report.
pub const TIME_IN_MPI: &str = "time in MPI";
/// See [`TIME_IN_MPI`].
pub const TIME_IN_COLLECTIVES: &str = "time in collectives";

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

/// Moves partials with the C callbacks.
struct CLink {
    send: SendFn,
    recv: RecvFn,
    ctx: *mut c_void,
}

impl Link for CLink {
    fn send(&mut self, to: u32, bytes: &[u8]) -> Result<(), ReportError> {
        // SAFETY: the callback's contract (pvar_mpi_report_reduce's
        // caller): it reads `len` bytes from `buf` during the call.
        let rc = unsafe { (self.send)(self.ctx, to as c_int, bytes.as_ptr(), bytes.len()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(ReportError::Transport(format!(
                "sending the partial to rank {to} failed ({rc})"
            )))
        }
    }

    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError> {
        let (mut buf, mut len) = (std::ptr::null_mut::<u8>(), 0usize);
        // SAFETY: the callback writes a malloc'd buffer (or NULL) and its
        // length into the two out-pointers, both valid for the call.
        let rc = unsafe { (self.recv)(self.ctx, from as c_int, &mut buf, &mut len) };
        let bytes = if buf.is_null() {
            Vec::new()
        } else {
            // SAFETY: a non-NULL buffer holds `len` bytes (the callback's
            // contract); it is copied before being freed below.
            let v = unsafe { std::slice::from_raw_parts(buf, len) }.to_vec();
            // SAFETY: the buffer came from malloc and is freed once.
            unsafe { libc::free(buf.cast()) };
            v
        };
        if rc == 0 {
            Ok(bytes)
        } else {
            Err(ReportError::Transport(format!(
                "receiving rank {from}'s partial failed ({rc})"
            )))
        }
    }
}

/// This rank's part of a report of `size` ranks (collective: every rank
/// of the private communicator calls it for each report). Makes this
/// rank's partial from a snapshot of the process registry taken by the
/// collector (made now if `pvar_mpi_report_init` was not called: marks are
/// then the current levels), with `nlabels` object labels (`objects[i]` is
/// named `labels[i]`, a NUL-terminated string; invalid UTF-8 is replaced);
/// receives its children's partials with `recv` and sends the merged one
/// to its parent with `send`, along the binomial tree rooted at rank 0
/// ([`pvar::report::tree`]). Rank 0 then writes the text report to
/// `text_fd` (a duplicate of it: the caller's fd stays open; negative for
/// none) and the JSON to `json_path` (written whole, then renamed into
/// place: see [`pvar::report::write_atomically`]; NULL or `""` for none).
///
/// A rank whose arguments are invalid still takes part (with no values,
/// counted as a problem), so that no parent waits forever.
///
/// With `PVAR_MPI_REPORT_COST=1` in rank 0's environment, rank 0 also says
/// on stderr what the report cost it: the time from its entry to its
/// partial made, reduced (its children's partials received and merged)
/// and the report written, and how far its peak resident set (`VmHWM`,
/// reset at entry through `/proc/self/clear_refs`) rose above its resident
/// set at entry.
///
/// # Safety
///
/// If `nlabels > 0`, `objects` and `labels` are NULL or point to
/// `nlabels` readable elements, and each label is NULL or a NUL-terminated
/// string; `send` and `recv` are functions with the contracts of
/// [`SendFn`] and [`RecvFn`] for `ctx`; `text_fd` is negative or an open
/// file descriptor for the duration of the call; `json_path` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pvar_mpi_report_reduce(
    rank: c_int,
    size: c_int,
    objects: *const u64,
    labels: *const *const c_char,
    nlabels: usize,
    send: Option<SendFn>,
    recv: Option<RecvFn>,
    ctx: *mut c_void,
    text_fd: c_int,
    json_path: *const c_char,
) -> c_int {
    guarded(|| {
        let (Ok(r), Ok(n)) = (u32::try_from(rank), u32::try_from(size)) else {
            return PVAR_MPI_REPORT_EINVAL;
        };
        let (Some(send), Some(recv)) = (send, recv) else {
            return PVAR_MPI_REPORT_EINVAL;
        };
        if r >= n {
            return PVAR_MPI_REPORT_EINVAL;
        }
        let cost = (r == 0 && std::env::var("PVAR_MPI_REPORT_COST").is_ok_and(|v| v == "1"))
            .then(Cost::start);
        let options = options();
        // SAFETY: the caller's contract on the label arrays.
        let mine = match unsafe { named(objects, labels, nlabels) } {
            Some(named) => {
                let mut c = collector();
                let c = c.get_or_insert_with(|| Collector::new(pvar::global()));
                c.partial(r, n, named, &options)
            }
            None => Partial::missing(r, n, &options, "invalid labels"),
        };
        let mut link = CLink { send, recv, ctx };
        let job = match tree::reduce(r, n, 0, mine, &options, &mut link) {
            Ok(Some(job)) => job,
            Ok(None) => return PVAR_MPI_REPORT_OK,
            Err(e) => {
                eprintln!("pvar_mpi: rank {r}: the report lacks this rank: {e}");
                return PVAR_MPI_REPORT_EIO;
            }
        };
        let reduced = std::time::Instant::now();
        let report = JobReport::from_partial(job, options);
        let mut rc = PVAR_MPI_REPORT_OK;
        if let Some((count, first, why)) = &report.problems {
            eprintln!("pvar_mpi: the report lacks {count} rank(s); rank {first}: {why}");
            rc = PVAR_MPI_REPORT_EPAYLOAD;
        }
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
                rc = PVAR_MPI_REPORT_EIO;
            }
        }
        if !json_path.is_null() {
            // SAFETY: a non-NULL path is a NUL-terminated string.
            let path = unsafe { CStr::from_ptr(json_path) };
            if !path.is_empty() {
                let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
                if let Err(e) = report.write_json_file(path) {
                    eprintln!(
                        "pvar_mpi: writing the JSON report to {}: {e}",
                        path.display()
                    );
                    rc = PVAR_MPI_REPORT_EIO;
                }
            }
        }
        if let Some(cost) = cost {
            cost.say(n, reduced);
        }
        rc
    })
}

/// What a report costs rank 0 (`PVAR_MPI_REPORT_COST=1`).
struct Cost {
    started: std::time::Instant,
    rss_kib: Option<u64>,
}

impl Cost {
    fn start() -> Cost {
        // Resets VmHWM to the current resident set (Linux ≥ 4.0).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        Cost {
            started: std::time::Instant::now(),
            rss_kib: status_kib("VmRSS"),
        }
    }

    fn say(self, nranks: u32, reduced: std::time::Instant) {
        let now = std::time::Instant::now();
        let growth = match (status_kib("VmHWM"), self.rss_kib) {
            (Some(peak), Some(start)) => format!("{} KiB", peak.saturating_sub(start)),
            _ => "unknown".into(),
        };
        eprintln!(
            "pvar_mpi: report cost at rank 0: ranks={nranks} total_ms={:.3} reduce_ms={:.3} \
             write_ms={:.3} peak_growth={growth}",
            (now - self.started).as_secs_f64() * 1e3,
            (reduced - self.started).as_secs_f64() * 1e3,
            (now - reduced).as_secs_f64() * 1e3,
        );
    }
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The labels as Rust strings; `None` if an array or a label is NULL.
///
/// # Safety
///
/// As for [`pvar_mpi_report_reduce`]'s label arrays.
unsafe fn named(
    objects: *const u64,
    labels: *const *const c_char,
    nlabels: usize,
) -> Option<Vec<(u64, String)>> {
    if nlabels > 0 && (objects.is_null() || labels.is_null()) {
        return None;
    }
    let mut named = Vec::with_capacity(nlabels.min(1 << 16));
    for i in 0..nlabels {
        // SAFETY: `i < nlabels` and both arrays hold `nlabels` readable
        // elements (checked non-NULL above).
        let (object, label) = unsafe { (*objects.add(i), *labels.add(i)) };
        if label.is_null() {
            return None;
        }
        // SAFETY: a non-NULL label is a NUL-terminated string (the
        // caller's contract), alive for this call.
        let label = unsafe { CStr::from_ptr(label) };
        named.push((object, label.to_string_lossy().into_owned()));
    }
    Some(named)
}

/// The report options of the interposer: its per-collective arrays'
/// element names; profiles of the time in MPI (every `pvar_mpi_*` TIMER)
/// and in collectives.
pub fn options() -> ReportOptions {
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
        profile: vec![
            ProfileSeries {
                name: TIME_IN_MPI.into(),
                class: Some(pvar::PvarClass::Timer),
                prefix: "pvar_mpi_".into(),
            },
            ProfileSeries {
                name: TIME_IN_COLLECTIVES.into(),
                class: Some(pvar::PvarClass::Timer),
                prefix: "pvar_mpi_coll_time".into(),
            },
        ],
        ..ReportOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A job of `size` ranks in one process: mailboxes keyed by
    /// (from, to), ranks run from the highest down (children first).
    #[derive(Default)]
    struct Mailboxes {
        boxes: HashMap<(c_int, c_int), Vec<u8>>,
        me: c_int,
        fail_from: Option<c_int>,
    }

    unsafe extern "C" fn send(ctx: *mut c_void, to: c_int, buf: *const u8, len: usize) -> c_int {
        // SAFETY: `ctx` is the test's Mailboxes; `buf` holds `len` bytes.
        let (m, bytes) = unsafe {
            (
                &mut *ctx.cast::<Mailboxes>(),
                std::slice::from_raw_parts(buf, len),
            )
        };
        m.boxes.insert((m.me, to), bytes.to_vec());
        0
    }

    unsafe extern "C" fn recv(
        ctx: *mut c_void,
        from: c_int,
        buf: *mut *mut u8,
        len: *mut usize,
    ) -> c_int {
        // SAFETY: `ctx` is the test's Mailboxes; the out-pointers are valid.
        let m = unsafe { &mut *ctx.cast::<Mailboxes>() };
        let Some(bytes) = m.boxes.remove(&(from, m.me)) else {
            return 1;
        };
        if m.fail_from == Some(from) {
            return 1;
        }
        // SAFETY: malloc of a nonzero size; freed by the callee.
        let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
        // SAFETY: `p` holds at least `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *buf = p;
            *len = bytes.len();
        }
        0
    }

    fn job(
        size: c_int,
        fail_from: Option<c_int>,
        json: Option<&std::path::Path>,
        text_fd: c_int,
    ) -> c_int {
        let mut m = Mailboxes {
            fail_from,
            ..Mailboxes::default()
        };
        let json_c = json.map(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap());
        let mut root_rc = -1;
        for rank in (0..size).rev() {
            m.me = rank;
            let objects = [1u64];
            let labels = [c"MPI_COMM_WORLD".as_ptr()];
            // SAFETY: valid arrays, callbacks over `m`, a valid fd or -1,
            // a C string or NULL.
            let rc = unsafe {
                pvar_mpi_report_reduce(
                    rank,
                    size,
                    objects.as_ptr(),
                    labels.as_ptr(),
                    1,
                    Some(send),
                    Some(recv),
                    (&mut m as *mut Mailboxes).cast(),
                    if rank == 0 { text_fd } else { -1 },
                    if rank == 0 {
                        json_c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
                    } else {
                        std::ptr::null()
                    },
                )
            };
            if rank == 0 {
                root_rc = rc;
            } else {
                assert_eq!(rc, PVAR_MPI_REPORT_OK, "rank {rank}");
            }
        }
        assert!(m.boxes.is_empty(), "messages left: {:?}", m.boxes.keys());
        root_rc
    }

    #[test]
    fn a_job_in_one_process_reports_on_a_file_descriptor_and_in_json() {
        // SAFETY: no arguments.
        assert_eq!(unsafe { pvar_mpi_report_init() }, PVAR_MPI_REPORT_OK);
        pvar::counter!("report_glue_test_msgs").add(5);
        let dir = std::env::temp_dir().join(format!("pvar-mpi-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text_path = dir.join("report.txt");
        let json_path = dir.join("report.json");
        let text = std::fs::File::create(&text_path).unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(
            job(5, None, Some(&json_path), text.as_raw_fd()),
            PVAR_MPI_REPORT_OK
        );
        drop(text);
        let text = std::fs::read_to_string(&text_path).unwrap();
        assert!(text.contains("report_glue_test_msgs"), "{text}");
        assert!(text.contains("@ Ranks          : 5\n"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        assert_eq!(json["schema"], "pvar.report.v2");
        assert_eq!(json["ranks"]["reporting"], 5);
        let msgs = json["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "report_glue_test_msgs")
            .unwrap();
        // The same process five times: 5 each.
        assert_eq!(msgs["elements"][0]["total"], 25);
        assert_eq!(msgs["elements"][0]["ranks"], 5);

        // A child whose partial does not arrive: the report says so.
        assert_eq!(
            job(5, Some(4), Some(&json_path), -1),
            PVAR_MPI_REPORT_EPAYLOAD
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        assert_eq!(json["ranks"]["reporting"], 4);
        assert_eq!(json["problems"]["first_rank"], 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_arguments_are_refused() {
        // SAFETY: each call is refused before any pointer is used.
        unsafe {
            for (rank, size) in [(-1, 2), (2, 2), (0, 0)] {
                assert_eq!(
                    pvar_mpi_report_reduce(
                        rank,
                        size,
                        std::ptr::null(),
                        std::ptr::null(),
                        0,
                        Some(send),
                        Some(recv),
                        std::ptr::null_mut(),
                        -1,
                        std::ptr::null()
                    ),
                    PVAR_MPI_REPORT_EINVAL
                );
            }
            assert_eq!(
                pvar_mpi_report_reduce(
                    0,
                    1,
                    std::ptr::null(),
                    std::ptr::null(),
                    0,
                    None,
                    Some(recv),
                    std::ptr::null_mut(),
                    -1,
                    std::ptr::null()
                ),
                PVAR_MPI_REPORT_EINVAL
            );
        }
        // NULL label arrays with a count: the rank still takes part, as a
        // problem of the report.
        let mut m = Mailboxes::default();
        // SAFETY: NULL arrays with a nonzero count are detected before use.
        let rc = unsafe {
            pvar_mpi_report_reduce(
                0,
                1,
                std::ptr::null(),
                std::ptr::null(),
                3,
                Some(send),
                Some(recv),
                (&mut m as *mut Mailboxes).cast(),
                -1,
                std::ptr::null(),
            )
        };
        assert_eq!(rc, PVAR_MPI_REPORT_EPAYLOAD);
    }
}
