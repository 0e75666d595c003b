//! The report as JSON, schema `pvar.report.v1`, written by hand (strings
//! escaped per RFC 8259, non-finite numbers as `null`, object values as
//! `"0x…"` strings so that no 64-bit handle loses bits in a consumer that
//! reads numbers as doubles).

use std::io::{self, Write};

use super::aggregate::{ElementReport, Instance, JobReport, RankInfo, VarReport};
use crate::export::snapshot::Number;

impl JobReport {
    /// Writes the report as JSON of schema `pvar.report.v1` (see the
    /// `docs/mpi.md` guide for the schema).
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        write_json(self, out)
    }
}

fn write_json(report: &JobReport, out: &mut impl Write) -> io::Result<()> {
    let mut w = Json(String::new());
    w.raw("{\n  \"schema\": ");
    w.str(super::JSON_SCHEMA);
    w.raw(&format!(",\n  \"nranks\": {}", report.ranks.len()));
    w.raw(",\n  \"wall_seconds\": ");
    w.f64_opt(report.wall_time().map(|(d, _)| d.as_secs_f64()));
    w.raw(",\n  \"options\": {\"include_zero\": ");
    w.raw(bool_str(report.options.include_zero));
    w.raw(", \"auto_peer\": ");
    w.raw(bool_str(report.options.auto_peer));
    w.raw(", \"peer_variables\": ");
    w.str_array(report.options.peer_variables.iter().map(String::as_str));
    w.raw("}");
    w.raw(",\n  \"ranks\": [");
    for (i, r) in report.ranks.iter().enumerate() {
        w.raw(if i == 0 { "\n    " } else { ",\n    " });
        rank(&mut w, r);
    }
    w.raw("\n  ],\n  \"skipped_zero\": ");
    w.str_array(report.skipped_zero.iter().map(String::as_str));
    w.raw(",\n  \"variables\": [");
    for (i, v) in report.variables.iter().enumerate() {
        w.raw(if i == 0 { "\n    " } else { ",\n    " });
        variable(&mut w, v);
    }
    w.raw("\n  ],\n  \"matrices\": [");
    let matrices = report
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.peer_matrix);
    for (n, (i, v)) in matrices.enumerate() {
        w.raw(if n == 0 { "\n    " } else { ",\n    " });
        w.raw(&format!("{{\"variable\": {i}, \"name\": "));
        w.str(&v.name);
        w.raw(", \"instance\": ");
        instance(&mut w, &v.instance);
        w.raw(", \"rows\": [");
        for (r, row) in v.matrix().unwrap_or_default().iter().enumerate() {
            if r > 0 {
                w.raw(", ");
            }
            w.numbers(row);
        }
        w.raw("]}");
    }
    w.raw("\n  ]\n}\n");
    out.write_all(w.0.as_bytes())
}

fn rank(w: &mut Json, r: &RankInfo) {
    w.raw(&format!(
        "{{\"rank\": {}, \"pid\": {}, \"program\": ",
        r.rank, r.pid
    ));
    w.str(&r.program);
    w.raw(", \"engine_version\": ");
    w.str(&r.engine_version);
    w.raw(&format!(
        ", \"unix_ns\": {}, \"live_threads\": {}, \"elapsed_seconds\": ",
        r.unix_ns, r.live_threads
    ));
    w.f64_opt(r.elapsed.map(|d| d.as_secs_f64()));
    w.raw(", \"labels\": [");
    for (i, (object, label)) in r.labels.iter().enumerate() {
        if i > 0 {
            w.raw(", ");
        }
        w.raw(&format!("{{\"object\": \"{object:#x}\", \"label\": "));
        w.str(label);
        w.raw("}");
    }
    w.raw("]}");
}

fn instance(w: &mut Json, i: &Instance) {
    match i {
        Instance::Process => w.raw("null"),
        Instance::Labelled(l) => {
            w.raw("{\"label\": ");
            w.str(l);
            w.raw("}");
        }
        Instance::Object(o) => w.raw(&format!("{{\"object\": \"{o:#x}\"}}")),
    }
}

fn variable(w: &mut Json, v: &VarReport) {
    w.raw("{\"name\": ");
    w.str(&v.name);
    w.raw(", \"class\": ");
    w.str(v.class.short_name());
    w.raw(", \"datatype\": ");
    w.str(v.datatype.c_name());
    w.raw(", \"unit\": ");
    match v.unit {
        Some(u) => w.str(u),
        None => w.raw("null"),
    }
    w.raw(", \"bind\": ");
    w.str(v.bind.c_name());
    w.raw(", \"instance\": ");
    instance(w, &v.instance);
    w.raw(", \"category\": ");
    match &v.category {
        Some(c) => w.str(c),
        None => w.raw("null"),
    }
    w.raw(", \"description\": ");
    w.str(&v.description);
    w.raw(", \"has_total\": ");
    w.raw(bool_str(v.has_total()));
    w.raw(", \"peer_matrix\": ");
    w.raw(bool_str(v.peer_matrix));
    w.raw(",\n      \"elements\": [");
    for (i, e) in v.elements.iter().enumerate() {
        w.raw(if i == 0 { "\n        " } else { ",\n        " });
        element(w, e);
    }
    w.raw("]}");
}

