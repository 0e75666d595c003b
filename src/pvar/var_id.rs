//! What every component handle carries: the variable it updates
//! ([`VarId`]), and the sealed trait by which a builder produces handles.

use super::table::Pvars;
use crate::hot::storage::Storage;
use crate::sync::Arc;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::PvarClass;

/// False when the build compiles all instrumentation out
/// (`RUSTFLAGS="--cfg pvar_compile_out"`); public as [`crate::INSTRUMENTED`].
pub(crate) const ENABLED: bool = !cfg!(pvar_compile_out);

/// Which variable a component handle updates: its table and index (for
/// [`index`](super::Counter::index) and [`deactivate`](super::Counter::deactivate); the
/// update paths never read it). Opaque: it appears only in the sealed
/// builder trait.
#[derive(Clone)]
pub struct VarId {
    pvars: Arc<Pvars>,
    index: usize,
}

impl VarId {
    pub(crate) fn new(pvars: &Arc<Pvars>, index: usize) -> Self {
        Self {
            pvars: pvars.clone(),
            index,
        }
    }

    /// The table the variable is registered in.
    pub(crate) fn pvars(&self) -> &Arc<Pvars> {
        &self.pvars
    }

    /// The variable's index in its registry.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Deactivates the variable (component unloaded).
    pub(crate) fn deactivate(&self) {
        let _ = self.pvars.deactivate(self.index);
    }
}

pub(crate) mod sealed {
    use super::*;

    /// Builds a component handle over a variable's storage. Crate-private:
    /// only the engine's own handle types can be produced by a builder.
    pub trait FromStorage: Sized {
        fn from_storage(id: VarId, storage: Arc<Storage>) -> Self;
    }
}
pub(crate) use sealed::FromStorage;

/// A component-side handle type that a [`PvarBuilder`](super::PvarBuilder)
/// can produce (one per class: [`Counter`](super::Counter),
/// [`Timer`](super::Timer), …). Sealed: implemented only by the engine's
/// handle types.
pub trait ComponentHandle: FromStorage {}
impl<T: FromStorage> ComponentHandle for T {}

/// A handle type with a class of its own (every one but
/// [`CallbackVar`](super::CallbackVar)): the class and the datatype a
/// variable registered for it gets by default. Sealed like
/// [`ComponentHandle`].
pub trait ClassHandle: ComponentHandle {
    /// The variable's class.
    const CLASS: PvarClass;
    /// The datatype registered unless overridden.
    const DATATYPE: Datatype;
    /// The variable's index (each handle's `index()`).
    #[doc(hidden)]
    fn var_index(&self) -> usize;
}
