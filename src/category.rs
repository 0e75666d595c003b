//! Categories (placeholder until the categories module lands).

use crate::sync::Mutex;

/// The category tree of a registry.
#[derive(Default)]
pub struct Categories {
    pending: Mutex<Vec<(String, usize)>>,
}

impl Categories {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn attach_pvar(&self, category: &str, index: usize) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((category.to_string(), index));
    }
}
