//! The live view: a table of every watched variable with its rate,
//! redrawn in place on a terminal, one plain progress line per second
//! otherwise.

use std::io::Write;

use super::tool::{NAMES, Snapshot, V};
use super::vars::{COMM_WORLD, STATE_NAMES};
use super::workload::Config;
use crate::format::group;

/// `872048` → `872k`, `3531972` → `3.53M`: short, for arrays.
pub fn compact(n: u64) -> String {
    let x = n as f64;
    if n < 10_000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.0}k", x / 1e3)
    } else if n < 1_000_000_000 {
        format!("{:.2}M", x / 1e6)
    } else {
        format!("{:.2}G", x / 1e9)
    }
}

/// A rate with a thousands separator, or a short float below 10.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x >= 10.0 {
        group(x.round() as u64)
    } else {
        format!("{x:.2}")
    }
}

/// Bytes as B / kB / MB / GB (decimal).
pub fn bytes(x: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"];
    let mut x = x;
    let mut u = 0;
    while x >= 1000.0 && u + 1 < units.len() {
        x /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{x:.0} {}", units[u])
    } else {
        format!("{x:.1} {}", units[u])
    }
}

fn list<T>(xs: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    let v: Vec<String> = xs.into_iter().map(f).collect();
    format!("[{}]", v.join(" "))
}

/// Columns and rows of the terminal on standard output (80 × 24 if
/// unknown).
fn terminal_size() -> (usize, usize) {
    // SAFETY: `winsize` is plain integers, for which all-zero is valid.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a `winsize` into `ws` and nothing else.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    let cols = if ok && ws.ws_col > 0 {
        ws.ws_col as usize
    } else {
        80
    };
    let rows = if ok && ws.ws_row > 0 {
        ws.ws_row as usize
    } else {
        24
    };
    (cols, rows)
}

/// Fits a frame into `rows` lines: all of it if it fits, else its first
/// lines and a last one saying how many were left out.
fn fit_rows(mut lines: Vec<String>, rows: usize) -> Vec<String> {
    if lines.len() > rows {
        let hidden = lines.len() - (rows - 1);
        lines.truncate(rows - 1);
        lines.push(format!(
            "  ... {hidden} more lines (a taller terminal shows them)"
        ));
    }
    lines
}

/// Where the view goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A terminal: redraw the table in place with ANSI cursor movement.
    Terminal,
    /// A pipe or file: a plain progress line per second.
    Plain,
    /// `--json`: nothing during the run.
    Quiet,
}

pub struct View {
    mode: Mode,
    cfg: Config,
    duration: f64,
    drawn: usize,
    last_plain: Option<Snapshot>,
}

impl View {
    pub fn new(mode: Mode, cfg: Config, duration: f64) -> Self {
        Self {
            mode,
            cfg,
            duration,
            drawn: 0,
            last_plain: None,
        }
    }

