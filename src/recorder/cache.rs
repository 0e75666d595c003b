//! The recorder's table of series: which `metrics` key has which handle,
//! registered once per series name, failures included.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::sync::Arc;

/// A `metrics::Key` hashes itself as one `write_u64` of the hash it
/// computed when it was made (its `Hash` implementation promises that it
/// is the only write): take that word as the hash, as `metrics-util`
/// does, instead of hashing it again.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }

    /// Not reached by `Key`; an FNV-1a step keeps any other use sound.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// One kind's series (counters, gauges or histograms).
///
/// `by_key` answers the repeated `counter!(…)` calls; `by_name` makes
/// keys that differ only in the order of their labels (one series name)
/// share one handle, so that per-handle state (a counter's last absolute
/// value) is per series. `None` is a series whose registration failed: it
/// stays a no-op and is not retried (nor counted again).
pub(super) struct SeriesMap<S> {
    by_key: HashMap<metrics::Key, Option<Arc<S>>, BuildHasherDefault<KeyHasher>>,
    by_name: HashMap<String, Option<Arc<S>>>,
}

impl<S> Default for SeriesMap<S> {
    fn default() -> Self {
        Self {
            by_key: HashMap::default(),
            by_name: HashMap::new(),
        }
    }
}

/// What a lookup found or made.
pub(super) enum Lookup<S> {
    /// The series' handle (cached or just registered), or `None` for a
    /// series whose registration failed before.
    Known(Option<Arc<S>>),
    /// Registration failed now: the series name and the reason.
    Failed(String, crate::vocabulary::error::Error),
}

impl<S> SeriesMap<S> {
    /// The handle of `key`'s series: cached, or registered now by
    /// `register(series_name)` where `series` names it.
    pub(super) fn get_or_register(
        &mut self,
        key: &metrics::Key,
        series: impl FnOnce(&metrics::Key) -> String,
        register: impl FnOnce(&str) -> crate::vocabulary::error::Result<S>,
    ) -> Lookup<S> {
        if let Some(found) = self.by_key.get(key) {
            return Lookup::Known(found.clone());
        }
        let name = series(key);
        let (entry, failure) = match self.by_name.get(&name) {
            Some(found) => (found.clone(), None),
            None => match register(&name) {
                Ok(s) => (Some(Arc::new(s)), None),
                Err(e) => (None, Some(e)),
            },
        };
        self.by_key.insert(key.clone(), entry.clone());
        match failure {
            None => {
                self.by_name.entry(name).or_insert_with(|| entry.clone());
                Lookup::Known(entry)
            }
            Some(e) => {
                self.by_name.insert(name.clone(), None);
                Lookup::Failed(name, e)
            }
        }
    }

    /// Number of series registered (failed ones left out).
    pub(super) fn registered(&self) -> usize {
        self.by_name.values().filter(|s| s.is_some()).count()
    }
}
