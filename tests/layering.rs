//! The crate's floors (see the crate documentation): every module of
//! `src/` imports only from floors below its own, never from a sibling on
//! the same floor and never from above; and only `sync/` names `std::sync`
//! or `loom` primitives (the std/loom switch).
//!
//! Checked from the source text: every `crate::<module>` path in a file
//! (in `use` lines and inline) names the top-level module it reaches into.
//! Unit-test modules (`#[cfg(test)] mod tests`) are not part of the floors
//! and are skipped; so are the crate root (the facade that re-exports),
//! the guides, and the test-only faces (`loom_api`, `miri_tests`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top-level modules by floor, ground first.
const FLOORS: &[&[&str]] = &[
    &["sync"],
    &["lockfree"],
    &["vocabulary"],
    &["category", "hot"],
    &["pvar", "cvar", "event"],
    &["tool"],
    &["registry"],
    &["export", "recorder"],
    // `report` aggregates `export` snapshots: one floor above it.
    &["process", "report"],
    &["ffi"],
];

/// Files outside the floors.
const EXEMPT: &[&str] = &["lib.rs", "guides.rs", "loom_api.rs", "miri_tests.rs"];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The file's text without its unit-test module.
fn engine_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    for marker in [
        "#[cfg(all(test, not(loom)))]\nmod tests",
        "#[cfg(test)]\nmod tests",
    ] {
        if let Some(i) = text.find(marker) {
            return text[..i].to_string();
        }
    }
    text
}

/// The top-level modules a text reaches with `crate::<name>`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            // `$crate::` is a macro's path, expanded in the caller.
            let before = &rest[..i];
            rest = &rest[i + "crate::".len()..];
            if before.ends_with('$') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn imports_point_down_the_floors_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = BTreeMap::new();
    let mut checked = 0;
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        if EXEMPT.contains(&rel_s.as_str()) {
            continue;
        }
        let module = rel_s
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let Some(own) = floor_of(&module) else {
            panic!("{rel_s}: module `{module}` is on no floor: add it to FLOORS");
        };
        checked += 1;
        for target in crate_paths(&engine_text(path)) {
            if target == module {
                continue;
            }
            // Re-exports at the crate root (`crate::Registry`, …) hide
            // where a name lives: engine code names the module.
            let Some(to) = floor_of(&target) else {
                wrong
                    .entry(rel_s.clone())
                    .or_insert_with(Vec::new)
                    .push(format!(
                        "crate::{target} (not a floor module: name the module)"
                    ));
                continue;
            };
            if to >= own {
                wrong
                    .entry(rel_s.clone())
                    .or_insert_with(Vec::new)
                    .push(format!(
                        "crate::{target} (floor {} from floor {})",
                        to + 1,
                        own + 1
                    ));
            }
        }
    }
    assert!(checked > 40, "only {checked} files checked");
    assert!(
        wrong.is_empty(),
        "imports that do not point down a floor:\n{wrong:#?}"
    );
}

#[test]
fn only_sync_names_std_or_loom_primitives() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("sync/") || EXEMPT.contains(&rel.as_str()) {
            continue;
        }
        for (n, line) in engine_text(path).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // quanta's mock clock hands out a `std` Arc: its type, not a
            // primitive the engine synchronises with.
            if code.contains("std::sync::Arc<quanta") {
                continue;
            }
            let bare_thread_local = code.contains("thread_local!")
                && !code.contains("engine_thread_local!")
                && !code.contains("unmodelled::thread_local!");
            if code.contains("std::sync") || code.contains("loom::") || bare_thread_local {
                wrong.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "outside sync/:\n{}", wrong.join("\n"));
}

#[test]
fn the_check_reads_paths_as_intended() {
    let text = "use crate::hot::cells::CellRange;\nlet x = crate::sync::Arc::new(1); // crate::ffi\n$crate::process::global_cvars";
    assert_eq!(crate_paths(text), ["hot", "sync"]);
    assert_eq!(floor_of("tool"), Some(5));
    assert!(floor_of("vocabulary") < floor_of("hot"));
}
