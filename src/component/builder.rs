//! The registration builder shared by every class.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::callback::Callbacks;
use crate::enums::Enumeration;
use crate::error::{Error, Result};
use crate::kinds::{BindKind, Datatype, PvarClass, Verbosity};
use crate::registry::{Body, ElementCount, PvarInfo, Registry};
use crate::storage::Storage;

use super::Bound;

pub(crate) mod sealed {
    use super::*;

    /// Builds a component handle over a variable's storage. Crate-private:
    /// only the engine's own handle types can be produced by a builder.
    pub trait FromStorage: Sized {
        fn from_storage(registry: &Registry, index: usize, storage: Arc<Storage>) -> Self;
    }
}
pub(crate) use sealed::FromStorage;

/// A component-side handle type that a [`PvarBuilder`] can produce (one
/// per class: [`Counter`](crate::Counter), [`Timer`](crate::Timer), …).
/// Sealed: implemented only by the engine's handle types.
pub trait ComponentHandle: FromStorage {}
impl<T: FromStorage> ComponentHandle for T {}

/// Describes a variable before registering it. Obtained from a
/// [`Registry`] method per class ([`Registry::counter`], …).
///
/// ```
/// use pvar::{Registry, Verbosity};
/// let reg = Registry::new();
/// let per_peer = reg
///     .counter("msgs_to_peer")
///     .description("messages sent to each peer")
///     .verbosity(Verbosity::TunerBasic)
///     .count(4)
///     .category("comm")
///     .register()
///     .unwrap();
/// per_peer.inc_at(2);
/// assert_eq!(per_peer.get_at(2), 1);
/// ```
#[must_use = "a builder does nothing until `register` is called"]
pub struct PvarBuilder<'r, H> {
    registry: &'r Registry,
    info: PvarInfo,
    callbacks: Option<Callbacks>,
    /// The datatype the handle type was made for: an override must keep
    /// its value representation (see [`PvarBuilder::datatype`]).
    handle_datatype: Datatype,
    _handle: PhantomData<fn() -> H>,
}

impl<'r, H> PvarBuilder<'r, H> {
    pub(crate) fn new(
        registry: &'r Registry,
        name: &str,
        class: PvarClass,
        datatype: Datatype,
    ) -> Self {
        Self {
            registry,
            info: PvarInfo::new(name, class, datatype),
            callbacks: None,
            handle_datatype: datatype,
            _handle: PhantomData,
        }
    }

    pub(crate) fn with_callbacks(mut self, callbacks: Callbacks) -> Self {
        // A callback watermark has no per-handle mark: nothing for a
        // write or a reset to set. So it defaults to read-only and not
        // atomic; asking for `.readonly(false)` or `.atomic(true)` is
        // refused at registration (see `PvarInfo::validate`).
        if self.info.class.is_watermark() {
            self.info.atomic = false;
            self.info.readonly = true;
        }
        self.callbacks = Some(callbacks);
        self
    }

