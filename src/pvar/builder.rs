//! The registration builder shared by every class.

use std::marker::PhantomData;

use super::bound::Bound;
use super::table::{Body, Pvars};
use super::var_id::{ClassHandle, ComponentHandle, VarId};
use crate::sync::Arc;
use crate::vocabulary::callback::Callbacks;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::Repr;
use crate::vocabulary::enumeration::Enumeration;
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::{BindKind, PvarClass};
use crate::vocabulary::{ElementCount, PvarInfo};

/// Describes a variable before registering it. Obtained from a
/// [`Registry`](crate::Registry) method per class
/// ([`Registry::counter`](crate::Registry::counter), …).
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
    pvars: &'r Arc<Pvars>,
    info: PvarInfo,
    callbacks: Option<Callbacks>,
    /// The datatype the handle type was made for: an override must keep
    /// its value representation (see [`PvarBuilder::datatype`]).
    handle_datatype: Datatype,
    _handle: PhantomData<fn() -> H>,
}

impl<'r, H> PvarBuilder<'r, H> {
    pub(crate) fn new(
        pvars: &'r Arc<Pvars>,
        name: &str,
        class: PvarClass,
        datatype: Datatype,
    ) -> Self {
        Self {
            pvars,
            info: PvarInfo::new(name, class, datatype),
            callbacks: None,
            handle_datatype: datatype,
            _handle: PhantomData,
        }
    }

    /// The builder of a variable of `H`'s own class and default datatype.
    pub(crate) fn typed(pvars: &'r Arc<Pvars>, name: &str) -> Self
    where
        H: ClassHandle,
    {
        Self::new(pvars, name, H::CLASS, H::DATATYPE)
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

    crate::vocabulary::common_builder_setters!();

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
    /// [`PvarInfo::validate`](crate::PvarInfo::validate)).
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
        let (chosen, made_for) = (self.info.datatype, self.handle_datatype);
        if self.callbacks.is_some()
            || self.info.class == PvarClass::Timer
            || Repr::of(chosen) == Repr::of(made_for)
        {
            return Ok(());
        }
        Err(Error::refused(format!(
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
            return Err(Error::refused(format!(
                "pvar '{}' is bound to {}: use register_bound()",
                self.info.name,
                self.info.bind.c_name()
            )));
        }
        self.check_datatype()?;
        let (index, var) = self.pvars.register(self.info, self.callbacks)?;
        match &var.body {
            Body::Unbound(storage) => Ok(H::from_storage(
                VarId::new(self.pvars, index),
                storage.clone(),
            )),
            Body::Bound { .. } => unreachable!("unbound metadata"),
        }
    }

    /// Registers a variable bound to objects (set [`PvarBuilder::bind`]);
    /// the component then creates an instance per object.
    ///
    /// Async-signal-safe: no.
    pub fn register_bound(self) -> Result<Bound<H>> {
        if self.info.bind == BindKind::NoObject {
            return Err(Error::refused(format!(
                "pvar '{}': register_bound() needs a bind kind",
                self.info.name
            )));
        }
        self.check_datatype()?;
        let (index, _) = self.pvars.register(self.info, self.callbacks)?;
        Ok(Bound::new(VarId::new(self.pvars, index)))
    }
}
