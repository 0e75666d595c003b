//! Enumerations: named sets of `MPI_INT` values that describe a STATE
//! variable's (or an `int` control variable's) states.

use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};

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
