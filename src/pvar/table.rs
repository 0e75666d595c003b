//! The performance variables of a registry: every variable's index,
//! metadata and storage, and the registration rules.
//!
//! Indices run `0..N-1` in registration order, never change and are never
//! reused; `N` grows at any time from any thread while others read (the
//! variables live in an append-only vector with lock-free reads). Name and
//! class together are unique: registering the same pair again with
//! identical metadata returns the existing variable (reactivated), with
//! different metadata it is an error naming both.

use std::collections::HashMap;

use crate::category::Categories;
use crate::hot::storage::{Backing, Hot, Storage};
use crate::lockfree::var_table::{ActiveFlag, Instances, Registered, VarTable};
use crate::sync::unmodelled::{Arc as SharedText, Mutex};
use crate::sync::{Arc, Ordering};
use crate::vocabulary::callback::{Callbacks, Notify};
use crate::vocabulary::enumeration::Enumerations;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{BindKind, ObjectRef, PvarClass};
use crate::vocabulary::{ElementCount, PvarInfo};

/// What backs a variable's values.
pub(crate) enum Body {
    /// One storage for the whole variable.
    Unbound(Arc<Storage>),
    /// One storage per object instance, keyed by the object's handle value.
    Bound {
        instances: Instances<Arc<Storage>>,
        callbacks: Option<Arc<Callbacks>>,
    },
}

/// A registered performance variable (its active flag is the table's).
pub(crate) struct Variable {
    pub(crate) info: PvarInfo,
    pub(crate) body: Body,
}

impl Variable {
    fn callbacks(&self) -> Option<&Arc<Callbacks>> {
        match &self.body {
            Body::Unbound(s) => match &s.backing {
                Backing::Callback { callbacks, .. } => Some(callbacks),
                _ => None,
            },
            Body::Bound { callbacks, .. } => callbacks.as_ref(),
        }
    }

    /// The storage a handle bound to `object` reads. A callback variable's
    /// notify function is told [`Notify::Bind`] (with `None` for an
    /// unbound variable, whose registered count stands) and, for a bound
    /// variable, gives the count. Once told Bind, the caller owes it a
    /// Free: through the handle's release on success, and here when the
    /// object is refused after the Bind.
    fn resolve(
        &self,
        hot: &Arc<Hot>,
        active: &ActiveFlag,
        object: Option<ObjectRef>,
    ) -> Result<Arc<Storage>> {
        match &self.body {
            Body::Unbound(s) => {
                if let Backing::Callback { callbacks, object } = &s.backing {
                    let _ = callbacks.notify(Notify::Bind, *object);
                }
                Ok(s.clone())
            }
            Body::Bound {
                instances,
                callbacks,
            } => {
                let object = object.ok_or(Error::invalid(
                    "a bound variable needs an object of its bind kind",
                ))?;
                if object.kind != self.info.bind {
                    return Err(Error::invalid(
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
                        Err(Error::invalid(
                            "the notify function gave no element count for the object",
                        ))
                    } else {
                        Storage::new(
                            hot,
                            self.info.class,
                            self.info.datatype,
                            count,
                            Some((cb.clone(), o)),
                            active,
                        )
                        .map(Arc::new)
                        .map_err(|_| Error::Memory)
                    };
                    if storage.is_err() {
                        // No handle after all: the Bind is undone.
                        let _ = cb.notify(Notify::Free, o);
                    }
                    return storage;
                }
                instances.get(object.handle).ok_or(Error::invalid(
                    "no live instance of the variable for this object",
                ))
            }
        }
    }
}

/// The performance variables of a registry (`MPI_T_pvar_get_num`,
/// `_get_info`, `_get_index`), from [`Registry::pvars`](crate::Registry::pvars).
///
/// Queries are lock-free (an append-only vector), except
/// [`Pvars::index`] (a name map behind a mutex).
///
/// ```
/// use pvar::{PvarClass, Registry};
/// let reg = Registry::new();
/// let sent = reg.counter("msgs_sent").description("messages sent").register()?;
/// let pvars = reg.pvars();
/// assert_eq!(pvars.len(), 1);
/// assert_eq!(pvars.index("msgs_sent", PvarClass::Counter)?, sent.index());
/// assert_eq!(pvars.info(sent.index())?.description, "messages sent");
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct Pvars {
    hot: Arc<Hot>,
    vars: VarTable<(String, PvarClass), Variable>,
    categories: Arc<Categories>,
    enums: Arc<Enumerations>,
    /// The names components gave their objects ([`Pvars::label_object`]).
    labels: Mutex<HashMap<(BindKind, u64), SharedText<str>>>,
}

impl std::fmt::Debug for Pvars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pvars")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Pvars {
    pub(crate) fn new(
        hot: Arc<Hot>,
        categories: Arc<Categories>,
        enums: Arc<Enumerations>,
    ) -> Self {
        Self {
            hot,
            vars: VarTable::new(),
            categories,
            enums,
            labels: Mutex::new(HashMap::new()),
        }
    }

