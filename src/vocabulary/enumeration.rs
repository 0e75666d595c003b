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
/// Every enumeration a variable uses gets the next index when the variable
/// is registered, and keeps it for the life of the registry; variables
/// that use equal enumerations share one index. Enumeration names are
/// unique (MPI 4.1 §15.3.5: "This name must be unique with respect to all
/// other names for enumerations"), for performance and control variables
/// alike: registering a variable whose enumeration has the name of a
/// *different* enumeration already registered is refused
/// (`MPI_T_ERR_INVALID`, naming both). Reads are lock-free (an append-only
/// vector); registering and [`Enumerations::index_of`] take a mutex.
///
/// ```
/// use pvar::{Enumeration, Registry};
/// let reg = Registry::new();
/// let e = Enumeration::new("proto", [("eager", 0), ("rndv", 1)]).unwrap();
/// reg.state("send_proto").enumeration(e.clone()).register().unwrap();
/// let i = reg.enums().index_of(&e).unwrap();
/// assert_eq!(reg.enums().get(i).unwrap(), &e);
/// assert_eq!(reg.enums().info(i).unwrap(), (2, "proto"));
/// // Another variable with the same enumeration shares its index...
/// reg.state("recv_proto").enumeration(e.clone()).register().unwrap();
/// assert_eq!(reg.enums().len(), 1);
/// // ...but a different enumeration may not take its name.
/// let other = Enumeration::new("proto", [("eager", 0)]).unwrap();
/// assert!(reg.state("put_proto").enumeration(other.clone()).register().is_err());
/// assert_eq!(reg.enums().index_of(&other), None);
/// ```
pub struct Enumerations {
    list: AppendVec<Enumeration>,
    by_name: Mutex<HashMap<String, usize>>,
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

    /// The stable index of enumeration `e` (or of an equal one), if a
    /// registered variable uses it.
    pub fn index_of(&self, e: &Enumeration) -> Option<usize> {
        let by_name = self.by_name.lock();
        let &i = by_name.get(e.name())?;
        (self.list.get(i).expect("indexed enumeration exists") == e).then_some(i)
    }

    /// The index of `e`, assigned the first time `e` (or an equal
    /// enumeration) is registered and never changed or reused; refused if
    /// a *different* enumeration has `e`'s name. Performance and control
    /// variable registration call it for their enumeration.
    pub(crate) fn register(&self, e: &Enumeration) -> Result<usize> {
        let mut by_name = self.by_name.lock();
        if let Some(&i) = by_name.get(e.name()) {
            let known = self.list.get(i).expect("indexed enumeration exists");
            if known == e {
                return Ok(i);
            }
            return Err(Error::refused(format!(
                "enumeration name '{}' is already used by a different enumeration \
                 (index {i}, items {:?}); new items {:?}: enumeration names must be unique",
                e.name(),
                known.items(),
                e.items()
            )));
        }
        let index = self.list.push(e.clone());
        by_name.insert(e.name().to_string(), index);
        Ok(index)
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
