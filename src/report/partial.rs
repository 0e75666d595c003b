//! [`Partial`]: the report of a set of ranks, in a form that merges
//! (documented on the type).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::input::{RankInput, ReportOptions};
use super::stats::{Acc, Sum, compare, is_zero};
use crate::export::snapshot::{Number, ProcessInfo, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};

/// Which instance of a variable a [`VarReport`](super::VarReport) is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// Distinct program names (and engine versions) a partial keeps.
pub(super) const MAX_NAMES: usize = 8;
/// How many ranks' pids a partial keeps (the lowest ranks).
pub(super) const MAX_PIDS: usize = 16;

/// The report of a set of ranks, ready to merge with another set's.
///
/// A rank makes its partial from its input ([`Partial::of_rank`]); two
/// partials of disjoint sets of ranks merge into the partial of their
/// union ([`Partial::merge`]); the partial of every rank finishes into a
/// [`JobReport`](super::JobReport). Merging is associative and commutative
/// (up to the rounding of floating-point sums), so any reduction tree
/// gives the same report: the MPI transports use a binomial tree
/// ([`tree`](super::tree)), a simulation folds the partials of any number
/// of synthetic ranks in one process.
///
/// Its size depends on the variables, the communicators and the options,
/// never on the number of ranks:
///
/// - per variable instance (name, class and object label, the *key*):
///   its metadata and one accumulator per element (count, exact sum, min and
///   max with their ranks);
/// - per per-peer array (see the module documentation of
///   [`report`](super)): the statistics of the rank totals (what each rank
///   sent), the matrix summed into at most `matrix_bins × matrix_bins`
///   blocks of consecutive ranks (kept sparse: only nonzero blocks), and
///   the `top_pairs` largest (from, to) elements;
/// - per profile series (a per-rank sum, e.g. the time in timers): its
///   statistics per block of consecutive ranks, at most `profile_bins`
///   blocks;
/// - about the ranks: how many, their programs and engine versions (up to
///   8 distinct names each), the pids of the first 16 ranks, wall time and
///   thread counts as statistics, the span of snapshot times.
///
/// The union of the keys is the job's schema: a variable (or a
/// communicator's instance) that only some ranks have is in it with the
/// statistics of those ranks, so no agreement step is needed before the
/// reduction.
///
/// Made by
/// [`Partial::of_rank`], moved as bytes by [`Partial::encode`] /
/// [`Partial::decode`], finished by
/// [`JobReport::from_partial`](super::JobReport::from_partial).
///
/// ```
/// use pvar::Registry;
/// use pvar::report::{Collector, JobReport, Partial, ReportOptions};
///
/// let options = ReportOptions::default();
/// let mut job: Option<Partial> = None;
/// for rank in 0..3u32 {
///     let reg = Registry::new();
///     let mut collector = Collector::new(&reg);
///     reg.counter("msgs").register()?.add(10 * u64::from(rank + 1));
///     let mine = Partial::of_rank(&collector.input(Some(rank), vec![]), rank, 3, &options);
///     // Over the wire and back, as a reduction moves it.
///     let mine = Partial::decode(&mine.encode())?;
///     match &mut job {
///         Some(p) => p.merge(mine),
///         None => job = Some(mine),
///     }
/// }
/// let report = JobReport::from_partial(job.unwrap(), options);
/// let msgs = report.variable("msgs").unwrap().elements[0].stats.clone().unwrap();
/// assert_eq!(msgs.total, Some(pvar::export::Number::Unsigned(60)));
/// assert_eq!((msgs.max_rank, msgs.min_rank), (2, 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    pub(super) shape: Shape,
    pub(super) ranks: RanksAcc,
    /// Sorted by key, keys unique.
    pub(super) entries: Vec<Entry>,
    /// Sorted by name, names unique.
    pub(super) profile: Vec<SeriesAcc>,
    pub(super) problems: Problems,
}

