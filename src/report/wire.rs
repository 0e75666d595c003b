//! A [`Partial`] as bytes, for the reduction's messages.
//!
//! ```text
//! partial  = magic:"PVRP" version:u32 nranks:u32 matrix_bins:u32 profile_bins:u32 top_pairs:u32
//!            problems ranks nstrings:u32 str* nentries:u32 entry* nseries:u32 series*
//! problems = count:u64 has:u8 [rank:u32 why:str]
//! ranks    = count:u64 elapsed:acc threads:acc has:u8 [min_ns:u64 max_ns:u64]
//!            tally(programs) tally(engines) npids:u32 (rank:u32 pid:u32)*
//! tally    = n:u32 (name:str ranks:u64 first:u32)* other:u64
//! entry    = name:sref class:i32 instance first_rank:u32 first_index:u32 datatype:i32 bind:i32
//!            has:u8 [category:sref] description:sref conflicts:u64 body
//! instance = 0 | 1 label:sref | 2 object:u64
//! sref     = u32, an index into the strings before the entries (each
//!            name, label, category and description once: a communicator's
//!            label is shared by its variables, a description by the
//!            instances of its variable)
//! body     = 0 n:u32 acc* | 1 sent:acc ncells:u32 (row:u32 col:u32 sum)* npairs:u32 (from:u32 to:u32 number)*
//! series   = name:str unit:u8 nbins:u32 (bin:u32 acc)*
//! acc      = n:u64 sum min:number min_rank:u32 max:number max_rank:u32
//! sum      = int:i128 float:f64 flags:u8        (1 double, 2 signed, 4 nonzero: in acc only)
//! number   = tag:u8 (0 unsigned, 1 signed, 2 double) bits:u64
//! str      = len:u32 utf8-bytes
//! ```
//!
//! Little-endian. The decoder treats its input as hostile: every count is
//! checked against the bytes left before anything is allocated, enums
//! against their values, keys, cells and bins must be sorted and unique,
//! ranks and blocks within the job; any defect is a
//! [`ReportError::Payload`], never a panic.

use super::input::ReportError;
use super::partial::Instance;
use super::partial::Partial;
use super::partial::{
    Body, Cell, Entry, Key, MAX_NAMES, MAX_PIDS, Pair, PeerAcc, Problems, RanksAcc, SeriesAcc,
    Shape, Tally,
};
use super::stats::{Acc, Sum};
use crate::export::snapshot::Number;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::kinds::{BindKind, PvarClass};

/// The format's version. A reader refuses any other.
pub const PARTIAL_VERSION: u32 = 2;

const MAGIC: &[u8; 4] = b"PVRP";

const NUMBER_BYTES: usize = 9;
const SUM_BYTES: usize = 16 + 8 + 1;
const ACC_BYTES: usize = 8 + SUM_BYTES + 2 * (NUMBER_BYTES + 4);

