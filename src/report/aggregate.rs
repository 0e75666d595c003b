//! Matching the ranks' variables and computing the figures of a
//! [`JobReport`].

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::{RankInput, ReportError, ReportOptions};
use crate::export::snapshot::{Number, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};

/// One rank of the job: where its snapshot was taken and the labels it
/// gave.
#[derive(Debug, Clone, PartialEq)]
pub struct RankInfo {
    /// The rank (its position in the inputs).
    pub rank: usize,
    /// Process id.
    pub pid: u32,
    /// Program name (may be empty).
    pub program: String,
    /// The pvar version that took the snapshot.
    pub engine_version: String,
    /// When the snapshot was taken, nanoseconds since the Unix epoch.
    pub unix_ns: u64,
    /// Threads holding a pvar thread id at the time.
    pub live_threads: u32,
    /// How long the rank had been running (since its collector was
    /// made), if known.
    pub elapsed: Option<Duration>,
    /// The object labels it gave, `(object, label)`.
    pub labels: Vec<(u64, String)>,
}

/// Which instance of a variable a [`VarReport`] is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instance {
    /// An unbound variable: one per process.
    Process,
    /// A bound variable's instance for the object every reporting rank
    /// labelled so.
    Labelled(String),
    /// A bound variable's instance for an object no rank labelled,
    /// matched across ranks by the object value.
    Object(u64),
}

impl Instance {
    /// The label shown for it: empty for [`Instance::Process`], the label,
    /// or `object 0x…`.
    pub fn label(&self) -> String {
        match self {
            Instance::Process => String::new(),
            Instance::Labelled(l) => l.clone(),
            Instance::Object(o) => format!("object {o:#x}"),
        }
    }
}

/// Figures over the ranks that report one element.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// How many ranks report the element.
    pub ranks: usize,
    /// Sum over those ranks, for COUNTER, AGGREGATE, TIMER, LEVEL and SIZE
    /// (integer sums saturate at the type's bounds).
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

/// One element of a variable across the ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementReport {
    /// The element's index.
    pub index: usize,
    /// Its name, from [`ReportOptions::element_names`].
    pub name: Option<String>,
    /// Per rank (by position): the value, `None` where the rank does not
    /// report it. Watermarks: the current level.
    pub values: Vec<Option<Number>>,
    /// Watermarks: per rank, the mark (`None` where the rank has none).
    pub marks: Option<Vec<Option<Number>>>,
    /// Figures over the reporting ranks (of the marks for a watermark,
    /// the level where a rank has no mark); `None` if no rank reports it.
    pub stats: Option<Stats>,
}

/// One variable (or one bound instance of it) across the ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct VarReport {
    /// Its name.
    pub name: String,
    /// Its class.
    pub class: PvarClass,
    /// The datatype of the values: as the first reporting rank has it,
    /// except TIMER, always `MPI_DOUBLE` seconds here.
    pub datatype: Datatype,
    /// The unit of its values where the class fixes one: TIMER
    /// `"seconds"`, PERCENTAGE `"ratio"`.
    pub unit: Option<&'static str>,
    /// Its description (first reporting rank).
    pub description: String,
    /// Its category's name, if any (first reporting rank).
    pub category: Option<String>,
    /// The kind of object it is bound to.
    pub bind: BindKind,
    /// Which instance this is.
    pub instance: Instance,
    /// Whether it is shown as a per-peer matrix (see the module
    /// documentation).
    pub peer_matrix: bool,
    /// Per element.
    pub elements: Vec<ElementReport>,
}

impl VarReport {
    /// Whether [`Stats::total`] is given (COUNTER, AGGREGATE, TIMER,
    /// LEVEL, SIZE).
    pub fn has_total(&self) -> bool {
        has_total(self.class)
    }

