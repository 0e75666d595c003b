//! Planned families as text, in either format.

use std::fmt::Write;

use super::format::Format;
use super::plan::Family;
use crate::vocabulary::series::{Shape, push_escaped};

/// Writes `families` in `format` (OpenMetrics ends with `# EOF`).
pub(super) fn families(families: &[Family<'_>], format: Format) -> String {
    let mut out = String::new();
    for f in families {
        let kind = match (f.shape, format) {
            (Shape::Counter, _) => "counter",
            (Shape::Gauge, _) | (Shape::StateSet, Format::Prometheus) => "gauge",
            (Shape::StateSet, Format::OpenMetrics) => "stateset",
            (Shape::Histogram, _) => "histogram",
        };
        match format {
            Format::OpenMetrics => {
                let _ = writeln!(out, "# TYPE {} {kind}", f.name);
                if let Some(u) = f.unit {
                    let _ = writeln!(out, "# UNIT {} {u}", f.name);
                }
                if !f.help.is_empty() {
                    let _ = write!(out, "# HELP {} ", f.name);
                    push_escaped(&mut out, &f.help);
                    out.push('\n');
                }
            }
            Format::Prometheus => {
                // The classic format names a counter by its sample.
                let name = match f.shape {
                    Shape::Counter => format!("{}_total", f.name),
                    _ => f.name.clone(),
                };
                if !f.help.is_empty() {
                    let _ = write!(out, "# HELP {name} ");
                    push_help_classic(&mut out, &f.help);
                    out.push('\n');
                }
                let _ = writeln!(out, "# TYPE {name} {kind}");
            }
        }
        for l in &f.lines {
            out.push_str(&l.name);
            if !l.labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in l.labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(k);
                    out.push_str("=\"");
                    push_escaped(&mut out, v);
                    out.push('"');
                }
                out.push('}');
            }
            out.push(' ');
            out.push_str(&l.value);
            out.push('\n');
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// HELP text in the classic format: only `\` and line feeds are escaped.
fn push_help_classic(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A float as both formats write it: `NaN`, `+Inf`, `-Inf`; integral
/// values with `.0` (a float sample, and the canonical form of an `le`
/// bound).
pub(super) fn float_text(d: f64) -> String {
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if d == d.trunc() && d.abs() < 1e15 {
        format!("{d:.1}")
    } else {
        format!("{d}")
    }
}
