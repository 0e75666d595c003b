//! The process's list of declared use sites: every use-site macro
//! (`counter!`, ...) links a `static` [`DeclaredSite`] into it before `main`
//! (on ELF platforms, by an `.init_array` entry), so that a lookup by name
//! ([`Pvars::index`](super::Pvars::index), `MPI_T_pvar_get_index`) that
//! finds no registered variable can register a declared site's variable
//! instead of failing, and, when none fits, say why.
//!
//! The list knows a site's registry only by the address of its variable
//! table (the site's `home` function returns it), so this file stands
//! below the table that asks it.

use crate::sync::Ordering;
use crate::sync::unmodelled::{AtomicBool, AtomicPtr};
use crate::vocabulary::error::{Error, Result};
use crate::vocabulary::kinds::PvarClass;

/// Whether use sites are listed before `main` on this platform (the
/// `.init_array` entry of [`__pvar_site!`](crate::__pvar_site); keep the
/// two platform lists equal).
pub(super) const LISTED_BEFORE_MAIN: bool = cfg!(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
));

/// A use site in the process's list of declared sites: its variable's name
/// and class, where it is, its registry, and how to register it. Made by
/// the use-site macros (one `static` each) and linked into the list before
/// `main`; see the module documentation.
#[doc(hidden)]
pub struct DeclaredSite {
    name: &'static str,
    class: PvarClass,
    location: &'static str,
    /// The address of the variable table the site registers in (for
    /// the global registry: `pvar::__private::global_pvars_addr`).
    home: fn() -> *const (),
    /// Registers the site's variable (if it is not yet) and returns its
    /// index: the site's [`SiteRef::index`](super::SiteRef::index).
    register: fn() -> usize,
    next: AtomicPtr<DeclaredSite>,
    listed: AtomicBool,
}

/// The head of the list of declared sites (a push-only stack of
/// `'static` nodes).
static DECLARED: AtomicPtr<DeclaredSite> = AtomicPtr::new(core::ptr::null_mut());

impl DeclaredSite {
    /// A site declaring `name` of `class` at `location`, registering it in
    /// `home()` with `register`.
    pub const fn new(
        name: &'static str,
        class: PvarClass,
        location: &'static str,
        home: fn() -> *const (),
        register: fn() -> usize,
    ) -> Self {
        Self {
            name,
            class,
            location,
            home,
            register,
            next: AtomicPtr::new(core::ptr::null_mut()),
            listed: AtomicBool::new(false),
        }
    }

    /// Links this site into the list (once; later calls do nothing). Runs
    /// before `main` from the loader's `.init_array`: two atomic stores
    /// and a compare-and-swap, no allocation, no lock, no thread-local.
    pub fn list(&'static self) {
        if self.listed.swap(true, Ordering::Relaxed) {
            return;
        }
        let node = self as *const DeclaredSite as *mut DeclaredSite;
        let mut head = DECLARED.load(Ordering::Relaxed);
        loop {
            self.next.store(head, Ordering::Relaxed);
            // Release: a walker that loads `node` sees its `next`.
            match DECLARED.compare_exchange_weak(head, node, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }
}

/// The declared sites, newest first.
fn declared() -> impl Iterator<Item = &'static DeclaredSite> {
    let mut at = DECLARED.load(Ordering::Acquire);
    core::iter::from_fn(move || {
        // SAFETY: every pointer in the list came from a `&'static
        // DeclaredSite` (`list` takes `&'static self`) and is only read
        // through; it was published with Release after its `next` was
        // stored, and this walk loads each link with Acquire. Null ends the
        // list.
        let site = unsafe { at.as_ref() }?;
        at = site.next.load(Ordering::Acquire);
        Some(site)
    })
}

/// The index of `name` of `class` in the variable table at address
/// `table`, which has no such variable registered (`is_registered` tells
/// whether it has one of another class): a declared use site of that
/// table registers it; otherwise `MPI_T_ERR_INVALID_NAME`, saying why.
pub(super) fn register_declared(
    table: *const (),
    is_registered: impl Fn(PvarClass) -> bool,
    name: &str,
    class: PvarClass,
) -> Result<usize> {
    let mut elsewhere = None;
    let mut other: Vec<PvarClass> = PvarClass::ALL
        .iter()
        .copied()
        .filter(|&c| c != class && is_registered(c))
        .collect();
    for site in declared().filter(|s| s.name == name) {
        let here = core::ptr::eq((site.home)(), table);
        if site.class == class && here {
            return Ok((site.register)());
        }
        if site.class == class {
            elsewhere.get_or_insert(site);
        } else if here && !other.contains(&site.class) {
            other.push(site.class);
        }
    }
    let mut message = format!("no {} named {name:?} in this registry", class.short_name());
    if let Some(site) = elsewhere {
        message.push_str(&format!(
            ": the use site at {} registers it in pvar::global(), not in this registry",
            site.location
        ));
    } else if !other.is_empty() {
        let classes: Vec<&str> = other.iter().map(|c| c.short_name()).collect();
        message.push_str(&format!(
            ": {name:?} has class {} (look it up with that class)",
            classes.join(" and ")
        ));
    } else if LISTED_BEFORE_MAIN {
        message.push_str(
            " (nor declared by a use-site macro linked into this program: check the name)",
        );
    } else {
        message.push_str(
            " (a use-site macro registers its variable when it first runs or when its \
             `.index()` is called: on this platform a lookup cannot find it before)",
        );
    }
    Err(Error::no_such_name(message))
}
