//! Snapshots as the text a Prometheus server scrapes: OpenMetrics 1.0 or
//! the classic text format 0.0.4 ([`Format`], chosen from an `Accept`
//! header with [`Format::from_accept`]).
//!
//! | pvar | exposed as |
//! |---|---|
//! | COUNTER, TIMER, AGGREGATE of an unsigned datatype | `counter` (sample `<name>_total`) |
//! | AGGREGATE of `MPI_INT`, `MPI_COUNT`, `MPI_DOUBLE` (a sum that may fall) | `gauge` |
//! | LEVEL, SIZE, PERCENTAGE, GENERIC, STATE without enumeration | `gauge` |
//! | STATE with an enumeration | `stateset` (one sample per item, 1 for the current state; a `gauge` in the classic format) |
//! | HIGH/LOWWATERMARK | `gauge`: the mark since export began (the level if there is none) |
//! | `<h>_bucket`, `<h>_le`, `<h>_sum` (a `metrics` histogram, see below) | `histogram` `<h>`: cumulative `_bucket{le=…}`, `_count`, `_sum` |
//! | TIMER | in seconds; unit `seconds` |
//! | PERCENTAGE | unit `ratio` |
//! | a description ending in `[unit: <u>]` (the `metrics` recorder's) | unit `<u>`, the mark left out of the help |
//! | array element `i` | label `element="i"` |
//! | bound instance | labels `bind="comm"` (the bind kind), `object="0x…"` and, when the component named the object, `object_label="MPI_COMM_WORLD"` |
//! | a name in series notation, `base{k="v",…}` (the `metrics` recorder's) | family `base`, labels `k="v",…` |
//!
//! A family with a unit has a name that ends in it (`send_time_seconds`),
//! as OpenMetrics asks; the OpenMetrics text has a `# UNIT` line. Names
//! are made valid (every character outside `[A-Za-z0-9_:]` becomes `_`, a
//! leading digit gets a `_` before it) and can never collide: see
//! `plan.rs` — no scrape carries two samples of one series, whatever the
//! names. The description is the `# HELP` text (without one, the name
//! and class: `x (LEVEL performance variable, no description)`).
//! Inactive variables and
//! bound callback variables (no values) are left out.
//!
//! **Histograms.** MPI_T has no histogram class; a histogram is three
//! variables with the same labels: `<h>_bucket` (COUNTER, one element per
//! bucket, not cumulative), `<h>_le` (GENERIC `MPI_DOUBLE`, each bucket's
//! upper bound, increasing, the last `+Inf`) and `<h>_sum` (AGGREGATE
//! `MPI_DOUBLE`). `_count` is the sum of the buckets. `_sum` and `_count`
//! are left out while a bound or the sum is negative (OpenMetrics allows
//! no `_sum` then).
//!
//! **Freshness.** Every exposition carries the snapshot's age and time:
//! `pvar_export_snapshot_age_seconds` and
//! `pvar_export_snapshot_timestamp_seconds` (Unix time), gauges, per
//! process; [`write_sources`] adds `pvar_export_up` (1, or 0 for a process
//! whose snapshot could not be read or is too old).

mod format;
mod histogram;
mod plan;
mod render;

pub use format::Format;

use std::borrow::Cow;

use super::snapshot::{Number, Snapshot, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};
use crate::vocabulary::series::{Shape, family_stem, split_series, unit_mark};
use plan::{Item, Plan, Sample};
use render::float_text;

/// One process of [`write_sources`]: the labels its series get (say
/// `pid`, `program`, `rank`), and its snapshot — `None` for a process
/// that is down (its snapshot could not be read, or is too old): only
/// `pvar_export_up 0` is written for it.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// Labels added to every series of the process.
    pub labels: Vec<(String, String)>,
    /// Its snapshot, or `None` if it is down.
    pub snapshot: Option<&'a Snapshot>,
}

/// Writes `snap` in `format`, with its age and time.
///
/// ```
/// use pvar::Registry;
/// use pvar::export::Snapshot;
/// use pvar::export::exposition::{self, Format};
/// let reg = Registry::new();
/// reg.counter("msgs_sent").description("messages sent").register()?.add(3);
/// let text = exposition::write(&Snapshot::take(&reg), Format::OpenMetrics);
/// assert!(text.contains("# TYPE msgs_sent counter\n"));
/// assert!(text.contains("msgs_sent_total 3\n"));
/// assert!(text.ends_with("# EOF\n"));
/// let classic = exposition::write(&Snapshot::take(&reg), Format::Prometheus);
/// assert!(classic.contains("# TYPE msgs_sent_total counter\n"));
/// # Ok::<(), pvar::Error>(())
/// ```
pub fn write(snap: &Snapshot, format: Format) -> String {
    let mut plan = Plan::default();
    freshness(&mut plan, &[], snap);
    variables(&mut plan, &[], snap);
    render::families(&plan.families, format)
}

