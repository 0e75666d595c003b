//! What `pvar top` shows, before it is drawn: the last two distinct
//! snapshots and the rates between them ([`History`]), the variables
//! chosen by the filter and the category, grouped with their bound
//! instances and sorted ([`Entry`], [`Settings`]).
//!
//! A rate is `(value now − value before) / dt` per element, for the
//! classes whose values accumulate (COUNTER, AGGREGATE, TIMER), with `dt`
//! from the snapshots' `monotonic_ns` (when the exporter read the
//! variables, not when `pvar top` read the region). A TIMER's rate is in
//! seconds per second: the fraction of the time spent in what it times,
//! summed over threads (so it may exceed 1).

use std::collections::{HashMap, HashSet};

use pvar::PvarClass;
use pvar::export::{Number, Snapshot, VarSnapshot};

/// Orders `pvar top` sorts by (`s` cycles through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    /// By name, A to Z.
    Name,
    /// By value (the sum, or maximum, … of an array), largest first.
    Value,
    /// By rate, largest first (variables with no rate last).
    Rate,
    /// By class (in MPI_T's order), then name.
    Class,
}

impl Sort {
    /// The next order, for the `s` key.
    pub fn next(self) -> Sort {
        match self {
            Sort::Name => Sort::Value,
            Sort::Value => Sort::Rate,
            Sort::Rate => Sort::Class,
            Sort::Class => Sort::Name,
        }
    }

    /// Its name, as `--sort` spells it.
    pub fn label(self) -> &'static str {
        match self {
            Sort::Name => "name",
            Sort::Value => "value",
            Sort::Rate => "rate",
            Sort::Class => "class",
        }
    }
}

/// What the user chose: order, filter, category.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The order.
    pub sort: Sort,
    /// The order reversed (`r`).
    pub reverse: bool,
    /// Only variables whose name contains this (case-insensitive).
    pub filter: String,
    /// Only variables in this category or its sub-categories.
    pub category: Option<String>,
}

/// The newest snapshot and the one before it with another sequence
/// number (reading the region twice within one export interval gives the
/// same snapshot: rates keep the last pair).
pub struct History {
    cur: Snapshot,
    prev: Option<Snapshot>,
    /// Position in `prev.variables` of `(index, object)`.
    prev_at: HashMap<(usize, Option<u64>), usize>,
}

impl History {
    /// A history starting at `first`.
    pub fn new(first: Snapshot) -> History {
        History {
            cur: first,
            prev: None,
            prev_at: HashMap::new(),
        }
    }

    /// Adds the snapshot just read.
    pub fn push(&mut self, snap: Snapshot) {
        if snap.process.sequence == self.cur.process.sequence {
            self.cur = snap;
            return;
        }
        let old = std::mem::replace(&mut self.cur, snap);
        self.prev_at = old
            .variables
            .iter()
            .enumerate()
            .map(|(at, v)| ((v.index, v.object), at))
            .collect();
        self.prev = Some(old);
    }

    /// The newest snapshot.
    pub fn current(&self) -> &Snapshot {
        &self.cur
    }

    /// Seconds between the two snapshots rates are taken over.
    pub fn dt(&self) -> Option<f64> {
        let prev = self.prev.as_ref()?;
        let ns = self
            .cur
            .process
            .monotonic_ns
            .checked_sub(prev.process.monotonic_ns)?;
        (ns > 0).then_some(ns as f64 / 1e9)
    }

    /// Per-element rates of `v` (a variable of the current snapshot), in
    /// its display unit per second; `None` for classes without a rate or
    /// before there are two snapshots.
    pub fn rates(&self, v: &VarSnapshot) -> Option<Vec<f64>> {
        if !v.class.is_sum() || v.values.is_empty() {
            return None;
        }
        let dt = self.dt()?;
        let before = &self.prev.as_ref()?.variables[*self.prev_at.get(&(v.index, v.object))?];
        if before.values.len() != v.values.len() {
            return None;
        }
        let scale = scale(v);
        Some(
            v.values
                .iter()
                .zip(&before.values)
                .map(|(now, then)| delta(*now, *then) * scale / dt)
                .collect(),
        )
    }
}

/// `now − then`, exact for integers.
fn delta(now: Number, then: Number) -> f64 {
    match (now, then) {
        (Number::Unsigned(a), Number::Unsigned(b)) => (i128::from(a) - i128::from(b)) as f64,
        (Number::Signed(a), Number::Signed(b)) => (i128::from(a) - i128::from(b)) as f64,
        (a, b) => a.as_f64() - b.as_f64(),
    }
}

