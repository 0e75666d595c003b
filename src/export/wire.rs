//! The bytes of a [`Snapshot`] in an export region: a self-describing,
//! versioned, little-endian encoding, and its decoder, which treats its
//! input as hostile.
//!
//! ```text
//! payload   = version:u32 process nvars:u32 var* ncats:u32 cat* nenums:u32 enum*
//! process   = pid:u32 sequence:u64 monotonic_ns:u64 unix_ns:u64 live_threads:u32
//!             program:str engine_version:str
//! var       = index:u32 name:str description:str class:i32 datatype:i32
//!             verbosity:i32 bind:i32 flags:u8 category:i32 enumeration:i32
//!             [object:u64 if flags.OBJECT] [label:str if flags.LABEL]
//!             count:u32 value:u64*count
//!             [mark:u64*count if flags.MARKS]
//! cat       = name:str description:str npvars:u32 index:u32* nsub:u32 index:u32*
//! enum      = name:str nitems:u32 (value:i32 name:str)*
//! str       = len:u32 utf8-bytes
//! ```
//!
//! Class, datatype, verbosity and bind are the MPI_T constants
//! (`MPI_T_PVAR_CLASS_COUNTER` = 10, `MPI_DOUBLE` = 0x214, …); `-1` means
//! "none" for category and enumeration. Values are bit patterns read by
//! the datatype (see [`Number::to_bits`]).
//!
//! **Decoding never trusts a length.** Every read checks the bytes left;
//! a count is refused before anything is allocated for it unless the bytes
//! left could hold that many items at their smallest; strings must be
//! UTF-8; enumerations and indices must be valid MPI_T values; references
//! (category, enumeration, sub-category) must point inside the snapshot.
//! Any violation is a [`WireError`], never a panic, and the work is
//! bounded by the input's length.

use super::snapshot::{CategorySnapshot, EnumSnapshot, Number, ProcessInfo, Snapshot, VarSnapshot};
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass, Verbosity};

/// The payload format's version. A reader refuses any other.
pub const PAYLOAD_VERSION: u32 = 2;

const FLAG_READONLY: u8 = 1;
const FLAG_CONTINUOUS: u8 = 2;
const FLAG_ATOMIC: u8 = 4;
const FLAG_ACTIVE: u8 = 8;
const FLAG_OBJECT: u8 = 16;
const FLAG_MARKS: u8 = 32;
const FLAG_LABEL: u8 = 64;
const FLAGS_KNOWN: u8 = 127;

/// Why a payload was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// Byte offset where decoding stopped.
    pub at: usize,
    /// What was wrong there.
    pub what: String,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed snapshot at byte {}: {}", self.at, self.what)
    }
}

impl std::error::Error for WireError {}

/// Encodes `snap` (appending to `out`).
pub fn encode(snap: &Snapshot, out: &mut Vec<u8>) {
    let mut e = Encoder(out);
    e.u32(PAYLOAD_VERSION);
    let p = &snap.process;
    e.u32(p.pid);
    e.u64(p.sequence);
    e.u64(p.monotonic_ns);
    e.u64(p.unix_ns);
    e.u32(p.live_threads);
    e.str(&p.program);
    e.str(&p.engine_version);
    e.len(snap.variables.len());
    for v in &snap.variables {
        e.len(v.index);
        e.str(&v.name);
        e.str(&v.description);
        e.i32(v.class.raw());
        e.i32(v.datatype.raw());
        e.i32(v.verbosity.raw());
        e.i32(v.bind.raw());
        let flags = [
            (v.readonly, FLAG_READONLY),
            (v.continuous, FLAG_CONTINUOUS),
            (v.atomic, FLAG_ATOMIC),
            (v.active, FLAG_ACTIVE),
            (v.object.is_some(), FLAG_OBJECT),
            (v.marks.is_some(), FLAG_MARKS),
            (v.object.is_some() && v.object_label.is_some(), FLAG_LABEL),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0u8, |f, (_, bit)| f | bit);
        e.0.push(flags);
        e.opt_index(v.category);
        e.opt_index(v.enumeration);
        if let Some(o) = v.object {
            e.u64(o);
            if let Some(label) = &v.object_label {
                e.str(label);
            }
        }
        e.len(v.values.len());
        for n in &v.values {
            e.u64(n.to_bits());
        }
        if let Some(marks) = &v.marks {
            // As many marks as values: the reader takes `count` of each.
            for i in 0..v.values.len() {
                e.u64(marks.get(i).map_or(0, |n| n.to_bits()));
            }
        }
    }
    e.len(snap.categories.len());
    for c in &snap.categories {
        e.str(&c.name);
        e.str(&c.description);
        e.indices(&c.pvars);
        e.indices(&c.subcategories);
    }
    e.len(snap.enumerations.len());
    for en in &snap.enumerations {
        e.str(&en.name);
        e.len(en.items.len());
        for (value, name) in &en.items {
            e.i32(*value);
            e.str(name);
        }
    }
}

