//! Histograms among a snapshot's variables: MPI_T has no histogram class,
//! so a histogram is three variables named after it (what the `metrics`
//! recorder registers for `histogram!`):
//!
//! | variable | class, datatype | elements |
//! |---|---|---|
//! | `<h>_bucket{…}` | COUNTER, unsigned | `n`: the values in each bucket (not cumulative) |
//! | `<h>_le{…}` | GENERIC, `MPI_DOUBLE` | `n`: each bucket's upper bound, increasing, the last `+Inf` |
//! | `<h>_sum{…}` | AGGREGATE, `MPI_DOUBLE` | 1: the sum of the values (optional) |
//!
//! with the same labels (`{…}`, written the same). Variables that do not
//! form such a triple are exposed one by one.

use std::collections::{HashMap, HashSet};

use super::super::snapshot::{Number, Snapshot, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::PvarClass;

/// One histogram found among the variables.
pub(super) struct Histogram<'a> {
    /// The `_bucket` variable.
    pub(super) buckets: &'a VarSnapshot,
    /// The metric name before `_bucket`, labels left out.
    pub(super) stem: &'a str,
    /// Each bucket's upper bound, the last `+Inf`.
    pub(super) bounds: Vec<f64>,
    /// The sum of the values, if the `_sum` variable is there.
    pub(super) sum: Option<f64>,
}

/// The histograms of `snap`, by the position of their `_bucket` variable,
/// and the positions of the `_le` and `_sum` variables they take.
pub(super) fn find(snap: &Snapshot) -> (HashMap<usize, Histogram<'_>>, HashSet<usize>) {
    let mut found = HashMap::new();
    let mut taken = HashSet::new();
    let candidates: Vec<usize> = snap
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| {
            v.class == PvarClass::Counter
                && v.object.is_none()
                && v.active
                && !v.values.is_empty()
                && bucket_stem(&v.name).is_some()
        })
        .map(|(i, _)| i)
        .collect();
    if candidates.is_empty() {
        return (found, taken);
    }
    let by_name: HashMap<&str, usize> = snap
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.object.is_none() && v.active)
        .map(|(i, v)| (v.name.as_str(), i))
        .collect();
    for i in candidates {
        let b = &snap.variables[i];
        let Some((stem, labels)) = bucket_stem(&b.name) else {
            continue;
        };
        let Some(&le) = by_name.get(format!("{stem}_le{labels}").as_str()) else {
            continue;
        };
        let Some(bounds) = bounds_of(&snap.variables[le], b.values.len()) else {
            continue;
        };
        let sum = by_name
            .get(format!("{stem}_sum{labels}").as_str())
            .copied()
            .filter(|&s| {
                let v = &snap.variables[s];
                v.class == PvarClass::Aggregate
                    && v.datatype == Datatype::Double
                    && v.values.len() == 1
            });
        taken.insert(le);
        if let Some(s) = sum {
            taken.insert(s);
        }
        found.insert(
            i,
            Histogram {
                buckets: b,
                stem,
                bounds,
                sum: sum.map(|s| snap.variables[s].values[0].as_f64()),
            },
        );
    }
    (found, taken)
}

/// `h_bucket{…}` → (`h`, `{…}`).
fn bucket_stem(name: &str) -> Option<(&str, &str)> {
    let split = name.find('{').unwrap_or(name.len());
    let (base, labels) = name.split_at(split);
    let stem = base.strip_suffix("_bucket")?;
    (!stem.is_empty()).then_some((stem, labels))
}

/// The bounds a `_le` variable holds, if it is one for `n` buckets.
fn bounds_of(v: &VarSnapshot, n: usize) -> Option<Vec<f64>> {
    if v.class != PvarClass::Generic || v.datatype != Datatype::Double || v.values.len() != n {
        return None;
    }
    let bounds: Vec<f64> = v
        .values
        .iter()
        .map(|x| match x {
            Number::Double(d) => *d,
            other => other.as_f64(),
        })
        .collect();
    let (last, rest) = bounds.split_last()?;
    let increasing = rest.windows(2).all(|w| w[0] < w[1]);
    let finite = rest.iter().all(|b| b.is_finite());
    let below_inf = rest.last().is_none_or(|b| *b < f64::INFINITY);
    (*last == f64::INFINITY && increasing && finite && below_inf).then_some(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_bucket() {
        assert_eq!(bucket_stem(r#"h_bucket{a="1"}"#), Some(("h", r#"{a="1"}"#)));
        assert_eq!(bucket_stem("h_bucket"), Some(("h", "")));
        assert_eq!(bucket_stem("_bucket"), None);
        assert_eq!(bucket_stem("h_buckets"), None);
    }
}
