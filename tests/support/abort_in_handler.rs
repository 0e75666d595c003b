//! The allocator the signal-handler tests install: it aborts the process
//! (with a message naming the test) if it is entered while a signal
//! handler runs on the calling thread — the proof that what a handler
//! calls allocates and frees nothing.
//!
//! A test includes it with `#[path = "support/abort_in_handler.rs"] mod
//! abort_in_handler;`, installs it with `abort_in_handler::install!("name");`
//! and brackets its handler with `IN_HANDLER.set(true)` / `set(false)`.

use std::cell::Cell;

thread_local! {
    /// Set while a signal handler runs on this thread. `const`, no
    /// destructor: a plain TLS load, nothing lazy, usable from the allocator
    /// and from the handler.
    pub static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
}

/// Writes `msg` to stderr and aborts. Async-signal-safe.
pub fn die(msg: &str) -> ! {
    // SAFETY: write(2) and abort(3) are async-signal-safe; `msg` is valid.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::abort();
    }
}

/// Aborts with "`test`: FATAL: the allocator was entered inside a signal
/// handler" if a handler runs on this thread. Allocates nothing.
#[inline]
pub fn check_not_in_handler(fatal: &str) {
    if IN_HANDLER.try_with(|c| c.get()).unwrap_or(false) {
        die(fatal);
    }
}

/// Defines and installs the global allocator for the test named `$name`.
macro_rules! install {
    ($name:literal) => {
        struct AbortInHandler;

        const FATAL: &str = concat!(
            "\n",
            $name,
            ": FATAL: the allocator was entered inside a signal handler\n"
        );

        // SAFETY: forwards to `System` unchanged, after a check that
        // allocates nothing.
        unsafe impl std::alloc::GlobalAlloc for AbortInHandler {
            unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
                abort_in_handler::check_not_in_handler(FATAL);
                // SAFETY: the caller's contract, forwarded.
                unsafe { std::alloc::System.alloc(layout) }
            }
            unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
                abort_in_handler::check_not_in_handler(FATAL);
                // SAFETY: the caller's contract, forwarded.
                unsafe { std::alloc::System.alloc_zeroed(layout) }
            }
            unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
                abort_in_handler::check_not_in_handler(FATAL);
                // SAFETY: the caller's contract, forwarded.
                unsafe { std::alloc::System.dealloc(ptr, layout) }
            }
            unsafe fn realloc(
                &self,
                ptr: *mut u8,
                layout: std::alloc::Layout,
                new_size: usize,
            ) -> *mut u8 {
                abort_in_handler::check_not_in_handler(FATAL);
                // SAFETY: the caller's contract, forwarded.
                unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
            }
        }

        #[global_allocator]
        static ALLOC: AbortInHandler = AbortInHandler;
    };
}
pub(crate) use install;
