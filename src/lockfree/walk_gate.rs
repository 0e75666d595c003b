//! A walk gate: the threshold an update's key must pass before the update
//! walks the subscriptions of a watermark element, kept a lower bound of
//! every started mark while tools lower marks concurrently.
//!
//! An update of a watermark only needs to touch a subscription's mark
//! when its value passes that mark. The gate holds a key (see
//! `Repr::order_key`: a larger key is further in the watermark's
//! direction) no larger than the key of any started mark of the element,
//! so an update whose key does not exceed it passes no mark and skips the
//! walk: in steady state (the marks already cover the levels) an update
//! with 1 or 16 started handles loads one word and walks nothing.
//!
//! Marks only move away from the threshold on their own (pushes), so the
//! threshold stays a lower bound — except when a tool lowers a mark: a
//! start (a mark begins at the level), a reset, a write. Such a tool
//! [`open`](WalkGate::open)s the gate first: the threshold drops to 0 (every
//! update walks) and an in-flight count goes up. When the last tool in
//! flight [`leave`](WalkGate::leave)s, the threshold is recomputed from the
//! marks and [`settle`](WalkGate::settle)d — by a compare-and-swap against
//! the state it left, so if another tool opened the gate in the meantime
//! (the generation moved) the stale threshold is discarded and that tool's
//! own leave recomputes. The marks also rise under the threshold as
//! updates push them: an update that walked settles the threshold up to
//! the lowest mark it left behind, from the state it loaded before the
//! walk, by the same rule, so walks stay rare (a walk happens only when a
//! value passes the lowest started mark). One 128-bit word, `(threshold, generation << 32 |
//! in_flight)`, changed only by compare-and-swap; lock-free and
//! async-signal-safe (a handler that opens the gate while its thread had it
//! open just raises the count to 2). The generation wraps after 2³²
//! openings: a settle is wrongly accepted only if exactly that many
//! openings fall between its load and its compare-and-swap.

use super::tagged::load_acquire;
use crate::sync::asymmetric;
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
use crate::sync::unmodelled::AtomicBool;
use crate::sync::{AtomicU128, Ordering};

/// Whether an update's [`WalkGate::threshold_after_store`] may be one
/// `MOVDQA` and nothing else: the kernel barrier is registered (the light
/// side is a compiler fence) and 16-byte vector loads are atomic. Set by
/// [`detect_fast_path`] at registry creation, before any gate exists.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
static FAST_PATH: AtomicBool = AtomicBool::new(false);

/// Sets the update's fast path (called at registry creation, after the
/// vector-load check and the barrier registration).
pub(crate) fn detect_fast_path() {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    if super::tagged::fast_loads() && asymmetric::registered() {
        FAST_PATH.store(true, Ordering::Relaxed);
    }
}

/// The threshold that makes every update walk.
pub(crate) const WALK_ALL: u64 = 0;
/// The threshold that makes no update walk (no started mark).
pub(crate) const WALK_NONE: u64 = u64::MAX;

const IN_FLIGHT: u64 = 1;
const GENERATION: u64 = 1 << 32;

/// The gate's state: its threshold and its control word (generation and
/// tools in flight), as loaded before a recomputation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GateState {
    /// Updates whose key does not exceed it skip the walk.
    pub(crate) threshold: u64,
    control: u64,
}

