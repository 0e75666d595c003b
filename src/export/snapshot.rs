//! A registry's variables and values at one moment ([`Snapshot`]), and the
//! silent reader that takes them ([`Observer`]).
//!
//! An observer reads the hot storage the way a tool handle does (a summed
//! element is merged over every thread's record, a shared one is one
//! load, a callback variable asks its component) but it is not a tool: it
//! opens no session, allocates no MPI_T handle (so it raises no
//! `pvar_engine_handle_alloc` event and moves no engine statistic), and a
//! tool never sees it. What a snapshot holds per class:
//!
//! | class | `values` | `marks` |
//! |---|---|---|
//! | COUNTER, AGGREGATE | the total since registration | — |
//! | TIMER | the total time since registration: seconds (`MPI_DOUBLE`) or nanoseconds | — |
//! | LEVEL, SIZE, PERCENTAGE, STATE, GENERIC | the current value | — |
//! | HIGH/LOWWATERMARK | the current level | the highest (lowest) level since the observer first saw the variable |
//! | callback variables | what the component's read function returns | the same, for watermarks |
//!
//! A watermark's mark needs a subscription in the variable's store, as a
//! started tool handle has: the observer holds one per watermark (unbound,
//! or per bound instance) from its first snapshot on, so an update of that
//! watermark walks the marks when it reaches a new extreme (see
//! `hot/storage/watermark.rs`; any other update is unchanged). An
//! observer made [`with_marks(false)`](Observer::with_marks) subscribes
//! to nothing and reports levels only. A
//! callback variable is told `Bind` and `Start` when the observer first
//! reads it, `Stop` and `Free` when the observer is dropped: the observer
//! holds each such variable as a started tool handle would, through the
//! same reader lifecycle (`hot/storage/reader.rs`). Bound callback variables have no
//! instances to enumerate (the tool names the object), so they are listed
//! with no values.

use std::collections::HashMap;

use crate::event::source::monotonic_ns;
use crate::hot::storage::reader::Following;
use crate::hot::storage::{Backing, Storage};
use crate::pvar::table::Body;
use crate::registry::Registry;
use crate::sync::Arc;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass, Verbosity};

/// One element's value, typed by the variable's datatype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG`,
    /// `MPI_CHAR` (a byte).
    Unsigned(u64),
    /// `MPI_INT`, `MPI_COUNT`.
    Signed(i64),
    /// `MPI_DOUBLE`.
    Double(f64),
}

impl Number {
    /// The value of `bits` (a tool's output value) read as `datatype`.
    pub fn from_bits(datatype: Datatype, bits: u64) -> Number {
        match datatype {
            Datatype::Double => Number::Double(f64::from_bits(bits)),
            Datatype::Int => Number::Signed(bits as i64 as i32 as i64),
            Datatype::Count => Number::Signed(bits as i64),
            Datatype::Char => Number::Unsigned(bits & 0xff),
            _ => Number::Unsigned(bits),
        }
    }

    /// The value as `f64` (large integers round).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Unsigned(u) => u as f64,
            Number::Signed(i) => i as f64,
            Number::Double(d) => d,
        }
    }

    /// The value's bit pattern (`f64` bits for a double, two's complement
    /// for a signed integer): how the export region stores it.
    pub fn to_bits(self) -> u64 {
        match self {
            Number::Unsigned(u) => u,
            Number::Signed(i) => i as u64,
            Number::Double(d) => d.to_bits(),
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Unsigned(u) => write!(f, "{u}"),
            Number::Signed(i) => write!(f, "{i}"),
            Number::Double(d) => write!(f, "{d}"),
        }
    }
}

/// The process a snapshot was taken in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// The program's name (`/proc/self/comm`), may be empty.
    pub program: String,
    /// The pvar crate version that wrote the snapshot.
    pub engine_version: String,
    /// Counts snapshots taken by the observer, from 1.
    pub sequence: u64,
    /// When it was taken, `CLOCK_MONOTONIC` nanoseconds (for rates).
    pub monotonic_ns: u64,
    /// When it was taken, nanoseconds since the Unix epoch (for display).
    pub unix_ns: u64,
    /// Threads holding a per-thread id at the time (all registries).
    pub live_threads: u32,
}

