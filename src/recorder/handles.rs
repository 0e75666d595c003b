//! The handles the recorder gives `metrics`: one per series, wrapping the
//! pvar component handles, behind the `Arc` a `metrics::Counter` /
//! `Gauge` / `Histogram` holds.

use crate::pvar::{Aggregate, Counter, Generic};
use crate::sync::{Arc, AtomicU64, Ordering};

/// What handles count outside the variables: values refused.
#[derive(Debug, Default)]
pub(super) struct Drops {
    /// Non-finite gauge amounts and histogram values, dropped.
    values: AtomicU64,
}

impl Drops {
    /// Counts `n` dropped values (a cold path).
    #[cold]
    #[inline(never)]
    fn drop_values(&self, n: u64) {
        self.values.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn values(&self) -> u64 {
        self.values.load(Ordering::Relaxed)
    }
}

/// A counter series: a pvar COUNTER, and the largest `absolute` value
/// applied so far.
pub(super) struct CounterSeries {
    counter: Counter,
    /// The largest value given to `absolute`; the counter has been raised
    /// by exactly this much through `absolute` (see `absolute`). Written
    /// only by `absolute`, so `increment` never touches its cache line
    /// (`Counter` fills a line of its own).
    last_absolute: AtomicU64,
}

impl CounterSeries {
    pub(super) fn new(counter: Counter) -> Self {
        Self {
            counter,
            last_absolute: AtomicU64::new(0),
        }
    }
}

impl metrics::CounterFn for CounterSeries {
    #[inline]
    fn increment(&self, value: u64) {
        self.counter.add(value);
    }

    /// Adds how far `value` passes the largest absolute value so far. The
    /// `fetch_max` chain raises `last_absolute` through non-decreasing
    /// values, and each call adds exactly the step it made, so the adds
    /// telescope: whatever the interleaving, the counter has received
    /// exactly `max(values given)` from `absolute` — no step counted
    /// twice, none lost, a stale smaller value adds nothing.
    fn absolute(&self, value: u64) {
        let before = self.last_absolute.fetch_max(value, Ordering::Relaxed);
        if value > before {
            self.counter.add(value - before);
        }
    }
}

/// A gauge series: a pvar GENERIC of `f64` (it keeps its sign).
pub(super) struct GaugeSeries {
    value: Generic<f64>,
    drops: Arc<Drops>,
}

impl GaugeSeries {
    pub(super) fn new(value: Generic<f64>, drops: Arc<Drops>) -> Self {
        Self { value, drops }
    }
}

impl metrics::GaugeFn for GaugeSeries {
    #[inline]
    fn increment(&self, value: f64) {
        if value.is_finite() {
            self.value.add(value);
        } else {
            self.drops.drop_values(1);
        }
    }

    #[inline]
    fn decrement(&self, value: f64) {
        if value.is_finite() {
            self.value.add(-value);
        } else {
            self.drops.drop_values(1);
        }
    }

    #[inline]
    fn set(&self, value: f64) {
        if value.is_finite() {
            self.value.set(value);
        } else {
            self.drops.drop_values(1);
        }
    }
}

/// A histogram series: a pvar COUNTER with one element per bucket (the
/// last for values above every bound) and an AGGREGATE of `f64`, the sum
/// of the values.
pub(super) struct HistogramSeries {
    buckets: Counter,
    /// The finite upper bounds, increasing (one fewer than the buckets).
    bounds: Box<[f64]>,
    /// Up to 16 bounds, padded with `+Inf` (never below a finite value):
    /// counted with a fixed number of compares, which the compiler makes
    /// vector compares without a branch.
    few: Option<[f64; FEW]>,
    sum: Aggregate<f64>,
    drops: Arc<Drops>,
}

/// The most bounds counted without a search.
const FEW: usize = 16;

impl HistogramSeries {
    pub(super) fn new(
        buckets: Counter,
        bounds: Box<[f64]>,
        sum: Aggregate<f64>,
        drops: Arc<Drops>,
    ) -> Self {
        debug_assert_eq!(buckets.count(), bounds.len() + 1);
        let few = (bounds.len() <= FEW).then(|| {
            let mut few = [f64::INFINITY; FEW];
            few[..bounds.len()].copy_from_slice(&bounds);
            few
        });
        Self {
            buckets,
            bounds,
            few,
            sum,
            drops,
        }
    }

    /// The bucket of a finite `value`: the first whose upper bound is at
    /// least `value` (`le`), else the last — the number of bounds below
    /// `value`. Counted over the padded bounds when there are few (no
    /// branch per bound: a binary search mispredicts on values that
    /// vary), searched beyond.
    #[inline]
    fn bucket(&self, value: f64) -> usize {
        match &self.few {
            Some(few) => few.iter().map(|&b| usize::from(b < value)).sum(),
            None => self.bounds.partition_point(|&b| b < value),
        }
    }
}

impl metrics::HistogramFn for HistogramSeries {
    #[inline]
    fn record(&self, value: f64) {
        if value.is_finite() {
            self.buckets.inc_at(self.bucket(value));
            self.sum.add(value);
        } else {
            self.drops.drop_values(1);
        }
    }

    fn record_many(&self, value: f64, count: usize) {
        if value.is_finite() {
            self.buckets.add_at(self.bucket(value), count as u64);
            self.sum.add(value * count as f64);
        } else {
            self.drops.drop_values(count as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_counted_as_searched() {
        let reg = crate::registry::Registry::new();
        let bounds: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.5).collect();
        for n in [1, 11, 16, 17, 40] {
            let b = &bounds[..n];
            let h = HistogramSeries::new(
                reg.counter(&format!("b{n}"))
                    .count(n + 1)
                    .register()
                    .unwrap(),
                b.into(),
                reg.aggregate::<f64>(&format!("s{n}")).register().unwrap(),
                Arc::new(Drops::default()),
            );
            assert_eq!(h.few.is_some(), n <= FEW);
            for v in [-1.0, 0.0, 0.25, 0.5, 3.0, 7.75, 19.5, 100.0] {
                assert_eq!(h.bucket(v), b.partition_point(|&x| x < v), "{n} {v}");
            }
        }
    }
}
