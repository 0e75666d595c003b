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
//!     metrics::gauge!("temperature").set(-4.5);
//!     metrics::histogram!("latency_seconds").record(0.25);
//! });
//!
//! // What a tool sees: one variable per series, in the category `metrics`.
//! let pvars = reg.pvars();
//! let requests = pvars.index(r#"http_requests{method="GET"}"#, PvarClass::Counter)?;
//! let depth = pvars.index("queue_depth", PvarClass::Generic)?;
//! let temperature = pvars.index("temperature", PvarClass::Generic)?;
//! let buckets = pvars.index("latency_seconds_bucket", PvarClass::Counter)?;
//! let sum = pvars.index("latency_seconds_sum", PvarClass::Aggregate)?;
//! assert_eq!(pvars.info(requests)?.category.as_deref(), Some("metrics"));
//! let session = reg.session()?;
//! assert_eq!(session.handle(depth)?.typed::<f64>()?.read()?, 3.0);
//! assert_eq!(session.handle(temperature)?.typed::<f64>()?.read()?, -4.5);
//! // 0.25 s went into the bucket of upper bound 0.25, the 6th of the defaults.
//! let snap = pvar::export::Snapshot::take(&reg);
//! let per_bucket = &snap.variable("latency_seconds_bucket").unwrap().values;
//! assert_eq!(per_bucket[5], pvar::export::Number::Unsigned(1));
//! # let _ = (buckets, sum);
//! # Ok::<(), pvar::Error>(())
//! ```
//!
//! ## The mapping
//!
//! | `metrics` | pvar variables | class, datatype | updates |
//! |---|---|---|---|
//! | `counter!(name)` | `name` | COUNTER, `MPI_UNSIGNED_LONG_LONG` | `increment(n)`: [`Counter::add`]; `absolute(n)`: see below |
//! | `gauge!(name)` | `name` | GENERIC, `MPI_DOUBLE` | `set(x)`: one store; `increment(x)` / `decrement(x)`: a compare-and-swap loop |
//! | `histogram!(name)` | `name_bucket` | COUNTER, `MPI_UNSIGNED_LONG_LONG`, one element per bucket | `record(v)`: +1 in `v`'s bucket (`record_many(v, n)`: +n) |
//! | | `name_le` | GENERIC, `MPI_DOUBLE`, one element per bucket | each bucket's upper bound, the last `+Inf` (set at registration) |
//! | | `name_sum` | AGGREGATE, `MPI_DOUBLE` | `record(v)`: +v (`record_many(v, n)`: +v·n) |
//!
//! Counter and histogram updates go to the calling thread's own cells, as
//! a pvar handle's would (no lock, no shared read-modify-write), behind
//! the one dynamic call `metrics` makes. Measured
//! (`benches/metrics_recorder.rs`), `increment(1)` on a held
//! `metrics::Counter` costs 8.3× a thread-local `+= 1` on one thread and
//! stays flat on two, where a recorder backed by one `AtomicU64` (as
//! `metrics-util`'s) cost 20×, and up to 69× on two threads, on the host
//! of `docs/metrics-recorder.md` (an AMD EPYC; the ratio follows the
//! host's cost of a shared atomic add: 16× on an Intel Xeon in `pvar
//! bench`).
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
//! - **Gauges are GENERICs of `f64`**: one process-wide value that keeps
//!   its sign (a LEVEL, MPI_T's "utilisation of a resource", reads 0
//!   below zero). `set` is one store; `increment`/`decrement` a
//!   compare-and-swap loop on the shared value, as a `metrics-util`
//!   gauge's. Tools read the current value (GENERIC is read-only for
//!   them).
//! - **Histograms keep buckets**: `name_bucket[i]` counts the values `v`
//!   with `le[i-1] < v ≤ le[i]` (not cumulative; the last element the
//!   values above every finite bound), `name_le` holds the bounds, and
//!   the count of values is the sum of the buckets. The buckets are
//!   [`DEFAULT_BUCKETS`] (Prometheus's defaults, for seconds) unless
//!   [`PvarRecorder::with_buckets`] or [`PvarRecorder::with_buckets_for`]
//!   choose others. An exporter writes the three as one OpenMetrics
//!   histogram (`pvar::export::exposition`). A tool reading while a value
//!   is recorded may see its bucket raised and the sum not yet.
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
//! histogram's variables are `name_bucket{…}`, `name_le{…}` and
//! `name_sum{…}`. Keys that differ only in the order of their labels are
//! one series.
//!
//! ## Names that cannot collide when exported
//!
//! A series is refused (a no-op handle and a counted failure, as the
//! `prometheus` crate refuses it at registration) if, exported to
//! Prometheus, it would give the same series as one registered before or
//! a family that clashes: `jobs` next to `jobs_total`, `cache-hits` next
//! to `cache_hits`, a gauge `h_count` next to a histogram `h`, the same
//! name as a counter and as a gauge; label names that are equal once made
//! valid (`a-b`, `a_b`) or reserved (`__…`, and `element`, `bind`,
//! `object`, `le`, `quantile`, `pid`, `program`, `rank`, which the
//! exporter adds). The rules are those of the exposition writer, which
//! never writes two samples of one series in any case.
//!
//! ## Descriptions and units
//!
//! `describe_counter!` / `describe_gauge!` / `describe_histogram!` give the
//! description of the series of that metric name (all label sets)
//! registered **after** the describe. A unit (other than `Unit::Count`)
//! is kept as a mark at the end of the description, `" [unit: bytes]"`
//! (its `metrics` name), from which the exporter names the family as
//! OpenMetrics asks (`sent` of bytes is exposed as `sent_bytes`, with
//! `# UNIT sent_bytes bytes`). A variable's metadata is fixed once
//! registered (MPI_T requires every query to return the same), so a
//! describe after the first use of a series does not change it.
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
//! A series that cannot be registered gets a no-op handle, never a panic:
//! a name collision (above), a variable of the same name and class that
//! the recorder did not make (in another category, or with other
//! metadata), or a name with a NUL byte. The refusal is counted once per
//! series in [`RecorderStats::failed_registrations`], and
//! [`PvarRecorder::failures`] says which series and why. A variable of
//! the same name and class in the recorder's category that differs only
//! in its description (registered by another recorder before a describe)
//! is taken as it is.

