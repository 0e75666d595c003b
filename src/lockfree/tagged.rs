//! A 128-bit atomic word holding a value and a run tag, changed together
//! by compare-and-swap: the per-element state of a tool handle.
//!
//! The tag is `epoch << 1 | started`. A handle's start and stop each open
//! a new epoch (see `tool::handle`); an element word moves to a new epoch
//! only forward, so when two transitions of one handle race (two threads,
//! or a signal handler interrupting a transition on its own thread), every
//! element ends in the state of the latest one, whatever order their
//! per-element steps ran in. Operations that keep the state (read, reset,
//! write) change the value and keep the tag.
//!
//! Because value and tag are one word, a writer that loaded the word while
//! the element was started cannot store into it once it has been stopped
//! (its compare-and-swap fails): this is what freezes a stopped watermark
//! exactly at its stop, while updaters that saw it started are still in
//! flight. Lock-free and async-signal-safe where 128-bit atomics are (see
//! [`check_lock_free`](crate::sync::check_lock_free)).
//!
//! **Loads on x86-64.** A watermark update loads the mark words of the
//! started handles, so the load is on a component's hot path. Through
//! `portable-atomic` it costs an indirect call (the implementation is
//! chosen at run time): 1.5 ns against 0.27 ns for a 64-bit load on the
//! CI machine. Intel and AMD guarantee that a 16-byte aligned `MOVDQA` is
//! atomic on every CPU that supports AVX (Intel SDM vol. 3A §9.1.1, AMD APM
//! vol. 1 §3.9.1.3) — `portable-atomic` relies on the same guarantee — so
//! when [`detect_fast_loads`] found AVX and `CMPXCHG16B` (at registry
//! creation, before any word exists), [`TaggedWord::load`] is that one
//! instruction, inline. Compare-and-swap stays `portable-atomic`'s
//! `CMPXCHG16B`, with which it is atomic.

#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
use crate::sync::unmodelled;
use crate::sync::{AtomicU128, Ordering};

/// Whether 16-byte `MOVDQA` loads are atomic on this CPU (see the module
/// documentation). A plain `std` atomic: set once, read on every load,
/// never modelled.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
static FAST_LOADS: unmodelled::AtomicBool = unmodelled::AtomicBool::new(false);

/// Checks once whether [`TaggedWord::load`] may use a single `MOVDQA`.
/// Called where allocating and lazy initialisation are allowed (registry
/// creation): `is_x86_feature_detected!` caches its answer lazily.
pub(crate) fn detect_fast_loads() {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    if std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("cmpxchg16b")
    {
        FAST_LOADS.store(true, Ordering::Relaxed);
    }
}

/// Whether [`detect_fast_loads`] found 16-byte `MOVDQA` loads atomic.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
#[inline(always)]
pub(crate) fn fast_loads() -> bool {
    FAST_LOADS.load(Ordering::Relaxed)
}

/// The 128-bit load as one `MOVDQA`. The `asm!` block is also a compiler
/// barrier: no access of the caller's moves across it in either direction.
///
/// # Safety
///
/// [`fast_loads`] must have returned true (the CPU has AVX).
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
#[inline(always)]
pub(crate) unsafe fn load_vector(word: &AtomicU128) -> u128 {
    let out: core::arch::x86_64::__m128i;
    // SAFETY: `as_ptr` points to the word's 16 bytes, 16-byte aligned
    // (`AtomicU128` is `align(16)`), valid for the borrow. The caller
    // guarantees AVX, on which a 16-byte aligned MOVDQA is a single atomic
    // access (module documentation), so this races with nothing:
    // concurrent writers use `lock cmpxchg16b`. No `nomem`/`readonly`
    // option: the block is a compiler barrier, so no later access moves
    // above it (acquire; the CPU orders loads) and no earlier store moves
    // below it. MOVDQA is SSE2, in the x86-64 baseline.
    unsafe {
        core::arch::asm!(
            "movdqa {out}, xmmword ptr [{src}]",
            src = in(reg) word.as_ptr(),
            out = out(xmm_reg) out,
            options(nostack, preserves_flags),
        );
        core::mem::transmute::<core::arch::x86_64::__m128i, u128>(out)
    }
}

/// The 128-bit load: one `MOVDQA` where that is atomic, else
/// `portable-atomic`'s. Acquire (x86 loads are). Also the walk gate's
/// tool-side load (`lockfree::walk_gate`).
#[inline(always)]
pub(crate) fn load_acquire(word: &AtomicU128) -> u128 {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    if fast_loads() {
        // SAFETY: `fast_loads` said the CPU has AVX.
        return unsafe { load_vector(word) };
    }
    word.load(Ordering::Acquire)
}

/// A run tag: the epoch of the last transition and whether it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunTag(u64);

