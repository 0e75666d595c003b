//! Where a control variable's value lives.
//!
//! Numbers: one 64-bit atomic (`f64` as its bits), read with one relaxed
//! load — the hot-path cost is that load plus the pointer chase to it.
//!
//! Strings: every distinct value ever stored is kept in an append-only
//! vector of versions, and an atomic index names the current one. A read
//! is two acquire loads and a pointer offset, takes no lock, allocates
//! nothing and never sees a freed string (versions are freed only with the
//! variable). The price is memory: each *distinct* string written stays
//! allocated until the variable goes away, which suits values that tools
//! change a handful of times. (The string *reads* are in fact
//! async-signal-safe; string *writes* allocate and take a mutex, and are
//! not.)

use crate::lockfree::append_vec::AppendVec;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::types::sealed::{Init, ValueKind};

/// String storage; see the module docs.
pub(crate) struct TextCell {
    versions: AppendVec<String>,
    current: AtomicUsize,
}

impl TextCell {
    fn new(s: String) -> Self {
        let versions = AppendVec::new();
        versions.push(s);
        Self {
            versions,
            current: AtomicUsize::new(0),
        }
    }

    /// The current value. Lock-free and allocation-free.
    #[inline]
    pub(crate) fn get(&self) -> &str {
        let i = self.current.load(Ordering::Acquire);
        self.versions.get(i).map(String::as_str).unwrap_or("")
    }

    /// Stores `s`, reusing an identical earlier version if there is one.
    pub(crate) fn set(&self, s: &str) {
        let index = self.versions.push_with(|next| {
            match self.versions.iter().find(|(_, v)| v.as_str() == s) {
                Some((i, _)) => (None, i),
                None => (Some(s.to_string()), next),
            }
        });
        self.current.store(index, Ordering::Release);
    }
}

/// The value of one control variable (or of one bound-object instance).
pub(crate) struct CvarCell {
    /// Numeric content (unused for strings).
    pub(crate) bits: AtomicU64,
    /// String content (`None` for numbers).
    pub(crate) text: Option<TextCell>,
    /// The component forbids writes for now (`MPI_T_ERR_CVAR_SET_NOT_NOW`).
    pub(crate) frozen: AtomicBool,
    /// False once a bound instance was dropped.
    pub(crate) live: AtomicBool,
    /// Element count: 1 for numbers, the capacity including the NUL for
    /// strings.
    pub(crate) count: usize,
}

impl CvarCell {
    pub(crate) fn new(init: &Init, count: usize) -> Self {
        let (bits, text) = match init {
            Init::Bits(b) => (*b, None),
            Init::Text(s) => (0, Some(TextCell::new(s.clone()))),
        };
        Self {
            bits: AtomicU64::new(bits),
            text,
            frozen: AtomicBool::new(false),
            live: AtomicBool::new(true),
            count,
        }
    }

    /// Stores a value of the right shape (bits for numbers, text for
    /// strings); a mismatched shape is ignored (callers check kinds).
    pub(crate) fn store(&self, init: &Init) {
        match (init, &self.text) {
            (Init::Bits(b), None) => self.bits.store(*b, Ordering::Relaxed),
            (Init::Text(s), Some(t)) => t.set(s),
            _ => debug_assert!(false, "value shape differs from the variable's"),
        }
    }

    /// The current value, for messages and comparisons.
    pub(crate) fn load(&self) -> Init {
        match &self.text {
            Some(t) => Init::Text(t.get().to_string()),
            None => Init::Bits(self.bits.load(Ordering::Relaxed)),
        }
    }

    pub(crate) fn is_frozen(&self) -> bool {
        self.frozen.load(Ordering::Acquire)
    }
}

/// Normalises a value for `kind` before storing (booleans become 0 / 1).
pub(crate) fn normalise(kind: ValueKind, init: Init) -> Init {
    match (kind, init) {
        (ValueKind::Bool, Init::Bits(b)) => Init::Bits((b as i64 as i32 != 0) as u64),
        (_, i) => i,
    }
}
