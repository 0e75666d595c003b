//! The report as JSON, schema `pvar.report.v2`, written by hand (strings
//! escaped per RFC 8259, non-finite numbers as `null`, object values as
//! `"0x…"` strings so that no 64-bit handle loses bits in a consumer that
//! reads numbers as doubles). The schema is in the `docs/mpi.md` guide.

use std::io::{self, Write};

use super::aggregate::{ElementReport, JobReport, NameCount, PeerReport, ProfileReport, VarReport};
use super::partial::Instance;
use super::stats::Stats;
use crate::export::snapshot::Number;

impl JobReport {
    /// Writes the report as JSON of schema `pvar.report.v2` (see the
    /// `docs/mpi.md` guide for the schema).
    pub fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        write_json(self, out)
    }
}

fn write_json(report: &JobReport, out: &mut impl Write) -> io::Result<()> {
    let mut w = Json(String::new());
    let o = &report.options;
    w.raw("{\n  \"schema\": ");
    w.str(super::JSON_SCHEMA);
    w.raw(&format!(",\n  \"nranks\": {}", report.nranks));
    w.raw(",\n  \"wall_seconds\": ");
    w.f64_opt(report.wall_time().map(|(d, _)| d.as_secs_f64()));
    w.raw(",\n  \"options\": {\"include_zero\": ");
    w.raw(bool_str(o.include_zero));
    w.raw(", \"auto_peer\": ");
    w.raw(bool_str(o.auto_peer));
    w.raw(", \"peer_variables\": ");
    w.str_array(o.peer_variables.iter().map(String::as_str));
    w.raw(&format!(
        ", \"matrix_bins\": {}, \"top_pairs\": {}, \"profile_bins\": {}}}",
        o.matrix_bins, o.top_pairs, o.profile_bins
    ));
    ranks(&mut w, report);
    w.raw(",\n  \"problems\": ");
    match &report.problems {
        Some((count, rank, why)) => {
            w.raw(&format!(
                "{{\"ranks\": {count}, \"first_rank\": {rank}, \"first\": "
            ));
            w.str(why);
            w.raw("}");
        }
        None => w.raw("null"),
    }
    w.raw(",\n  \"skipped_zero\": ");
    w.str_array(report.skipped_zero.iter().map(String::as_str));
    w.raw(",\n  \"variables\": [");
    for (i, v) in report.variables.iter().enumerate() {
        w.raw(if i == 0 { "\n    " } else { ",\n    " });
        variable(&mut w, v, o.include_zero);
    }
    w.raw("\n  ],\n  \"matrices\": [");
    let matrices = report
        .variables
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.peer.as_ref().map(|p| (i, v, p)));
    for (n, (i, v, p)) in matrices.enumerate() {
        w.raw(if n == 0 { "\n    " } else { ",\n    " });
        matrix(&mut w, i, v, p);
    }
    w.raw("\n  ],\n  \"profile\": [");
    for (i, p) in report.profile.iter().enumerate() {
        w.raw(if i == 0 { "\n    " } else { ",\n    " });
        profile(&mut w, p);
    }
    w.raw("\n  ]\n}\n");
    out.write_all(w.0.as_bytes())
}

fn ranks(w: &mut Json, report: &JobReport) {
    let r = &report.ranks;
    w.raw(&format!(
        ",\n  \"ranks\": {{\"reporting\": {}, \"programs\": ",
        r.reporting
    ));
    names(w, &r.programs);
    w.raw(&format!(
        ", \"other_programs\": {}, \"engines\": ",
        r.other_programs
    ));
    names(w, &r.engines);
    w.raw(&format!(
        ", \"other_engines\": {}, \"pids\": [",
        r.other_engines
    ));
    for (i, (rank, pid)) in r.pids.iter().enumerate() {
        if i > 0 {
            w.raw(", ");
        }
        w.raw(&format!("{{\"rank\": {rank}, \"pid\": {pid}}}"));
    }
    w.raw("],\n    \"elapsed_seconds\": ");
    stats_opt(w, r.elapsed.as_ref());
    w.raw(",\n    \"live_threads\": ");
    stats_opt(w, r.live_threads.as_ref());
    w.raw(",\n    \"snapshot_unix_ns\": ");
    match r.unix_ns {
        Some((a, b)) => w.raw(&format!("{{\"min\": {a}, \"max\": {b}}}")),
        None => w.raw("null"),
    }
    w.raw("}");
}

fn names(w: &mut Json, names: &[NameCount]) {
    w.raw("[");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            w.raw(", ");
        }
        w.raw("{\"name\": ");
        w.str(&n.name);
        w.raw(&format!(
            ", \"ranks\": {}, \"first_rank\": {}}}",
            n.ranks, n.first_rank
        ));
    }
    w.raw("]");
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

