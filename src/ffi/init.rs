//! `MPI_T_init_thread`, `MPI_T_finalize`, `pvar_error_string`, and the
//! bookkeeping that lets the last finalize free what C tools left open.

use core::ffi::{c_char, c_int};
use std::collections::HashSet;

use super::boundary::{CResult, OrCode, guarded, mpi_t_fn, registry};
use crate::cvar::CvarHandle;
use crate::sync::Mutex;
use crate::tool::SessionId;
use crate::vocabulary::error::ErrorCode;

/// Sessions and cvar handles allocated through the C interface and not
/// freed yet. Allocation and free are not async-signal-safe anyway, so a
/// mutex is fine here; nothing on the signal-safe paths touches these.
struct Open {
    sessions: HashSet<u64>,
    cvar_handles: HashSet<u64>,
    event_registrations: HashSet<u64>,
}

static OPEN: Mutex<Option<Open>> = Mutex::new(None);

fn with_open<R>(f: impl FnOnce(&mut Open) -> R) -> R {
    let mut g = OPEN.lock();
    let open = g.get_or_insert_with(|| Open {
        sessions: HashSet::new(),
        cvar_handles: HashSet::new(),
        event_registrations: HashSet::new(),
    });
    f(open)
}

pub(crate) fn track_session(raw: u64, live: bool) {
    with_open(|o| {
        if live {
            o.sessions.insert(raw);
        } else {
            o.sessions.remove(&raw);
        }
    });
}

pub(crate) fn track_cvar_handle(raw: u64, live: bool) {
    with_open(|o| {
        if live {
            o.cvar_handles.insert(raw);
        } else {
            o.cvar_handles.remove(&raw);
        }
    });
}

pub(crate) fn track_event_registration(key: u64, live: bool) {
    with_open(|o| {
        if live {
            o.event_registrations.insert(key);
        } else {
            o.event_registrations.remove(&key);
        }
    });
}

/// Frees every session (with its handles), cvar handle and event
/// registration (without a free callback) still open:
/// after the last finalize, handles from before are invalid, also after a
/// later re-initialisation.
fn release_all() {
    let (sessions, cvars, events) = with_open(|o| {
        (
            std::mem::take(&mut o.sessions),
            std::mem::take(&mut o.cvar_handles),
            std::mem::take(&mut o.event_registrations),
        )
    });
    let reg = registry();
    for s in sessions {
        let _ = reg.tool().session_free(SessionId::from_raw(s));
    }
    for h in cvars.into_iter().filter_map(CvarHandle::from_raw) {
        let _ = reg.cvars().handle_free(h);
    }
    for k in events {
        let _ = reg.events().release(k);
    }
}

mpi_t_fn! {
    /// `MPI_T_init_thread`: counted; provides the level required. A
    /// `required` that is not one of the four thread levels is
    /// `MPI_ERR_ARG` (MPICH's code), and `provided` must not be NULL
    /// (`MPI_T_ERR_INVALID`); either way the interface is not initialised
    /// and `*provided` is not written.
    fn PMPI_T_init_thread / MPI_T_init_thread(required: c_int, provided: *mut c_int) {
        guarded(|| {
            super::boundary::require(provided)?;
            let _serial = FINALIZE.lock();
            let level = crate::process::init_count_increment(required).c()?;
            // SAFETY: `provided` checked non-NULL and aligned above; valid
            // for writes by the caller's contract.
            unsafe { *provided = level };
            Ok(())
        })
    }
}

mpi_t_fn! {
    /// `MPI_T_finalize`: the last one frees every session, pvar handle and
    /// cvar handle still open. `MPI_T_ERR_NOT_INITIALIZED` when called more
    /// often than init.
    fn PMPI_T_finalize / MPI_T_finalize() {
        guarded(|| -> CResult {
            // Serialise with other init/finalize bookkeeping: the count
            // reaching zero and the release happen under the same lock as
            // tracking, so a concurrent init cannot lose its sessions.
            let _serial = FINALIZE.lock();
            crate::process::init_count_decrement().c()?;
            if crate::process::init_count() == 0 {
                release_all();
            }
            Ok(())
        })
    }
}

static FINALIZE: Mutex<()> = Mutex::new(());

macro_rules! error_strings {
    ($($code:ident => $text:literal),* $(,)?) => {
        /// A readable, static, NUL-terminated string for every MPI_T return
        /// code: `"MPI_T_ERR_INVALID_HANDLE: the handle is invalid"`.
        /// Unknown codes give `"unknown error code"`. Never NULL; usable at
        /// any time (also before init); async-signal-safe.
        #[unsafe(no_mangle)]
        pub extern "C" fn pvar_error_string(code: c_int) -> *const c_char {
            let s: &'static core::ffi::CStr = match ErrorCode::from_raw(code) {
                $( Some(ErrorCode::$code) => $text, )*
                None if code == 0 => c"MPI_SUCCESS: call completed successfully",
                None => c"unknown error code",
            };
            s.as_ptr()
        }

        #[cfg(test)]
        #[test]
        fn error_strings_match_the_rust_descriptions() {
            for c in ErrorCode::ALL {
                // SAFETY: the function returns a static NUL-terminated string.
                let s = unsafe { core::ffi::CStr::from_ptr(pvar_error_string(c.raw())) };
                assert_eq!(s.to_str().unwrap(), format!("{}: {}", c.name(), c.description()));
            }
        }
    };
}

error_strings! {
    CannotInit => c"MPI_T_ERR_CANNOT_INIT: interface not in the state to be initialized",
    NotAccessible => c"MPI_T_ERR_NOT_ACCESSIBLE: requested functionality is not accessible",
    NotInitialized => c"MPI_T_ERR_NOT_INITIALIZED: interface not initialized",
    NotSupported => c"MPI_T_ERR_NOT_SUPPORTED: requested functionality is not supported",
    Memory => c"MPI_T_ERR_MEMORY: out of memory",
    Invalid => c"MPI_T_ERR_INVALID: invalid use of the interface or bad parameter value",
    InvalidIndex => c"MPI_T_ERR_INVALID_INDEX: the index is invalid or the variable is no longer active",
    InvalidItem => c"MPI_T_ERR_INVALID_ITEM: the item index queried is out of range",
    InvalidSession => c"MPI_T_ERR_INVALID_SESSION: session argument is not a valid session",
    InvalidHandle => c"MPI_T_ERR_INVALID_HANDLE: the handle is invalid",
    InvalidName => c"MPI_T_ERR_INVALID_NAME: the variable or category name is invalid",
    OutOfHandles => c"MPI_T_ERR_OUT_OF_HANDLES: no more handles available",
    OutOfSessions => c"MPI_T_ERR_OUT_OF_SESSIONS: no more sessions available",
    CvarSetNotNow => c"MPI_T_ERR_CVAR_SET_NOT_NOW: variable cannot be set at this moment",
    CvarSetNever => c"MPI_T_ERR_CVAR_SET_NEVER: variable cannot be set until end of execution",
    PvarNoWrite => c"MPI_T_ERR_PVAR_NO_WRITE: variable cannot be written or reset",
    PvarNoStartstop => c"MPI_T_ERR_PVAR_NO_STARTSTOP: variable cannot be started or stopped",
    PvarNoAtomic => c"MPI_T_ERR_PVAR_NO_ATOMIC: variable cannot be read and written atomically",
    Arg => c"MPI_ERR_ARG: invalid argument of some other kind",
}
