//! A [`metrics`](https://docs.rs/metrics/0.24) recorder that records into
//! pvar variables (cargo feature `metrics`).
//!
//! A crate instrumented with `metrics::counter!`, `gauge!` and
//! `histogram!` records, through a [`PvarRecorder`], into performance
//! variables of a [`Registry`] (usually [`pvar::global()`](crate::global)):
//! MPI_T tools see them through sessions and handles, C tools through
//! `libpvar`, exporters through the registry — with no change to the
//! instrumented crate. The guide is `docs/metrics-recorder.md`.
//!
//! ```
//! use pvar::PvarClass;
//! use pvar::recorder::PvarRecorder;
//!
//! // In a program: PvarRecorder::new(pvar::global()).install().unwrap();
//! let reg = pvar::Registry::new();
//! let recorder = PvarRecorder::new(&reg);
//! metrics::with_local_recorder(&recorder, || {
//!     metrics::counter!("http_requests", "method" => "GET").increment(1);
//!     metrics::gauge!("queue_depth").set(3.0);
//!     metrics::histogram!("latency_seconds").record(0.25);
//! });
//!
//! // What a tool sees: one variable per series, in the category `metrics`.
//! let pvars = reg.pvars();
//! let requests = pvars.index(r#"http_requests{method="GET"}"#, PvarClass::Counter)?;
//! let depth = pvars.index("queue_depth", PvarClass::Level)?;
//! let count = pvars.index("latency_seconds_count", PvarClass::Counter)?;
//! let sum = pvars.index("latency_seconds_sum", PvarClass::Aggregate)?;
//! assert_eq!(pvars.info(requests)?.category.as_deref(), Some("metrics"));
//! let session = reg.session()?;
//! assert_eq!(session.handle(depth)?.typed::<f64>()?.read()?, 3.0);
//! # let _ = (count, sum);
//! # Ok::<(), pvar::Error>(())
//! ```
//!
//! ## The mapping
//!
//! | `metrics` | pvar variable | class, datatype | updates |
//! |---|---|---|---|
//! | `counter!(name)` | `name` | COUNTER, `MPI_UNSIGNED_LONG_LONG` | `increment(n)`: [`Counter::add`]; `absolute(n)`: see below |
//! | `gauge!(name)` | `name` | LEVEL, `MPI_DOUBLE` | `set(x)`: [`Level::set`]; `increment(x)` / `decrement(x)`: [`Level::add`] / [`Level::sub`] |
//! | `histogram!(name)` | `name_count` | COUNTER, `MPI_UNSIGNED_LONG_LONG` | `record(v)`: +1 (`record_many(v, n)`: +n) |
//! | | `name_sum` | AGGREGATE, `MPI_DOUBLE` | `record(v)`: +v (`record_many(v, n)`: +v·n) |
//!
//! Every update goes to the calling thread's own cell, as a pvar handle's
//! would (no lock, no shared read-modify-write), behind the one dynamic
//! call `metrics` makes; a gauge `set` costs a merged read and one
//! compare-and-swap ([`Level::set_at`] has its exact guarantees).
//! Measured (`benches/metrics_recorder.rs`), `increment(1)` on a held
//! `metrics::Counter` costs 8.3× a thread-local `+= 1` on one thread and
//! stays flat on two, where a recorder backed by one `AtomicU64` (as
//! `metrics-util`'s) costs 20×, and up to 69× on two threads.
//!
//! - **`absolute(n)`** raises the counter to `n` relative to the largest
//!   absolute value given so far: each series keeps that value in an
//!   atomic, and `absolute(n)` does `fetch_max(n)` on it and adds the step
//!   it made (`n − previous`, if positive). The steps telescope, so under
//!   any interleaving of threads a counter driven only by `absolute` reads
//!   exactly the largest value given — a late, smaller value adds nothing
//!   and no step is counted twice. A counter that mixes `increment` and
//!   `absolute` reads the sum of the increments plus that largest absolute
//!   value (`metrics-util`'s atomic counter would read
//!   `max(current, n)` instead; with pvar's per-thread cells that would
//!   need a lock). The atomic is per series in this recorder: updates of
//!   the same variable through another recorder or a pvar handle do not
//!   move it.
//! - **Gauges are LEVELs**, and MPI_T levels are not negative: a gauge
//!   whose value is below zero reads 0 until it rises again (the deltas
//!   are kept exactly; only the read is clamped).
//! - **Histograms**: MPI_T has no histogram class; the recorder keeps the
//!   number and the sum of the values recorded, not the values, so no
//!   quantiles or buckets. An exporter can present the pair as an
//!   OpenMetrics summary without quantiles (`name_count`, `name_sum`).
//!   The two are separate variables: a tool reading while a value is
//!   being recorded can see the count already raised and the sum not yet.
//!   Negative values are summed as given.
//! - **Non-finite values** (NaN, ±∞) given to a gauge or a histogram are
//!   dropped and counted in [`RecorderStats::dropped_values`]: one NaN in
//!   a per-thread cell would otherwise stay in the sum for good.
//! - The `metrics` metadata of a call site (target, level, module path)
//!   is not kept. With the `pvar_compile_out` cfg the updates compile to
//!   nothing, as everywhere in pvar.
//!
//! ## Labels: series notation
//!
//! A key with labels maps to one variable per label set, named in series
//! notation: `name{k1="v1",k2="v2"}`, labels sorted by key, values
//! escaped as OpenMetrics does (`\\`, `\"`, `\n`); [`series_name`] builds
//! it. Without labels the variable's name is the metric's name. A
//! histogram's variables are `name_count{…}` and `name_sum{…}`. Keys that
//! differ only in the order of their labels are one series.
//!
//! ## Descriptions and units
//!
//! `describe_counter!` / `describe_gauge!` / `describe_histogram!` give the
//! description of the series of that metric name (all label sets)
//! registered **after** the describe; a unit is appended as
//! `" [unit: bytes]"` (its `metrics` name). A variable's metadata is fixed
//! once registered (MPI_T requires every query to return the same), so a
//! describe after the first use of a series does not change it. A
//! histogram's `_count` gets `"<description> (histogram: number of values
//! recorded)"`, its `_sum` `"<description> [unit: …] (histogram: sum of
//! values recorded)"`; an undescribed counter or gauge has an empty
//! description.
//!
//! ## Category
//!
//! Every variable of the recorder is in one category, [`DEFAULT_CATEGORY`]
//! (`metrics`) unless [`PvarRecorder::with_category`] names another; the
//! recorder defines it at its first registration. Tools list the
//! recorder's series from it (`MPI_T_category_get_pvars`).
//!
//! ## Registration, caching, failures
//!
//! `metrics` asks the recorder for a handle at every `counter!(…)` call.
//! The first request of a series registers its variable(s) (idempotent:
//! the registry returns the existing variable for the same name, class
//! and metadata, e.g. one a previous recorder of the same registry
//! registered); the recorder then caches the handle per key, so later
//! requests take a mutex and a hash lookup and register nothing. A hot
//! path should still hold the handle (`let c = counter!(…);` once).
//!
//! A series that the registry refuses gets a no-op handle, never a panic:
//! a variable of the same name and class that the recorder did not make
//! (in another category, or with other metadata), or a name with a NUL
//! byte. The refusal is counted once per series in
//! [`RecorderStats::failed_registrations`], and
//! [`PvarRecorder::failures`] says which series and why. A variable of
//! the same name and class in the recorder's category that differs only
//! in its description (registered by another recorder before a describe)
//! is taken as it is.

