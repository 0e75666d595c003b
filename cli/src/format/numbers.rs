//! Number formats the demo's view and the outside commands (`read`,
//! `top`, `export`) share.

/// `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed integer with thousands separators.
pub fn group_signed(n: i64) -> String {
    if n < 0 {
        format!("-{}", group(n.unsigned_abs()))
    } else {
        group(n as u64)
    }
}

/// A double with about four significant digits for a person: grouped
/// fixed-point from 10^-4 to 10^15, scientific outside, `0` for zero.
pub fn significant(d: f64) -> String {
    if d == 0.0 {
        return "0".into();
    }
    if !d.is_finite() {
        return format!("{d}");
    }
    let a = d.abs();
    if !(1e-4..1e15).contains(&a) {
        return format!("{d:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{a:.decimals$}");
    let sign = if d < 0.0 { "-" } else { "" };
    match s.split_once('.') {
        Some((int, frac)) => format!("{sign}{}.{frac}", group(int.parse().unwrap_or(0))),
        None => format!("{sign}{}", group(s.parse().unwrap_or(0))),
    }
}
