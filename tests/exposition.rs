//! The exposition writer never gives a scrape two samples of one series,
//! nor two families that clash, whatever names the variables have: a
//! property test over random snapshots whose names are built to collide
//! (`_total`, `_count`, `_bucket`, characters that are made `_`, labels
//! the exporter adds), for one process and for several, in both formats;
//! and a fixed snapshot of such names that Python's OpenMetrics and
//! classic parsers accept.

#[path = "support/openmetrics_parser.rs"]
mod openmetrics_parser;

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use pvar::export::exposition::{self, Format, Source};
use pvar::export::{EnumSnapshot, Number, ProcessInfo, Snapshot, VarSnapshot};
use pvar::{BindKind, Datatype, PvarClass, Verbosity};

/// A sample line parsed back: its name and label set.
fn parse_sample(line: &str) -> (String, Vec<(String, String)>) {
    let name_end = line.find(['{', ' ']).expect("a sample has a value");
    let name = line[..name_end].to_string();
    let mut labels = Vec::new();
    if line[name_end..].starts_with('{') {
        let mut chars = line[name_end + 1..].chars().peekable();
        loop {
            let mut key = String::new();
            for c in chars.by_ref() {
                if c == '=' {
                    break;
                }
                key.push(c);
            }
            assert_eq!(chars.next(), Some('"'), "{line}");
            let mut value = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.push(chars.next().expect("an escaped character")),
                    '"' => break,
                    c => value.push(c),
                }
            }
            labels.push((key, value));
            match chars.next() {
                Some(',') => continue,
                Some('}') => break,
                other => panic!("{other:?} after a label in {line}"),
            }
        }
    }
    (name, labels)
}

fn valid_metric_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn valid_label_name(n: &str) -> bool {
    valid_metric_name(n) && !n.contains(':') && !n.starts_with("__")
}

/// Checks an exposition: every sample series once, label names valid and
/// not repeated, every sample under a family that was declared once and
/// whose names no other family takes.
fn check(text: &str, format: Format) {
    let mut series = HashSet::new();
    let mut families: HashMap<String, String> = HashMap::new();
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if line == "# EOF" {
            assert_eq!(format, Format::OpenMetrics);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(valid_metric_name(name), "{line}");
            assert!(
                families.insert(name.into(), kind.into()).is_none(),
                "family {name} declared twice:\n{text}"
            );
            let base = match (format, kind) {
                (Format::Prometheus, "counter") => name.strip_suffix("_total").unwrap(),
                _ => name,
            };
            let suffixes: &[&str] = match kind {
                "counter" => &["", "_total", "_created"],
                "histogram" => &["", "_bucket", "_count", "_sum", "_created"],
                _ => &[""],
            };
            for s in suffixes {
                let n = format!("{base}{s}");
                if let Some(other) = taken.insert(n.clone(), name.into()) {
                    panic!("{n} is taken by {other} and {name}:\n{text}");
                }
            }
            current = Some((base.to_string(), kind.to_string()));
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (name, labels) = parse_sample(line);
        let (base, kind) = current.clone().expect("a sample after a TYPE line");
        let allowed: Vec<String> = match kind.as_str() {
            "counter" => vec![format!("{base}_total")],
            "histogram" => ["_bucket", "_count", "_sum"]
                .iter()
                .map(|s| format!("{base}{s}"))
                .collect(),
            _ => vec![base.clone()],
        };
        assert!(
            allowed.contains(&name),
            "{name} under family {base}:\n{text}"
        );
        let mut keys = HashSet::new();
        for (k, _) in &labels {
            assert!(
                valid_label_name(k) || (k == "le" && kind == "histogram"),
                "label {k:?} in {line}"
            );
            assert!(keys.insert(k.clone()), "label {k} twice in {line}");
        }
        let mut sorted = labels.clone();
        sorted.sort();
        assert!(
            series.insert((name.clone(), sorted)),
            "a series twice: {line}\n{text}"
        );
    }
}

/// Name pieces chosen to collide once made valid or once suffixed.
const PIECES: [&str; 16] = [
    "a",
    "a_total",
    "a-",
    "_total",
    "_count",
    "_sum",
    "_bucket",
    "_le",
    "b",
    ":",
    "9",
    "é",
    "element",
    "pvar_export_up",
    "le",
    "_seconds",
];
const KEYS: [&str; 10] = [
    "k",
    "k-",
    "k_",
    "element",
    "le",
    "pid",
    "__name__",
    "exported_k",
    "a",
    "object",
];

fn name_strategy() -> impl Strategy<Value = String> {
    let base = proptest::collection::vec(0..PIECES.len(), 1..3)
        .prop_map(|ix| ix.into_iter().map(|i| PIECES[i]).collect::<String>());
    let labels = proptest::collection::vec((0..KEYS.len(), 0..3u8), 0..3);
    (base, labels).prop_map(|(base, labels)| {
        if labels.is_empty() {
            base
        } else {
            let body: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{}=\"{}\"", KEYS[*k], ["1", "2", "x\\\"y"][*v as usize]))
                .collect();
            format!("{base}{{{}}}", body.join(","))
        }
    })
}

fn class_strategy() -> impl Strategy<Value = PvarClass> {
    prop_oneof![
        Just(PvarClass::Counter),
        Just(PvarClass::Timer),
        Just(PvarClass::Aggregate),
        Just(PvarClass::Level),
        Just(PvarClass::State),
        Just(PvarClass::Percentage),
        Just(PvarClass::Generic),
        Just(PvarClass::HighWatermark),
    ]
}

