//! Metadata of a performance variable, kept apart from its hot storage,
//! and the registration rules of the standard.

use super::datatype::Datatype;
use super::enumeration::Enumeration;
use super::kinds::{BindKind, PvarClass, Verbosity};

/// Element count of a variable: fixed, or decided per bound object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementCount {
    /// The same number of elements for every handle.
    Fixed(usize),
    /// Each bound object instance has its own count (e.g. the size of a
    /// communicator), given when the component creates the instance or
    /// returned by a callback variable's notify function.
    PerObject,
}

/// Everything the standard lets a tool query about a performance variable
/// (`MPI_T_pvar_get_info`), plus the element count and category.
///
/// Immutable once registered: the standard requires every later query to
/// return the same information.
#[derive(Debug, Clone, PartialEq)]
pub struct PvarInfo {
    /// Unique together with the class.
    pub name: String,
    /// The variable's class.
    pub class: PvarClass,
    /// The datatype a tool reads.
    pub datatype: Datatype,
    /// Element count.
    pub count: ElementCount,
    /// Intended audience and detail.
    pub verbosity: Verbosity,
    /// Optional enumeration (only with `MPI_INT`).
    pub enumeration: Option<Enumeration>,
    /// Free text; may be empty.
    pub description: String,
    /// Kind of object a handle must be bound to.
    pub bind: BindKind,
    /// The variable can only be read (write and reset refused).
    pub readonly: bool,
    /// Always active: cannot be started or stopped.
    pub continuous: bool,
    /// Can be read and reset atomically (`readreset`), **per element**:
    /// each element's value and its reset come from one read, so no update
    /// is lost or counted twice; the elements of a multi-element handle are
    /// not read and reset as one (an update can land between two of them).
    pub atomic: bool,
    /// Name of the category the variable belongs to, if any.
    pub category: Option<String>,
}

impl PvarInfo {
    /// A variable's default metadata for `class`: USER_BASIC, unbound,
    /// one element, and the flags that the engine supports for the class
    /// (see [`PvarInfo::validate`]). A callback HIGH/LOWWATERMARK cannot
    /// honour these (writable, atomic) defaults: the builder makes it
    /// read-only and not atomic.
    pub fn new(name: impl Into<String>, class: PvarClass, datatype: Datatype) -> Self {
        let history = class.is_sum() || class.is_watermark();
        Self {
            name: name.into(),
            class,
            datatype,
            count: ElementCount::Fixed(1),
            verbosity: Verbosity::UserBasic,
            enumeration: None,
            description: String::new(),
            bind: BindKind::NoObject,
            readonly: !history,
            continuous: !history,
            atomic: history,
            category: None,
        }
    }