impl Partial {
    /// The partial as bytes (see [`Partial::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.u32(PARTIAL_VERSION);
        let s = &self.shape;
        for x in [s.nranks, s.matrix_bins, s.profile_bins, s.top_pairs] {
            w.u32(x);
        }
        w.u64(self.problems.count);
        match &self.problems.first {
            Some((rank, why)) => {
                w.u8(1);
                w.u32(*rank);
                w.str(why);
            }
            None => w.u8(0),
        }
        let r = &self.ranks;
        w.u64(r.count);
        w.acc(&r.elapsed);
        w.acc(&r.live_threads);
        match r.unix_ns {
            Some((a, b)) => {
                w.u8(1);
                w.u64(a);
                w.u64(b);
            }
            None => w.u8(0),
        }
        w.tally(&r.programs);
        w.tally(&r.engines);
        w.len(r.pids.len());
        for &(rank, pid) in &r.pids {
            w.u32(rank);
            w.u32(pid);
        }
        let mut strings = Strings::default();
        for e in &self.entries {
            strings.add(&e.key.name);
            if let Instance::Labelled(l) = &e.key.instance {
                strings.add(l);
            }
            if let Some(c) = &e.category {
                strings.add(c);
            }
            strings.add(&e.description);
        }
        w.len(strings.list.len());
        for s in &strings.list {
            w.str(s);
        }
        w.len(self.entries.len());
        for e in &self.entries {
            w.entry(e, &strings);
        }
        w.len(self.profile.len());
        for s in &self.profile {
            w.str(&s.name);
            w.u8(match s.unit {
                None => 0,
                Some("seconds") => 1,
                Some(_) => 2,
            });
            w.len(s.bins.len());
            for (bin, acc) in &s.bins {
                w.u32(*bin);
                w.acc(acc);
            }
        }
        w.0
    }

    /// A partial from the bytes of [`Partial::encode`]. See the module
    /// documentation of [`report`](super) for what is checked.
    pub fn decode(bytes: &[u8]) -> Result<Partial, ReportError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take::<4>()? != *MAGIC {
            return Err(r.error(0, "not a pvar report partial (bad magic)".into()));
        }
        let version = r.u32()?;
        if version != PARTIAL_VERSION {
            return Err(r.error(
                4,
                format!("partial version {version}, this reader understands {PARTIAL_VERSION}"),
            ));
        }
        let shape = Shape {
            nranks: r.u32()?,
            matrix_bins: r.u32()?,
            profile_bins: r.u32()?,
            top_pairs: r.u32()?,
        };
        if shape.nranks == 0
            || !(1..=shape.nranks).contains(&shape.matrix_bins)
            || !(1..=shape.nranks).contains(&shape.profile_bins)
        {
            return Err(r.error(8, format!("an impossible shape {shape:?}")));
        }
        let problems = Problems {
            count: r.u64()?,
            first: match r.flag()? {
                true => Some((r.rank(shape.nranks)?, r.str()?)),
                false => None,
            },
        };
        let ranks = RanksAcc {
            count: r.u64()?,
            elapsed: r.acc(shape.nranks)?,
            live_threads: r.acc(shape.nranks)?,
            unix_ns: match r.flag()? {
                true => Some((r.u64()?, r.u64()?)),
                false => None,
            },
            programs: r.tally(shape.nranks)?,
            engines: r.tally(shape.nranks)?,
            pids: {
                let n = r.count(8)?;
                if n > MAX_PIDS {
                    return Err(r.error(r.at, format!("{n} pids, at most {MAX_PIDS}")));
                }
                let mut pids = Vec::with_capacity(n);
                for _ in 0..n {
                    pids.push((r.rank(shape.nranks)?, r.u32()?));
                }
                r.sorted(&pids, |a, b| a.0 < b.0, "pids")?;
                pids
            },
        };
        let n = r.count(4)?;
        let mut strings = Vec::with_capacity(n);
        for _ in 0..n {
            strings.push(r.str()?);
        }
        let n = r.count(4 + 4 + 1 + 8 + 4 + 4 + 1 + 4 + 8 + 1)?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            entries.push(r.entry(shape, &strings)?);
        }
        r.sorted(&entries, |a, b| a.key < b.key, "variables")?;
        let n = r.count(4 + 1 + 4)?;
        let mut profile = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.str()?;
            let unit = match r.u8()? {
                0 => None,
                1 => Some("seconds"),
                2 => Some("ratio"),
                u => return Err(r.error(r.at - 1, format!("unknown unit {u}"))),
            };
            let nbins = r.count(4 + ACC_BYTES)?;
            let mut bins = Vec::with_capacity(nbins);
            for _ in 0..nbins {
                let at = r.at;
                let bin = r.u32()?;
                if bin >= shape.profile_bins {
                    return Err(r.error(at, format!("profile block {bin} out of range")));
                }
                bins.push((bin, r.acc(shape.nranks)?));
            }
            r.sorted(&bins, |a, b| a.0 < b.0, "profile blocks")?;
            profile.push(SeriesAcc { name, unit, bins });
        }
        r.sorted(&profile, |a, b| a.name < b.name, "profile series")?;
        if r.at != bytes.len() {
            return Err(r.error(r.at, format!("{} bytes after the end", bytes.len() - r.at)));
        }
        Ok(Partial {
            shape,
            ranks,
            entries,
            profile,
            problems,
        })
    }
}