impl ProcessInfo {
    /// How long ago the snapshot was taken, by `CLOCK_MONOTONIC` (the same
    /// clock in every process of the machine; zero if it reads "later",
    /// as it can across container clock namespaces).
    pub fn age(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(monotonic_ns().saturating_sub(self.monotonic_ns))
    }
}

/// One performance variable (or one bound object's instance of it).
#[derive(Debug, Clone, PartialEq)]
pub struct VarSnapshot {
    /// The variable's index (`MPI_T_pvar_get_index`); a bound variable
    /// appears once per object instance, with the same index.
    pub index: usize,
    /// Its name (unique together with the class).
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its class.
    pub class: PvarClass,
    /// The datatype of `values`.
    pub datatype: Datatype,
    /// Intended audience.
    pub verbosity: Verbosity,
    /// The kind of object it is bound to.
    pub bind: BindKind,
    /// The object of this instance (bound variables).
    pub object: Option<u64>,
    /// The name its component gave that object, if any
    /// ([`Pvars::label_object`](crate::Pvars::label_object): the MPI
    /// interposer names its communicators `MPI_COMM_WORLD`, `comm[0-3]`).
    pub object_label: Option<String>,
    /// Read-only, continuous and atomic flags of the variable.
    pub readonly: bool,
    /// See [`VarSnapshot::readonly`].
    pub continuous: bool,
    /// See [`VarSnapshot::readonly`].
    pub atomic: bool,
    /// Whether it is active; an inactive variable (or a bound variable
    /// whose values cannot be enumerated) has no values.
    pub active: bool,
    /// Index into [`Snapshot::categories`] of its category, if any.
    pub category: Option<usize>,
    /// Index into [`Snapshot::enumerations`] of its enumeration (STATE).
    pub enumeration: Option<usize>,
    /// One value per element (see the module documentation per class).
    pub values: Vec<Number>,
    /// Watermarks: the mark per element since the observer first saw the
    /// variable.
    pub marks: Option<Vec<Number>>,
}

impl VarSnapshot {
    /// The unit of its values where the class fixes one: TIMER
    /// `"seconds"` (`MPI_DOUBLE`) or `"nanoseconds"`, PERCENTAGE
    /// `"ratio"` (0 to 1). MPI_T carries no unit for other variables.
    pub fn unit(&self) -> Option<&'static str> {
        match self.class {
            PvarClass::Timer if self.datatype == Datatype::Double => Some("seconds"),
            PvarClass::Timer => Some("nanoseconds"),
            PvarClass::Percentage => Some("ratio"),
            _ => None,
        }
    }
}

/// A category: its name, description, members and sub-categories.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CategorySnapshot {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Indices of its performance variables.
    pub pvars: Vec<usize>,
    /// Indices (into [`Snapshot::categories`]) of its sub-categories.
    pub subcategories: Vec<usize>,
}

/// An enumeration: its name and `(value, name)` items.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnumSnapshot {
    /// Its name.
    pub name: String,
    /// Its items.
    pub items: Vec<(i32, String)>,
}

/// A registry's performance variables with their values at one moment,
/// their categories and enumerations: what the export region carries,
/// `pvar read` prints and the OpenMetrics writer formats.
///
/// ```
/// use pvar::Registry;
/// use pvar::export::{Number, Snapshot};
/// let reg = Registry::new();
/// reg.counter("sent").register()?.add(3);
/// let snap = Snapshot::take(&reg);
/// let sent = snap.variable("sent").unwrap();
/// assert_eq!(sent.values, [Number::Unsigned(3)]);
/// # Ok::<(), pvar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Where and when it was taken.
    pub process: ProcessInfo,
    /// The variables, in index order (bound variables once per instance,
    /// by object).
    pub variables: Vec<VarSnapshot>,
    /// The categories, in index order.
    pub categories: Vec<CategorySnapshot>,
    /// The enumerations variables refer to.
    pub enumerations: Vec<EnumSnapshot>,
}