/// The factor from a variable's values to its display unit: a TIMER in
/// nanoseconds is shown in seconds.
pub fn scale(v: &VarSnapshot) -> f64 {
    if v.class == PvarClass::Timer && v.unit() == Some("nanoseconds") {
        1e-9
    } else {
        1.0
    }
}

/// One number standing for many elements (an array, or a bound
/// variable's instances): the sum for classes that add up, the highest
/// (lowest) for a high (low) watermark, the mean of percentages; none for
/// STATE and GENERIC (a list of them has no single value).
pub fn summary(class: PvarClass, xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    match class {
        PvarClass::Counter
        | PvarClass::Aggregate
        | PvarClass::Timer
        | PvarClass::Level
        | PvarClass::Size => Some(xs.iter().sum()),
        PvarClass::HighWatermark => xs.iter().copied().reduce(f64::max),
        PvarClass::LowWatermark => xs.iter().copied().reduce(f64::min),
        PvarClass::Percentage => Some(xs.iter().sum::<f64>() / xs.len() as f64),
        PvarClass::State | PvarClass::Generic => (xs.len() == 1).then(|| xs[0]),
    }
}

/// What [`summary`] computes for `class`, as a short prefix.
pub fn summary_label(class: PvarClass) -> &'static str {
    match class {
        PvarClass::HighWatermark => "max",
        PvarClass::LowWatermark => "min",
        PvarClass::Percentage => "avg",
        _ => "sum",
    }
}

/// One instance of a variable (the only one of an unbound variable).
pub struct Instance<'a> {
    /// The variable's values (and object) in the current snapshot.
    pub v: &'a VarSnapshot,
    /// Its per-element rates, if it has any.
    pub rates: Option<Vec<f64>>,
}

/// One variable: its instances and the numbers it is sorted by.
pub struct Entry<'a> {
    /// The first instance (the variable's metadata).
    pub var: &'a VarSnapshot,
    /// Every instance (one for an unbound variable).
    pub instances: Vec<Instance<'a>>,
    /// Its value over every element of every instance ([`summary`]), in
    /// its display unit.
    pub value: Option<f64>,
    /// Its rate, summed over elements and instances.
    pub rate: Option<f64>,
    /// Its mark ([`summary`] of the marks), watermarks only.
    pub mark: Option<f64>,
}

impl Entry<'_> {
    /// Whether it is bound to objects (shown with its instances as
    /// sub-rows).
    pub fn is_bound(&self) -> bool {
        self.var.bind != pvar::BindKind::NoObject
    }
}

/// The categories a category name selects: it and its sub-categories,
/// as indices into the snapshot's categories; `None` if no category has
/// that name.
pub fn category_set(snap: &Snapshot, name: &str) -> Option<HashSet<usize>> {
    let root = snap.categories.iter().position(|c| c.name == name)?;
    let mut set = HashSet::new();
    let mut todo = vec![root];
    while let Some(c) = todo.pop() {
        if set.insert(c) {
            todo.extend(snap.categories[c].subcategories.iter().copied());
        }
    }
    Some(set)
}

/// The names of the categories that select at least one variable: what
/// `c` cycles through.
pub fn categories_with_variables(snap: &Snapshot) -> Vec<String> {
    snap.categories
        .iter()
        .filter(|c| {
            category_set(snap, &c.name).is_some_and(|set| {
                snap.variables
                    .iter()
                    .any(|v| v.category.is_some_and(|x| set.contains(&x)))
            })
        })
        .map(|c| c.name.clone())
        .collect()
}

/// The variables of the current snapshot that `settings` select, grouped
/// (a bound variable's instances under it), with their rates, sorted.
pub fn entries<'a>(h: &'a History, settings: &Settings) -> Vec<Entry<'a>> {
    let snap = h.current();
    let cats = settings
        .category
        .as_deref()
        .map(|c| category_set(snap, c).unwrap_or_default());
    let filter = settings.filter.to_lowercase();
    let mut out: Vec<Entry<'a>> = Vec::new();
    for v in &snap.variables {
        if !filter.is_empty() && !v.name.to_lowercase().contains(&filter) {
            continue;
        }
        if let Some(set) = &cats
            && !v.category.is_some_and(|c| set.contains(&c))
        {
            continue;
        }
        let inst = Instance {
            v,
            rates: h.rates(v),
        };
        match out.last_mut() {
            Some(e) if e.var.index == v.index => e.instances.push(inst),
            _ => out.push(Entry {
                var: v,
                instances: vec![inst],
                value: None,
                rate: None,
                mark: None,
            }),
        }
    }
    for e in &mut out {
        let class = e.var.class;
        let values: Vec<f64> = e
            .instances
            .iter()
            .flat_map(|i| i.v.values.iter().map(|n| n.as_f64() * scale(i.v)))
            .collect();
        e.value = summary(class, &values);
        let rates: Vec<f64> = e
            .instances
            .iter()
            .filter_map(|i| i.rates.as_ref())
            .flatten()
            .copied()
            .collect();
        e.rate = (!rates.is_empty()).then(|| rates.iter().sum());
        let marks: Vec<f64> = e
            .instances
            .iter()
            .filter_map(|i| i.v.marks.as_ref())
            .flatten()
            .map(|n| n.as_f64())
            .collect();
        e.mark = summary(class, &marks);
    }
    sort(&mut out, settings);
    out
}