/// Writes the snapshots of several processes as one exposition (what
/// `pvar serve --all` answers): each process's series with its labels,
/// families shared across processes, `pvar_export_up` per process.
pub fn write_sources(sources: &[Source<'_>], format: Format) -> String {
    let mut plan = Plan::default();
    for s in sources {
        let up = Item {
            stem: "pvar_export_up".into(),
            shape: Shape::Gauge,
            unit: None,
            help: "1 if the process's snapshot was read and is fresh, 0 if not".into(),
            class_suffix: "gauge",
            series: Vec::new(),
            samples: vec![Sample {
                suffix: "",
                added: s.labels.clone(),
                state: None,
                value: if s.snapshot.is_some() { "1" } else { "0" }.into(),
            }],
        };
        plan.place(up);
    }
    for s in sources {
        if let Some(snap) = s.snapshot {
            freshness(&mut plan, &s.labels, snap);
        }
    }
    for s in sources {
        if let Some(snap) = s.snapshot {
            variables(&mut plan, &s.labels, snap);
        }
    }
    render::families(&plan.families, format)
}

/// The snapshot's age and time.
fn freshness(plan: &mut Plan<'_>, labels: &[(String, String)], snap: &Snapshot) {
    let gauge = |stem: &str, help: &'static str, value: f64| Item {
        stem: stem.into(),
        shape: Shape::Gauge,
        unit: Some("seconds"),
        help: help.into(),
        class_suffix: "gauge",
        series: Vec::new(),
        samples: vec![Sample {
            suffix: "",
            added: labels.to_vec(),
            state: None,
            value: float_text(value),
        }],
    };
    plan.place(gauge(
        "pvar_export_snapshot_age",
        "seconds since the process's exporter took the snapshot exposed",
        snap.process.age().as_secs_f64(),
    ));
    plan.place(gauge(
        "pvar_export_snapshot_timestamp",
        "when the snapshot exposed was taken, seconds since the Unix epoch",
        snap.process.unix_ns as f64 / 1e9,
    ));
}

/// Every active variable of `snap` with values, histograms as one item.
fn variables<'a>(plan: &mut Plan<'a>, labels: &[(String, String)], snap: &'a Snapshot) {
    let (histograms, taken) = histogram::find(snap);
    for (i, v) in snap.variables.iter().enumerate() {
        if !v.active || v.values.is_empty() || taken.contains(&i) {
            continue;
        }
        if let Some(h) = histograms.get(&i) {
            plan.place(histogram_item(h, labels));
        } else {
            plan.place(variable_item(v, labels, snap));
        }
    }
}

fn shape_of(v: &VarSnapshot) -> Shape {
    match v.class {
        PvarClass::Counter | PvarClass::Timer => Shape::Counter,
        PvarClass::Aggregate if v.datatype.is_unsigned() => Shape::Counter,
        PvarClass::State if v.enumeration.is_some() => Shape::StateSet,
        _ => Shape::Gauge,
    }
}

