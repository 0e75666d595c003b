//! Aligned text tables: `pvar list`, `pvar read`, the process list.
//!
//! Column widths come from the cells (capped per column, a longer cell
//! shortened in the middle); the last column is not padded and may carry
//! continuation lines, aligned under its first. Every cell is passed
//! through [`terminal_safe`] when it is added.

use std::fmt::Write as _;

use super::text::{shorten_middle, terminal_safe, width};

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// A column: its header, alignment and widest cell.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    header: &'static str,
    align: Align,
    max: usize,
}

impl Col {
    /// A left-aligned column.
    pub const fn left(header: &'static str) -> Col {
        Col {
            header,
            align: Align::Left,
            max: usize::MAX,
        }
    }

    /// A right-aligned column.
    pub const fn right(header: &'static str) -> Col {
        Col {
            header,
            align: Align::Right,
            max: usize::MAX,
        }
    }

    /// Cells wider than `max` are shortened in the middle.
    pub const fn max(mut self, max: usize) -> Col {
        self.max = max;
        self
    }
}

/// A line of a table after its header.
#[derive(Debug, Clone)]
enum Line {
    /// Cells, then continuation lines of the last column.
    Row(Vec<String>, Vec<String>),
    /// A line of its own under the row before, indented 4 more than the
    /// table (a description).
    Note(String),
}

/// A table being built; [`Table::render`] lays it out.
#[derive(Debug, Clone)]
pub struct Table {
    cols: Vec<Col>,
    rows: Vec<Line>,
    indent: usize,
}

impl Table {
    /// A table with these columns, indented by two spaces.
    pub fn new(cols: &[Col]) -> Table {
        Table {
            cols: cols.to_vec(),
            rows: Vec::new(),
            indent: 2,
        }
    }

    /// Spaces before each line.
    pub fn indent(mut self, n: usize) -> Table {
        self.indent = n;
        self
    }

    /// Adds a row (missing cells are empty, extra ones dropped).
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        self.row_with_more(cells, std::iter::empty::<&str>())
    }

    /// Adds a row whose last column continues on more lines.
    pub fn row_with_more<S: AsRef<str>, T: AsRef<str>>(
        &mut self,
        cells: impl IntoIterator<Item = S>,
        more: impl IntoIterator<Item = T>,
    ) -> &mut Table {
        let mut cells: Vec<String> = cells
            .into_iter()
            .take(self.cols.len())
            .map(|c| terminal_safe(c.as_ref()).into_owned())
            .collect();
        cells.resize(self.cols.len(), String::new());
        let more = more
            .into_iter()
            .map(|l| terminal_safe(l.as_ref()).into_owned())
            .collect();
        self.rows.push(Line::Row(cells, more));
        self
    }

    /// Adds a line of free text under the last row (skipped if empty).
    pub fn note(&mut self, text: impl AsRef<str>) -> &mut Table {
        let text = text.as_ref();
        if !text.is_empty() {
            self.rows.push(Line::Note(terminal_safe(text).into_owned()));
        }
        self
    }

    /// The header line and the rows, each line ending in `\n`.
    pub fn render(&self) -> String {
        let last = self.cols.len().saturating_sub(1);
        let widths: Vec<usize> = self
            .cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let widest = self
                    .rows
                    .iter()
                    .filter_map(|l| match l {
                        Line::Row(cells, _) => Some(width(&cells[i])),
                        Line::Note(_) => None,
                    })
                    .chain([width(c.header)])
                    .max()
                    .unwrap_or(0);
                widest.min(c.max.max(width(c.header)))
            })
            .collect();
        let mut out = String::new();
        let headers: Vec<&str> = self.cols.iter().map(|c| c.header).collect();
        self.line(&mut out, &widths, &headers);
        let continuation = self.indent + widths[..last].iter().map(|w| w + 2).sum::<usize>();
        let note = self.indent + 4;
        for l in &self.rows {
            match l {
                Line::Row(cells, more) => {
                    let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
                    self.line(&mut out, &widths, &cells);
                    for l in more {
                        let _ = writeln!(out, "{:continuation$}{l}", "");
                    }
                }
                Line::Note(text) => {
                    let _ = writeln!(out, "{:note$}{text}", "");
                }
            }
        }
        out
    }

    fn line(&self, out: &mut String, widths: &[usize], cells: &[&str]) {
        let last = cells.len().saturating_sub(1);
        let mut line = " ".repeat(self.indent);
        for (i, (cell, col)) in cells.iter().zip(&self.cols).enumerate() {
            let text = shorten_middle(cell, widths[i]);
            let pad = widths[i].saturating_sub(width(&text));
            match col.align {
                _ if i == last && col.align == Align::Left => line.push_str(&text),
                Align::Left => {
                    line.push_str(&text);
                    line.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&text);
                }
            }
            if i != last {
                line.push_str("  ");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_the_last_continues() {
        let mut t = Table::new(&[Col::right("IDX"), Col::left("NAME"), Col::left("VALUE")]);
        t.row(["1", "sent", "7"]);
        t.row_with_more(["12", "a_longer_name", "[0 1]"], ["[2 3]"]);
        t.note("what it is");
        assert_eq!(
            t.render(),
            "  IDX  NAME           VALUE\n    1  sent           7\n   12  a_longer_name  [0 1]\n                      [2 3]\n      what it is\n"
        );
    }

    #[test]
    fn cells_are_terminal_safe_and_capped() {
        let mut t = Table::new(&[Col::left("NAME").max(8), Col::left("V")]);
        t.row(["evil\x1b]0;title\x07", "x\x1b[2J"]);
        let out = t.render();
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.contains("x\\x1b[2J"), "{out}");
        // Capped at 8 columns, shortened in the middle.
        let row = out.lines().nth(1).unwrap();
        assert!(row.starts_with("  evil…x07  "), "{row:?}");
    }
}
