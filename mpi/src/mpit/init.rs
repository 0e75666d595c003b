//! `MPI_T_init_thread` and `MPI_T_finalize`: both sides, counted.

use core::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use pvar::ffi::mpi_t as ours;

use crate::library::LibraryAbi;

use super::{Ctx, LIB_INITS, MERGED_INIT, R, code, guard, library, need, session};

/// Serialises init and finalize (the counts, the library's calls and the
/// clean-up of the last finalize).
static SERIAL: Mutex<()> = Mutex::new(());

/// Whether the "not available" note was printed.
static NOTED: AtomicBool = AtomicBool::new(false);

/// Prints, once per process, that the library's MPI_T is not served.
fn note(why: &str) {
    if !NOTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "pvar: the MPI library's MPI_T is not available ({why}): \
             MPI_T shows pvar's variables only"
        );
    }
}

/// Says once, on stderr, how many events of the library's the merged
/// MPI_T does not serve (nothing if it has none, as MPICH 4.0 and Open
/// MPI 4.1).
fn note_hidden_events(abi: &LibraryAbi) {
    static DONE: AtomicBool = AtomicBool::new(false);
    let Some(f) = abi.event_get_num else {
        return;
    };
    let mut n: c_int = 0;
    // SAFETY: the library's PMPI_T_event_get_num, initialised, with a
    // valid OUT pointer.
    let rc = unsafe { f(&mut n) };
    if rc == abi.success && n > 0 && !DONE.swap(true, Ordering::Relaxed) {
        eprintln!(
            "pvar: the MPI library's {n} MPI_T event types are not forwarded: \
             MPI_T_event_* serve pvar's events only"
        );
    }
}

/// `MPI_T_init_thread`: initialises the library's MPI_T and pvar's;
/// `*provided` is the lower of the two levels (pvar provides the level
/// required, so in practice the library's). If the library's
/// MPI_T is unavailable or its initialisation fails, pvar's alone is
/// served (a note on stderr, once). Counted: every call needs an
/// `MPI_T_finalize`.
///
/// # Safety
/// `provided` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    guard(|| {
        let l = library();
        let c = Ctx {
            abi: l.abi,
            lib: None,
        };
        need(&c, provided)?;
        let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let mut ours_level: c_int = 0;
        // SAFETY: pvar's init with a valid OUT pointer.
        c.ours(unsafe {
            ours::PMPI_T_init_thread(l.abi.thread_to_ours(required), &mut ours_level)
        })?;
        let mut level = l.abi.thread(ours_level);
        match (&l.unavailable, l.abi.init_thread) {
            (None, Some(init)) => {
                let mut theirs: c_int = 0;
                // SAFETY: the library's PMPI_T_init_thread with a valid OUT
                // pointer.
                let rc = unsafe { init(required, &mut theirs) };
                if rc == l.abi.success {
                    LIB_INITS.fetch_add(1, Ordering::AcqRel);
                    level = level.min(theirs);
                    note_hidden_events(l.abi);
                } else {
                    note(&format!("its MPI_T_init_thread returned {rc}"));
                }
            }
            (Some(why), _) => note(why),
            (None, None) => note("no PMPI_T_init_thread"),
        }
        MERGED_INIT.fetch_add(1, Ordering::AcqRel);
        // SAFETY: checked non-NULL above; valid by the caller's contract.
        unsafe { provided.write_unaligned(level) };
        Ok(())
    })
}

/// `MPI_T_finalize`: finalizes both sides once. The last one also frees
/// every merged session still open (each side frees its own sessions and
/// handles). `MPI_T_ERR_NOT_INITIALIZED` when called more often than
/// `MPI_T_init_thread`.
#[unsafe(no_mangle)]
pub extern "C" fn MPI_T_finalize() -> c_int {
    guard(|| -> R {
        let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let c = Ctx::now();
        if MERGED_INIT.load(Ordering::Acquire) == 0 {
            return Err(c.e(code::NOT_INITIALIZED));
        }
        let mut result = Ok(());
        if let Some(lib) = c.lib {
            LIB_INITS.fetch_sub(1, Ordering::AcqRel);
            result = c.call(lib.finalize, |f| {
                // SAFETY: the library's PMPI_T_finalize, once per successful
                // init.
                unsafe { f() }
            });
        }
        // SAFETY: pvar's finalize, once per successful init.
        let mine = c.ours(unsafe { ours::PMPI_T_finalize() });
        if MERGED_INIT.fetch_sub(1, Ordering::AcqRel) == 1 {
            session::clear();
            super::events::forget_registrations();
        }
        result.and(mine)
    })
}