/// The distinct strings of a partial's entries, in order of first use.
#[derive(Default)]
struct Strings<'a> {
    list: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, u32>,
}

impl<'a> Strings<'a> {
    fn add(&mut self, s: &'a str) {
        if !self.index.contains_key(s) {
            self.index.insert(s, self.list.len() as u32);
            self.list.push(s);
        }
    }

    fn of(&self, s: &str) -> u32 {
        self.index[s]
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn i32(&mut self, x: i32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    /// A count: every list a partial holds is far below 2^32 entries.
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn str(&mut self, s: &str) {
        // Names and labels longer than 4 GiB cannot occur; cut rather than
        // write an unreadable partial.
        let mut end = s.len().min(u32::MAX as usize);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.len(end);
        self.0.extend_from_slice(&s.as_bytes()[..end]);
    }
    fn number(&mut self, n: Number) {
        let (tag, bits) = match n {
            Number::Unsigned(u) => (0, u),
            Number::Signed(i) => (1, i as u64),
            Number::Double(d) => (2, d.to_bits()),
        };
        self.u8(tag);
        self.u64(bits);
    }
    fn sum(&mut self, s: &Sum, nonzero: bool) {
        self.0.extend_from_slice(&s.int.to_le_bytes());
        self.u64(s.float.to_bits());
        self.u8(u8::from(s.double) | u8::from(s.signed) << 1 | u8::from(nonzero) << 2);
    }
    fn acc(&mut self, a: &Acc) {
        self.u64(a.n);
        self.sum(&a.sum, a.nonzero);
        self.number(a.min);
        self.u32(a.min_rank);
        self.number(a.max);
        self.u32(a.max_rank);
    }
    fn tally(&mut self, t: &Tally) {
        self.len(t.names.len());
        for (name, n, first) in &t.names {
            self.str(name);
            self.u64(*n);
            self.u32(*first);
        }
        self.u64(t.other);
    }
    fn entry(&mut self, e: &Entry, strings: &Strings<'_>) {
        self.u32(strings.of(&e.key.name));
        self.i32(e.key.class.raw());
        match &e.key.instance {
            Instance::Process => self.u8(0),
            Instance::Labelled(l) => {
                self.u8(1);
                self.u32(strings.of(l));
            }
            Instance::Object(o) => {
                self.u8(2);
                self.u64(*o);
            }
        }
        self.u32(e.first.0);
        self.u32(e.first.1);
        self.i32(e.datatype.raw());
        self.i32(e.bind.raw());
        match &e.category {
            Some(c) => {
                self.u8(1);
                self.u32(strings.of(c));
            }
            None => self.u8(0),
        }
        self.u32(strings.of(&e.description));
        self.u64(e.conflicts);
        match &e.body {
            Body::Elements(accs) => {
                self.u8(0);
                self.len(accs.len());
                accs.iter().for_each(|a| self.acc(a));
            }
            Body::Peer(p) => {
                self.u8(1);
                self.acc(&p.sent);
                self.len(p.cells.len());
                for c in &p.cells {
                    self.u32(c.row);
                    self.u32(c.col);
                    self.sum(&c.sum, false);
                }
                self.len(p.top.len());
                for t in &p.top {
                    self.u32(t.from);
                    self.u32(t.to);
                    self.number(t.value);
                }
            }
        }
    }
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

    fn u8(&mut self) -> Result<u8, ReportError> {
        Ok(self.take::<1>()?[0])
    }
    fn flag(&mut self) -> Result<bool, ReportError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error(self.at - 1, format!("a flag of {b}"))),
        }
    }
    fn u32(&mut self) -> Result<u32, ReportError> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32, ReportError> {
        Ok(i32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, ReportError> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    /// A rank below `nranks`.
    fn rank(&mut self, nranks: u32) -> Result<u32, ReportError> {
        let at = self.at;
        let r = self.u32()?;
        if r >= nranks {
            return Err(self.error(at, format!("rank {r} of a job of {nranks}")));
        }
        Ok(r)
    }
    /// A count of items of at least `min_size` bytes each, checked
    /// against the bytes left.
    fn count(&mut self, min_size: usize) -> Result<usize, ReportError> {
        let at = self.at;
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(min_size) > left {
            return Err(self.error(at, format!("{n} items exceed the {left} bytes left")));
        }
        Ok(n)
    }
    fn str(&mut self) -> Result<String, ReportError> {
        let len = self.count(1)?;
        let start = self.at;
        let s = std::str::from_utf8(&self.bytes[start..start + len])
            .map_err(|_| self.error(start, "a string is not UTF-8".into()))?;
        self.at += len;
        Ok(s.to_string())
    }
    fn number(&mut self) -> Result<Number, ReportError> {
        let at = self.at;
        let tag = self.u8()?;
        let bits = self.u64()?;
        match tag {
            0 => Ok(Number::Unsigned(bits)),
            1 => Ok(Number::Signed(bits as i64)),
            2 => Ok(Number::Double(f64::from_bits(bits))),
            t => Err(self.error(at, format!("a number of kind {t}"))),
        }
    }
    fn sum(&mut self) -> Result<(Sum, bool), ReportError> {
        let int = i128::from_le_bytes(self.take()?);
        let float = f64::from_bits(self.u64()?);
        let at = self.at;
        let flags = self.u8()?;
        if flags & !7 != 0 {
            return Err(self.error(at, format!("flags {flags:#x}")));
        }
        Ok((
            Sum {
                int,
                float,
                double: flags & 1 != 0,
                signed: flags & 2 != 0,
            },
            flags & 4 != 0,
        ))
    }
    fn acc(&mut self, nranks: u32) -> Result<Acc, ReportError> {
        let n = self.u64()?;
        let (sum, nonzero) = self.sum()?;
        let (min, min_rank) = (self.number()?, self.u32()?);
        let (max, max_rank) = (self.number()?, self.u32()?);
        if n > 0 && (min_rank >= nranks || max_rank >= nranks) {
            return Err(self.error(self.at, format!("a rank beyond the job's {nranks}")));
        }
        Ok(Acc {
            n,
            sum,
            min,
            min_rank,
            max,
            max_rank,
            nonzero,
        })
    }
    fn tally(&mut self, nranks: u32) -> Result<Tally, ReportError> {
        let n = self.count(4 + 8 + 4)?;
        if n > MAX_NAMES {
            return Err(self.error(self.at, format!("{n} names, at most {MAX_NAMES}")));
        }
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            names.push((self.str()?, self.u64()?, self.rank(nranks)?));
        }
        self.sorted(&names, |a, b| a.0 < b.0, "names")?;
        Ok(Tally {
            names,
            other: self.u64()?,
        })
    }
    /// A reference into `strings`.
    fn sref(&mut self, strings: &[String]) -> Result<String, ReportError> {
        let at = self.at;
        let i = self.u32()? as usize;
        strings
            .get(i)
            .cloned()
            .ok_or_else(|| self.error(at, format!("string {i} of {}", strings.len())))
    }

    fn entry(&mut self, shape: Shape, strings: &[String]) -> Result<Entry, ReportError> {
        let name = self.sref(strings)?;
        let at = self.at;
        let class = PvarClass::from_raw(self.i32()?)
            .ok_or_else(|| self.error(at, "an unknown class".into()))?;
        let at = self.at;
        let instance = match self.u8()? {
            0 => Instance::Process,
            1 => Instance::Labelled(self.sref(strings)?),
            2 => Instance::Object(self.u64()?),
            t => return Err(self.error(at, format!("an instance of kind {t}"))),
        };
        let first = (self.rank(shape.nranks)?, self.u32()?);
        let at = self.at;
        let datatype = Datatype::from_raw(self.i32()?)
            .ok_or_else(|| self.error(at, "an unknown datatype".into()))?;
        let at = self.at;
        let bind = BindKind::from_raw(self.i32()?)
            .ok_or_else(|| self.error(at, "an unknown binding".into()))?;
        let category = match self.flag()? {
            true => Some(self.sref(strings)?),
            false => None,
        };
        let description = self.sref(strings)?;
        let conflicts = self.u64()?;
        let at = self.at;
        let body = match self.u8()? {
            0 => {
                let n = self.count(ACC_BYTES)?;
                let mut accs = Vec::with_capacity(n);
                for _ in 0..n {
                    accs.push(self.acc(shape.nranks)?);
                }
                Body::Elements(accs)
            }
            1 => {
                let sent = self.acc(shape.nranks)?;
                let n = self.count(8 + SUM_BYTES)?;
                let mut cells = Vec::with_capacity(n);
                for _ in 0..n {
                    let at = self.at;
                    let (row, col) = (self.u32()?, self.u32()?);
                    if row >= shape.matrix_bins || col >= shape.matrix_bins {
                        return Err(
                            self.error(at, format!("matrix block ({row}, {col}) out of range"))
                        );
                    }
                    cells.push(Cell {
                        row,
                        col,
                        sum: self.sum()?.0,
                    });
                }
                self.sorted(
                    &cells,
                    |a, b| (a.row, a.col) < (b.row, b.col),
                    "matrix blocks",
                )?;
                let n = self.count(8 + NUMBER_BYTES)?;
                if n > shape.top_pairs as usize {
                    return Err(
                        self.error(self.at, format!("{n} pairs, at most {}", shape.top_pairs))
                    );
                }
                let mut top = Vec::with_capacity(n);
                for _ in 0..n {
                    top.push(Pair {
                        from: self.rank(shape.nranks)?,
                        to: self.rank(shape.nranks)?,
                        value: self.number()?,
                    });
                }
                Body::Peer(PeerAcc { sent, cells, top })
            }
            t => return Err(self.error(at, format!("a body of kind {t}"))),
        };
        Ok(Entry {
            key: Key {
                name,
                class,
                instance,
            },
            first,
            datatype,
            bind,
            category,
            description,
            body,
            conflicts,
        })
    }
    /// Checks that `items` are in strictly increasing order.
    fn sorted<T>(
        &self,
        items: &[T],
        less: impl Fn(&T, &T) -> bool,
        what: &str,
    ) -> Result<(), ReportError> {
        if items.windows(2).all(|w| less(&w[0], &w[1])) {
            Ok(())
        } else {
            Err(self.error(self.at, format!("the {what} are not sorted and unique")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::report::{Collector, ReportOptions};

    fn sample() -> Partial {
        let reg = Registry::new();
        let mut collector = Collector::new(&reg);
        reg.counter("c").register().unwrap().add(3);
        let peer = reg.counter("to_peer").count(4).register().unwrap();
        peer.add_at(1, 5);
        peer.add_at(3, 7);
        reg.timer("t")
            .register()
            .unwrap()
            .add_elapsed(std::time::Duration::from_millis(5));
        let input = collector.input(Some(2), vec![(7, "MPI_COMM_WORLD".into())]);
        Partial::of_rank(&input, 2, 4, &ReportOptions::default())
    }

    #[test]
    fn round_trips() {
        let p = sample();
        assert_eq!(Partial::decode(&p.encode()).unwrap(), p);
        let mut q = Partial::missing(0, 4, &ReportOptions::default(), "gone");
        q.merge(p);
        assert_eq!(Partial::decode(&q.encode()).unwrap(), q);
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused_or_read() {
        let bytes = sample().encode();
        for n in 0..bytes.len() {
            assert!(Partial::decode(&bytes[..n]).is_err(), "prefix of {n} bytes");
        }
        // A flipped byte may still decode (a value changed), but never panics.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            let _ = Partial::decode(&b);
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Partial::decode(&extra).is_err());
    }
}
