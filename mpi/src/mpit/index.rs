//! The merged index spaces of performance variables, control variables
//! and categories (see the module documentation of [`super`]).

use core::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

use super::{Ctx, R, code, entry, need, to_int};

/// Where a merged index leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The library's index.
    Lib(c_int),
    /// pvar's index.
    Ours(c_int),
}

/// One append-only index space and its reverse maps.
#[derive(Debug, Default)]
pub(crate) struct Space {
    entries: Vec<Side>,
    from_lib: Vec<c_int>,
    from_ours: Vec<c_int>,
}

impl Space {
    /// An empty space.
    pub(crate) const fn new() -> Self {
        Self {
            entries: Vec::new(),
            from_lib: Vec::new(),
            from_ours: Vec::new(),
        }
    }

    /// Appends the library's entries up to `lib` and then pvar's up to
    /// `ours` (counts never shrink the table).
    pub(crate) fn extend(&mut self, lib: usize, ours: usize) {
        while self.from_lib.len() < lib {
            let merged = self.entries.len() as c_int;
            self.entries.push(Side::Lib(self.from_lib.len() as c_int));
            self.from_lib.push(merged);
        }
        while self.from_ours.len() < ours {
            let merged = self.entries.len() as c_int;
            self.entries.push(Side::Ours(self.from_ours.len() as c_int));
            self.from_ours.push(merged);
        }
    }

    /// The number of merged indices.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entry of merged index `i`.
    pub(crate) fn get(&self, i: c_int) -> Option<Side> {
        self.entries.get(usize::try_from(i).ok()?).copied()
    }

    /// The merged index of a side's index.
    pub(crate) fn merged(&self, side: Side) -> Option<c_int> {
        let (map, i) = match side {
            Side::Lib(i) => (&self.from_lib, i),
            Side::Ours(i) => (&self.from_ours, i),
        };
        map.get(usize::try_from(i).ok()?).copied()
    }

    /// How many of the library's entries are known.
    pub(crate) fn lib_known(&self) -> usize {
        self.from_lib.len()
    }
}

/// Which index space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Pvar,
    Cvar,
    Category,
}

/// The three spaces.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    pvars: Space,
    cvars: Space,
    categories: Space,
}

impl Tables {
    fn space(&mut self, k: Kind) -> &mut Space {
        match k {
            Kind::Pvar => &mut self.pvars,
            Kind::Cvar => &mut self.cvars,
            Kind::Category => &mut self.categories,
        }
    }
}

static TABLES: Mutex<Tables> = Mutex::new(Tables {
    pvars: Space::new(),
    cvars: Space::new(),
    categories: Space::new(),
});

fn tables() -> MutexGuard<'static, Tables> {
    TABLES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The library's count of `k` (`None` if its MPI_T is not in use or the
/// call fails).
fn lib_count(c: &Ctx, k: Kind) -> Option<usize> {
    let lib = c.lib?;
    let f = match k {
        Kind::Pvar => lib.pvar_get_num,
        Kind::Cvar => lib.cvar_get_num,
        Kind::Category => lib.category_get_num,
    }?;
    let mut n: c_int = 0;
    // SAFETY: the library's `*_get_num` with a valid OUT pointer.
    let rc = unsafe { f(&mut n) };
    (rc == lib.success).then(|| usize::try_from(n).unwrap_or(0))
}

