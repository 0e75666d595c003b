//! How the recorder's series will be exposed to Prometheus, kept so that
//! a series whose samples would collide with another's is refused at
//! registration, as the `prometheus` crate refuses it: two series of one
//! exposed name and label set (`jobs` and `jobs_total` are both
//! `jobs_total`; `cache-hits` and `cache_hits` are both `cache_hits`), a
//! family of another type or unit under a taken name, a family whose
//! samples would take another family's name (`h_count` beside a
//! histogram `h`), label names equal after they are made valid (`a-b`,
//! `a_b`), and reserved label names (`__…`, and those the exporter adds:
//! `element`, `bind`, `object`, `le`, `quantile`, `pid`, `program`,
//! `rank`). The names follow `vocabulary::series`, which the exposition
//! writer uses too.

use std::collections::{HashMap, HashSet};

use crate::vocabulary::series::{Shape, family_stem, is_reserved_label, label_name};

/// The families and series the recorder's series take.
#[derive(Default)]
pub(super) struct Exposure {
    /// Family name → its shape and unit.
    families: HashMap<String, (Shape, Option<String>)>,
    /// Every name a family takes (its own, its samples', `_created`).
    reserved: HashSet<String>,
    /// Every sample's name and label set.
    series: HashSet<String>,
}

/// A series, as it will be exposed.
pub(super) struct Exposed {
    family: String,
    shape: Shape,
    unit: Option<String>,
    ids: Vec<String>,
}

/// The kind of `metrics` instrument a series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// `counter!`: a COUNTER.
    Counter,
    /// `gauge!`: a GENERIC of `f64`.
    Gauge,
    /// `histogram!`: a COUNTER of buckets `_bucket`, their bounds `_le`
    /// and an AGGREGATE of `f64` `_sum`.
    Histogram,
}

fn shape_of(kind: MetricKind) -> Shape {
    match kind {
        MetricKind::Counter => Shape::Counter,
        MetricKind::Gauge => Shape::Gauge,
        MetricKind::Histogram => Shape::Histogram,
    }
}

impl Exposure {
    /// How the series of `kind` named `name` with `labels` and `unit`
    /// would be exposed, or why it cannot be: a reserved label name,
    /// two label names that are one once made valid, or a collision with
    /// a series taken before (see the module documentation).
    pub(super) fn check(
        &self,
        kind: MetricKind,
        name: &str,
        labels: &[(&str, &str)],
        unit: Option<&str>,
    ) -> Result<Exposed, String> {
        let shape = shape_of(kind);
        let family = shape.family_name(&family_stem(name, false), unit);
        let mut keys: Vec<(String, &str)> = Vec::with_capacity(labels.len());
        for (i, (k, v)) in labels.iter().enumerate() {
            let valid = label_name(k);
            if is_reserved_label(&valid) {
                return Err(format!(
                    "label name {k:?} is reserved (Prometheus keeps `__…`, the exporter adds \
                     element, bind, object, le, quantile, pid, program and rank)"
                ));
            }
            if let Some(j) = keys.iter().position(|(kv, _)| *kv == valid) {
                return Err(format!(
                    "label names {:?} and {k:?} are both {valid:?} once made valid",
                    labels[j].0
                ));
            }
            debug_assert_eq!(keys.len(), i);
            keys.push((valid, v));
        }
        keys.sort();
        let ids: Vec<String> = shape
            .sample_names(&family)
            .into_iter()
            .map(|sample| {
                let mut id = sample;
                for (k, v) in &keys {
                    id.push('\0');
                    id.push_str(k);
                    id.push('\0');
                    id.push_str(v);
                }
                id
            })
            .collect();
        match self.families.get(&family) {
            Some((s, u)) if *s != shape || u.as_deref() != unit => {
                return Err(format!(
                    "it would be exposed as family {family:?}, which another series takes as a \
                     {} of unit {}",
                    shape_name(*s),
                    u.as_deref().unwrap_or("none")
                ));
            }
            Some(_) => {}
            None => {
                if let Some(n) = shape
                    .reserved_names(&family)
                    .into_iter()
                    .find(|n| self.reserved.contains(n))
                {
                    return Err(format!(
                        "its family {family:?} would take the name {n:?}, which another \
                         series' family takes"
                    ));
                }
            }
        }
        if let Some(id) = ids.iter().find(|id| self.series.contains(*id)) {
            return Err(format!(
                "another series is exposed as {} already",
                id.split('\0').next().unwrap_or_default()
            ));
        }
        Ok(Exposed {
            family,
            shape,
            unit: unit.map(str::to_string),
            ids,
        })
    }

    /// Takes the names of a series that was registered.
    pub(super) fn take(&mut self, e: Exposed) {
        if !self.families.contains_key(&e.family) {
            self.reserved.extend(e.shape.reserved_names(&e.family));
            self.families.insert(e.family, (e.shape, e.unit));
        }
        self.series.extend(e.ids);
    }
}

fn shape_name(s: Shape) -> &'static str {
    match s {
        Shape::Counter => "counter",
        Shape::Gauge => "gauge",
        Shape::StateSet => "state set",
        Shape::Histogram => "histogram",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(
        e: &mut Exposure,
        kind: MetricKind,
        name: &str,
        labels: &[(&str, &str)],
    ) -> Result<(), String> {
        let x = e.check(kind, name, labels, None)?;
        e.take(x);
        Ok(())
    }

    #[test]
    fn collisions_are_refused() {
        let mut e = Exposure::default();
        take(&mut e, MetricKind::Counter, "jobs", &[]).unwrap();
        assert!(take(&mut e, MetricKind::Counter, "jobs_total", &[]).is_err());
        assert!(take(&mut e, MetricKind::Gauge, "jobs_total", &[]).is_err());
        take(&mut e, MetricKind::Counter, "jobs", &[("q", "a")]).unwrap();
        take(&mut e, MetricKind::Counter, "cache_hits", &[]).unwrap();
        assert!(take(&mut e, MetricKind::Counter, "cache-hits", &[]).is_err());
        take(&mut e, MetricKind::Histogram, "h", &[]).unwrap();
        assert!(take(&mut e, MetricKind::Gauge, "h_count", &[]).is_err());
        assert!(take(&mut e, MetricKind::Gauge, "jobs", &[]).is_err());
        let err = take(
            &mut e,
            MetricKind::Counter,
            "x",
            &[("a-b", "1"), ("a_b", "2")],
        )
        .unwrap_err();
        assert!(err.contains("\"a-b\" and \"a_b\""), "{err}");
        assert!(take(&mut e, MetricKind::Counter, "x", &[("__name__", "y")]).is_err());
        assert!(take(&mut e, MetricKind::Counter, "x", &[("le", "1")]).is_err());
        take(&mut e, MetricKind::Counter, "x", &[("a", "1"), ("b", "2")]).unwrap();
    }

    #[test]
    fn units_are_part_of_the_family() {
        let mut e = Exposure::default();
        let x = e
            .check(MetricKind::Counter, "sent", &[], Some("bytes"))
            .unwrap();
        e.take(x);
        assert!(
            e.check(MetricKind::Counter, "sent_bytes", &[], None)
                .is_err()
        );
        assert!(
            e.check(MetricKind::Counter, "sent_bytes", &[], Some("bytes"))
                .is_err()
        );
        assert!(e.check(MetricKind::Counter, "sent", &[], None).is_ok());
    }
}
