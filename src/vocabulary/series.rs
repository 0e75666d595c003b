//! Series notation and exposition names: how pvar writes the name of one
//! labelled series of a metric, `name{k1="v1",k2="v2"}`, and how such a
//! name becomes an OpenMetrics / Prometheus family. The `metrics`
//! recorder registers variables under such names (and refuses a series
//! whose exposed samples would collide with another's), the exposition
//! writer splits them back into a family and its labels; both use the
//! rules here.
//!
//! Text is escaped as OpenMetrics escapes label values and HELP text:
//! `\` → `\\`, `"` → `\"`, a line feed → `\n`.

/// Appends `text` to `out`, escaped as an OpenMetrics label value.
pub(crate) fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `text` escaped as an OpenMetrics label value.
#[cfg(test)]
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// A valid metric name for `name`: every character outside
/// `[A-Za-z0-9_:]` becomes `_`, and an empty name or one that starts with
/// a digit gets a `_` in front.
pub(crate) fn metric_name(name: &str) -> String {
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

/// The stem of a family for a metric named `name`: a valid metric name
/// (a valid label name too if `label`, for a state set, whose label is
/// named after the family) that does not start with `__`, which
/// Prometheus reserves.
pub(crate) fn family_stem(name: &str, label: bool) -> String {
    let mut out = if label {
        label_name(name)
    } else {
        metric_name(name)
    };
    while out.starts_with("__") {
        out.remove(0);
    }
    out
}

/// A valid label name for `name` (as [`metric_name`], without `:`).
pub(crate) fn label_name(name: &str) -> String {
    metric_name(name).replace(':', "_")
}

/// Label names the exporter adds itself (array elements, bound
/// instances, histogram buckets, the processes of `pvar serve --all`) or
/// that Prometheus reserves (`__…`): a series may not use them.
pub(crate) const ADDED_LABELS: [&str; 8] = [
    "element", "bind", "object", "le", "quantile", "pid", "program", "rank",
];

/// Whether a (sanitised) label name is reserved: see [`ADDED_LABELS`].
pub(crate) fn is_reserved_label(name: &str) -> bool {
    name.starts_with("__") || ADDED_LABELS.contains(&name)
}

/// Splits a name in series notation, `base{k="v",…}`, into its base and
/// its labels (keys as written, values unescaped); any other name is its
/// own base with no labels.
pub(crate) fn split_series(name: &str) -> (&str, Vec<(String, String)>) {
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
        labels.push((key.to_string(), value));
        rest = &rest[end..];
        rest = match rest.strip_prefix(',') {
            Some(r) => r,
            None if rest.is_empty() => rest,
            None => return plain,
        };
    }
    (&name[..open], labels)
}

/// The unit a description carries at its end as `[unit: <name>]` (the
/// `metrics` recorder writes it for `describe_*!` with a unit), and the
/// description without it. A unit name is `[a-z0-9_]+`.
pub(crate) fn unit_mark(description: &str) -> (Option<&str>, &str) {
    let none = (None, description);
    let Some(body) = description.strip_suffix(']') else {
        return none;
    };
    let Some(at) = body.rfind("[unit: ") else {
        return none;
    };
    let unit = &body[at + 7..];
    let valid = !unit.is_empty()
        && unit
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return none;
    }
    (Some(unit), description[..at].trim_end())
}

/// `text` with the unit mark of `unit` appended (see [`unit_mark`]).
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) fn with_unit_mark(text: &str, unit: &str) -> String {
    if text.is_empty() {
        format!("[unit: {unit}]")
    } else {
        format!("{text} [unit: {unit}]")
    }
}

/// The shape of an exposed family: which samples it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// Samples `<family>_total`.
    Counter,
    /// Samples `<family>`.
    Gauge,
    /// Samples `<family>{<family>="<item>"}`.
    StateSet,
    /// Samples `<family>_bucket{le=…}`, `<family>_count`, `<family>_sum`.
    Histogram,
}

