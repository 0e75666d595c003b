//! Use sites: variables declared where they are updated, with the
//! [`counter!`](crate::counter!), [`aggregate!`](crate::aggregate!),
//! [`level!`](crate::level!), [`timer!`](crate::timer!),
//! [`high_watermark!`](crate::high_watermark!),
//! [`low_watermark!`](crate::low_watermark!) and [`state!`](crate::state!)
//! macros.
//!
//! Each macro call is a *use site*: a `static` [`Site`] (the variable's
//! description, registered in the global registry on first use) and a
//! `const`-initialised thread-local cache of the calling thread's cell.
//! For the classes kept in per-thread cells (COUNTER, AGGREGATE, LEVEL
//! `inc`/`dec`), a steady-state update is one thread-local load, a null
//! test and the cell's relaxed load and store: about a thread-local
//! `+= 1`. The other classes (TIMER, whose clock read costs more than
//! the lookup; watermarks and STATE, one shared value) go through the
//! registered handle, found with one atomic load.
//!
//! Two use sites with the same name and class share one variable; the
//! first to run registers it. A use site that describes it differently
//! panics on first use, naming both places.
//!
//! A use site's first update on each thread registers the variable (once
//! per process) and fills the thread's cache: it allocates and is not
//! async-signal-safe.
//!
//! **Found by name before it runs.** Every use site is also a
//! [`DeclaredSite`](super::DeclaredSite), linked before `main` into the process's list of
//! declared sites (on ELF platforms — Linux, Android, FreeBSD — by an
//! `.init_array` entry whose function only links one `static` into a
//! list; elsewhere the list stays empty). A lookup by name and class in
//! the global registry ([`Pvars::index`], `MPI_T_pvar_get_index`) that
//! finds no registered variable registers the declared site's variable
//! and returns its index, so a tool may look a variable up before the
//! component has used it. A lookup that still finds nothing fails with
//! `MPI_T_ERR_INVALID_NAME` naming the variable and saying why: no such
//! name, the name in another class, or a use site that registers it in
//! [`global`](crate::global) while the lookup asked another registry. Afterwards its updates are, under the rules of the
//! handle classes (see `docs/signal-safety.md`). The cache of an exiting
//! thread is cleared before its records go to another thread (see
//! `hot::cells::site_cache`).

use std::collections::HashMap;

use super::bound::Bound;
use super::builder::PvarBuilder;
use super::counter::{Aggregate, Counter};
use super::level::Level;
use super::sharded::CellHandle;
use super::shared::State;
use super::table::Pvars;
use super::timer::{Timer, TimerGuard};
use super::var_id::{ClassHandle, ENABLED};
use super::watermark::{HighWatermark, LowWatermark};
use crate::hot::cells::site_cache::{self, SiteCache};
use crate::sync::unmodelled::{Mutex, OnceLock};
use crate::sync::{Arc, SiteLocal};
use crate::vocabulary::datatype::Magnitude;
use crate::vocabulary::error::Result;
use crate::vocabulary::kinds::{BindKind, PvarClass, Verbosity};

/// What a use site says of its variable: the macro's `key = value`
/// arguments, each a `const` method here.
#[derive(Debug, Clone, Copy)]
pub struct SiteDecl {
    name: &'static str,
    location: &'static str,
    description: &'static str,
    category: Option<&'static str>,
    count: Option<usize>,
    bind: BindKind,
    verbosity: Verbosity,
}

impl SiteDecl {
    /// A variable named `name`, declared at `location` (`file:line`).
    #[doc(hidden)]
    pub const fn new(name: &'static str, location: &'static str) -> Self {
        Self {
            name,
            location,
            description: "",
            category: None,
            count: None,
            bind: BindKind::NoObject,
            verbosity: Verbosity::UserBasic,
        }
    }

    /// `description = "…"`: what a tool reads.
    pub const fn description(mut self, text: &'static str) -> Self {
        self.description = text;
        self
    }

    /// `category = "…"`: the category the variable belongs to.
    pub const fn category(mut self, name: &'static str) -> Self {
        self.category = Some(name);
        self
    }

    /// `count = n`: number of elements (default 1; for a bound variable,
    /// default: decided per object instance).
    pub const fn count(mut self, n: usize) -> Self {
        self.count = Some(n);
        self
    }

