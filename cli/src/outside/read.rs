//! `pvar read [<pid>]`: one snapshot of another process's variables, as a
//! table grouped by category or as JSON (`outside::json`); without a pid,
//! the processes of this user that export, with their program or the
//! reason their region cannot be read.

use std::fmt::Write as _;

use serde::Serialize;

use pvar::PvarClass;
use pvar::export::{Number, Snapshot, VarSnapshot};

use super::values::{age_s, item_name, object_text};
use super::{Res, json};
use crate::format::{Col, Table, terminal_safe};

/// Options of `pvar read`.
#[derive(clap::Args)]
pub struct Args {
    /// The process to read (it must export: `PVAR_EXPORT=1`, or
    /// `pvar demo`). Without it: list the processes of this user that
    /// export, in `PVAR_EXPORT_DIR` (default `/dev/shm`).
    #[arg(value_name = "PID")]
    pid: Option<u32>,
    /// Print one JSON document (schema `pvar.snapshot.v1`: process info,
    /// then every variable with its MPI_T class and datatype names, values
    /// as JSON numbers, watermark marks, bound object, category and
    /// enumeration item names; without a pid: a list of processes).
    #[arg(long)]
    json: bool,
    /// Wait (up to 5 s) for a snapshot taken after this call, instead of
    /// the newest one (at most one export interval old).
    #[arg(long, requires = "pid")]
    fresh: bool,
}

/// Runs `pvar read`.
pub fn run(args: Args) -> Res<()> {
    let Some(pid) = args.pid else {
        return list(args.json);
    };
    let mut region = super::open(pid)?;
    let snap = super::read(&mut region, pid, args.fresh)?;
    if args.json {
        println!("{}", json::to_string(&snap));
    } else {
        print!("{}", table(&snap));
    }
    Ok(())
}

/// One exporting process, as `pvar read` without a pid lists it.
#[derive(Serialize)]
struct Exporting {
    pid: u32,
    /// The region file.
    path: String,
    /// The program's name, from a snapshot (`null` if none could be read).
    program: Option<String>,
    /// Variables in the snapshot.
    variables: Option<usize>,
    /// Seconds since the snapshot was taken.
    age_s: Option<f64>,
    /// Why the region could not be read (stale, refused, …), else `null`.
    error: Option<String>,
}

fn list(as_json: bool) -> Res<()> {
    let listing = super::open::list_regions();
    let found: Vec<Exporting> = listing
        .regions
        .iter()
        .map(|l| {
            let (pid, path) = (l.pid, &l.path);
            let read = pvar::export::Region::open_path(path, pid)
                .and_then(|r| r.check_alive().map(|()| r))
                .map_err(|e| super::open::describe(pid, e))
                .and_then(|mut r| super::read(&mut r, pid, false));
            let (program, variables, age, error) = match read {
                Ok(s) => (
                    Some(s.process.program.clone()),
                    Some(s.variables.len()),
                    Some(age_s(&s)),
                    None,
                ),
                Err(e) => (None, None, None, Some(e.to_string())),
            };
            Exporting {
                pid,
                path: path.display().to_string(),
                program,
                variables,
                age_s: age,
                error,
            }
        })
        .collect();
    if as_json {
        println!(
            "{}",
            crate::format::json_safe(serde_json::to_string_pretty(&found)?)
        );
        return Ok(());
    }
    // Something planted under this user's name (or a directory left open
    // to others): said on standard error, with the owner.
    for i in &listing.ignored {
        eprintln!("pvar: ignored {}", terminal_safe(&i.to_string()));
    }
    if found.is_empty() {
        println!(
            "no process of uid {} exports its variables in {} (run one with PVAR_EXPORT=1, \
             or `pvar demo`)",
            super::open::effective_uid(),
            terminal_safe(&listing.dir.display().to_string())
        );
        return Ok(());
    }
    let mut t = Table::new(&[
        Col::right("PID"),
        Col::left("PROGRAM").max(24),
        Col::right("VARIABLES"),
        Col::right("AGE"),
        Col::left("STATUS"),
    ])
    .indent(0);
    for p in &found {
        match &p.error {
            None => t.row([
                p.pid.to_string(),
                p.program.clone().unwrap_or_default(),
                p.variables.unwrap_or(0).to_string(),
                format!("{:.2} s", p.age_s.unwrap_or(0.0)),
                "ok".to_string(),
            ]),
            Some(e) => t.row([
                p.pid.to_string(),
                "-".into(),
                "-".into(),
                "-".into(),
                e.clone(),
            ]),
        };
    }
    print!("{}", t.render());
    Ok(())
}