    /// The name of element `i` for display: `name` for a one-element
    /// variable, `name[i]` or `name[element name]` otherwise.
    pub fn element_label(&self, i: usize) -> String {
        if self.elements.len() == 1 && i == 0 {
            return self.name.clone();
        }
        match self.elements.get(i).and_then(|e| e.name.as_deref()) {
            Some(n) => format!("{}[{n}]", self.name),
            None => format!("{}[{i}]", self.name),
        }
    }

    /// The per-peer matrix: row = rank, column = element (`None` where
    /// the rank does not report the element); `None` unless
    /// [`VarReport::peer_matrix`].
    pub fn matrix(&self) -> Option<Vec<Vec<Option<Number>>>> {
        if !self.peer_matrix {
            return None;
        }
        let nranks = self.elements.first().map_or(0, |e| e.values.len());
        Some(
            (0..nranks)
                .map(|r| self.elements.iter().map(|e| e.values[r]).collect())
                .collect(),
        )
    }
}

/// The figures of a job: one [`VarReport`] per variable (and bound
/// instance) with its values on every rank. See the module documentation
/// for the matching rules and what is computed per class.
#[derive(Debug, Clone, PartialEq)]
pub struct JobReport {
    /// The ranks, in order.
    pub ranks: Vec<RankInfo>,
    /// The variables reported, in order of first appearance (rank 0's
    /// index order first); bound instances follow their variable,
    /// labelled ones first.
    pub variables: Vec<VarReport>,
    /// Variables (as `name` or `name@label`) left out because they are
    /// zero on every rank.
    pub skipped_zero: Vec<String>,
    /// The options it was made with.
    pub options: ReportOptions,
}

impl JobReport {
    /// The report of `inputs`, rank 0 first, with the default
    /// [`ReportOptions`].
    pub fn from_ranks(inputs: Vec<RankInput>) -> Result<JobReport, ReportError> {
        JobReport::from_ranks_with(inputs, ReportOptions::default())
    }

    /// The report of `inputs`, rank 0 first. Refuses an empty list and an
    /// input whose [`RankInput::rank`] is given and is not its position.
    pub fn from_ranks_with(
        inputs: Vec<RankInput>,
        options: ReportOptions,
    ) -> Result<JobReport, ReportError> {
        if inputs.is_empty() {
            return Err(ReportError::Ranks("no rank inputs".into()));
        }
        for (i, input) in inputs.iter().enumerate() {
            if let Some(r) = input.rank
                && r as usize != i
            {
                return Err(ReportError::Ranks(format!(
                    "input {i} says it is rank {r}: inputs must be in rank order"
                )));
            }
        }
        let nranks = inputs.len();
        let mut entries: Vec<Entry> = Vec::new();
        let mut by_key: HashMap<(String, PvarClass, Instance), usize> = HashMap::new();
        let mut ranks = Vec::with_capacity(nranks);
        for (r, input) in inputs.into_iter().enumerate() {
            let mut labels: HashMap<u64, &str> = HashMap::new();
            for (object, label) in &input.labels {
                labels.entry(*object).or_insert(label.as_str());
            }
            let mut seen: HashSet<(String, PvarClass, Instance)> = HashSet::new();
            for v in &input.snapshot.variables {
                if v.values.is_empty() {
                    continue;
                }
                let mut instance = match v.object {
                    None => Instance::Process,
                    Some(o) => match labels.get(&o) {
                        Some(l) => Instance::Labelled((*l).to_string()),
                        None => Instance::Object(o),
                    },
                };
                let mut key = (v.name.clone(), v.class, instance.clone());
                if seen.contains(&key) {
                    // Two objects with one label on this rank: keep them
                    // apart (they cannot be matched across ranks).
                    instance = Instance::Labelled(format!(
                        "{} (object {:#x})",
                        instance.label(),
                        v.object.unwrap_or(0)
                    ));
                    key.2 = instance.clone();
                }
                seen.insert(key.clone());
                let at = *by_key.entry(key).or_insert_with(|| {
                    let category = v
                        .category
                        .and_then(|c| input.snapshot.categories.get(c))
                        .map(|c| c.name.clone());
                    entries.push(Entry::new(v, instance, category, nranks));
                    entries.len() - 1
                });
                entries[at].per_rank[r] = Some(rank_values(v));
            }
            let p = input.snapshot.process;
            ranks.push(RankInfo {
                rank: r,
                pid: p.pid,
                program: p.program,
                engine_version: p.engine_version,
                unix_ns: p.unix_ns,
                live_threads: p.live_threads,
                elapsed: input.elapsed,
                labels: input.labels,
            });
        }
        // Bound instances right after their variable's first row.
        let mut order: Vec<usize> = (0..entries.len()).collect();
        let first_of: HashMap<(&str, PvarClass), usize> =
            entries
                .iter()
                .enumerate()
                .rev()
                .fold(HashMap::new(), |mut m, (i, e)| {
                    m.insert((e.name.as_str(), e.class), i);
                    m
                });
        // Labelled instances before the unlabelled ones.
        order.sort_by_key(|&i| {
            let e = &entries[i];
            let unlabelled = matches!(e.instance, Instance::Object(_));
            (first_of[&(e.name.as_str(), e.class)], unlabelled, i)
        });
        let mut variables = Vec::new();
        let mut skipped_zero = Vec::new();
        let mut slots: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
        for i in order {
            let Some(e) = slots[i].take() else { continue };
            let var = e.finish(nranks, &options);
            if !options.include_zero && all_zero(&var) {
                skipped_zero.push(match &var.instance {
                    Instance::Process => var.name.clone(),
                    other => format!("{}@{}", var.name, other.label()),
                });
                continue;
            }
            variables.push(var);
        }
        Ok(JobReport {
            ranks,
            variables,
            skipped_zero,
            options,
        })
    }

