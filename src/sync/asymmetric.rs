//! An asymmetric fence: a free [`light`] barrier on the hot side (a
//! component's update) paired with an expensive [`heavy`] barrier on the
//! cold side (a tool's start, reset or write).
//!
//! The pattern it serves is the store-then-load handshake (Dekker's): the
//! updater stores a level and then loads the tool's state; the tool stores
//! its state and then loads the level. With a `SeqCst` fence on both sides,
//! at least one of them sees the other's store. Here only the tool pays:
//! `heavy` is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes
//! every other running thread of the process execute a full memory barrier
//! before it returns (Linux ≥ 4.14), and `light` is only a compiler fence
//! that keeps the updater's store before its load in the instruction
//! stream. Wherever the kernel's barrier lands in the updater's stream, the
//! updater's loads after it see the tool's stores before the call, or the
//! updater's store before it is visible to the tool's loads after the call.
//!
//! Where `membarrier` is missing or refused (an old kernel, a seccomp
//! filter), [`register`] records it and both sides fall back to `SeqCst`
//! fences: still correct, the updater then pays its fence again.
//!
//! Under loom both are `SeqCst` fences: the model checks the protocol with
//! the kernel's barrier placed between the updater's store and its load,
//! the one placement that gives the updater the least.
//!
//! Both are async-signal-safe: `membarrier` is a plain system call, and the
//! fallback flag is a `static` set once at registry creation.

#[cfg(not(loom))]
use super::compiler_fence;
#[cfg(not(loom))]
use super::unmodelled::AtomicBool;
use super::{Ordering, fence};

/// Whether `membarrier` is registered for this process: set once by
/// [`register`] (registry creation), before any watermark exists.
#[cfg(not(loom))]
static EXPEDITED: AtomicBool = AtomicBool::new(false);

#[cfg(all(not(loom), target_os = "linux"))]
mod membarrier {
    // The command values of Linux's `include/uapi/linux/membarrier.h`.
    const CMD_QUERY: libc::c_long = 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: `membarrier(cmd, flags = 0, cpu_id = 0)` reads and writes
        // no memory of ours; an unknown command returns -1 (EINVAL), and a
        // kernel or filter without the call returns -1 (ENOSYS / EPERM).
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Registers the process for private expedited barriers; false if the
    /// kernel does not offer them.
    pub(super) fn register() -> bool {
        let offered = call(CMD_QUERY);
        offered >= 0
            && offered & CMD_PRIVATE_EXPEDITED != 0
            && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
    }

    /// Every running thread of the process executes a full barrier. Once
    /// registered the call fails only if the kernel cannot allocate its
    /// CPU mask (ENOMEM): retried, and if it never succeeds the process
    /// aborts, because updaters that rely on it would be unprotected.
    pub(super) fn expedited() {
        for _ in 0..1000 {
            if call(CMD_PRIVATE_EXPEDITED) == 0 {
                return;
            }
            std::hint::spin_loop();
        }
        std::process::abort();
    }
}

/// Registers the process for the heavy barrier (idempotent). Called at
/// registry creation, before any watermark storage exists; updaters and
/// tools then read the answer.
pub(crate) fn register() {
    #[cfg(all(not(loom), target_os = "linux"))]
    if !EXPEDITED.load(Ordering::Relaxed) && membarrier::register() {
        EXPEDITED.store(true, Ordering::Relaxed);
    }
}

/// Whether the heavy barrier is the kernel's, so that [`light`] is only a
/// compiler fence (a caller may then inline that fact: see
/// `lockfree::walk_gate`).
#[cfg(not(loom))]
pub(crate) fn registered() -> bool {
    EXPEDITED.load(Ordering::Relaxed)
}

/// The hot side: between a store and a later load that the heavy side
/// must not both miss. A compiler fence when the kernel barrier is
/// registered, else a `SeqCst` fence. Async-signal-safe.
#[inline(always)]
pub(crate) fn light() {
    #[cfg(not(loom))]
    if EXPEDITED.load(Ordering::Relaxed) {
        compiler_fence(Ordering::SeqCst);
        return;
    }
    fence(Ordering::SeqCst);
}

/// The cold side: after this returns, every thread's stores before its
/// [`light`] point are visible to the caller's later loads, or that
/// thread's loads after the point see the caller's stores before this
/// call. Async-signal-safe (a system call).
pub(crate) fn heavy() {
    fence(Ordering::SeqCst);
    #[cfg(all(not(loom), target_os = "linux"))]
    if EXPEDITED.load(Ordering::Relaxed) {
        membarrier::expedited();
    }
}
