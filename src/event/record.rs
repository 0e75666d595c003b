//! Typed event records for Rust components: the Rust type an event's
//! raise takes, and the element layout (datatypes and displacements) that
//! tools see for it.
//!
//! ```
//! use pvar::{Datatype, EventRecord};
//! // (bytes, peer): an unsigned 64-bit element at 0, an int at 8.
//! assert_eq!(
//!     <(u64, i32)>::layout(),
//!     vec![(Datatype::UnsignedLongLong, 0), (Datatype::Int, 8)]
//! );
//! ```

use core::mem::{offset_of, size_of};

use crate::vocabulary::datatype::Datatype;

/// A primitive that can be one element of an event record.
pub trait Element: Copy + Send + Sync + 'static {
    /// Its MPI datatype.
    const DATATYPE: Datatype;
}

impl Element for u32 {
    const DATATYPE: Datatype = Datatype::Unsigned;
}
impl Element for u64 {
    const DATATYPE: Datatype = Datatype::UnsignedLongLong;
}
impl Element for i32 {
    const DATATYPE: Datatype = Datatype::Int;
}
impl Element for i64 {
    const DATATYPE: Datatype = Datatype::Count;
}
impl Element for f64 {
    const DATATYPE: Datatype = Datatype::Double;
}

/// The Rust type of an event's record: `()` (no elements), one
/// [`Element`], or a tuple of up to six of them, laid out as Rust lays out
/// the type (tools read the displacements, so any layout is fine).
///
/// # Safety
/// `layout()` must list, for every element, its datatype and the byte
/// offset of an initialised field of that size inside `Self`; the raise
/// path copies exactly those bytes out of a `&Self`. The implementations
/// here derive the offsets with `offset_of!`; implement it yourself only
/// under the same rule.
pub unsafe trait EventRecord: Copy + Send + Sync + 'static {
    /// Datatype and byte offset of each element, in element order.
    fn layout() -> Vec<(Datatype, usize)>;
    /// The record's size in bytes (`MPI_T_event_copy` writes this many).
    fn extent() -> usize {
        size_of::<Self>()
    }
}

// SAFETY: no elements; no bytes are read.
unsafe impl EventRecord for () {
    fn layout() -> Vec<(Datatype, usize)> {
        Vec::new()
    }
}

// SAFETY: the one element is the whole value, at offset 0.
unsafe impl<T: Element> EventRecord for T {
    fn layout() -> Vec<(Datatype, usize)> {
        vec![(T::DATATYPE, 0)]
    }
}

macro_rules! tuple_record {
    ($($t:ident $i:tt),+) => {
        // SAFETY: each element is a field of the tuple, at the offset
        // `offset_of!` reports, with its own type's size.
        unsafe impl<$($t: Element),+> EventRecord for ($($t,)+) {
            fn layout() -> Vec<(Datatype, usize)> {
                vec![$(($t::DATATYPE, offset_of!(Self, $i))),+]
            }
        }
    };
}

tuple_record!(A 0);
tuple_record!(A 0, B 1);
tuple_record!(A 0, B 1, C 2);
tuple_record!(A 0, B 1, C 2, D 3);
tuple_record!(A 0, B 1, C 2, D 3, E 4);
tuple_record!(A 0, B 1, C 2, D 3, E 4, F 5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_name_every_field_inside_the_value() {
        let l = <(u32, f64, i64)>::layout();
        assert_eq!(l.len(), 3);
        for (dt, off) in &l {
            assert!(off + dt.size() <= <(u32, f64, i64)>::extent());
        }
        assert_eq!(<()>::layout(), vec![]);
        assert_eq!(<()>::extent(), 0);
        assert_eq!(u64::layout(), vec![(Datatype::UnsignedLongLong, 0)]);
    }
}