fn element(w: &mut Json, e: &ElementReport) {
    w.raw(&format!("{{\"index\": {}, \"name\": ", e.index));
    match &e.name {
        Some(n) => w.str(n),
        None => w.raw("null"),
    }
    w.raw(", \"values\": ");
    w.numbers(&e.values);
    w.raw(", \"marks\": ");
    match &e.marks {
        Some(m) => w.numbers(m),
        None => w.raw("null"),
    }
    let s = e.stats.as_ref();
    w.raw(&format!(", \"ranks\": {}", s.map_or(0, |s| s.ranks)));
    w.raw(", \"total\": ");
    w.number_opt(s.and_then(|s| s.total));
    w.raw(", \"min\": ");
    w.number_opt(s.map(|s| s.min));
    w.raw(", \"min_rank\": ");
    w.usize_opt(s.map(|s| s.min_rank));
    w.raw(", \"mean\": ");
    w.f64_opt(s.map(|s| s.mean));
    w.raw(", \"max\": ");
    w.number_opt(s.map(|s| s.max));
    w.raw(", \"max_rank\": ");
    w.usize_opt(s.map(|s| s.max_rank));
    w.raw(", \"imbalance\": ");
    w.f64_opt(s.and_then(|s| s.imbalance));
    w.raw(", \"imbalance_fraction\": ");
    w.f64_opt(s.and_then(|s| s.imbalance_fraction));
    w.raw(", \"mark\": ");
    w.number_opt(s.and_then(|s| s.mark.map(|m| m.0)));
    w.raw(", \"mark_rank\": ");
    w.usize_opt(s.and_then(|s| s.mark.map(|m| m.1)));
    w.raw("}");
}

fn bool_str(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// A JSON text being built.
struct Json(String);

impl Json {
    fn raw(&mut self, s: &str) {
        self.0.push_str(s);
    }

    /// A string literal: `"` and `\` escaped, control characters as
    /// `\n`, `\t`, … or `\u00XX`; everything else (valid UTF-8) as is.
    fn str(&mut self, s: &str) {
        self.0.push('"');
        for c in s.chars() {
            match c {
                '"' => self.0.push_str("\\\""),
                '\\' => self.0.push_str("\\\\"),
                '\n' => self.0.push_str("\\n"),
                '\r' => self.0.push_str("\\r"),
                '\t' => self.0.push_str("\\t"),
                '\u{8}' => self.0.push_str("\\b"),
                '\u{c}' => self.0.push_str("\\f"),
                c if u32::from(c) < 0x20 => {
                    self.0.push_str(&format!("\\u{:04x}", u32::from(c)));
                }
                c => self.0.push(c),
            }
        }
        self.0.push('"');
    }

    fn str_array<'a>(&mut self, items: impl Iterator<Item = &'a str>) {
        self.0.push('[');
        for (i, s) in items.enumerate() {
            if i > 0 {
                self.0.push_str(", ");
            }
            self.str(s);
        }
        self.0.push(']');
    }

    fn f64_opt(&mut self, d: Option<f64>) {
        match d {
            // Debug prints the shortest round-tripping form, which is
            // valid JSON for finite values (`1.0`, `2.5e-7`, `1e300`).
            Some(d) if d.is_finite() => self.0.push_str(&format!("{d:?}")),
            _ => self.0.push_str("null"),
        }
    }

    fn number_opt(&mut self, n: Option<Number>) {
        match n {
            Some(Number::Unsigned(u)) => self.0.push_str(&u.to_string()),
            Some(Number::Signed(i)) => self.0.push_str(&i.to_string()),
            Some(Number::Double(d)) => self.f64_opt(Some(d)),
            None => self.0.push_str("null"),
        }
    }

    fn usize_opt(&mut self, n: Option<usize>) {
        match n {
            Some(n) => self.0.push_str(&n.to_string()),
            None => self.0.push_str("null"),
        }
    }

    fn numbers(&mut self, ns: &[Option<Number>]) {
        self.0.push('[');
        for (i, n) in ns.iter().enumerate() {
            if i > 0 {
                self.0.push_str(", ");
            }
            self.number_opt(*n);
        }
        self.0.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_numbers_are_valid_json_tokens() {
        let mut w = Json(String::new());
        w.str("a\"b\\c\n\u{1}é");
        assert_eq!(w.0, "\"a\\\"b\\\\c\\n\\u0001é\"");
        let mut w = Json(String::new());
        w.numbers(&[
            Some(Number::Double(f64::NAN)),
            Some(Number::Double(f64::INFINITY)),
            Some(Number::Double(2.5e-7)),
            Some(Number::Double(1.0)),
            Some(Number::Signed(-3)),
            None,
        ]);
        assert_eq!(w.0, "[null, null, 2.5e-7, 1.0, -3, null]");
    }
}