/// What every rank of a job must agree on for partials to merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// The number of ranks in the job.
    pub nranks: u32,
    /// Blocks per side of the per-peer matrices (at most `nranks`).
    pub matrix_bins: u32,
    /// Blocks of the profile series (at most `nranks`).
    pub profile_bins: u32,
    /// How many (from, to) pairs a per-peer array keeps.
    pub top_pairs: u32,
}

impl Shape {
    fn new(nranks: u32, options: &ReportOptions) -> Shape {
        let cap = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).clamp(1, nranks.max(1));
        Shape {
            nranks,
            matrix_bins: cap(options.matrix_bins),
            profile_bins: cap(options.profile_bins),
            top_pairs: u32::try_from(options.top_pairs).unwrap_or(u32::MAX),
        }
    }
}

/// The block of consecutive ranks (of `bins` blocks over `nranks` ranks)
/// that `rank` falls in: `rank × bins / nranks`.
pub(super) fn bin_of(rank: u64, nranks: u64, bins: u64) -> u64 {
    if nranks == 0 {
        return 0;
    }
    rank * bins / nranks
}

/// The ranks of block `bin`: the first and one past the last.
pub(super) fn bin_ranks(bin: u64, nranks: u64, bins: u64) -> (u64, u64) {
    let start = |b: u64| (b * nranks).div_ceil(bins.max(1));
    (start(bin), start(bin + 1).min(nranks))
}

/// Which instance of which variable: what the ranks' variables are
/// matched by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Key {
    pub name: String,
    pub class: PvarClass,
    pub instance: Instance,
}

/// One variable instance over a set of ranks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    pub key: Key,
    /// (rank, position in that rank's snapshot) of its first appearance:
    /// the lowest; the report lists variables in this order.
    pub first: (u32, u32),
    /// Metadata as the rank of `first` has it.
    pub datatype: Datatype,
    pub bind: BindKind,
    pub category: Option<String>,
    pub description: String,
    pub body: Body,
    /// Ranks whose instance had another shape (a per-peer array on one
    /// rank, a plain array on another) and were left out.
    pub conflicts: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Body {
    /// One accumulator per element (watermarks: of the marks).
    Elements(Vec<Acc>),
    /// A per-peer array.
    Peer(PeerAcc),
}

impl Body {
    /// How many ranks it covers.
    fn ranks(&self) -> u64 {
        match self {
            Body::Elements(e) => e.iter().map(|a| a.n).max().unwrap_or(0),
            Body::Peer(p) => p.sent.n,
        }
    }
}

/// A per-peer array over a set of ranks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PeerAcc {
    /// Over the ranks: each rank's row total (what it sent).
    pub sent: Acc,
    /// Nonzero blocks of the binned matrix, sorted by (row, column).
    pub cells: Vec<Cell>,
    /// The largest elements, largest first (then by from, to).
    pub top: Vec<Pair>,
}

/// One block of a binned matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cell {
    pub row: u32,
    pub col: u32,
    pub sum: Sum,
}

/// One element of a per-peer array: rank `from`'s value towards `to`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pair {
    pub value: Number,
    pub from: u32,
    pub to: u32,
}

/// A profile series: a per-rank value, its statistics per block of ranks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SeriesAcc {
    pub name: String,
    pub unit: Option<&'static str>,
    /// Sorted by block, blocks unique.
    pub bins: Vec<(u32, Acc)>,
}

/// About the ranks themselves.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RanksAcc {
    /// Ranks whose input is in.
    pub count: u64,
    /// Seconds since each rank's collector was made (ranks that know).
    pub elapsed: Acc,
    pub live_threads: Acc,
    /// Earliest and latest snapshot, ns since the Unix epoch.
    pub unix_ns: Option<(u64, u64)>,
    pub programs: Tally,
    pub engines: Tally,
    /// `(rank, pid)` of the lowest ranks, sorted.
    pub pids: Vec<(u32, u32)>,
}

/// Distinct names with how many ranks have each and the lowest of them;
/// beyond [`MAX_NAMES`] (those seen last by rank go), only counted.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Tally {
    /// Sorted by name.
    pub names: Vec<(String, u64, u32)>,
    pub other: u64,
}