/// Decodes a payload written by [`encode`]. See the module documentation
/// for what is checked.
pub fn decode(bytes: &[u8]) -> Result<Snapshot, WireError> {
    let mut d = Decoder { bytes, at: 0 };
    let version = d.u32()?;
    if version != PAYLOAD_VERSION {
        return Err(d.error(format!(
            "payload version {version}, this reader understands {PAYLOAD_VERSION}"
        )));
    }
    let process = ProcessInfo {
        pid: d.u32()?,
        sequence: d.u64()?,
        monotonic_ns: d.u64()?,
        unix_ns: d.u64()?,
        live_threads: d.u32()?,
        program: d.str()?,
        engine_version: d.str()?,
    };
    // Smallest variable: index, two empty strings, four enums, flags,
    // two references, count = 4+8+16+1+8+4 bytes.
    let nvars = d.count(41)?;
    let mut variables = Vec::with_capacity(nvars);
    for _ in 0..nvars {
        let index = d.u32()? as usize;
        let name = d.str()?;
        let description = d.str()?;
        let class = d.abi("class", PvarClass::from_raw)?;
        let datatype = d.abi("datatype", Datatype::from_raw)?;
        let verbosity = d.abi("verbosity", Verbosity::from_raw)?;
        let bind = d.abi("bind kind", BindKind::from_raw)?;
        let flags = d.u8()?;
        if flags & !FLAGS_KNOWN != 0 {
            return Err(d.error(format!("unknown variable flags {flags:#x}")));
        }
        let category = d.opt_index()?;
        let enumeration = d.opt_index()?;
        let object = if flags & FLAG_OBJECT != 0 {
            Some(d.u64()?)
        } else {
            None
        };
        let object_label = match (object, flags & FLAG_LABEL != 0) {
            (Some(_), true) => Some(d.str()?),
            (None, true) => return Err(d.error("an object label without an object".into())),
            (_, false) => None,
        };
        let count = d.count(8)?;
        let values = (0..count)
            .map(|_| d.u64().map(|b| Number::from_bits(datatype, b)))
            .collect::<Result<Vec<_>, _>>()?;
        let marks = if flags & FLAG_MARKS != 0 {
            Some(
                (0..count)
                    .map(|_| d.u64().map(|b| Number::from_bits(datatype, b)))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        } else {
            None
        };
        variables.push(VarSnapshot {
            index,
            name,
            description,
            class,
            datatype,
            verbosity,
            bind,
            object,
            object_label,
            readonly: flags & FLAG_READONLY != 0,
            continuous: flags & FLAG_CONTINUOUS != 0,
            atomic: flags & FLAG_ATOMIC != 0,
            active: flags & FLAG_ACTIVE != 0,
            category,
            enumeration,
            values,
            marks,
        });
    }
    let ncats = d.count(16)?;
    let mut categories = Vec::with_capacity(ncats);
    for _ in 0..ncats {
        categories.push(CategorySnapshot {
            name: d.str()?,
            description: d.str()?,
            pvars: d.indices()?,
            subcategories: d.indices()?,
        });
    }
    let nenums = d.count(8)?;
    let mut enumerations = Vec::with_capacity(nenums);
    for _ in 0..nenums {
        let name = d.str()?;
        let nitems = d.count(8)?;
        let items = (0..nitems)
            .map(|_| Ok((d.i32()?, d.str()?)))
            .collect::<Result<Vec<_>, WireError>>()?;
        enumerations.push(EnumSnapshot { name, items });
    }
    if d.at != bytes.len() {
        return Err(d.error(format!("{} bytes after the snapshot", bytes.len() - d.at)));
    }
    // References inside the snapshot.
    for v in &variables {
        if v.category.is_some_and(|c| c >= categories.len()) {
            return Err(d.error(format!("variable {:?}: category out of range", v.name)));
        }
        if v.enumeration.is_some_and(|e| e >= enumerations.len()) {
            return Err(d.error(format!("variable {:?}: enumeration out of range", v.name)));
        }
    }
    if categories
        .iter()
        .any(|c| c.subcategories.iter().any(|&s| s >= categories.len()))
    {
        return Err(d.error("a sub-category index is out of range".into()));
    }
    Ok(Snapshot {
        process,
        variables,
        categories,
        enumerations,
    })
}

struct Encoder<'a>(&'a mut Vec<u8>);

impl Encoder<'_> {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A length or index; the engine's never exceed `u32` (a variable's
    /// elements live in one cell chunk), saturated if one did.
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn opt_index(&mut self, i: Option<usize>) {
        self.i32(i.and_then(|i| i32::try_from(i).ok()).unwrap_or(-1));
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn indices(&mut self, ix: &[usize]) {
        self.len(ix.len());
        for &i in ix {
            self.len(i);
        }
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Decoder<'_> {
    fn error(&self, what: String) -> WireError {
        WireError { at: self.at, what }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let end = self.at.checked_add(N).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.error(format!("truncated: {N} bytes needed")));
        };
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32, WireError> {
        Ok(i32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// A count of items of at least `min_size` bytes each, refused unless
    /// the bytes left could hold them (so nothing is allocated for a
    /// made-up count).
    fn count(&mut self, min_size: usize) -> Result<usize, WireError> {
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(min_size) > left {
            return Err(self.error(format!("count {n} exceeds the {left} bytes left")));
        }
        Ok(n)
    }

    fn str(&mut self) -> Result<String, WireError> {
        let n = self.count(1)?;
        let s = &self.bytes[self.at..self.at + n];
        let s = std::str::from_utf8(s)
            .map_err(|_| self.error("a string is not UTF-8".into()))?
            .to_string();
        self.at += n;
        Ok(s)
    }

    fn opt_index(&mut self) -> Result<Option<usize>, WireError> {
        match self.i32()? {
            -1 => Ok(None),
            i if i >= 0 => Ok(Some(i as usize)),
            i => Err(self.error(format!("reference {i} is neither an index nor -1"))),
        }
    }

    fn indices(&mut self) -> Result<Vec<usize>, WireError> {
        let n = self.count(4)?;
        (0..n).map(|_| self.u32().map(|i| i as usize)).collect()
    }

    fn abi<T>(&mut self, what: &str, from: fn(i32) -> Option<T>) -> Result<T, WireError> {
        let raw = self.i32()?;
        from(raw).ok_or_else(|| self.error(format!("{raw:#x} is not an MPI_T {what}")))
    }
}
