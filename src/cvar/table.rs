//! The control variables of a registry: registration, the metadata
//! queries, and the tool-side handle operations.

use super::env;
use super::handle::{CvarHandle, Target, convert, decode, encode};
use super::types::CvarValue;
use super::types::sealed::{Init, ValueKind};
use super::value::CvarCell;
use super::var::{CvarBody, CvarVar};
use crate::category::Categories;
use crate::lockfree::slot_table::SlotTable;
use crate::lockfree::var_table::{Instances, Registered, VarTable};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering};
use crate::vocabulary::CvarInfo;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::enumeration::Enumerations;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{BindKind, ObjectRef};

/// The control variables of a registry (`MPI_T_cvar_get_num`,
/// `_get_info`, `_get_index`, and the handles `_handle_alloc`, `_read`,
/// `_write`, `_handle_free`), from [`Registry::cvars`](crate::Registry::cvars).
///
/// ```
/// use pvar::Registry;
/// let reg = Registry::new();
/// let eager = reg.cvar::<u64>("eager_limit").default(65536).register()?;
/// let cvars = reg.cvars();
/// let index = cvars.index("eager_limit")?;
/// let (h, count) = cvars.handle_alloc(index, None)?;
/// assert_eq!(count, 1);
/// cvars.write(h, &4096u64.to_ne_bytes())?;
/// assert_eq!(eager.get(), 4096);
/// cvars.handle_free(h)?;
/// # Ok::<(), pvar::Error>(())
/// ```
pub struct Cvars {
    vars: VarTable<String, CvarVar>,
    handles: SlotTable<Target>,
    warnings: Mutex<Vec<String>>,
    categories: Arc<Categories>,
    enums: Arc<Enumerations>,
}

