//! The registry: every variable's index, metadata and storage.
//!
//! Indices run `0..N-1` in registration order, never change and are never
//! reused; `N` grows at any time from any thread while others read (the
//! variables live in an append-only vector with lock-free reads). Name and
//! class together are unique: registering the same pair again with
//! identical metadata returns the existing variable, with different
//! metadata it is an error naming both.
//!
//! A [`Registry`] value is isolated (for tests and embedding); [`global`]
//! is the process-wide one that the C interface and tools use.

pub(crate) mod info;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::callback::{Callbacks, Notify};
use crate::category::Categories;
use crate::cells::CellSpace;
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::kinds::{BindKind, ObjectRef, PvarClass};
use crate::storage::{Hot, Storage};
use crate::sync::append_vec::AppendVec;
use crate::sync::{AtomicBool, Mutex, Ordering};
pub use info::{ElementCount, PvarInfo};

/// What backs a variable's values.
pub(crate) enum Body {
    /// One storage for the whole variable.
    Unbound(Arc<Storage>),
    /// One storage per object instance, keyed by the object's handle value.
    Bound {
        instances: Mutex<HashMap<u64, Arc<Storage>>>,
        callbacks: Option<Arc<Callbacks>>,
    },
}

/// A registered performance variable.
pub(crate) struct Variable {
    pub(crate) index: usize,
    pub(crate) info: PvarInfo,
    active: AtomicBool,
    pub(crate) body: Body,
}

impl Variable {
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    pub(crate) fn callbacks(&self) -> Option<&Arc<Callbacks>> {
        match &self.body {
            Body::Unbound(s) => match &s.kind {
                crate::storage::Kind::Callback { callbacks, .. } => Some(callbacks),
                _ => None,
            },
            Body::Bound { callbacks, .. } => callbacks.as_ref(),
        }
    }

    /// The storage a handle bound to `object` reads, and its element count.
    /// A callback variable's notify function is told [`Notify::Bind`] (with
    /// `None` for an unbound variable, whose registered count stands) and,
    /// for a bound variable, gives the count. Once told Bind, the caller
    /// owes it a Free: through `HandleData::release` on success, and here
    /// when the object is refused after the Bind.
    pub(crate) fn resolve(
        &self,
        hot: &Arc<Hot>,
        object: Option<ObjectRef>,
    ) -> Result<Arc<Storage>> {
        if !self.is_active() {
            return Err(Error::Inactive);
        }
        match &self.body {
            Body::Unbound(s) => {
                if let crate::storage::Kind::Callback { callbacks, object } = &s.kind {
                    let _ = callbacks.notify(Notify::Bind, *object);
                }
                Ok(s.clone())
            }
            Body::Bound {
                instances,
                callbacks,
            } => {
                let object = object.ok_or(Error::Invalid(
                    "a bound variable needs an object of its bind kind",
                ))?;
                if object.kind != self.info.bind {
                    return Err(Error::Invalid(
                        "the object's kind differs from the variable's bind kind",
                    ));
                }
                if let Some(cb) = callbacks {
                    let o = Some(object.handle);
                    let count = match cb.notify(Notify::Bind, o) {
                        Some(n) => n,
                        None => match self.info.count {
                            ElementCount::Fixed(n) => n,
                            ElementCount::PerObject => 0,
                        },
                    };
                    let storage = if count == 0 {
                        Err(Error::Invalid(
                            "the notify function gave no element count for the object",
                        ))
                    } else {
                        Storage::new(
                            hot,
                            self.info.class,
                            self.info.datatype,
                            count,
                            Some((cb.clone(), o)),
                        )
                        .map(Arc::new)
                        .map_err(|_| Error::Code(ErrorCode::Memory))
                    };
                    if storage.is_err() {
                        // No handle after all: the Bind is undone.
                        let _ = cb.notify(Notify::Free, o);
                    }
                    return storage;
                }
                let map = instances.lock().unwrap_or_else(|e| e.into_inner());
                map.get(&object.handle).cloned().ok_or(Error::Invalid(
                    "no live instance of the variable for this object",
                ))
            }
        }
    }
}

pub(crate) struct RegistryInner {
    pub(crate) hot: Arc<Hot>,
    pub(crate) pvars: AppendVec<Variable>,
    names: Mutex<HashMap<(String, PvarClass), usize>>,
    pub(crate) categories: Categories,
    pub(crate) tool: crate::tool::ToolState,
    pub(crate) enums: crate::enums::EnumTable,
    pub(crate) cvars: crate::cvar::CvarTable,
}

