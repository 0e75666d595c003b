//! The datatypes of MPI_T values ([`Datatype`], with their standard-ABI
//! values and C sizes), the Rust types that carry them ([`Value`],
//! [`Magnitude`]), and how a cell's `u64` encodes a value ([`Repr`]:
//! wrapping integer or `f64` bits, with the arithmetic and comparison of
//! each encoding).

abi_enum! {
    /// The MPI datatypes the tool information interface uses (Table 14.3).
    Datatype {
        /// `MPI_INT`: C `int` (i32).
        Int = 0x209, "MPI_INT";
        /// `MPI_UNSIGNED`: C `unsigned` (u32).
        Unsigned = 0x20d, "MPI_UNSIGNED";
        /// `MPI_UNSIGNED_LONG`: C `unsigned long` (u64 on LP64 targets).
        UnsignedLong = 0x20e, "MPI_UNSIGNED_LONG";
        /// `MPI_UNSIGNED_LONG_LONG`: u64.
        UnsignedLongLong = 0x20f, "MPI_UNSIGNED_LONG_LONG";
        /// `MPI_COUNT`: i64.
        Count = 0x202, "MPI_COUNT";
        /// `MPI_DOUBLE`: f64.
        Double = 0x214, "MPI_DOUBLE";
        /// `MPI_CHAR`: a NUL-terminated string; the count includes the NUL.
        Char = 0x243, "MPI_CHAR";
    }
}

impl Datatype {
    /// Size in bytes of one element in the C interface.
    pub const fn size(self) -> usize {
        match self {
            Self::Int | Self::Unsigned => 4,
            Self::UnsignedLong => core::mem::size_of::<core::ffi::c_ulong>(),
            Self::UnsignedLongLong | Self::Count | Self::Double => 8,
            Self::Char => 1,
        }
    }

    /// An unsigned integer type (`UNSIGNED`, `UNSIGNED_LONG`, `UNSIGNED_LONG_LONG`).
    pub const fn is_unsigned(self) -> bool {
        matches!(
            self,
            Self::Unsigned | Self::UnsignedLong | Self::UnsignedLongLong
        )
    }
}

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
    /// Whether a variable of `datatype` holds values of this type (what a
    /// typed tool handle checks): its own [`Value::DATATYPE`], and for
    /// `u64` also `MPI_UNSIGNED_LONG` where that is 64 bits.
    fn accepts(datatype: Datatype) -> bool {
        datatype == Self::DATATYPE
    }
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
    fn accepts(datatype: Datatype) -> bool {
        datatype == Datatype::UnsignedLongLong
            || (datatype == Datatype::UnsignedLong && Datatype::UnsignedLong.size() == 8)
    }
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

/// How a `u64` cell encodes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repr {
    /// Unsigned integer (wrapping).
    Unsigned,
    /// Signed integer, two's complement (wrapping).
    Signed,
    /// `f64` bits.
    Float,
}

impl Repr {
    pub(crate) const fn of(datatype: Datatype) -> Repr {
        match datatype {
            Datatype::Double => Repr::Float,
            Datatype::Int | Datatype::Count => Repr::Signed,
            _ => Repr::Unsigned,
        }
    }

    #[inline]
    pub(crate) fn add(self, a: u64, b: u64) -> u64 {
        match self {
            Repr::Float => (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
            _ => a.wrapping_add(b),
        }
    }

    #[inline]
    pub(crate) fn sub(self, a: u64, b: u64) -> u64 {
        match self {
            Repr::Float => (f64::from_bits(a) - f64::from_bits(b)).to_bits(),
            _ => a.wrapping_sub(b),
        }
    }

    /// The value's place in the watermark's order as an unsigned key: for a
    /// HIGHWATERMARK (`high`), `passes(v, m, true)` implies
    /// `order_key(v, true) > order_key(m, true)`; for a LOWWATERMARK the
    /// same with `high = false`. Signed values flip the sign bit; `f64`
    /// bits take the IEEE total order (negative values inverted, positive
    /// ones with the sign bit set); a LOWWATERMARK inverts the key. NaN gets
    /// some key: nothing passes NaN and NaN passes nothing, so its place
    /// does not matter. Branch-free; folds to nothing for a known `Unsigned`.
    #[inline(always)]
    pub(crate) const fn order_key(self, v: u64, high: bool) -> u64 {
        const SIGN: u64 = 1 << 63;
        let flip = match self {
            Repr::Unsigned => 0,
            Repr::Signed => SIGN,
            Repr::Float => (((v as i64) >> 63) as u64) | SIGN,
        };
        let key = v ^ flip;
        if high { key } else { !key }
    }

    /// Whether `v` passes mark `m`: is above it (`high`) or below it.
    #[inline]
    pub(crate) fn passes(self, v: u64, m: u64, high: bool) -> bool {
        let ord = match self {
            Repr::Float => f64::from_bits(v).partial_cmp(&f64::from_bits(m)),
            Repr::Signed => (v as i64).partial_cmp(&(m as i64)),
            Repr::Unsigned => v.partial_cmp(&m),
        };
        match ord {
            Some(core::cmp::Ordering::Greater) => high,
            Some(core::cmp::Ordering::Less) => !high,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_follow_passes() {
        let floats = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let signed = [i64::MIN, -7, -1, 0, 1, 9, i64::MAX];
        let unsigned = [0, 1, 63, 64, u64::MAX - 1, u64::MAX];
        let cases: [(Repr, Vec<u64>); 3] = [
            (Repr::Float, floats.iter().map(|f| f.to_bits()).collect()),
            (Repr::Signed, signed.iter().map(|&i| i as u64).collect()),
            (Repr::Unsigned, unsigned.to_vec()),
        ];
        for (repr, values) in cases {
            for high in [true, false] {
                for &v in &values {
                    for &m in &values {
                        if repr.passes(v, m, high) {
                            assert!(
                                repr.order_key(v, high) > repr.order_key(m, high),
                                "{repr:?} high={high}: {v:#x} passes {m:#x} but its key does not"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn abi_values_match_the_standard() {
        assert_eq!(Datatype::Double.raw(), 0x214);
        for d in Datatype::ALL {
            assert_eq!(Datatype::from_raw(d.raw()), Some(*d));
        }
    }
}