mod cache;
mod handles;
mod series;

use std::collections::HashMap;

use self::cache::{Lookup, SeriesMap};
use self::handles::{CounterSeries, Drops, GaugeSeries, HistogramSeries};
pub use self::series::series_name;
use crate::pvar::{ClassHandle, PvarBuilder};
#[cfg(doc)]
use crate::pvar::{Counter, Level};
use crate::registry::Registry;
use crate::sync::{Arc, Mutex};
use crate::vocabulary::error::{Error, Result};

/// The category of the recorder's variables unless
/// [`PvarRecorder::with_category`] says otherwise.
pub const DEFAULT_CATEGORY: &str = "metrics";

/// The description the recorder defines its category with.
const CATEGORY_DESCRIPTION: &str = "series recorded through the metrics crate (pvar::recorder)";

/// The kind of `metrics` instrument a series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// `counter!`: a COUNTER.
    Counter,
    /// `gauge!`: a LEVEL of `f64`.
    Gauge,
    /// `histogram!`: a COUNTER `_count` and an AGGREGATE of `f64` `_sum`.
    Histogram,
}

/// A series the registry refused (see [`PvarRecorder::failures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RegistrationFailure {
    /// The instrument.
    pub kind: MetricKind,
    /// The series, in series notation (for a histogram, without the
    /// `_count` / `_sum` suffix).
    pub series: String,
    /// What the registry answered.
    pub error: Error,
}

