//! `pvar list`: every variable of the process-wide registry, as a tool
//! discovers them through MPI_T — performance variables, control variables
//! (with their current values), MPI 4 event types and event sources, the
//! category tree and the enumerations —
//! after the engine's own variables (registered by `MPI_T_init_thread`)
//! and the demo's (the same registration `pvar demo` uses).

use std::fmt::Write as _;

use serde::Serialize;

use pvar::{CvarValue, ElementCount, Registry};

use crate::demo::vars;
use crate::format::{Col, Table, terminal_safe};

/// Options of `pvar list`.
#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Listing {
    pvars: Vec<PvarOut>,
    cvars: Vec<CvarOut>,
    events: Vec<EventOut>,
    sources: Vec<SourceOut>,
    categories: Vec<CategoryOut>,
    enumerations: Vec<EnumOut>,
}

#[derive(Serialize)]
struct EventOut {
    index: usize,
    name: String,
    /// Each element's datatype and byte displacement in the record.
    elements: Vec<(&'static str, usize)>,
    /// Bytes of the whole record (`MPI_T_event_copy`).
    extent: usize,
    verbosity: &'static str,
    bind: &'static str,
    source: usize,
    category: Option<String>,
    description: String,
}

#[derive(Serialize)]
struct SourceOut {
    index: usize,
    name: String,
    ordering: &'static str,
    ticks_per_second: u64,
    max_ticks: u64,
    description: String,
}

#[derive(Serialize)]
struct PvarOut {
    index: usize,
    name: String,
    class: &'static str,
    datatype: &'static str,
    /// Elements; `null` for a bound variable whose count is per object
    /// (then `per_object_count` is true).
    count: Option<usize>,
    per_object_count: bool,
    verbosity: &'static str,
    bind: &'static str,
    readonly: bool,
    continuous: bool,
    atomic: bool,
    active: bool,
    category: Option<String>,
    enumeration: Option<String>,
    description: String,
}

#[derive(Serialize)]
struct CvarOut {
    index: usize,
    name: String,
    datatype: &'static str,
    verbosity: &'static str,
    scope: &'static str,
    bind: &'static str,
    category: Option<String>,
    enumeration: Option<String>,
    /// The current value (unbound variables only).
    value: Option<String>,
    env: Vec<String>,
    /// The environment variable the value came from, if any.
    from_env: Option<String>,
    description: String,
}

#[derive(Serialize)]
struct CategoryOut {
    index: usize,
    name: String,
    description: String,
    /// Index of the category containing this one, if any.
    parent: Option<usize>,
    subcategories: Vec<usize>,
    pvars: Vec<String>,
    cvars: Vec<String>,
    events: Vec<String>,
}

#[derive(Serialize)]
struct EnumOut {
    index: usize,
    name: String,
    items: Vec<(String, i32)>,
}

fn short(c_name: &'static str, prefix: &str) -> &'static str {
    c_name.strip_prefix(prefix).unwrap_or(c_name)
}

fn cvar_value(reg: &Registry, index: usize) -> Option<String> {
    let (h, _) = reg.cvars().handle_alloc(index, None).ok()?;
    let v = reg.cvars().read_value(h).ok();
    let _ = reg.cvars().handle_free(h);
    Some(match v? {
        CvarValue::Signed(x) => x.to_string(),
        CvarValue::Unsigned(x) => x.to_string(),
        CvarValue::Double(x) => x.to_string(),
        CvarValue::Text(s) => format!("{s:?}"),
        #[allow(unreachable_patterns)]
        _ => "?".to_string(),
    })
}

fn collect(reg: &Registry) -> Listing {
    let pvars: Vec<PvarOut> = (0..reg.pvars().len())
        .filter_map(|i| {
            let p = reg.pvars().info(i).ok()?;
            Some(PvarOut {
                index: i,
                name: p.name.clone(),
                class: p.class.short_name(),
                datatype: p.datatype.c_name(),
                count: match p.count {
                    ElementCount::Fixed(n) => Some(n),
                    ElementCount::PerObject => None,
                },
                per_object_count: p.count == ElementCount::PerObject,
                verbosity: short(p.verbosity.c_name(), "MPI_T_VERBOSITY_"),
                bind: short(p.bind.c_name(), "MPI_T_BIND_"),
                readonly: p.readonly,
                continuous: p.continuous,
                atomic: p.atomic,
                active: reg.pvars().is_active(i).unwrap_or(false),
                category: p.category.clone(),
                enumeration: p.enumeration.as_ref().map(|e| e.name().to_string()),
                description: p.description.clone(),
            })
        })
        .collect();
    let cvars: Vec<CvarOut> = (0..reg.cvars().len())
        .filter_map(|i| {
            let c = reg.cvars().info(i).ok()?;
            Some(CvarOut {
                index: i,
                name: c.name.clone(),
                datatype: c.datatype.c_name(),
                verbosity: short(c.verbosity.c_name(), "MPI_T_VERBOSITY_"),
                scope: short(c.scope.c_name(), "MPI_T_SCOPE_"),
                bind: short(c.bind.c_name(), "MPI_T_BIND_"),
                category: c.category.clone(),
                enumeration: c.enumeration.as_ref().map(|e| e.name().to_string()),
                value: cvar_value(reg, i),
                env: c.env.clone(),
                from_env: reg.cvars().env_source(i).ok().flatten().map(str::to_string),
                description: c.description.clone(),
            })
        })
        .collect();
    let ev = reg.events();
    let events = (0..ev.len())
        .filter_map(|i| {
            let e = ev.info(i).ok()?;
            Some(EventOut {
                index: i,
                name: e.name.clone(),
                elements: e
                    .elements
                    .iter()
                    .map(|(dt, d)| (short(dt.c_name(), "MPI_"), *d))
                    .collect(),
                extent: e.extent,
                verbosity: short(e.verbosity.c_name(), "MPI_T_VERBOSITY_"),
                bind: short(e.bind.c_name(), "MPI_T_BIND_"),
                source: e.source,
                category: e.category.clone(),
                description: e.description.clone(),
            })
        })
        .collect();
    let sources = (0..ev.num_sources())
        .filter_map(|i| {
            let s = ev.source_info(i).ok()?;
            Some(SourceOut {
                index: i,
                name: s.name.clone(),
                ordering: short(s.ordering.c_name(), "MPI_T_SOURCE_"),
                ticks_per_second: s.ticks_per_second,
                max_ticks: s.max_ticks,
                description: s.description.clone(),
            })
        })
        .collect();
    let cats = reg.categories();
    let mut categories: Vec<CategoryOut> = (0..cats.len())
        .filter_map(|i| {
            let info = cats.info(i).ok()?;
            Some(CategoryOut {
                index: i,
                name: info.name.to_string(),
                description: info.description.to_string(),
                parent: None,
                subcategories: cats.subcategories(i).unwrap_or_default(),
                pvars: cats
                    .pvars(i)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|p| reg.pvars().info(p).ok().map(|x| x.name.clone()))
                    .collect(),
                cvars: cats
                    .cvars(i)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| reg.cvars().info(c).ok().map(|x| x.name.clone()))
                    .collect(),
                events: cats
                    .events(i)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|e| reg.events().info(e).ok().map(|x| x.name.clone()))
                    .collect(),
            })
        })
        .collect();
    let edges: Vec<(usize, usize)> = categories
        .iter()
        .flat_map(|c| c.subcategories.iter().map(move |s| (c.index, *s)))
        .collect();
    for (parent, child) in edges {
        if let Some(c) = categories.iter_mut().find(|c| c.index == child) {
            c.parent.get_or_insert(parent);
        }
    }
    let enumerations = (0..reg.enums().len())
        .filter_map(|i| {
            let e = reg.enums().get(i).ok()?;
            Some(EnumOut {
                index: i,
                name: e.name().to_string(),
                items: e
                    .items()
                    .iter()
                    .map(|it| (it.name.clone(), it.value))
                    .collect(),
            })
        })
        .collect();
    Listing {
        pvars,
        cvars,
        events,
        sources,
        categories,
        enumerations,
    }
}