    /// `bind = BindKind::…`: bind the variable to objects; the site then
    /// creates and finds instances ([`SiteRef::create_instance`],
    /// [`SiteRef::instance`]), whose handles do the updates.
    pub const fn bind(mut self, kind: BindKind) -> Self {
        self.bind = kind;
        self
    }

    /// `verbosity = Verbosity::…` (default `USER_BASIC`).
    pub const fn verbosity(mut self, v: Verbosity) -> Self {
        self.verbosity = v;
        self
    }

    /// The element count of an unbound variable.
    const fn elements(&self) -> usize {
        match self.count {
            Some(n) => n,
            None => 1,
        }
    }
}

/// The variable behind a use site, once registered.
enum Registered<H> {
    Unbound(H),
    Bound(Bound<H>),
}

/// A use site's `static`: its declaration, the registry it registers in,
/// and, after the first use, the variable. Declared by the macros.
#[doc(hidden)]
pub struct Site<H> {
    decl: SiteDecl,
    home: fn() -> &'static Arc<Pvars>,
    var: OnceLock<Registered<H>>,
}

impl<H> Site<H> {
    /// A use site registering `decl` in `home()` on first use.
    pub const fn new(decl: SiteDecl, home: fn() -> &'static Arc<Pvars>) -> Self {
        Self {
            decl,
            home,
            var: OnceLock::new(),
        }
    }
}

/// Where each (name, class) was first registered by a use site: for the
/// message of a second site that describes it differently.
fn first_sites() -> &'static Mutex<HashMap<(&'static str, PvarClass), &'static str>> {
    static FIRST: OnceLock<Mutex<HashMap<(&'static str, PvarClass), &'static str>>> =
        OnceLock::new();
    FIRST.get_or_init(|| Mutex::new(HashMap::new()))
}

impl<H: ClassHandle> Site<H> {
    /// The registered variable (registering it on first use).
    fn registered(&self) -> &Registered<H> {
        self.var.get_or_init(|| self.register())
    }

    #[cold]
    #[inline(never)]
    fn register(&self) -> Registered<H> {
        let d = &self.decl;
        let mut b = PvarBuilder::<H>::typed((self.home)(), d.name)
            .description(d.description)
            .verbosity(d.verbosity)
            .bind(d.bind);
        if let Some(c) = d.category {
            b = b.category(c);
        }
        b = match (d.count, d.bind) {
            (Some(n), _) => b.count(n),
            (None, BindKind::NoObject) => b,
            (None, _) => b.per_object_count(),
        };
        let result = if d.bind == BindKind::NoObject {
            b.register().map(Registered::Unbound)
        } else {
            b.register_bound().map(Registered::Bound)
        };
        let key = (d.name, H::CLASS);
        let mut first = first_sites().lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(var) => {
                first.entry(key).or_insert(d.location);
                var
            }
            Err(e) => {
                let other = match first.get(&key) {
                    Some(at) => format!("the use site at {at}"),
                    None => "a registration that is not a use site".to_string(),
                };
                drop(first);
                panic!(
                    "pvar: the use site at {} declares {} '{}' differently from {}: {}",
                    d.location,
                    H::CLASS.c_name(),
                    d.name,
                    other,
                    e
                );
            }
        }
    }

    /// The handle of the unbound variable.
    fn handle(&self) -> &H {
        match self.registered() {
            Registered::Unbound(h) => h,
            Registered::Bound(_) => panic!(
                "pvar: '{}' (use site at {}) is bound to objects: update an instance \
                 (`.instance(object)` / `.create_instance(object, count)`)",
                self.decl.name, self.decl.location
            ),
        }
    }

    /// The bound variable.
    fn bound(&self) -> &Bound<H> {
        match self.registered() {
            Registered::Bound(b) => b,
            Registered::Unbound(_) => panic!(
                "pvar: '{}' (use site at {}) is not bound to objects (add `bind = …`)",
                self.decl.name, self.decl.location
            ),
        }
    }
}

