//! Families with names that cannot collide: every item (a variable, a
//! histogram, one of the exporter's own series) is placed in a family
//! whose name, sample names and label sets no other family or sample
//! already has, so that a scrape never carries two samples of one series
//! and no two families clash — whatever names the components chose.
//!
//! An item joins the family of its name if that family has its shape and
//! unit and none of the item's samples is there already; otherwise it
//! takes `<name>_<class>`, then `<name>_<class>_2`, `_3`, …, the first
//! that is free (names and their sample names, `_total`, `_bucket`,
//! `_count`, `_sum`, `_created`, all count). Label names are made valid;
//! a component's label that is reserved (`__…`) or that the exporter adds
//! itself (`element`, `bind`, `object`, `le`, `pid`, `program`, `rank`)
//! is renamed `exported_<name>`, as Prometheus renames a target's
//! colliding labels.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::vocabulary::series::{Shape, is_reserved_label, label_name};

/// One sample of an item, before its family is known.
pub(super) struct Sample {
    /// Appended to the family name (`""`, `"_total"`, `"_bucket"`, …).
    pub(super) suffix: &'static str,
    /// Labels the exporter adds (`element`, `le`, `pid`, …).
    pub(super) added: Vec<(String, String)>,
    /// A state set's item: the value of the label named after the family.
    pub(super) state: Option<String>,
    /// The value, as text.
    pub(super) value: String,
}

/// What is to be exposed: a variable, a histogram, a series of the
/// exporter's own.
pub(super) struct Item<'a> {
    /// The metric name it asks for (valid, no unit).
    pub(super) stem: String,
    pub(super) shape: Shape,
    pub(super) unit: Option<&'a str>,
    pub(super) help: Cow<'a, str>,
    /// Appended to the stem when the name is taken (the class).
    pub(super) class_suffix: &'static str,
    /// The labels of its name (series notation), as written.
    pub(super) series: Vec<(String, String)>,
    pub(super) samples: Vec<Sample>,
}

/// A sample placed in its family.
pub(super) struct Line {
    pub(super) name: String,
    pub(super) labels: Vec<(String, String)>,
    pub(super) value: String,
}

/// A family and its samples, in order.
pub(super) struct Family<'a> {
    pub(super) name: String,
    pub(super) shape: Shape,
    pub(super) unit: Option<&'a str>,
    pub(super) help: Cow<'a, str>,
    pub(super) lines: Vec<Line>,
}

/// The families so far, and every name and series they hold.
#[derive(Default)]
pub(super) struct Plan<'a> {
    pub(super) families: Vec<Family<'a>>,
    by_name: HashMap<String, usize>,
    /// Family names and their samples' names (see `Shape::reserved_names`).
    reserved: HashSet<String>,
    /// Every sample's name and label set.
    series: HashSet<String>,
}

impl<'a> Plan<'a> {
    /// Places `item` (see the module documentation).
    pub(super) fn place(&mut self, item: Item<'a>) {
        for attempt in 0usize.. {
            let mut stem = match attempt {
                0 => item.stem.clone(),
                1 => format!("{}_{}", item.stem, item.class_suffix),
                k => format!("{}_{}_{k}", item.stem, item.class_suffix),
            };
            // (`_` + `_state` must not start with `__`.)
            while stem.starts_with("__") {
                stem.remove(0);
            }
            let family = item.shape.family_name(&stem, item.unit);
            let mut lines = Vec::with_capacity(item.samples.len());
            let mut ids = Vec::with_capacity(item.samples.len());
            let mut own = HashSet::new();
            for s in &item.samples {
                let line = Line {
                    name: format!("{family}{}", s.suffix),
                    labels: merge_labels(&family, s, &item.series),
                    value: s.value.clone(),
                };
                let id = identity(&line);
                // The same series twice within one item (an enumeration
                // with a repeated item name): the first is kept.
                if own.insert(id.clone()) {
                    ids.push(id);
                    lines.push(line);
                }
            }
            let free = ids.iter().all(|id| !self.series.contains(id));
            let at = match self.by_name.get(&family) {
                Some(&f) => {
                    let fam = &self.families[f];
                    if fam.shape != item.shape || fam.unit != item.unit || !free {
                        continue;
                    }
                    f
                }
                None => {
                    let names = item.shape.reserved_names(&family);
                    if !free || names.iter().any(|n| self.reserved.contains(n)) {
                        continue;
                    }
                    self.reserved.extend(names);
                    self.by_name.insert(family.clone(), self.families.len());
                    self.families.push(Family {
                        name: family,
                        shape: item.shape,
                        unit: item.unit,
                        help: item.help.clone(),
                        lines: Vec::new(),
                    });
                    self.families.len() - 1
                }
            };
            self.series.extend(ids);
            self.families[at].lines.extend(lines);
            return;
        }
    }
}

/// A sample's series: its name and sorted label set.
fn identity(line: &Line) -> String {
    let mut labels: Vec<&(String, String)> = line.labels.iter().collect();
    labels.sort();
    let mut id = line.name.clone();
    for (k, v) in labels {
        id.push('\0');
        id.push_str(k);
        id.push('\0');
        id.push_str(v);
    }
    id
}

/// A sample's labels: the component's (valid names, renamed where they
/// collide), then the exporter's, then a state set's; no name twice.
fn merge_labels(family: &str, s: &Sample, series: &[(String, String)]) -> Vec<(String, String)> {
    let mut taken: Vec<String> = Vec::new();
    if s.state.is_some() {
        taken.push(family.to_string());
    }
    let unique = |taken: &mut Vec<String>, mut k: String| -> String {
        while taken.contains(&k) {
            k = format!("exported_{k}");
        }
        taken.push(k.clone());
        k
    };
    let added: Vec<(String, String)> = s
        .added
        .iter()
        .map(|(k, v)| (unique(&mut taken, k.clone()), v.clone()))
        .collect();
    let mut out: Vec<(String, String)> = Vec::with_capacity(series.len() + added.len() + 1);
    for (k, v) in series {
        let mut k = label_name(k);
        if is_reserved_label(&k) {
            k = format!("exported_{k}");
        }
        out.push((unique(&mut taken, k), v.clone()));
    }
    out.extend(added);
    if let Some(item) = &s.state {
        out.push((family.to_string(), item.clone()));
    }
    out
}
