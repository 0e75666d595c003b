//! The plain-text report: a header, the per-process variables, the
//! per-communicator (bound) variables and the per-peer matrices, in
//! aligned columns with grouped digits.

use std::io::{self, Write};
use std::time::Duration;

use super::aggregate::{ElementReport, JobReport, PeerReport, VarReport};
use super::partial::Instance;
use super::stats::{Stats, Sum};
use crate::export::snapshot::Number;
use crate::vocabulary::kinds::PvarClass;

impl JobReport {
    /// Writes the plain-text report (see the module documentation of
    /// [`report`](super)). Control characters other than the line breaks
    /// the report makes (names, labels and program names come from the
    /// ranks' payloads) are written as `?`, so a report is safe to print
    /// on a terminal.
    pub fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        write_text(self, &mut Printable(out))
    }
}

/// A writer that turns every control byte but `\n` into `?`.
struct Printable<'a, W: Write>(&'a mut W);

impl<W: Write> Write for Printable<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !buf.iter().any(|&b| is_control(b)) {
            return self.0.write(buf);
        }
        let clean: Vec<u8> = buf
            .iter()
            .map(|&b| if is_control(b) { b'?' } else { b })
            .collect();
        self.0.write_all(&clean)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

fn is_control(b: u8) -> bool {
    (b < 0x20 && b != b'\n') || b == 0x7f
}

fn write_text(report: &JobReport, out: &mut impl Write) -> io::Result<()> {
    header(report, out)?;
    let shown = |v: &&VarReport| v.peer.is_none();
    let unbound: Vec<&VarReport> = report
        .variables
        .iter()
        .filter(|v| v.instance == Instance::Process)
        .filter(shown)
        .collect();
    let bound: Vec<&VarReport> = report
        .variables
        .iter()
        .filter(|v| v.instance != Instance::Process)
        .filter(shown)
        .collect();
    let include_zero = report.options.include_zero;

    writeln!(out)?;
    writeln!(
        out,
        "@--- Per-process variables (statistics over ranks) {}",
        "-".repeat(28)
    )?;
    if unbound.is_empty() {
        writeln!(out, "(none)")?;
    } else {
        let own = [("Variable", L), ("Class", L), ("Unit", L)];
        let mut t = Table::new(&[&own[..], &STAT_COLUMNS].concat());
        for v in &unbound {
            for e in visible_elements(v, include_zero) {
                let mut row = vec![v.element_label(e.index), v.class.short_name().into()];
                row.push(v.unit.unwrap_or("").into());
                row.extend(stat_cells(v.class, e.stats.as_ref()));
                t.row(row);
            }
        }
        t.write(out)?;
    }

    if !bound.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "@--- Per communicator / bound object (one row per object label) {}",
            "-".repeat(14)
        )?;
        let own = [("Variable", L), ("Object", L), ("Class", L), ("Ranks", R)];
        let mut t = Table::new(&[&own[..], &STAT_COLUMNS].concat());
        for v in &bound {
            for e in visible_elements(v, include_zero) {
                let ranks = e.stats.as_ref().map_or(0, |s| s.ranks);
                let mut row = vec![
                    v.element_label(e.index),
                    v.instance.label(),
                    v.class.short_name().into(),
                    group_digits(&ranks.to_string()),
                ];
                row.extend(stat_cells(v.class, e.stats.as_ref()));
                t.row(row);
            }
        }
        t.write(out)?;
    }

    if !report.profile.is_empty() {
        writeln!(out)?;
        profile(report, out)?;
    }

    for (v, p) in report.matrices() {
        writeln!(out)?;
        matrix(report, v, p, out)?;
    }
    Ok(())
}