mod cache;
mod exposure;
mod handles;
mod series_name;

use std::collections::HashMap;

use self::cache::{Lookup, SeriesMap};
use self::exposure::Exposure;
pub use self::exposure::MetricKind;
use self::handles::{CounterSeries, Drops, GaugeSeries, HistogramSeries};
pub use self::series_name::series_name;
#[cfg(doc)]
use crate::pvar::Counter;
use crate::pvar::{ClassHandle, PvarBuilder};
use crate::registry::Registry;
use crate::sync::{Arc, Mutex};
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::series::with_unit_mark;

/// The category of the recorder's variables unless
/// [`PvarRecorder::with_category`] says otherwise.
pub const DEFAULT_CATEGORY: &str = "metrics";

/// The upper bounds of a histogram's buckets unless
/// [`PvarRecorder::with_buckets`] or [`PvarRecorder::with_buckets_for`]
/// say otherwise: the Prometheus client libraries' defaults (for a
/// latency in seconds), and `+Inf` after them.
pub const DEFAULT_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The description the recorder defines its category with.
const CATEGORY_DESCRIPTION: &str = "series recorded through the metrics crate (pvar::recorder)";

/// A series that was refused (see [`PvarRecorder::failures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RegistrationFailure {
    /// The instrument.
    pub kind: MetricKind,
    /// The series, in series notation (for a histogram, without the
    /// `_bucket` / `_le` / `_sum` suffix).
    pub series: String,
    /// Why: `MPI_T_ERR_INVALID` with the reason for a name that would
    /// collide once exported, else what the registry answered.
    pub error: Error,
}

/// Counts of a recorder (see [`PvarRecorder::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Counter series registered.
    pub counters: usize,
    /// Gauge series registered.
    pub gauges: usize,
    /// Histogram series registered (three variables each).
    pub histograms: usize,
    /// Series refused, each counted once; they record nothing (no-op
    /// handles).
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

impl Described {
    /// The unit's name for the exposition (none for `Unit::Count`).
    fn unit(&self) -> Option<&'static str> {
        self.unit
            .filter(|u| *u != metrics::Unit::Count)
            .map(|u| u.as_str())
    }
}

/// What registration reads and writes, under the recorder's mutex.
#[derive(Default)]
struct State {
    category_defined: bool,
    described: HashMap<(MetricKind, String), Described>,
    counters: SeriesMap<CounterSeries>,
    gauges: SeriesMap<GaugeSeries>,
    histograms: SeriesMap<HistogramSeries>,
    exposure: Exposure,
    failures: Vec<RegistrationFailure>,
}

