//! Registering control variables on a registry, and the component-side
//! handles.

use std::marker::PhantomData;

use super::table::Cvars;
use super::types::sealed::{Init, Sealed, ValueKind};
use super::types::{CvarType, NumericCvar};
use super::value::{CvarCell, normalise};
use super::var::{CvarBody, CvarVar};
use crate::sync::{Arc, Ordering};
use crate::vocabulary::CvarInfo;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::enumeration::Enumeration;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{BindKind, Scope, Verbosity};

/// Default capacity of a string variable (bytes, including the NUL) when
/// [`CvarBuilder::capacity`] is not given: 256, or the default's length + 1
/// if larger.
pub const DEFAULT_STRING_CAPACITY: usize = 256;

/// Describes a control variable before registering it; from
/// [`Registry::cvar`](crate::Registry::cvar).
///
/// ```
/// use pvar::{Registry, Scope, Verbosity};
/// let reg = Registry::new();
/// let eager = reg
///     .cvar::<u64>("eager_limit")
///     .default(65536)
///     .description("messages up to this size are sent eagerly; set on all processes")
///     .category("comm")
///     .verbosity(Verbosity::TunerBasic)
///     .scope(Scope::AllEq)
///     .env(["MYLIB_EAGER_LIMIT"])
///     .register()
///     .unwrap();
/// assert_eq!(eager.get(), 65536);
/// ```
#[must_use = "a builder does nothing until `register` is called"]
pub struct CvarBuilder<'r, T: CvarType> {
    cvars: &'r Arc<Cvars>,
    info: CvarInfo,
    default: Option<Init>,
    capacity: Option<usize>,
    _t: PhantomData<fn() -> T>,
}

impl<'r, T: CvarType> CvarBuilder<'r, T> {
    /// Starts describing a control variable of type `T` named `name`
    /// (defaults: value `0` / `false` / `""`, `USER_BASIC`, scope `LOCAL`,
    /// unbound, no category, no environment override).
    pub(crate) fn new(cvars: &'r Arc<Cvars>, name: &str) -> Self {
        CvarBuilder {
            cvars,
            info: CvarInfo {
                name: name.to_string(),
                datatype: T::DATATYPE,
                verbosity: Verbosity::UserBasic,
                enumeration: None,
                description: String::new(),
                bind: BindKind::NoObject,
                scope: Scope::Local,
                category: None,
                env: Vec::new(),
            },
            default: None,
            capacity: None,
            _t: PhantomData,
        }
    }

    crate::vocabulary::common_builder_setters!();

    /// The default value (overridden by the environment, see
    /// [`CvarBuilder::env`]).
    pub fn default(mut self, value: <T as Sealed>::Arg<'_>) -> Self {
        self.default = Some(T::arg_init(value));
        self
    }

    pub(crate) fn default_init(mut self, init: Init) -> Self {
        self.default = Some(init);
        self
    }

    /// Scope (default `LOCAL`). `CONSTANT` and `READONLY` variables refuse
    /// tool writes with `MPI_T_ERR_CVAR_SET_NEVER`.
    pub fn scope(mut self, s: Scope) -> Self {
        self.info.scope = s;
        self
    }

