//! OpenMetrics text checked by a real parser, not ours: Python's
//! `prometheus_client` (`text_string_to_metric_families`), run by the
//! export tests and by `pvar export`/`pvar serve`'s end-to-end tests.
//!
//! A test includes it with `#[path = "support/openmetrics_parser.rs"] mod
//! openmetrics_parser;` (from `cli/tests`:
//! `#[path = "../../tests/support/openmetrics_parser.rs"]`) and calls
//! [`families`]. Without `python3` and `prometheus_client` the check prints
//! a loud `SKIPPED: …` line and returns `None`, unless `CI` or
//! `PVAR_REQUIRE_PYTHON` is set (then it fails).

use std::io::Write;
use std::process::{Command, Stdio};

/// One metric family as the parser read it.
#[derive(Debug)]
#[allow(dead_code)] // each test reads a subset
pub struct Family {
    pub name: String,
    /// The family's type: `counter`, `gauge`, `stateset`, …
    pub kind: String,
    /// Empty when the family has none.
    pub unit: String,
    pub samples: usize,
    /// The names of its samples, sorted, without repeats.
    pub sample_names: Vec<String>,
}

/// Whether a missing parser must fail the test.
fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("PVAR_REQUIRE_PYTHON").is_some()
}

/// Parses OpenMetrics `text` with `prometheus_client`'s parser, failing
/// the test if it refuses the text; `None` (after a loud SKIPPED line) if
/// the parser is not installed and not required.
pub fn families(text: &str) -> Option<Vec<Family>> {
    parse(text, "prometheus_client.openmetrics.parser")
}

/// The same with the parser of the classic text format 0.0.4
/// (`prometheus_client.parser`); a family's unit is empty there.
#[allow(dead_code)] // not every test reads the classic format
pub fn classic_families(text: &str) -> Option<Vec<Family>> {
    parse(text, "prometheus_client.parser")
}

fn parse(text: &str, module: &str) -> Option<Vec<Family>> {
    // One line per family: name, type, unit, sample count, sample names.
    // A series twice in one exposition is refused here too (Prometheus
    // keeps one of the two samples, silently).
    let script = format!(
        r#"
import sys
from {module} import text_string_to_metric_families
seen = set()
for f in text_string_to_metric_families(sys.stdin.read()):
    for s in f.samples:
        key = (s.name, tuple(sorted(s.labels.items())))
        if key in seen:
            raise SystemExit("a series twice: %r" % (key,))
        seen.add(key)
    names = " ".join(sorted({{s.name for s in f.samples}}))
    print("\t".join([f.name, f.type, getattr(f, "unit", ""), str(len(f.samples)), names]))
"#
    );
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why = match &probe {
            Err(e) => format!("python3 not runnable: {e}"),
            Ok(o) => String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_string(),
        };
        assert!(
            !required(),
            "prometheus_client is required (CI / PVAR_REQUIRE_PYTHON): {why}"
        );
        eprintln!(
            "SKIPPED: OpenMetrics parse check: python3 with prometheus_client not available \
             ({why}); `pip install prometheus_client` to run it"
        );
        return None;
    }
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "prometheus_client refused the text: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let families = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let [name, kind, unit, samples, names] = f[..] else {
                panic!("not a family line: {line:?}");
            };
            Family {
                name: name.into(),
                kind: kind.into(),
                unit: unit.into(),
                samples: samples.parse().unwrap(),
                sample_names: names.split_whitespace().map(Into::into).collect(),
            }
        })
        .collect();
    Some(families)
}
