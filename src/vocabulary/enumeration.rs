//! Enumerations: named sets of `MPI_INT` values that describe a STATE
//! variable's (or an `int` control variable's) states.

use super::error::{Error, Result};
use crate::lockfree::append_vec::AppendVec;
use crate::sync::Mutex;
use crate::sync::unmodelled::Arc;
use std::collections::HashMap;

/// One named value of an [`Enumeration`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumItem {
    /// The item's name, unique within its enumeration.
    pub name: String,
    /// The value a variable takes in this state.
    pub value: i32,
}

#[derive(Debug, PartialEq, Eq)]
struct Inner {
    name: String,
    items: Vec<EnumItem>,
}

/// A named enumeration with at least one item (MPI 4.1 §15.3.5).
///
/// Cheap to clone (shared). Two enumerations are equal when their names and
/// items are equal.
///
/// ```
/// use pvar::Enumeration;
/// let e = Enumeration::new("worker_state", [("computing", 0), ("sending", 1)]).unwrap();
/// assert_eq!(e.len(), 2);
/// assert_eq!(e.item(1).unwrap().name, "sending");
/// assert!(e.item(2).is_err()); // MPI_T_ERR_INVALID_INDEX (the MPI 4 rule)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enumeration(Arc<Inner>);

impl Enumeration {
    /// An enumeration named `name` with `items` (name, value) in order.
    ///
    /// Fails with `MPI_T_ERR_INVALID` if there are no items, the name or an
    /// item name is empty or contains NUL, or two items share a name.
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        items: impl IntoIterator<Item = (S, i32)>,
    ) -> Result<Self> {
        let name = name.into();
        let items: Vec<EnumItem> = items
            .into_iter()
            .map(|(n, value)| EnumItem {
                name: n.into(),
                value,
            })
            .collect();
        let bad = |s: &str| s.is_empty() || s.contains('\0');
        if bad(&name) {
            return Err(Error::refused(format!(
                "enumeration name {name:?} must be non-empty and free of NUL"
            )));
        }
        if items.is_empty() {
            return Err(Error::refused(format!(
                "enumeration '{name}' must have at least one item"
            )));
        }
        for (i, item) in items.iter().enumerate() {
            if bad(&item.name) {
                return Err(Error::refused(format!(
                    "enumeration '{name}': item {i} has an empty or NUL-containing name"
                )));
            }
            if items[..i].iter().any(|o| o.name == item.name) {
                return Err(Error::refused(format!(
                    "enumeration '{name}': item name '{}' is not unique",
                    item.name
                )));
            }
        }
        Ok(Self(Arc::new(Inner { name, items })))
    }

    /// The enumeration's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Number of items (always ≥ 1).
    pub fn len(&self) -> usize {
        self.0.items.len()
    }

    /// Always false: an enumeration has at least one item.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Item `index`, or `MPI_T_ERR_INVALID_INDEX` when out of range.
    pub fn item(&self, index: usize) -> Result<&EnumItem> {
        self.0.items.get(index).ok_or(Error::no_such_index())
    }

    /// All items in order.
    pub fn items(&self) -> &[EnumItem] {
        &self.0.items
    }

    /// The name of the item with `value`, if any.
    pub fn name_of(&self, value: i32) -> Option<&str> {
        self.0
            .items
            .iter()
            .find(|i| i.value == value)
            .map(|i| i.name.as_str())
    }
}

impl Enumeration {
    /// The value of the item named `name` (ASCII case-insensitive), if any.
    /// Used when an environment variable names an item instead of a number.
    pub fn value_of(&self, name: &str) -> Option<i32> {
        self.0
            .items
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
            .map(|i| i.value)
    }

    /// Whether `value` is the value of one of the items.
    pub fn contains_value(&self, value: i32) -> bool {
        self.0.items.iter().any(|i| i.value == value)
    }

    /// Whether two values share the same storage (a cheap identity test;
    /// equal enumerations built separately are `==` but not `ptr_eq`).
    pub fn ptr_eq(&self, other: &Enumeration) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The enumerations of a registry, by stable index (what the C interface
/// hands out as `MPI_T_enum` handles), from
/// [`Registry::enums`](crate::Registry::enums).
///
/// Each distinct enumeration (by value) gets the next index the first time
/// it is seen, and keeps it for the life of the registry. Control variables
/// get theirs at registration; a performance variable's enumeration gets
/// one the first time [`Enumerations::index_of`] is called for it (the C
/// interface calls it from `MPI_T_pvar_get_info`). Reads are lock-free (an
/// append-only vector); assigning an index takes a mutex.
///
/// ```
/// use pvar::{Enumeration, Registry};
/// let reg = Registry::new();
/// let e = Enumeration::new("proto", [("eager", 0), ("rndv", 1)]).unwrap();
/// let i = reg.enums().index_of(&e);
/// assert_eq!(reg.enums().index_of(&e.clone()), i);
/// assert_eq!(reg.enums().get(i).unwrap(), &e);
/// assert_eq!(reg.enums().info(i).unwrap(), (2, "proto"));
/// ```
pub struct Enumerations {
    list: AppendVec<Enumeration>,
    by_name: Mutex<HashMap<String, Vec<usize>>>,
}

impl std::fmt::Debug for Enumerations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enumerations")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Enumerations {
    pub(crate) fn new() -> Self {
        Self {
            list: AppendVec::new(),
            by_name: Mutex::new(HashMap::new()),
        }
    }

    fn index_with(&self, e: &Enumeration, strict: bool) -> Result<usize> {
        let mut by_name = self.by_name.lock();
        let same_name = by_name.entry(e.name().to_string()).or_default();
        for &i in same_name.iter() {
            let known = self.list.get(i).expect("indexed enumeration exists");
            if known == e {
                return Ok(i);
            }
        }
        if strict && !same_name.is_empty() {
            return Err(Error::refused(format!(
                "enumeration name '{}' is already used by a different enumeration",
                e.name()
            )));
        }
        let index = self.list.push(e.clone());
        same_name.push(index);
        Ok(index)
    }

    /// The stable index of enumeration `e`, assigned the first time `e`
    /// (or an equal enumeration) is seen and never changed or reused.
    pub fn index_of(&self, e: &Enumeration) -> usize {
        self.index_with(e, false)
            .expect("non-strict lookup never fails")
    }

    /// As [`Enumerations::index_of`], but refuses an enumeration whose name
    /// is taken by a *different* enumeration (the standard wants
    /// enumeration names unique): control variable registration.
    pub(crate) fn register(&self, e: &Enumeration) -> Result<usize> {
        self.index_with(e, true)
    }

    /// The enumeration with index `index`; `MPI_T_ERR_INVALID` if none
    /// (the C interface maps a bad `MPI_T_enum` handle here). Lock-free.
    pub fn get(&self, index: usize) -> Result<&Enumeration> {
        self.list
            .get(index)
            .ok_or(Error::invalid("not an enumeration of this registry"))
    }

    /// Number of enumerations that have an index so far.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no enumeration has an index yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `MPI_T_enum_get_info`: the number of items and the name of
    /// enumeration `index`.
    pub fn info(&self, index: usize) -> Result<(usize, &str)> {
        let e = self.get(index)?;
        Ok((e.len(), e.name()))
    }

    /// `MPI_T_enum_get_item`: item `item` of enumeration `index`;
    /// `MPI_T_ERR_INVALID_INDEX` when `item` is out of range (the MPI 4
    /// rule; `MPI_T_ERR_INVALID_ITEM` is never returned).
    pub fn item(&self, index: usize, item: usize) -> Result<&EnumItem> {
        self.get(index)?.item(item)
    }
}