/// Counts of a recorder (see [`PvarRecorder::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Counter series registered.
    pub counters: usize,
    /// Gauge series registered.
    pub gauges: usize,
    /// Histogram series registered (two variables each).
    pub histograms: usize,
    /// Series the registry refused, each counted once; they record
    /// nothing (no-op handles).
    pub failed_registrations: usize,
    /// Non-finite values (NaN, ±∞) given to gauges and histograms, and
    /// dropped.
    pub dropped_values: u64,
}

/// A description given by a `describe_*!` call.
struct Described {
    text: String,
    unit: Option<metrics::Unit>,
}

/// What registration reads and writes, under the recorder's mutex.
#[derive(Default)]
struct State {
    category_defined: bool,
    described: HashMap<(MetricKind, String), Described>,
    counters: SeriesMap<CounterSeries>,
    gauges: SeriesMap<GaugeSeries>,
    histograms: SeriesMap<HistogramSeries>,
    failures: Vec<RegistrationFailure>,
}

/// What the clones of a recorder share.
struct Shared {
    registry: Registry,
    category: String,
    state: Mutex<State>,
    drops: Arc<Drops>,
}

/// A `metrics::Recorder` over a pvar [`Registry`]: `counter!`, `gauge!`
/// and `histogram!` record into pvar variables (the mapping is in the
/// [module documentation](self)).
///
/// Clones share everything (the series, the descriptions, the counts):
/// keep one to read [`PvarRecorder::stats`] after
/// [`install`](PvarRecorder::install)ing another.
///
/// ```
/// use pvar::recorder::PvarRecorder;
///
/// let recorder = PvarRecorder::new(pvar::global());
/// recorder.clone().install().expect("no other global recorder");
/// metrics::counter!("jobs_done").increment(1);
/// assert_eq!(recorder.stats().counters, 1);
/// let jobs = pvar::global().counter("jobs_done").category("metrics").register()?;
/// assert_eq!(jobs.get(), 1); // the same variable
/// # Ok::<(), pvar::Error>(())
/// ```
#[derive(Clone)]
pub struct PvarRecorder {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PvarRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PvarRecorder")
            .field("category", &self.shared.category)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl PvarRecorder {
    /// A recorder into `registry` (a clone of the handle: the registry is
    /// shared), with its variables in the category [`DEFAULT_CATEGORY`].
    pub fn new(registry: &Registry) -> Self {
        Self::build(registry.clone(), DEFAULT_CATEGORY.to_string())
    }

    fn build(registry: Registry, category: String) -> Self {
        Self {
            shared: Arc::new(Shared {
                registry,
                category,
                state: Mutex::new(State::default()),
                drops: Arc::new(Drops::default()),
            }),
        }
    }

    /// The same recorder with its variables in category `name` instead.
    /// Call it before recording: it returns a recorder with nothing
    /// registered or described yet (clones made before keep the old
    /// category and their series).
    pub fn with_category(self, name: impl Into<String>) -> Self {
        Self::build(self.shared.registry.clone(), name.into())
    }

    /// Installs this recorder as the process's global `metrics` recorder
    /// (`metrics::set_global_recorder`); fails, giving it back, if one is
    /// installed already.
    pub fn install(self) -> std::result::Result<(), metrics::SetRecorderError<Self>> {
        metrics::set_global_recorder(self)
    }

    /// The registry the recorder records into.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The category of the recorder's variables.
    pub fn category(&self) -> &str {
        &self.shared.category
    }

    /// The recorder's counts: series registered, refused, values dropped.
    pub fn stats(&self) -> RecorderStats {
        let st = self.shared.state.lock();
        RecorderStats {
            counters: st.counters.registered(),
            gauges: st.gauges.registered(),
            histograms: st.histograms.registered(),
            failed_registrations: st.failures.len(),
            dropped_values: self.shared.drops.values(),
        }
    }

    /// The series the registry refused, in the order they were first
    /// asked for, with the registry's reason.
    pub fn failures(&self) -> Vec<RegistrationFailure> {
        self.shared.state.lock().failures.clone()
    }
}

impl Shared {
    /// Records a description for the series of `name` registered later.
    fn describe(
        &self,
        kind: MetricKind,
        name: metrics::KeyName,
        unit: Option<metrics::Unit>,
        text: metrics::SharedString,
    ) {
        self.state.lock().described.insert(
            (kind, name.as_str().to_string()),
            Described {
                text: text.to_string(),
                unit,
            },
        );
    }

