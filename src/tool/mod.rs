//! Tool side (sessions and handles) — being written; see issue 3.

/// Counts a tool can observe about the tool side of a registry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolStats {
    /// Sessions currently allocated.
    pub sessions: usize,
    /// Handles currently allocated.
    pub handles: usize,
    /// Handle reads served since the registry was created.
    pub reads: u64,
}

pub(crate) struct ToolState {}

impl ToolState {
    pub(crate) fn new() -> Self {
        Self {}
    }

    pub(crate) fn stats(&self) -> ToolStats {
        ToolStats::default()
    }
}

impl crate::Registry {
    /// Counts of sessions and handles in use and reads served.
    /// Async-signal-safe.
    pub fn tool_stats(&self) -> ToolStats {
        self.inner.tool.stats()
    }
}
