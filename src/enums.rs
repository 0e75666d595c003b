//! Enumerations: named sets of `MPI_INT` values that describe a STATE
//! variable's (or an `int` control variable's) states.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::sync::Mutex;
use crate::sync::append_vec::AppendVec;

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
            return Err(Error::Registration(format!(
                "enumeration name {name:?} must be non-empty and free of NUL"
            )));
        }
        if items.is_empty() {
            return Err(Error::Registration(format!(
                "enumeration '{name}' must have at least one item"
            )));
        }
        for (i, item) in items.iter().enumerate() {
            if bad(&item.name) {
                return Err(Error::Registration(format!(
                    "enumeration '{name}': item {i} has an empty or NUL-containing name"
                )));
            }
            if items[..i].iter().any(|o| o.name == item.name) {
                return Err(Error::Registration(format!(
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
        self.0
            .items
            .get(index)
            .ok_or(Error::Code(ErrorCode::InvalidIndex))
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

/// The enumerations a registry has handed out indices for.
///
/// Each distinct enumeration (by value) gets the next index the first time
/// it is seen, and keeps it for the life of the registry: the C interface
/// hands out `MPI_T_enum` handles built from these indices. Reads are
/// lock-free (an append-only vector); assigning an index takes a mutex.
pub(crate) struct EnumTable {
    list: AppendVec<Enumeration>,
    by_name: Mutex<HashMap<String, Vec<usize>>>,
}

impl EnumTable {
    pub(crate) fn new() -> Self {
        Self {
            list: AppendVec::new(),
            by_name: Mutex::new(HashMap::new()),
        }
    }

    /// The index of `e`, assigning the next one if `e` is new. With
    /// `strict`, an enumeration whose name is taken by a *different*
    /// enumeration is refused (the standard wants enumeration names unique).
    pub(crate) fn index_of(&self, e: &Enumeration, strict: bool) -> Result<usize> {
        let mut by_name = self.by_name.lock().unwrap_or_else(|p| p.into_inner());
        let same_name = by_name.entry(e.name().to_string()).or_default();
        for &i in same_name.iter() {
            let known = self.list.get(i).expect("indexed enumeration exists");
            if known == e {
                return Ok(i);
            }
        }
        if strict && !same_name.is_empty() {
            return Err(Error::Registration(format!(
                "enumeration name '{}' is already used by a different enumeration",
                e.name()
            )));
        }
        let index = self.list.push(e.clone());
        same_name.push(index);
        Ok(index)
    }

    pub(crate) fn get(&self, index: usize) -> Option<&Enumeration> {
        self.list.get(index)
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
}

/// Enumerations of a registry, by stable index (for `MPI_T_enum` handles).
impl crate::Registry {
    /// The stable index of enumeration `e` in this registry, assigned the
    /// first time `e` (or an equal enumeration) is seen and never changed
    /// or reused. Control variables get theirs at registration; a
    /// performance variable's enumeration gets one the first time this is
    /// called for it (the C interface calls it from `MPI_T_pvar_get_info`).
    ///
    /// ```
    /// use pvar::{Enumeration, Registry};
    /// let reg = Registry::new();
    /// let e = Enumeration::new("proto", [("eager", 0), ("rndv", 1)]).unwrap();
    /// let i = reg.enum_index(&e);
    /// assert_eq!(reg.enum_index(&e.clone()), i);
    /// assert_eq!(reg.enumeration(i).unwrap(), &e);
    /// ```
    pub fn enum_index(&self, e: &Enumeration) -> usize {
        self.inner
            .enums
            .index_of(e, false)
            .expect("non-strict lookup never fails")
    }

    /// The enumeration with index `index` (see [`Registry::enum_index`](crate::Registry::enum_index));
    /// `MPI_T_ERR_INVALID` if no enumeration has that index (the C
    /// interface maps a bad `MPI_T_enum` handle here). Lock-free.
    pub fn enumeration(&self, index: usize) -> Result<&Enumeration> {
        self.inner
            .enums
            .get(index)
            .ok_or(Error::Invalid("not an enumeration of this registry"))
    }

    /// Number of enumerations that have an index so far.
    pub fn num_enumerations(&self) -> usize {
        self.inner.enums.len()
    }

    /// `MPI_T_enum_get_info`: the number of items and the name of
    /// enumeration `index`.
    pub fn enum_get_info(&self, index: usize) -> Result<(usize, &str)> {
        let e = self.enumeration(index)?;
        Ok((e.len(), e.name()))
    }

    /// `MPI_T_enum_get_item`: item `item` of enumeration `index`;
    /// `MPI_T_ERR_INVALID_INDEX` when `item` is out of range (the MPI 4
    /// rule; `MPI_T_ERR_INVALID_ITEM` is never returned).
    pub fn enum_get_item(&self, index: usize, item: usize) -> Result<&EnumItem> {
        self.enumeration(index)?.item(item)
    }
}
