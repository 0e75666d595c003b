//! The statistics of one value over ranks, kept so that two halves of a
//! job merge into the statistics of the whole ([`Acc`]), and what they
//! finish into ([`Stats`]).
//!
//! Sums are exact for integers (an `i128` holds the sum of 2^64 values of
//! 64 bits) and turn to `f64` as soon as one value is a double; min and
//! max keep the lowest rank on ties, so that the result does not depend on
//! the order in which partial results are merged.

use std::cmp::Ordering;

use crate::export::snapshot::Number;
use crate::vocabulary::kinds::PvarClass;

/// Figures over the ranks that report one value.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// How many ranks report the value.
    pub ranks: usize,
    /// Sum over those ranks, for COUNTER, AGGREGATE, TIMER, LEVEL and SIZE
    /// (integer sums are exact and saturate at the type's bounds).
    pub total: Option<Number>,
    /// The smallest value.
    pub min: Number,
    /// The lowest rank holding it.
    pub min_rank: usize,
    /// The mean over the reporting ranks.
    pub mean: f64,
    /// The largest value.
    pub max: Number,
    /// The lowest rank holding it.
    pub max_rank: usize,
    /// `max / mean` (1 = balanced); `None` for STATE and GENERIC, or when
    /// the mean is 0.
    pub imbalance: Option<f64>,
    /// `(max − mean) / max`, as mpiP shows imbalance (0 = balanced);
    /// `None` for STATE and GENERIC, or when the max is 0.
    pub imbalance_fraction: Option<f64>,
    /// Watermarks: the job's mark and its rank (the max for HIGH, the min
    /// for LOW).
    pub mark: Option<(Number, usize)>,
}

/// COUNTER, AGGREGATE, TIMER, LEVEL, SIZE: the sum over ranks means
/// something.
pub(super) fn has_total(class: PvarClass) -> bool {
    class.is_sum() || matches!(class, PvarClass::Level | PvarClass::Size)
}

/// A sum of [`Number`]s: exact over integers, `f64` once a double is in.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Sum {
    /// The sum of the integer values.
    pub int: i128,
    /// The sum of the double values.
    pub float: f64,
    /// Some value was a double: the total is a double.
    pub double: bool,
    /// Some value was a signed integer: an integer total is signed.
    pub signed: bool,
}

impl Sum {
    /// The sum of one value.
    pub fn of(n: Number) -> Sum {
        let mut s = Sum::default();
        s.add(n);
        s
    }

    pub fn add(&mut self, n: Number) {
        match n {
            Number::Unsigned(u) => self.int += i128::from(u),
            Number::Signed(i) => {
                self.int += i128::from(i);
                self.signed = true;
            }
            Number::Double(d) => {
                self.float += d;
                self.double = true;
            }
        }
    }

    pub fn merge(&mut self, o: &Sum) {
        // 2^64 values of 64 bits fit; beyond that, saturate.
        self.int = self.int.saturating_add(o.int);
        self.float += o.float;
        self.double |= o.double;
        self.signed |= o.signed;
    }

    /// The total: a double if any value was, otherwise the exact integer
    /// clamped to the type's range.
    pub fn total(&self) -> Number {
        if self.double {
            Number::Double(self.as_f64())
        } else if self.signed {
            Number::Signed(self.int.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
        } else {
            Number::Unsigned(self.int.clamp(0, i128::from(u64::MAX)) as u64)
        }
    }

    pub fn as_f64(&self) -> f64 {
        self.int as f64 + self.float
    }

    pub fn is_zero(&self) -> bool {
        self.int == 0 && self.float == 0.0
    }
}

/// One value's statistics over a set of ranks: what a rank contributes
/// ([`Acc::of`]) and what two sets merge into ([`Acc::merge`]). Empty
/// (`n == 0`) for a value no rank of the set reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Acc {
    /// Ranks that report the value.
    pub n: u64,
    pub sum: Sum,
    pub min: Number,
    pub min_rank: u32,
    pub max: Number,
    pub max_rank: u32,
    /// Some rank's value (or, for a watermark, its level or mark) is not 0.
    pub nonzero: bool,
}

impl Default for Acc {
    fn default() -> Acc {
        Acc::EMPTY
    }
}

impl Acc {
    /// No rank.
    pub const EMPTY: Acc = Acc {
        n: 0,
        sum: Sum {
            int: 0,
            float: 0.0,
            double: false,
            signed: false,
        },
        min: Number::Unsigned(0),
        min_rank: 0,
        max: Number::Unsigned(0),
        max_rank: 0,
        nonzero: false,
    };

    /// Rank `rank`'s `value`; `nonzero` also counts what the figures are
    /// not of (a watermark's level next to its mark).
    pub fn of(value: Number, rank: u32, nonzero: bool) -> Acc {
        Acc {
            n: 1,
            sum: Sum::of(value),
            min: value,
            min_rank: rank,
            max: value,
            max_rank: rank,
            nonzero: nonzero || !is_zero(value),
        }
    }

