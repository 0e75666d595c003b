//! Series notation: the pvar name of one labelled series of a metric.
//!
//! `name{k1="v1",k2="v2"}`: the labels sorted by key (then by value, so
//! that duplicate keys come out in one order too), each value escaped as
//! OpenMetrics escapes label values (`\` → `\\`, `"` → `\"`, a line feed
//! → `\n`). Without labels the name is the metric name itself. Keys are
//! written verbatim: give them OpenMetrics label names
//! (`[a-zA-Z_][a-zA-Z0-9_]*`), as the `metrics` ecosystem expects anyway.

use crate::vocabulary::series;

/// The pvar name of the series of metric `name` with `labels`, in series
/// notation: `name` alone without labels, else
/// `name{k1="v1",k2="v2"}` with the labels sorted by key (then value) and
/// the values escaped as in OpenMetrics (`\\`, `\"`, `\n`).
///
/// This is the name under which [`PvarRecorder`](super::PvarRecorder)
/// registers a counter or gauge series (a histogram's three variables are
/// `series_name("<name>_bucket", labels)`, `…_le` and `…_sum`), so a
/// tool or a test can find it with
/// [`Pvars::index`](crate::Pvars::index).
///
/// ```
/// use pvar::recorder::series_name;
/// assert_eq!(series_name("requests", []), "requests");
/// assert_eq!(
///     series_name("requests", [("path", "/a\"b"), ("method", "GET")]),
///     r#"requests{method="GET",path="/a\"b"}"#
/// );
/// ```
pub fn series_name<'a>(name: &str, labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut labels: Vec<(&str, &str)> = labels.into_iter().collect();
    if labels.is_empty() {
        return name.to_string();
    }
    labels.sort_unstable();
    let mut out = String::with_capacity(
        name.len()
            + 2
            + labels
                .iter()
                .map(|(k, v)| k.len() + v.len() + 4)
                .sum::<usize>(),
    );
    out.push_str(name);
    out.push('{');
    for (i, (key, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(key);
        out.push_str("=\"");
        series::push_escaped(&mut out, value);
        out.push('"');
    }
    out.push('}');
    out
}

/// The series name of a `metrics` key, with `suffix` appended to its
/// metric name (`""`, `"_bucket"`, `"_le"`, `"_sum"`).
pub(super) fn key_series(key: &metrics::Key, suffix: &str) -> String {
    let name = format!("{}{suffix}", key.name());
    series_name(&name, key.labels().map(|l| (l.key(), l.value())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_escapes() {
        assert_eq!(series_name("m", []), "m");
        assert_eq!(
            series_name("m", [("b", "2"), ("a", "x\\y\n\"z\"")]),
            r#"m{a="x\\y\n\"z\"",b="2"}"#
        );
        assert_eq!(
            series_name("m", [("k", "2"), ("k", "1")]),
            r#"m{k="1",k="2"}"#
        );
    }

    #[test]
    fn keys_get_their_suffix_before_the_labels() {
        let key = metrics::Key::from_parts("h", vec![metrics::Label::new("z", "1")]);
        assert_eq!(key_series(&key, "_sum"), r#"h_sum{z="1"}"#);
        assert_eq!(key_series(&metrics::Key::from_name("h"), ""), "h");
    }
}