    /// Checks the class/datatype rules of the standard and the engine's
    /// flag rules. `callback` is true for variables computed by callback.
    ///
    /// - STATE: `MPI_INT` (with an optional enumeration).
    /// - LEVEL, SIZE, HIGH/LOWWATERMARK, AGGREGATE, TIMER: `MPI_UNSIGNED`,
    ///   `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG` or `MPI_DOUBLE`.
    /// - PERCENTAGE: `MPI_DOUBLE`.
    /// - COUNTER: unsigned types only.
    /// - GENERIC: any datatype of Table 14.3.
    /// - An enumeration only with `MPI_INT`.
    /// - STATE, LEVEL, SIZE, PERCENTAGE have no history: every session reads
    ///   the current value, so they are continuous and read-only (writing
    ///   them from one session would change what another observes) and not
    ///   atomic (there is nothing to reset).
    /// - GENERIC variables have no per-handle state either: read-only and
    ///   not atomic. (Not continuous is allowed: a stopped handle then
    ///   reads a snapshot, frozen at its stop.)
    /// - SUM and WATERMARK classes keep per-handle state, so `atomic`
    ///   (readreset) is available unless the variable is read-only.
    /// - Callback variables keep per-handle state only in the SUM classes
    ///   (accum/offset over the callback's values). Every other class,
    ///   HIGH/LOWWATERMARK included (a callback watermark has no per-handle
    ///   mark), is read-only and not atomic: a write could only reach the
    ///   component, where every session would see it.
    ///
    /// So `readonly = false` (reported by `MPI_T_pvar_get_info`: "can be
    /// written or reset") is accepted only where a tool write and reset
    /// change that handle's value and nothing else, and `atomic` only where
    /// `readreset` resets per-handle state. Variables breaking a rule are
    /// refused, never silently changed.
    pub fn validate(&self, callback: bool) -> Result<(), String> {
        use Datatype as D;
        use PvarClass as C;
        let who = format!("pvar '{}' ({})", self.name, self.class.c_name());
        if self.name.is_empty() {
            return Err(format!("{who}: the name must not be empty"));
        }
        if self.name.as_bytes().contains(&0) {
            return Err(format!("{who}: the name must not contain NUL"));
        }
        let ok = match self.class {
            C::State => self.datatype == D::Int,
            C::Level | C::Size | C::HighWatermark | C::LowWatermark | C::Aggregate | C::Timer => {
                self.datatype.is_unsigned() || self.datatype == D::Double
            }
            C::Percentage => self.datatype == D::Double,
            C::Counter => self.datatype.is_unsigned(),
            C::Generic => true,
        };
        if !ok {
            return Err(format!(
                "{who}: datatype {} is not allowed for this class",
                self.datatype.c_name()
            ));
        }
        if self.enumeration.is_some() && self.datatype != D::Int {
            return Err(format!("{who}: an enumeration requires MPI_INT"));
        }
        if self.datatype == D::Char && !callback {
            return Err(format!(
                "{who}: MPI_CHAR variables must be computed by a callback"
            ));
        }
        if let ElementCount::Fixed(0) = self.count {
            return Err(format!("{who}: the element count must be at least 1"));
        }
        if self.count == ElementCount::PerObject && self.bind == BindKind::NoObject {
            return Err(format!(
                "{who}: a per-object count needs a bind kind other than MPI_T_BIND_NO_OBJECT"
            ));
        }
        if self.class.is_memoryless() {
            if !self.continuous {
                return Err(format!(
                    "{who}: this class has no history, so it must be continuous"
                ));
            }
            if !self.readonly {
                return Err(format!(
                    "{who}: this class has no per-session state, so it must be read-only \
                     (a write would change what other sessions observe)"
                ));
            }
            if self.atomic {
                return Err(format!(
                    "{who}: this class has nothing to reset, so it cannot be atomic"
                ));
            }
        }
        if callback {
            // Only the SUM classes keep per-handle state over a callback;
            // every other class (watermarks included) reads and writes the
            // component's value through its callbacks.
            if !self.readonly && !self.class.is_sum() {
                return Err(format!(
                    "{who}: callback variables of this class keep no per-handle state, \
                     so they must be read-only (a tool write could only reach the \
                     component, where every session would see it)"
                ));
            }
            if self.atomic && !self.class.is_sum() {
                return Err(format!(
                    "{who}: callback variables of this class cannot be atomic \
                     (no per-handle state for readreset to reset); register it \
                     with atomic = false"
                ));
            }
        }
        if self.class == C::Generic && !callback {
            if self.atomic {
                return Err(format!("{who}: GENERIC variables cannot be atomic"));
            }
            if !self.readonly {
                return Err(format!(
                    "{who}: GENERIC variables have no per-session state, so they must be \
                     read-only (a write would change what other sessions observe)"
                ));
            }
        }
        if self.atomic && self.readonly {
            return Err(format!(
                "{who}: readreset resets the variable, so an atomic variable cannot be read-only"
            ));
        }
        Ok(())
    }

    /// A short description of what differs between two registrations of the
    /// same name and class, for the error message.
    pub(crate) fn differences(&self, other: &PvarInfo) -> Vec<&'static str> {
        let mut d = Vec::new();
        macro_rules! cmp {
            ($($f:ident),*) => { $( if self.$f != other.$f { d.push(stringify!($f)); } )* };
        }
        cmp!(
            datatype,
            count,
            verbosity,
            enumeration,
            description,
            bind,
            readonly,
            continuous,
            atomic,
            category
        );
        d
    }
}
