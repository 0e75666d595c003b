//! The figures of a job, finished from the [`Partial`] of all its ranks:
//! [`JobReport`] and what it holds.

use std::collections::HashMap;
use std::ops::Range;
use std::time::Duration;

use super::input::{RankInput, ReportError, ReportOptions};
use super::partial::{Body, Entry, Instance, Partial, bin_of, bin_ranks, unit};
use super::stats::{Acc, Stats, has_total};
use crate::export::snapshot::Number;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};

/// One element of a variable across the ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementReport {
    /// The element's index.
    pub index: usize,
    /// Its name, from [`ReportOptions::element_names`].
    pub name: Option<String>,
    /// Figures over the reporting ranks (watermarks: of the marks, the
    /// level where a rank has none); `None` if no rank reports it.
    pub stats: Option<Stats>,
    /// Some rank's value (or a watermark's level or mark) is not 0.
    pub nonzero: bool,
}

/// A per-peer array across the ranks: the rank × rank matrix summed into
/// blocks of consecutive ranks, its largest elements, and what each rank
/// sent.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerReport {
    /// The number of ranks of the job (the matrix is `nranks × nranks`).
    pub nranks: usize,
    /// Blocks per side: the matrix is summed into `bins × bins` blocks of
    /// consecutive ranks ([`PeerReport::bin_ranks`]); `bins == nranks`
    /// is the exact matrix.
    pub bins: usize,
    /// Over the ranks: each rank's row total (what it sent).
    pub sent: Option<Stats>,
    /// The sum of every element.
    pub total: Number,
    /// The blocks that are not zero, by row then column.
    pub cells: Vec<MatrixCell>,
    /// The largest elements, largest first (ties: by from, then to), at
    /// most [`ReportOptions::top_pairs`].
    pub top: Vec<PeerPair>,
}

/// One block of a binned matrix: the sum of the elements from the ranks
/// of block `row` to the ranks of block `col`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixCell {
    /// Row block (senders).
    pub row: usize,
    /// Column block (destinations).
    pub col: usize,
    /// The sum.
    pub value: Number,
}

/// One element of a per-peer array: what rank `from` did towards `to`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerPair {
    /// The rank (row).
    pub from: usize,
    /// The element (column).
    pub to: usize,
    /// Its value.
    pub value: Number,
}

impl PeerReport {
    /// Whether every block is one rank: the matrix is exact.
    pub fn is_exact(&self) -> bool {
        self.bins == self.nranks
    }

    /// The block of `rank`.
    pub fn bin_of(&self, rank: usize) -> usize {
        bin_of(rank as u64, self.nranks as u64, self.bins as u64) as usize
    }

    /// The ranks of block `bin`.
    pub fn bin_ranks(&self, bin: usize) -> Range<usize> {
        let (a, b) = bin_ranks(bin as u64, self.nranks as u64, self.bins as u64);
        a as usize..b as usize
    }

    /// The binned matrix, `bins × bins`, zero where no block is listed.
    pub fn dense(&self) -> Vec<Vec<Number>> {
        let zero = match self.total {
            Number::Double(_) => Number::Double(0.0),
            Number::Signed(_) => Number::Signed(0),
            Number::Unsigned(_) => Number::Unsigned(0),
        };
        let mut rows = vec![vec![zero; self.bins]; self.bins];
        for c in &self.cells {
            rows[c.row][c.col] = c.value;
        }
        rows
    }
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
    /// Per element (empty for a per-peer array: see [`VarReport::peer`]).
    pub elements: Vec<ElementReport>,
    /// A per-peer array's matrix (see the module documentation).
    pub peer: Option<PeerReport>,
    /// Ranks left out because their instance had another shape (a
    /// per-peer array on some ranks, a plain array on others).
    pub inconsistent_ranks: u64,
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

    /// Its name and label as the report's lists of variables write it:
    /// `name`, or `name@label` for a bound instance.
    pub fn key(&self) -> String {
        match &self.instance {
            Instance::Process => self.name.clone(),
            other => format!("{}@{}", self.name, other.label()),
        }
    }
}

/// A per-rank value (a profile series: time in timers, what a rank sent)
/// per block of consecutive ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileReport {
    /// The series' name ([`ProfileSeries::name`](super::ProfileSeries),
    /// or a per-peer array's name for its row totals).
    pub name: String,
    /// `"seconds"` for times.
    pub unit: Option<&'static str>,
    /// The number of ranks of the job.
    pub nranks: usize,
    /// Blocks of consecutive ranks (`bins == nranks`: one rank each).
    pub bins: usize,
    /// Over every rank that has the value.
    pub overall: Option<Stats>,
    /// Per block that has a value, in order.
    pub blocks: Vec<ProfileBlock>,
}

/// One block of ranks of a [`ProfileReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileBlock {
    /// The block.
    pub bin: usize,
    /// Its ranks.
    pub ranks: Range<usize>,
    /// Over the ranks of the block that have the value.
    pub stats: Stats,
}

