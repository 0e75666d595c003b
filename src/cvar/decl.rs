//! Control variables declared next to the code that uses them: the
//! [`cvar!`](crate::cvar!) macro and the lazily registered
//! [`StaticCvar`] it declares.
//!
//! A `StaticCvar` registers itself in [`global`](crate::global) the first
//! time it is read (the macro hands it the way to the global registry's
//! control variables, so this module needs no registry) (or when [`StaticCvar::register`] is called — do that
//! at component start-up so tools enumerating variables see it before its
//! first use). There is no central list. After registration a read is an
//! already-initialised check (one acquire load) plus the variable's own
//! relaxed load.

use super::builder::{Cvar, CvarBuilder};
use super::table::Cvars;
use super::types::sealed::{Init, Sealed};
use super::types::{CvarType, NumericCvar};
use crate::sync::Arc;
use crate::sync::unmodelled::OnceLock;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::enumeration::Enumeration;
use crate::vocabulary::kinds::{Scope, Verbosity};

/// The metadata of a `static` control variable, built in a `const`
/// context (the [`cvar!`](crate::cvar!) macro builds it from `key = value;`
/// lines, one setter per key).
#[derive(Debug, Clone, Copy)]
pub struct CvarDecl {
    name: &'static str,
    description: &'static str,
    category: Option<&'static str>,
    verbosity: Verbosity,
    scope: Scope,
    env: &'static [&'static str],
    enumeration: Option<(&'static str, &'static [(&'static str, i32)])>,
    datatype: Option<Datatype>,
    capacity: Option<usize>,
}

impl CvarDecl {
    /// A declaration named `name` with the builder's defaults.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            description: "",
            category: None,
            verbosity: Verbosity::UserBasic,
            scope: Scope::Local,
            env: &[],
            enumeration: None,
            datatype: None,
            capacity: None,
        }
    }

    /// The variable's MPI_T name.
    pub const fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// The description.
    pub const fn description(mut self, text: &'static str) -> Self {
        self.description = text;
        self
    }

    /// The category name.
    pub const fn category(mut self, name: &'static str) -> Self {
        self.category = Some(name);
        self
    }

    /// The verbosity.
    pub const fn verbosity(mut self, v: Verbosity) -> Self {
        self.verbosity = v;
        self
    }

    /// The scope.
    pub const fn scope(mut self, s: Scope) -> Self {
        self.scope = s;
        self
    }

    /// Environment variables, ascending priority.
    pub const fn env(mut self, names: &'static [&'static str]) -> Self {
        self.env = names;
        self
    }

    /// An enumeration: its name and `(item, value)` pairs.
    pub const fn enumeration(
        mut self,
        name: &'static str,
        items: &'static [(&'static str, i32)],
    ) -> Self {
        self.enumeration = Some((name, items));
        self
    }

    /// A datatype override (see [`CvarBuilder::datatype`](super::CvarBuilder::datatype)).
    pub const fn datatype(mut self, d: Datatype) -> Self {
        self.datatype = Some(d);
        self
    }

    /// String capacity including the NUL.
    pub const fn capacity(mut self, bytes: usize) -> Self {
        self.capacity = Some(bytes);
        self
    }

    /// Registers this declaration in `cvars` with `default`.
    pub(crate) fn register_in<T: CvarType>(
        &self,
        cvars: &Arc<Cvars>,
        default: Init,
    ) -> crate::vocabulary::error::Result<Cvar<T>> {
        let mut b = CvarBuilder::<T>::new(cvars, self.name)
            .default_init(default)
            .description(self.description)
            .verbosity(self.verbosity)
            .scope(self.scope)
            .env(self.env.iter().copied());
        if let Some(c) = self.category {
            b = b.category(c);
        }
        if let Some((name, items)) = self.enumeration {
            b = b.enumeration(Enumeration::new(name, items.iter().copied())?);
        }
        if let Some(d) = self.datatype {
            b = b.datatype(d);
        }
        if let Some(c) = self.capacity {
            b = b.capacity(c);
        }
        b.register()
    }
}

/// A control variable declared as a `static` with [`cvar!`](crate::cvar!):
/// registered in [`global`](crate::global) on first use.
///
/// The first use registers the variable (it allocates, takes locks and
/// reads the environment), so it is not async-signal-safe; call
/// [`StaticCvar::register`] during start-up if the variable may first be
/// read from a signal handler. Later reads are lock- and allocation-free.
pub struct StaticCvar<T: CvarType> {
    decl: CvarDecl,
    default: <T as Sealed>::Static,
    /// Where to register: the global registry's control variables.
    home: fn() -> &'static Arc<Cvars>,
    cell: OnceLock<Cvar<T>>,
}

impl<T: CvarType> StaticCvar<T> {
    /// A declaration registered in `home()` on first use; use the
    /// [`cvar!`](crate::cvar!) macro rather than calling this directly.
    pub const fn new(
        decl: CvarDecl,
        default: <T as Sealed>::Static,
        home: fn() -> &'static Arc<Cvars>,
    ) -> Self {
        Self {
            decl,
            default,
            home,
            cell: OnceLock::new(),
        }
    }

