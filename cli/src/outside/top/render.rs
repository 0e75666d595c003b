//! `pvar top`'s frame as lines of text, the same for the terminal and
//! for `--plain`: a header (the process, the snapshot's age, the
//! settings), the column titles, and a row per variable — an array with
//! its summary in the row and its elements as sub-rows (up to
//! [`ELEMENT_ROWS`], a compact list beyond), a bound variable with a
//! sub-row per object.

use pvar::PvarClass;
use pvar::export::{Number, Snapshot, VarSnapshot};

use super::model::{Entry, History, Instance, Settings, scale, summary, summary_label};
use crate::format::{group, group_signed, shorten_middle, terminal_safe, width as text_width};
use crate::outside::values::{age_s, item_name, number_text, object_text, short_float};

/// Arrays up to this many elements get a sub-row per element.
pub const ELEMENT_ROWS: usize = 8;

/// The key help of the interactive view.
const KEYS: &str = "[q]uit [s]ort [r]everse [/]filter [c]ategory";

/// Column widths when the screen has room (and in plain output): wide
/// enough that columns do not move as values grow.
const CLASS_W: usize = 13;
const VALUE_W: usize = 16;
const RATE_W: usize = 14;
const MARK_W: usize = 12;
/// Names are never given fewer columns than this (a narrower screen cuts
/// the rows' ends instead).
const NAME_MIN: usize = 12;

/// The widths of the columns after the name.
#[derive(Debug, Clone, Copy)]
struct Widths {
    class: usize,
    value: usize,
    rate: usize,
    mark: usize,
}

impl Widths {
    const ROOMY: Widths = Widths {
        class: CLASS_W,
        value: VALUE_W,
        rate: RATE_W,
        mark: MARK_W,
    };

    /// Columns the cells after the name take, with their separators.
    fn total(self) -> usize {
        self.class + self.value + self.rate + self.mark + 8
    }
}

/// A frame: header lines (always shown) and body lines (scrolled).
pub struct Frame {
    /// Process, snapshot, settings, column titles.
    pub header: Vec<String>,
    /// The variables.
    pub body: Vec<String>,
}

/// One line of the table before layout.
enum Line {
    Row {
        depth: usize,
        label: String,
        class: &'static str,
        value: String,
        rate: String,
        mark: String,
    },
    /// Free text (a compact list of elements), wrapped to the width.
    Text { depth: usize, text: String },
}

/// Cell `i` after the name (class, value, rate, mark) of a row.
fn row_cell(l: &Line, i: usize) -> Option<&str> {
    match l {
        Line::Row {
            class,
            value,
            rate,
            mark,
            ..
        } => Some([*class, value.as_str(), rate.as_str(), mark.as_str()][i]),
        Line::Text { .. } => None,
    }
}

/// One element in its display unit: a STATE's item name, a TIMER in
/// seconds, a PERCENTAGE in percent.
fn element_text(snap: &Snapshot, v: &VarSnapshot, n: Number) -> String {
    match v.class {
        PvarClass::State => item_name(snap, v, n).map_or_else(|| n.to_string(), str::to_string),
        PvarClass::Timer => format!("{} s", short_float(n.as_f64() * scale(v))),
        PvarClass::Percentage => format!("{:.1}%", n.as_f64() * 100.0),
        _ => number_text(n),
    }
}

/// A summary ([`summary`]) or single value already in display units.
fn value_text(v: &VarSnapshot, x: f64) -> String {
    match v.class {
        PvarClass::Timer => format!("{} s", short_float(x)),
        PvarClass::Percentage => format!("{:.1}%", x * 100.0),
        _ if v.datatype.is_unsigned() && (0.0..1.8e19).contains(&x) => group(x.round() as u64),
        _ if matches!(v.values.first(), Some(Number::Signed(_))) && x.abs() < 9e18 => {
            group_signed(x.round() as i64)
        }
        _ => short_float(x),
    }
}