    /// The unbound variable `name` (the first of that name, if several
    /// classes share it).
    pub fn variable(&self, name: &str) -> Option<&VarReport> {
        self.variables
            .iter()
            .find(|v| v.name == name && v.instance == Instance::Process)
    }

    /// Bound variable `name`'s instance for the object labelled `label`.
    pub fn instance(&self, name: &str, label: &str) -> Option<&VarReport> {
        self.variables
            .iter()
            .find(|v| v.name == name && matches!(&v.instance, Instance::Labelled(l) if l == label))
    }

    /// The variables shown as per-peer matrices.
    pub fn matrices(&self) -> impl Iterator<Item = &VarReport> {
        self.variables.iter().filter(|v| v.peer_matrix)
    }

    /// The longest [`RankInfo::elapsed`] and its rank, if any rank knows
    /// its wall time.
    pub fn wall_time(&self) -> Option<(Duration, usize)> {
        let mut best: Option<(Duration, usize)> = None;
        for r in &self.ranks {
            if let Some(d) = r.elapsed
                && best.is_none_or(|(b, _)| d > b)
            {
                best = Some((d, r.rank));
            }
        }
        best
    }
}

/// COUNTER, AGGREGATE, TIMER, LEVEL, SIZE: the sum over ranks means
/// something.
fn has_total(class: PvarClass) -> bool {
    class.is_sum() || matches!(class, PvarClass::Level | PvarClass::Size)
}

/// One rank's values of a variable instance, and its marks (watermarks).
type RankValues = (Vec<Number>, Option<Vec<Number>>);

/// A variable instance while the ranks are read.
struct Entry {
    name: String,
    class: PvarClass,
    datatype: Datatype,
    description: String,
    category: Option<String>,
    bind: BindKind,
    instance: Instance,
    /// Per rank: values and marks (converted: TIMER in seconds).
    per_rank: Vec<Option<RankValues>>,
}

impl Entry {
    fn new(v: &VarSnapshot, instance: Instance, category: Option<String>, nranks: usize) -> Entry {
        Entry {
            name: v.name.clone(),
            class: v.class,
            datatype: if v.class == PvarClass::Timer {
                Datatype::Double
            } else {
                v.datatype
            },
            description: v.description.clone(),
            category,
            bind: v.bind,
            instance,
            per_rank: vec![None; nranks],
        }
    }