impl Shape {
    /// The family name of a series whose metric name is `stem` (already a
    /// valid metric name): a counter's `_total` taken off (its sample
    /// adds it), then the unit appended unless it is already the suffix.
    pub(crate) fn family_name(self, stem: &str, unit: Option<&str>) -> String {
        let mut name = stem;
        if self == Shape::Counter
            && let Some(stripped) = name.strip_suffix("_total")
            && !stripped.is_empty()
        {
            name = stripped;
        }
        match unit {
            Some(u) if !name.ends_with(&format!("_{u}")) => format!("{name}_{u}"),
            _ => name.to_string(),
        }
    }

    /// The names of the samples of family `family`.
    pub(crate) fn sample_names(self, family: &str) -> Vec<String> {
        match self {
            Shape::Counter => vec![format!("{family}_total")],
            Shape::Gauge | Shape::StateSet => vec![family.to_string()],
            Shape::Histogram => vec![
                format!("{family}_bucket"),
                format!("{family}_count"),
                format!("{family}_sum"),
            ],
        }
    }

    /// Every name family `family` takes: its own, its samples', and the
    /// `_created` OpenMetrics gives counters and histograms. No other
    /// family may use any of them.
    pub(crate) fn reserved_names(self, family: &str) -> Vec<String> {
        let mut names = vec![family.to_string()];
        names.extend(self.sample_names(family));
        if matches!(self, Shape::Counter | Shape::Histogram) {
            names.push(format!("{family}_created"));
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_backslash_quote_and_line_feed_only() {
        assert_eq!(escaped(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escaped("x\ny\tz"), "x\\ny\tz");
        assert_eq!(escaped("plain µs"), "plain µs");
    }

    #[test]
    fn names_become_valid() {
        assert_eq!(metric_name("cache-hits"), "cache_hits");
        assert_eq!(metric_name("9lives"), "_9lives");
        assert_eq!(metric_name(""), "_");
        assert_eq!(family_stem("__count", false), "_count");
        assert_eq!(family_stem(":_", true), "_");
        assert_eq!(family_stem("a:b", false), "a:b");
        assert_eq!(label_name("__name__"), "__name__");
        assert_eq!(metric_name("a:b"), "a:b");
        assert_eq!(label_name("a:b-c"), "a_b_c");
        assert!(is_reserved_label("__name__") && is_reserved_label("le"));
        assert!(!is_reserved_label("path"));
    }

    #[test]
    fn series_notation_splits_back() {
        assert_eq!(
            split_series(r#"req{a="x\"y\n",b="2"}"#),
            (
                "req",
                vec![("a".into(), "x\"y\n".into()), ("b".into(), "2".into())]
            )
        );
        assert_eq!(split_series("plain{").0, "plain{");
        assert_eq!(split_series(r#"bad{a=1}"#).1, vec![]);
    }

    #[test]
    fn units_are_read_from_the_end_of_a_description() {
        assert_eq!(
            unit_mark("bytes sent [unit: bytes]"),
            (Some("bytes"), "bytes sent")
        );
        assert_eq!(unit_mark("[unit: seconds]"), (Some("seconds"), ""));
        assert_eq!(
            unit_mark("x [unit: Bad Unit]"),
            (None, "x [unit: Bad Unit]")
        );
        assert_eq!(unit_mark("no unit"), (None, "no unit"));
        assert_eq!(with_unit_mark("", "bytes"), "[unit: bytes]");
    }

    #[test]
    fn families_take_their_sample_names() {
        assert_eq!(Shape::Counter.family_name("jobs_total", None), "jobs");
        assert_eq!(
            Shape::Counter.family_name("sent", Some("bytes")),
            "sent_bytes"
        );
        assert_eq!(
            Shape::Counter.family_name("x_total", Some("bytes")),
            "x_bytes"
        );
        assert_eq!(Shape::Counter.family_name("_total", None), "_total");
        assert_eq!(
            Shape::Gauge.family_name("t_seconds", Some("seconds")),
            "t_seconds"
        );
        assert_eq!(Shape::Counter.sample_names("jobs"), ["jobs_total"]);
        assert!(
            Shape::Histogram
                .reserved_names("h")
                .contains(&"h_count".to_string())
        );
    }
}