/// A rate: per second, seconds per second for a TIMER.
fn rate_text(v: &VarSnapshot, r: f64) -> String {
    if v.class == PvarClass::Timer {
        format!("{r:.3} s/s")
    } else {
        format!("{}/s", short_float(r))
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_default()
}

/// The summary cell of many elements: `sum 1,234`, `max 7`; empty for
/// STATE and GENERIC arrays.
fn summary_cell(v: &VarSnapshot, x: Option<f64>) -> String {
    x.map(|x| format!("{} {}", summary_label(v.class), value_text(v, x)))
        .unwrap_or_default()
}

/// The rows of an instance's elements, under its row.
fn element_lines(snap: &Snapshot, inst: &Instance<'_>, depth: usize, out: &mut Vec<Line>) {
    let v = inst.v;
    let n = v.values.len();
    if n <= ELEMENT_ROWS {
        for (i, x) in v.values.iter().enumerate() {
            out.push(Line::Row {
                depth,
                label: format!("[{i}]"),
                class: "",
                value: element_text(snap, v, *x),
                rate: opt(inst.rates.as_ref().map(|r| r[i]), |r| rate_text(v, r)),
                mark: v
                    .marks
                    .as_ref()
                    .map(|m| element_text(snap, v, m[i]))
                    .unwrap_or_default(),
            });
        }
        return;
    }
    let list = |xs: &[Number]| -> String {
        xs.iter()
            .map(|x| element_text(snap, v, *x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let label = if v.marks.is_some() { "level " } else { "" };
    out.push(Line::Text {
        depth,
        text: format!("{label}[0..{}] {}", n - 1, list(&v.values)),
    });
    if let Some(m) = &v.marks {
        out.push(Line::Text {
            depth,
            text: format!("mark [0..{}] {}", n - 1, list(m)),
        });
    }
}

/// The lines of one variable.
fn entry_lines(snap: &Snapshot, e: &Entry<'_>, out: &mut Vec<Line>) {
    let v = e.var;
    let class = v.class.short_name();
    let has_values = e.instances.iter().any(|i| !i.v.values.is_empty());
    let mark_of = |x: Option<f64>| opt(x, |m| value_text(v, m * scale(v)));
    if !has_values {
        let why = if e.is_bound() {
            "(no instance)"
        } else {
            "(inactive)"
        };
        out.push(Line::Row {
            depth: 0,
            label: v.name.clone(),
            class,
            value: why.into(),
            rate: String::new(),
            mark: String::new(),
        });
        return;
    }
    if !e.is_bound() {
        let inst = &e.instances[0];
        let single = v.values.len() == 1;
        out.push(Line::Row {
            depth: 0,
            label: v.name.clone(),
            class,
            value: if single {
                element_text(snap, v, v.values[0])
            } else {
                summary_cell(v, e.value)
            },
            rate: opt(e.rate, |r| rate_text(v, r)),
            mark: mark_of(e.mark),
        });
        if !single {
            element_lines(snap, inst, 1, out);
        }
        return;
    }
    out.push(Line::Row {
        depth: 0,
        label: v.name.clone(),
        class,
        value: summary_cell(v, e.value),
        rate: opt(e.rate, |r| rate_text(v, r)),
        mark: mark_of(e.mark),
    });
    for inst in &e.instances {
        let iv = inst.v;
        let Some(object) = object_text(iv) else {
            continue;
        };
        let xs: Vec<f64> = iv.values.iter().map(|n| n.as_f64() * scale(iv)).collect();
        let single = iv.values.len() == 1;
        let marks: Vec<f64> = iv.marks.iter().flatten().map(|n| n.as_f64()).collect();
        out.push(Line::Row {
            depth: 1,
            label: object,
            class: "",
            value: if iv.values.is_empty() {
                "(inactive)".into()
            } else if single {
                element_text(snap, iv, iv.values[0])
            } else {
                summary_cell(iv, summary(iv.class, &xs))
            },
            rate: opt(inst.rates.as_ref().map(|r| r.iter().sum::<f64>()), |r| {
                rate_text(iv, r)
            }),
            mark: mark_of(summary(iv.class, &marks)),
        });
        if !single {
            element_lines(snap, inst, 2, out);
        }
    }
}

/// Joins `parts` with two spaces into lines of at most `w` characters
/// (`None`: one line), breaking between parts: a header line that does
/// not fit the screen continues on the next instead of being cut.
fn fit(parts: &[String], w: Option<usize>) -> Vec<String> {
    let mut lines = vec![String::new()];
    for p in parts.iter().filter(|p| !p.is_empty()) {
        let last = lines.last_mut().expect("one line at least");
        let len = text_width(last);
        if len > 0 && w.is_some_and(|w| len + 2 + text_width(p) > w) {
            lines.push(p.clone());
        } else {
            if len > 0 {
                last.push_str("  ");
            }
            last.push_str(p);
        }
    }
    lines
}

/// Splits `text` into lines of at most `w` characters, at spaces where it
/// can.
fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(10);
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        let len = last.chars().count();
        if len > 0 && len + 1 + word.chars().count() > w {
            lines.push(word.to_string());
        } else {
            if len > 0 {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// Lays out a frame. `width`: the terminal's columns (`None`: plain
/// output, no limit); `status`: the settings line to show instead of the
/// usual one (filter editing); `keys`: add the key help (interactive).
pub fn frame(
    h: &History,
    entries: &[Entry<'_>],
    s: &Settings,
    width: Option<usize>,
    status: Option<String>,
    keys: bool,
) -> Frame {
    let snap = h.current();
    let p = &snap.process;
    let mut lines = Vec::new();
    for e in entries {
        entry_lines(snap, e, &mut lines);
    }
    let label_w = lines
        .iter()
        .map(|l| match l {
            Line::Row { depth, label, .. } => 2 * depth + text_width(label),
            Line::Text { .. } => 0,
        })
        .max()
        .unwrap_or(0)
        .clamp(8, 48);
    // On a screen too narrow for the roomy columns, each column takes only
    // what its cells need, and the names get the rest.
    let widths = match width {
        Some(w) if Widths::ROOMY.total() + label_w + 1 > w => {
            let widest = |header: &str, cell: fn(&Line) -> Option<&str>, cap: usize| {
                lines
                    .iter()
                    .filter_map(cell)
                    .map(text_width)
                    .chain([text_width(header)])
                    .max()
                    .unwrap_or(0)
                    .min(cap)
            };
            Widths {
                class: widest("CLASS", |l| row_cell(l, 0), CLASS_W),
                value: widest("VALUE", |l| row_cell(l, 1), VALUE_W),
                rate: widest("RATE", |l| row_cell(l, 2), RATE_W),
                mark: widest("MARK", |l| row_cell(l, 3), MARK_W),
            }
        }
        _ => Widths::ROOMY,
    };
    let name_w = match width {
        Some(w) => label_w
            .min(w.saturating_sub(widths.total() + 1))
            .max(NAME_MIN),
        None => label_w,
    };
    let Widths {
        class: class_w,
        value: value_w,
        rate: rate_w,
        mark: mark_w,
    } = widths;
    let row = |label: &str, class: &str, value: &str, rate: &str, mark: &str| -> String {
        // Names that differ only at the end (`…_hwm`, `…_lwm`) stay
        // distinguishable: shortened in the middle.
        format!(
            "{:<name_w$}  {:<class_w$}  {:>value_w$}  {:>rate_w$}  {:>mark_w$}",
            shorten_middle(label, name_w),
            class,
            value,
            rate,
            mark
        )
        .trim_end()
        .to_string()
    };
    let shown = entries.len();
    let total = {
        let mut idx: Vec<usize> = snap.variables.iter().map(|v| v.index).collect();
        idx.dedup();
        idx.len()
    };
    let program = if p.program.is_empty() {
        "?"
    } else {
        &p.program
    };
    let mut header = fit(
        &[
            format!("pvar top - {program} (pid {})", p.pid),
            format!("engine {}", p.engine_version),
            format!("threads {}", p.live_threads),
            format!("snapshot #{}, {:.2} s old", p.sequence, age_s(snap)),
            format!("variables {shown}/{total}"),
        ],
        width,
    );
    let settings = match status {
        Some(status) => vec![status],
        None => {
            let dir = match (s.sort, s.reverse) {
                (super::model::Sort::Name | super::model::Sort::Class, false) => "",
                (super::model::Sort::Name | super::model::Sort::Class, true) => " (reversed)",
                (_, false) => " (largest first)",
                (_, true) => " (smallest first)",
            };
            let mut parts = vec![
                format!("sort: {}{dir}", s.sort.label()),
                format!(
                    "filter: {}",
                    if s.filter.is_empty() { "-" } else { &s.filter }
                ),
                format!("category: {}", s.category.as_deref().unwrap_or("all")),
            ];
            if keys {
                // The key help stays one piece: on its own line if the
                // settings leave no room for it.
                parts.push(KEYS.to_string());
            }
            fit(&parts, width)
        }
    };
    header.extend(settings);
    header.push(row("NAME", "CLASS", "VALUE", "RATE", "MARK"));
    let mut body = Vec::new();
    for l in lines {
        match l {
            Line::Row {
                depth,
                label,
                class,
                value,
                rate,
                mark,
            } => body.push(row(
                &format!("{:w$}{label}", "", w = 2 * depth),
                class,
                &value,
                &rate,
                &mark,
            )),
            Line::Text { depth, text } => {
                let indent = 2 * depth;
                let w = width.map_or(usize::MAX, |w| w.saturating_sub(indent + 1));
                for t in wrap(&text, w) {
                    body.push(format!("{:indent$}{t}", ""));
                }
            }
        }
    }
    if entries.is_empty() {
        body.push("(no variable matches the filter and category)".into());
    }
    // Names, item names and the program come from the process: no control
    // character of theirs reaches the terminal.
    let safe = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .map(|l| terminal_safe(&l).into_owned())
            .collect()
    };
    Frame {
        header: safe(header),
        body: safe(body),
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{History, Sort, entries};
    use super::*;

    #[test]
    fn arrays_get_sub_rows_and_a_summary() {
        let reg = pvar::Registry::new();
        let c = reg.counter("small").count(3).register().unwrap();
        c.add_at(0, 2);
        c.add_at(2, 5);
        reg.counter("large")
            .count(20)
            .register()
            .unwrap()
            .add_at(19, 1);
        let h = History::new(Snapshot::take(&reg));
        let s = Settings {
            sort: Sort::Name,
            reverse: false,
            filter: String::new(),
            category: None,
        };
        let e = entries(&h, &s);
        let f = frame(&h, &e, &s, Some(100), None, false);
        let body = f.body.join("\n");
        assert!(body.contains("sum 7"), "{body}");
        assert!(body.contains("  [2]"), "{body}");
        assert!(body.contains("[0..19] 0 0"), "{body}");
        assert!(f.header.last().unwrap().contains("RATE"), "{:?}", f.header);
        assert!(f.body.iter().all(|l| l.chars().count() <= 100), "{body}");
    }

    /// The demo's kind of variables on an 80-column terminal: every line
    /// fits, names that differ only at the end stay apart, the key help is
    /// whole.
    #[test]
    fn eighty_columns_keep_names_apart_and_the_keys_whole() {
        let reg = pvar::Registry::new();
        let hwm = reg
            .high_watermark::<u64>("demo_queue_depth_hwm")
            .count(4)
            .register()
            .unwrap();
        hwm.update_at(2, 1025);
        reg.low_watermark::<u64>("demo_queue_depth_lwm")
            .count(4)
            .register()
            .unwrap();
        reg.counter("demo_msgs_sent")
            .register()
            .unwrap()
            .add(3_325_124);
        reg.aggregate::<u64>("demo_bytes_received_from_every_peer_in_total")
            .register()
            .unwrap()
            .add(851_200_000);
        reg.aggregate::<u64>("demo_bytes_received_from_every_peer_on_average")
            .register()
            .unwrap()
            .add(7);
        reg.timer("demo_send_time").register().unwrap();
        let h = History::new(Snapshot::take(&reg));
        let s = Settings {
            sort: Sort::Rate,
            reverse: false,
            filter: String::new(),
            category: None,
        };
        let e = entries(&h, &s);
        let f = frame(&h, &e, &s, Some(80), None, true);
        let all: Vec<&String> = f.header.iter().chain(&f.body).collect();
        for l in &all {
            assert!(
                l.chars().count() <= 80,
                "{} columns: {l:?}",
                l.chars().count()
            );
        }
        assert!(
            f.header.iter().any(|l| l.contains(KEYS)),
            "the key help whole: {:?}",
            f.header
        );
        // Each variable's name cell, up to the class column.
        let name_cell = |name: &str| -> String {
            let row = f
                .body
                .iter()
                .find(|l| {
                    let head: String = name.chars().take(6).collect();
                    let tail: String = name.chars().skip(name.len() - 6).collect();
                    l.starts_with(&head) && l.split("  ").next().unwrap().ends_with(&tail)
                })
                .unwrap_or_else(|| panic!("no row for {name}:\n{}", f.body.join("\n")));
            row.split("  ").next().unwrap().to_string()
        };
        assert_eq!(name_cell("demo_queue_depth_hwm"), "demo_queue_depth_hwm");
        assert_eq!(name_cell("demo_queue_depth_lwm"), "demo_queue_depth_lwm");
        let total = name_cell("demo_bytes_received_from_every_peer_in_total");
        let average = name_cell("demo_bytes_received_from_every_peer_on_average");
        assert!(
            total.contains('…') && average.contains('…'),
            "{total} {average}"
        );
        assert_ne!(total, average);
    }

    #[test]
    fn fit_breaks_between_parts() {
        let parts = ["aaaa".to_string(), "bbbb".into(), "cc".into()];
        assert_eq!(fit(&parts, Some(10)), ["aaaa  bbbb", "cc"]);
        assert_eq!(fit(&parts, None), ["aaaa  bbbb  cc"]);
    }

    #[test]
    fn names_cannot_drive_the_terminal() {
        let reg = pvar::Registry::new();
        reg.counter("evil\x1b]0;title\x07\x1b[2J")
            .register()
            .unwrap()
            .inc();
        let h = History::new(Snapshot::take(&reg));
        let s = Settings {
            sort: Sort::Name,
            reverse: false,
            filter: String::new(),
            category: None,
        };
        let e = entries(&h, &s);
        let f = frame(&h, &e, &s, Some(100), None, false);
        let all = f.header.join("\n") + &f.body.join("\n");
        assert!(!all.contains(['\x1b', '\x07']), "{all:?}");
        assert!(all.contains("evil\\x1b]0;title"), "{all}");
    }

    #[test]
    fn wrap_keeps_words_whole() {
        assert_eq!(wrap("aaaa bbbb cccc", 10), ["aaaa bbbb", "cccc"]);
    }
}