    /// Registers the variable in [`global`](crate::global) now, if not yet
    /// done, and returns its handle. Idempotent.
    ///
    /// If registration is refused (e.g. another variable has the same name
    /// with different metadata), the message is printed to standard error
    /// and the variable works detached from the registry with its declared
    /// default (no environment override); tools do not see it. Use
    /// [`StaticCvar::try_register`] to get the error instead.
    pub fn register(&self) -> &Cvar<T> {
        self.cell
            .get_or_init(|| match self.try_register_in((self.home)()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!(
                        "pvar: control variable '{}' could not be registered: {e}",
                        self.decl.name
                    );
                    let init = T::static_init(self.default);
                    let count = match &init {
                        Init::Text(s) => self
                            .decl
                            .capacity
                            .unwrap_or(super::builder::DEFAULT_STRING_CAPACITY.max(s.len() + 1)),
                        Init::Bits(_) => 1,
                    };
                    Cvar::detached(init, count)
                }
            })
    }

    /// Registers the variable in [`global`](crate::global), returning the
    /// error if registration is refused. Idempotent once it succeeded.
    pub fn try_register(&self) -> crate::vocabulary::error::Result<&Cvar<T>> {
        if let Some(c) = self.cell.get() {
            return Ok(c);
        }
        let c = self.try_register_in((self.home)())?;
        Ok(self.cell.get_or_init(|| c))
    }

    fn try_register_in(&self, cvars: &Arc<Cvars>) -> crate::vocabulary::error::Result<Cvar<T>> {
        self.decl
            .register_in::<T>(cvars, T::static_init(self.default))
    }

    /// The handle, registering on first call.
    #[inline(always)]
    pub fn cvar(&self) -> &Cvar<T> {
        match self.cell.get() {
            Some(c) => c,
            None => self.register(),
        }
    }

    /// The declaration's MPI_T name.
    pub fn name(&self) -> &'static str {
        self.decl.name
    }
}

impl<T: NumericCvar> StaticCvar<T> {
    /// The current value: after the first call, an initialised check and
    /// one relaxed atomic load.
    #[inline(always)]
    pub fn get(&self) -> T {
        self.cvar().get()
    }
}

impl StaticCvar<String> {
    /// The current value; lock-free and allocation-free after the first
    /// call.
    #[inline]
    pub fn get(&self) -> &str {
        self.cvar().get()
    }
}

/// Declares a control variable next to the code that uses it: a `static`
/// [`StaticCvar`] registered in [`global`](crate::global) on first use
/// (or when `.register()` is called).
///
/// After the `static NAME: TYPE = DEFAULT;` line come `key = value;` lines
/// in any order, all optional: `name` (the MPI_T name; default: the static's
/// identifier), `description`, `category`, `verbosity`, `scope`, `env`
/// (`[..]`, ascending priority), `enumeration` (`("name", [("item", 0),
/// ..])`, `i32` only), `datatype`, `capacity` (strings). `TYPE` is one of
/// `i32`, `bool`, `u32`, `u64`, `i64`, `f64`, `String` (whose default is a
/// string literal).
///
/// ```
/// use pvar::{Scope, Verbosity};
///
/// pvar::cvar! {
///     /// Messages up to this size go eagerly.
///     pub static EAGER_LIMIT: u64 = 65536;
///     name = "DOCTEST_CVAR_EAGER_LIMIT";
///     description = "eager/rendezvous threshold in bytes; same value on all processes";
///     category = "doctest_comm";
///     verbosity = Verbosity::TunerBasic;
///     scope = Scope::AllEq;
///     env = ["MPICH_DOCTEST_EAGER_LIMIT", "MPIR_PARAM_DOCTEST_EAGER_LIMIT",
///            "MPIR_CVAR_DOCTEST_EAGER_LIMIT"];
/// }
///
/// pvar::cvar! {
///     static PROTOCOL: i32 = 0;
///     name = "DOCTEST_CVAR_PROTOCOL";
///     enumeration = ("doctest_protocol", [("eager", 0), ("rendezvous", 1)]);
/// }
///
/// fn send(len: u64) -> &'static str {
///     if len <= EAGER_LIMIT.get() { "eager" } else { "rendezvous" }
/// }
/// assert_eq!(send(100), "eager");
/// assert_eq!(PROTOCOL.get(), 0);
/// let reg = pvar::global();
/// assert!(reg.cvars().index("DOCTEST_CVAR_EAGER_LIMIT").is_ok());
/// ```
#[macro_export]
macro_rules! cvar {
    (
        $(#[$meta:meta])*
        $vis:vis static $ident:ident : $ty:ty = $default:expr;
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        $vis static $ident: $crate::StaticCvar<$ty> = $crate::StaticCvar::new(
            $crate::__cvar_decl!($crate::__private::CvarDecl::new(stringify!($ident)); $($rest)*),
            $default,
            $crate::__private::global_cvars,
        );
    };
}

/// Builds a [`CvarDecl`] from `key = value;` lines. Internal to
/// [`cvar!`](crate::cvar!).
#[doc(hidden)]
#[macro_export]
macro_rules! __cvar_decl {
    ($d:expr;) => { $d };
    ($d:expr; env = [$($e:expr),* $(,)?]; $($rest:tt)*) => {
        $crate::__cvar_decl!($d.env(&[$($e),*]); $($rest)*)
    };
    ($d:expr; enumeration = ($n:expr, [$(($item:expr, $v:expr)),* $(,)?]); $($rest:tt)*) => {
        $crate::__cvar_decl!($d.enumeration($n, &[$(($item, $v)),*]); $($rest)*)
    };
    ($d:expr; $key:ident = $val:expr; $($rest:tt)*) => {
        $crate::__cvar_decl!($d.$key($val); $($rest)*)
    };
}
