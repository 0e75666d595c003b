//! The export region's reader against hostile input: a header with
//! fuzzer-chosen slot descriptors (offsets and lengths up to 4 GiB),
//! publish count and state over a fuzzer-chosen body, a file cut short or
//! grown sparse (a hole after the body, up to 4 GiB), read through
//! `Region` (the file path a `pvar read` takes), and the payload decoder
//! on its own.
//!
//! Properties: nothing panics, hangs or reads out of bounds; nothing is
//! allocated for a payload the file does not hold (run with
//! `-malloc_limit_mb=64`: a claim over a hole allocated would exceed it);
//! a payload the decoder accepts re-encodes to bytes that decode to the
//! same snapshot; a region whose newest slot is well-formed (even seq, in
//! bounds, right checksum, decodable payload) is read.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pvar::export::testing::{self, RegionFile};
use pvar::export::{Region, RegionError, wire};

#[derive(Arbitrary, Debug)]
struct Slot {
    seq: u64,
    offset: u32,
    len: u32,
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
    /// Grow the file by this many bytes past the body, as a hole.
    sparse: Option<u32>,
}

fuzz_target!(|input: Input| {
    // The decoder alone, on the raw body.
    if let Ok(snap) = wire::decode(&input.body) {
        let mut again = Vec::new();
        wire::encode(&snap, &mut again);
        assert_eq!(wire::decode(&again).as_ref(), Ok(&snap), "re-encoding changes the snapshot");
    }

    // The file reader on a region built from the input: the body at 256.
    let pid = std::process::id();
    let uid = testing::effective_uid();
    let path = std::env::temp_dir().join(format!("pvar-fuzz-region.{pid}"));
    let header = testing::HEADER_LEN as u64;
    let body_end = header + input.body.len() as u64;
    let mut file = RegionFile {
        pid,
        uid,
        published: input.published,
        closed: input.closed,
        data: vec![(header, input.body.clone())],
        size: input.sparse.map(|s| body_end + u64::from(s)),
        ..RegionFile::default()
    };
    for (i, s) in input.slots.iter().enumerate() {
        let offset = header + u64::from(s.offset);
        let len = u64::from(s.len);
        let sum = if s.good_sum {
            let start = s.offset as usize;
            let end = start.saturating_add(s.len as usize).min(input.body.len());
            testing::checksum(input.body.get(start..end).unwrap_or_default())
        } else {
            s.sum
        };
        file.slots[i] = (s.seq, offset, len, sum);
    }
    let mut bytes = file.header();
    for &(at, v) in &input.header_edits {
        bytes[at as usize] = v;
    }
    file.write(&path).expect("temp file");
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&bytes, 0).unwrap();
        if let Some(t) = input.truncate {
            if u64::from(t) < body_end {
                f.set_len(u64::from(t)).unwrap();
            }
        }
    }
    // Whether the newest slot is well-formed: then the read must succeed.
    let newest = &input.slots[(input.published % 2) as usize];
    let start = newest.offset as usize;
    let end = start.saturating_add(newest.len as usize);
    let file_len = input.truncate.map_or(body_end, |t| u64::from(t).min(body_end));
    let expect_ok = input.header_edits.is_empty()
        && !input.closed
        && input.published > 0
        && newest.seq != 0
        && newest.seq % 2 == 0
        && newest.good_sum
        && end <= input.body.len()
        && header + end as u64 <= file_len
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
            assert!(!expect_ok || file_len < header, "a well-formed region was refused");
        }
        Err(e) => panic!("unexpected open error: {e}"),
    }
    let _ = std::fs::remove_file(&path);
});
