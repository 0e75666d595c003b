//! The timer clock: `quanta`'s TSC-based clock, calibrated when a registry
//! is created, never lazily on a hot path.
//!
//! TIMER cells count raw ticks; converting ticks to nanoseconds afterwards is
//! a multiply and a shift by the calibration factors (no allocation, no
//! lock), so it is safe in a signal handler.

use std::time::Duration;

/// A calibrated tick source. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Clock {
    inner: quanta::Clock,
    /// Nanoseconds per tick, for the inverse conversion.
    nanos_per_tick: f64,
}

/// Controls the passage of time of a mocked [`Clock`] (for tests).
#[derive(Clone, Debug)]
pub struct MockTime(std::sync::Arc<quanta::Mock>);

impl MockTime {
    /// Advances the mocked clock by `d`.
    pub fn advance(&self, d: Duration) {
        self.0.increment(d);
    }
}

impl Clock {
    /// The real clock, calibrated now (this takes a few milliseconds the
    /// first time in a process).
    pub fn new() -> Self {
        Self::from_quanta(quanta::Clock::new())
    }

    /// A mocked clock whose ticks are nanoseconds and which only moves when
    /// told to.
    pub fn mock() -> (Self, MockTime) {
        let (clock, mock) = quanta::Clock::mock();
        (Self::from_quanta(clock), MockTime(mock))
    }

    fn from_quanta(inner: quanta::Clock) -> Self {
        const PROBE: u64 = 1 << 40;
        let nanos = inner.delta_as_nanos(0, PROBE);
        let nanos_per_tick = if nanos == 0 {
            1.0
        } else {
            nanos as f64 / PROBE as f64
        };
        Self {
            inner,
            nanos_per_tick,
        }
    }

    /// The current raw tick count. Async-signal-safe (reads the TSC, or the
    /// mock's atomic).
    #[inline(always)]
    pub fn ticks(&self) -> u64 {
        self.inner.raw()
    }

    /// Converts a tick count (a difference of [`Clock::ticks`]) to
    /// nanoseconds. Async-signal-safe.
    #[inline]
    pub fn ticks_to_nanos(&self, ticks: u64) -> u64 {
        self.inner.delta_as_nanos(0, ticks)
    }

    /// Converts nanoseconds to ticks: the smallest tick count that
    /// [`Clock::ticks_to_nanos`] maps to at least `nanos`, so that a value
    /// written in nanoseconds reads back unchanged (exactly, whenever the
    /// clock has at least one tick per nanosecond, as TSCs and the mock
    /// clock do). Async-signal-safe: arithmetic and a few bounded steps.
    pub fn nanos_to_ticks(&self, nanos: u64) -> u64 {
        // The calibration's estimate, then correct it against the exact
        // (truncating) forward conversion, whose rounding it cannot see.
        let mut t = (nanos as f64 / self.nanos_per_tick).round() as u64;
        for _ in 0..8 {
            let n = self.ticks_to_nanos(t);
            if n == nanos {
                break;
            }
            let step = ((nanos as f64 - n as f64) / self.nanos_per_tick).round() as i64;
            let step = if step == 0 {
                if n < nanos { 1 } else { -1 }
            } else {
                step
            };
            t = t.saturating_add_signed(step);
        }
        // Smallest such count: step down while the count below still
        // reaches `nanos`, up while this one falls short (a few ticks at
        // most after the loop above; bounded to stay signal-safe).
        for _ in 0..64 {
            if t > 0 && self.ticks_to_nanos(t - 1) >= nanos {
                t -= 1;
            } else if self.ticks_to_nanos(t) < nanos && t < u64::MAX {
                t += 1;
            } else {
                break;
            }
        }
        t
    }

    /// Converts a duration to ticks.
    pub fn duration_to_ticks(&self, d: Duration) -> u64 {
        self.nanos_to_ticks(d.as_nanos().min(u64::MAX as u128) as u64)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
