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