impl Snapshot {
    /// One snapshot of `registry` (watermark marks then equal the levels:
    /// an [`Observer`] kept across snapshots follows them).
    pub fn take(registry: &Registry) -> Snapshot {
        Observer::new(registry).snapshot()
    }

    /// The first variable (or instance) named `name`.
    pub fn variable(&self, name: &str) -> Option<&VarSnapshot> {
        self.variables.iter().find(|v| v.name == name)
    }
}

/// Takes successive [`Snapshot`]s of a registry, keeping what it needs
/// between them (watermark subscriptions, callback variables it was bound
/// to). See the module documentation for what it reads per class.
///
/// Not async-signal-safe (it allocates); meant for a background thread.
pub struct Observer {
    registry: Registry,
    sequence: u64,
    /// Whether watermark marks are followed (see [`Observer::with_marks`]).
    follow_marks: bool,
    /// This process's name, read once.
    program: String,
    /// Watermarks (with marks followed) and callback variables read, by
    /// index and bound object.
    watches: HashMap<(usize, Option<u64>), Following>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("sequence", &self.sequence)
            .field("watches", &self.watches.len())
            .finish_non_exhaustive()
    }
}

impl Observer {
    /// An observer of `registry` (it keeps the registry alive).
    pub fn new(registry: &Registry) -> Observer {
        Observer {
            registry: registry.clone(),
            sequence: 0,
            follow_marks: true,
            program: program_name(),
            watches: HashMap::new(),
        }
    }

    /// Whether to follow watermark marks (default `true`). Without, a
    /// snapshot has no `marks` and the observer subscribes to nothing, so
    /// no watermark update costs more than without an observer.
    pub fn with_marks(mut self, follow: bool) -> Observer {
        self.follow_marks = follow;
        self
    }

