//! The reduction tree: which rank sends its [`Partial`] to which, and one
//! rank's part of the reduction over any transport ([`reduce`] over a
//! [`Link`]).
//!
//! A binomial tree rooted at rank 0 (ranks relative to the root: rank
//! `(r - root) mod size`): rank `r`'s parent is `r` with its lowest set
//! bit cleared; its children are `r + 2^k` for every `2^k` below that bit
//! (every `2^k` for the root) and below `size`. A rank receives from its
//! children in increasing `k` (the smallest subtree first), merges each
//! into its own partial, then sends the result to its parent. Every rank
//! but the root sends exactly once; the root receives `⌈log2 size⌉`
//! partials. So a rank never holds more than its own partial and one
//! child's, and each is bounded by the variables, communicators and
//! options, not by the number of ranks (see [`Partial`]).
//!
//! The interposer's C half drives the same function through callbacks
//! (`mpi/src/report.rs`); `pvar::report::rsmpi` over rsmpi; a simulation
//! over in-memory mailboxes, processing ranks from the highest down (a
//! rank's children are all above it).

use super::input::{ReportError, ReportOptions};
use super::partial::Partial;

/// How partials move between ranks.
pub trait Link {
    /// Sends `bytes` to rank `to` (an absolute rank).
    fn send(&mut self, to: u32, bytes: &[u8]) -> Result<(), ReportError>;
    /// Receives the bytes rank `from` sends (an absolute rank).
    fn recv(&mut self, from: u32) -> Result<Vec<u8>, ReportError>;
}

/// The parent of relative rank `rank` (`None` for the root, 0).
pub fn parent(rank: u32) -> Option<u32> {
    (rank != 0).then(|| rank & (rank - 1))
}

/// The children of relative rank `rank` in a tree of `size` ranks, in
/// the order they are received from.
pub fn children(rank: u32, size: u32) -> impl Iterator<Item = u32> {
    let limit = if rank == 0 {
        u64::MAX
    } else {
        u64::from(rank & rank.wrapping_neg())
    };
    (0..32)
        .map(|k| 1u64 << k)
        .take_while(move |&bit| bit < limit)
        .map(move |bit| u64::from(rank) + bit)
        .take_while(move |&child| child < u64::from(size))
        .map(|child| child as u32)
}

/// One rank's part of the reduction of a job of `size` ranks to `root`:
/// receives its children's partials (a child whose bytes do not arrive
/// or do not decode is counted as a problem in the report, and the
/// reduction goes on), merges them into `mine`, and sends the result to
/// its parent. Returns the job's partial on the root, `None` elsewhere.
///
/// Collective: every rank of the job calls it with the same `size` and
/// `root`. An error is a failed send (the parent then lacks this subtree:
/// with MPI, a failed send usually ends the job anyway).
pub fn reduce(
    rank: u32,
    size: u32,
    root: u32,
    mut mine: Partial,
    options: &ReportOptions,
    link: &mut impl Link,
) -> Result<Option<Partial>, ReportError> {
    if size == 0 || rank >= size || root >= size {
        return Err(ReportError::Ranks(format!(
            "rank {rank} and root {root} in a job of {size} ranks"
        )));
    }
    let relative = (rank + size - root) % size;
    let absolute = |r: u32| ((u64::from(r) + u64::from(root)) % u64::from(size)) as u32;
    for child in children(relative, size) {
        let from = absolute(child);
        let theirs = link
            .recv(from)
            .and_then(|bytes| Partial::decode(&bytes).map_err(|e| e.for_rank(from as usize)));
        match theirs {
            Ok(p) => mine.merge(p),
            Err(e) => mine.merge(Partial::missing(from, size, options, &e.to_string())),
        }
    }
    match parent(relative) {
        Some(p) => {
            link.send(absolute(p), &mine.encode())?;
            Ok(None)
        }
        None => Ok(Some(mine)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_but_the_root_has_one_parent_that_lists_it() {
        for size in 1..70u32 {
            let mut parents = vec![None; size as usize];
            for r in 0..size {
                for c in children(r, size) {
                    assert!(c > r && c < size);
                    assert!(parents[c as usize].is_none(), "size {size}: {c} twice");
                    parents[c as usize] = Some(r);
                }
            }
            for r in 1..size {
                assert_eq!(parents[r as usize], parent(r), "size {size} rank {r}");
            }
            let depth = children(0, size).count();
            assert_eq!(depth, (size as f64).log2().ceil() as usize, "size {size}");
        }
    }
}