    /// Environment variables overriding the default, in **ascending**
    /// priority: the last one that is set (and well-formed) wins.
    pub fn env<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.info.env = names.into_iter().map(Into::into).collect();
        self
    }

    /// The MPICH convention for a variable named `MPIR_CVAR_X`: reads
    /// `MPICH_X`, `MPIR_PARAM_X` and `MPIR_CVAR_X`, the last winning.
    /// `suffix` is `X`.
    pub fn env_mpich(self, suffix: &str) -> Self {
        self.env([
            format!("MPICH_{suffix}"),
            format!("MPIR_PARAM_{suffix}"),
            format!("MPIR_CVAR_{suffix}"),
        ])
    }

    /// An enumeration naming the values (`i32` variables only; the default
    /// and every written value must be one of its items' values).
    pub fn enumeration(mut self, e: Enumeration) -> Self {
        self.info.enumeration = Some(e);
        self
    }

    /// Overrides the datatype: only `MPI_UNSIGNED_LONG` for a `u64`
    /// variable, where `unsigned long` has 64 bits.
    pub fn datatype(mut self, d: Datatype) -> Self {
        self.info.datatype = d;
        self
    }

    /// Capacity of a string variable in bytes including the NUL: the
    /// element count a handle reports. Longer writes are refused.
    pub fn capacity(mut self, bytes: usize) -> Self {
        self.capacity = Some(bytes);
        self
    }

    /// The metadata as it stands.
    pub fn info(&self) -> &CvarInfo {
        &self.info
    }

    fn register_index(self) -> Result<(&'r Arc<Cvars>, usize)> {
        let who = format!("cvar '{}'", self.info.name);
        if self.info.datatype != T::DATATYPE
            && !(T::KIND == ValueKind::U64
                && self.info.datatype == Datatype::UnsignedLong
                && Datatype::UnsignedLong.size() == 8)
        {
            return Err(Error::refused(format!(
                "{who}: datatype {} does not fit the Rust type (expected {})",
                self.info.datatype.c_name(),
                T::DATATYPE.c_name()
            )));
        }
        let declared = normalise(
            T::KIND,
            self.default.unwrap_or(match T::KIND {
                ValueKind::Str => Init::Text(String::new()),
                _ => Init::Bits(0),
            }),
        );
        let capacity = self.capacity.unwrap_or(match &declared {
            Init::Text(s) => DEFAULT_STRING_CAPACITY.max(s.len() + 1),
            Init::Bits(_) => 1,
        });
        let index = self
            .cvars
            .register(self.info, T::KIND, declared, capacity)?;
        Ok((self.cvars, index))
    }

    /// Registers an unbound variable and returns its handle. Registering
    /// the same name with identical metadata again returns a handle to the
    /// existing variable (and reactivates it).
    pub fn register(self) -> Result<Cvar<T>> {
        if self.info.bind != BindKind::NoObject {
            return Err(Error::refused(format!(
                "cvar '{}' is bound to {}: use register_bound()",
                self.info.name,
                self.info.bind.c_name()
            )));
        }
        let (cvars, index) = self.register_index()?;
        let var = cvars.var(index)?;
        let CvarBody::Unbound(cell) = &var.body else {
            unreachable!("unbound metadata")
        };
        Ok(Cvar {
            cell: cell.clone(),
            index: Some(index),
            _t: PhantomData,
        })
    }

    /// Registers a variable bound to objects (set [`CvarBuilder::bind`]);
    /// the component then creates one value per object.
    pub fn register_bound(self) -> Result<BoundCvar<T>> {
        if self.info.bind == BindKind::NoObject {
            return Err(Error::refused(format!(
                "cvar '{}': register_bound() needs a bind kind",
                self.info.name
            )));
        }
        let (cvars, index) = self.register_index()?;
        Ok(BoundCvar {
            cvars: cvars.clone(),
            index,
            _t: PhantomData,
        })
    }
}