/// pvar's count of `k`.
fn our_count(k: Kind) -> usize {
    use pvar::ffi::mpi_t as ours;
    let mut n: c_int = 0;
    // SAFETY: pvar's `*_get_num` with a valid OUT pointer.
    let rc = unsafe {
        match k {
            Kind::Pvar => ours::PMPI_T_pvar_get_num(&mut n),
            Kind::Cvar => ours::PMPI_T_cvar_get_num(&mut n),
            Kind::Category => ours::PMPI_T_category_get_num(&mut n),
        }
    };
    if rc == 0 {
        usize::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

/// Brings space `k` up to both sides' current counts.
fn refresh(c: &Ctx, t: &mut Tables, k: Kind) {
    let s = t.space(k);
    let lib = lib_count(c, k).unwrap_or(s.lib_known());
    let ours = our_count(k);
    s.extend(lib, ours);
}

/// Refreshes space `k` and returns its size (`*_get_num`).
pub(crate) fn count(c: &Ctx, k: Kind) -> usize {
    let mut t = tables();
    refresh(c, &mut t, k);
    t.space(k).len()
}

/// `MPI_T_{pvar,cvar,category}_get_num`: the merged count of `k`, the
/// table refreshed first.
///
/// # Safety
/// `num` is NULL (`MPI_T_ERR_INVALID`) or valid for a write.
pub(crate) unsafe fn get_num(k: Kind, num: *mut c_int) -> c_int {
    entry(|c| {
        need(c, num)?;
        let n = count(c, k);
        // SAFETY: checked non-NULL; valid by contract.
        unsafe { num.write_unaligned(to_int(n)) };
        Ok(())
    })
}

/// The entry of merged index `i` of space `k`, refreshing once if `i` is
/// beyond the table; `MPI_T_ERR_INVALID_INDEX` otherwise.
pub(crate) fn resolve(c: &Ctx, k: Kind, i: c_int) -> R<Side> {
    let mut t = tables();
    if let Some(s) = t.space(k).get(i) {
        return Ok(s);
    }
    if i < 0 {
        return Err(c.e(code::INVALID_INDEX));
    }
    refresh(c, &mut t, k);
    t.space(k).get(i).ok_or(c.e(code::INVALID_INDEX))
}

/// The merged index of a side's index in space `k`, refreshing once if it
/// is not known yet; `MPI_T_ERR_INVALID` if a side names an index it does
/// not count.
pub(crate) fn merged(c: &Ctx, k: Kind, side: Side) -> R<c_int> {
    let mut t = tables();
    if let Some(i) = t.space(k).merged(side) {
        return Ok(i);
    }
    refresh(c, &mut t, k);
    t.space(k).merged(side).ok_or(c.e(code::INVALID))
}

/// Maps a side's indices in place to merged ones (one lock for all).
pub(crate) fn merged_all(c: &Ctx, k: Kind, lib: bool, indices: &mut [c_int]) -> R {
    let mut t = tables();
    let side = |i| if lib { Side::Lib(i) } else { Side::Ours(i) };
    if indices
        .iter()
        .any(|&i| t.space(k).merged(side(i)).is_none())
    {
        refresh(c, &mut t, k);
    }
    let s = t.space(k);
    for i in indices.iter_mut() {
        *i = s.merged(side(*i)).ok_or(c.e(code::INVALID))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_library_then_ours_then_appended() {
        let mut s = Space::default();
        s.extend(3, 2);
        assert_eq!(s.len(), 5);
        assert_eq!(s.get(0), Some(Side::Lib(0)));
        assert_eq!(s.get(2), Some(Side::Lib(2)));
        assert_eq!(s.get(3), Some(Side::Ours(0)));
        assert_eq!(s.get(5), None);
        assert_eq!(s.get(-1), None);
        // Later additions of either side are appended: old indices keep
        // their meaning.
        s.extend(4, 3);
        assert_eq!(s.get(3), Some(Side::Ours(0)));
        assert_eq!(s.get(5), Some(Side::Lib(3)));
        assert_eq!(s.get(6), Some(Side::Ours(2)));
        assert_eq!(s.merged(Side::Lib(3)), Some(5));
        assert_eq!(s.merged(Side::Ours(1)), Some(4));
        assert_eq!(s.merged(Side::Ours(3)), None);
        // A shrinking count removes nothing.
        s.extend(0, 0);
        assert_eq!(s.len(), 7);
    }
}
