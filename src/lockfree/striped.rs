//! A striped event counter for async-signal-safe paths that many threads
//! take at once (the registry's "reads served": sampling tools read from
//! signal handlers on every thread).
//!
//! One shared `fetch_add` would make every reading thread take the same
//! cache line exclusively. Here each increment goes to one of [`STRIPES`]
//! counters, each on its own 128-byte line, chosen from the address of a
//! local variable: threads run on distinct stacks (and a signal handler
//! on the interrupted thread's stack or its own alternate stack), so
//! concurrent threads mostly land on different lines. No thread-local is
//! read — a `dlopen`ed library's TLS may be allocated on first touch,
//! which a signal handler must never trigger — and no system call is made.
//! A collision costs only contention: every stripe is an atomic counter,
//! so the total stays exact, also when a signal handler interrupts an
//! increment on the same thread.

use crate::sync::{AtomicU64, Ordering};

/// Number of stripes (a power of two).
#[cfg(not(loom))]
pub(crate) const STRIPES: usize = 16;
/// Under loom, two: a registry holds several striped counters, built on
/// the model thread's small stack.
#[cfg(loom)]
pub(crate) const STRIPES: usize = 2;

#[repr(align(128))]
struct Stripe(AtomicU64);

/// An exact event counter whose increments spread over [`STRIPES`] cache
/// lines by the caller's stack address.
pub(crate) struct StripedCounter {
    stripes: [Stripe; STRIPES],
}

impl Default for StripedCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl StripedCounter {
    pub(crate) fn new() -> Self {
        Self {
            stripes: std::array::from_fn(|_| Stripe(AtomicU64::new(0))),
        }
    }

    /// Adds one. Lock-free, allocation-free, no thread-local: async-signal-safe.
    #[inline]
    pub(crate) fn inc(&self) {
        self.stripes[stripe_of_stack()]
            .0
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The total (a relaxed snapshot of every stripe).
    pub(crate) fn total(&self) -> u64 {
        self.stripes
            .iter()
            .fold(0u64, |t, s| t.wrapping_add(s.0.load(Ordering::Relaxed)))
    }
}

/// The stripe for the calling thread: its stack address in 64 KiB units
/// (smaller than any thread stack, larger than any one call chain's spread
/// between two reads), mixed by a Fibonacci multiply so that stacks a
/// power of two apart do not all map to one stripe.
#[inline]
fn stripe_of_stack() -> usize {
    let marker = 0u8;
    let addr = std::hint::black_box(&marker) as *const u8 as usize as u64;
    let mixed = (addr >> 16).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - STRIPES.trailing_zeros())) as usize
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn total_is_exact_across_threads() {
        let c = StripedCounter::new();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..50_000 {
                        c.inc();
                    }
                });
            }
        });
        assert_eq!(c.total(), 400_000);
    }

    // Miri does not lay thread stacks out as the OS does (they are small
    // neighbouring allocations), so there the stripes may coincide: only
    // contention, not correctness, depends on this.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn threads_spread_over_stripes() {
        // Stacks of concurrently live threads are distinct allocations of
        // at least 64 KiB, so at least two of eight threads differ.
        let c = StripedCounter::new();
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    barrier.wait(); // all eight stacks live at once
                    c.inc();
                });
            }
        });
        let used = c
            .stripes
            .iter()
            .filter(|s| s.0.load(Ordering::Relaxed) > 0)
            .count();
        assert!(used >= 2, "eight threads used {used} stripe(s)");
        assert_eq!(c.total(), 8);
    }
}
