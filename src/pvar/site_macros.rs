//! The use-site macros (see [`site`](super::site)): each expands to a
//! `static` [`Site`](crate::Site), a `const`-initialised thread-local
//! cache, and the [`SiteRef`](crate::SiteRef) over both.
//!
//! Arguments after the name are `key = value` pairs, each a `const` method
//! of [`SiteDecl`](crate::SiteDecl): `description`, `category`, `count`,
//! `bind`, `verbosity`. A misspelt key is a compile error.

/// The expansion every use-site macro shares.
#[doc(hidden)]
#[macro_export]
macro_rules! __pvar_site {
    ($handle:ty, $name:literal $(, $key:ident = $value:expr)*) => {{
        const LOCATION: &str = ::core::concat!(::core::file!(), ":", ::core::line!());
        static SITE: $crate::Site<$handle> = $crate::Site::new(
            $crate::SiteDecl::new($name, LOCATION)
            $(.$key($value))*,
            $crate::__private::global_pvars,
        );
        $crate::__pvar_site_cache!(CACHE);
        // The site in the list of declared sites, so that a lookup by name
        // finds it before it runs (see `pvar::SiteRef`).
        fn register() -> usize {
            $crate::SiteRef::new(&SITE, &CACHE).index()
        }
        static DECLARED: $crate::__private::DeclaredSite = $crate::__private::DeclaredSite::new(
            $name,
            <$handle as $crate::ClassHandle>::CLASS,
            LOCATION,
            $crate::__private::global_pvars_addr,
            register,
        );
        // An `.init_array` entry: the loader calls it before `main` (the
        // platforms are those of `LISTED_BEFORE_MAIN` in declared.rs). The
        // section holds pointers to functions taking no arguments that
        // the loader may call at start-up; `list` only links a `static`
        // into a list (no allocation, no lock, nothing that needs `main`).
        #[used]
        #[cfg_attr(
            any(target_os = "linux", target_os = "android", target_os = "freebsd"),
            unsafe(link_section = ".init_array")
        )]
        static LIST: extern "C" fn() = {
            extern "C" fn list() {
                DECLARED.list();
            }
            list
        };
        $crate::SiteRef::new(&SITE, &CACHE)
    }};
}

/// A COUNTER declared where it is updated, in the global registry.
///
/// `counter!("name", key = value, …)` returns a [`SiteRef`](crate::SiteRef)
/// with `inc`, `add`, `inc_at`, `add_at`, `get`, `get_at`, `handle`,
/// `index`. Its first use on a thread registers the variable (once) and
/// caches the thread's cell; then an update is one thread-local load, a
/// null test and the cell's load and store.
///
/// ```
/// fn send(bytes: &[u8]) {
///     pvar::counter!("doc_msgs_sent", description = "messages sent").inc();
///     pvar::aggregate!("doc_bytes_sent", description = "bytes sent").add(bytes.len() as u64);
/// }
/// send(b"hello");
/// send(b"world!");
/// assert_eq!(pvar::counter!("doc_msgs_sent", description = "messages sent").get(), 2);
/// ```
#[macro_export]
macro_rules! counter {
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Counter, $name $(, $key = $value)*)
    };
}

/// An AGGREGATE declared where it is updated: `aggregate!("name")` sums
/// `u64`, `aggregate!("name": f64)` (or `u32`) another type. Methods: `add`,
/// `add_at`, `get`. See [`counter!`](crate::counter!).
#[macro_export]
macro_rules! aggregate {
    ($name:literal : $t:ty $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Aggregate<$t>, $name $(, $key = $value)*)
    };
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Aggregate<u64>, $name $(, $key = $value)*)
    };
}

/// A LEVEL declared where it is updated: `level!("name")` (`u64`) or
/// `level!("name": f64)`. Methods: `inc`, `dec`, `inc_at`, `dec_at` (cached
/// cell), `set`, `get` (through the handle). See
/// [`counter!`](crate::counter!).
#[macro_export]
macro_rules! level {
    ($name:literal : $t:ty $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Level<$t>, $name $(, $key = $value)*)
    };
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Level<u64>, $name $(, $key = $value)*)
    };
}

/// A TIMER declared where it is used: `timer!("name").scoped()`, or
/// `start` / `stop`. The clock read dominates, so it goes through the
/// registered handle. See [`counter!`](crate::counter!).
///
/// ```
/// fn work() {
///     let _t = pvar::timer!("doc_busy_time", description = "time in work()").scoped();
///     std::hint::black_box(1 + 1);
/// }
/// work();
/// assert!(pvar::timer!("doc_busy_time", description = "time in work()").get_seconds() >= 0.0);
/// ```
#[macro_export]
macro_rules! timer {
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::Timer, $name $(, $key = $value)*)
    };
}

/// A HIGHWATERMARK declared where it is updated: `high_watermark!("name")`
/// (`u64`) or `high_watermark!("name": f64)`; `update(x)`. See
/// [`counter!`](crate::counter!).
#[macro_export]
macro_rules! high_watermark {
    ($name:literal : $t:ty $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::HighWatermark<$t>, $name $(, $key = $value)*)
    };
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::HighWatermark<u64>, $name $(, $key = $value)*)
    };
}

/// A LOWWATERMARK declared where it is updated; see
/// [`high_watermark!`](crate::high_watermark!).
#[macro_export]
macro_rules! low_watermark {
    ($name:literal : $t:ty $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::LowWatermark<$t>, $name $(, $key = $value)*)
    };
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::LowWatermark<u64>, $name $(, $key = $value)*)
    };
}

/// A STATE declared where it is set: `state!("name").set(x)`. See
/// [`counter!`](crate::counter!).
#[macro_export]
macro_rules! state {
    ($name:literal $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__pvar_site!($crate::State, $name $(, $key = $value)*)
    };
}
