//! A [`Snapshot`] as OpenMetrics text (the format Prometheus scrapes,
//! `application/openmetrics-text; version=1.0.0`).
//!
//! | pvar | OpenMetrics |
//! |---|---|
//! | COUNTER, TIMER, AGGREGATE of an unsigned datatype | `counter` (sample `<name>_total`) |
//! | AGGREGATE of `MPI_INT`, `MPI_COUNT`, `MPI_DOUBLE` (a sum that may fall) | `gauge` |
//! | LEVEL, SIZE, PERCENTAGE, GENERIC, STATE without enumeration | `gauge` |
//! | STATE with an enumeration | `stateset` (one sample per item, 1 for the current state) |
//! | HIGH/LOWWATERMARK | `gauge`: the mark since export began (the level if there is none) |
//! | TIMER | in seconds, the family named `<name>_seconds` with `# UNIT seconds` |
//! | PERCENTAGE | `# UNIT ratio`, the family named `<name>_ratio` |
//! | array element `i` | label `element="i"` |
//! | bound instance | labels `bind="comm"` (the bind kind) and `object="0x…"` |
//! | a name in series notation, `base{k="v",…}` (the `metrics` recorder's) | family `base`, labels `k="v",…` |
//!
//! Names are made valid metric names: every character outside
//! `[A-Za-z0-9_:]` becomes `_` (and a leading digit gets a `_` before it).
//! The description is the `# HELP` text. Inactive variables and bound
//! callback variables (no values) are left out. Two variables that would
//! give the same family with different types (MPI_T allows one name per
//! class) keep apart: the later one's family gets its class appended.

use std::collections::HashMap;
use std::fmt::Write;

use super::snapshot::{Number, Snapshot, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};
use crate::vocabulary::series::escaped;

/// The content type of [`write()`]'s output, for an HTTP response.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The OpenMetrics type a variable is exported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    StateSet,
}

impl Kind {
    fn of(v: &VarSnapshot) -> Kind {
        match v.class {
            PvarClass::Counter | PvarClass::Timer => Kind::Counter,
            PvarClass::Aggregate if v.datatype.is_unsigned() => Kind::Counter,
            PvarClass::State if v.enumeration.is_some() => Kind::StateSet,
            _ => Kind::Gauge,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::StateSet => "stateset",
        }
    }
}

/// One metric family: its name, type, unit, help and the variables in it.
struct Family<'a> {
    name: String,
    kind: Kind,
    unit: Option<&'static str>,
    help: &'a str,
    members: Vec<(&'a VarSnapshot, Vec<(String, String)>)>,
}

/// Writes `snap` as OpenMetrics text, ending with `# EOF`.
///
/// ```
/// use pvar::Registry;
/// use pvar::export::{Snapshot, openmetrics};
/// let reg = Registry::new();
/// reg.counter("msgs_sent").description("messages sent").register()?.add(3);
/// let text = openmetrics::write(&Snapshot::take(&reg));
/// assert!(text.contains("# TYPE msgs_sent counter\n"));
/// assert!(text.contains("msgs_sent_total 3\n"));
/// assert!(text.ends_with("# EOF\n"));
/// # Ok::<(), pvar::Error>(())
/// ```
pub fn write(snap: &Snapshot) -> String {
    let mut families: Vec<Family<'_>> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for v in snap
        .variables
        .iter()
        .filter(|v| v.active && !v.values.is_empty())
    {
        let (base, labels) = split_series(&v.name);
        let kind = Kind::of(v);
        let unit = unit_of(v);
        let mut name = metric_name(base);
        if let Some(u) = unit
            && !name.ends_with(&format!("_{u}"))
        {
            name = format!("{name}_{u}");
        }
        if kind == Kind::Counter
            && let Some(stripped) = name.strip_suffix("_total")
        {
            name = stripped.to_string();
        }
        let mut key = name.clone();
        if let Some(&f) = by_name.get(&key)
            && (families[f].kind != kind || families[f].unit != unit)
        {
            key = format!("{name}_{}", class_suffix(v.class));
        }
        let f = *by_name.entry(key.clone()).or_insert_with(|| {
            families.push(Family {
                name: key,
                kind,
                unit,
                help: &v.description,
                members: Vec::new(),
            });
            families.len() - 1
        });
        families[f].members.push((v, labels));
    }
    let mut out = String::new();
    for f in &families {
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind.name());
        if let Some(u) = f.unit {
            let _ = writeln!(out, "# UNIT {} {u}", f.name);
        }
        if !f.help.is_empty() {
            let _ = writeln!(out, "# HELP {} {}", f.name, escaped(f.help));
        }
        for (v, series) in &f.members {
            write_samples(&mut out, f, v, series, snap);
        }
    }
    out.push_str("# EOF\n");
    out
}