/// Ranks whose partial is missing or malformed.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Problems {
    pub count: u64,
    /// The lowest rank's problem.
    pub first: Option<(u32, String)>,
}

impl Partial {
    /// The partial of no rank of a job of `nranks` ranks.
    fn empty(shape: Shape) -> Partial {
        Partial {
            shape,
            ranks: RanksAcc {
                count: 0,
                elapsed: Acc::EMPTY,
                live_threads: Acc::EMPTY,
                unix_ns: None,
                programs: Tally::default(),
                engines: Tally::default(),
                pids: Vec::new(),
            },
            entries: Vec::new(),
            profile: Vec::new(),
            problems: Problems::default(),
        }
    }

    /// Rank `rank`'s partial in a job of `nranks` ranks. Every rank must
    /// pass the same `nranks` and the same `options` (their per-peer rule,
    /// profile series and sizes shape the partial); see
    /// [`RankInput`] for what the input holds and
    /// the module documentation of [`report`](super) for how variables
    /// are matched.
    pub fn of_rank(input: &RankInput, rank: u32, nranks: u32, options: &ReportOptions) -> Partial {
        let shape = Shape::new(nranks, options);
        let mut p = Partial::empty(shape);
        let snap = &input.snapshot;
        p.ranks = RanksAcc::of(rank, &snap.process, input.elapsed);

        let mut labels: HashMap<u64, &str> = HashMap::new();
        for (object, label) in &input.labels {
            labels.entry(*object).or_insert(label.as_str());
        }
        let mut series: Vec<Option<Sum>> = vec![None; options.profile.len()];
        let mut peer_series: Vec<SeriesAcc> = Vec::new();
        let mut seen: HashSet<Key> = HashSet::new();
        for (index, v) in snap.variables.iter().enumerate() {
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
            let mut key = Key {
                name: v.name.clone(),
                class: v.class,
                instance: instance.clone(),
            };
            if seen.contains(&key) {
                // Two objects with one label on this rank: keep them apart
                // (they cannot be matched across ranks).
                instance = Instance::Labelled(format!(
                    "{} (object {:#x})",
                    instance.label(),
                    v.object.unwrap_or(0)
                ));
                key.instance = instance;
            }
            seen.insert(key.clone());
            let category = v
                .category
                .and_then(|c| snap.categories.get(c))
                .map(|c| c.name.clone());
            let (values, marks) = converted(v);
            for (rule, sum) in options.profile.iter().zip(series.iter_mut()) {
                if rule.class.is_none_or(|c| c == v.class) && v.name.starts_with(&rule.prefix) {
                    let s = sum.get_or_insert_with(Sum::default);
                    values.iter().for_each(|&n| s.add(n));
                }
            }
            let peer =
                values.len() == nranks as usize && options.is_peer(&v.name, category.as_deref());
            let body = if peer {
                let acc = PeerAcc::of_row(rank, &values, shape);
                let at = bin_of(
                    u64::from(rank),
                    u64::from(nranks),
                    u64::from(shape.profile_bins),
                );
                peer_series.push(SeriesAcc {
                    name: match &key.instance {
                        Instance::Process => v.name.clone(),
                        i => format!("{}@{}", v.name, i.label()),
                    },
                    unit: unit(v.class),
                    bins: vec![(at as u32, acc.sent)],
                });
                Body::Peer(acc)
            } else {
                Body::Elements(
                    values
                        .iter()
                        .enumerate()
                        .map(|(i, &value)| {
                            let mark = marks.as_ref().and_then(|m| m.get(i).copied());
                            let basis = if v.class.is_watermark() {
                                mark.unwrap_or(value)
                            } else {
                                value
                            };
                            let level_nonzero =
                                !is_zero(value) || mark.is_some_and(|m| !is_zero(m));
                            Acc::of(basis, rank, level_nonzero)
                        })
                        .collect(),
                )
            };
            p.entries.push(Entry {
                key,
                first: (rank, u32::try_from(index).unwrap_or(u32::MAX)),
                datatype: if v.class == PvarClass::Timer {
                    Datatype::Double
                } else {
                    v.datatype
                },
                bind: v.bind,
                category,
                description: v.description.clone(),
                body,
                conflicts: 0,
            });
        }
        p.entries.sort_by(|a, b| a.key.cmp(&b.key));

        let at = bin_of(
            u64::from(rank),
            u64::from(nranks),
            u64::from(shape.profile_bins),
        ) as u32;
        for (rule, sum) in options.profile.iter().zip(series) {
            if let Some(sum) = sum {
                peer_series.push(SeriesAcc {
                    name: rule.name.clone(),
                    unit: rule.class.and_then(unit),
                    bins: vec![(at, Acc::of(sum.total(), rank, false))],
                });
            }
        }
        peer_series.sort_by(|a, b| a.name.cmp(&b.name));
        peer_series.dedup_by(|b, a| a.name == b.name);
        p.profile = peer_series;
        p
    }