    fn finish(self, nranks: usize, options: &ReportOptions) -> VarReport {
        let count = self
            .per_rank
            .iter()
            .flatten()
            .map(|(v, _)| v.len())
            .max()
            .unwrap_or(0);
        let has_marks =
            self.class.is_watermark() && self.per_rank.iter().flatten().any(|(_, m)| m.is_some());
        let names = options
            .element_names
            .iter()
            .find(|(n, _)| *n == self.name)
            .map(|(_, names)| names.as_slice())
            .unwrap_or(&[]);
        let elements = (0..count)
            .map(|i| {
                let values: Vec<Option<Number>> = self
                    .per_rank
                    .iter()
                    .map(|r| r.as_ref().and_then(|(v, _)| v.get(i).copied()))
                    .collect();
                let marks: Option<Vec<Option<Number>>> = has_marks.then(|| {
                    self.per_rank
                        .iter()
                        .map(|r| {
                            r.as_ref()
                                .and_then(|(_, m)| m.as_ref())
                                .and_then(|m| m.get(i).copied())
                        })
                        .collect()
                });
                // A watermark's figures are of its marks (the level where
                // a rank has none).
                let basis: Vec<Option<Number>> = match &marks {
                    Some(m) => m.iter().zip(&values).map(|(m, v)| m.or(*v)).collect(),
                    None => values.clone(),
                };
                ElementReport {
                    index: i,
                    name: names.get(i).cloned(),
                    stats: stats(self.class, &basis),
                    values,
                    marks,
                }
            })
            .collect();
        let peer_matrix = count == nranks
            && count > 0
            && (options.peer_variables.contains(&self.name)
                || (options.auto_peer
                    && (self
                        .category
                        .as_deref()
                        .is_some_and(|c| c.ends_with("_peer"))
                        || self.name.split('_').any(|w| w == "peer"))));
        VarReport {
            unit: match self.class {
                PvarClass::Timer => Some("seconds"),
                PvarClass::Percentage => Some("ratio"),
                _ => None,
            },
            name: self.name,
            class: self.class,
            datatype: self.datatype,
            description: self.description,
            category: self.category,
            bind: self.bind,
            instance: self.instance,
            peer_matrix,
            elements,
        }
    }
}

/// A rank's values and marks, TIMER converted to seconds.
fn rank_values(v: &VarSnapshot) -> RankValues {
    let convert = |n: Number| match (v.class, n) {
        (PvarClass::Timer, Number::Double(_)) => n,
        (PvarClass::Timer, n) => Number::Double(n.as_f64() / 1e9),
        _ => n,
    };
    (
        v.values.iter().copied().map(convert).collect(),
        v.marks
            .as_ref()
            .map(|m| m.iter().copied().map(convert).collect()),
    )
}

fn is_zero(n: Number) -> bool {
    match n {
        Number::Unsigned(u) => u == 0,
        Number::Signed(i) => i == 0,
        Number::Double(d) => d == 0.0,
    }
}