impl RunTag {
    /// Epoch 0, stopped: every handle's state at allocation.
    pub(crate) const INITIAL: RunTag = RunTag(0);

    /// The tag with this raw value (as stored in a handle's run word).
    #[inline]
    pub(crate) const fn from_raw(raw: u64) -> RunTag {
        RunTag(raw)
    }

    /// The raw value.
    #[inline]
    pub(crate) const fn raw(self) -> u64 {
        self.0
    }

    /// Whether the element (or handle) is started.
    #[inline]
    pub(crate) const fn started(self) -> bool {
        self.0 & 1 != 0
    }

    /// The epoch: how many transitions the handle has made.
    #[inline]
    pub(crate) const fn epoch(self) -> u64 {
        self.0 >> 1
    }

    /// The tag of the next transition, to `started` or stopped.
    #[inline]
    pub(crate) const fn next(self, started: bool) -> RunTag {
        RunTag(((self.epoch() + 1) << 1) | started as u64)
    }
}

/// A value with its run tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tagged {
    pub(crate) value: u64,
    pub(crate) tag: RunTag,
}

impl Tagged {
    #[inline]
    fn pack(self) -> u128 {
        self.value as u128 | (self.tag.0 as u128) << 64
    }

    #[inline]
    fn unpack(w: u128) -> Tagged {
        Tagged {
            value: w as u64,
            tag: RunTag((w >> 64) as u64),
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct TaggedWord(AtomicU128);

impl TaggedWord {
    pub(crate) fn new(value: u64, tag: RunTag) -> Self {
        Self(AtomicU128::new(Tagged { value, tag }.pack()))
    }

    /// The current value and tag (Acquire).
    #[inline]
    pub(crate) fn load(&self) -> Tagged {
        Tagged::unpack(load_acquire(&self.0))
    }

    /// Replaces `current` by `new` if the word still holds `current`;
    /// otherwise returns what it holds.
    #[inline]
    pub(crate) fn compare_exchange(&self, current: Tagged, new: Tagged) -> Result<(), Tagged> {
        self.0
            .compare_exchange(
                current.pack(),
                new.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(Tagged::unpack)
    }

    /// A compare-and-swap loop: `f` sees the current word and returns the
    /// word to store and a result, or `None` to leave the word as it is
    /// (then `None` is returned). Lock-free: a failed CAS means another
    /// thread changed the word.
    #[inline]
    pub(crate) fn update<R>(&self, mut f: impl FnMut(Tagged) -> Option<(Tagged, R)>) -> Option<R> {
        let mut cur = self.load();
        loop {
            let (new, r) = f(cur)?;
            if new == cur {
                return Some(r);
            }
            match self.compare_exchange(cur, new) {
                Ok(()) => return Some(r),
                Err(now) => cur = now,
            }
        }
    }

    /// Moves the word to the transition `tag` with the value `f` computes
    /// from the word as it is, unless the word is already at `tag`'s epoch
    /// or a later one (a later transition got there first).
    #[inline]
    pub(crate) fn advance(&self, tag: RunTag, mut f: impl FnMut(Tagged) -> u64) {
        let _ = self
            .update(|w| (w.tag.epoch() < tag.epoch()).then(|| (Tagged { value: f(w), tag }, ())));
    }

    /// Keeps the tag and sets the value `f` computes, returning what `f`
    /// returned alongside (e.g. the value replaced).
    #[inline]
    pub(crate) fn set_value<R>(&self, mut f: impl FnMut(Tagged) -> (u64, R)) -> R {
        self.update(|w| {
            let (value, r) = f(w);
            Some((Tagged { value, tag: w.tag }, r))
        })
        .expect("set_value always stores")
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn advance_moves_forward_only() {
        let w = TaggedWord::new(7, RunTag::INITIAL);
        let start = RunTag::INITIAL.next(true);
        let stop = start.next(false);
        // The stop is applied first (it won the race to this element).
        w.advance(stop, |w| w.value + 1);
        assert_eq!(
            w.load(),
            Tagged {
                value: 8,
                tag: stop
            }
        );
        // The earlier start arrives late: nothing changes.
        w.advance(start, |_| 100);
        assert_eq!(
            w.load(),
            Tagged {
                value: 8,
                tag: stop
            }
        );
        assert!(!w.load().tag.started());
        assert_eq!(stop.epoch(), 2);
    }

    #[test]
    fn a_stale_compare_exchange_fails_after_a_transition() {
        let started = RunTag::INITIAL.next(true);
        let w = TaggedWord::new(5, started);
        let seen = w.load();
        w.advance(started.next(false), |w| w.value);
        // Same value, other tag: a writer that saw it started is refused.
        assert!(
            w.compare_exchange(
                seen,
                Tagged {
                    value: 9,
                    tag: started
                }
            )
            .is_err()
        );
        assert_eq!(w.load().value, 5);
    }
}
