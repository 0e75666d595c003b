//! `pvar top <pid>`: a live view of another process's variables, redrawn
//! every interval — full-screen on a terminal, with keys to sort, filter
//! and choose a category; frames of plain text otherwise (`--plain`, or
//! standard output not a terminal).
//!
//! - `model`: snapshots, rates, selection and order;
//! - `render`: a frame as lines of text;
//! - `term`: the terminal (raw mode, alternate screen, keys), always
//!   restored.
//!
//! When the process ends (or stops exporting), `pvar top` says so and
//! exits with status 0; it notices within one interval.

mod model;
mod render;
mod term;

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use pvar::export::{Region, Snapshot};

use super::Res;
use super::open::{describe, is_gone, writer_gone};
use crate::format::terminal_safe;
use model::{History, Settings, Sort, categories_with_variables, category_set, entries};
use term::{Key, Terminal};

/// Options of `pvar top`.
#[derive(clap::Args)]
pub struct Args {
    /// The process to watch (it must export: `PVAR_EXPORT=1`, or
    /// `pvar demo`). Without it: the only process of this user that
    /// exports; if there are several, they are listed (as `pvar read`
    /// lists them) and one must be named.
    #[arg(value_name = "PID")]
    pid: Option<u32>,
    /// Seconds between frames, 0.05 to 3600.
    #[arg(long, default_value_t = 1.0, value_name = "SECS", allow_negative_numbers = true,
          value_parser = parse_interval)]
    interval: f64,
    /// Order of the variables: name (A to Z), value or rate (largest
    /// first), class. On a terminal `s` cycles through them and `r`
    /// reverses.
    #[arg(long, value_enum, default_value_t = Sort::Name)]
    sort: Sort,
    /// Show only variables whose name contains SUBSTR (case-insensitive;
    /// `/` edits it on a terminal).
    #[arg(long, value_name = "SUBSTR")]
    filter: Option<String>,
    /// Show only variables of category NAME and its sub-categories (`c`
    /// cycles through the categories on a terminal).
    #[arg(long, value_name = "NAME")]
    category: Option<String>,
    /// Stop after N frames (default: until `q`, Ctrl-C, or the process
    /// ends).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Print frames as plain text, separated by a line of dashes, without
    /// escape sequences (the default when standard output is not a
    /// terminal).
    #[arg(long)]
    plain: bool,
}

/// `--interval`: seconds, in [0.05, 3600].
fn parse_interval(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if (0.05..=3600.0).contains(&d) {
        Ok(d)
    } else {
        Err(format!("{s} is not in [0.05, 3600] seconds"))
    }
}

/// What the next read of the region gave.
enum Next {
    Snap(Snapshot),
    /// The process ended (or stopped exporting): the message to print.
    Ended(String),
}

/// Reads the next snapshot, or tells that the process is gone.
fn next(region: &mut Region, pid: u32) -> Res<Next> {
    let ended = || Ok(Next::Ended(format!("process {pid} ended")));
    if writer_gone(region) {
        return ended();
    }
    match pvar::export::read(region) {
        Ok(s) => Ok(Next::Snap(s)),
        Err(e) if is_gone(&e) => Ok(Next::Ended(super::open::ended_message(region, pid))),
        Err(e) => Err(describe(pid, e)),
    }
}

/// The process `pvar top` without a pid watches: the only one of this
/// user that exports (whose region can be read); none or several is an
/// error that says what to do, listing them.
fn only_exporting() -> Res<u32> {
    let listing = super::open::list_regions();
    let readable: Vec<(u32, String)> = listing
        .regions
        .iter()
        .filter_map(|l| {
            let mut region = pvar::export::Region::open_path(&l.path, l.pid)
                .and_then(|r| r.check_alive().map(|()| r))
                .ok()?;
            let snap = super::read(&mut region, l.pid, false).ok()?;
            Some((l.pid, snap.process.program))
        })
        .collect();
    match readable.as_slice() {
        [(pid, _)] => Ok(*pid),
        [] => Err(format!(
            "no process of this user exports its variables in {} (run one with \
             PVAR_EXPORT=1, or `pvar demo`; `pvar read` lists what is there)",
            terminal_safe(&listing.dir.display().to_string())
        )
        .into()),
        several => {
            let list: Vec<String> = several
                .iter()
                .map(|(pid, program)| format!("  {pid:>8}  {}", terminal_safe(program)))
                .collect();
            Err(format!(
                "{} processes export their variables; name one (pvar top PID):\n       PID  PROGRAM\n{}",
                several.len(),
                list.join("\n")
            )
            .into())
        }
    }
}

