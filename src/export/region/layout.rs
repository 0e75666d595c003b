//! The bytes of a region file: the header, the two slot descriptors, the
//! payload checksum. Nothing here touches a file.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "PVAREXP\0"
//!      8     4  region version (REGION_VERSION)
//!     12     4  header length (256)
//!     16     4  pid of the writer
//!     20     4  uid of the writer
//!     24     8  the writer's start time (/proc/<pid>/stat field 22, clock ticks after boot)
//!     32     8  publishing interval, nanoseconds
//!     40     8  published: number of complete publishes (the newest is in slot published % 2)
//!     48     8  state: 0 publishing, 1 closed (the exporter stopped)
//!     64    32  slot 0: seq, offset, length, checksum of the payload
//!     96    32  slot 1
//!    128   128  reserved (zero)
//!   4096…       payloads (see `wire.rs`), each slot's at its own offset
//! ```

use super::RegionError;

/// The region layout's version. A reader refuses any other.
pub const REGION_VERSION: u32 = 1;

pub(crate) const MAGIC: [u8; 8] = *b"PVAREXP\0";
/// The header's length, bytes.
pub const HEADER_LEN: usize = 256;
/// Where the first payload goes (payloads start page-aligned).
pub const FIRST_PAYLOAD: u64 = 4096;
pub(crate) const PUBLISHED: u64 = 40;
pub(crate) const STATE: u64 = 48;
pub(crate) const SLOTS: u64 = 64;
pub(crate) const SLOT_LEN: usize = 32;
/// Payloads larger than this are refused by a reader (a snapshot of a
/// million variables is ~64 MiB).
pub const MAX_PAYLOAD: u64 = 256 << 20;

/// The header fields a reader uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionHeader {
    /// The writer's pid.
    pub pid: u32,
    /// The writer's uid.
    pub uid: u32,
    /// The writer's start time (clock ticks after boot; 0 if unknown).
    pub start_time: u64,
    /// The publishing interval, nanoseconds.
    pub interval_ns: u64,
    /// Complete publishes so far.
    pub published: u64,
    /// Whether the exporter stopped.
    pub closed: bool,
}

/// One slot's descriptor: the seqlock word and where its payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotDesc {
    pub(crate) seq: u64,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) checksum: u64,
}

impl SlotDesc {
    pub(crate) fn parse(b: &[u8; SLOT_LEN]) -> SlotDesc {
        SlotDesc {
            seq: le64(b, 0),
            offset: le64(b, 8),
            len: le64(b, 16),
            checksum: le64(b, 24),
        }
    }

    /// Where slot `b` (0 or 1) is in the header.
    pub(crate) fn at(b: usize) -> u64 {
        SLOTS + (b * SLOT_LEN) as u64
    }
}

/// The header a writer starts a region with: nothing published yet.
pub(crate) fn new_header(pid: u32, uid: u32, start_time: u64, interval_ns: u64) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&REGION_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    h[16..20].copy_from_slice(&pid.to_le_bytes());
    h[20..24].copy_from_slice(&uid.to_le_bytes());
    h[24..32].copy_from_slice(&start_time.to_le_bytes());
    h[32..40].copy_from_slice(&interval_ns.to_le_bytes());
    h
}

pub(crate) fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Parses and checks a header (its first 256 bytes or more).
pub(crate) fn parse_header(b: &[u8]) -> Result<RegionHeader, RegionError> {
    if b.len() < HEADER_LEN {
        return Err(RegionError::Version(format!(
            "{} bytes, shorter than a region header",
            b.len()
        )));
    }
    if b[..8] != MAGIC {
        return Err(RegionError::Version("not a pvar export region".into()));
    }
    let version = le32(b, 8);
    if version != REGION_VERSION {
        return Err(RegionError::Version(format!(
            "region version {version}, this reader understands {REGION_VERSION}"
        )));
    }
    if le32(b, 12) as usize != HEADER_LEN {
        return Err(RegionError::Version("unexpected header length".into()));
    }
    Ok(RegionHeader {
        pid: le32(b, 16),
        uid: le32(b, 20),
        start_time: le64(b, 24),
        interval_ns: le64(b, 32),
        published: le64(b, PUBLISHED as usize),
        closed: le64(b, STATE as usize) != 0,
    })
}

/// The payload checksum: a multiply-rotate hash over 8-byte words (the
/// length mixed in first), against torn and corrupt payloads — not
/// against a malicious writer, who owns the file anyway. About 8× faster
/// than a bytewise hash: it was most of a reader's `read_payload`.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let step = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(31);
    let mut words = bytes.chunks_exact(8);
    let mut h = step(0xcbf2_9ce4_8422_2325, bytes.len() as u64);
    for w in &mut words {
        h = step(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = step(h, u64::from_le_bytes(w));
    }
    h ^ (h >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_header_parses_back() {
        let h = parse_header(&new_header(7, 1000, 42, 5)).unwrap();
        assert_eq!(
            h,
            RegionHeader {
                pid: 7,
                uid: 1000,
                start_time: 42,
                interval_ns: 5,
                published: 0,
                closed: false
            }
        );
        let mut bad = new_header(7, 1000, 42, 5);
        bad[8] = 2;
        assert!(
            parse_header(&bad)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
        assert!(parse_header(&bad[..100]).is_err());
    }

    #[test]
    fn the_checksum_sees_length_and_every_byte() {
        assert_ne!(checksum(b""), checksum(&[0]));
        assert_ne!(checksum(&[0; 8]), checksum(&[0; 9]));
        let base = checksum(b"0123456789abcdef0");
        for i in 0..17 {
            let mut b = *b"0123456789abcdef0";
            b[i] ^= 1;
            assert_ne!(checksum(&b), base, "byte {i}");
        }
    }
}
