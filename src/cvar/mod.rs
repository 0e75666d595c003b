//! Control variables (MPI 4.1 §15.3.6): typed settings with defaults,
//! scopes, binding, verbosity and enumerations, overridable from the
//! environment, declared next to the code that uses them, cheap to read on
//! a hot path, and written by tools with the `SET_NOT_NOW` / `SET_NEVER`
//! rules.
//!
//! - Declare one where it is used with the [`cvar!`](crate::cvar!) macro
//!   (a lazily registered `static` in [`global`](crate::global)), or with
//!   [`Registry::cvar`](crate::Registry::cvar) on any registry.
//! - Read it with [`Cvar::get`] / [`StaticCvar::get`]: one relaxed atomic
//!   load for numbers; a lock-free, allocation-free lookup for strings
//!   (every distinct string value stays allocated until the variable is
//!   dropped, so a reader never sees a freed string; see
//!   `docs/component-guide.md`).
//! - The component may [`freeze`](Cvar::freeze) a variable (tools then get
//!   `MPI_T_ERR_CVAR_SET_NOT_NOW`) and unfreeze it later. Variables of scope
//!   `CONSTANT` or `READONLY` refuse every tool write with
//!   `MPI_T_ERR_CVAR_SET_NEVER`; the component can still [`Cvar::set`]
//!   a `READONLY` one.
//! - Tools use [`Registry::num_cvars`](crate::Registry::num_cvars), [`Registry::cvar_info`](crate::Registry::cvar_info),
//!   [`Registry::cvar_index`](crate::Registry::cvar_index), and handles: [`Registry::cvar_handle_alloc`](crate::Registry::cvar_handle_alloc),
//!   [`Registry::cvar_read`](crate::Registry::cvar_read), [`Registry::cvar_write`](crate::Registry::cvar_write),
//!   [`Registry::cvar_handle_free`](crate::Registry::cvar_handle_free).
//!
//! Signal safety: numeric reads through a component handle are a single
//! atomic load; string reads take no lock and allocate nothing. The
//! tool-side handle operations take a mutex and are **not**
//! async-signal-safe (the standard's signal advice concerns performance
//! variables).

mod builder;
mod decl;
mod env;
mod handle;
mod types;
mod value;

use std::collections::HashMap;

use crate::enums::Enumeration;
use crate::error::{Error, ErrorCode, Result};
use crate::kinds::{BindKind, Datatype, Scope, Verbosity};
use crate::sync::append_vec::AppendVec;
use crate::sync::{Arc, AtomicBool, Mutex, Ordering};

pub use builder::{BoundCvar, Cvar, CvarBuilder};
pub use decl::{CvarDecl, StaticCvar};
pub use handle::CvarHandle;
pub use types::{CvarType, CvarValue, NumericCvar};

use types::sealed::{Init, Kind};
use value::CvarCell;

/// A `u64` control variable handle (`MPI_UNSIGNED_LONG_LONG`).
pub type CvarU64 = Cvar<u64>;
/// An `f64` control variable handle (`MPI_DOUBLE`).
pub type CvarF64 = Cvar<f64>;
/// An `i32` control variable handle (`MPI_INT`).
pub type CvarInt = Cvar<i32>;
/// A `bool` control variable handle (`MPI_INT`, 0 or 1).
pub type CvarBool = Cvar<bool>;
/// A string control variable handle (`MPI_CHAR`).
pub type CvarString = Cvar<String>;

/// Everything the standard lets a tool query about a control variable
/// (`MPI_T_cvar_get_info`), plus its category and environment names.
/// Immutable once registered.
#[derive(Debug, Clone, PartialEq)]
pub struct CvarInfo {
    /// Unique among control variables.
    pub name: String,
    /// The datatype a tool reads and writes.
    pub datatype: Datatype,
    /// Intended audience and detail.
    pub verbosity: Verbosity,
    /// Optional enumeration (only with `MPI_INT`); its `MPI_T_enum` index
    /// comes from [`Registry::enum_index`](crate::Registry::enum_index).
    pub enumeration: Option<Enumeration>,
    /// Free text; should say what the scope requires of writers.
    pub description: String,
    /// Kind of object a handle must be bound to.
    pub bind: BindKind,
    /// Where and when the variable may be changed.
    pub scope: Scope,
    /// Name of the category the variable belongs to, if any.
    pub category: Option<String>,
    /// Environment variables that override the default, in ascending
    /// priority (the last one set wins).
    pub env: Vec<String>,
}

/// What backs a control variable's value.
pub(crate) enum CvarBody {
    /// One value for the process.
    Unbound(Arc<CvarCell>),
    /// One value per object instance, keyed by the object's handle value.
    Bound(Mutex<HashMap<u64, Arc<CvarCell>>>),
}

/// A registered control variable.
pub(crate) struct CvarVar {
    pub(crate) info: CvarInfo,
    pub(crate) kind: Kind,
    /// Element count a handle reports: 1 for numbers, the capacity
    /// (including the NUL) for strings.
    pub(crate) count: usize,
    /// The default as declared.
    pub(crate) declared: Init,
    /// The starting value after environment overrides (also the value new
    /// bound instances start with).
    pub(crate) start: Init,
    /// The environment variable the start value came from.
    pub(crate) source: Option<String>,
    /// Variable-wide freeze (for bound variables; unbound ones use their
    /// cell's flag).
    pub(crate) frozen: AtomicBool,
    pub(crate) active: AtomicBool,
    pub(crate) body: CvarBody,
}

impl CvarVar {
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }
}

/// The control variables of one registry.
pub(crate) struct CvarTable {
    pub(crate) vars: AppendVec<CvarVar>,
    names: Mutex<HashMap<String, usize>>,
    handles: Mutex<handle::Slab>,
    warnings: Mutex<Vec<String>>,
}

