//! A snapshot's values as the commands show them: numbers for columns,
//! STATE item names, the objects of bound instances.

use pvar::export::{Number, Snapshot, VarSnapshot};

use crate::format::{group, group_signed};

/// How old `snap` is, seconds (see `ProcessInfo::age`).
pub fn age_s(snap: &Snapshot) -> f64 {
    snap.process.age().as_secs_f64()
}

/// `MPI_T_BIND_MPI_COMM` → `comm`, `MPI_T_BIND_NO_OBJECT` → `no_object`.
pub fn bind_name(v: &VarSnapshot) -> String {
    let n = v.bind.c_name();
    n.strip_prefix("MPI_T_BIND_MPI_")
        .or_else(|| n.strip_prefix("MPI_T_BIND_"))
        .unwrap_or(n)
        .to_ascii_lowercase()
}

/// The object of a bound instance: `comm MPI_COMM_WORLD` if its component
/// named it, else `comm 0x101` (the handle value).
pub fn object_text(v: &VarSnapshot) -> Option<String> {
    let o = v.object?;
    Some(match &v.object_label {
        Some(label) => format!("{} {label}", bind_name(v)),
        None => format!("{} {o:#x}", bind_name(v)),
    })
}

/// The enumeration item name of `n` for a STATE variable with an
/// enumeration, if it names one.
pub fn item_name<'s>(snap: &'s Snapshot, v: &VarSnapshot, n: Number) -> Option<&'s str> {
    let e = snap.enumerations.get(v.enumeration?)?;
    let value = match n {
        Number::Signed(s) => s,
        Number::Unsigned(u) => i64::try_from(u).ok()?,
        Number::Double(_) => return None,
    };
    e.items
        .iter()
        .find(|(item, _)| i64::from(*item) == value)
        .map(|(_, name)| name.as_str())
}

/// A float in at most about 4 significant digits (integral values with
/// separators), for columns.
pub fn short_float(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a >= 1e15 {
        format!("{x:.3e}")
    } else if a >= 1000.0 {
        group_signed(x.round() as i64)
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a == 0.0 {
        "0".into()
    } else if a >= 0.001 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// A number for a column: integers with separators, doubles short.
pub fn number_text(n: Number) -> String {
    match n {
        Number::Unsigned(u) => group(u),
        Number::Signed(i) => group_signed(i),
        Number::Double(d) => short_float(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_shortened() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(group_signed(-1234), "-1,234");
        assert_eq!(short_float(0.5321), "0.532");
        assert_eq!(short_float(12.345), "12.35");
        assert_eq!(short_float(123456.7), "123,457");
        assert_eq!(short_float(0.0), "0");
    }
}