/// A component's handle to a control variable's value (or to one bound
/// object's value). Cheap to clone.
///
/// Numeric reads ([`Cvar::get`]) are one relaxed atomic load; string reads
/// take no lock and allocate nothing. A tool's write becomes visible to
/// later reads on every thread without further synchronisation (reads are
/// relaxed: do not use a cvar to publish other data).
pub struct Cvar<T> {
    pub(crate) cell: Arc<CvarCell>,
    index: Option<usize>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Cvar<T> {
    fn clone(&self) -> Self {
        Self {
            cell: self.cell.clone(),
            index: self.index,
            _t: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Cvar<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cvar")
            .field("index", &self.index)
            .field("frozen", &self.is_frozen())
            .finish_non_exhaustive()
    }
}

impl<T: CvarType> Cvar<T> {
    /// A handle not registered anywhere, holding `init` (used when a
    /// `static` declaration could not be registered).
    pub(crate) fn detached(init: Init, count: usize) -> Self {
        Self {
            cell: Arc::new(CvarCell::new(&init, count)),
            index: None,
            _t: PhantomData,
        }
    }
}

impl<T> Cvar<T> {
    /// The variable's index in its registry (`None` for a detached
    /// variable whose registration failed).
    pub fn index(&self) -> Option<usize> {
        self.index
    }

    /// Forbids tool writes for now: they fail with
    /// `MPI_T_ERR_CVAR_SET_NOT_NOW` until [`Cvar::unfreeze`]. E.g. a
    /// setting read once during start-up.
    pub fn freeze(&self) {
        self.cell.frozen.store(true, Ordering::Release);
    }

    /// Allows tool writes again (subject to the scope).
    pub fn unfreeze(&self) {
        self.cell.frozen.store(false, Ordering::Release);
    }

    /// Whether tool writes are currently refused with `SET_NOT_NOW`.
    pub fn is_frozen(&self) -> bool {
        self.cell.is_frozen()
    }
}

impl<T: NumericCvar> Cvar<T> {
    /// The current value: one relaxed atomic load.
    #[inline(always)]
    pub fn get(&self) -> T {
        T::from_bits(self.cell.bits.load(Ordering::Relaxed))
    }

    /// Sets the value from the component side (no scope or freeze check).
    pub fn set(&self, value: T) {
        let bits = match normalise(T::KIND, Init::Bits(value.to_bits())) {
            Init::Bits(b) => b,
            Init::Text(_) => unreachable!(),
        };
        self.cell.bits.store(bits, Ordering::Relaxed);
    }
}

impl Cvar<String> {
    /// The current value. Lock-free and allocation-free: the string stays
    /// valid as long as this handle (see the storage notes in the module
    /// docs).
    #[inline]
    pub fn get(&self) -> &str {
        self.cell.text.as_ref().map_or("", |t| t.get())
    }

    /// Sets the value from the component side (no scope or freeze check);
    /// `MPI_T_ERR_INVALID` if it contains NUL or exceeds the capacity.
    pub fn set(&self, value: &str) -> Result<()> {
        if value.contains('\0') || value.len() + 1 > self.cell.count {
            return Err(Error::invalid(
                "string contains NUL or exceeds the variable's capacity",
            ));
        }
        self.cell.store(&Init::Text(value.to_string()));
        Ok(())
    }
}

/// The per-object values of a bound variable.
type InstanceMap = crate::lockfree::var_table::Instances<Arc<CvarCell>>;

/// A control variable bound to objects: the component creates one value
/// per object (communicator, window, …); tools bind handles to an object
/// by its handle value.
///
/// ```
/// use pvar::{BindKind, ObjectRef, Registry};
/// let reg = Registry::new();
/// let algo = reg
///     .cvar::<u32>("coll_algorithm")
///     .bind(BindKind::Comm)
///     .default(2u32)
///     .register_bound()
///     .unwrap();
/// let world = algo.create_instance(0x101).unwrap();
/// assert_eq!(world.get(), 2);
/// let cvars = reg.cvars();
/// let (h, count) = cvars
///     .handle_alloc(algo.index(), Some(ObjectRef::new(BindKind::Comm, 0x101)))
///     .unwrap();
/// assert_eq!(count, 1);
/// cvars.write(h, &5u32.to_ne_bytes()).unwrap();
/// assert_eq!(world.get(), 5);
/// cvars.handle_free(h).unwrap();
/// ```
pub struct BoundCvar<T> {
    cvars: Arc<Cvars>,
    index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for BoundCvar<T> {
    fn clone(&self) -> Self {
        Self {
            cvars: self.cvars.clone(),
            index: self.index,
            _t: PhantomData,
        }
    }
}

impl<T: CvarType> BoundCvar<T> {
    fn instances(&self) -> Result<(&CvarVar, &InstanceMap)> {
        let var = self.cvars.var(self.index)?;
        match &var.body {
            CvarBody::Bound(map) => Ok((var, map)),
            CvarBody::Unbound(_) => Err(Error::invalid("the variable is not bound to objects")),
        }
    }

    /// Creates the value for the object whose handle value is `object`,
    /// starting at the variable's default (after environment overrides).
    pub fn create_instance(&self, object: u64) -> Result<Cvar<T>> {
        let (var, map) = self.instances()?;
        let cell = Arc::new(CvarCell::new(&var.start, var.count));
        if !map.insert_new(object, cell.clone()) {
            return Err(Error::invalid("an instance for this object exists already"));
        }
        Ok(Cvar {
            cell,
            index: Some(self.index),
            _t: PhantomData,
        })
    }

    /// Drops the value for `object`: tool handles bound to it then fail
    /// with `MPI_T_ERR_INVALID_INDEX`.
    pub fn drop_instance(&self, object: u64) -> Result<()> {
        let (_, map) = self.instances()?;
        let cell = map
            .remove(object)
            .ok_or(Error::invalid("no instance for this object"))?;
        cell.live.store(false, Ordering::Release);
        Ok(())
    }

    /// The objects that currently have a value, sorted.
    pub fn objects(&self) -> Vec<u64> {
        let Ok((_, map)) = self.instances() else {
            return Vec::new();
        };
        map.objects()
    }

    /// Forbids tool writes to every instance for now
    /// (`MPI_T_ERR_CVAR_SET_NOT_NOW`).
    pub fn freeze(&self) {
        if let Ok(var) = self.cvars.var(self.index) {
            var.frozen.store(true, Ordering::Release);
        }
    }

    /// Allows tool writes again (instances frozen individually stay so).
    pub fn unfreeze(&self) {
        if let Ok(var) = self.cvars.var(self.index) {
            var.frozen.store(false, Ordering::Release);
        }
    }

    /// The variable's index in its registry.
    pub fn index(&self) -> usize {
        self.index
    }
}