impl std::fmt::Debug for Cvars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cvars")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Cvars {
    pub(crate) fn new(categories: Arc<Categories>, enums: Arc<Enumerations>) -> Self {
        Self {
            vars: VarTable::new(),
            handles: SlotTable::new(),
            warnings: Mutex::new(Vec::new()),
            categories,
            enums,
        }
    }

    pub(crate) fn var(&self, index: usize) -> Result<&CvarVar> {
        self.vars.get(index).ok_or(Error::no_such_index())
    }

    /// Number of control variables (`MPI_T_cvar_get_num`). Lock-free.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether no control variable is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Metadata of control variable `index` (`MPI_T_cvar_get_info`);
    /// `MPI_T_ERR_INVALID_INDEX` when out of range. Lock-free.
    pub fn info(&self, index: usize) -> Result<&CvarInfo> {
        self.var(index).map(|v| &v.info)
    }

    /// Index of the control variable named `name`
    /// (`MPI_T_cvar_get_index`); `MPI_T_ERR_INVALID_NAME` if none.
    pub fn index(&self, name: &str) -> Result<usize> {
        self.vars.index(name).ok_or_else(|| {
            Error::no_such_name(format!(
                "no control variable named {name:?} in this registry (a `cvar!` static \
                 registers itself in pvar::global() when first read or `.register()`ed)"
            ))
        })
    }

    /// The environment variable whose value control variable `index`
    /// started with, or `None` if it started with its declared default.
    pub fn env_source(&self, index: usize) -> Result<Option<&str>> {
        self.var(index).map(|v| v.source.as_deref())
    }

    /// Whether control variable `index` is active.
    pub fn is_active(&self, index: usize) -> Result<bool> {
        self.vars.is_active(index).ok_or(Error::no_such_index())
    }

    /// Deactivates control variable `index` (its component was unloaded):
    /// the index and metadata stay; handle allocation, reads and writes
    /// fail with `MPI_T_ERR_INVALID_INDEX`. Registering it again
    /// reactivates it.
    pub fn deactivate(&self, index: usize) -> Result<()> {
        if self.vars.set_active(index, false) {
            Ok(())
        } else {
            Err(Error::no_such_index())
        }
    }

    /// Every message about a malformed environment value seen so far by
    /// this registry (each was also printed to standard error).
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().clone()
    }

    /// Registers a control variable, or returns the existing one if one
    /// with the same name and identical metadata exists.
    pub(crate) fn register(
        &self,
        info: CvarInfo,
        kind: ValueKind,
        declared: Init,
        capacity: usize,
    ) -> Result<usize> {
        let who = format!("cvar '{}'", info.name);
        if info.name.is_empty() || info.name.contains('\0') {
            return Err(Error::refused(format!(
                "{who}: the name must be non-empty and free of NUL"
            )));
        }
        if let Some(e) = &info.enumeration {
            if kind != ValueKind::I32 {
                return Err(Error::refused(format!(
                    "{who}: an enumeration requires an i32 (MPI_INT) variable"
                )));
            }
            if let Init::Bits(b) = declared
                && !e.contains_value(b as i64 as i32)
            {
                return Err(Error::refused(format!(
                    "{who}: the default {} is not a value of enumeration '{}'",
                    b as i64 as i32,
                    e.name()
                )));
            }
        }
        if let Some(bad) = info
            .env
            .iter()
            .find(|n| n.is_empty() || n.contains(['=', '\0']))
        {
            return Err(Error::refused(format!(
                "{who}: {bad:?} is not a valid environment variable name"
            )));
        }
        let count = if kind == ValueKind::Str {
            let Init::Text(d) = &declared else {
                unreachable!("string default")
            };
            if d.contains('\0') {
                return Err(Error::refused(format!(
                    "{who}: the default must not contain NUL"
                )));
            }
            if capacity < d.len() + 1 {
                return Err(Error::refused(format!(
                    "{who}: capacity {capacity} cannot hold the default ({} bytes + NUL)",
                    d.len()
                )));
            }
            capacity
        } else {
            1
        };
        let category = info.category.clone();
        let same = |index: usize, var: &CvarVar| {
            if var.info == info
                && var.kind == kind
                && var.count == count
                && var.declared == declared
            {
                return Ok(());
            }
            Err(Error::refused(format!(
                "{who} is already registered at index {index} with different metadata; \
                 registered: {:?} (default {}), new: {:?} (default {})",
                var.info,
                var.kind.show(&var.declared),
                info,
                kind.show(&declared)
            )))
        };
        let make = |_: &_| {
            if let Some(e) = &info.enumeration {
                self.enums.register(e).map_err(|err| {
                    Error::refused(format!("{who}: {}", err.reason().unwrap_or_default()))
                })?;
            }
            let resolved = env::resolve(
                &info.name,
                kind,
                declared.clone(),
                &info.env,
                info.enumeration.as_ref(),
                count,
                |n| std::env::var_os(n),
            );
            if !resolved.warnings.is_empty() {
                let mut w = self.warnings.lock();
                for msg in resolved.warnings {
                    eprintln!("{msg}");
                    w.push(msg);
                }
            }
            let body = if info.bind == BindKind::NoObject {
                CvarBody::Unbound(Arc::new(CvarCell::new(&resolved.value, count)))
            } else {
                CvarBody::Bound(Instances::default())
            };
            Ok(CvarVar {
                info: info.clone(),
                kind,
                count,
                declared: declared.clone(),
                start: resolved.value,
                source: resolved.source,
                frozen: AtomicBool::new(false),
                body,
            })
        };
        let registered = self.vars.register(info.name.clone(), same, make)?;
        if let (Registered::New(index, _), Some(cat)) = (&registered, category) {
            self.categories.attach_cvar(&cat, *index);
        }
        Ok(registered.index())
    }
}

/// Tool-side handle operations.
impl Cvars {
    fn target(&self, h: CvarHandle) -> Result<(&CvarVar, Arc<CvarCell>)> {
        let (var, cell) = self
            .handles
            .get(h.to_raw())
            .map(|t| (t.var, t.cell.clone()))
            .ok_or(Error::InvalidHandle)?;
        let active = self.is_active(var)?;
        let var = self.var(var)?;
        if !active || !cell.live.load(Ordering::Acquire) {
            return Err(Error::inactive());
        }
        Ok((var, cell))
    }