fn all_zero(v: &VarReport) -> bool {
    v.elements.iter().all(|e| {
        e.values.iter().flatten().all(|n| is_zero(*n))
            && e.marks.iter().flatten().flatten().all(|n| is_zero(*n))
    })
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

/// The sum of `nums`: exact for integers (saturating at the type's
/// bounds), `f64` as soon as one is a double. Also returns the sum as
/// `f64` (from the exact integer sum).
pub(super) fn sum(nums: &[Number]) -> (Number, f64) {
    if nums.iter().any(|n| matches!(n, Number::Double(_))) {
        let s: f64 = nums.iter().map(|n| n.as_f64()).sum();
        return (Number::Double(s), s);
    }
    let s: i128 = nums
        .iter()
        .map(|n| match *n {
            Number::Unsigned(u) => i128::from(u),
            Number::Signed(i) => i128::from(i),
            Number::Double(_) => 0,
        })
        .fold(0i128, |a, b| a.saturating_add(b));
    let exact = if nums.iter().any(|n| matches!(n, Number::Signed(_))) {
        Number::Signed(s.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
    } else {
        Number::Unsigned(s.clamp(0, i128::from(u64::MAX)) as u64)
    };
    (exact, s as f64)
}

/// The figures over the ranks that report a value.
fn stats(class: PvarClass, values: &[Option<Number>]) -> Option<Stats> {
    let present: Vec<(usize, Number)> = values
        .iter()
        .enumerate()
        .filter_map(|(r, v)| v.map(|v| (r, v)))
        .collect();
    let &(first_rank, first) = present.first()?;
    let (mut min, mut min_rank, mut max, mut max_rank) = (first, first_rank, first, first_rank);
    for &(r, v) in &present[1..] {
        if compare(v, min) == Ordering::Less {
            (min, min_rank) = (v, r);
        }
        if compare(v, max) == Ordering::Greater {
            (max, max_rank) = (v, r);
        }
    }
    let nums: Vec<Number> = present.iter().map(|&(_, v)| v).collect();
    let (total, total_f64) = sum(&nums);
    let mean = total_f64 / present.len() as f64;
    let balanced = !matches!(class, PvarClass::State | PvarClass::Generic);
    let max_f = max.as_f64();
    Some(Stats {
        ranks: present.len(),
        total: has_total(class).then_some(total),
        min,
        min_rank,
        mean,
        max,
        max_rank,
        imbalance: (balanced && mean != 0.0).then(|| max_f / mean),
        imbalance_fraction: (balanced && max_f != 0.0).then(|| (max_f - mean) / max_f),
        mark: match class {
            PvarClass::HighWatermark => Some((max, max_rank)),
            PvarClass::LowWatermark => Some((min, min_rank)),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_pick_the_lowest_rank_on_ties_and_skip_absent_ranks() {
        let u = Number::Unsigned;
        let s = stats(
            PvarClass::Counter,
            &[Some(u(4)), None, Some(u(8)), Some(u(8)), Some(u(4))],
        )
        .unwrap();
        assert_eq!(s.ranks, 4);
        assert_eq!((s.min, s.min_rank, s.max, s.max_rank), (u(4), 0, u(8), 2));
        assert_eq!(s.total, Some(u(24)));
        assert_eq!(s.mean, 6.0);
        assert_eq!(s.imbalance, Some(8.0 / 6.0));
        assert_eq!(s.imbalance_fraction, Some(0.25));
        assert!(stats(PvarClass::Counter, &[None, None]).is_none());
    }

    #[test]
    fn zero_means_no_imbalance_and_state_has_none() {
        let s = stats(PvarClass::Counter, &[Some(Number::Unsigned(0))]).unwrap();
        assert_eq!((s.imbalance, s.imbalance_fraction), (None, None));
        let s = stats(
            PvarClass::State,
            &[Some(Number::Signed(1)), Some(Number::Signed(3))],
        )
        .unwrap();
        assert_eq!((s.imbalance, s.total), (None, None));
        assert_eq!(s.mean, 2.0);
    }

    #[test]
    fn sums_are_exact_and_saturate() {
        let big = Number::Unsigned(u64::MAX - 1);
        assert_eq!(
            sum(&[big, Number::Unsigned(5)]).0,
            Number::Unsigned(u64::MAX)
        );
        assert_eq!(
            sum(&[Number::Unsigned(3), Number::Signed(-5)]).0,
            Number::Signed(-2)
        );
        assert_eq!(
            sum(&[Number::Unsigned(1), Number::Double(0.5)]).0,
            Number::Double(1.5)
        );
        assert_eq!(
            compare(Number::Signed(-1), Number::Unsigned(u64::MAX)),
            Ordering::Less
        );
    }
}