    /// Shows `cur` (rates against `prev`); `samples` is the sampler's count.
    pub fn show(&mut self, prev: &Snapshot, cur: &Snapshot, samples: u64, eager_limit: u64) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Terminal => {
                // The frame is redrawn by moving the cursor up over it: it
                // must fit the screen (a scrolled line cannot be reached)
                // and no line may wrap. Too few rows for a table: the
                // plain progress line instead.
                let (cols, rows) = terminal_size();
                if rows < 4 {
                    self.mode = Mode::Plain;
                    return self.show(prev, cur, samples, eager_limit);
                }
                let lines = fit_rows(self.table(prev, cur, samples, eager_limit), rows - 1);
                let cols = cols.saturating_sub(1).max(20);
                let mut out = std::io::stdout().lock();
                let mut s = String::new();
                if self.drawn > 0 {
                    s.push_str(&format!("\x1b[{}A", self.drawn));
                }
                for l in &lines {
                    s.push_str("\x1b[2K");
                    s.extend(l.trim_end().chars().take(cols));
                    s.push('\n');
                }
                let _ = out.write_all(s.as_bytes());
                let _ = out.flush();
                self.drawn = lines.len();
            }
            Mode::Plain => {
                let last = self.last_plain.get_or_insert_with(|| prev.clone());
                if cur.t - last.t >= 1.0 || cur.t >= self.duration {
                    let dt = (cur.t - last.t).max(1e-9);
                    println!(
                        "[{:4.1}/{:.1} s] sent {} ({}/s)  received {}  in flight {}  deepest inbox {}  samples {}",
                        cur.t,
                        self.duration,
                        group(cur.u(V::Sent)),
                        rate((cur.u(V::Sent) - last.u(V::Sent)) as f64 / dt),
                        group(cur.u(V::Recv)),
                        cur.u(V::InFlight),
                        cur.max(V::Depth),
                        group(samples),
                    );
                    *last = cur.clone();
                }
            }
        }
    }

    fn table(
        &self,
        prev: &Snapshot,
        cur: &Snapshot,
        samples: u64,
        eager_limit: u64,
    ) -> Vec<String> {
        let dt = (cur.t - prev.t).max(1e-9);
        let frac = (cur.t / self.duration).clamp(0.0, 1.0);
        let width = 24;
        let filled = (frac * width as f64).round() as usize;
        let bar = format!("{}{}", "#".repeat(filled), "-".repeat(width - filled));
        let proto = if self.cfg.burst > 1 {
            format!("eager ≤ {eager_limit} B, bursts of {}", self.cfg.burst)
        } else {
            format!("rendezvous > {eager_limit} B")
        };
        let mut l = vec![
            format!(
                "pvar demo: {} workers all-to-all, {} B messages ({proto})",
                self.cfg.threads, self.cfg.message_size
            ),
            format!("  [{bar}] {:.1} / {:.1} s", cur.t, self.duration),
            format!(
                "  {:<20} {:<13} {:>14}  {}",
                "variable", "class", "rate", "value"
            ),
        ];
        let name = |v: V| NAMES[v as usize].0;
        let class = |v: V| NAMES[v as usize].1.short_name().to_string();
        let mut row = |v: V, value: String, r: String| {
            l.push(format!(
                "  {:<20} {:<13} {:>14}  {}",
                name(v),
                class(v),
                r,
                value
            ));
        };
        let per_s = |v: V| rate((cur.u(v) - prev.u(v)) as f64 / dt) + "/s";
        row(V::Sent, group(cur.u(V::Sent)), per_s(V::Sent));
        row(V::Recv, group(cur.u(V::Recv)), per_s(V::Recv));
        row(
            V::BytesSent,
            bytes(cur.u(V::BytesSent) as f64),
            bytes((cur.u(V::BytesSent) - prev.u(V::BytesSent)) as f64 / dt) + "/s",
        );
        row(
            V::BytesRecv,
            bytes(cur.u(V::BytesRecv) as f64),
            bytes((cur.u(V::BytesRecv) - prev.u(V::BytesRecv)) as f64 / dt) + "/s",
        );
        for v in [V::SendTime, V::RecvTime] {
            row(
                v,
                format!("{:.3} s", cur.f(v)),
                format!("{:.2} s/s", (cur.f(v) - prev.f(v)) / dt),
            );
        }
        row(
            V::Depth,
            list(cur.elems(V::Depth), |x| x.to_string()),
            String::new(),
        );
        row(
            V::Hwm,
            list(cur.elems(V::Hwm), |x| x.to_string()),
            String::new(),
        );
        row(
            V::Lwm,
            list(cur.elems(V::Lwm), |x| x.to_string()),
            String::new(),
        );
        row(V::InFlight, group(cur.u(V::InFlight)), "by callback".into());
        row(
            V::State,
            list(cur.ints(V::State), |s| {
                // Four letters each, so that eight workers fit.
                let name = STATE_NAMES.get(s as usize).copied().unwrap_or("?");
                match name {
                    "computing" => "comp",
                    "receiving" => "recv",
                    other => &other[..other.len().min(4)],
                }
                .to_string()
            }),
            "enum".into(),
        );
        row(
            V::Busy,
            list(cur.fs(V::Busy), |p| format!("{:.0}%", p * 100.0)),
            String::new(),
        );
        row(
            V::PerPeer,
            list(cur.elems(V::PerPeer), compact),
            format!("comm {COMM_WORLD:#x}"),
        );
        row(
            V::MsgSize,
            format!("{} B", cur.u(V::MsgSize)),
            String::new(),
        );
        l.push(format!(
            "  {:<20} {:<13} {:>14}  {} samples",
            "sampler",
            "SIGPROF",
            "in handler",
            group(samples)
        ));
        l
    }

    /// Clears nothing but makes sure the cursor is below the table.
    pub fn finish(&mut self) {
        if self.mode == Mode::Terminal {
            println!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fit_rows;

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn a_frame_that_fits_is_unchanged() {
        assert_eq!(fit_rows(lines(5), 5), lines(5));
        assert_eq!(fit_rows(lines(2), 5), lines(2));
    }

    #[test]
    fn a_tall_frame_is_cut_to_the_rows_with_a_note() {
        let fitted = fit_rows(lines(12), 5);
        assert_eq!(fitted.len(), 5);
        assert_eq!(fitted[..4], lines(4)[..]);
        assert!(fitted[4].contains("8 more lines"), "{}", fitted[4]);
    }
}