fn variable(w: &mut Json, v: &VarReport, include_zero: bool) {
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
    w.raw(bool_str(v.peer.is_some()));
    w.raw(&format!(
        ", \"inconsistent_ranks\": {}, \"count\": {}",
        v.inconsistent_ranks,
        v.elements.len()
    ));
    // Elements zero on every rank are left out (unless asked for): the
    // per-collective arrays are mostly zero.
    w.raw(",\n      \"elements\": [");
    let shown = v.elements.iter().filter(|e| include_zero || e.nonzero);
    for (i, e) in shown.enumerate() {
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
    w.raw(&format!(", \"nonzero\": {}, ", bool_str(e.nonzero)));
    stat_fields(w, e.stats.as_ref());
    w.raw("}");
}

/// The fields of a [`Stats`] (all `null` without one), inside an object.
fn stat_fields(w: &mut Json, s: Option<&Stats>) {
    w.raw(&format!("\"ranks\": {}", s.map_or(0, |s| s.ranks)));
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
}

fn stats_opt(w: &mut Json, s: Option<&Stats>) {
    match s {
        Some(s) => {
            w.raw("{");
            stat_fields(w, Some(s));
            w.raw("}");
        }
        None => w.raw("null"),
    }
}

fn matrix(w: &mut Json, index: usize, v: &VarReport, p: &PeerReport) {
    w.raw(&format!("{{\"variable\": {index}, \"name\": "));
    w.str(&v.name);
    w.raw(", \"instance\": ");
    instance(w, &v.instance);
    w.raw(", \"class\": ");
    w.str(v.class.short_name());
    w.raw(", \"unit\": ");
    match v.unit {
        Some(u) => w.str(u),
        None => w.raw("null"),
    }
    w.raw(&format!(
        ", \"nranks\": {}, \"bins\": {}, \"exact\": {}, \"total\": ",
        p.nranks,
        p.bins,
        bool_str(p.is_exact())
    ));
    w.number_opt(Some(p.total));
    w.raw(",\n      \"sent\": ");
    stats_opt(w, p.sent.as_ref());
    w.raw(",\n      \"bin_starts\": [");
    for b in 0..p.bins {
        if b > 0 {
            w.raw(", ");
        }
        w.raw(&p.bin_ranks(b).start.to_string());
    }
    w.raw("],\n      \"top_pairs\": [");
    for (i, t) in p.top.iter().enumerate() {
        if i > 0 {
            w.raw(", ");
        }
        w.raw(&format!(
            "{{\"from\": {}, \"to\": {}, \"value\": ",
            t.from, t.to
        ));
        w.number_opt(Some(t.value));
        w.raw("}");
    }
    w.raw("],\n      \"rows\": [");
    for (r, row) in p.dense().iter().enumerate() {
        if r > 0 {
            w.raw(",\n        ");
        }
        w.raw("[");
        for (c, x) in row.iter().enumerate() {
            if c > 0 {
                w.raw(", ");
            }
            w.number_opt(Some(*x));
        }
        w.raw("]");
    }
    w.raw("]}");
}

fn profile(w: &mut Json, p: &ProfileReport) {
    w.raw("{\"name\": ");
    w.str(&p.name);
    w.raw(", \"unit\": ");
    match p.unit {
        Some(u) => w.str(u),
        None => w.raw("null"),
    }
    w.raw(&format!(
        ", \"nranks\": {}, \"bins\": {}, \"exact\": {},\n      \"overall\": ",
        p.nranks,
        p.bins,
        bool_str(p.bins == p.nranks)
    ));
    stats_opt(w, p.overall.as_ref());
    w.raw(",\n      \"blocks\": [");
    for (i, b) in p.blocks.iter().enumerate() {
        w.raw(if i == 0 { "\n        " } else { ",\n        " });
        w.raw(&format!(
            "{{\"bin\": {}, \"first_rank\": {}, \"last_rank\": {}, ",
            b.bin,
            b.ranks.start,
            b.ranks.end.saturating_sub(1)
        ));
        stat_fields(w, Some(&b.stats));
        w.raw("}");
    }
    w.raw("]}");
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
        for n in [
            Some(Number::Double(f64::NAN)),
            Some(Number::Double(f64::INFINITY)),
            Some(Number::Double(2.5e-7)),
            Some(Number::Double(1.0)),
            Some(Number::Signed(-3)),
            None,
        ] {
            w.number_opt(n);
            w.raw(" ");
        }
        assert_eq!(w.0, "null null 2.5e-7 1.0 -3 null ");
    }
}