impl GateState {
    /// Whether no tool is in flight (a threshold may be settled from it).
    #[inline]
    pub(crate) fn is_quiet(self) -> bool {
        self.control & (GENERATION - 1) == 0
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct WalkGate(AtomicU128);

#[inline(always)]
fn pack(threshold: u64, control: u64) -> u128 {
    threshold as u128 | (control as u128) << 64
}

#[inline(always)]
fn unpack(w: u128) -> (u64, u64) {
    (w as u64, (w >> 64) as u64)
}

impl WalkGate {
    /// A gate with no tool in flight and no started mark.
    pub(crate) fn new() -> Self {
        Self(AtomicU128::new(pack(WALK_NONE, 0)))
    }

    /// The threshold, for an update that has just stored its level: the
    /// light side of the asymmetric fence, then the load. Where the kernel
    /// barrier is registered and vector loads are atomic, one flag test
    /// and one `MOVDQA` (whose `asm!` block is the compiler fence).
    /// Async-signal-safe.
    #[inline(always)]
    pub(crate) fn threshold_after_store(&self) -> u64 {
        #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
        if FAST_PATH.load(Ordering::Relaxed) {
            // SAFETY: FAST_PATH is set only when `fast_loads()` held.
            return unsafe { super::tagged::load_vector(&self.0) } as u64;
        }
        asymmetric::light();
        self.load().threshold
    }

    /// The gate as it is (one load). Async-signal-safe.
    #[inline(always)]
    pub(crate) fn load(&self) -> GateState {
        let (threshold, control) = unpack(load_acquire(&self.0));
        GateState { threshold, control }
    }

    /// A compare-and-swap loop applying `f` to `(threshold, control)`.
    fn change(&self, mut f: impl FnMut(u64, u64) -> (u64, u64)) -> (u64, u64) {
        let mut cur = load_acquire(&self.0);
        loop {
            let (t, c) = unpack(cur);
            let (nt, nc) = f(t, c);
            match self
                .0
                .compare_exchange(cur, pack(nt, nc), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return (nt, nc),
                Err(now) => cur = now,
            }
        }
    }

    /// A tool is about to lower a mark: every update walks until the last
    /// tool in flight has left and the threshold is settled again.
    pub(crate) fn open(&self) {
        self.change(|_, c| (WALK_ALL, c.wrapping_add(GENERATION) + IN_FLIGHT));
    }

    /// The tool is done with its marks. Returns the state to settle from
    /// if no other tool is in flight.
    pub(crate) fn leave(&self) -> Option<GateState> {
        let (threshold, control) = self.change(|t, c| (t, c - IN_FLIGHT));
        Some(GateState { threshold, control }).filter(|q| q.is_quiet())
    }

    /// The state to settle from, if no tool is in flight (after a change
    /// that only raised marks, such as a stop).
    pub(crate) fn quiet(&self) -> Option<GateState> {
        Some(self.load()).filter(|q| q.is_quiet())
    }

    /// Stores `threshold`, computed from the marks after `from` was
    /// loaded, unless the gate changed since. Returns false if it did (the
    /// caller may recompute from a fresh [`quiet`](Self::quiet)).
    pub(crate) fn settle(&self, from: GateState, threshold: u64) -> bool {
        from.threshold == threshold
            || self
                .0
                .compare_exchange(
                    pack(from.threshold, from.control),
                    pack(threshold, from.control),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn settles_only_when_no_tool_is_in_flight() {
        let g = WalkGate::new();
        assert_eq!(g.load().threshold, WALK_NONE);
        g.open();
        g.open();
        assert_eq!(g.load().threshold, WALK_ALL);
        assert!(g.leave().is_none(), "one tool still in flight");
        let quiet = g.leave().expect("the last one out settles");
        assert!(g.settle(quiet, 40));
        assert_eq!(g.load().threshold, 40);
    }

    #[test]
    fn a_settle_from_before_an_opening_is_refused() {
        let g = WalkGate::new();
        g.open();
        let stale = g.leave().unwrap();
        // Another tool opens and leaves before the first settles.
        g.open();
        let fresh = g.leave().unwrap();
        assert!(!g.settle(stale, 99), "stale threshold must not land");
        assert_eq!(g.load().threshold, WALK_ALL);
        assert!(g.settle(fresh, 7));
        assert_eq!(g.load().threshold, 7);
        // And while a tool is in flight there is nothing to settle from.
        g.open();
        assert!(g.quiet().is_none());
        assert!(!g.settle(fresh, 99));
        assert_eq!(g.load().threshold, WALK_ALL);
    }
}