/// What a use-site macro returns: its `static` and its thread-local cache.
/// `Copy`; the methods depend on the class.
///
/// ```
/// for peer in 0..4 {
///     pvar::counter!("doc_site_msgs", count = 4, description = "messages per peer")
///         .inc_at(peer);
/// }
/// let reg = pvar::global();
/// let index = reg.pvars().index("doc_site_msgs", pvar::PvarClass::Counter).unwrap();
/// assert_eq!(reg.pvars().info(index).unwrap().description, "messages per peer");
/// assert_eq!(pvar::counter!("doc_site_msgs", count = 4, description = "messages per peer").get_at(2), 1);
/// ```
pub struct SiteRef<H: 'static> {
    site: &'static Site<H>,
    cache: &'static SiteLocal<SiteCache>,
}

impl<H> Clone for SiteRef<H> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<H> Copy for SiteRef<H> {}

impl<H: ClassHandle> SiteRef<H> {
    /// Used by the macros.
    #[doc(hidden)]
    pub fn new(site: &'static Site<H>, cache: &'static SiteLocal<SiteCache>) -> Self {
        Self { site, cache }
    }

    /// The variable's handle (registering it on first use): for what the
    /// use site does not offer, e.g. `get`. Panics for a bound variable.
    pub fn handle(self) -> &'static H {
        self.site.handle()
    }

    /// The variable's index in the global registry (registering it).
    pub fn index(self) -> usize {
        self.site.registered_index()
    }

    /// Creates `object`'s instance of a bound variable (`bind = …`), with
    /// `count` elements; its handle does the updates.
    ///
    /// Async-signal-safe: no.
    pub fn create_instance(self, object: u64, count: usize) -> Result<H> {
        self.site.bound().create_instance(object, count)
    }

    /// The handle of `object`'s instance of a bound variable.
    ///
    /// Async-signal-safe: no (takes the variable's instance mutex).
    pub fn instance(self, object: u64) -> Result<H> {
        self.site.bound().instance(object)
    }

    /// Drops `object`'s instance of a bound variable.
    ///
    /// Async-signal-safe: no.
    pub fn drop_instance(self, object: u64) -> Result<()> {
        self.site.bound().drop_instance(object)
    }
}

impl<H: ClassHandle> Site<H> {
    fn registered_index(&self) -> usize {
        match self.registered() {
            Registered::Unbound(h) => h.var_index(),
            Registered::Bound(b) => b.index(),
        }
    }
}

/// The cached-cell fast path of the per-thread classes. Its methods are
/// private, so the crate-private bound shows in no public signature.
#[allow(private_bounds)]
impl<H: ClassHandle + CellHandle> SiteRef<H> {
    /// Applies `f` to the calling thread's cell of element `i`.
    #[inline(always)]
    fn update(self, i: usize, f: impl Fn(u64) -> u64 + Copy) {
        if !ENABLED {
            return;
        }
        let elements = self.site.decl.elements();
        if !self.cache.with(|c| c.update(i, elements, f)) {
            self.update_slow(i, f);
        }
    }

    /// First use on this thread (or an exiting thread, or an element out of
    /// range): the handle's own path, then the cache is filled.
    #[cold]
    #[inline(never)]
    ///
    /// `f` by value (a `move` closure of the amount): taken by reference,
    /// the amount would be stored to the stack on every fast-path update.
    fn update_slow(self, i: usize, f: impl Fn(u64) -> u64) {
        let h = self.site.handle();
        if i >= h.element_count() {
            panic!(
                "pvar element {i} out of range (count {}) at the use site at {}",
                h.element_count(),
                self.site.decl.location
            );
        }
        let cells = h.cells();
        cells.update(i, &f);
        if let Some(first) = cells.cached_local_cell(0) {
            self.cache.with(|c| site_cache::fill(c, first));
        }
    }
}

impl SiteRef<Counter> {
    /// Adds 1 to element 0.
    #[inline(always)]
    pub fn inc(self) {
        self.update(0, move |v| v.wrapping_add(1));
    }

    /// Adds `n` to element 0.
    #[inline(always)]
    pub fn add(self, n: u64) {
        self.update(0, move |v| v.wrapping_add(n));
    }

    /// Adds 1 to element `i`. Panics if `i` is out of range.
    #[inline(always)]
    pub fn inc_at(self, i: usize) {
        self.update(i, move |v| v.wrapping_add(1));
    }

