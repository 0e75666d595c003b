//! Event sources (MPI 4.1 §15.3.9): the clocks that timestamp events.
//!
//! Source 0, `pvar_monotonic`, is the engine's own: `CLOCK_MONOTONIC` in
//! nanoseconds, ordered, async-signal-safe (POSIX lists `clock_gettime`
//! among the async-signal-safe functions). A component may add sources
//! with its own timestamp function (a hardware counter, a network
//! adapter's clock); that function is called when an event of the source
//! is raised, so it must be as safe as the raise site (async-signal-safe
//! if events of the source are raised from signal handlers).

use std::collections::HashMap;

use crate::lockfree::append_vec::AppendVec;
use crate::sync::Mutex;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::event_info::SourceInfo;
use crate::vocabulary::kinds::SourceOrder;

/// A source's timestamp function: ticks since an arbitrary origin.
pub type TimestampFn = Box<dyn Fn() -> u64 + Send + Sync>;

/// One registered source.
pub(crate) struct Source {
    pub(crate) info: SourceInfo,
    /// `None`: no timestamps on demand (raises give theirs).
    now: Option<TimestampFn>,
}

impl Source {
    /// The current timestamp, if the source gives them on demand. As
    /// safe as the source's function; for source 0, async-signal-safe.
    #[inline]
    pub(crate) fn now(&self) -> Option<u64> {
        self.now.as_ref().map(|f| f())
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds. Async-signal-safe.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always
    // exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The sources of one registry. Lookup by index is lock-free; registration
/// takes a mutex.
pub(crate) struct Sources {
    list: AppendVec<Source>,
    by_name: Mutex<HashMap<String, usize>>,
}

impl Sources {
    /// The table with source 0, `pvar_monotonic`.
    pub(crate) fn new() -> Self {
        let s = Self {
            list: AppendVec::new(),
            by_name: Mutex::new(HashMap::new()),
        };
        s.register(
            SourceInfo {
                name: "pvar_monotonic".into(),
                description: "the engine's clock: CLOCK_MONOTONIC in nanoseconds".into(),
                ordering: SourceOrder::Ordered,
                ticks_per_second: 1_000_000_000,
                max_ticks: i64::MAX as u64,
            },
            Some(Box::new(monotonic_ns)),
        )
        .expect("the first source registers");
        s
    }

    /// Registers a source and returns its index. The same name again is
    /// refused (a timestamp function cannot be compared).
    pub(crate) fn register(&self, info: SourceInfo, now: Option<TimestampFn>) -> Result<usize> {
        if info.name.is_empty() || info.name.contains('\0') {
            return Err(Error::refused(format!(
                "source name {:?} must be non-empty and free of NUL",
                info.name
            )));
        }
        if info.ticks_per_second == 0 {
            return Err(Error::refused(format!(
                "source '{}': ticks per second must be positive",
                info.name
            )));
        }
        let mut names = self.by_name.lock();
        if let Some(&i) = names.get(&info.name) {
            return Err(Error::refused(format!(
                "source '{}' is already registered at index {i}",
                info.name
            )));
        }
        let name = info.name.clone();
        let index = self.list.push(Source { info, now });
        names.insert(name, index);
        Ok(index)
    }

    /// Number of sources (`MPI_T_source_get_num`). Lock-free.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Source `index`. Lock-free, async-signal-safe.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> Option<&Source> {
        self.list.get(index)
    }
}