    /// The stand-in for rank `rank`, whose partial could not be made or
    /// read (`why`): it adds nothing but a problem the report names.
    pub fn missing(rank: u32, nranks: u32, options: &ReportOptions, why: &str) -> Partial {
        let mut p = Partial::empty(Shape::new(nranks, options));
        p.problems = Problems {
            count: 1,
            first: Some((rank, why.to_string())),
        };
        p
    }

    /// How many ranks' inputs are in it.
    pub fn ranks(&self) -> u64 {
        self.ranks.count
    }

    /// The number of ranks of the job it is a part of.
    pub fn nranks(&self) -> u32 {
        self.shape.nranks
    }

    /// Merges `other`, the partial of ranks this one does not cover. A
    /// partial of another shape (another job size or other options) is
    /// not merged: its ranks are counted as a problem.
    pub fn merge(&mut self, other: Partial) {
        if other.shape != self.shape {
            let lowest = other.ranks.pids.first().map_or(0, |p| p.0);
            self.problems.merge(Problems {
                count: other.ranks.count.max(1),
                first: Some((
                    lowest,
                    format!(
                        "a partial of another shape ({:?}, this job's: {:?})",
                        other.shape, self.shape
                    ),
                )),
            });
            return;
        }
        self.ranks.merge(other.ranks);
        let top = self.shape.top_pairs as usize;
        self.entries = merge_sorted(
            std::mem::take(&mut self.entries),
            other.entries,
            |a, b| a.key.cmp(&b.key),
            |a, b| a.merge(b, top),
        );
        self.profile = merge_sorted(
            std::mem::take(&mut self.profile),
            other.profile,
            |a, b| a.name.cmp(&b.name),
            |a, b| {
                a.bins = merge_sorted(
                    std::mem::take(&mut a.bins),
                    b.bins,
                    |x, y| x.0.cmp(&y.0),
                    |x, y| x.1.merge(&y.1),
                );
            },
        );
        self.problems.merge(other.problems);
    }
}

/// A variable's values and marks, TIMER converted to seconds (other
/// classes borrowed as they are: a per-peer array is not copied).
fn converted(v: &VarSnapshot) -> (Cow<'_, [Number]>, Option<Cow<'_, [Number]>>) {
    if v.class != PvarClass::Timer {
        return (
            Cow::Borrowed(&v.values),
            v.marks.as_deref().map(Cow::Borrowed),
        );
    }
    let seconds = |n: &Number| match n {
        Number::Double(_) => *n,
        n => Number::Double(n.as_f64() / 1e9),
    };
    (
        Cow::Owned(v.values.iter().map(seconds).collect()),
        v.marks
            .as_ref()
            .map(|m| Cow::Owned(m.iter().map(seconds).collect())),
    )
}

/// The unit of a class's values in the report.
pub(super) fn unit(class: PvarClass) -> Option<&'static str> {
    match class {
        PvarClass::Timer => Some("seconds"),
        PvarClass::Percentage => Some("ratio"),
        _ => None,
    }
}