    /// The statistics of both sets of ranks (disjoint sets: a rank is in
    /// one of them).
    pub fn merge(&mut self, o: &Acc) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.n += o.n;
        self.sum.merge(&o.sum);
        if before(o.min, o.min_rank, self.min, self.min_rank, Ordering::Less) {
            (self.min, self.min_rank) = (o.min, o.min_rank);
        }
        if before(
            o.max,
            o.max_rank,
            self.max,
            self.max_rank,
            Ordering::Greater,
        ) {
            (self.max, self.max_rank) = (o.max, o.max_rank);
        }
        self.nonzero |= o.nonzero;
    }

    /// The figures (`None` if no rank reports the value), for a variable
    /// of `class`.
    pub fn stats(&self, class: PvarClass) -> Option<Stats> {
        if self.n == 0 {
            return None;
        }
        let mean = self.sum.as_f64() / self.n as f64;
        let balanced = !matches!(class, PvarClass::State | PvarClass::Generic);
        let max_f = self.max.as_f64();
        let (min_rank, max_rank) = (self.min_rank as usize, self.max_rank as usize);
        Some(Stats {
            ranks: usize::try_from(self.n).unwrap_or(usize::MAX),
            total: has_total(class).then(|| self.sum.total()),
            min: self.min,
            min_rank,
            mean,
            max: self.max,
            max_rank,
            imbalance: (balanced && mean != 0.0).then(|| max_f / mean),
            imbalance_fraction: (balanced && max_f != 0.0).then(|| (max_f - mean) / max_f),
            mark: match class {
                PvarClass::HighWatermark => Some((self.max, max_rank)),
                PvarClass::LowWatermark => Some((self.min, min_rank)),
                _ => None,
            },
        })
    }
}

/// Whether `(a, a_rank)` goes before `(b, b_rank)` when looking for the
/// value that is `want` (Less: the min; Greater: the max), the lower rank
/// first among equals.
fn before(a: Number, a_rank: u32, b: Number, b_rank: u32, want: Ordering) -> bool {
    match compare(a, b) {
        Ordering::Equal => a_rank < b_rank,
        o => o == want,
    }
}

pub(super) fn is_zero(n: Number) -> bool {
    match n {
        Number::Unsigned(u) => u == 0,
        Number::Signed(i) => i == 0,
        Number::Double(d) => d == 0.0,
    }
}

/// Orders two values of possibly different representations exactly
/// (integers) or by `f64::total_cmp`.
pub(super) fn compare(a: Number, b: Number) -> Ordering {
    match (a, b) {
        (Number::Unsigned(x), Number::Unsigned(y)) => x.cmp(&y),
        (Number::Signed(x), Number::Signed(y)) => x.cmp(&y),
        (Number::Unsigned(x), Number::Signed(y)) => i128::from(x).cmp(&i128::from(y)),
        (Number::Signed(x), Number::Unsigned(y)) => i128::from(x).cmp(&i128::from(y)),
        _ => a.as_f64().total_cmp(&b.as_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_ranks(values: &[Option<Number>]) -> Acc {
        let mut acc = Acc::EMPTY;
        for (r, v) in values.iter().enumerate() {
            if let Some(v) = v {
                acc.merge(&Acc::of(*v, r as u32, false));
            }
        }
        acc
    }

    #[test]
    fn stats_pick_the_lowest_rank_on_ties_and_skip_absent_ranks() {
        let u = Number::Unsigned;
        let s = of_ranks(&[Some(u(4)), None, Some(u(8)), Some(u(8)), Some(u(4))])
            .stats(PvarClass::Counter)
            .unwrap();
        assert_eq!(s.ranks, 4);
        assert_eq!((s.min, s.min_rank, s.max, s.max_rank), (u(4), 0, u(8), 2));
        assert_eq!(s.total, Some(u(24)));
        assert_eq!(s.mean, 6.0);
        assert_eq!(s.imbalance, Some(8.0 / 6.0));
        assert_eq!(s.imbalance_fraction, Some(0.25));
        assert!(of_ranks(&[None, None]).stats(PvarClass::Counter).is_none());
    }

    #[test]
    fn merging_in_any_order_gives_the_same_figures() {
        let u = Number::Unsigned;
        let values = [7, 3, 9, 3, 9, 1, 1, 5];
        let accs: Vec<Acc> = values
            .iter()
            .enumerate()
            .map(|(r, &v)| Acc::of(u(v), r as u32, false))
            .collect();
        let mut forward = Acc::EMPTY;
        accs.iter().for_each(|a| forward.merge(a));
        let mut backward = Acc::EMPTY;
        accs.iter().rev().for_each(|a| backward.merge(a));
        // Pairwise, as a tree would.
        let mut pairs: Vec<Acc> = accs
            .chunks(2)
            .map(|c| {
                let mut a = c[0];
                a.merge(&c[1]);
                a
            })
            .collect();
        while pairs.len() > 1 {
            let b = pairs.pop().unwrap();
            pairs[0].merge(&b);
        }
        assert_eq!(forward, backward);
        assert_eq!(forward, pairs[0]);
        assert_eq!((forward.min, forward.min_rank), (u(1), 5));
        assert_eq!((forward.max, forward.max_rank), (u(9), 2));
    }

    #[test]
    fn zero_means_no_imbalance_and_state_has_none() {
        let s = of_ranks(&[Some(Number::Unsigned(0))])
            .stats(PvarClass::Counter)
            .unwrap();
        assert_eq!((s.imbalance, s.imbalance_fraction), (None, None));
        let s = of_ranks(&[Some(Number::Signed(1)), Some(Number::Signed(3))])
            .stats(PvarClass::State)
            .unwrap();
        assert_eq!((s.imbalance, s.total), (None, None));
        assert_eq!(s.mean, 2.0);
    }

    #[test]
    fn sums_are_exact_and_saturate() {
        let mut s = Sum::of(Number::Unsigned(u64::MAX - 1));
        s.add(Number::Unsigned(5));
        assert_eq!(s.total(), Number::Unsigned(u64::MAX));
        let mut s = Sum::of(Number::Unsigned(3));
        s.add(Number::Signed(-5));
        assert_eq!(s.total(), Number::Signed(-2));
        let mut s = Sum::of(Number::Unsigned(1));
        s.add(Number::Double(0.5));
        assert_eq!(s.total(), Number::Double(1.5));
        assert_eq!(
            compare(Number::Signed(-1), Number::Unsigned(u64::MAX)),
            Ordering::Less
        );
    }
}