/// The bucket layouts: the default and per metric name.
#[derive(Clone)]
struct Buckets {
    default: Arc<[f64]>,
    by_name: HashMap<String, Arc<[f64]>>,
}

impl Default for Buckets {
    fn default() -> Self {
        Self {
            default: Arc::from(&DEFAULT_BUCKETS[..]),
            by_name: HashMap::new(),
        }
    }
}

/// What the clones of a recorder share.
struct Shared {
    registry: Registry,
    category: String,
    buckets: Mutex<Buckets>,
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
        Self::build(
            registry.clone(),
            DEFAULT_CATEGORY.to_string(),
            Buckets::default(),
        )
    }

    fn build(registry: Registry, category: String, buckets: Buckets) -> Self {
        Self {
            shared: Arc::new(Shared {
                registry,
                category,
                buckets: Mutex::new(buckets),
                state: Mutex::new(State::default()),
                drops: Arc::new(Drops::default()),
            }),
        }
    }

    /// The same recorder with its variables in category `name` instead.
    /// Call it before recording: it returns a recorder with nothing
    /// registered or described yet (clones made before keep the old
    /// category and their series); the bucket layouts are kept.
    pub fn with_category(self, name: impl Into<String>) -> Self {
        let buckets = self.shared.buckets.lock().clone();
        Self::build(self.shared.registry.clone(), name.into(), buckets)
    }

    /// The upper bounds of the buckets of every histogram that has none of
    /// its own ([`with_buckets_for`](Self::with_buckets_for)); `+Inf` is
    /// added after them. Histograms registered before keep theirs. Fails
    /// (`MPI_T_ERR_INVALID`) unless the bounds are finite and increasing,
    /// and at least one.
    ///
    /// ```
    /// use pvar::recorder::PvarRecorder;
    /// let reg = pvar::Registry::new();
    /// let recorder = PvarRecorder::new(&reg)
    ///     .with_buckets(&[1.0, 10.0, 100.0])?
    ///     .with_buckets_for("payload_bytes", &[64.0, 1024.0, 65536.0])?;
    /// assert!(PvarRecorder::new(&reg).with_buckets(&[2.0, 1.0]).is_err());
    /// # let _ = recorder;
    /// # Ok::<(), pvar::Error>(())
    /// ```
    pub fn with_buckets(self, bounds: &[f64]) -> Result<Self> {
        let bounds = checked_bounds(bounds)?;
        self.shared.buckets.lock().default = bounds;
        Ok(self)
    }

    /// The upper bounds of the buckets of the histograms of metric `name`
    /// (every label set); see [`with_buckets`](Self::with_buckets).
    pub fn with_buckets_for(self, name: &str, bounds: &[f64]) -> Result<Self> {
        let bounds = checked_bounds(bounds)?;
        self.shared
            .buckets
            .lock()
            .by_name
            .insert(name.to_string(), bounds);
        Ok(self)
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

    /// The series that were refused, in the order they were first asked
    /// for, with the reason.
    pub fn failures(&self) -> Vec<RegistrationFailure> {
        self.shared.state.lock().failures.clone()
    }
}

/// `bounds` if they are finite, increasing and not empty.
fn checked_bounds(bounds: &[f64]) -> Result<Arc<[f64]>> {
    if bounds.is_empty() {
        return Err(Error::invalid(
            "a histogram needs at least one bucket bound",
        ));
    }
    if bounds.iter().any(|b| !b.is_finite()) {
        return Err(Error::invalid(
            "bucket bounds must be finite (+Inf is added after them)",
        ));
    }
    if bounds.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::invalid("bucket bounds must increase"));
    }
    Ok(Arc::from(bounds))
}