    /// The hot storage (cell space and clock) variables live in.
    pub(crate) fn hot(&self) -> &Arc<Hot> {
        &self.hot
    }

    /// Number of performance variables (`MPI_T_pvar_get_num`).
    /// Async-signal-safe.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether no variable is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn variable(&self, index: usize) -> Result<&Variable> {
        self.vars.get(index).ok_or_else(Error::no_such_index)
    }

    fn active_flag(&self, index: usize) -> Result<&ActiveFlag> {
        self.vars
            .active_flag(index)
            .ok_or_else(Error::no_such_index)
    }

    /// Metadata of variable `index` (`MPI_T_pvar_get_info`); inactive
    /// variables keep their metadata. `MPI_T_ERR_INVALID_INDEX` when out of
    /// range. Async-signal-safe.
    pub fn info(&self, index: usize) -> Result<&PvarInfo> {
        self.variable(index).map(|v| &v.info)
    }

    /// Whether variable `index` is active (its component still loaded).
    /// Async-signal-safe.
    pub fn is_active(&self, index: usize) -> Result<bool> {
        self.vars.is_active(index).ok_or_else(Error::no_such_index)
    }

    /// Index of the variable with `name` and `class`
    /// (`MPI_T_pvar_get_index`).
    ///
    /// A variable declared by a use-site macro (`pvar::counter!("sent")`)
    /// whose site has not run yet is registered now and found (in the
    /// global registry, on Linux; see [`SiteRef`](crate::SiteRef)).
    /// Otherwise `MPI_T_ERR_INVALID_NAME`, whose reason names the variable
    /// and says why: no such name, the name registered in another class,
    /// or a use site that registers it in [`global`](crate::global) while
    /// this is another registry.
    ///
    /// ```
    /// use pvar::PvarClass;
    ///
    /// fn on_send(bytes: u64) {
    ///     pvar::counter!("doc_lookup_sent", description = "messages sent").inc();
    ///     pvar::aggregate!("doc_lookup_bytes").add(bytes);
    /// }
    ///
    /// // A tool looks the component's variables up before any message is sent.
    /// let reg = pvar::global();
    /// # if cfg!(target_os = "linux") {
    /// let sent = reg.pvars().index("doc_lookup_sent", PvarClass::Counter)?;
    /// let session = reg.session()?;
    /// let h = session.handle(sent)?.typed::<u64>()?;
    /// h.start()?;
    /// on_send(64);
    /// assert_eq!(h.read()?, 1);
    /// # }
    /// // A wrong guess of the class: the error names the variable and the class it has.
    /// let e = reg.pvars().index("doc_lookup_bytes", PvarClass::Counter).unwrap_err();
    /// assert_eq!(e.code(), pvar::ErrorCode::InvalidName);
    /// # if cfg!(target_os = "linux") {
    /// assert!(e.to_string().contains(r#""doc_lookup_bytes" has class AGGREGATE"#), "{e}");
    /// # }
    /// # Ok::<(), pvar::Error>(())
    /// ```
    pub fn index(&self, name: &str, class: PvarClass) -> Result<usize> {
        match self.vars.index(&(name.to_string(), class)) {
            Some(index) => Ok(index),
            None => super::declared::register_declared(
                (self as *const Pvars).cast(),
                |c| self.is_registered(name, c),
                name,
                class,
            ),
        }
    }

    /// Whether a variable `name` of `class` is registered (without
    /// registering a declared use site).
    pub(crate) fn is_registered(&self, name: &str, class: PvarClass) -> bool {
        self.vars.index(&(name.to_string(), class)).is_some()
    }

    /// Names `object` (a handle value of kind `bind`) for readers outside
    /// the tool interface: a [`Snapshot`](crate::export::Snapshot) carries
    /// the name with each instance bound to the object, and `pvar read` /
    /// `pvar top` show `comm MPI_COMM_WORLD` instead of `comm 0x…`. MPI_T
    /// itself has no such name (a tool names objects by their handles).
    ///
    /// The component that knows its objects names them, and forgets the
    /// name ([`forget_object_label`](Self::forget_object_label)) when the
    /// object goes away, before its handle value can be reused: the MPI
    /// interposer names its communicators (`MPI_COMM_WORLD`, `comm[0-3]`)
    /// this way. Naming an object again replaces its name.
    ///
    /// ```
    /// use pvar::BindKind;
    /// let reg = pvar::Registry::new();
    /// reg.pvars().label_object(BindKind::Comm, 0x101, "MPI_COMM_WORLD");
    /// assert_eq!(reg.pvars().object_label(BindKind::Comm, 0x101).as_deref(), Some("MPI_COMM_WORLD"));
    /// reg.pvars().forget_object_label(BindKind::Comm, 0x101);
    /// assert_eq!(reg.pvars().object_label(BindKind::Comm, 0x101), None);
    /// ```
    ///
    /// Not async-signal-safe (a mutex, an allocation).
    pub fn label_object(&self, bind: BindKind, object: u64, label: &str) {
        self.with_labels(|l| l.insert((bind, object), SharedText::from(label)));
    }

    /// Forgets the name of `object` (nothing if it has none). Not
    /// async-signal-safe.
    pub fn forget_object_label(&self, bind: BindKind, object: u64) {
        self.with_labels(|l| l.remove(&(bind, object)));
    }

    /// The name given to `object`, if any. Not async-signal-safe.
    pub fn object_label(&self, bind: BindKind, object: u64) -> Option<String> {
        self.with_labels(|l| l.get(&(bind, object)).map(|n| n.to_string()))
    }

    fn with_labels<R>(
        &self,
        f: impl FnOnce(&mut HashMap<(BindKind, u64), SharedText<str>>) -> R,
    ) -> R {
        // A panic while holding the lock leaves a usable map.
        f(&mut self.labels.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Deactivates variable `index` (its component was unloaded): the index
    /// and metadata stay; value access through handles fails with
    /// `MPI_T_ERR_INVALID_INDEX`. Registering it again reactivates it.
    pub fn deactivate(&self, index: usize) -> Result<()> {
        if self.vars.set_active(index, false) {
            Ok(())
        } else {
            Err(Error::no_such_index())
        }
    }

    /// The objects that currently have an instance of bound variable
    /// `index`, sorted (none for an unbound variable).
    pub fn instances(&self, index: usize) -> Result<Vec<u64>> {
        match &self.variable(index)?.body {
            Body::Bound { instances, .. } => Ok(instances.objects()),
            Body::Unbound(_) => Ok(Vec::new()),
        }
    }

    /// The storage a tool handle on variable `index` reads, bound to
    /// `object` for a bound variable; `MPI_T_ERR_INVALID_INDEX` if the
    /// variable is inactive. A callback variable hears `Bind` here (see
    /// `Variable::resolve`).
    pub(crate) fn resolve(&self, index: usize, object: Option<ObjectRef>) -> Result<Arc<Storage>> {
        let var = self.variable(index)?;
        let active = self.active_flag(index)?;
        if !active.load(Ordering::Acquire) {
            return Err(Error::inactive());
        }
        var.resolve(&self.hot, active, object)
    }

    /// Registers a variable (or returns the existing one with the same
    /// name, class and metadata, reactivated). Used by the typed builders.
    pub(crate) fn register(
        &self,
        info: PvarInfo,
        callbacks: Option<Callbacks>,
    ) -> Result<(usize, &Variable)> {
        info.validate(callbacks.is_some()).map_err(Error::refused)?;
        let key = (info.name.clone(), info.class);
        let with_callbacks = callbacks.is_some();
        let category = info.category.clone();
        let same = |index: usize, var: &Variable| {
            let diff = var.info.differences(&info);
            if diff.is_empty() && var.callbacks().is_some() == with_callbacks {
                return Ok(());
            }
            Err(Error::refused(format!(
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
            )))
        };
        let make = |active: &ActiveFlag| {
            // Enumeration names are unique across the registry (pvars and
            // cvars): a different enumeration under a taken name is refused.
            if let Some(e) = &info.enumeration {
                self.enums.register(e).map_err(|err| {
                    Error::refused(format!(
                        "pvar '{}' ({}): {}",
                        info.name,
                        info.class.c_name(),
                        err.reason().unwrap_or_default()
                    ))
                })?;
            }
            let callbacks = callbacks.map(Arc::new);
            let body = if info.bind == BindKind::NoObject {
                let ElementCount::Fixed(count) = info.count else {
                    unreachable!("validated: a per-object count needs binding")
                };
                let storage = Storage::new(
                    &self.hot,
                    info.class,
                    info.datatype,
                    count,
                    callbacks.map(|c| (c, None)),
                    active,
                )
                .map_err(|e| Error::refused(format!("pvar '{}': {e}", info.name)))?;
                Body::Unbound(Arc::new(storage))
            } else {
                Body::Bound {
                    instances: Instances::default(),
                    callbacks,
                }
            };
            Ok(Variable {
                info: info.clone(),
                body,
            })
        };
        let registered = self.vars.register(key, same, make)?;
        if let (Registered::New(index, _), Some(cat)) = (&registered, category) {
            self.categories.attach_pvar(&cat, *index);
        }
        Ok(registered.into_parts())
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
            return Err(Error::invalid("the variable is not bound to objects"));
        };
        if callbacks.is_some() {
            return Err(Error::invalid("callback variables compute their instances"));
        }
        if let ElementCount::Fixed(n) = var.info.count
            && n != count
        {
            return Err(Error::invalid(
                "count differs from the variable's fixed count",
            ));
        }
        if count == 0 {
            return Err(Error::invalid("an instance needs at least one element"));
        }
        let exists = || Error::invalid("an instance for this object exists already");
        if instances.get(object).is_some() {
            return Err(exists());
        }
        let active = self.active_flag(index)?;
        let storage = Arc::new(
            Storage::new(
                &self.hot,
                var.info.class,
                var.info.datatype,
                count,
                None,
                active,
            )
            .map_err(|_| Error::Memory)?,
        );
        if !instances.insert_new(object, storage.clone()) {
            return Err(exists());
        }
        Ok(storage)
    }

    /// The storage of bound variable `index`'s instance for `object`
    /// (not of a callback variable, which computes its instances).
    pub(crate) fn instance(&self, index: usize, object: u64) -> Result<Arc<Storage>> {
        let Body::Bound { instances, .. } = &self.variable(index)?.body else {
            return Err(Error::invalid("the variable is not bound to objects"));
        };
        instances
            .get(object)
            .ok_or_else(|| Error::invalid("no instance for this object"))
    }

    /// Drops the instance of bound variable `index` for `object`: handles
    /// bound to it then fail with `MPI_T_ERR_INVALID_INDEX`.
    pub(crate) fn drop_instance(&self, index: usize, object: u64) -> Result<()> {
        let var = self.variable(index)?;
        let Body::Bound { instances, .. } = &var.body else {
            return Err(Error::invalid("the variable is not bound to objects"));
        };
        let removed = instances
            .remove(object)
            .ok_or(Error::invalid("no instance for this object"))?;
        removed.live.store(false, Ordering::Release);
        Ok(())
    }

    /// Allocates, for the calling thread, the cells of every variable
    /// registered so far, so that later updates from this thread, including
    /// from a signal handler, never allocate.
    pub fn prepare_thread(&self) {
        self.hot.cells.prepare_thread();
    }

    /// Number of per-thread records in this registry's cell space (threads
    /// that ever updated a summed variable; exited threads' records are
    /// reused by new threads).
    pub fn thread_records(&self) -> usize {
        self.hot.cells.thread_records()
    }

    /// Bytes of per-thread cell memory allocated so far.
    pub fn cell_bytes(&self) -> usize {
        self.hot.cells.allocated_bytes()
    }
}
