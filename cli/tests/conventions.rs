//! The `pvar` command's conventions: a bad option value is a usage error
//! (exit status 2, the usage line, a message naming the option) whatever
//! the value looks like, and the live view fits the terminal it draws on.
//!
//! The live-view tests need `script` (util-linux) for a pseudo-terminal:
//! without it they print `SKIPPED: …` and pass, unless `CI` or
//! `PVAR_REQUIRE_SCRIPT` is set (then they fail).

#[path = "../../tests/support/script_tty.rs"]
mod script_tty;

use std::process::Command;

/// Runs `pvar args…` and returns (exit code, stdout, stderr).
fn pvar(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pvar"))
        .args(args)
        .output()
        .expect("run the pvar binary");
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_values_are_usage_errors_naming_the_option() {
    let cases: &[(&[&str], &str)] = &[
        (&["demo", "--duration", "-1"], "--duration"),
        (&["demo", "--duration", "0"], "--duration"),
        (&["demo", "--duration", "3601"], "--duration"),
        (&["demo", "--duration", "soon"], "--duration"),
        (&["demo", "--threads", "0"], "--threads"),
        (&["demo", "--threads", "9"], "--threads"),
        (&["demo", "--threads", "-2"], "--threads"),
        (&["demo", "--message-size", "0"], "--message-size"),
        (&["demo", "--message-size", "1048577"], "--message-size"),
        (&["bench", "--runs", "0"], "--runs"),
        (&["bench", "--threads", "0"], "--threads"),
        (&["bench", "--run-ms", "-5"], "--run-ms"),
        (&["list", "--no-such-option"], "--no-such-option"),
    ];
    for (args, option) in cases {
        let (code, stdout, stderr) = pvar(args);
        assert_eq!(code, 2, "pvar {args:?}: exit {code}\n{stderr}");
        assert!(stdout.is_empty(), "pvar {args:?} printed: {stdout}");
        assert!(
            stderr.contains(option),
            "pvar {args:?}: the message does not name {option}:\n{stderr}"
        );
        assert!(
            stderr.contains("Usage: pvar"),
            "pvar {args:?}: no usage line:\n{stderr}"
        );
    }
}

#[test]
fn the_smallest_and_largest_values_are_accepted() {
    // Parsed, then the run itself: a short demo at the bounds.
    let (code, stdout, stderr) = pvar(&[
        "demo",
        "--json",
        "--duration",
        "0.2",
        "--threads",
        "1",
        "--message-size",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["config"]["threads"], 1);
    assert_eq!(r["config"]["message_size"], 1);
}

/// The live view on a pseudo-terminal of `cols` × `rows` (through
/// `script`, which gives the program a terminal): the raw output; `None`
/// (after a `SKIPPED` line) without `script`, unless it is required.
fn live_view(cols: u32, rows: u32) -> Option<String> {
    if !script_tty::available("the live view of pvar demo") {
        return None;
    }
    let cmd = format!(
        "stty cols {cols} rows {rows}; exec '{}' demo --duration 1.2 --threads 8",
        env!("CARGO_BIN_EXE_pvar")
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .output()
        .expect("run script");
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The frames the view drew: each starts with a cursor-up (except the
/// first) and is the lines cleared with `ESC[2K` after it.
fn frames(raw: &str) -> Vec<Vec<String>> {
    let live = raw.split("measuring the overhead").next().unwrap_or(raw);
    let mut frames: Vec<Vec<String>> = Vec::new();
    let mut rest = live;
    while let Some(at) = rest.find("\x1b[2K") {
        let before = &rest[..at];
        if frames.is_empty() || before.ends_with('A') {
            frames.push(Vec::new());
        }
        let line_end = rest[at..].find('\n').map_or(rest.len(), |e| at + e);
        let line = rest[at + 4..line_end].trim_end_matches('\r').to_string();
        frames.last_mut().unwrap().push(line);
        rest = &rest[line_end.min(rest.len())..];
        rest = rest.strip_prefix('\n').unwrap_or(rest);
    }
    frames
}

#[test]
fn the_live_view_fits_a_small_terminal() {
    let Some(raw) = live_view(80, 12) else { return };
    let frames = frames(&raw);
    assert!(!frames.is_empty(), "no frame drawn:\n{raw:?}");
    for f in &frames {
        assert!(
            f.len() <= 11,
            "a frame of {} lines on 12 rows: {f:#?}",
            f.len()
        );
        for l in f {
            assert!(
                l.chars().count() <= 79,
                "a line wider than 79 columns: {l:?}"
            );
        }
    }
    // Cut, with a note, since 8 workers' table needs more rows.
    assert!(
        frames
            .iter()
            .any(|f| f.last().is_some_and(|l| l.contains("more lines"))),
        "{frames:#?}"
    );
    // Every cursor-up stays within the screen.
    for (i, _) in raw.match_indices("\x1b[") {
        let n: String = raw[i + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if raw[i + 2 + n.len()..].starts_with('A') {
            assert!(
                n.parse::<usize>().unwrap() <= 11,
                "cursor up {n} rows on 12"
            );
        }
    }
}

#[test]
fn the_live_view_falls_back_to_progress_lines_on_a_tiny_terminal() {
    let Some(raw) = live_view(80, 3) else { return };
    assert!(frames(&raw).is_empty(), "a table drawn on 3 rows: {raw:?}");
    assert!(raw.contains("sent "), "no progress line: {raw:?}");
}

/// The live-view tests cannot pass without running: with `script` missing
/// and required, they fail.
#[test]
fn the_live_view_tests_fail_without_script_when_required() {
    for name in [
        "the_live_view_fits_a_small_terminal",
        "the_live_view_falls_back_to_progress_lines_on_a_tiny_terminal",
    ] {
        assert!(
            script_tty::fails_without_script_when_required(name),
            "{name} passed without script"
        );
    }
}