/// A distinct name (a program, an engine version) among the ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameCount {
    /// The name (may be empty).
    pub name: String,
    /// How many ranks have it.
    pub ranks: u64,
    /// The lowest of them.
    pub first_rank: usize,
}

/// About the ranks of the job.
#[derive(Debug, Clone, PartialEq)]
pub struct RanksSummary {
    /// Ranks whose input is in the report.
    pub reporting: u64,
    /// Program names (up to 8, by lowest rank), and how many ranks run
    /// others.
    pub programs: Vec<NameCount>,
    /// Ranks running programs not listed.
    pub other_programs: u64,
    /// pvar versions (up to 8).
    pub engines: Vec<NameCount>,
    /// Ranks with versions not listed.
    pub other_engines: u64,
    /// `(rank, pid)` of the first 16 ranks.
    pub pids: Vec<(usize, u32)>,
    /// Seconds since each rank's collector was made (ranks that know).
    pub elapsed: Option<Stats>,
    /// Threads holding a pvar thread id.
    pub live_threads: Option<Stats>,
    /// The earliest and latest snapshot, ns since the Unix epoch.
    pub unix_ns: Option<(u64, u64)>,
}

/// The figures of a job: per variable (and bound instance), statistics
/// over the ranks; per-peer arrays as binned matrices with their largest
/// pairs; per-rank profiles. See the module documentation for the
/// matching rules and what is computed per class.
#[derive(Debug, Clone, PartialEq)]
pub struct JobReport {
    /// The number of ranks of the job.
    pub nranks: usize,
    /// About the ranks.
    pub ranks: RanksSummary,
    /// The variables reported, in order of first appearance (rank 0's
    /// index order first); bound instances follow their variable,
    /// labelled ones first.
    pub variables: Vec<VarReport>,
    /// Variables (as `name` or `name@label`) left out because they are
    /// zero on every rank.
    pub skipped_zero: Vec<String>,
    /// Per-rank profiles, by name.
    pub profile: Vec<ProfileReport>,
    /// Ranks whose partial is missing or malformed: how many and the
    /// first (lowest rank) with why. Their values are not in the figures.
    pub problems: Option<(u64, usize, String)>,
    /// The options it was made with.
    pub options: ReportOptions,
}

impl JobReport {
    /// The report of `inputs`, rank 0 first, with the default
    /// [`ReportOptions`].
    pub fn from_ranks(inputs: Vec<RankInput>) -> Result<JobReport, ReportError> {
        JobReport::from_ranks_with(inputs, ReportOptions::default())
    }

    /// The report of `inputs`, rank 0 first: each made into its
    /// [`Partial`], merged, finished. Refuses an empty list and an input
    /// whose [`RankInput::rank`] is given and is not its position.
    pub fn from_ranks_with(
        inputs: Vec<RankInput>,
        options: ReportOptions,
    ) -> Result<JobReport, ReportError> {
        if inputs.is_empty() {
            return Err(ReportError::Ranks("no rank inputs".into()));
        }
        let nranks = u32::try_from(inputs.len())
            .map_err(|_| ReportError::Ranks(format!("{} ranks", inputs.len())))?;
        let mut job: Option<Partial> = None;
        for (i, input) in inputs.iter().enumerate() {
            if let Some(r) = input.rank
                && r as usize != i
            {
                return Err(ReportError::Ranks(format!(
                    "input {i} says it is rank {r}: inputs must be in rank order"
                )));
            }
            let p = Partial::of_rank(input, i as u32, nranks, &options);
            match &mut job {
                Some(j) => j.merge(p),
                None => job = Some(p),
            }
        }
        let job = job.ok_or_else(|| ReportError::Ranks("no rank inputs".into()))?;
        Ok(JobReport::from_partial(job, options))
    }