fn header(report: &JobReport, out: &mut impl Write) -> io::Result<()> {
    let n = report.nranks;
    let r = &report.ranks;
    writeln!(out, "@ pvar cross-rank report ({})", super::JSON_SCHEMA)?;
    if r.reporting == n as u64 {
        writeln!(out, "@ Ranks          : {}", group_digits(&n.to_string()))?;
    } else {
        writeln!(
            out,
            "@ Ranks          : {} ({} reported)",
            group_digits(&n.to_string()),
            group_digits(&r.reporting.to_string())
        )?;
    }
    if let Some((count, rank, why)) = &report.problems {
        writeln!(
            out,
            "@ Missing        : {count} rank(s) left out; rank {rank}: {why}"
        )?;
    }
    let tally = |names: &[super::aggregate::NameCount], other: u64, prefix: &str| {
        let mut parts: Vec<String> = names
            .iter()
            .map(|p| {
                let name = if p.name.is_empty() {
                    "?"
                } else {
                    p.name.as_str()
                };
                if p.ranks == n as u64 {
                    format!("{prefix}{name} (ranks 0-{})", n - 1)
                } else {
                    format!(
                        "{prefix}{name} ({} ranks from rank {})",
                        group_digits(&p.ranks.to_string()),
                        p.first_rank
                    )
                }
            })
            .collect();
        if other > 0 {
            parts.push(format!(
                "{} ranks with others",
                group_digits(&other.to_string())
            ));
        }
        parts.join("; ")
    };
    writeln!(
        out,
        "@ Programs       : {}",
        tally(&r.programs, r.other_programs, "")
    )?;
    let mut pids: Vec<String> = r.pids.iter().map(|(r, p)| format!("{r}:{p}")).collect();
    if n > r.pids.len() {
        pids.push(format!(
            "… and {} more",
            group_digits(&(n - r.pids.len()).to_string())
        ));
    }
    writeln!(out, "@ PIDs (rank:pid): {}", pids.join(" "))?;
    writeln!(
        out,
        "@ Engine         : {}",
        tally(&r.engines, r.other_engines, "pvar ")
    )?;
    match &r.elapsed {
        Some(s) => {
            let secs = |x: Number| {
                fmt_duration(Duration::try_from_secs_f64(x.as_f64()).unwrap_or_default())
            };
            writeln!(
                out,
                "@ Wall time      : {} (longest, rank {}); shortest {} (rank {})",
                secs(s.max),
                s.max_rank,
                secs(s.min),
                s.min_rank
            )?;
        }
        None => writeln!(out, "@ Wall time      : unknown")?,
    }
    if let Some((lo, hi)) = r.unix_ns {
        writeln!(
            out,
            "@ Snapshots at   : {} (first; spread over ranks {})",
            utc(lo),
            fmt_duration(Duration::from_nanos(hi.saturating_sub(lo)))
        )?;
    }
    let skipped = report.skipped_zero.len();
    writeln!(
        out,
        "@ Variables      : {} reported{}",
        report.variables.len(),
        if skipped > 0 {
            format!(", {skipped} zero on every rank left out")
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "@ Total          : sum over ranks (COUNTER, AGGREGATE, TIMER, LEVEL, SIZE); \
         watermarks: the job's mark"
    )?;
    writeln!(
        out,
        "@ Imbalance      : Max/Mean (1 = balanced) and Imb% = (max - mean) / max (0 = balanced)"
    )
}

/// The per-rank sums: a summary row each, and one row per rank where
/// the ranks are few and each has its own block.
fn profile(report: &JobReport, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "@--- Per-rank sums (profile: one value per rank) {}",
        "-".repeat(31)
    )?;
    let own = [("Series", L), ("Unit", L), ("Ranks", R)];
    let mut t = Table::new(&[&own[..], &STAT_COLUMNS].concat());
    for p in &report.profile {
        let ranks = p.overall.as_ref().map_or(0, |s| s.ranks);
        let mut row = vec![
            p.name.clone(),
            p.unit.unwrap_or("").into(),
            group_digits(&ranks.to_string()),
        ];
        row.extend(stat_cells(PvarClass::Counter, p.overall.as_ref()));
        t.row(row);
    }
    t.write(out)?;
    let n = report.nranks;
    let per_rank: Vec<_> = report
        .profile
        .iter()
        .filter(|p| p.bins == n && n <= report.options.max_matrix_ranks)
        .collect();
    if per_rank.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let mut cols: Vec<(String, Align)> = vec![("Rank".into(), R)];
    cols.extend(per_rank.iter().map(|p| (p.name.clone(), R)));
    let mut t = Table {
        headers: cols,
        rows: Vec::new(),
    };
    for rank in 0..n {
        let mut row = vec![rank.to_string()];
        for p in &per_rank {
            row.push(
                p.blocks
                    .iter()
                    .find(|b| b.ranks.start == rank)
                    .map_or("-".into(), |b| fmt_number(b.stats.max)),
            );
        }
        t.row(row);
    }
    t.write(out)
}

