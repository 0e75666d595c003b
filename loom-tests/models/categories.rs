//! The category change stamp (`MPI_T_category_changed`): a change and its
//! stamp become visible at one instant. Equal stamps around a scan mean the
//! scan saw exactly that stamp's categories, and a stamp read before a scan
//! that equals a later one means nothing was missed.

use loom::sync::Arc;
use pvar::Categories;

use crate::model;

/// A writer adds a sub-category (one change) while a reader does what a
/// tool does: stamp, scan, stamp. Equal stamps must bracket a scan of that
/// stamp's state; and the stamp read first, compared with the final one,
/// must reveal the change if the scan did not see it.
#[test]
fn equal_stamps_mean_an_unchanged_scan() {
    model(|| {
        let cats = Arc::new(Categories::default());
        let a = cats.define("a", "").unwrap();
        cats.define("b", "").unwrap();
        let before = cats.changed();
        let writer = {
            let cats = cats.clone();
            crate::spawn(move || cats.add_subcategory("a", "b").unwrap())
        };
        let s1 = cats.changed();
        let seen = cats.info(a).unwrap().num_categories;
        let mut out = [-1i32; 2];
        let listed = cats.categories_into(a, &mut out).unwrap();
        let s2 = cats.changed();
        if s1 == s2 {
            let expected = if s1 == before { 0 } else { 1 };
            assert_eq!(seen, expected, "equal stamps around a changing scan");
            assert_eq!(listed, expected, "equal stamps around a changing scan");
        }
        writer.join().unwrap();
        let after = cats.changed();
        assert_eq!(after, before + 1, "one change, one step");
        if s1 == after {
            assert_eq!(seen, 1, "the scan missed a change the stamp hides");
        }
        assert_eq!(cats.info(a).unwrap().num_categories, 1);
    });
}

/// Defining a category publishes it together with the members that were
/// waiting for it: a reader sees the category's count move once, and never
/// a defined category without its waiting sub-category.
#[test]
fn a_definition_and_its_waiting_members_are_one_change() {
    model(|| {
        let cats = Arc::new(Categories::default());
        cats.add_subcategory("p", "c").unwrap();
        cats.define("c", "").unwrap();
        let before = cats.changed();
        let writer = {
            let cats = cats.clone();
            crate::spawn(move || cats.define("p", "parent").unwrap())
        };
        let s1 = cats.changed();
        let n = cats.len();
        let subs = (n == 2).then(|| cats.info(1).unwrap().num_categories);
        let s2 = cats.changed();
        if let Some(subs) = subs {
            assert_eq!(subs, 1, "the parent without its waiting child");
        }
        if s1 == s2 {
            assert_eq!(n, if s1 == before { 1 } else { 2 });
        }
        writer.join().unwrap();
        assert_eq!(cats.changed(), before + 1);
        assert_eq!(cats.len(), 2);
    });
}