    /// `MPI_T_cvar_handle_alloc`: a handle to control variable `index`,
    /// bound to `object` if the variable is bound (ignored otherwise), and
    /// the element count (1 for numbers; for strings the capacity including
    /// the NUL).
    ///
    /// Errors: `INVALID_INDEX` (no such variable, or inactive); `INVALID`
    /// (missing object, wrong kind, or no value for that object);
    /// `OUT_OF_HANDLES`.
    pub fn handle_alloc(
        &self,
        index: usize,
        object: Option<ObjectRef>,
    ) -> Result<(CvarHandle, usize)> {
        let var = self.var(index)?;
        if !self.is_active(index)? {
            return Err(Error::inactive());
        }
        let cell = match &var.body {
            CvarBody::Unbound(cell) => cell.clone(),
            CvarBody::Bound(map) => {
                let object = object.ok_or(Error::invalid(
                    "a bound variable needs an object of its bind kind",
                ))?;
                if object.kind != var.info.bind || object.kind == BindKind::NoObject {
                    return Err(Error::invalid(
                        "the object's kind differs from the variable's bind kind",
                    ));
                }
                map.get(object.handle)
                    .ok_or(Error::invalid("no value of the variable for this object"))?
            }
        };
        let count = cell.count;
        // Targets that a reader inside left behind at their free: dropped.
        while self.handles.reclaim().is_some() {}
        let key = self
            .handles
            .try_alloc(Target { var: index, cell })
            .map_err(|_| Error::OutOfHandles)?;
        let h = CvarHandle::from_raw(key).expect("keys are never 0");
        Ok((h, count))
    }

    /// `MPI_T_cvar_handle_free`; `INVALID_HANDLE` if `h` is not live.
    /// Never waits for a read or write of the handle running on another
    /// thread: the last of them to finish leaves the handle's target for
    /// the next allocation to drop.
    pub fn handle_free(&self, h: CvarHandle) -> Result<()> {
        self.handles
            .free(h.to_raw(), |_| ())
            .map(drop)
            .ok_or(Error::InvalidHandle)
    }

    /// What a live handle refers to: the variable's index, its datatype and
    /// the element count returned at allocation (so the C layer can size
    /// `MPI_T_cvar_read/write` buffers without a table of its own);
    /// `INVALID_HANDLE` if `h` is not live.
    pub fn handle_info(&self, h: CvarHandle) -> Result<(usize, Datatype, usize)> {
        let (var, count) = self
            .handles
            .get(h.to_raw())
            .map(|t| (t.var, t.cell.count))
            .ok_or(Error::InvalidHandle)?;
        Ok((var, self.var(var)?.info.datatype, count))
    }

    /// Number of control variable handles currently allocated.
    pub fn handles_in_use(&self) -> usize {
        self.handles.in_use()
    }

    /// `MPI_T_cvar_read`: writes the value into `buf` in the C layout of
    /// the variable's datatype (native-endian `int`, `unsigned`, …; for
    /// `MPI_CHAR` the bytes and a NUL). `INVALID` if `buf` is too small.
    pub fn read(&self, h: CvarHandle, buf: &mut [u8]) -> Result<()> {
        let (var, cell) = self.target(h)?;
        encode(var, &cell, buf)
    }

    /// The value behind `h`, typed.
    pub fn read_value(&self, h: CvarHandle) -> Result<CvarValue> {
        let (var, cell) = self.target(h)?;
        Ok(match cell.load() {
            Init::Text(s) => CvarValue::Text(s),
            Init::Bits(b) => var.kind.value(b),
        })
    }

    fn store(
        &self,
        h: CvarHandle,
        value: impl FnOnce(&CvarVar) -> Result<CvarValue>,
    ) -> Result<()> {
        let (var, cell) = self.target(h)?;
        if var.info.scope.is_read_only() {
            return Err(Error::CvarSetNever);
        }
        if var.frozen.load(Ordering::Acquire) || cell.is_frozen() {
            return Err(Error::CvarSetNotNow);
        }
        let init = convert(var, &value(var)?)?;
        cell.store(&init);
        Ok(())
    }

    /// `MPI_T_cvar_write`: reads the new value from `buf` in the C layout
    /// (for `MPI_CHAR`, up to the first NUL or the end of `buf`).
    ///
    /// Errors: `CVAR_SET_NEVER` for `CONSTANT` / `READONLY` scopes;
    /// `CVAR_SET_NOT_NOW` while the component has frozen the variable;
    /// `INVALID` for a short buffer, an out-of-range or non-item value, or
    /// a string longer than the count.
    pub fn write(&self, h: CvarHandle, buf: &[u8]) -> Result<()> {
        self.store(h, |var| decode(var, buf))
    }

    /// [`Cvars::write`] with a typed value.
    pub fn write_value(&self, h: CvarHandle, value: &CvarValue) -> Result<()> {
        self.store(h, |_| Ok(value.clone()))
    }
}
