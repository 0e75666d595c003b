//! A rank's payload: a small versioned envelope (rank, wall time, object
//! labels) around the snapshot's [`wire`](crate::export::wire) encoding.
//!
//! ```text
//! payload  = magic:"PVRR" version:u32 rank:u32 elapsed_ns:u64
//!            nlabels:u32 (object:u64 label:str)* snapshot
//! str      = len:u32 utf8-bytes
//! snapshot = the rest of the payload, as `pvar::export::wire::encode` writes it
//! ```
//!
//! Little-endian. `rank` is `0xffff_ffff` when unknown, `elapsed_ns`
//! `u64::MAX`. Decoding checks every length against the bytes left before
//! allocating, requires UTF-8 labels, and hands the rest to the snapshot
//! decoder (itself hostile-input safe): any defect is a
//! [`ReportError::Payload`], never a panic.

use std::time::Duration;

use super::{RankInput, ReportError};
use crate::export::wire as snapshot_wire;

/// The envelope format's version. A reader refuses any other.
pub const ENVELOPE_VERSION: u32 = 1;

const MAGIC: &[u8; 4] = b"PVRR";
const NO_RANK: u32 = u32::MAX;
const NO_ELAPSED: u64 = u64::MAX;

/// Encodes a rank's input (envelope and snapshot).
pub fn encode_payload(input: &RankInput) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&ENVELOPE_VERSION.to_le_bytes());
    out.extend_from_slice(&input.rank.unwrap_or(NO_RANK).to_le_bytes());
    let elapsed = input.elapsed.map_or(NO_ELAPSED, |d| {
        u64::try_from(d.as_nanos()).unwrap_or(NO_ELAPSED - 1)
    });
    out.extend_from_slice(&elapsed.to_le_bytes());
    // Labels beyond u32::MAX (or longer than u32::MAX bytes) cannot be
    // written: they are left out rather than making the payload unreadable.
    let labels: Vec<&(u64, String)> = input
        .labels
        .iter()
        .filter(|(_, l)| u32::try_from(l.len()).is_ok())
        .take(u32::MAX as usize)
        .collect();
    out.extend_from_slice(&(labels.len() as u32).to_le_bytes());
    for (object, label) in labels {
        out.extend_from_slice(&object.to_le_bytes());
        out.extend_from_slice(&(label.len() as u32).to_le_bytes());
        out.extend_from_slice(label.as_bytes());
    }
    snapshot_wire::encode(&input.snapshot, &mut out);
    out
}

/// Decodes a payload written by [`encode_payload`]. See the module
/// documentation for what is checked.
pub fn decode_payload(bytes: &[u8]) -> Result<RankInput, ReportError> {
    let mut d = Reader { bytes, at: 0 };
    let magic = d.take::<4>()?;
    if &magic != MAGIC {
        return Err(d.error(0, "not a pvar rank payload (bad magic)".into()));
    }
    let version = d.u32()?;
    if version != ENVELOPE_VERSION {
        return Err(d.error(
            4,
            format!("envelope version {version}, this reader understands {ENVELOPE_VERSION}"),
        ));
    }
    let rank = match d.u32()? {
        NO_RANK => None,
        r => Some(r),
    };
    let elapsed = match d.u64()? {
        NO_ELAPSED => None,
        ns => Some(Duration::from_nanos(ns)),
    };
    // Smallest label: object and an empty string, 12 bytes.
    let n = d.u32()? as usize;
    let left = bytes.len() - d.at;
    if n.saturating_mul(12) > left {
        return Err(d.error(d.at, format!("{n} labels exceed the {left} bytes left")));
    }
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let object = d.u64()?;
        let len = d.u32()? as usize;
        let start = d.at;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| d.error(start, format!("a label of {len} bytes is truncated")))?;
        let label = std::str::from_utf8(&bytes[start..end])
            .map_err(|_| d.error(start, "a label is not UTF-8".into()))?
            .to_string();
        d.at = end;
        labels.push((object, label));
    }
    let at = d.at;
    let snapshot = snapshot_wire::decode(&bytes[at..]).map_err(|e| ReportError::Payload {
        rank: None,
        at: at + e.at,
        what: e.what,
    })?;
    Ok(RankInput {
        rank,
        snapshot,
        labels,
        elapsed,
    })
}

/// Decodes the payloads of ranks `0..lens.len()` laid end to end in `all`
/// (as a variable-count gather leaves them): rank `i`'s payload is
/// `lens[i]` bytes after the previous one's. The lengths must add up to
/// `all.len()` exactly. Errors name the rank.
pub fn decode_concatenated(all: &[u8], lens: &[usize]) -> Result<Vec<RankInput>, ReportError> {
    let mut at = 0usize;
    let mut out = Vec::with_capacity(lens.len().min(all.len()));
    for (rank, &len) in lens.iter().enumerate() {
        let end = at
            .checked_add(len)
            .filter(|&e| e <= all.len())
            .ok_or_else(|| {
                ReportError::Transport(format!(
                    "rank {rank}'s payload of {len} bytes runs past the {} bytes gathered",
                    all.len()
                ))
            })?;
        let input = decode_payload(&all[at..end]).map_err(|e| match e {
            ReportError::Payload { at, what, .. } => ReportError::Payload {
                rank: Some(rank),
                at,
                what,
            },
            other => other,
        })?;
        out.push(input);
        at = end;
    }
    if at != all.len() {
        return Err(ReportError::Transport(format!(
            "{} bytes gathered after the last payload",
            all.len() - at
        )));
    }
    Ok(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, at: usize, what: String) -> ReportError {
        ReportError::Payload {
            rank: None,
            at,
            what,
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], ReportError> {
        let end = self.at.checked_add(N).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.error(self.at, format!("truncated: {N} bytes needed")));
        };
        let mut out = [0u8; N];
        out.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, ReportError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, ReportError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::snapshot::Snapshot;
    use crate::registry::Registry;

    fn sample() -> RankInput {
        let reg = Registry::new();
        reg.counter("c").register().unwrap().add(3);
        RankInput {
            rank: Some(2),
            snapshot: Snapshot::take(&reg),
            labels: vec![(7, "MPI_COMM_WORLD".into()), (9, "comm[0-1]".into())],
            elapsed: Some(Duration::from_millis(1500)),
        }
    }

    #[test]
    fn round_trips() {
        let input = sample();
        assert_eq!(decode_payload(&encode_payload(&input)).unwrap(), input);
        let unknown = RankInput {
            rank: None,
            elapsed: None,
            ..input
        };
        assert_eq!(decode_payload(&encode_payload(&unknown)).unwrap(), unknown);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = encode_payload(&sample());
        for n in 0..bytes.len() {
            assert!(decode_payload(&bytes[..n]).is_err(), "prefix of {n} bytes");
        }
    }

    #[test]
    fn concatenated_payloads_name_the_bad_rank() {
        let a = encode_payload(&sample());
        let mut all = a.clone();
        all.extend_from_slice(&a[..a.len() - 1]);
        let err = decode_concatenated(&all, &[a.len(), a.len() - 1]).unwrap_err();
        assert!(
            matches!(err, ReportError::Payload { rank: Some(1), .. }),
            "{err}"
        );
        assert!(decode_concatenated(&all, &[a.len(), a.len()]).is_err());
        assert!(decode_concatenated(&all, &[a.len()]).is_err());
        assert!(decode_concatenated(&all, &[usize::MAX, 1]).is_err());
    }
}