/// The item of one variable (or bound instance).
fn variable_item<'a>(
    v: &'a VarSnapshot,
    labels: &[(String, String)],
    snap: &'a Snapshot,
) -> Item<'a> {
    let (base, series) = split_series(&v.name);
    let shape = shape_of(v);
    let (marked, help) = unit_mark(&v.description);
    let help = or_default_help(help, || {
        format!(
            "{} ({} performance variable, no description)",
            v.name,
            v.class.short_name()
        )
    });
    let unit = match v.class {
        PvarClass::Timer => Some("seconds"),
        PvarClass::Percentage => Some("ratio"),
        // OpenMetrics gives a state set no unit.
        _ if shape == Shape::StateSet => None,
        _ => marked,
    };
    let values = match &v.marks {
        Some(m) if v.class.is_watermark() => m,
        _ => &v.values,
    };
    let mut samples = Vec::new();
    for (i, n) in values.iter().enumerate() {
        let mut added = labels.to_vec();
        if let Some(o) = v.object {
            added.push(("bind".into(), bind_label(v.bind).into()));
            added.push(("object".into(), format!("{o:#x}")));
            if let Some(name) = &v.object_label {
                added.push(("object_label".into(), name.clone()));
            }
        }
        if values.len() > 1 {
            added.push(("element".into(), i.to_string()));
        }
        if shape == Shape::StateSet {
            let items = v
                .enumeration
                .and_then(|e| snap.enumerations.get(e))
                .map(|e| e.items.as_slice())
                .unwrap_or_default();
            let current = match n {
                Number::Signed(s) => *s,
                other => other.as_f64() as i64,
            };
            for (item, name) in items {
                samples.push(Sample {
                    suffix: "",
                    added: added.clone(),
                    state: Some(name.clone()),
                    value: u8::from(i64::from(*item) == current).to_string(),
                });
            }
        } else {
            samples.push(Sample {
                suffix: if shape == Shape::Counter {
                    "_total"
                } else {
                    ""
                },
                added,
                state: None,
                value: sample_value(v, *n),
            });
        }
    }
    Item {
        // A state set's family name is also the name of its label.
        stem: family_stem(base, shape == Shape::StateSet),
        shape,
        unit,
        help,
        class_suffix: class_suffix(v.class),
        series,
        samples,
    }
}

/// The item of a histogram (see the module documentation).
fn histogram_item<'a>(h: &histogram::Histogram<'a>, labels: &[(String, String)]) -> Item<'a> {
    let (_, series) = split_series(&h.buckets.name);
    let (unit, help) = unit_mark(&h.buckets.description);
    let help = or_default_help(help, || format!("{} (histogram, no description)", h.stem));
    let mut samples = Vec::new();
    let mut total = 0u64;
    for (n, bound) in h.buckets.values.iter().zip(&h.bounds) {
        let count = match n {
            Number::Unsigned(u) => *u,
            other => other.as_f64() as u64,
        };
        total = total.saturating_add(count);
        let mut added = labels.to_vec();
        added.push(("le".into(), float_text(*bound)));
        samples.push(Sample {
            suffix: "_bucket",
            added,
            state: None,
            value: total.to_string(),
        });
    }
    let negative = h.bounds.first().is_some_and(|b| *b < 0.0);
    if let Some(sum) = h.sum.filter(|s| *s >= 0.0 && !negative) {
        for (suffix, value) in [("_count", total.to_string()), ("_sum", float_text(sum))] {
            samples.push(Sample {
                suffix,
                added: labels.to_vec(),
                state: None,
                value,
            });
        }
    }
    Item {
        stem: family_stem(h.stem, false),
        shape: Shape::Histogram,
        unit,
        help,
        class_suffix: "histogram",
        series,
        samples,
    }
}

/// The description as HELP text, or what the variable is when it has
/// none (a family without HELP is what `promtool check metrics` reports).
fn or_default_help<'a>(help: &'a str, default: impl FnOnce() -> String) -> Cow<'a, str> {
    if help.is_empty() {
        Cow::Owned(default())
    } else {
        Cow::Borrowed(help)
    }
}

/// A value as text: TIMER nanoseconds become seconds.
fn sample_value(v: &VarSnapshot, n: Number) -> String {
    if v.class == PvarClass::Timer && v.datatype != Datatype::Double {
        return float_text(n.as_f64() / 1e9);
    }
    match n {
        Number::Double(d) => float_text(d),
        other => other.to_string(),
    }
}

fn class_suffix(c: PvarClass) -> &'static str {
    match c {
        PvarClass::State => "state",
        PvarClass::Level => "level",
        PvarClass::Size => "size",
        PvarClass::Percentage => "percentage",
        PvarClass::HighWatermark => "highwatermark",
        PvarClass::LowWatermark => "lowwatermark",
        PvarClass::Counter => "counter",
        PvarClass::Aggregate => "aggregate",
        PvarClass::Timer => "timer",
        PvarClass::Generic => "generic",
    }
}

fn bind_label(b: BindKind) -> &'static str {
    // "MPI_T_BIND_MPI_COMM" → "comm", "MPI_T_BIND_NO_OBJECT" → "no_object".
    match b {
        BindKind::NoObject => "no_object",
        BindKind::Comm => "comm",
        BindKind::Datatype => "datatype",
        BindKind::Errhandler => "errhandler",
        BindKind::File => "file",
        BindKind::Group => "group",
        BindKind::Op => "op",
        BindKind::Request => "request",
        BindKind::Win => "win",
        BindKind::Message => "message",
        BindKind::Info => "info",
        BindKind::Session => "session",
    }
}
