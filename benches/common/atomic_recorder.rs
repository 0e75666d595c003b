//! The `metrics` recorder backed by an `AtomicU64` that the `alternatives`
//! and `metrics_recorder` benches measure next to pvar's.
//!
//! A bench includes it with `#[path = "common/atomic_recorder.rs"] mod
//! atomic_recorder;`.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// A `metrics` recorder whose counters are the one `AtomicU64` it holds
/// (an `AtomicU64` is what `metrics-util`'s registry hands out), so
/// `counter!` returns a handle we hold and `increment` is a dynamic call
/// to `AtomicU64::fetch_add`.
pub struct AtomicRecorder(pub Arc<AtomicU64>);

impl metrics::Recorder for AtomicRecorder {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn register_counter(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::from_arc(self.0.clone())
    }
    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(
        &self,
        _: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        metrics::Histogram::noop()
    }
}