/// Runs `pvar top`.
pub fn run(args: Args) -> Res<()> {
    let pid = match args.pid {
        Some(pid) => pid,
        None => only_exporting()?,
    };
    let mut region = super::open(pid)?;
    let first = super::read(&mut region, pid, false)?;
    if let Some(c) = &args.category
        && category_set(&first, c).is_none()
    {
        let names: Vec<&str> = first.categories.iter().map(|c| c.name.as_str()).collect();
        let text = format!(
            "process {pid} has no category {c:?} (its categories: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return Err(crate::format::terminal_safe(&text).into_owned().into());
    }
    let settings = Settings {
        sort: args.sort,
        reverse: false,
        filter: args.filter.clone().unwrap_or_default(),
        category: args.category.clone(),
    };
    let history = History::new(first);
    let interval = Duration::from_secs_f64(args.interval);
    if !args.plain && std::io::stdout().is_terminal() {
        interactive(region, pid, history, settings, interval, args.iterations)
    } else {
        plain(region, pid, history, &settings, interval, args.iterations)
    }
}

/// Frames as plain text until the iterations are done or the process
/// ends.
fn plain(
    mut region: Region,
    pid: u32,
    mut history: History,
    settings: &Settings,
    interval: Duration,
    iterations: Option<u64>,
) -> Res<()> {
    let mut out = std::io::stdout().lock();
    let mut frames = 0u64;
    loop {
        let e = entries(&history, settings);
        let f = render::frame(&history, &e, settings, None, None, false);
        if frames > 0 {
            let titles = f.header.last().map_or(0, |t| t.chars().count());
            writeln!(out, "{}", "-".repeat(titles.max(40)))?;
        }
        for l in f.header.iter().chain(&f.body) {
            writeln!(out, "{l}")?;
        }
        out.flush()?;
        frames += 1;
        if iterations.is_some_and(|n| frames >= n) {
            return Ok(());
        }
        std::thread::sleep(interval);
        match next(&mut region, pid)? {
            Next::Snap(s) => history.push(s),
            Next::Ended(msg) => {
                writeln!(out, "{msg}")?;
                return Ok(());
            }
        }
    }
}

/// The interactive state: settings, the filter being edited, scrolling.
struct Ui {
    settings: Settings,
    /// The filter text being typed after `/`.
    editing: Option<String>,
    /// First body line shown.
    scroll: usize,
    /// Body lines that fit on the screen (for page keys).
    page: usize,
}

/// What a key did.
enum Action {
    Quit,
    Redraw,
    Nothing,
}

impl Ui {
    fn key(&mut self, key: Key, snap: &Snapshot) -> Action {
        if key == Key::CtrlC {
            return Action::Quit;
        }
        if let Some(text) = &mut self.editing {
            match key {
                Key::Char(c) => text.push(c),
                Key::Backspace => {
                    text.pop();
                }
                Key::Enter => {
                    self.settings.filter = self.editing.take().unwrap_or_default();
                    self.scroll = 0;
                }
                Key::Esc => self.editing = None,
                _ => return Action::Nothing,
            }
            return Action::Redraw;
        }
        match key {
            Key::Char('q') => return Action::Quit,
            Key::Char('s') => self.settings.sort = self.settings.sort.next(),
            Key::Char('r') => self.settings.reverse = !self.settings.reverse,
            Key::Char('/') => self.editing = Some(self.settings.filter.clone()),
            Key::Char('c') => {
                let cats = categories_with_variables(snap);
                let at = self
                    .settings
                    .category
                    .as_ref()
                    .and_then(|c| cats.iter().position(|x| x == c));
                self.settings.category = match at {
                    None => cats.first().cloned(),
                    Some(i) => cats.get(i + 1).cloned(),
                };
                self.scroll = 0;
            }
            Key::Up | Key::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            Key::Down | Key::Char('j') => self.scroll += 1,
            Key::PageUp => self.scroll = self.scroll.saturating_sub(self.page.max(1)),
            Key::PageDown | Key::Char(' ') => self.scroll += self.page.max(1),
            Key::Home | Key::Char('g') => self.scroll = 0,
            Key::End | Key::Char('G') => self.scroll = usize::MAX / 2,
            _ => return Action::Nothing,
        }
        Action::Redraw
    }

    /// Draws the current frame to fit the terminal.
    fn draw(&mut self, term: &mut Terminal, history: &History) {
        let (cols, rows) = term::size();
        let status = self
            .editing
            .as_ref()
            .map(|t| format!("filter: {t}_   (Enter applies, Esc cancels)"));
        let e = entries(history, &self.settings);
        let f = render::frame(history, &e, &self.settings, Some(cols), status, true);
        let avail = rows.saturating_sub(f.header.len()).max(1);
        let mut lines = f.header;
        if f.body.len() <= avail {
            self.scroll = 0;
            self.page = avail;
            lines.extend(f.body);
        } else {
            // The last row says which rows are shown.
            let shown = avail.saturating_sub(1).max(1);
            self.page = shown;
            self.scroll = self.scroll.min(f.body.len() - shown);
            let end = self.scroll + shown;
            lines.extend(f.body[self.scroll..end].iter().cloned());
            lines.push(format!(
                "-- rows {}-{end} of {} (arrows, PgUp/PgDn, Home/End scroll) --",
                self.scroll + 1,
                f.body.len()
            ));
        }
        lines.truncate(rows);
        term.draw(&lines, cols);
    }
}

/// The full-screen view until `q`, Ctrl-C, a signal, the iterations, or
/// the end of the process.
fn interactive(
    mut region: Region,
    pid: u32,
    mut history: History,
    settings: Settings,
    interval: Duration,
    iterations: Option<u64>,
) -> Res<()> {
    let mut term = Terminal::enter()?;
    let mut ui = Ui {
        settings,
        editing: None,
        scroll: 0,
        page: 1,
    };
    ui.draw(&mut term, &history);
    let mut frames = 1u64;
    let mut due = Instant::now() + interval;
    loop {
        if iterations.is_some_and(|n| frames >= n) || term::quit_requested() {
            return Ok(());
        }
        let now = Instant::now();
        if now >= due {
            match next(&mut region, pid)? {
                Next::Snap(s) => history.push(s),
                Next::Ended(msg) => {
                    drop(term);
                    println!("{msg}");
                    return Ok(());
                }
            }
            ui.draw(&mut term, &history);
            frames += 1;
            due += interval;
            if due < now {
                due = now + interval;
            }
            continue;
        }
        // Wake at least every 250 ms (a resize, a signal).
        let keys = term.keys((due - now).min(Duration::from_millis(250)));
        let mut redraw = term::take_resized();
        for k in keys {
            match ui.key(k, history.current()) {
                Action::Quit => return Ok(()),
                Action::Redraw => redraw = true,
                Action::Nothing => {}
            }
        }
        if redraw {
            ui.draw(&mut term, &history);
        }
    }
}
