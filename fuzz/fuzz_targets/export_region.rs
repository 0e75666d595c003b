//! The export region's reader against hostile input: a header with
//! fuzzer-chosen slot descriptors, publish count and state over a
//! fuzzer-chosen body, read through `Region` (the file path a `pvar read`
//! takes), and the payload decoder on its own.
//!
//! Properties: nothing panics, hangs or reads out of bounds; a payload the
//! decoder accepts re-encodes to bytes that decode to the same snapshot;
//! a region whose newest slot is well-formed (even seq, in bounds, right
//! checksum, decodable payload) is read.

#![no_main]

use std::os::unix::fs::{FileExt, OpenOptionsExt};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pvar::export::{Region, RegionError, region, wire};

#[derive(Arbitrary, Debug)]
struct Slot {
    seq: u64,
    offset: u16,
    len: u16,
    /// Use the right checksum of the bytes the slot points at.
    good_sum: bool,
    sum: u64,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Header bytes to overwrite (offset, value) after building a valid one.
    header_edits: Vec<(u8, u8)>,
    published: u64,
    closed: bool,
    slots: [Slot; 2],
    body: Vec<u8>,
    /// Truncate the file to this many bytes (if smaller).
    truncate: Option<u16>,
}

fn header(input: &Input, pid: u32, uid: u32) -> Vec<u8> {
    let mut h = vec![0u8; 256];
    h[..8].copy_from_slice(b"PVAREXP\0");
    h[8..12].copy_from_slice(&region::REGION_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&256u32.to_le_bytes());
    h[16..20].copy_from_slice(&pid.to_le_bytes());
    h[20..24].copy_from_slice(&uid.to_le_bytes());
    h[40..48].copy_from_slice(&input.published.to_le_bytes());
    h[48..56].copy_from_slice(&u64::from(input.closed).to_le_bytes());
    for (i, s) in input.slots.iter().enumerate() {
        let at = 64 + 32 * i;
        let offset = 256 + u64::from(s.offset);
        let len = u64::from(s.len);
        let sum = if s.good_sum {
            let start = (offset - 256) as usize;
            let end = (start + len as usize).min(input.body.len());
            region::checksum(input.body.get(start..end).unwrap_or_default())
        } else {
            s.sum
        };
        h[at..at + 8].copy_from_slice(&s.seq.to_le_bytes());
        h[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
        h[at + 16..at + 24].copy_from_slice(&len.to_le_bytes());
        h[at + 24..at + 32].copy_from_slice(&sum.to_le_bytes());
    }
    for &(at, v) in &input.header_edits {
        h[at as usize] = v;
    }
    h
}

fuzz_target!(|input: Input| {
    // The decoder alone, on the raw body.
    if let Ok(snap) = wire::decode(&input.body) {
        let mut again = Vec::new();
        wire::encode(&snap, &mut again);
        assert_eq!(wire::decode(&again).as_ref(), Ok(&snap), "re-encoding changes the snapshot");
    }

    // The file reader on a region built from the input.
    let pid = std::process::id();
    let uid = region::effective_uid();
    let path = std::env::temp_dir().join(format!("pvar-fuzz-region.{pid}"));
    let _ = std::fs::remove_file(&path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .expect("temp file");
    let size = 256 + input.body.len() as u64;
    file.write_all_at(&header(&input, pid, uid), 0).unwrap();
    file.write_all_at(&input.body, 256).unwrap();
    if let Some(t) = input.truncate {
        if u64::from(t) < size {
            file.set_len(u64::from(t)).unwrap();
        }
    }
    drop(file);
    // Whether the newest slot is well-formed: then the read must succeed.
    let newest = &input.slots[(input.published % 2) as usize];
    let start = usize::from(newest.offset);
    let end = start + usize::from(newest.len);
    let file_len = input.truncate.map_or(size, |t| u64::from(t).min(size));
    let expect_ok = input.header_edits.is_empty()
        && !input.closed
        && input.published > 0
        && newest.seq != 0
        && newest.seq % 2 == 0
        && newest.good_sum
        && end <= input.body.len()
        && 256 + end as u64 <= file_len
        && wire::decode(&input.body[start..end]).is_ok();
    match Region::open_path(&path, pid) {
        Ok(r) => {
            let mut r = r.with_attempts(1);
            match pvar::export::read(&mut r) {
                Ok(snap) => {
                    let mut bytes = Vec::new();
                    wire::encode(&snap, &mut bytes);
                    assert!(wire::decode(&bytes).is_ok());
                }
                Err(
                    RegionError::Closed
                    | RegionError::Inconsistent(_)
                    | RegionError::Version(_)
                    | RegionError::Io(_),
                ) => {}
                Err(e) => panic!("unexpected error for a region of our own: {e}"),
            }
            if expect_ok {
                assert!(pvar::export::read(&mut r).is_ok(), "a well-formed newest slot was not read");
            }
        }
        Err(RegionError::Version(_) | RegionError::Refused(_)) => {
            assert!(!expect_ok || file_len < 256, "a well-formed region was refused");
        }
        Err(e) => panic!("unexpected open error: {e}"),
    }
    let _ = std::fs::remove_file(&path);
});
