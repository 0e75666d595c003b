//! The JSON form of a snapshot: what `pvar read --json` and
//! `pvar export --format json` print. The schema is versioned by its
//! `schema` field (`"pvar.snapshot.v1"`); fields are only ever added
//! within a version.
//!
//! ```text
//! {
//!   "schema": "pvar.snapshot.v1",
//!   "process": {
//!     "pid": 1234, "program": "pvar", "engine_version": "0.1.0",
//!     "sequence": 57,            // snapshots taken by the exporter, from 1
//!     "monotonic_ns": …,         // CLOCK_MONOTONIC when taken (for rates)
//!     "unix_ns": …,              // wall clock when taken
//!     "live_threads": 6
//!   },
//!   "variables": [               // index order; a bound variable once per object
//!     {
//!       "index": 0, "name": "demo_msgs_sent", "description": "…",
//!       "class": "MPI_T_PVAR_CLASS_COUNTER",
//!       "datatype": "MPI_UNSIGNED_LONG_LONG",
//!       "unit": null,            // "seconds" | "nanoseconds" (TIMER), "ratio" (PERCENTAGE)
//!       "verbosity": "MPI_T_VERBOSITY_USER_BASIC",
//!       "bind": "MPI_T_BIND_NO_OBJECT",
//!       "object": null,          // a bound instance's object handle (a number)
//!       "object_label": null,    // the name its component gave the object ("MPI_COMM_WORLD"), or null
//!       "readonly": true, "continuous": true, "atomic": false,
//!       "active": true,          // false: no values (inactive, or no instance)
//!       "category": "demo_traffic",    // or null
//!       "enumeration": null,     // STATE: the enumeration's name
//!       "values": [1234],        // one JSON number per element (null: NaN/±inf)
//!       "marks": null,           // watermarks: the mark per element
//!       "value_names": null      // STATE with an enumeration: the item name per element (null: none)
//!     }
//!   ],
//!   "categories": [              // index order
//!     { "name": "demo_traffic", "description": "…",
//!       "pvars": [0, 1],         // the MPI_T indices of its variables ("index" above)
//!       "subcategories": ["…"] } // by name
//!   ],
//!   "enumerations": [ { "name": "demo_worker_state",
//!                       "items": [ { "value": 0, "name": "idle" } ] } ]
//! }
//! ```

use serde::Serialize;
use serde_json::Value;

use pvar::export::{Number, Snapshot, VarSnapshot};

/// The schema's name and version, the `schema` field.
pub const SCHEMA: &str = "pvar.snapshot.v1";

/// A snapshot in the JSON schema (see the module documentation).
#[derive(Serialize)]
pub struct SnapshotJson<'a> {
    schema: &'static str,
    process: ProcessJson<'a>,
    variables: Vec<VariableJson<'a>>,
    categories: Vec<CategoryJson<'a>>,
    enumerations: Vec<EnumJson<'a>>,
}

#[derive(Serialize)]
struct ProcessJson<'a> {
    pid: u32,
    program: &'a str,
    engine_version: &'a str,
    sequence: u64,
    monotonic_ns: u64,
    unix_ns: u64,
    live_threads: u32,
}

#[derive(Serialize)]
struct VariableJson<'a> {
    index: usize,
    name: &'a str,
    description: &'a str,
    class: &'static str,
    datatype: &'static str,
    unit: Option<&'static str>,
    verbosity: &'static str,
    bind: &'static str,
    object: Option<u64>,
    object_label: Option<&'a str>,
    readonly: bool,
    continuous: bool,
    atomic: bool,
    active: bool,
    category: Option<&'a str>,
    enumeration: Option<&'a str>,
    values: Vec<Value>,
    marks: Option<Vec<Value>>,
    value_names: Option<Vec<Option<&'a str>>>,
}

#[derive(Serialize)]
struct CategoryJson<'a> {
    name: &'a str,
    description: &'a str,
    pvars: &'a [usize],
    subcategories: Vec<&'a str>,
}

#[derive(Serialize)]
struct EnumJson<'a> {
    name: &'a str,
    items: Vec<ItemJson<'a>>,
}