    /// Registers (or finds) variable `name` of `H`'s class in the
    /// recorder's category. A variable of that name and class already in
    /// the category whose description differs (registered by another
    /// recorder before a describe) is taken as it is; any other refusal is
    /// the first error.
    fn register<H: ClassHandle>(
        &self,
        builder: for<'r> fn(&'r Registry, &str) -> PvarBuilder<'r, H>,
        name: &str,
        description: String,
    ) -> Result<H> {
        let category = self.category.as_str();
        let refused = match builder(&self.registry, name)
            .description(description.as_str())
            .category(category)
            .register()
        {
            Ok(handle) => return Ok(handle),
            Err(e) => e,
        };
        let pvars = self.registry.pvars();
        let existing = pvars
            .index(name, H::CLASS)
            .and_then(|i| pvars.info(i))
            .ok()
            .filter(|info| {
                info.category.as_deref() == Some(category) && info.description != description
            })
            .map(|info| info.description.clone());
        match existing {
            Some(theirs) => builder(&self.registry, name)
                .description(theirs)
                .category(category)
                .register()
                .map_err(|_| refused),
            None => Err(refused),
        }
    }

    /// Defines the category once, at the first registration. A category
    /// of that name defined with another description stays as it is.
    fn define_category(&self, st: &mut State) {
        if !st.category_defined {
            st.category_defined = true;
            let _ = self
                .registry
                .categories()
                .define(&self.category, CATEGORY_DESCRIPTION);
        }
    }

