//! Categories (MPI 4.1 §15.3.9 / MPI 3.1 §14.3.8): a hierarchy grouping
//! control variables, performance variables and other categories.
//!
//! Rules kept here:
//!
//! - Indices run `0..N-1` in definition order and never change; categories
//!   are never deleted. Members are only ever appended, so the order in
//!   which a category lists its members never changes.
//! - A category never contains itself, directly or through others: adding
//!   a sub-category that would close a cycle is refused at registration
//!   (the check also sees edges whose categories are not defined yet).
//! - A variable (or a sub-category edge) may name a category before the
//!   category is defined. The reference is kept and attached when the
//!   category is defined; until then the name is reported by
//!   [`Categories::undefined`].
//! - The change stamp ([`Categories::changed`]) increases with every
//!   change: a category defined (with the members that were waiting for
//!   it), a variable or sub-category added.
//!
//! # The change stamp
//!
//! MPI 4.1 §15.3.9: "If two subsequent calls to this routine return the
//! same timestamp, it is guaranteed that the category information has not
//! changed between the two calls." A change and its stamp therefore
//! become visible at one instant: every entry (category or member) carries
//! the number of the change that added it, and queries show only entries
//! whose change is at most the stamp they load. A change (under the mutex)
//! appends its entries first, still hidden, then publishes them all with
//! one release store of its number into the stamp. So a tool that reads
//! the stamp, scans, and reads the stamp again gets equal stamps only if
//! its scan saw exactly the state of that stamp; and one that remembers a
//! stamp read before a scan never misses a change, since any change it did
//! not see carries a higher number. The stamp is a `u64` (it does not wrap
//! in practice); `MPI_T_category_changed` returns it modulo 2^31, see
//! `src/ffi/category.rs`.
//!
//! Queries are lock-free (append-only vectors and one load of the stamp)
//! and so async-signal-safe; additions and name lookups take a mutex.
//!
//! # The "first `len` entries" rule
//!
//! `MPI_T_category_get_{cvars,pvars,categories}(cat, len, indices)` write up
//! to `len` indices starting at `indices[0]` and leave the rest of the array
//! untouched. [`Categories::pvars_into`] (and its siblings) do exactly that
//! with a `&mut [i32]` — the slice *is* `indices[0..len]` — and return the
//! number of entries written; the C layer passes its array as the slice.
//! When a category has more than `len` members, the first `len` (in the
//! order they were added) are written. [`Categories::pvars`] etc. return
//! the whole list as a `Vec` for Rust callers.

use std::collections::{HashMap, HashSet};

use crate::lockfree::append_vec::AppendVec;
use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::vocabulary::error::{Error, Result};

/// An entry of a member list: the member's index and the number of the
/// change that added it (visible once the stamp reaches it).
struct Entry {
    index: usize,
    change: u64,
}

/// A member list: only appended, in non-decreasing change order.
type Members = AppendVec<Entry>;

/// What a category holds. Members are only appended.
struct Category {
    name: String,
    description: String,
    /// The change that defined the category.
    change: u64,
    cvars: Members,
    pvars: Members,
    events: Members,
    subcategories: Members,
}

/// The number of leading entries of `list` that change `now` has
/// published. Only the entries of one unpublished change (the one in
/// progress, if any) can follow them, so this looks at the tail only.
fn visible<T>(list: &AppendVec<T>, now: u64, change: impl Fn(&T) -> u64) -> usize {
    let mut n = list.len();
    while n > 0 && change(list.get(n - 1).expect("published entry")) > now {
        n -= 1;
    }
    n
}

/// The number of `list`'s members that change `now` has published.
fn visible_members(list: &Members, now: u64) -> usize {
    visible(list, now, |e| e.change)
}

/// Members recorded for a category name that is not defined yet.
#[derive(Default)]
struct Pending {
    cvars: Vec<usize>,
    pvars: Vec<usize>,
    events: Vec<usize>,
}

/// The kinds of member a category lists.
#[derive(Clone, Copy)]
enum Member {
    Cvar,
    Pvar,
    Event,
}

impl Category {
    fn members(&self, m: Member) -> &Members {
        match m {
            Member::Cvar => &self.cvars,
            Member::Pvar => &self.pvars,
            Member::Event => &self.events,
        }
    }
}

impl Pending {
    fn members(&mut self, m: Member) -> &mut Vec<usize> {
        match m {
            Member::Cvar => &mut self.cvars,
            Member::Pvar => &mut self.pvars,
            Member::Event => &mut self.events,
        }
    }
}