#[derive(Serialize)]
struct ItemJson<'a> {
    value: i32,
    name: &'a str,
}

/// One value as a JSON number (`null` for a double that is not finite).
pub fn number(n: Number) -> Value {
    match n {
        Number::Unsigned(u) => Value::from(u),
        Number::Signed(i) => Value::from(i),
        Number::Double(d) => serde_json::Number::from_f64(d).map_or(Value::Null, Value::Number),
    }
}

fn variable<'a>(snap: &'a Snapshot, v: &'a VarSnapshot) -> VariableJson<'a> {
    let enumeration = v.enumeration.and_then(|e| snap.enumerations.get(e));
    VariableJson {
        index: v.index,
        name: &v.name,
        description: &v.description,
        class: v.class.c_name(),
        datatype: v.datatype.c_name(),
        unit: v.unit(),
        verbosity: v.verbosity.c_name(),
        bind: v.bind.c_name(),
        object: v.object,
        object_label: v.object_label.as_deref(),
        readonly: v.readonly,
        continuous: v.continuous,
        atomic: v.atomic,
        active: v.active,
        category: v
            .category
            .and_then(|c| snap.categories.get(c))
            .map(|c| c.name.as_str()),
        enumeration: enumeration.map(|e| e.name.as_str()),
        values: v.values.iter().map(|n| number(*n)).collect(),
        marks: v
            .marks
            .as_ref()
            .map(|m| m.iter().map(|n| number(*n)).collect()),
        value_names: enumeration.map(|_| {
            v.values
                .iter()
                .map(|n| super::values::item_name(snap, v, *n))
                .collect()
        }),
    }
}

/// `snap` in the JSON schema.
pub fn snapshot(snap: &Snapshot) -> SnapshotJson<'_> {
    let p = &snap.process;
    SnapshotJson {
        schema: SCHEMA,
        process: ProcessJson {
            pid: p.pid,
            program: &p.program,
            engine_version: &p.engine_version,
            sequence: p.sequence,
            monotonic_ns: p.monotonic_ns,
            unix_ns: p.unix_ns,
            live_threads: p.live_threads,
        },
        variables: snap.variables.iter().map(|v| variable(snap, v)).collect(),
        categories: snap
            .categories
            .iter()
            .map(|c| CategoryJson {
                name: &c.name,
                description: &c.description,
                pvars: &c.pvars,
                subcategories: c
                    .subcategories
                    .iter()
                    .filter_map(|s| snap.categories.get(*s))
                    .map(|s| s.name.as_str())
                    .collect(),
            })
            .collect(),
        enumerations: snap
            .enumerations
            .iter()
            .map(|e| EnumJson {
                name: &e.name,
                items: e
                    .items
                    .iter()
                    .map(|(value, name)| ItemJson {
                        value: *value,
                        name,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// `snap` as one pretty-printed JSON document (characters a terminal
/// would act on written as `\uXXXX`, see `format::json_safe`).
pub fn to_string(snap: &Snapshot) -> String {
    crate::format::json_safe(
        serde_json::to_string_pretty(&snapshot(snap)).expect("a snapshot serialises"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_classes_and_types_as_mpi_t_does() {
        let reg = pvar::Registry::new();
        reg.counter("sent").register().unwrap().add(3);
        reg.timer("busy").register().unwrap();
        let snap = Snapshot::take(&reg);
        let v: Value = serde_json::from_str(&to_string(&snap)).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        let sent = v["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "sent")
            .unwrap();
        assert_eq!(sent["class"], "MPI_T_PVAR_CLASS_COUNTER");
        assert_eq!(sent["values"][0], 3);
        assert_eq!(sent["marks"], Value::Null);
        let busy = v["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "busy")
            .unwrap();
        assert_eq!(busy["class"], "MPI_T_PVAR_CLASS_TIMER");
        assert!(busy["unit"].is_string());
    }

    #[test]
    fn a_non_finite_double_is_null() {
        assert_eq!(number(Number::Double(f64::NAN)), Value::Null);
        assert_eq!(number(Number::Double(0.5)), Value::from(0.5));
        assert_eq!(number(Number::Signed(-2)), Value::from(-2));
    }
}
