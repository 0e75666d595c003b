//! The Rust types a control variable can have, and their MPI datatypes.
//!
//! | Rust type | MPI datatype | notes |
//! |---|---|---|
//! | `i32` | `MPI_INT` | may carry an [`Enumeration`](crate::Enumeration) |
//! | `bool` | `MPI_INT` | 0 / 1; tools may write any int, non-zero is `true` |
//! | `u32` | `MPI_UNSIGNED` | |
//! | `u64` | `MPI_UNSIGNED_LONG_LONG` | or `MPI_UNSIGNED_LONG` where that is 64 bits |
//! | `i64` | `MPI_COUNT` | |
//! | `f64` | `MPI_DOUBLE` | |
//! | `String` | `MPI_CHAR` | the handle count is the capacity including the NUL |

use crate::vocabulary::datatype::Datatype;

pub(crate) mod sealed {
    /// How the value is stored and parsed. Crate-internal.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ValueKind {
        /// `i32`, sign-extended into the 64-bit cell.
        I32,
        /// `bool` as 0 / 1.
        Bool,
        /// `u32`.
        U32,
        /// `u64`.
        U64,
        /// `i64` (`MPI_COUNT`).
        I64,
        /// `f64` as its bits.
        F64,
        /// A string.
        Str,
    }

    /// A value ready to store: bits for numbers, text for strings.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Init {
        /// The 64-bit cell content.
        Bits(u64),
        /// The string content.
        Text(String),
    }

    /// Implemented by the types of [`super::CvarType`]. Sealed.
    pub trait Sealed: Sized + Send + Sync + 'static {
        /// How the default is written in a `static` declaration
        /// (`&'static str` for `String`, the type itself otherwise).
        type Static: Copy + Send + Sync + 'static;
        /// How a default is passed to the builder (`&str` for `String`).
        type Arg<'a>;
        const KIND: ValueKind;
        fn arg_init(a: Self::Arg<'_>) -> Init;
        fn static_init(s: Self::Static) -> Init;
    }
}

use sealed::{Init, Sealed, ValueKind};

/// A type a control variable can have. Sealed: `i32` and `bool`
/// (`MPI_INT`), `u32` (`MPI_UNSIGNED`), `u64` (`MPI_UNSIGNED_LONG_LONG`),
/// `i64` (`MPI_COUNT`), `f64` (`MPI_DOUBLE`) and `String` (`MPI_CHAR`).
pub trait CvarType: Sealed {
    /// The datatype tools see (overridable for `u64`, see
    /// [`CvarBuilder::datatype`](super::CvarBuilder::datatype)).
    const DATATYPE: Datatype;
}

/// A numeric control variable type: stored as 64 bits in one atomic, read
/// with one relaxed load.
pub trait NumericCvar: CvarType + Copy {
    /// Decodes the cell content.
    fn from_bits(bits: u64) -> Self;
    /// Encodes for the cell.
    fn to_bits(self) -> u64;
}

macro_rules! numeric {
    ($t:ty, $kind:ident, $dt:ident, |$v:ident| $to:expr, |$b:ident| $from:expr) => {
        impl Sealed for $t {
            type Static = $t;
            type Arg<'a> = $t;
            const KIND: ValueKind = ValueKind::$kind;
            fn arg_init(a: $t) -> Init {
                Init::Bits(a.to_bits())
            }
            fn static_init(s: $t) -> Init {
                Init::Bits(s.to_bits())
            }
        }
        impl CvarType for $t {
            const DATATYPE: Datatype = Datatype::$dt;
        }
        impl NumericCvar for $t {
            #[inline(always)]
            fn from_bits($b: u64) -> Self {
                $from
            }
            #[inline(always)]
            fn to_bits(self) -> u64 {
                let $v = self;
                $to
            }
        }
    };
}

numeric!(i32, I32, Int, |v| v as i64 as u64, |b| b as i64 as i32);
numeric!(bool, Bool, Int, |v| v as u64, |b| b != 0);
numeric!(u32, U32, Unsigned, |v| v as u64, |b| b as u32);
numeric!(u64, U64, UnsignedLongLong, |v| v, |b| b);
numeric!(i64, I64, Count, |v| v as u64, |b| b as i64);
numeric!(f64, F64, Double, |v| f64::to_bits(v), |b| f64::from_bits(b));

impl Sealed for String {
    type Static = &'static str;
    type Arg<'a> = &'a str;
    const KIND: ValueKind = ValueKind::Str;
    fn arg_init(a: &str) -> Init {
        Init::Text(a.to_string())
    }
    fn static_init(s: &'static str) -> Init {
        Init::Text(s.to_string())
    }
}
impl CvarType for String {
    const DATATYPE: Datatype = Datatype::Char;
}

/// A control variable's value as a tool reads or writes it, independent of
/// the byte layout of the C interface.
#[derive(Debug, Clone, PartialEq)]
pub enum CvarValue {
    /// `MPI_INT` and `MPI_COUNT` variables.
    Signed(i64),
    /// `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG`.
    Unsigned(u64),
    /// `MPI_DOUBLE`.
    Double(f64),
    /// `MPI_CHAR` (without the terminating NUL).
    Text(String),
}

impl ValueKind {
    /// Renders a stored value for messages.
    pub(crate) fn show(self, init: &Init) -> String {
        match (self, init) {
            (_, Init::Text(s)) => format!("{s:?}"),
            (ValueKind::I32 | ValueKind::I64, Init::Bits(b)) => (*b as i64).to_string(),
            (ValueKind::Bool, Init::Bits(b)) => (*b != 0).to_string(),
            (ValueKind::F64, Init::Bits(b)) => f64::from_bits(*b).to_string(),
            (_, Init::Bits(b)) => b.to_string(),
        }
    }

    /// The typed value of a stored value.
    pub(crate) fn value(self, bits: u64) -> CvarValue {
        match self {
            ValueKind::I32 | ValueKind::I64 => CvarValue::Signed(bits as i64),
            ValueKind::Bool => CvarValue::Signed((bits != 0) as i64),
            ValueKind::U32 | ValueKind::U64 => CvarValue::Unsigned(bits),
            ValueKind::F64 => CvarValue::Double(f64::from_bits(bits)),
            ValueKind::Str => unreachable!("strings are not bits"),
        }
    }

    /// What the environment parser expects, for messages.
    pub(crate) fn expected(self) -> &'static str {
        match self {
            ValueKind::I32 => "a 32-bit signed integer",
            ValueKind::Bool => "a boolean (true/false, yes/no, on/off, 1/0)",
            ValueKind::U32 => "a 32-bit unsigned integer",
            ValueKind::U64 => "a 64-bit unsigned integer",
            ValueKind::I64 => "a 64-bit signed integer",
            ValueKind::F64 => "a finite floating-point number",
            ValueKind::Str => "a string",
        }
    }
}
