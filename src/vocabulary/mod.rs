//! The MPI_T vocabulary: what the standard's interface talks about, with
//! no behaviour behind it — variable classes, verbosity, object binding,
//! scopes and thread levels ([`kinds`]); datatypes, the Rust types that
//! carry them and their cell encoding ([`datatype`]); errors ([`error`]);
//! enumerations ([`enumeration`]); what a tool may query about a
//! performance or control variable ([`PvarInfo`], [`CvarInfo`]) and the
//! registration rules that keep that metadata honest; the functions behind
//! a variable computed by callback ([`callback`]); the notation of a
//! labelled series' name and its escaping ([`series`]).
//!
//! Uses only [`crate::sync`] and [`crate::lockfree`].

/// Declares an enum of MPI_T constants with their standard-ABI values and
/// C names (`raw`, `from_raw`, `c_name`, `ALL`, `Display`).
macro_rules! abi_enum {
    (
        $(#[$m:meta])* $name:ident {
            $( $(#[$vm:meta])* $variant:ident = $value:expr, $cname:literal; )+
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vm])* $variant, )+
        }

        impl $name {
            /// Every value, in ascending ABI order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The standard-ABI integer value.
            pub const fn raw(self) -> i32 {
                match self { $( $name::$variant => $value, )+ }
            }

            /// The value with this ABI integer, if any.
            pub fn from_raw(raw: i32) -> Option<Self> {
                match raw { $( x if x == $value => Some($name::$variant), )+ _ => None }
            }

            /// The name of the C constant.
            pub const fn c_name(self) -> &'static str {
                match self { $( $name::$variant => $cname, )+ }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.c_name())
            }
        }
    };
}

/// The setters every variable builder shares (performance and control
/// variables): description, verbosity, binding and category, written to
/// the builder's `info` field (a [`PvarInfo`] or [`CvarInfo`], which name
/// these fields alike).
macro_rules! common_builder_setters {
    () => {
        /// The description a tool reads (`MPI_T_*_get_info`). For a
        /// control variable of GROUP / ALL scope it should say what
        /// writers must do on the other processes.
        pub fn description(mut self, text: impl Into<String>) -> Self {
            self.info.description = text.into();
            self
        }

        /// Verbosity: intended audience and detail (default `USER_BASIC`).
        pub fn verbosity(mut self, v: $crate::vocabulary::kinds::Verbosity) -> Self {
            self.info.verbosity = v;
            self
        }

        /// Binds the variable to objects of `kind` (default: no object);
        /// register it with `register_bound`.
        pub fn bind(mut self, kind: $crate::vocabulary::kinds::BindKind) -> Self {
            self.info.bind = kind;
            self
        }

        /// The category (by name) the variable belongs to; it may be
        /// defined later (see [`Categories::undefined`](crate::Categories::undefined)).
        pub fn category(mut self, name: impl Into<String>) -> Self {
            self.info.category = Some(name.into());
            self
        }
    };
}
pub(crate) use common_builder_setters;

pub(crate) mod callback;
mod cvar_info;
pub(crate) mod datatype;
pub(crate) mod enumeration;
pub(crate) mod error;
pub(crate) mod event_info;
pub(crate) mod kinds;
mod pvar_info;
pub(crate) mod series;

pub use cvar_info::CvarInfo;
pub use event_info::{EventInfo, MAX_RECORD_BYTES, SourceInfo};
pub use pvar_info::{ElementCount, PvarInfo};