/// Elements per continuation line of a long array.
const PER_LINE: usize = 8;
/// An array whose one-line form is longer than this goes on continuation
/// lines, [`PER_LINE`] elements each.
const ONE_LINE: usize = 64;

/// One element as `pvar read` prints it: integers exact, doubles to 6
/// significant digits (`--json` has them exact), a STATE as its
/// enumeration's item name.
fn element(snap: &Snapshot, v: &VarSnapshot, n: Number) -> String {
    match (item_name(snap, v, n), n) {
        (Some(name), _) if v.class == PvarClass::State => name.to_string(),
        (_, Number::Double(d)) => double_text(d),
        _ => n.to_string(),
    }
}

/// A double to 6 significant digits, without trailing zeros.
fn double_text(d: f64) -> String {
    if d == 0.0 || !d.is_finite() {
        return d.to_string();
    }
    let magnitude = d.abs().log10().floor() as i32;
    if !(-4..15).contains(&magnitude) {
        return format!("{d:.5e}");
    }
    let decimals = (5 - magnitude).max(0) as usize;
    let s = format!("{d:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A category's name with the names of the categories above it:
/// `demo / demo_traffic`.
fn category_path(snap: &Snapshot, c: usize) -> String {
    let mut path = vec![snap.categories[c].name.as_str()];
    let mut at = c;
    // A category tree has no cycles; the bound guards against a bad one.
    for _ in 0..snap.categories.len() {
        let Some(parent) = snap
            .categories
            .iter()
            .position(|p| p.subcategories.contains(&at))
        else {
            break;
        };
        path.push(&snap.categories[parent].name);
        at = parent;
    }
    path.reverse();
    path.join(" / ")
}

/// The values of `v` as a first line and continuation lines.
fn values_text(snap: &Snapshot, v: &VarSnapshot) -> Vec<String> {
    if v.values.is_empty() {
        let why = if v.bind != pvar::BindKind::NoObject && v.object.is_none() {
            "(no instance)"
        } else {
            "(inactive)"
        };
        return vec![why.into()];
    }
    let mut groups: Vec<(&str, &[Number])> = Vec::new();
    match &v.marks {
        Some(m) => {
            groups.push(("level ", &v.values));
            groups.push(("mark ", m));
        }
        None => groups.push(("", &v.values)),
    }
    let prefix = object_text(v).map(|o| format!("{o}: ")).unwrap_or_default();
    let one_line: Vec<String> = groups
        .iter()
        .map(|(label, xs)| {
            let items: Vec<String> = xs.iter().map(|n| element(snap, v, *n)).collect();
            if xs.len() == 1 {
                format!("{label}{}", items[0])
            } else {
                format!("{label}[{}]", items.join(" "))
            }
        })
        .collect();
    let line = format!("{prefix}{}", one_line.join("  "));
    if line.chars().count() <= ONE_LINE || v.values.len() == 1 {
        return vec![line];
    }
    // Long arrays: a summary line, then the elements in rows of PER_LINE.
    let mut out = vec![format!("{prefix}{} elements", v.values.len())];
    for (label, xs) in groups {
        for (row, chunk) in xs.chunks(PER_LINE).enumerate() {
            let first = row * PER_LINE;
            let items: Vec<String> = chunk.iter().map(|n| element(snap, v, *n)).collect();
            out.push(format!(
                "  {label}[{first}..{}] {}",
                first + chunk.len() - 1,
                items.join(" ")
            ));
        }
    }
    out
}

/// The datatype and unit column: `UNSIGNED_LONG_LONG`, `DOUBLE seconds`,
/// `INT demo_worker_state`.
fn type_text(snap: &Snapshot, v: &VarSnapshot) -> String {
    let dt = v.datatype.c_name();
    let dt = dt.strip_prefix("MPI_").unwrap_or(dt);
    let extra = v.unit().map(str::to_string).or_else(|| {
        v.enumeration
            .and_then(|e| snap.enumerations.get(e))
            .map(|e| e.name.clone())
    });
    match extra {
        Some(x) => format!("{dt} {x}"),
        None => dt.to_string(),
    }
}

/// The table `pvar read <pid>` prints: a header line, then the variables
/// grouped by category (in category order, the uncategorised last).
pub fn table(snap: &Snapshot) -> String {
    let p = &snap.process;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "process {} ({}), pvar {}, {} threads: snapshot #{} taken {:.2} s ago, {} variables",
        p.pid,
        terminal_safe(&p.program),
        terminal_safe(&p.engine_version),
        p.live_threads,
        p.sequence,
        age_s(snap),
        snap.variables.len()
    );
    let mut groups: Vec<Option<usize>> = (0..snap.categories.len()).map(Some).collect();
    groups.push(None);
    for g in groups {
        let members: Vec<&VarSnapshot> =
            snap.variables.iter().filter(|v| v.category == g).collect();
        if members.is_empty() {
            continue;
        }
        out.push('\n');
        match g.and_then(|c| Some((c, snap.categories.get(c)?))) {
            Some((i, c)) if c.description.is_empty() => {
                let _ = writeln!(out, "category {}", terminal_safe(&category_path(snap, i)));
            }
            Some((i, c)) => {
                let _ = writeln!(
                    out,
                    "category {}: {}",
                    terminal_safe(&category_path(snap, i)),
                    terminal_safe(&c.description)
                );
            }
            None => {
                let _ = writeln!(out, "no category");
            }
        }
        let mut t = Table::new(&[
            Col::left("NAME").max(40),
            Col::left("CLASS"),
            Col::left("TYPE").max(32),
            Col::left("VALUE"),
        ]);
        for v in members {
            let lines = values_text(snap, v);
            t.row_with_more(
                [
                    v.name.as_str(),
                    v.class.short_name(),
                    &type_text(snap, v),
                    &lines[0],
                ],
                &lines[1..],
            );
        }
        out.push_str(&t.render());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_arrays_watermarks_and_states() {
        let reg = pvar::Registry::new();
        reg.categories().define("net", "network").unwrap();
        reg.counter("sent")
            .category("net")
            .register()
            .unwrap()
            .add(7);
        let hwm = reg
            .high_watermark::<u64>("depth_hwm")
            .count(2)
            .register()
            .unwrap();
        hwm.update_at(1, 5);
        let states = pvar::Enumeration::new("st", [("idle", 0), ("busy", 1)]).unwrap();
        let st = reg
            .state("st")
            .count(2)
            .enumeration(states)
            .register()
            .unwrap();
        st.set_at(1, 1);
        reg.counter("big").count(40).register().unwrap();
        let t = table(&Snapshot::take(&reg));
        assert!(t.contains("category net: network"), "{t}");
        assert!(t.contains("sent"), "{t}");
        assert!(t.contains("level [0 5]  mark [0 5]"), "{t}");
        assert!(t.contains("[idle busy]"), "{t}");
        assert!(t.contains("40 elements"), "{t}");
        assert!(t.contains("[32..39] 0 0 0 0 0 0 0 0"), "{t}");
    }

    #[test]
    fn doubles_are_short() {
        assert_eq!(double_text(0.26116935880014924), "0.261169");
        assert_eq!(double_text(1234.5), "1234.5");
        assert_eq!(double_text(3.0), "3");
        assert_eq!(double_text(1e-9), "1.00000e-9");
    }
}