/// `None` after every number, whatever the direction.
fn by_number(a: Option<f64>, b: Option<f64>, largest_first: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a, b) {
        (Some(x), Some(y)) => {
            let o = x.partial_cmp(&y).unwrap_or(Equal);
            if largest_first { o.reverse() } else { o }
        }
        (Some(_), None) => Less,
        (None, Some(_)) => Greater,
        (None, None) => Equal,
    }
}

fn sort(entries: &mut [Entry<'_>], s: &Settings) {
    let name = |e: &Entry<'_>| (e.var.name.to_lowercase(), e.var.index);
    // Value and rate sort largest first; `r` reverses every order.
    let down = !s.reverse;
    entries.sort_by(|a, b| {
        let primary = match s.sort {
            Sort::Name => std::cmp::Ordering::Equal,
            Sort::Value => by_number(a.value, b.value, down),
            Sort::Rate => by_number(a.rate, b.rate, down),
            Sort::Class => {
                let o = a.var.class.raw().cmp(&b.var.class.raw());
                if s.reverse { o.reverse() } else { o }
            }
        };
        primary.then_with(|| {
            let o = name(a).cmp(&name(b));
            if s.reverse && matches!(s.sort, Sort::Name) {
                o.reverse()
            } else {
                o
            }
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(sort: Sort) -> Settings {
        Settings {
            sort,
            reverse: false,
            filter: String::new(),
            category: None,
        }
    }

    #[test]
    fn rates_come_from_two_snapshots() {
        let reg = pvar::Registry::new();
        let c = reg.counter("c").register().unwrap();
        let mut obs = pvar::export::Observer::new(&reg);
        let mut a = obs.snapshot();
        c.add(10);
        let mut b = obs.snapshot();
        a.process.monotonic_ns = 1_000_000_000;
        b.process.monotonic_ns = 3_000_000_000;
        let mut h = History::new(a);
        assert!(entries(&h, &settings(Sort::Name))[0].rate.is_none());
        h.push(b);
        let e = entries(&h, &settings(Sort::Name));
        assert_eq!(e[0].rate, Some(5.0));
        assert_eq!(e[0].value, Some(10.0));
    }

    #[test]
    fn filter_category_and_order() {
        let reg = pvar::Registry::new();
        reg.categories().define("top", "").unwrap();
        reg.categories().define("sub", "").unwrap();
        reg.categories().add_subcategory("top", "sub").unwrap();
        reg.counter("alpha")
            .category("sub")
            .register()
            .unwrap()
            .add(1);
        reg.counter("beta").register().unwrap().add(5);
        reg.counter("gamma")
            .count(3)
            .register()
            .unwrap()
            .add_at(2, 3);
        let h = History::new(Snapshot::take(&reg));
        let names = |s: &Settings| -> Vec<String> {
            entries(&h, s)
                .iter()
                .map(|e| e.var.name.clone())
                .filter(|n| !n.starts_with("pvar_"))
                .collect()
        };
        assert_eq!(names(&settings(Sort::Name)), ["alpha", "beta", "gamma"]);
        assert_eq!(names(&settings(Sort::Value)), ["beta", "gamma", "alpha"]);
        let mut s = settings(Sort::Value);
        s.reverse = true;
        assert_eq!(names(&s), ["alpha", "gamma", "beta"]);
        let mut s = settings(Sort::Name);
        s.filter = "MM".into();
        assert_eq!(names(&s), ["gamma"]);
        let mut s = settings(Sort::Name);
        s.category = Some("top".into());
        assert_eq!(names(&s), ["alpha"]);
        assert_eq!(
            categories_with_variables(h.current()),
            ["top".to_string(), "sub".to_string()]
        );
    }
}
