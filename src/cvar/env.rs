//! Environment overrides: parsing, and the priority rule.
//!
//! A control variable lists the environment variables that override its
//! default in *ascending* priority (MPICH reads `MPICH_X`, `MPIR_PARAM_X`,
//! `MPIR_CVAR_X`, the last one set winning). They are read once, when the
//! variable is registered. A malformed value is ignored with a message on
//! standard error (also kept, see
//! [`Cvars::warnings`](super::Cvars::warnings)) that names
//! the control variable, the environment variable and the bad value; the
//! variable keeps its default, or the value of a lower-priority environment
//! variable that was well-formed.
//!
//! Accepted forms: integers in decimal or `0x` hexadecimal with an optional
//! sign (range-checked for the type); for `i32` variables with an
//! enumeration, also an item name (case-insensitive), and the value must be
//! one of the items'; booleans as `true/false`, `yes/no`, `on/off`, `1/0`
//! (case-insensitive); doubles as Rust's `f64` syntax, finite only; strings
//! as they are, shorter than the variable's capacity. Surrounding white
//! space is ignored except for strings.

use crate::vocabulary::enumeration::Enumeration;

use super::types::sealed::{Init, ValueKind};

fn parse_i128(s: &str) -> Option<i128> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        if hex.is_empty() || hex.starts_with(['+', '-']) {
            return None;
        }
        i128::from_str_radix(hex, 16).ok()?
    } else {
        if digits.is_empty() || digits.starts_with(['+', '-']) {
            return None;
        }
        digits.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Parses `raw` for a variable of `kind`. `capacity` is the string
/// capacity including the NUL.
pub(crate) fn parse(
    kind: ValueKind,
    raw: &str,
    enumeration: Option<&Enumeration>,
    capacity: usize,
) -> Result<Init, String> {
    let s = raw.trim();
    let int = |lo: i128, hi: i128| -> Result<i128, String> {
        let v = parse_i128(s).ok_or_else(|| format!("expected {}", kind.expected()))?;
        if v < lo || v > hi {
            return Err(format!("{v} is out of range for {}", kind.expected()));
        }
        Ok(v)
    };
    match kind {
        ValueKind::I32 => {
            let v = match enumeration.and_then(|e| e.value_of(s)) {
                Some(v) => v,
                None => int(i32::MIN as i128, i32::MAX as i128)? as i32,
            };
            if let Some(e) = enumeration
                && !e.contains_value(v)
            {
                let names: Vec<&str> = e.items().iter().map(|i| i.name.as_str()).collect();
                return Err(format!(
                    "{v} is not a value of enumeration '{}' (items: {})",
                    e.name(),
                    names.join(", ")
                ));
            }
            Ok(Init::Bits(v as i64 as u64))
        }
        ValueKind::Bool => match s.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Init::Bits(1)),
            "0" | "false" | "no" | "off" => Ok(Init::Bits(0)),
            _ => Err(format!("expected {}", kind.expected())),
        },
        ValueKind::U32 => Ok(Init::Bits(int(0, u32::MAX as i128)? as u64)),
        ValueKind::U64 => Ok(Init::Bits(int(0, u64::MAX as i128)? as u64)),
        ValueKind::I64 => Ok(Init::Bits(
            int(i64::MIN as i128, i64::MAX as i128)? as i64 as u64
        )),
        ValueKind::F64 => match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Init::Bits(v.to_bits())),
            _ => Err(format!("expected {}", kind.expected())),
        },
        ValueKind::Str => {
            if raw.len() + 1 > capacity {
                Err(format!(
                    "{} bytes is too long (capacity {} including the NUL)",
                    raw.len(),
                    capacity
                ))
            } else {
                Ok(Init::Text(raw.to_string()))
            }
        }
    }
}

/// The outcome of reading the environment for one variable.
pub(crate) struct Resolved {
    /// The value to start with.
    pub(crate) value: Init,
    /// The environment variable it came from (`None`: the default).
    pub(crate) source: Option<String>,
    /// One message per malformed value.
    pub(crate) warnings: Vec<String>,
}

/// Applies `env` (ascending priority) over `default` for variable `cvar`,
/// reading values with `lookup` (the process environment in production).
pub(crate) fn resolve(
    cvar: &str,
    kind: ValueKind,
    default: Init,
    env: &[String],
    enumeration: Option<&Enumeration>,
    capacity: usize,
    lookup: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Resolved {
    let mut value = default.clone();
    let mut source = None;
    let mut bad = Vec::new();
    for name in env {
        let Some(raw) = lookup(name) else { continue };
        let parsed = match raw.to_str() {
            Some(text) => parse(kind, text, enumeration, capacity).map_err(|e| (text.into(), e)),
            None => Err((
                raw.to_string_lossy().into_owned(),
                "not valid UTF-8".to_string(),
            )),
        };
        match parsed {
            Ok(v) => {
                value = v;
                source = Some(name.clone());
            }
            Err((text, why)) => bad.push((name.clone(), text, why)),
        }
    }
    let keeping = match &source {
        None => format!("keeping the default {}", kind.show(&default)),
        Some(src) => format!("using {src}={}", kind.show(&value)),
    };
    let warnings = bad
        .into_iter()
        .map(|(name, text, why)| {
            format!(
                "pvar: control variable '{cvar}': ignoring malformed environment variable \
                 {name}={text:?} ({why}); {keeping}"
            )
        })
        .collect();
    Resolved {
        value,
        source,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_with_sign_hex_and_range() {
        assert_eq!(parse_i128("42"), Some(42));
        assert_eq!(parse_i128("-0x10"), Some(-16));
        assert_eq!(parse_i128("+7"), Some(7));
        assert_eq!(parse_i128("--7"), None);
        assert_eq!(parse_i128("0x"), None);
        assert_eq!(parse_i128(""), None);
        assert!(parse(ValueKind::U32, "4294967296", None, 0).is_err());
        assert_eq!(
            parse(ValueKind::U64, " 0xFF ", None, 0),
            Ok(Init::Bits(255))
        );
        assert!(parse(ValueKind::U64, "-1", None, 0).is_err());
        assert_eq!(
            parse(ValueKind::I32, "-5", None, 0),
            Ok(Init::Bits(-5i64 as u64))
        );
        assert!(parse(ValueKind::F64, "inf", None, 0).is_err());
        assert_eq!(parse(ValueKind::Bool, "Yes", None, 0), Ok(Init::Bits(1)));
        assert!(parse(ValueKind::Str, "abcd", None, 4).is_err());
        assert!(parse(ValueKind::Str, "abc", None, 4).is_ok());
    }

    #[test]
    fn enumerated_ints_accept_names_and_known_values_only() {
        let e = Enumeration::new("proto", [("eager", 0), ("rndv", 1)]).unwrap();
        assert_eq!(
            parse(ValueKind::I32, "RNDV", Some(&e), 0),
            Ok(Init::Bits(1))
        );
        assert_eq!(parse(ValueKind::I32, "0", Some(&e), 0), Ok(Init::Bits(0)));
        assert!(parse(ValueKind::I32, "7", Some(&e), 0).is_err());
        assert!(parse(ValueKind::I32, "pipelined", Some(&e), 0).is_err());
    }
}