fn flags(p: &PvarOut) -> String {
    let mut f = String::new();
    f.push(if p.readonly { 'r' } else { 'w' });
    f.push(if p.continuous { 'c' } else { '-' });
    f.push(if p.atomic { 'a' } else { '-' });
    if !p.active {
        f.push_str(" inactive");
    }
    f
}

/// Category `index` and its subcategories, indented by depth (each
/// category once).
fn tree(out: &mut String, l: &Listing, index: usize, depth: usize, seen: &mut Vec<usize>) {
    if seen.contains(&index) {
        return;
    }
    seen.push(index);
    let Some(c) = l.categories.iter().find(|c| c.index == index) else {
        return;
    };
    let pad = "  ".repeat(depth + 1);
    let _ = writeln!(
        out,
        "{pad}{} — {}",
        terminal_safe(&c.name),
        terminal_safe(&c.description)
    );
    for (what, members) in [
        ("pvars", &c.pvars),
        ("cvars", &c.cvars),
        ("events", &c.events),
    ] {
        if !members.is_empty() {
            let _ = writeln!(
                out,
                "{pad}    {what}: {}",
                terminal_safe(&members.join(", "))
            );
        }
    }
    for s in &c.subcategories {
        tree(out, l, *s, depth + 1, seen);
    }
}