fn matrix(
    report: &JobReport,
    v: &VarReport,
    p: &PeerReport,
    out: &mut impl Write,
) -> io::Result<()> {
    let n = p.nranks;
    let on = match &v.instance {
        Instance::Process => String::new(),
        i => format!(" on {}", i.label()),
    };
    let unit = v.unit.map(|u| format!(", {u}")).unwrap_or_default();
    writeln!(
        out,
        "@--- Per-peer matrix: {}{on} ({}{unit}; row = rank, column = peer) {}",
        v.name,
        v.class.short_name(),
        "-".repeat(8)
    )?;
    if !p.is_exact() || n > report.options.max_matrix_ranks {
        if p.is_exact() {
            writeln!(
                out,
                "({} ranks: more than {} columns; the JSON has the matrix)",
                group_digits(&n.to_string()),
                report.options.max_matrix_ranks
            )?;
        } else {
            writeln!(
                out,
                "({} ranks: the JSON has the matrix in {b} x {b} blocks of about {} ranks)",
                group_digits(&n.to_string()),
                fmt_f64(n as f64 / p.bins as f64),
                b = p.bins,
            )?;
        }
        let own = [("Sent by a rank", L)];
        let mut t = Table::new(&[&own[..], &STAT_COLUMNS].concat());
        let mut row = vec![String::from("row total")];
        row.extend(stat_cells(v.class, p.sent.as_ref()));
        t.row(row);
        t.write(out)?;
        writeln!(out)?;
        let mut t = Table::new(&[("Largest", R), ("From", R), ("To", R), ("Value", R)]);
        for (i, pair) in p.top.iter().enumerate() {
            t.row(vec![
                (i + 1).to_string(),
                pair.from.to_string(),
                pair.to.to_string(),
                fmt_number(pair.value),
            ]);
        }
        return t.write(out);
    }
    let rows = p.dense();
    let row_total = |r: &Vec<Number>| total_of(r.iter().copied());
    let col_total = |c: usize| total_of(rows.iter().map(|r| r[c]));
    let mut cols: Vec<(String, Align)> = vec![("rank\\peer".into(), R)];
    cols.extend((0..n).map(|c| (c.to_string(), R)));
    cols.push(("Total".into(), R));
    let mut t = Table {
        headers: cols,
        rows: Vec::new(),
    };
    for (r, row) in rows.iter().enumerate() {
        let mut cells = vec![r.to_string()];
        cells.extend(row.iter().map(|x| fmt_number(*x)));
        cells.push(row_total(row));
        t.row(cells);
    }
    let mut totals = vec!["Total".to_string()];
    totals.extend((0..n).map(col_total));
    totals.push(fmt_number(p.total));
    t.row(totals);
    t.write(out)
}

/// The elements worth a row: those with a value somewhere, and not zero
/// on every rank (unless zeros are included).
fn visible_elements(v: &VarReport, include_zero: bool) -> impl Iterator<Item = &ElementReport> {
    v.elements
        .iter()
        .filter(move |e| e.stats.is_some() && (include_zero || v.elements.len() == 1 || e.nonzero))
}

/// The headers of the cells [`stat_cells`] writes, after a table's own.
const STAT_COLUMNS: [(&str, Align); 8] = [
    ("Total", R),
    ("Min", R),
    ("@rank", R),
    ("Mean", R),
    ("Max", R),
    ("@rank", R),
    ("Max/Mean", R),
    ("Imb%", R),
];

/// Total, min, @rank, mean, max, @rank, max/mean, imb%.
fn stat_cells(class: PvarClass, stats: Option<&Stats>) -> Vec<String> {
    let Some(s) = stats else {
        return vec!["-".into(); 8];
    };
    let total = match (&s.total, &s.mark) {
        (Some(t), _) => fmt_number(*t),
        (None, Some((m, _))) => format!("mark {}", fmt_number(*m)),
        _ => "-".into(),
    };
    vec![
        total,
        fmt_number(s.min),
        s.min_rank.to_string(),
        fmt_mean(class, s),
        fmt_number(s.max),
        s.max_rank.to_string(),
        s.imbalance.map_or("-".into(), |x| format!("{x:.2}")),
        s.imbalance_fraction
            .map_or("-".into(), |x| format!("{:.1}%", x * 100.0)),
    ]
}