impl CvarTable {
    pub(crate) fn new() -> Self {
        Self {
            vars: AppendVec::new(),
            names: Mutex::new(HashMap::new()),
            handles: Mutex::new(handle::Slab::default()),
            warnings: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn var(&self, index: usize) -> Result<&CvarVar> {
        self.vars
            .get(index)
            .ok_or(Error::Code(ErrorCode::InvalidIndex))
    }
}

/// Tool-side queries (`MPI_T_cvar_get_num / get_info / get_index`).
impl crate::Registry {
    /// Number of control variables (`MPI_T_cvar_get_num`). Lock-free.
    pub fn num_cvars(&self) -> usize {
        self.inner.cvars.vars.len()
    }

    /// Metadata of control variable `index` (`MPI_T_cvar_get_info`);
    /// `MPI_T_ERR_INVALID_INDEX` when out of range. Lock-free.
    pub fn cvar_info(&self, index: usize) -> Result<&CvarInfo> {
        self.inner.cvars.var(index).map(|v| &v.info)
    }

    /// Index of the control variable named `name`
    /// (`MPI_T_cvar_get_index`); `MPI_T_ERR_INVALID_NAME` if none.
    pub fn cvar_index(&self, name: &str) -> Result<usize> {
        self.inner
            .cvars
            .names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
            .ok_or(Error::Code(ErrorCode::InvalidName))
    }

    /// The environment variable whose value control variable `index`
    /// started with, or `None` if it started with its declared default.
    pub fn cvar_env_source(&self, index: usize) -> Result<Option<&str>> {
        self.inner.cvars.var(index).map(|v| v.source.as_deref())
    }

    /// Whether control variable `index` is active.
    pub fn cvar_is_active(&self, index: usize) -> Result<bool> {
        self.inner.cvars.var(index).map(CvarVar::is_active)
    }

    /// Deactivates control variable `index` (its component was unloaded):
    /// the index and metadata stay; handle allocation, reads and writes
    /// fail with [`Error::Inactive`]. Registering it again reactivates it.
    pub fn deactivate_cvar(&self, index: usize) -> Result<()> {
        self.inner
            .cvars
            .var(index)?
            .active
            .store(false, Ordering::Release);
        Ok(())
    }

    /// Every message about a malformed environment value seen so far by
    /// this registry (each was also printed to standard error).
    pub fn cvar_warnings(&self) -> Vec<String> {
        self.inner
            .cvars
            .warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Registers a control variable, or returns the existing one if one
    /// with the same name and identical metadata exists.
    pub(crate) fn register_cvar(
        &self,
        info: CvarInfo,
        kind: Kind,
        declared: Init,
        capacity: usize,
    ) -> Result<usize> {
        let who = format!("cvar '{}'", info.name);
        if info.name.is_empty() || info.name.contains('\0') {
            return Err(Error::Registration(format!(
                "{who}: the name must be non-empty and free of NUL"
            )));
        }
        if let Some(e) = &info.enumeration {
            if kind != Kind::I32 {
                return Err(Error::Registration(format!(
                    "{who}: an enumeration requires an i32 (MPI_INT) variable"
                )));
            }
            if let Init::Bits(b) = declared
                && !e.contains_value(b as i64 as i32)
            {
                return Err(Error::Registration(format!(
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
            return Err(Error::Registration(format!(
                "{who}: {bad:?} is not a valid environment variable name"
            )));
        }
        let count = if kind == Kind::Str {
            let Init::Text(d) = &declared else {
                unreachable!("string default")
            };
            if d.contains('\0') {
                return Err(Error::Registration(format!(
                    "{who}: the default must not contain NUL"
                )));
            }
            if capacity < d.len() + 1 {
                return Err(Error::Registration(format!(
                    "{who}: capacity {capacity} cannot hold the default ({} bytes + NUL)",
                    d.len()
                )));
            }
            capacity
        } else {
            1
        };
        let mut names = self
            .inner
            .cvars
            .names
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(&index) = names.get(&info.name) {
            let var = self.inner.cvars.var(index)?;
            if var.info != info
                || var.kind != kind
                || var.count != count
                || var.declared != declared
            {
                return Err(Error::Registration(format!(
                    "{who} is already registered at index {index} with different metadata; \
                     registered: {:?} (default {}), new: {:?} (default {})",
                    var.info,
                    var.kind.show(&var.declared),
                    info,
                    kind.show(&declared)
                )));
            }
            var.active.store(true, Ordering::Release);
            return Ok(index);
        }
        if let Some(e) = &info.enumeration {
            self.inner.enums.index_of(e, true)?;
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
            let mut w = self
                .inner
                .cvars
                .warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for msg in resolved.warnings {
                eprintln!("{msg}");
                w.push(msg);
            }
        }
        let body = if info.bind == BindKind::NoObject {
            CvarBody::Unbound(Arc::new(CvarCell::new(&resolved.value, count)))
        } else {
            CvarBody::Bound(Mutex::new(HashMap::new()))
        };
        let category = info.category.clone();
        let name = info.name.clone();
        let index = self.inner.cvars.vars.push(CvarVar {
            info,
            kind,
            count,
            declared,
            start: resolved.value,
            source: resolved.source,
            frozen: AtomicBool::new(false),
            active: AtomicBool::new(true),
            body,
        });
        names.insert(name, index);
        drop(names);
        if let Some(cat) = category {
            self.inner.categories.attach_cvar(&cat, index);
        }
        Ok(index)
    }
}

/// Runs the examples of `docs/component-guide.md` as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/component-guide.md")]
pub struct ComponentGuide;