    /// The report of a job's [`Partial`] (all its ranks merged), with the
    /// options every rank used to make its partial.
    pub fn from_partial(partial: Partial, options: ReportOptions) -> JobReport {
        let nranks = partial.shape.nranks as usize;
        let Partial {
            shape,
            ranks,
            entries,
            profile,
            problems,
        } = partial;

        // Variables in order of first appearance, each variable's bound
        // instances right after its first row, labelled ones first.
        let mut group_first: HashMap<(&str, PvarClass), (u32, u32)> = HashMap::new();
        for e in &entries {
            let g = group_first
                .entry((e.key.name.as_str(), e.key.class))
                .or_insert(e.first);
            *g = (*g).min(e.first);
        }
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_by_key(|&i| {
            let e = &entries[i];
            let unlabelled = matches!(e.key.instance, Instance::Object(_));
            (
                group_first[&(e.key.name.as_str(), e.key.class)],
                unlabelled,
                e.first,
                i,
            )
        });
        drop(group_first);
        let mut slots: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
        let mut variables = Vec::new();
        let mut skipped_zero = Vec::new();
        for i in order {
            let Some(e) = slots[i].take() else { continue };
            let var = finish_entry(
                e,
                shape.nranks as usize,
                shape.matrix_bins as usize,
                &options,
            );
            let zero = var.elements.iter().all(|e| !e.nonzero)
                && var
                    .peer
                    .as_ref()
                    .is_none_or(|p| p.cells.is_empty() && p.top.is_empty());
            if zero && !options.include_zero {
                skipped_zero.push(var.key());
                continue;
            }
            variables.push(var);
        }

        let bins = shape.profile_bins as usize;
        // The configured series first, in their order; then the per-peer
        // arrays' row totals, by name.
        let mut profile = profile;
        profile.sort_by_key(|s| {
            options
                .profile
                .iter()
                .position(|p| p.name == s.name)
                .unwrap_or(usize::MAX)
        });
        let profile = profile
            .into_iter()
            .map(|s| {
                let mut overall = Acc::EMPTY;
                s.bins.iter().for_each(|(_, a)| overall.merge(a));
                ProfileReport {
                    name: s.name,
                    unit: s.unit,
                    nranks,
                    bins,
                    overall: overall.stats(PvarClass::Counter),
                    blocks: s
                        .bins
                        .iter()
                        .filter_map(|(bin, acc)| {
                            let (a, b) = bin_ranks(u64::from(*bin), nranks as u64, bins as u64);
                            Some(ProfileBlock {
                                bin: *bin as usize,
                                ranks: a as usize..b as usize,
                                stats: acc.stats(PvarClass::Counter)?,
                            })
                        })
                        .collect(),
                }
            })
            .collect();

        let names = |t: super::partial::Tally| {
            let mut v: Vec<NameCount> = t
                .names
                .into_iter()
                .map(|(name, ranks, first)| NameCount {
                    name,
                    ranks,
                    first_rank: first as usize,
                })
                .collect();
            v.sort_by_key(|n| n.first_rank);
            (v, t.other)
        };
        let (programs, other_programs) = names(ranks.programs);
        let (engines, other_engines) = names(ranks.engines);
        JobReport {
            nranks,
            ranks: RanksSummary {
                reporting: ranks.count,
                programs,
                other_programs,
                engines,
                other_engines,
                pids: ranks.pids.iter().map(|&(r, p)| (r as usize, p)).collect(),
                elapsed: ranks.elapsed.stats(PvarClass::Timer),
                live_threads: ranks.live_threads.stats(PvarClass::Level),
                unix_ns: ranks.unix_ns,
            },
            variables,
            skipped_zero,
            profile,
            problems: problems
                .first
                .map(|(rank, why)| (problems.count, rank as usize, why)),
            options,
        }
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

    /// The per-peer arrays.
    pub fn matrices(&self) -> impl Iterator<Item = (&VarReport, &PeerReport)> {
        self.variables
            .iter()
            .filter_map(|v| v.peer.as_ref().map(|p| (v, p)))
    }

    /// The profile series `name`.
    pub fn profile(&self, name: &str) -> Option<&ProfileReport> {
        self.profile.iter().find(|p| p.name == name)
    }

    /// The longest wall time and its rank, if any rank knows its own.
    pub fn wall_time(&self) -> Option<(Duration, usize)> {
        let s = self.ranks.elapsed.as_ref()?;
        Some((
            Duration::try_from_secs_f64(s.max.as_f64()).unwrap_or_default(),
            s.max_rank,
        ))
    }
}

fn finish_entry(e: Entry, nranks: usize, bins: usize, options: &ReportOptions) -> VarReport {
    let names = options
        .element_names
        .iter()
        .find(|(n, _)| *n == e.key.name)
        .map(|(_, names)| names.as_slice())
        .unwrap_or(&[]);
    let class = e.key.class;
    let (elements, peer) = match e.body {
        Body::Elements(accs) => (
            accs.iter()
                .enumerate()
                .map(|(i, acc)| ElementReport {
                    index: i,
                    name: names.get(i).cloned(),
                    stats: acc.stats(class),
                    nonzero: acc.nonzero,
                })
                .collect(),
            None,
        ),
        Body::Peer(p) => {
            let mut total = super::stats::Sum::default();
            p.cells.iter().for_each(|c| total.merge(&c.sum));
            (
                Vec::new(),
                Some(PeerReport {
                    nranks,
                    bins,
                    sent: p.sent.stats(class),
                    total: total.total(),
                    cells: p
                        .cells
                        .iter()
                        .map(|c| MatrixCell {
                            row: c.row as usize,
                            col: c.col as usize,
                            value: c.sum.total(),
                        })
                        .collect(),
                    top: p
                        .top
                        .iter()
                        .map(|t| PeerPair {
                            from: t.from as usize,
                            to: t.to as usize,
                            value: t.value,
                        })
                        .collect(),
                }),
            )
        }
    };
    VarReport {
        unit: unit(class),
        name: e.key.name,
        class,
        datatype: e.datatype,
        description: e.description,
        category: e.category,
        bind: e.bind,
        instance: e.key.instance,
        elements,
        peer,
        inconsistent_ranks: e.conflicts,
    }
}
