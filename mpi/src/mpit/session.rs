//! Merged `MPI_T_pvar_session`s: a fixed table of slots, each holding the
//! library's session and pvar's, named by a generation-checked key.
//!
//! A key is `TAG | generation << 10 | slot`, with a generation from a
//! process-wide counter: a freed slot's key never names its next occupant,
//! and a value the table never gave out (NULL, the library's own session,
//! garbage) names no live slot. Nothing is dereferenced through a key.
//!
//! [`get`] is lock-free and allocation-free (three atomic loads and a
//! re-check, seqlock-style), for the access calls; [`insert`] and [`remove`] serialise on
//! a mutex.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::TAG;

/// Live sessions at once (`MPI_T_ERR_OUT_OF_SESSIONS` beyond).
pub(crate) const SLOTS: usize = 1024;
const SLOT_BITS: u32 = 10;
const _: () = assert!(SLOTS == 1 << SLOT_BITS);
/// The `LIVE` bit of a slot's state (the rest is the generation).
const LIVE: u64 = 1;

struct Slot {
    /// `generation << 1 | LIVE`; 0 never used.
    state: AtomicU64,
    /// The library's session (NULL if its MPI_T was not in use).
    lib: AtomicUsize,
    /// pvar's session key.
    ours: AtomicU64,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        state: AtomicU64::new(0),
        lib: AtomicUsize::new(0),
        ours: AtomicU64::new(0),
    }
}; SLOTS];

/// The next generation (never 0; 53 bits last far beyond any process).
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// Serialises [`insert`] and [`remove`].
static WRITERS: Mutex<()> = Mutex::new(());

fn split(key: u64) -> Option<(usize, u64)> {
    if key & TAG == 0 {
        return None;
    }
    let slot = (key & (SLOTS as u64 - 1)) as usize;
    let generation = (key & !TAG) >> SLOT_BITS;
    (generation != 0).then_some((slot, generation))
}

/// Stores a new merged session; its key, or `None` if every slot is live.
pub(crate) fn insert(lib: usize, ours: u64) -> Option<u64> {
    let _w = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    let slot = TABLE
        .iter()
        .position(|s| s.state.load(Ordering::Relaxed) & LIVE == 0)?;
    let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
    let s = &TABLE[slot];
    // Release (also on the two sessions): a reader in `get` that sees a
    // new session also sees the earlier store that made the slot not
    // live, so its re-check fails (a seqlock's writer; Relaxed stores
    // could become visible before that store on a weakly ordered CPU).
    s.lib.store(lib, Ordering::Release);
    s.ours.store(ours, Ordering::Release);
    // Release: a reader that sees the new state sees the two sessions.
    s.state.store(generation << 1 | LIVE, Ordering::Release);
    Some(TAG | generation << SLOT_BITS | slot as u64)
}

/// The (library, pvar) sessions of a live key. Lock-free,
/// allocation-free, async-signal-safe.
#[inline]
pub(crate) fn get(key: u64) -> Option<(usize, u64)> {
    let (slot, generation) = split(key)?;
    let s = &TABLE[slot];
    let want = generation << 1 | LIVE;
    if s.state.load(Ordering::Acquire) != want {
        return None;
    }
    // Acquire: the re-check below cannot be satisfied before these loads,
    // and a session of a later occupant brings the free with it.
    let pair = (
        s.lib.load(Ordering::Acquire),
        s.ours.load(Ordering::Acquire),
    );
    // A free and a new insert in between would have changed the state:
    // check again so that the pair belongs to this key.
    (s.state.load(Ordering::Acquire) == want).then_some(pair)
}

/// Frees a live key's slot; its (library, pvar) sessions, or `None` if
/// the key is not live.
pub(crate) fn remove(key: u64) -> Option<(usize, u64)> {
    let _w = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    let (slot, generation) = split(key)?;
    let s = &TABLE[slot];
    if s.state.load(Ordering::Acquire) != generation << 1 | LIVE {
        return None;
    }
    s.state.store(generation << 1, Ordering::Release);
    Some((
        s.lib.load(Ordering::Relaxed),
        s.ours.load(Ordering::Relaxed),
    ))
}

/// Frees every live slot (the last `MPI_T_finalize`: both sides free their
/// sessions themselves); returns how many were live.
pub(crate) fn clear() -> usize {
    let _w = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    let mut n = 0;
    for s in &TABLE {
        let st = s.state.load(Ordering::Acquire);
        if st & LIVE != 0 {
            s.state.store(st & !LIVE, Ordering::Release);
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked() {
        let k = insert(0x1000, 77).unwrap();
        assert_eq!(get(k), Some((0x1000, 77)));
        assert_eq!(get(k ^ 1 << SLOT_BITS), None, "other generation");
        assert_eq!(get(k & !TAG), None, "untagged");
        assert_eq!(get(0), None);
        assert_eq!(remove(k), Some((0x1000, 77)));
        assert_eq!(get(k), None, "freed");
        assert_eq!(remove(k), None, "freed twice");
        let k2 = insert(1, 2).unwrap();
        assert_ne!(k, k2, "a reused slot has a new key");
        assert_eq!(get(k), None);
        assert_eq!(remove(k2), Some((1, 2)));
    }
}