/// Cold-path bookkeeping, under one mutex.
#[derive(Default)]
struct State {
    by_name: HashMap<String, usize>,
    /// Members waiting for their category to be defined.
    pending: HashMap<String, Pending>,
    /// Every parent → child edge by name, in the order added, whether or
    /// not the categories exist yet; `true` once attached.
    edges: Vec<(String, String, bool)>,
}

impl State {
    /// Whether `to` can be reached from `from` along the known edges.
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut stack = vec![from];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if !seen.insert(n) {
                continue;
            }
            for (p, c, _) in &self.edges {
                if p == n {
                    stack.push(c);
                }
            }
        }
        false
    }
}

/// Summary of one category (`MPI_T_category_get_info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CategoryInfo<'a> {
    /// The category's name, unique among categories.
    pub name: &'a str,
    /// Its description (may be empty).
    pub description: &'a str,
    /// Number of control variables it contains.
    pub num_cvars: usize,
    /// Number of performance variables it contains.
    pub num_pvars: usize,
    /// Number of event types it contains (`MPI_T_category_get_num_events`).
    pub num_events: usize,
    /// Number of categories it contains.
    pub num_categories: usize,
}

/// The category tree of a registry.
///
/// Indices and member order never change; a category never contains
/// itself, directly or through others (refused at registration); members
/// may name a category before it is defined (reported by
/// [`Categories::undefined`] until then); [`Categories::changed`] increases
/// with every addition. The `*_into` queries follow MPI_T's "write up to
/// `len` entries" rule: they fill the first `min(len, n)` entries of the
/// slice (the first members in order added), leave the rest untouched, and
/// return how many they wrote. Queries are lock-free; additions lock.
///
/// ```
/// let reg = pvar::Registry::new();
/// let sent = reg.counter("sent").category("comm").register().unwrap();
/// assert_eq!(reg.categories().undefined(), vec!["comm".to_string()]);
/// let comm = reg.categories().define("comm", "communication").unwrap();
/// assert!(reg.categories().undefined().is_empty());
/// let mut out = [-1i32; 4];
/// assert_eq!(reg.categories().pvars_into(comm, &mut out).unwrap(), 1);
/// assert_eq!(out, [0, -1, -1, -1]);
/// # drop(sent);
/// ```
pub struct Categories {
    cats: AppendVec<Category>,
    state: Mutex<State>,
    stamp: AtomicU64,
}

impl Default for Categories {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Categories {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Categories")
            .field("len", &self.len())
            .field("stamp", &self.changed())
            .finish_non_exhaustive()
    }
}

fn check_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('\0') {
        return Err(Error::refused(format!(
            "{what} name {name:?} must be non-empty and free of NUL"
        )));
    }
    Ok(())
}