    fn counter(&self, key: &metrics::Key) -> Option<Arc<CounterSeries>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        self.define_category(st);
        let described = &st.described;
        let lookup = st.counters.get_or_register(
            key,
            |k| series::key_series(k, ""),
            |series| {
                let text = description(described, MetricKind::Counter, key, true, None);
                self.register(Registry::counter, series, text)
                    .map(CounterSeries::new)
            },
        );
        settle(&mut st.failures, MetricKind::Counter, lookup)
    }

    fn gauge(&self, key: &metrics::Key) -> Option<Arc<GaugeSeries>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        self.define_category(st);
        let described = &st.described;
        let lookup = st.gauges.get_or_register(
            key,
            |k| series::key_series(k, ""),
            |series| {
                let text = description(described, MetricKind::Gauge, key, true, None);
                self.register(Registry::level::<f64>, series, text)
                    .map(|level| GaugeSeries::new(level, self.drops.clone()))
            },
        );
        settle(&mut st.failures, MetricKind::Gauge, lookup)
    }

    fn histogram(&self, key: &metrics::Key) -> Option<Arc<HistogramSeries>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        self.define_category(st);
        let described = &st.described;
        let lookup = st.histograms.get_or_register(
            key,
            |k| series::key_series(k, ""),
            |_| {
                let kind = MetricKind::Histogram;
                let count = self.register(
                    Registry::counter,
                    &series::key_series(key, "_count"),
                    description(
                        described,
                        kind,
                        key,
                        false,
                        Some("histogram: number of values recorded"),
                    ),
                )?;
                let sum = self.register(
                    Registry::aggregate::<f64>,
                    &series::key_series(key, "_sum"),
                    description(
                        described,
                        kind,
                        key,
                        true,
                        Some("histogram: sum of values recorded"),
                    ),
                )?;
                Ok(HistogramSeries::new(count, sum, self.drops.clone()))
            },
        );
        settle(&mut st.failures, MetricKind::Histogram, lookup)
    }
}

/// The description of a new variable of `key`'s series: the described
/// text, its unit if `with_unit`, then `part` in parentheses, joined by
/// spaces (empty if there is nothing).
fn description(
    described: &HashMap<(MetricKind, String), Described>,
    kind: MetricKind,
    key: &metrics::Key,
    with_unit: bool,
    part: Option<&str>,
) -> String {
    let mut pieces: Vec<String> = Vec::new();
    if let Some(d) = described.get(&(kind, key.name().to_string())) {
        if !d.text.is_empty() {
            pieces.push(d.text.clone());
        }
        if let (true, Some(unit)) = (with_unit, d.unit) {
            pieces.push(format!("[unit: {}]", unit.as_str()));
        }
    }
    if let Some(part) = part {
        pieces.push(format!("({part})"));
    }
    pieces.join(" ")
}

/// The handle of a lookup; a failure is recorded (once per series).
fn settle<S>(
    failures: &mut Vec<RegistrationFailure>,
    kind: MetricKind,
    lookup: Lookup<S>,
) -> Option<Arc<S>> {
    match lookup {
        Lookup::Known(handle) => handle,
        Lookup::Failed(series, error) => {
            failures.push(RegistrationFailure {
                kind,
                series,
                error,
            });
            None
        }
    }
}

impl metrics::Recorder for PvarRecorder {
    fn describe_counter(
        &self,
        key: metrics::KeyName,
        unit: Option<metrics::Unit>,
        description: metrics::SharedString,
    ) {
        self.shared
            .describe(MetricKind::Counter, key, unit, description);
    }

    fn describe_gauge(
        &self,
        key: metrics::KeyName,
        unit: Option<metrics::Unit>,
        description: metrics::SharedString,
    ) {
        self.shared
            .describe(MetricKind::Gauge, key, unit, description);
    }

    fn describe_histogram(
        &self,
        key: metrics::KeyName,
        unit: Option<metrics::Unit>,
        description: metrics::SharedString,
    ) {
        self.shared
            .describe(MetricKind::Histogram, key, unit, description);
    }

    fn register_counter(
        &self,
        key: &metrics::Key,
        _metadata: &metrics::Metadata<'_>,
    ) -> metrics::Counter {
        match self.shared.counter(key) {
            Some(series) => metrics::Counter::from_arc(series),
            None => metrics::Counter::noop(),
        }
    }

    fn register_gauge(
        &self,
        key: &metrics::Key,
        _metadata: &metrics::Metadata<'_>,
    ) -> metrics::Gauge {
        match self.shared.gauge(key) {
            Some(series) => metrics::Gauge::from_arc(series),
            None => metrics::Gauge::noop(),
        }
    }

    fn register_histogram(
        &self,
        key: &metrics::Key,
        _metadata: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        match self.shared.histogram(key) {
            Some(series) => metrics::Histogram::from_arc(series),
            None => metrics::Histogram::noop(),
        }
    }
}