/// A set of variables with their hot storage. Cheap to clone (shared).
///
/// ```
/// let reg = pvar::Registry::new();
/// let sent = reg.counter("msgs_sent").description("messages sent").register().unwrap();
/// sent.inc();
/// sent.add(2);
/// assert_eq!(sent.get(), 3);
/// assert_eq!(reg.num_pvars(), 1);
/// ```
#[derive(Clone)]
pub struct Registry {
    pub(crate) inner: Arc<RegistryInner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("pvars", &self.num_pvars())
            .finish_non_exhaustive()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// An isolated registry with a freshly calibrated clock.
    ///
    /// # Panics
    /// If this CPU lacks lock-free 128-bit atomics, which the tool side's
    /// async-signal-safe handle state requires (every x86-64 CPU since 2008
    /// and every AArch64 CPU has them).
    pub fn new() -> Self {
        Self::with_clock(Clock::new())
    }

    /// An isolated registry using `clock` for timers (e.g. [`Clock::mock`]).
    pub fn with_clock(clock: Clock) -> Self {
        Self::with_parts(clock, crate::tool::ToolState::new())
    }

    /// A registry over a given tool state (unit tests: a small handle
    /// table).
    #[cfg(test)]
    pub(crate) fn with_tool_state(tool: crate::tool::ToolState) -> Self {
        Self::with_parts(Clock::new(), tool)
    }

    fn with_parts(clock: Clock, tool: crate::tool::ToolState) -> Self {
        if let Err(why) = crate::sync::check_lock_free() {
            panic!("pvar: {why}");
        }
        Self {
            inner: Arc::new(RegistryInner {
                hot: Arc::new(Hot {
                    cells: CellSpace::new(),
                    clock,
                }),
                pvars: AppendVec::new(),
                names: Mutex::new(HashMap::new()),
                categories: Categories::new(),
                tool,
                enums: crate::enums::EnumTable::new(),
                cvars: crate::cvar::CvarTable::new(),
            }),
        }
    }

    /// The clock timers of this registry use.
    pub fn clock(&self) -> &Clock {
        &self.inner.hot.clock
    }

    /// Registers a variable (or returns the existing one with the same name,
    /// class and metadata). Used by the typed builders.
    pub(crate) fn register_pvar(
        &self,
        info: PvarInfo,
        callbacks: Option<Callbacks>,
    ) -> Result<&Variable> {
        info.validate(callbacks.is_some())
            .map_err(Error::Registration)?;
        if info.bind == BindKind::NoObject && info.count == ElementCount::PerObject {
            return Err(Error::Registration(format!(
                "pvar '{}': per-object count without binding",
                info.name
            )));
        }
        let mut names = self.inner.names.lock().unwrap_or_else(|e| e.into_inner());
        let key = (info.name.clone(), info.class);
        if let Some(&index) = names.get(&key) {
            let var = self
                .inner
                .pvars
                .get(index)
                .expect("indexed variable exists");
            let diff = var.info.differences(&info);
            if !diff.is_empty() || var.callbacks().is_some() != callbacks.is_some() {
                return Err(Error::Registration(format!(
                    "pvar '{}' ({}) is already registered at index {index} with different \
                     metadata (differs in: {}); registered: {:?}; new: {:?}",
                    info.name,
                    info.class.c_name(),
                    if diff.is_empty() {
                        "callbacks".to_string()
                    } else {
                        diff.join(", ")
                    },
                    var.info,
                    info
                )));
            }
            // A component loaded again: same index, reactivated.
            var.active.store(true, Ordering::Release);
            return Ok(var);
        }
        let callbacks = callbacks.map(Arc::new);
        let hot = &self.inner.hot;
        let body = if info.bind == BindKind::NoObject {
            let count = match info.count {
                ElementCount::Fixed(n) => n,
                ElementCount::PerObject => unreachable!("validated"),
            };
            let storage = Storage::new(
                hot,
                info.class,
                info.datatype,
                count,
                callbacks.map(|c| (c, None)),
            )
            .map_err(|e| Error::Registration(format!("pvar '{}': {e}", info.name)))?;
            Body::Unbound(Arc::new(storage))
        } else {
            Body::Bound {
                instances: Mutex::new(HashMap::new()),
                callbacks,
            }
        };
        let category = info.category.clone();
        let index = self.inner.pvars.push_with(|index| {
            (
                Some(Variable {
                    index,
                    info,
                    active: AtomicBool::new(true),
                    body,
                }),
                index,
            )
        });
        names.insert(key, index);
        drop(names);
        if let Some(cat) = category {
            self.inner.categories.attach_pvar(&cat, index);
        }
        Ok(self.inner.pvars.get(index).expect("just pushed"))
    }

    pub(crate) fn variable(&self, index: usize) -> Result<&Variable> {
        self.inner.pvars.get(index).ok_or(Error::invalid_index())
    }

    /// Number of performance variables (`MPI_T_pvar_get_num`).
    /// Async-signal-safe.
    pub fn num_pvars(&self) -> usize {
        self.inner.pvars.len()
    }

    /// Metadata of variable `index` (`MPI_T_pvar_get_info`); inactive
    /// variables keep their metadata. `MPI_T_ERR_INVALID_INDEX` when out of
    /// range.
    pub fn pvar_info(&self, index: usize) -> Result<&PvarInfo> {
        self.variable(index).map(|v| &v.info)
    }

