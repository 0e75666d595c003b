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
    &["export", "recorder", "sampler"],
    // `report` aggregates `export` snapshots: one floor above it.
    &["process", "report"],
    &["ffi"],
];

/// Files outside the floors.
const EXEMPT: &[&str] = &["lib.rs", "guides.rs", "miri_tests.rs"];

/// Test-only faces above every floor: they may reach any floor, but name
/// the module as engine code does (not a crate-root re-export).
const FACES: &[&str] = &["loom_api"];

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

/// The text's code: comments and the contents of string and character
/// literals blanked out (so that a path in a doc comment or a message is
/// not read as an import), line breaks kept.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i] == b'r' && !prev_ident {
            // A raw string: r"…", r#"…"#.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                let end = text[body..]
                    .find(&close)
                    .map_or(b.len(), |e| body + e + close.len());
                out.push_str("\"\"");
                out.extend(text[body..end].chars().filter(|&c| c == '\n'));
                i = end;
                continue;
            }
        }
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
                out.push(' ');
            }
            b'"' => {
                // A string (raw strings of this crate hold no quote).
                out.push('"');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    } else if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\') => {
                // A character literal ('x', '\n', '\''), not a lifetime.
                let close = if b[i + 1] == b'\\' { i + 3 } else { i + 2 };
                let mut j = close;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segment of each item of a `{…}` group that starts at
/// `rest[0] == '{'`: `{hot::cells, pvar::{a, b}, Registry}` gives `hot`,
/// `pvar`, `Registry`. `self` and `*` are returned as they are.
fn group_heads(rest: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item = String::new();
    for c in rest.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    heads.push(std::mem::take(&mut item));
                    break;
                }
            }
            ',' if depth == 1 => {
                heads.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        if depth >= 1 {
            item.push(c);
        }
    }
    heads
        .iter()
        .map(|h| {
            let h = h.trim_start();
            if h.starts_with('*') {
                "*".to_string()
            } else {
                h.chars().take_while(|c| is_ident(*c)).collect()
            }
        })
        .filter(|h: &String| !h.is_empty())
        .collect()
}

/// The top-level names a text reaches with `crate::<name>` or
/// `crate::{<name>…, …}` (in `use` lines and inline, over line breaks):
/// a floor module, or a name at the crate root (a re-export, `self`,
/// `*`), which engine code must not use.
fn crate_paths(text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("crate") {
        let at = from + i;
        from = at + "crate".len();
        let before = code[..at].chars().next_back();
        // `$crate::` is a macro's path, expanded in the caller; `pub(crate)`
        // and identifiers that merely contain the word are not paths.
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(rest) = rest.strip_prefix("::") else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with('{') {
            found.extend(group_heads(rest));
        } else {
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
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
        let face = FACES.contains(&module.as_str());
        let own = if face {
            Some(FLOORS.len())
        } else {
            floor_of(&module)
        };
        let Some(own) = own else {
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
        if rel.starts_with("sync/") || EXEMPT.contains(&rel.as_str()) || rel == "loom_api.rs" {
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
    // Grouped imports, over several lines, nested groups, root names.
    let grouped = "use crate::{\n    hot::cells::{CellRange, Record},\n    pvar::Pvars, Registry,\n    self, tool::*,\n};";
    assert_eq!(
        crate_paths(grouped),
        ["hot", "pvar", "Registry", "self", "tool"]
    );
    assert_eq!(crate_paths("use crate :: { * };"), ["*"]);
    // Not paths: a visibility, a string, a block comment, a char literal.
    let not_paths = "pub(crate) fn f() { let s = \"crate::ffi\"; let c = '{'; /* crate::tool */ let r = r#\"crate::x \"q\"\"#; }";
    assert!(
        crate_paths(not_paths).is_empty(),
        "{:?}",
        crate_paths(not_paths)
    );
    assert_eq!(floor_of("tool"), Some(5));
    assert!(floor_of("vocabulary") < floor_of("hot"));
}

/// The `mod` declarations of a module file: (name, public), where public
/// means `pub mod` without `#[doc(hidden)]` (hidden modules are not API).
fn modules_declared(code: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut hidden = false;
    for line in code.lines() {
        let t = line.trim();
        if t.starts_with("#[doc(hidden)]") {
            hidden = true;
            continue;
        }
        if t.starts_with("#[") {
            continue;
        }
        let (public, rest) = if let Some(r) = t.strip_prefix("pub mod ") {
            (!hidden, r)
        } else if let Some(r) = t.strip_prefix("mod ") {
            (false, r)
        } else if let Some(r) = t.strip_prefix("pub(crate) mod ") {
            (false, r)
        } else {
            hidden = false;
            continue;
        };
        hidden = false;
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        out.push((name, public));
    }
    out
}

/// The paths a module file re-exports with `pub use` (not `pub(crate)`),
/// each as its segments, groups expanded: `pub use a::{b::C, D};` gives
/// `[a, b, C]` and `[a, D]`.
fn pub_use_paths(code: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let inner = &tree[open + 1..tree.rfind('}').expect("closing brace")];
            let mut depth = 0;
            let mut start = 0;
            let base: Vec<String> = prefix.iter().cloned().chain(head).collect();
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&base, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&base, &inner[start..], out);
        } else {
            let mut path: Vec<String> = prefix.to_vec();
            path.extend(tree.split("::").map(|s| s.trim().to_string()));
            out.push(path);
        }
    }
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let t = stmt.trim_start();
        // Attributes before the statement (`#[cfg(…)]`) are skipped.
        let t = t.rsplit(']').next().unwrap_or(t).trim_start();
        if let Some(tree) = t.strip_prefix("pub use ") {
            let tree = tree
                .trim()
                .trim_start_matches("crate::")
                .trim_start_matches("self::");
            expand(&[], tree, &mut out);
        }
    }
    out
}