/// Two sorted lists with unique keys into one: items with equal keys
/// are combined by `combine(into, from)`.
fn merge_sorted<T>(
    a: Vec<T>,
    b: Vec<T>,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
    mut combine: impl FnMut(&mut T, T),
) -> Vec<T> {
    if b.is_empty() {
        return a;
    }
    if a.is_empty() {
        return b;
    }
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let mut a = a.into_iter().peekable();
    let mut b = b.into_iter().peekable();
    loop {
        let order = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp(x, y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => break,
        };
        match order {
            std::cmp::Ordering::Less => out.extend(a.next()),
            std::cmp::Ordering::Greater => out.extend(b.next()),
            std::cmp::Ordering::Equal => {
                let (Some(mut x), Some(y)) = (a.next(), b.next()) else {
                    break;
                };
                combine(&mut x, y);
                out.push(x);
            }
        }
    }
    out
}

impl Entry {
    fn merge(&mut self, o: Entry, top: usize) {
        let mut o = o;
        if o.first < self.first {
            // The metadata and, on a conflict, the shape of the first
            // appearance win.
            std::mem::swap(&mut self.datatype, &mut o.datatype);
            std::mem::swap(&mut self.bind, &mut o.bind);
            std::mem::swap(&mut self.category, &mut o.category);
            std::mem::swap(&mut self.description, &mut o.description);
            self.first = o.first;
            if std::mem::discriminant(&self.body) != std::mem::discriminant(&o.body) {
                std::mem::swap(&mut self.body, &mut o.body);
            }
        }
        self.conflicts += o.conflicts;
        match (&mut self.body, o.body) {
            (Body::Elements(a), Body::Elements(b)) => {
                if a.len() < b.len() {
                    a.resize(b.len(), Acc::EMPTY);
                }
                a.iter_mut().zip(&b).for_each(|(x, y)| x.merge(y));
            }
            (Body::Peer(a), Body::Peer(b)) => a.merge(b, top),
            (_, other) => self.conflicts += other.ranks(),
        }
    }
}

impl PeerAcc {
    /// Rank `rank`'s row.
    fn of_row(rank: u32, row: &[Number], shape: Shape) -> PeerAcc {
        let (n, bins) = (u64::from(shape.nranks), u64::from(shape.matrix_bins));
        let row_bin = bin_of(u64::from(rank), n, bins) as u32;
        let mut total = Sum::default();
        let mut cells: Vec<Cell> = Vec::new();
        let mut top: Vec<Pair> = Vec::new();
        for (to, &value) in row.iter().enumerate() {
            total.add(value);
            if is_zero(value) {
                continue;
            }
            let col = bin_of(to as u64, n, bins) as u32;
            match cells.last_mut() {
                Some(c) if c.col == col => c.sum.add(value),
                _ => cells.push(Cell {
                    row: row_bin,
                    col,
                    sum: Sum::of(value),
                }),
            }
            top.push(Pair {
                value,
                from: rank,
                to: to as u32,
            });
        }
        let keep = shape.top_pairs as usize;
        if top.len() > keep {
            top.select_nth_unstable_by(keep, pair_order);
            top.truncate(keep);
        }
        top.sort_by(pair_order);
        PeerAcc {
            sent: Acc::of(total.total(), rank, !total.is_zero()),
            cells,
            top,
        }
    }

    fn merge(&mut self, o: PeerAcc, top: usize) {
        self.sent.merge(&o.sent);
        self.cells = merge_sorted(
            std::mem::take(&mut self.cells),
            o.cells,
            |a, b| (a.row, a.col).cmp(&(b.row, b.col)),
            |a, b| a.sum.merge(&b.sum),
        );
        let mut pairs = std::mem::take(&mut self.top);
        pairs.extend(o.top);
        pairs.sort_by(pair_order);
        pairs.truncate(top);
        self.top = pairs;
    }
}