fn var(
    index: usize,
    name: String,
    class: PvarClass,
    count: usize,
    object: Option<u64>,
) -> VarSnapshot {
    let datatype = match class {
        PvarClass::State => Datatype::Int,
        PvarClass::Percentage | PvarClass::Generic => Datatype::Double,
        PvarClass::Aggregate if index.is_multiple_of(2) => Datatype::Double,
        _ => Datatype::UnsignedLongLong,
    };
    let value = |i: usize| match datatype {
        Datatype::Double => Number::Double(i as f64 + 0.5),
        Datatype::Int => Number::Signed(i as i64 % 2),
        _ => Number::Unsigned(i as u64),
    };
    VarSnapshot {
        index,
        name,
        description: if index.is_multiple_of(3) {
            "help [unit: bytes]".into()
        } else {
            String::new()
        },
        class,
        datatype,
        verbosity: Verbosity::UserBasic,
        bind: if object.is_some() {
            BindKind::Comm
        } else {
            BindKind::NoObject
        },
        object,
        object_label: object
            .filter(|o| o % 2 == 0)
            .map(|o| format!("comm \"{o}\"")),
        readonly: true,
        continuous: true,
        atomic: false,
        active: true,
        category: None,
        enumeration: (class == PvarClass::State && index.is_multiple_of(2)).then_some(0),
        values: (0..count).map(value).collect(),
        marks: None,
    }
}

fn snapshot_strategy() -> impl Strategy<Value = Snapshot> {
    let one = (
        name_strategy(),
        class_strategy(),
        1..3usize,
        proptest::option::of(0..2u64),
    );
    proptest::collection::vec(one, 1..24).prop_map(|vars| {
        let mut variables: Vec<VarSnapshot> = vars
            .into_iter()
            .enumerate()
            .map(|(i, (name, class, count, object))| var(i, name, class, count, object))
            .collect();
        // A histogram too, whose family may clash with the names above.
        let n = variables.len();
        variables.push(var(n, "a_bucket".into(), PvarClass::Counter, 3, None));
        let mut le = var(n + 1, "a_le".into(), PvarClass::Generic, 3, None);
        le.values = vec![
            Number::Double(1.0),
            Number::Double(2.0),
            Number::Double(f64::INFINITY),
        ];
        variables.push(le);
        variables.push(var(n + 2, "a_sum".into(), PvarClass::Aggregate, 1, None));
        variables[n + 2].datatype = Datatype::Double;
        variables[n + 2].values = vec![Number::Double(3.0)];
        Snapshot {
            process: ProcessInfo::default(),
            variables,
            categories: Vec::new(),
            enumerations: vec![EnumSnapshot {
                name: "e".into(),
                items: vec![(0, "off".into()), (1, "on".into()), (2, "on".into())],
            }],
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn no_series_twice_and_no_family_clash(snap in snapshot_strategy()) {
        for format in [Format::OpenMetrics, Format::Prometheus] {
            check(&exposition::write(&snap, format), format);
            let sources = [
                Source { labels: vec![("pid".into(), "1".into()), ("program".into(), "a".into())], snapshot: Some(&snap) },
                Source { labels: vec![("pid".into(), "2".into()), ("program".into(), "a".into())], snapshot: Some(&snap) },
                Source { labels: vec![("pid".into(), "3".into()), ("program".into(), "b".into())], snapshot: None },
            ];
            check(&exposition::write_sources(&sources, format), format);
        }
    }
}

#[test]
fn real_parsers_accept_colliding_names() {
    let names = [
        ("jobs", PvarClass::Counter),
        ("jobs_total", PvarClass::Counter),
        ("jobs_total", PvarClass::Level),
        ("cache-hits", PvarClass::Counter),
        ("cache_hits", PvarClass::Counter),
        (r#"req{a-b="1",a_b="2"}"#, PvarClass::Counter),
        (r#"req{__name__="x",element="y"}"#, PvarClass::Counter),
        ("h_count", PvarClass::Generic),
        ("pvar_export_snapshot_age_seconds", PvarClass::Generic),
        ("state", PvarClass::State),
    ];
    let mut variables: Vec<VarSnapshot> = names
        .iter()
        .enumerate()
        .map(|(i, (n, c))| {
            let mut v = var(i, n.to_string(), *c, 1 + i % 2, None);
            v.description.clear();
            v
        })
        .collect();
    let n = variables.len();
    variables.push(var(n, "h_bucket".into(), PvarClass::Counter, 2, None));
    let mut le = var(n + 1, "h_le".into(), PvarClass::Generic, 2, None);
    le.values = vec![Number::Double(0.5), Number::Double(f64::INFINITY)];
    variables.push(le);
    let snap = Snapshot {
        process: ProcessInfo::default(),
        variables,
        categories: Vec::new(),
        enumerations: vec![EnumSnapshot {
            name: "e".into(),
            items: vec![(0, "off".into()), (1, "on".into())],
        }],
    };
    let om = exposition::write(&snap, Format::OpenMetrics);
    check(&om, Format::OpenMetrics);
    let classic = exposition::write(&snap, Format::Prometheus);
    check(&classic, Format::Prometheus);
    if let Some(f) = openmetrics_parser::families(&om) {
        // `h_count` (a gauge, first) keeps its name: the histogram `h`,
        // whose `_count` it would take, becomes `h_histogram`.
        assert!(
            f.iter()
                .any(|f| f.name == "h_histogram" && f.kind == "histogram"),
            "{om}"
        );
    }
    openmetrics_parser::classic_families(&classic);
    // The names the components chose are kept where they are free.
    assert!(om.contains("\njobs_total 0\n"), "{om}");
    assert!(om.contains("\ncache_hits_total "), "{om}");
    assert!(
        om.contains(r#"req_total{a_b="1",exported_a_b="2",element="0"}"#),
        "{om}"
    );
    assert!(om.contains(r#"exported___name__="x""#), "{om}");
}