/// The labels of a `metrics` key, as pairs.
fn labels_of(key: &metrics::Key) -> Vec<(&str, &str)> {
    key.labels().map(|l| (l.key(), l.value())).collect()
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
    /// recorder's category, `shape` applied to its builder (a count). A
    /// variable of that name and class already in the category whose
    /// description differs (registered by another recorder before a
    /// describe) is taken as it is; any other refusal is the first error.
    fn register<H: ClassHandle>(
        &self,
        builder: for<'r> fn(&'r Registry, &str) -> PvarBuilder<'r, H>,
        name: &str,
        description: String,
        shape: impl Fn(PvarBuilder<'_, H>) -> PvarBuilder<'_, H>,
    ) -> Result<H> {
        let category = self.category.as_str();
        let refused = match shape(builder(&self.registry, name))
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
            Some(theirs) => shape(builder(&self.registry, name))
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
        let (described, exposure) = (&st.described, &mut st.exposure);
        let lookup = st.counters.get_or_register(
            key,
            |k| series_name::key_series(k, ""),
            |series| {
                let d = described.get(&(MetricKind::Counter, key.name().to_string()));
                let unit = d.and_then(Described::unit);
                let exposed = exposure
                    .check(MetricKind::Counter, key.name(), &labels_of(key), unit)
                    .map_err(|why| Error::refused(format!("{series}: {why}")))?;
                let text = description(d, "");
                let counter = self.register(Registry::counter, series, text, |b| b)?;
                exposure.take(exposed);
                Ok(CounterSeries::new(counter))
            },
        );
        settle(&mut st.failures, MetricKind::Counter, lookup)
    }

    fn gauge(&self, key: &metrics::Key) -> Option<Arc<GaugeSeries>> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        self.define_category(st);
        let (described, exposure) = (&st.described, &mut st.exposure);
        let lookup = st.gauges.get_or_register(
            key,
            |k| series_name::key_series(k, ""),
            |series| {
                let d = described.get(&(MetricKind::Gauge, key.name().to_string()));
                let unit = d.and_then(Described::unit);
                let exposed = exposure
                    .check(MetricKind::Gauge, key.name(), &labels_of(key), unit)
                    .map_err(|why| Error::refused(format!("{series}: {why}")))?;
                let text = description(d, "");
                let value = self.register(Registry::generic::<f64>, series, text, |b| b)?;
                exposure.take(exposed);
                Ok(GaugeSeries::new(value, self.drops.clone()))
            },
        );
        settle(&mut st.failures, MetricKind::Gauge, lookup)
    }

    fn histogram(&self, key: &metrics::Key) -> Option<Arc<HistogramSeries>> {
        let bounds = {
            let b = self.buckets.lock();
            b.by_name.get(key.name()).unwrap_or(&b.default).clone()
        };
        let mut guard = self.state.lock();
        let st = &mut *guard;
        self.define_category(st);
        let (described, exposure) = (&st.described, &mut st.exposure);
        let lookup = st.histograms.get_or_register(
            key,
            |k| series_name::key_series(k, ""),
            |series| {
                let d = described.get(&(MetricKind::Histogram, key.name().to_string()));
                let unit = d.and_then(Described::unit);
                let exposed = exposure
                    .check(MetricKind::Histogram, key.name(), &labels_of(key), unit)
                    .map_err(|why| Error::refused(format!("{series}: {why}")))?;
                let n = bounds.len() + 1;
                let bucket_name = series_name::key_series(key, "_bucket");
                let buckets =
                    self.register(Registry::counter, &bucket_name, description(d, ""), |b| {
                        b.count(n)
                    })?;
                let le = self.register(
                    Registry::generic::<f64>,
                    &series_name::key_series(key, "_le"),
                    format!("upper bound of each bucket of {bucket_name} (the last +Inf)"),
                    |b| b.count(n),
                )?;
                for (i, b) in bounds.iter().chain([&f64::INFINITY]).enumerate() {
                    le.set_at(i, *b);
                }
                let sum = self.register(
                    Registry::aggregate::<f64>,
                    &series_name::key_series(key, "_sum"),
                    description(d, "(sum of the values)"),
                    |b| b,
                )?;
                exposure.take(exposed);
                Ok(HistogramSeries::new(
                    buckets,
                    bounds.iter().copied().collect(),
                    sum,
                    self.drops.clone(),
                ))
            },
        );
        settle(&mut st.failures, MetricKind::Histogram, lookup)
    }
}

/// The description of a new variable: the described text, then `part`,
/// then the unit's mark (see `vocabulary::series::unit_mark`).
fn description(described: Option<&Described>, part: &str) -> String {
    let text = described.map_or("", |d| d.text.as_str());
    let text = match (text.is_empty(), part.is_empty()) {
        (_, true) => text.to_string(),
        (true, false) => part.to_string(),
        (false, false) => format!("{text} {part}"),
    };
    match described.and_then(Described::unit) {
        Some(unit) => with_unit_mark(&text, unit),
        None => text,
    }
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