    /// Adds `n` to element `i`. Panics if `i` is out of range.
    #[inline(always)]
    pub fn add_at(self, i: usize, n: u64) {
        self.update(i, move |v| v.wrapping_add(n));
    }

    /// The total of element 0 over all threads.
    pub fn get(self) -> u64 {
        self.handle().get()
    }

    /// The total of element `i` over all threads.
    pub fn get_at(self, i: usize) -> u64 {
        self.handle().get_at(i)
    }
}

impl<T: Magnitude> SiteRef<Aggregate<T>> {
    /// Adds `x` to element 0.
    #[inline(always)]
    pub fn add(self, x: T) {
        self.add_at(0, x);
    }

    /// Adds `x` to element `i`. Panics if `i` is out of range.
    #[inline(always)]
    pub fn add_at(self, i: usize, x: T) {
        let bits = x.to_bits();
        if T::IS_FLOAT {
            self.update(i, move |v| {
                (f64::from_bits(v) + f64::from_bits(bits)).to_bits()
            });
        } else {
            self.update(i, move |v| v.wrapping_add(bits));
        }
    }

    /// The total of element 0 over all threads.
    pub fn get(self) -> T {
        self.handle().get()
    }
}

impl<T: Magnitude> SiteRef<Level<T>> {
    #[inline(always)]
    fn delta(self, i: usize, amount: f64, int: u64) {
        if T::IS_FLOAT {
            self.update(i, move |v| (f64::from_bits(v) + amount).to_bits());
        } else {
            self.update(i, move |v| v.wrapping_add(int));
        }
    }

    /// Adds 1 to element 0.
    #[inline(always)]
    pub fn inc(self) {
        self.delta(0, 1.0, 1);
    }

    /// Subtracts 1 from element 0.
    #[inline(always)]
    pub fn dec(self) {
        self.delta(0, -1.0, u64::MAX);
    }

    /// Adds 1 to element `i`.
    #[inline(always)]
    pub fn inc_at(self, i: usize) {
        self.delta(i, 1.0, 1);
    }

    /// Subtracts 1 from element `i`.
    #[inline(always)]
    pub fn dec_at(self, i: usize) {
        self.delta(i, -1.0, u64::MAX);
    }

    /// Sets element 0 (see [`Level::set_at`]).
    pub fn set(self, x: T) {
        if ENABLED {
            self.handle().set(x);
        }
    }

    /// The current level of element 0.
    pub fn get(self) -> T {
        self.handle().get()
    }
}

impl SiteRef<Timer> {
    /// Starts timing element 0 on the calling thread ([`Timer::start`]).
    #[inline(always)]
    pub fn start(self) {
        if ENABLED {
            self.handle().start();
        }
    }

    /// Stops timing element 0 ([`Timer::stop`]).
    #[inline(always)]
    pub fn stop(self) {
        if ENABLED {
            self.handle().stop();
        }
    }

    /// Times element 0 until the guard is dropped ([`Timer::scoped`]).
    #[inline(always)]
    pub fn scoped(self) -> TimerGuard<'static> {
        self.handle().scoped()
    }

    /// Total time of element 0 over all threads, in seconds.
    pub fn get_seconds(self) -> f64 {
        self.handle().get_seconds()
    }
}

macro_rules! watermark_site {
    ($name:ident) => {
        impl<T: Magnitude> SiteRef<$name<T>> {
            /// Records the level of element 0 ([`HighWatermark::update`]).
            #[inline(always)]
            pub fn update(self, x: T) {
                if ENABLED {
                    self.handle().update(x);
                }
            }

            /// Records the level of element `i`.
            #[inline(always)]
            pub fn update_at(self, i: usize, x: T) {
                if ENABLED {
                    self.handle().update_at(i, x);
                }
            }
        }
    };
}
watermark_site!(HighWatermark);
watermark_site!(LowWatermark);

impl SiteRef<State> {
    /// Sets the state of element 0.
    #[inline(always)]
    pub fn set(self, x: i32) {
        if ENABLED {
            self.handle().set(x);
        }
    }

    /// The state of element 0.
    pub fn get(self) -> i32 {
        self.handle().get()
    }
}