impl Categories {
    /// An empty tree.
    pub(crate) fn new() -> Self {
        Self {
            cats: AppendVec::new(),
            state: Mutex::new(State::default()),
            stamp: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// The number the next change will publish. Call with the state
    /// locked: changes are serialised by it.
    fn next_change(&self) -> u64 {
        self.stamp.load(Ordering::Relaxed) + 1
    }

    /// Publishes change `next` (its entries are all appended): one release
    /// store, so a query that loads the new stamp sees every entry.
    fn publish(&self, next: u64) {
        self.stamp.store(next, Ordering::Release);
    }

    /// The stamp a query works with: what it shows is what this change
    /// had published.
    fn now(&self) -> u64 {
        self.stamp.load(Ordering::Acquire)
    }

    /// Category `index` if change `now` had defined it.
    fn category_at(&self, index: usize, now: u64) -> Result<&Category> {
        self.cats
            .get(index)
            .filter(|c| c.change <= now)
            .ok_or(Error::no_such_index())
    }

    /// Category `index` under the lock, also in the middle of a change.
    fn category_locked(&self, index: usize) -> &Category {
        self.cats.get(index).expect("defined category")
    }

    /// Defines category `name` and returns its index. Members recorded for
    /// the name before (variables, sub-category edges) are attached now.
    /// Defining it again with the same description returns the same index;
    /// with a different one it is an error.
    pub fn define(&self, name: &str, description: &str) -> Result<usize> {
        check_name("category", name)?;
        let mut st = self.lock();
        if let Some(&i) = st.by_name.get(name) {
            let existing = &self.category_locked(i).description;
            if existing != description {
                return Err(Error::refused(format!(
                    "category '{name}' is already defined at index {i} with description \
                     {existing:?}; new description {description:?}"
                )));
            }
            return Ok(i);
        }
        // One change: the category, the members that waited for it, and
        // the sub-category edges it completes, published together.
        let change = self.next_change();
        let index = self.cats.push(Category {
            name: name.to_string(),
            description: description.to_string(),
            change,
            cvars: AppendVec::new(),
            pvars: AppendVec::new(),
            events: AppendVec::new(),
            subcategories: AppendVec::new(),
        });
        st.by_name.insert(name.to_string(), index);
        let cat = self.category_locked(index);
        if let Some(mut p) = st.pending.remove(name) {
            for m in [Member::Cvar, Member::Pvar, Member::Event] {
                for v in p.members(m).drain(..) {
                    cat.members(m).push(Entry { index: v, change });
                }
            }
        }
        self.attach_ready_edges(&mut st, change);
        self.publish(change);
        Ok(index)
    }

    /// Attaches, as part of change `change`, every recorded edge whose two
    /// ends are now defined; whether it attached any.
    fn attach_ready_edges(&self, st: &mut State, change: u64) -> bool {
        let mut attached = false;
        for k in 0..st.edges.len() {
            let (p, c, done) = &st.edges[k];
            if *done {
                continue;
            }
            if let (Some(&pi), Some(&ci)) = (st.by_name.get(p), st.by_name.get(c)) {
                self.category_locked(pi)
                    .subcategories
                    .push(Entry { index: ci, change });
                st.edges[k].2 = true;
                attached = true;
            }
        }
        attached
    }

    /// Makes category `child` a member of category `parent` (by name;
    /// either may still be undefined). Refused if it would make a category
    /// contain itself, directly or through others. Adding the same edge
    /// twice is a no-op.
    pub fn add_subcategory(&self, parent: &str, child: &str) -> Result<()> {
        check_name("category", parent)?;
        check_name("category", child)?;
        let mut st = self.lock();
        if st.edges.iter().any(|(p, c, _)| p == parent && c == child) {
            return Ok(());
        }
        if parent == child || st.reaches(child, parent) {
            return Err(Error::refused(format!(
                "category '{parent}' cannot contain '{child}': '{child}' already contains \
                 '{parent}' (directly or through other categories), which would make a \
                 category contain itself"
            )));
        }
        st.edges
            .push((parent.to_string(), child.to_string(), false));
        let change = self.next_change();
        if self.attach_ready_edges(&mut st, change) {
            self.publish(change);
        }
        Ok(())
    }

    /// Records performance variable `pvar_index` in category `category`
    /// (pending until the category is defined).
    pub(crate) fn attach_pvar(&self, category: &str, pvar_index: usize) {
        self.attach(category, pvar_index, Member::Pvar);
    }

    /// Records control variable `cvar_index` in category `category`
    /// (pending until the category is defined).
    pub(crate) fn attach_cvar(&self, category: &str, cvar_index: usize) {
        self.attach(category, cvar_index, Member::Cvar);
    }

    /// Records event type `event_index` in category `category` (pending
    /// until the category is defined).
    pub(crate) fn attach_event(&self, category: &str, event_index: usize) {
        self.attach(category, event_index, Member::Event);
    }

    fn attach(&self, category: &str, index: usize, member: Member) {
        let mut st = self.lock();
        match st.by_name.get(category) {
            Some(&ci) => {
                let list = self.category_locked(ci).members(member);
                if !list.iter().any(|(_, e)| e.index == index) {
                    let change = self.next_change();
                    list.push(Entry { index, change });
                    self.publish(change);
                }
            }
            None => {
                let list = st
                    .pending
                    .entry(category.to_string())
                    .or_default()
                    .members(member);
                if !list.contains(&index) {
                    list.push(index);
                }
            }
        }
    }

    /// Number of defined categories (`MPI_T_category_get_num`).
    /// Lock-free.
    pub fn len(&self) -> usize {
        visible(&self.cats, self.now(), |c| c.change)
    }

    /// Whether no category is defined.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `MPI_T_category_get_info`; `MPI_T_ERR_INVALID_INDEX` when out of
    /// range. Lock-free.
    pub fn info(&self, index: usize) -> Result<CategoryInfo<'_>> {
        let now = self.now();
        let c = self.category_at(index, now)?;
        Ok(CategoryInfo {
            name: &c.name,
            description: &c.description,
            num_cvars: visible_members(&c.cvars, now),
            num_pvars: visible_members(&c.pvars, now),
            num_events: visible_members(&c.events, now),
            num_categories: visible_members(&c.subcategories, now),
        })
    }

    /// `MPI_T_category_get_index`; `MPI_T_ERR_INVALID_NAME` if no category
    /// with that name is defined.
    pub fn index(&self, name: &str) -> Result<usize> {
        self.lock()
            .by_name
            .get(name)
            .copied()
            .ok_or_else(|| Error::no_such_name(format!("no category named {name:?}")))
    }

    /// `MPI_T_category_changed`: a stamp that increases with every change
    /// (category defined, member added); equal stamps from two calls mean
    /// no change in between (see the module documentation). Lock-free.
    pub fn changed(&self) -> u64 {
        self.now()
    }

    /// Names referenced by a variable or a sub-category edge but not
    /// defined (sorted). A well-formed program ends with none.
    pub fn undefined(&self) -> Vec<String> {
        let st = self.lock();
        let mut names: Vec<String> = st
            .pending
            .keys()
            .cloned()
            .chain(st.edges.iter().flat_map(|(p, c, _)| [p.clone(), c.clone()]))
            .filter(|n| !st.by_name.contains_key(n))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Writes the first members of `list` (those change `now` published)
    /// into `out`; how many.
    fn list_into(list: &Members, now: u64, out: &mut [i32]) -> usize {
        let n = visible_members(list, now).min(out.len());
        for (i, slot) in out.iter_mut().take(n).enumerate() {
            *slot = list.get(i).expect("published member").index as i32;
        }
        n
    }

    /// Every member of `list` that change `now` published.
    fn list_all(list: &Members, now: u64) -> Vec<usize> {
        let n = visible_members(list, now);
        (0..n)
            .map(|i| list.get(i).expect("published member").index)
            .collect()
    }

    /// Member list `m` of category `index` (`None`: its sub-categories),
    /// with the stamp the query works with.
    fn list(&self, index: usize, m: Option<Member>) -> Result<(&Members, u64)> {
        let now = self.now();
        let c = self.category_at(index, now)?;
        Ok((m.map_or(&c.subcategories, |m| c.members(m)), now))
    }

    /// `MPI_T_category_get_cvars`: writes the first `out.len()` control
    /// variable indices of category `index` into `out` and returns how many
    /// were written; entries past that are left untouched. Lock-free and
    /// allocation-free.
    pub fn cvars_into(&self, index: usize, out: &mut [i32]) -> Result<usize> {
        let (list, now) = self.list(index, Some(Member::Cvar))?;
        Ok(Self::list_into(list, now, out))
    }

    /// `MPI_T_category_get_pvars`, with the rule of
    /// [`Categories::cvars_into`].
    pub fn pvars_into(&self, index: usize, out: &mut [i32]) -> Result<usize> {
        let (list, now) = self.list(index, Some(Member::Pvar))?;
        Ok(Self::list_into(list, now, out))
    }

    /// `MPI_T_category_get_events`, with the rule of
    /// [`Categories::cvars_into`].
    pub fn events_into(&self, index: usize, out: &mut [i32]) -> Result<usize> {
        let (list, now) = self.list(index, Some(Member::Event))?;
        Ok(Self::list_into(list, now, out))
    }

    /// All event type indices of category `index`, in order added.
    pub fn events(&self, index: usize) -> Result<Vec<usize>> {
        let (list, now) = self.list(index, Some(Member::Event))?;
        Ok(Self::list_all(list, now))
    }

    /// `MPI_T_category_get_categories`, with the rule of
    /// [`Categories::cvars_into`].
    pub fn categories_into(&self, index: usize, out: &mut [i32]) -> Result<usize> {
        let (list, now) = self.list(index, None)?;
        Ok(Self::list_into(list, now, out))
    }

    /// All control variable indices of category `index`, in order added.
    pub fn cvars(&self, index: usize) -> Result<Vec<usize>> {
        let (list, now) = self.list(index, Some(Member::Cvar))?;
        Ok(Self::list_all(list, now))
    }

    /// All performance variable indices of category `index`.
    pub fn pvars(&self, index: usize) -> Result<Vec<usize>> {
        let (list, now) = self.list(index, Some(Member::Pvar))?;
        Ok(Self::list_all(list, now))
    }

    /// All sub-category indices of category `index`.
    pub fn subcategories(&self, index: usize) -> Result<Vec<usize>> {
        let (list, now) = self.list(index, None)?;
        Ok(Self::list_all(list, now))
    }
}
