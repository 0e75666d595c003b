//! The shape every variable table of a registry shares (performance and
//! control variables): variables in an append-only list, each with an
//! active flag, under stable indices; a name map; and per-object instance
//! maps for variables bound to objects.
//!
//! Reads by index are lock-free ([`VarTable::get`] is an
//! [`AppendVec`] lookup); registration and name lookups lock the name map,
//! which also makes "look the name up, else push" one step.
//!
//! A variable's active flag is shared ([`ActiveFlag`]): the table hands it
//! to whatever serves the variable's values, so that the tool side checks
//! it with one load, without finding the variable in the table again.

use core::hash::Hash;
use std::collections::HashMap;

use super::append_vec::AppendVec;
use crate::sync::{Arc, AtomicBool, Mutex, Ordering};

/// A variable's active flag (`false` once its component deactivated it,
/// `true` again when it is registered again), shared by the table and the
/// variable's storages. Read with `Acquire`, written with `Release`.
pub(crate) type ActiveFlag = Arc<AtomicBool>;

struct Entry<V> {
    active: ActiveFlag,
    var: V,
}

/// Variables of type `V` named by keys `K`; see the module documentation.
pub(crate) struct VarTable<K, V> {
    vars: AppendVec<Entry<V>>,
    names: Mutex<HashMap<K, usize>>,
}

/// What [`VarTable::register`] found or made.
pub(crate) enum Registered<'a, V> {
    /// A new variable at this index.
    New(usize, &'a V),
    /// The variable already registered under the key, reactivated.
    Existing(usize, &'a V),
}

impl<K: Eq + Hash, V> Default for VarTable<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Eq + Hash, V> VarTable<K, V> {
    pub(crate) fn new() -> Self {
        Self {
            vars: AppendVec::new(),
            names: Mutex::new(HashMap::new()),
        }
    }

    /// Number of variables. Lock-free.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.vars.len()
    }

    /// Variable `index`, active or not. Lock-free, async-signal-safe.
    #[inline]
    pub(crate) fn get(&self, index: usize) -> Option<&V> {
        self.vars.get(index).map(|e| &e.var)
    }

    /// Whether variable `index` is active. Lock-free, async-signal-safe.
    #[inline]
    pub(crate) fn is_active(&self, index: usize) -> Option<bool> {
        self.vars
            .get(index)
            .map(|e| e.active.load(Ordering::Acquire))
    }

    /// Variable `index`'s shared active flag.
    pub(crate) fn active_flag(&self, index: usize) -> Option<&ActiveFlag> {
        self.vars.get(index).map(|e| &e.active)
    }

    /// Marks variable `index` active or not; `false` if there is none.
    pub(crate) fn set_active(&self, index: usize, active: bool) -> bool {
        self.vars
            .get(index)
            .map(|e| e.active.store(active, Ordering::Release))
            .is_some()
    }

    /// The index of the variable named `key`.
    pub(crate) fn index<Q>(&self, key: &Q) -> Option<usize>
    where
        K: core::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.names.lock().get(key).copied()
    }

    /// The variable named `key`, reactivated, if `same` accepts it (else
    /// `same`'s error); or, if there is none, a new one made by `make`
    /// (pushed active, and named), given the new variable's active flag.
    /// One step under the name map's lock.
    pub(crate) fn register<E>(
        &self,
        key: K,
        same: impl FnOnce(usize, &V) -> Result<(), E>,
        make: impl FnOnce(&ActiveFlag) -> Result<V, E>,
    ) -> Result<Registered<'_, V>, E> {
        let mut names = self.names.lock();
        if let Some(&index) = names.get(&key) {
            let entry = self.vars.get(index).expect("a named variable exists");
            same(index, &entry.var)?;
            entry.active.store(true, Ordering::Release);
            return Ok(Registered::Existing(index, &entry.var));
        }
        let active = Arc::new(AtomicBool::new(true));
        let var = make(&active)?;
        let index = self.vars.push(Entry { active, var });
        names.insert(key, index);
        Ok(Registered::New(
            index,
            &self.vars.get(index).expect("just pushed").var,
        ))
    }
}

impl<V> Registered<'_, V> {
    /// The variable's index.
    pub(crate) fn index(&self) -> usize {
        match self {
            Self::New(i, _) | Self::Existing(i, _) => *i,
        }
    }
}

impl<'a, V> Registered<'a, V> {
    /// The variable's index and the variable.
    pub(crate) fn into_parts(self) -> (usize, &'a V) {
        match self {
            Self::New(i, v) | Self::Existing(i, v) => (i, v),
        }
    }
}

/// A bound variable's values, one per object, keyed by the object's handle
/// value. Lookups and changes take a mutex (handle allocation and instance
/// creation are registration-time operations).
pub(crate) struct Instances<V>(Mutex<HashMap<u64, V>>);

impl<V: Clone> Default for Instances<V> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<V: Clone> Instances<V> {
    /// Adds `object`'s instance; `false` (and nothing changes) if it has
    /// one already.
    pub(crate) fn insert_new(&self, object: u64, value: V) -> bool {
        let mut map = self.0.lock();
        if map.contains_key(&object) {
            return false;
        }
        map.insert(object, value);
        true
    }

    /// `object`'s instance, if it has one.
    pub(crate) fn get(&self, object: u64) -> Option<V> {
        self.0.lock().get(&object).cloned()
    }

    /// Takes `object`'s instance out.
    pub(crate) fn remove(&self, object: u64) -> Option<V> {
        self.0.lock().remove(&object)
    }

    /// The objects that have an instance, sorted.
    pub(crate) fn objects(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.0.lock().keys().copied().collect();
        v.sort_unstable();
        v
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn register_finds_checks_and_reactivates() {
        let t: VarTable<String, u32> = VarTable::new();
        let a = t
            .register("a".into(), |_, _| Ok::<_, ()>(()), |_| Ok(1))
            .unwrap();
        assert!(matches!(a, Registered::New(0, &1)));
        assert!(t.set_active(0, false));
        assert_eq!(t.is_active(0), Some(false));
        let again = t
            .register(
                "a".into(),
                |_, v| if *v == 1 { Ok(()) } else { Err(()) },
                |_| Ok(9),
            )
            .unwrap();
        assert!(matches!(again, Registered::Existing(0, &1)));
        assert_eq!(t.is_active(0), Some(true), "re-registration reactivates");
        assert!(
            t.register("a".into(), |_, _| Err("differs"), |_| Ok(9))
                .is_err()
        );
        assert_eq!(t.index("a"), Some(0));
        assert_eq!(t.index("b"), None);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn instances_are_unique_per_object() {
        let i: Instances<u8> = Instances::default();
        assert!(i.insert_new(7, 1));
        assert!(!i.insert_new(7, 2));
        assert!(i.insert_new(3, 4));
        assert_eq!(i.get(7), Some(1));
        assert_eq!(i.objects(), [3, 7]);
        assert_eq!(i.remove(7), Some(1));
        assert_eq!(i.remove(7), None);
    }
}