    /// The description a tool reads.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.info.description = text.into();
        self
    }

    /// Verbosity (default `USER_BASIC`).
    pub fn verbosity(mut self, v: Verbosity) -> Self {
        self.info.verbosity = v;
        self
    }

    /// Number of elements (default 1), e.g. one per peer.
    pub fn count(mut self, n: usize) -> Self {
        self.info.count = ElementCount::Fixed(n);
        self
    }

    /// The element count is decided per bound object instance.
    pub fn per_object_count(mut self) -> Self {
        self.info.count = ElementCount::PerObject;
        self
    }

    /// Binds the variable to objects of `kind` (default: no object).
    pub fn bind(mut self, kind: BindKind) -> Self {
        self.info.bind = kind;
        self
    }

    /// The category (by name) the variable belongs to.
    pub fn category(mut self, name: impl Into<String>) -> Self {
        self.info.category = Some(name.into());
        self
    }

    /// Overrides the datatype (e.g. `MPI_UNSIGNED_LONG` instead of
    /// `MPI_UNSIGNED_LONG_LONG` for a `u64` counter). Checked against the
    /// class at registration.
    pub fn datatype(mut self, d: Datatype) -> Self {
        self.info.datatype = d;
        self
    }

    /// Marks the variable read-only (tools can neither write nor reset it).
    /// `readonly(false)` is accepted at registration only where a tool
    /// write works, per handle: the SUM classes (also computed by
    /// callback) and engine HIGH/LOWWATERMARKs (see
    /// [`PvarInfo::validate`]).
    pub fn readonly(mut self, yes: bool) -> Self {
        self.info.readonly = yes;
        if yes {
            self.info.atomic = false;
        }
        self
    }

    /// Marks the variable continuous (always active; cannot be started or
    /// stopped; a handle runs from allocation).
    pub fn continuous(mut self, yes: bool) -> Self {
        self.info.continuous = yes;
        self
    }

    /// Whether the variable supports `readreset` (default: yes for SUM and
    /// WATERMARK classes).
    pub fn atomic(mut self, yes: bool) -> Self {
        self.info.atomic = yes;
        self
    }

    /// An enumeration describing the values (`MPI_INT` variables only).
    pub fn enumeration(mut self, e: Enumeration) -> Self {
        self.info.enumeration = Some(e);
        self
    }

    /// The metadata as it stands.
    pub fn info(&self) -> &PvarInfo {
        &self.info
    }
}

impl<H: ComponentHandle> PvarBuilder<'_, H> {
    /// Refuses a datatype override whose values the handle type cannot
    /// hold: e.g. `level::<u64>()` over `MPI_DOUBLE` would keep integers in
    /// cells a tool reads as `f64` bits. Unsigned widths may be swapped
    /// (`MPI_UNSIGNED_LONG` for a `u64` counter), and TIMER cells hold
    /// ticks whatever the datatype. Callback variables choose freely.
    fn check_datatype(&self) -> Result<()> {
        use crate::storage::Repr;
        let (chosen, made_for) = (self.info.datatype, self.handle_datatype);
        if self.callbacks.is_some()
            || self.info.class == PvarClass::Timer
            || Repr::of(chosen) == Repr::of(made_for)
        {
            return Ok(());
        }
        Err(Error::Registration(format!(
            "pvar '{}' ({}): datatype {} does not fit the handle's value type ({})",
            self.info.name,
            self.info.class.c_name(),
            chosen.c_name(),
            made_for.c_name()
        )))
    }

    /// Registers an unbound variable and returns its component handle. If a
    /// variable with the same name, class and metadata exists, returns a
    /// handle to it (a reloaded component gets its old index and values).
    ///
    /// Async-signal-safe: no (allocates, takes the registry's mutexes).
    pub fn register(self) -> Result<H> {
        if self.info.bind != BindKind::NoObject {
            return Err(Error::Registration(format!(
                "pvar '{}' is bound to {}: use register_bound()",
                self.info.name,
                self.info.bind.c_name()
            )));
        }
        self.check_datatype()?;
        let registry = self.registry;
        let var = registry.register_pvar(self.info, self.callbacks)?;
        match &var.body {
            Body::Unbound(storage) => Ok(H::from_storage(registry, var.index, storage.clone())),
            Body::Bound { .. } => unreachable!("unbound metadata"),
        }
    }

    /// Registers a variable bound to objects (set [`PvarBuilder::bind`]);
    /// the component then creates an instance per object.
    ///
    /// Async-signal-safe: no.
    pub fn register_bound(self) -> Result<Bound<H>> {
        if self.info.bind == BindKind::NoObject {
            return Err(Error::Registration(format!(
                "pvar '{}': register_bound() needs a bind kind",
                self.info.name
            )));
        }
        self.check_datatype()?;
        let registry = self.registry;
        let var = registry.register_pvar(self.info, self.callbacks)?;
        Ok(Bound::new(registry.clone(), var.index))
    }
}