/// Largest value first, then by (from, to).
pub(super) fn pair_order(a: &Pair, b: &Pair) -> std::cmp::Ordering {
    compare(b.value, a.value).then((a.from, a.to).cmp(&(b.from, b.to)))
}

impl RanksAcc {
    fn of(rank: u32, p: &ProcessInfo, elapsed: Option<std::time::Duration>) -> RanksAcc {
        RanksAcc {
            count: 1,
            elapsed: elapsed.map_or(Acc::EMPTY, |d| {
                Acc::of(Number::Double(d.as_secs_f64()), rank, false)
            }),
            live_threads: Acc::of(Number::Unsigned(u64::from(p.live_threads)), rank, false),
            unix_ns: Some((p.unix_ns, p.unix_ns)),
            programs: Tally::of(&p.program, rank),
            engines: Tally::of(&p.engine_version, rank),
            pids: vec![(rank, p.pid)],
        }
    }

    fn merge(&mut self, o: RanksAcc) {
        self.count += o.count;
        self.elapsed.merge(&o.elapsed);
        self.live_threads.merge(&o.live_threads);
        self.unix_ns = match (self.unix_ns, o.unix_ns) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        self.programs.merge(o.programs);
        self.engines.merge(o.engines);
        self.pids = merge_sorted(
            std::mem::take(&mut self.pids),
            o.pids,
            |a, b| a.0.cmp(&b.0),
            |_, _| {},
        );
        self.pids.truncate(MAX_PIDS);
    }
}

impl Tally {
    fn of(name: &str, rank: u32) -> Tally {
        Tally {
            names: vec![(name.to_string(), 1, rank)],
            other: 0,
        }
    }

    fn merge(&mut self, o: Tally) {
        self.other += o.other;
        let mut names = merge_sorted(
            std::mem::take(&mut self.names),
            o.names,
            |a, b| a.0.cmp(&b.0),
            |a, b| {
                a.1 += b.1;
                a.2 = a.2.min(b.2);
            },
        );
        if names.len() > MAX_NAMES {
            names.sort_by_key(|n| n.2);
            self.other += names[MAX_NAMES..].iter().map(|n| n.1).sum::<u64>();
            names.truncate(MAX_NAMES);
            names.sort_by(|a, b| a.0.cmp(&b.0));
        }
        self.names = names;
    }
}

impl Problems {
    fn merge(&mut self, o: Problems) {
        self.count += o.count;
        self.first = match (self.first.take(), o.first) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_every_rank_once_in_order() {
        for (n, b) in [(10u64, 3u64), (7, 7), (100_000, 256), (5, 1), (300, 256)] {
            let mut next = 0;
            for bin in 0..b {
                let (start, end) = bin_ranks(bin, n, b);
                assert_eq!(start, next, "n={n} b={b} bin={bin}");
                assert!(end > start, "n={n} b={b} bin={bin} is empty");
                for r in start..end {
                    assert_eq!(bin_of(r, n, b), bin, "n={n} b={b} r={r}");
                }
                next = end;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn merging_sorted_lists_combines_equal_keys() {
        let merged = merge_sorted(
            vec![(1, 10), (3, 30), (5, 50)],
            vec![(2, 20), (3, 3), (6, 60)],
            |a, b| a.0.cmp(&b.0),
            |a, b| a.1 += b.1,
        );
        assert_eq!(merged, [(1, 10), (2, 20), (3, 33), (5, 50), (6, 60)]);
    }

    #[test]
    fn tallies_keep_the_names_of_the_lowest_ranks() {
        let mut t = Tally::of("a", 0);
        for r in 1..20u32 {
            t.merge(Tally::of(&format!("p{r:02}"), r));
        }
        t.merge(Tally::of("a", 30));
        assert_eq!(t.names.len(), MAX_NAMES);
        assert_eq!(t.names.iter().map(|n| n.1).sum::<u64>() + t.other, 21);
        assert!(t.names.iter().any(|n| n.0 == "a" && n.1 == 2 && n.2 == 0));
        assert!(!t.names.iter().any(|n| n.0 == "p19"));
    }
}
