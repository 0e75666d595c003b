//! The Rust types a component can use for variable elements, and the
//! datatype each maps to.

use crate::kinds::Datatype;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

/// An element type: `u32` (`MPI_UNSIGNED`), `u64` (`MPI_UNSIGNED_LONG_LONG`,
/// or `MPI_UNSIGNED_LONG` if chosen), `f64` (`MPI_DOUBLE`), `i32`
/// (`MPI_INT`), `i64` (`MPI_COUNT`).
pub trait Value: sealed::Sealed + Copy + Send + Sync + PartialOrd + 'static {
    /// The datatype registered by default for this type.
    const DATATYPE: Datatype;
    /// Whether cells hold this type as `f64` bits (summed as doubles). A
    /// handle's type fixes its cells' representation: the builders refuse
    /// a datatype override that would change it.
    const IS_FLOAT: bool = false;
    /// The cell bit pattern of the value.
    fn to_bits(self) -> u64;
    /// The value of a cell bit pattern.
    fn from_bits(bits: u64) -> Self;
}

/// Element types of classes restricted to unsigned integers or doubles
/// (LEVEL, SIZE, AGGREGATE, TIMER, HIGH/LOWWATERMARK).
pub trait Magnitude: Value {}
impl Magnitude for u32 {}
impl Magnitude for u64 {}
impl Magnitude for f64 {}

impl Value for u32 {
    const DATATYPE: Datatype = Datatype::Unsigned;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as u32
    }
}

impl Value for u64 {
    const DATATYPE: Datatype = Datatype::UnsignedLongLong;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits
    }
}

impl Value for f64 {
    const DATATYPE: Datatype = Datatype::Double;
    const IS_FLOAT: bool = true;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl Value for i32 {
    const DATATYPE: Datatype = Datatype::Int;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as i64 as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as i64 as i32
    }
}

impl Value for i64 {
    const DATATYPE: Datatype = Datatype::Count;
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
}