    /// Whether variable `index` is active (its component still loaded).
    pub fn pvar_is_active(&self, index: usize) -> Result<bool> {
        self.variable(index).map(Variable::is_active)
    }

    /// Index of the variable with `name` and `class`
    /// (`MPI_T_pvar_get_index`); `MPI_T_ERR_INVALID_NAME` if there is none.
    pub fn pvar_index(&self, name: &str, class: PvarClass) -> Result<usize> {
        let names = self.inner.names.lock().unwrap_or_else(|e| e.into_inner());
        names
            .get(&(name.to_string(), class))
            .copied()
            .ok_or(Error::Code(ErrorCode::InvalidName))
    }

    /// Deactivates variable `index` (its component was unloaded): the index
    /// and metadata stay, value access through handles fails with
    /// [`Error::Inactive`]. Registering it again reactivates it.
    pub fn deactivate_pvar(&self, index: usize) -> Result<()> {
        self.variable(index)?.active.store(false, Ordering::Release);
        Ok(())
    }

    /// The category tree of this registry.
    pub fn categories(&self) -> &Categories {
        &self.inner.categories
    }

    /// Allocates, for the calling thread, the cells of every variable
    /// registered so far, so that later updates from this thread, including
    /// from a signal handler, never allocate.
    pub fn prepare_thread(&self) {
        self.inner.hot.cells.prepare_thread();
    }

    /// Number of per-thread records in this registry's cell space (threads
    /// that ever updated a summed variable; exited threads' records are
    /// reused by new threads).
    pub fn thread_records(&self) -> usize {
        self.inner.hot.cells.thread_records()
    }

    /// Bytes of per-thread cell memory allocated so far.
    pub fn cell_bytes(&self) -> usize {
        self.inner.hot.cells.allocated_bytes()
    }

    /// Creates an instance of bound variable `index` for `object` with
    /// `count` elements. Used by the typed [`Bound`](crate::Bound) handles.
    pub(crate) fn create_instance(
        &self,
        index: usize,
        object: u64,
        count: usize,
    ) -> Result<Arc<Storage>> {
        let var = self.variable(index)?;
        let Body::Bound {
            instances,
            callbacks,
        } = &var.body
        else {
            return Err(Error::Invalid("the variable is not bound to objects"));
        };
        if callbacks.is_some() {
            return Err(Error::Invalid("callback variables compute their instances"));
        }
        if let ElementCount::Fixed(n) = var.info.count
            && n != count
        {
            return Err(Error::Invalid(
                "count differs from the variable's fixed count",
            ));
        }
        if count == 0 {
            return Err(Error::Invalid("an instance needs at least one element"));
        }
        let mut map = instances.lock().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(&object) {
            return Err(Error::Invalid("an instance for this object exists already"));
        }
        let storage = Arc::new(
            Storage::new(
                &self.inner.hot,
                var.info.class,
                var.info.datatype,
                count,
                None,
            )
            .map_err(|_| Error::Code(ErrorCode::Memory))?,
        );
        map.insert(object, storage.clone());
        Ok(storage)
    }

    /// Drops the instance of bound variable `index` for `object`: handles
    /// bound to it then fail with [`Error::Inactive`].
    pub(crate) fn drop_instance(&self, index: usize, object: u64) -> Result<()> {
        let var = self.variable(index)?;
        let Body::Bound { instances, .. } = &var.body else {
            return Err(Error::Invalid("the variable is not bound to objects"));
        };
        let removed = remove_instance(instances, object)?;
        removed.live.store(false, Ordering::Release);
        Ok(())
    }

    /// The objects that currently have an instance of bound variable `index`.
    pub fn instances(&self, index: usize) -> Result<Vec<u64>> {
        match &self.variable(index)?.body {
            Body::Bound { instances, .. } => Ok(instance_objects(instances)),
            Body::Unbound(_) => Ok(Vec::new()),
        }
    }

    /// Whether two values are the same registry.
    pub fn ptr_eq(&self, other: &Registry) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// Takes `object`'s instance out of a bound variable's instance map (of a
/// performance or a control variable); `INVALID` if it has none.
pub(crate) fn remove_instance<V>(map: &Mutex<HashMap<u64, V>>, object: u64) -> Result<V> {
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&object)
        .ok_or(Error::Invalid("no instance for this object"))
}

/// The objects that have an instance in a bound variable's instance map,
/// sorted.
pub(crate) fn instance_objects<V>(map: &Mutex<HashMap<u64, V>>) -> Vec<u64> {
    let mut v: Vec<u64> = map
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect();
    v.sort_unstable();
    v
}

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// The process-wide registry, created (and its clock calibrated) on first
/// call. Call it once before installing signal handlers that use it.
pub fn global() -> &'static Registry {
    GLOBAL.get_or_init(Registry::new)
}