/// The crate's one rule for public paths (`src/lib.rs`, "Public paths"):
/// the crate root re-exports only from private modules; a public module
/// (`export`, `process`, `recorder`, `report`, …) is an area a program
/// opts into, reached only through its own path, and inside it nothing is
/// re-exported from a public submodule. So no item has two public paths.
/// `#[doc(hidden)]` modules are not API and are not checked.
#[test]
fn every_public_item_has_one_path() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let file_of = |module_path: &[&str]| -> Option<PathBuf> {
        let rel = module_path.join("/");
        [
            src.join(format!("{rel}.rs")),
            src.join(format!("{rel}/mod.rs")),
        ]
        .into_iter()
        .find(|p| p.exists())
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    // Every module file reachable through public modules, from the root.
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(module) = todo.pop() {
        let parts: Vec<&str> = module.iter().map(String::as_str).collect();
        let file = if parts.is_empty() {
            src.join("lib.rs")
        } else {
            match file_of(&parts) {
                Some(f) => f,
                // An inline module (`pub mod mpi_t { … }`, the guides):
                // its re-exports are read with its parent's file.
                None => continue,
            }
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let mods = modules_declared(&code);
        let public = |name: &str| mods.iter().any(|(m, p)| m == name && *p);
        for path in pub_use_paths(&code) {
            checked += 1;
            let first = path[0].as_str();
            if !public(first) {
                continue;
            }
            // Allowed only through a private submodule of the public one
            // that does not itself re-export the item (`process::init::global`).
            let inner = file_of(&[parts.as_slice(), &[first]].concat())
                .map(|f| code_only(&std::fs::read_to_string(f).unwrap()))
                .unwrap_or_default();
            let through_private = path.len() > 2
                && !modules_declared(&inner)
                    .iter()
                    .any(|(m, p)| m == &path[1] && *p)
                && !pub_use_paths(&inner)
                    .iter()
                    .any(|p| p.last() == path.last());
            if !through_private {
                wrong.push(format!(
                    "{}: `pub use {}` re-exports from the public module `{first}`",
                    file.strip_prefix(&src).unwrap().display(),
                    path.join("::")
                ));
            }
        }
        for (name, is_public) in mods {
            if is_public {
                let mut m = module.clone();
                m.push(name);
                todo.push(m);
            }
        }
    }
    assert!(checked > 50, "only {checked} re-exports checked");
    assert!(
        wrong.is_empty(),
        "items with two public paths:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_public_path_check_reads_declarations_as_intended() {
    let code = "#[doc(hidden)]\npub mod ffi;\npub mod export;\nmod hot;\npub(crate) mod init;";
    assert_eq!(
        modules_declared(code),
        [
            ("ffi".to_string(), false),
            ("export".to_string(), true),
            ("hot".to_string(), false),
            ("init".to_string(), false)
        ]
    );
    let uses = "#[cfg(x)]\npub use a::{b::{C, D}, E};\npub(crate) use f::G;\npub use h::I;";
    assert_eq!(
        pub_use_paths(uses),
        [
            vec!["a", "b", "C"],
            vec!["a", "b", "D"],
            vec!["a", "E"],
            vec!["h", "I"]
        ]
    );
}

// ---------------------------------------------------------------------------
// The documents that describe the floors say what the folders hold.

/// The floor lists of `src/lib.rs` (`//! N. ...` up to the next number)
/// and of `docs/design.md` (its floors table: `| N | folders | ... |`)
/// name exactly the modules of [`FLOORS`], floor by floor.
#[test]
fn the_floor_lists_in_the_docs_match_the_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all: Vec<&str> = FLOORS.iter().flat_map(|f| f.iter().copied()).collect();
    let modules_in = |text: &str| -> Vec<String> {
        let mut found: Vec<String> = text
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|t| {
                let t = t.trim_start_matches("src/").trim_end_matches('/');
                let t = t.trim_end_matches(".rs");
                all.contains(&t).then(|| t.to_string())
            })
            .collect();
        found.sort();
        found.dedup();
        found
    };
    let want = |n: usize| -> Vec<String> {
        let mut w: Vec<String> = FLOORS[n].iter().map(|m| m.to_string()).collect();
        w.sort();
        w
    };

    // lib.rs: "//! N. `module` — ...", continued on "//!    " lines.
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let mut lists: Vec<String> = Vec::new();
    let mut in_floors = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim_start();
        if doc.starts_with("## The floors") {
            in_floors = true;
            continue;
        }
        if in_floors && doc.starts_with("## ") {
            break;
        }
        if !in_floors {
            continue;
        }
        let numbered = doc
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if numbered {
            lists.push(doc.to_string());
        } else if let Some(last) = lists.last_mut()
            && !doc.is_empty()
        {
            last.push(' ');
            last.push_str(doc);
        }
    }
    assert_eq!(
        lists.len(),
        FLOORS.len(),
        "src/lib.rs lists {} floors",
        lists.len()
    );
    for (n, text) in lists.iter().enumerate() {
        // Each module opens its clause: "`module` — what it holds".
        let clauses: Vec<&str> = text.split(" — ").collect();
        let opening: String = clauses[..clauses.len() - 1]
            .iter()
            .filter_map(|before| before.rsplit("; ").next()?.split('`').nth(1))
            .map(|m| format!("`{m}` "))
            .collect();
        assert_eq!(
            modules_in(&opening),
            want(n),
            "src/lib.rs, floor {}: {text}",
            n + 1
        );
    }

    // design.md: the floors table.
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let section = design
        .split("\n## ")
        .find(|s| s.starts_with("The floors"))
        .expect("docs/design.md: a section \"The floors\"");
    let rows: Vec<(usize, String)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let n: usize = cells.get(1)?.parse().ok()?;
            Some((n, cells.get(2)?.to_string()))
        })
        .collect();
    assert_eq!(rows.len(), FLOORS.len(), "docs/design.md's floors table");
    for (n, folders) in &rows {
        assert_eq!(
            modules_in(folders),
            want(n - 1),
            "docs/design.md, floor {n}: {folders}"
        );
    }
}

/// Where a document lists the files of a folder, it lists all of them:
/// `docs/design.md`'s floors table names every file of `src/lockfree/`
/// (the shared primitives), and `loom-tests/README.md` every model.
#[test]
fn documents_that_list_a_folder_name_every_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stems = |dir: &str, skip: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".rs")?.to_string();
                (!skip.contains(&stem.as_str())).then_some(stem)
            })
            .collect();
        v.sort();
        v
    };
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let row = design
        .lines()
        .find(|l| l.starts_with("| 2 |"))
        .expect("docs/design.md: the floors table's row 2");
    for stem in stems("src/lockfree", &["mod"]) {
        assert!(
            row.contains(&format!("`{stem}`")),
            "docs/design.md's floor 2 does not name src/lockfree/{stem}.rs: {row}"
        );
    }
    let readme = std::fs::read_to_string(root.join("loom-tests/README.md")).unwrap();
    for stem in stems("loom-tests/models", &["main"]) {
        assert!(
            readme.contains(&format!("| `{stem}.rs` |")),
            "loom-tests/README.md's table has no row for models/{stem}.rs"
        );
    }
}