    /// The registry observed.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Reads every variable now.
    pub fn snapshot(&mut self) -> Snapshot {
        self.sequence += 1;
        let reg = self.registry.clone();
        let mut snap = Snapshot {
            process: ProcessInfo {
                pid: std::process::id(),
                program: self.program.clone(),
                engine_version: env!("CARGO_PKG_VERSION").to_string(),
                sequence: self.sequence,
                monotonic_ns: monotonic_ns(),
                unix_ns: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
                live_threads: crate::hot::cells::live_threads(),
            },
            ..Snapshot::default()
        };
        let cats = reg.categories();
        for c in 0..cats.len() {
            let Ok(info) = cats.info(c) else { continue };
            snap.categories.push(CategorySnapshot {
                name: info.name.to_string(),
                description: info.description.to_string(),
                pvars: cats.pvars(c).unwrap_or_default(),
                subcategories: cats.subcategories(c).unwrap_or_default(),
            });
        }
        let category_index: HashMap<&str, usize> = snap
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        let pvars = reg.pvars_shared();
        for index in 0..pvars.len() {
            let Ok(var) = pvars.variable(index) else {
                continue;
            };
            let info = &var.info;
            let active = pvars.is_active(index).unwrap_or(false);
            let enumeration = info.enumeration.as_ref().map(|e| {
                let at = snap.enumerations.iter().position(|s| {
                    s.name == e.name()
                        && s.items.len() == e.len()
                        && s.items
                            .iter()
                            .zip(e.items())
                            .all(|(a, b)| a.0 == b.value && a.1 == b.name)
                });
                at.unwrap_or_else(|| {
                    snap.enumerations.push(EnumSnapshot {
                        name: e.name().to_string(),
                        items: e
                            .items()
                            .iter()
                            .map(|i| (i.value, i.name.clone()))
                            .collect(),
                    });
                    snap.enumerations.len() - 1
                })
            });
            let category = info
                .category
                .as_deref()
                .and_then(|c| category_index.get(c).copied());
            let base = VarSnapshot {
                index,
                name: info.name.clone(),
                description: info.description.clone(),
                class: info.class,
                datatype: info.datatype,
                verbosity: info.verbosity,
                bind: info.bind,
                object: None,
                object_label: None,
                readonly: info.readonly,
                continuous: info.continuous,
                atomic: info.atomic,
                active,
                category,
                enumeration,
                values: Vec::new(),
                marks: None,
            };
            match &var.body {
                Body::Unbound(storage) => {
                    let storage = if matches!(storage.backing, Backing::Callback { .. }) {
                        self.callback(index, active)
                    } else {
                        Some(storage.clone())
                    };
                    let mut v = base;
                    if let Some(s) = storage.filter(|_| active) {
                        self.read(&mut v, &s, None);
                    }
                    snap.variables.push(v);
                }
                Body::Bound { callbacks, .. } if callbacks.is_some() => {
                    let mut v = base;
                    v.active = false;
                    snap.variables.push(v);
                }
                Body::Bound { .. } => {
                    let objects = pvars.instances(index).unwrap_or_default();
                    if objects.is_empty() {
                        let mut v = base.clone();
                        v.active = false;
                        snap.variables.push(v);
                    }
                    for object in objects {
                        let mut v = base.clone();
                        v.object = Some(object);
                        v.object_label = pvars.object_label(info.bind, object);
                        match pvars.instance(index, object) {
                            Ok(s) if active && s.is_live() => self.read(&mut v, &s, Some(object)),
                            _ => v.active = false,
                        }
                        snap.variables.push(v);
                    }
                }
            }
        }
        // Watches of watermark instances that are gone are given back
        // (unbound callback variables stay watched while they exist).
        let live: std::collections::HashSet<(usize, Option<u64>)> = snap
            .variables
            .iter()
            .filter(|v| v.marks.is_some())
            .map(|v| (v.index, v.object))
            .collect();
        self.watches
            .retain(|k, w| live.contains(k) || !w.reader().has_marks());
        snap
    }

    /// The storage of unbound callback variable `index`, bound and started
    /// on first use (as a tool's handle would be).
    fn callback(&mut self, index: usize, active: bool) -> Option<Arc<Storage>> {
        if let Some(w) = self.watches.get(&(index, None)) {
            return Some(w.reader().storage().clone());
        }
        if !active {
            return None;
        }
        let storage = self.registry.pvars_shared().resolve(index, None).ok()?;
        self.watches
            .insert((index, None), Following::new(storage.clone()));
        Some(storage)
    }

    /// Fills `v.values` (and `v.marks`) from `storage`.
    fn read(&mut self, v: &mut VarSnapshot, storage: &Arc<Storage>, object: Option<u64>) {
        let dt = v.datatype;
        v.values = (0..storage.count)
            .map(|i| Number::from_bits(dt, storage.to_output(storage.current(i))))
            .collect();
        match &storage.backing {
            Backing::Watermark(_) if self.follow_marks => {
                let watch = self
                    .watches
                    .entry((v.index, object))
                    .or_insert_with(|| Following::new(storage.clone()));
                if !Arc::ptr_eq(watch.reader().storage(), storage) {
                    // A new instance for the same object: follow it.
                    *watch = Following::new(storage.clone());
                }
                v.marks = Some(
                    (0..storage.count)
                        .map(|i| {
                            let mark = watch.reader().mark(i).unwrap_or(0);
                            Number::from_bits(dt, storage.to_output(mark))
                        })
                        .collect(),
                );
            }
            Backing::Callback { .. } if storage.class.is_watermark() => {
                v.marks = Some(v.values.clone());
            }
            _ => {}
        }
    }
}

/// This process's short name (`/proc/self/comm`), or the executable's file
/// name.
fn program_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim_end().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| {
            std::env::args_os().next().and_then(|a| {
                std::path::Path::new(&a)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
            })
        })
        .unwrap_or_default()
}