/// The listing as `pvar list` prints it: one table per kind of thing, each
/// row's description on a line of its own below it.
fn text(l: &Listing) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "performance variables ({})", l.pvars.len());
    let mut t = Table::new(&[
        Col::right("idx"),
        Col::left("name"),
        Col::left("class"),
        Col::left("datatype"),
        Col::left("count"),
        Col::left("bind"),
        Col::left("flags"),
        Col::left("verbosity"),
        Col::left("category"),
    ]);
    for p in &l.pvars {
        t.row([
            p.index.to_string(),
            p.name.to_string(),
            p.class.to_string(),
            p.datatype.to_string(),
            p.count.map_or("per object".to_string(), |n| n.to_string()),
            p.bind.to_string(),
            flags(p),
            p.verbosity.to_string(),
            p.category.clone().unwrap_or_else(|| "-".into()),
        ]);
        let mut d = p.description.clone();
        if let Some(e) = &p.enumeration {
            d.push_str(&format!(" [enumeration {e}]"));
        }
        t.note(d.trim_start());
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "  flags: r/w read-only or writable, c continuous, a atomic (readreset)\n"
    );
    let _ = writeln!(out, "control variables ({})", l.cvars.len());
    let mut t = Table::new(&[
        Col::right("idx"),
        Col::left("name"),
        Col::left("datatype"),
        Col::left("scope"),
        Col::left("verbosity"),
        Col::left("bind"),
        Col::left("value"),
        Col::left("category"),
    ]);
    for c in &l.cvars {
        t.row([
            c.index.to_string(),
            c.name.to_string(),
            c.datatype.to_string(),
            c.scope.to_string(),
            c.verbosity.to_string(),
            c.bind.to_string(),
            c.value.clone().unwrap_or_else(|| "(per object)".into()),
            c.category.clone().unwrap_or_else(|| "-".into()),
        ]);
        let mut d = c.description.clone();
        if !c.env.is_empty() {
            d.push_str(&format!(" [env: {}]", c.env.join(", ")));
        }
        if let Some(e) = &c.from_env {
            d.push_str(&format!(" [value from {e}]"));
        }
        if let Some(e) = &c.enumeration {
            d.push_str(&format!(" [enumeration {e}]"));
        }
        t.note(d.trim_start());
    }
    out.push_str(&t.render());
    let _ = writeln!(out, "\nevent types ({})", l.events.len());
    let mut t = Table::new(&[
        Col::right("idx"),
        Col::left("name"),
        Col::left("record (datatype@displacement)"),
        Col::right("bytes"),
        Col::left("verbosity"),
        Col::left("bind"),
        Col::right("source"),
        Col::left("category"),
    ]);
    for e in &l.events {
        let rec: Vec<String> = e.elements.iter().map(|(t, d)| format!("{t}@{d}")).collect();
        t.row([
            e.index.to_string(),
            e.name.to_string(),
            rec.join(" "),
            e.extent.to_string(),
            e.verbosity.to_string(),
            e.bind.to_string(),
            e.source.to_string(),
            e.category.clone().unwrap_or_else(|| "-".into()),
        ]);
        t.note(&e.description);
    }
    out.push_str(&t.render());
    let _ = writeln!(out, "\nevent sources ({})", l.sources.len());
    let mut t = Table::new(&[
        Col::right("idx"),
        Col::left("name"),
        Col::left("ordering"),
        Col::right("ticks/s"),
        Col::right("max ticks"),
        Col::left("description"),
    ]);
    for s in &l.sources {
        t.row([
            s.index.to_string(),
            s.name.to_string(),
            s.ordering.to_string(),
            s.ticks_per_second.to_string(),
            s.max_ticks.to_string(),
            s.description.to_string(),
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(out, "\ncategories ({})", l.categories.len());
    let mut seen = Vec::new();
    for c in l.categories.iter().filter(|c| c.parent.is_none()) {
        tree(&mut out, l, c.index, 0, &mut seen);
    }
    let _ = writeln!(out, "\nenumerations ({})", l.enumerations.len());
    let mut t = Table::new(&[Col::right("idx"), Col::left("name"), Col::left("items")]);
    for e in &l.enumerations {
        let items: Vec<String> = e.items.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        t.row([e.index.to_string(), e.name.to_string(), items.join(", ")]);
    }
    out.push_str(&t.render());
    out
}

/// Runs `pvar list`.
pub fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let (_provided, guard) = pvar::process::init_thread(pvar::THREAD_MULTIPLE)?;
    let reg = guard.registry();
    let _demo = vars::register(vars::LIST_THREADS)?;
    let listing = collect(reg);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listing)?);
    } else {
        print!("{}", text(&listing));
    }
    guard.finalize()?;
    Ok(())
}
