//! Series notation: how pvar writes the name of one labelled series of a
//! metric, `name{k1="v1",k2="v2"}`. The `metrics` recorder registers
//! variables under such names and the OpenMetrics exporter splits them
//! back into a metric and its labels; both escape text the same way,
//! here: `\` → `\\`, `"` → `\"`, a line feed → `\n`, as OpenMetrics
//! escapes label values and HELP text.

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
pub(crate) fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
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
}
