//! Tool side (sessions and handles).

pub(crate) struct ToolState {}

impl ToolState {
    pub(crate) fn new() -> Self {
        Self {}
    }
}