fn fmt_mean(class: PvarClass, s: &Stats) -> String {
    let integral = !matches!(s.min, Number::Double(_)) && class != PvarClass::Timer;
    if integral && s.mean.fract() == 0.0 && s.mean.abs() < 1e15 {
        group_digits(&format!("{}", s.mean as i64))
    } else {
        fmt_f64(s.mean)
    }
}

fn total_of(nums: impl Iterator<Item = Number>) -> String {
    let mut s = Sum::default();
    nums.for_each(|n| s.add(n));
    fmt_number(s.total())
}

/// A value for a person: integers with grouped digits, doubles with
/// about four significant digits.
pub(super) fn fmt_number(n: Number) -> String {
    match n {
        Number::Unsigned(u) => group_digits(&u.to_string()),
        Number::Signed(i) => group_digits(&i.to_string()),
        Number::Double(d) => fmt_f64(d),
    }
}

/// A double with about four significant digits: grouped fixed-point from
/// 10^-6 to 10^15, scientific outside, `0` for zero.
pub(super) fn fmt_f64(d: f64) -> String {
    if d == 0.0 {
        return "0".into();
    }
    if !d.is_finite() {
        return format!("{d}");
    }
    let a = d.abs();
    if !(1e-6..1e15).contains(&a) {
        return format!("{d:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{d:.decimals$}");
    match s.split_once('.') {
        Some((int, frac)) => format!("{}.{frac}", group_digits(int)),
        None => group_digits(&s),
    }
}

/// A duration in s, ms or µs with about four significant digits.
pub(super) fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{} s", fmt_f64(s))
    } else if s >= 1e-3 {
        format!("{} ms", fmt_f64(s * 1e3))
    } else {
        format!("{} µs", fmt_f64(s * 1e6))
    }
}

/// `-1234567` → `-1,234,567`.
pub(super) fn group_digits(int: &str) -> String {
    let (sign, digits) = match int.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", int),
    };
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Nanoseconds since the Unix epoch as `YYYY-MM-DD hh:mm:ss UTC`.
pub(super) fn utc(unix_ns: u64) -> String {
    let secs = (unix_ns / 1_000_000_000) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a proleptic Gregorian date, by 400-year
    // eras of 146 097 days counted from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}
const L: Align = Align::Left;
const R: Align = Align::Right;

/// Columns sized to their widest cell, two spaces apart.
struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(cols: &[(&str, Align)]) -> Table {
        Table {
            headers: cols.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let width = |i: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(i))
                .chain(std::iter::once(&self.headers[i].0))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.headers.len()).map(width).collect();
        let line = |cells: &mut dyn Iterator<Item = &String>| {
            let mut s = String::new();
            for (i, c) in cells.enumerate() {
                let w = widths.get(i).copied().unwrap_or(0);
                let pad = w.saturating_sub(c.chars().count());
                if i > 0 {
                    s.push_str("  ");
                }
                match self.headers.get(i).map_or(Align::Left, |h| h.1) {
                    Align::Left => {
                        s.push_str(c);
                        s.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        s.push_str(&" ".repeat(pad));
                        s.push_str(c);
                    }
                }
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&mut self.headers.iter().map(|h| &h.0)))?;
        for r in &self.rows {
            writeln!(out, "{}", line(&mut r.iter()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(group_digits("1234567"), "1,234,567");
        assert_eq!(group_digits("-123"), "-123");
        assert_eq!(group_digits("-1234"), "-1,234");
        assert_eq!(fmt_f64(0.0012345), "0.001234");
        assert_eq!(fmt_f64(12.3456), "12.35");
        assert_eq!(fmt_f64(123456.7), "123,457");
        assert_eq!(fmt_f64(2.991e-4), "0.0002991");
        assert_eq!(fmt_f64(2.5e-7), "2.500e-7");
        assert_eq!(fmt_number(Number::Unsigned(1_000_000)), "1,000,000");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.500 s");
        assert_eq!(fmt_duration(Duration::from_micros(12_345)), "12.35 ms");
        assert_eq!(fmt_duration(Duration::from_nanos(49_940)), "49.94 µs");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400 * 1_000_000_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(
            utc(1_700_000_000 * 1_000_000_000),
            "2023-11-14 22:13:20 UTC"
        );
    }

    #[test]
    fn control_bytes_are_written_as_question_marks() {
        let mut out = Vec::new();
        write!(Printable(&mut out), "a\x1b[2Jb\tc\x7f\nd").unwrap();
        assert_eq!(out, b"a?[2Jb?c?\nd");
    }
}