fn write_samples(
    out: &mut String,
    f: &Family<'_>,
    v: &VarSnapshot,
    series: &[(String, String)],
    snap: &Snapshot,
) {
    let values = match &v.marks {
        Some(m) if v.class.is_watermark() => m,
        _ => &v.values,
    };
    for (i, value) in values.iter().enumerate() {
        let mut labels: Vec<(String, String)> = series.to_vec();
        if let Some(o) = v.object {
            labels.push(("bind".into(), bind_label(v.bind).into()));
            labels.push(("object".into(), format!("{o:#x}")));
        }
        if values.len() > 1 {
            labels.push(("element".into(), i.to_string()));
        }
        match f.kind {
            Kind::StateSet => {
                let items = v
                    .enumeration
                    .and_then(|e| snap.enumerations.get(e))
                    .map(|e| e.items.as_slice())
                    .unwrap_or_default();
                let current = match value {
                    Number::Signed(s) => *s,
                    other => other.as_f64() as i64,
                };
                for (item, item_name) in items {
                    let mut l = labels.clone();
                    l.push((f.name.clone(), item_name.clone()));
                    let on = i64::from(*item) == current;
                    let _ = writeln!(out, "{}{} {}", f.name, label_text(&l), u8::from(on));
                }
            }
            Kind::Counter => {
                let _ = writeln!(
                    out,
                    "{}_total{} {}",
                    f.name,
                    label_text(&labels),
                    sample_value(v, *value)
                );
            }
            Kind::Gauge => {
                let _ = writeln!(
                    out,
                    "{}{} {}",
                    f.name,
                    label_text(&labels),
                    sample_value(v, *value)
                );
            }
        }
    }
}

/// The unit suffix a variable's family carries.
fn unit_of(v: &VarSnapshot) -> Option<&'static str> {
    match v.class {
        PvarClass::Timer => Some("seconds"),
        PvarClass::Percentage => Some("ratio"),
        _ => None,
    }
}

/// A value as OpenMetrics text: TIMER nanoseconds become seconds.
fn sample_value(v: &VarSnapshot, n: Number) -> String {
    if v.class == PvarClass::Timer && v.datatype != Datatype::Double {
        return float_text(n.as_f64() / 1e9);
    }
    match n {
        Number::Double(d) => float_text(d),
        other => other.to_string(),
    }
}

fn float_text(d: f64) -> String {
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if d == d.trunc() && d.abs() < 1e15 {
        // Integral values keep a decimal point (a float sample).
        format!("{d:.1}")
    } else {
        format!("{d}")
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

/// A valid metric name for `name`.
pub fn metric_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// A valid label name for `name` (no `:`).
fn label_name(name: &str) -> String {
    metric_name(name).replace(':', "_")
}

/// Splits a name in series notation, `base{k="v",…}`, into its base and
/// labels; any other name is its own base with no labels.
pub fn split_series(name: &str) -> (&str, Vec<(String, String)>) {
    let plain = (name, Vec::new());
    let Some(open) = name.find('{') else {
        return plain;
    };
    let Some(body) = name[open + 1..].strip_suffix('}') else {
        return plain;
    };
    let mut labels = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let Some(eq) = rest.find("=\"") else {
            return plain;
        };
        let key = &rest[..eq];
        if key.is_empty() {
            return plain;
        }
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => return plain,
                },
                '"' => {
                    end = Some(eq + 2 + i + 1);
                    break;
                }
                c => value.push(c),
            }
        }
        let Some(end) = end else {
            return plain;
        };
        labels.push((label_name(key), value));
        rest = &rest[end..];
        rest = match rest.strip_prefix(',') {
            Some(r) => r,
            None if rest.is_empty() => rest,
            None => return plain,
        };
    }
    (&name[..open], labels)
}

fn label_text(labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escaped(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}
