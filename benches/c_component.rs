//! What a C component pays per update (`include/pvar.h`), next to the
//! Rust API, on 1 and 2 threads, in one run
//! (`cargo bench --bench c_component`).
//!
//! Group `c_component` — one update of one COUNTER per iteration:
//!
//! | case | what |
//! |---|---|
//! | `thread_local` | a plain `thread_local!` `Cell<u64>` `+= 1` (the ratios' baseline; benches/common) |
//! | `counter` | Rust [`pvar::Counter::inc`] |
//! | `local_counter` | Rust [`pvar::LocalCounter::inc`] (`counter.local(0)` fetched once per thread) |
//! | `c_inc` | `pvar_inc(v)` through the C ABI, statically linked (the rlib's `#[no_mangle]` symbol, as with `libpvar.a`) |
//! | `c_local` | `pvar_local_cell(v, 0)` once per thread, then what `pvar.h`'s inline `pvar_local_add(cell, 1)` does: a relaxed load and a relaxed store of the cell (mirrored with an `AtomicU64` view of it) |
//! | `so_inc` | `pvar_inc(v)` in `libpvar.so`, opened with `dlopen` and called through the `dlsym` pointer (what a PLT call does: an indirect call) |
//! | `so_local` | `c_local` with the cell from `libpvar.so`'s `pvar_local_cell` |
//! | `c_thread_local` | a C `_Thread_local uint64_t` `+= 1` in a component `.so` loaded with `dlopen` (`tests/c/dl/site_component.c`, `-O2 -fPIC`, the default TLS model of a shared library), a compiler barrier (`asm volatile("" ::: "memory")`) per iteration: the C macros' baseline |
//! | `c_macro` | `PVAR_COUNTER_INC(v)` in the same component and loop (one call site, its `static _Thread_local pvar_site` cache), against `libpvar.so` |
//!
//! The C variables are registered through `pvar_register` with a
//! `#[repr(C)]` mirror of `pvar_info`: the statically linked ones in this
//! process's global registry, the `.so` ones in the `.so`'s own copy of the
//! engine (its own process-wide registry; fine for a cost measurement).
//! Every case checks the exact total after each sample.
//!
//! The `.so` is `$PVAR_SO` if set, else `<target dir>/release/libpvar.so`.
//! `cargo bench` does not necessarily build (or refresh) the cdylib in the
//! profile the bench uses, so build it first:
//!
//! ```text
//! cargo build --release -p pvar-capi
//! cargo bench --features ffi --bench c_component
//! ```
//!
//! (`scripts/bench.sh` does both.) Without the `.so`, the bench prints a
//! note and skips the `so_*` cases.
//!
//! Conventions of the other benches (benches/common): `iter_custom`,
//! threads spawned per sample and lined up on a barrier, each timing its
//! own loop (a sample's time is the slowest thread's, so estimates are
//! per update per thread), every iteration passing the handle through
//! `black_box`, and each thread's CPU time as the clock with
//! `PVAR_BENCH_CLOCK=cpu`.

mod common;

use std::ffi::{CStr, CString, c_char, c_int, c_long, c_void};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::{quick, run_threads, timed};
use criterion::{BenchmarkId, Criterion};

const CASES: [&str; 9] = [
    "thread_local",
    "counter",
    "local_counter",
    "c_inc",
    "c_local",
    "so_inc",
    "so_local",
    "c_thread_local",
    "c_macro",
];

/// 1 and 2 updating threads.
const THREADS: [usize; 2] = [1, 2];

// ---------------------------------------------------------------- pvar.h

/// `PVAR_CLASS_COUNTER`.
const PVAR_CLASS_COUNTER: c_int = 7;

/// `pvar_enum_item` of `include/pvar.h`.
#[repr(C)]
#[allow(dead_code)] // only pointed to (NULL here)
struct PvarEnumItem {
    name: *const c_char,
    value: c_int,
}

/// `pvar_info` of `include/pvar.h`, field for field.
#[repr(C)]
struct PvarInfo {
    name: *const c_char,
    description: *const c_char,
    var_class: c_int,
    datatype: c_int,
    verbosity: c_int,
    bind: c_int,
    count: c_long,
    category: *const c_char,
    readonly: c_int,
    continuous: c_int,
    atomic: c_int,
    enum_name: *const c_char,
    enum_items: *const PvarEnumItem,
    enum_len: c_int,
}

impl PvarInfo {
    /// `pvar_info i = {0}; i.name = name; i.var_class = PVAR_CLASS_COUNTER;`
    fn counter(name: &CStr) -> Self {
        PvarInfo {
            name: name.as_ptr(),
            description: c"pvar bench: C component update cost".as_ptr(),
            var_class: PVAR_CLASS_COUNTER,
            datatype: 0,
            verbosity: 0,
            bind: 0,
            count: 0,
            category: std::ptr::null(),
            readonly: 0,
            continuous: 0,
            atomic: 0,
            enum_name: std::ptr::null(),
            enum_items: std::ptr::null(),
            enum_len: 0,
        }
    }
}

/// `pvar_var`.
type PvarVar = *mut c_void;

// Resolved against the pvar rlib's `#[unsafe(no_mangle)]` definitions
// (src/ffi/component/), linked statically into this bench.
unsafe extern "C" {
    fn pvar_register(info: *const PvarInfo, var: *mut PvarVar) -> c_int;
    fn pvar_last_error() -> *const c_char;
    fn pvar_inc(v: PvarVar);
    fn pvar_local_cell(v: PvarVar, i: usize) -> *mut u64;
    fn pvar_get_at(v: PvarVar, i: usize) -> u64;
}

/// The entry points a case needs, from this binary or from the `.so`.
#[derive(Clone, Copy)]
struct Api {
    register: unsafe extern "C" fn(*const PvarInfo, *mut PvarVar) -> c_int,
    last_error: unsafe extern "C" fn() -> *const c_char,
    inc: unsafe extern "C" fn(PvarVar),
    local_cell: unsafe extern "C" fn(PvarVar, usize) -> *mut u64,
    get_at: unsafe extern "C" fn(PvarVar, usize) -> u64,
}

/// The statically linked C interface (`c_inc` calls `pvar_inc` directly).
const STATIC: Api = Api {
    register: pvar_register,
    last_error: pvar_last_error,
    inc: pvar_inc,
    local_cell: pvar_local_cell,
    get_at: pvar_get_at,
};

/// A registered `pvar_var`, shareable with the bench threads (the C
/// interface is thread-safe; the handle is never freed).
#[derive(Clone, Copy)]
struct Var(PvarVar);
// SAFETY: `pvar_var` handles may be used from any thread (pvar.h).
unsafe impl Send for Var {}
// SAFETY: as above.
unsafe impl Sync for Var {}

impl Api {
    /// Registers COUNTER `name` through `pvar_register` (registering it
    /// again returns the same variable).
    fn counter(&self, name: &str) -> Var {
        let name = CString::new(name).unwrap();
        let info = PvarInfo::counter(&name);
        let mut v: PvarVar = std::ptr::null_mut();
        // SAFETY: `info` is a valid `pvar_info` whose strings outlive the
        // call (the engine copies them); `v` is a valid out-pointer.
        let rc = unsafe { (self.register)(&info, &mut v) };
        if rc != 0 || v.is_null() {
            // SAFETY: NULL or a NUL-terminated string of this thread.
            let why = unsafe { (self.last_error)() };
            let why = if why.is_null() {
                "?".into()
            } else {
                // SAFETY: as above.
                unsafe { CStr::from_ptr(why) }.to_string_lossy()
            };
            panic!("pvar_register({name:?}) = {rc}: {why}");
        }
        Var(v)
    }

    fn total(&self, v: Var) -> u64 {
        // SAFETY: `v` is a live `pvar_var` of this API.
        unsafe { (self.get_at)(v.0, 0) }
    }
}

// ---------------------------------------------------------------- the .so

/// `libpvar.so`'s entry points, or why there are none.
fn so_api() -> &'static Result<Api, String> {
    static SO: OnceLock<Result<Api, String>> = OnceLock::new();
    SO.get_or_init(open_so)
}

fn so_path() -> PathBuf {
    if let Some(p) = std::env::var_os("PVAR_SO") {
        return PathBuf::from(p);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("release").join("libpvar.so")
}

/// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`: the library's symbols stay out
/// of the global scope, and its own references bind inside it (this
/// binary exports nothing). Never closed.
fn dlopen(path: &std::path::Path) -> Result<*mut c_void, String> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a valid NUL-terminated path; the libraries opened here run
    // only Rust's and plain C initialisers.
    let lib = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror returns NULL or a NUL-terminated string.
        let e = unsafe { libc::dlerror() };
        let e = if e.is_null() {
            "?".into()
        } else {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        };
        return Err(format!("dlopen {}: {e}", path.display()));
    }
    Ok(lib)
}

/// `dlsym(lib, name)`, an error if absent.
fn dlsym(lib: *mut c_void, name: &CStr) -> Result<*mut c_void, String> {
    // SAFETY: `lib` is a live handle (never closed); `name` is
    // NUL-terminated.
    let p = unsafe { libc::dlsym(lib, name.as_ptr()) };
    if p.is_null() {
        Err(format!("dlsym {name:?}: not found"))
    } else {
        Ok(p)
    }
}

fn open_so() -> Result<Api, String> {
    let path = so_path();
    if !path.exists() {
        return Err(format!(
            "{} not found (build it with `cargo build --release -p pvar-capi`, or set PVAR_SO)",
            path.display()
        ));
    }
    let lib = dlopen(&path)?;
    let sym = |name: &CStr| dlsym(lib, name);
    // SAFETY: each symbol is the `extern "C"` function of include/pvar.h
    // with this signature.
    let api = unsafe {
        Api {
            register: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(*const PvarInfo, *mut PvarVar) -> c_int,
            >(sym(c"pvar_register")?),
            last_error: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> *const c_char>(
                sym(c"pvar_last_error")?,
            ),
            inc: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(PvarVar)>(sym(
                c"pvar_inc",
            )?),
            local_cell: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(PvarVar, usize) -> *mut u64,
            >(sym(c"pvar_local_cell")?),
            get_at: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(PvarVar, usize) -> u64>(
                sym(c"pvar_get_at")?,
            ),
        }
    };
    // Its own copy of the engine: `pvar_inc` there must not be ours.
    if std::ptr::fn_addr_eq(api.inc, STATIC.inc) {
        return Err(format!(
            "{}: dlsym returned this binary's pvar_inc",
            path.display()
        ));
    }
    println!("c_component: so_* cases use {}", path.display());
    Ok(api)
}

// ---------------------------------------------------------------- cases

/// `iters` × `pvar_inc(v)` through `api`'s pointer (the `.so`: what a
/// PLT call does, an indirect call), after one untimed call (first touch:
/// the thread's cells).
fn c_inc(api: Api, v: Var, iters: u64) -> Duration {
    // SAFETY: `v` is a live `pvar_var` of `api`.
    unsafe { (api.inc)(v.0) };
    // SAFETY: as above.
    timed(iters, || unsafe { (api.inc)(black_box(v).0) })
}

/// [`c_inc`] calling this binary's `pvar_inc` symbol, not an `Api`
/// pointer. rustc still calls external functions through the GOT (the
/// address in a register: a predicted indirect call), where a C program
/// linked with `libpvar.a` makes a direct call.
fn static_inc(_: Api, v: Var, iters: u64) -> Duration {
    // SAFETY: `v` is a live `pvar_var` of this binary's engine.
    unsafe { pvar_inc(v.0) };
    // SAFETY: as above.
    timed(iters, || unsafe { pvar_inc(black_box(v).0) })
}

/// `pvar_local_cell(v, 0)` once, then `iters` × what `pvar_local_add(cell,
/// 1)` does: `__atomic_store_n(cell, __atomic_load_n(cell, RELAXED) + 1,
/// RELAXED)`.
fn c_local(api: Api, v: Var, iters: u64) -> Duration {
    // SAFETY: `v` is a live COUNTER of `api`, element 0 exists.
    let p = unsafe { (api.local_cell)(v.0, 0) };
    assert!(!p.is_null(), "pvar_local_cell returned NULL");
    // SAFETY: the cell is an 8-byte aligned u64 that the engine reads
    // atomically; it stays valid on this thread while it runs and `v`
    // lives, and only this thread writes it.
    let cell: &AtomicU64 = unsafe { AtomicU64::from_ptr(p) };
    timed(iters, || {
        let c = black_box(cell);
        c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    })
}

/// `threads` threads × `iters` updates of `api`'s COUNTER `name` by
/// `body`; checks the exact total (`extra` untimed updates per thread).
fn c_case(
    api: Api,
    name: &str,
    threads: usize,
    iters: u64,
    extra: u64,
    body: fn(Api, Var, u64) -> Duration,
) -> Duration {
    let v = api.counter(name);
    let before = api.total(v);
    let d = run_threads(threads, iters, move |iters| body(api, v, iters));
    let got = api.total(v).wrapping_sub(before);
    if !cfg!(pvar_compile_out) || !std::ptr::fn_addr_eq(api.inc, STATIC.inc) {
        assert_eq!(
            got,
            threads as u64 * (iters + extra),
            "exact total of {name}"
        );
    }
    d
}

// ------------------------------------------------ the C component (.so)

/// `tests/c/dl/site_component.c`, compiled here with the system `cc` and
/// loaded with `dlopen` (it links `libpvar.so`, the engine a C program
/// uses).
#[derive(Clone, Copy)]
struct Component {
    init: unsafe extern "C" fn() -> c_int,
    sent: unsafe extern "C" fn() -> PvarVar,
    inc_loop: unsafe extern "C" fn(u64),
    plain_loop: unsafe extern "C" fn(u64),
    plain_total: unsafe extern "C" fn() -> u64,
    get_at: unsafe extern "C" fn(PvarVar, usize) -> u64,
}

fn component() -> &'static Result<Component, String> {
    static COMPONENT: OnceLock<Result<Component, String>> = OnceLock::new();
    COMPONENT.get_or_init(build_component)
}

fn build_component() -> Result<Component, String> {
    let libpvar = so_path();
    let libdir = libpvar.parent().ok_or("libpvar.so has no directory")?;
    if !libpvar.exists() {
        return Err(format!("{} not found", libpvar.display()));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = libdir.join("libpvar_bench_site_component.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .args(["-std=c11", "-O2", "-fPIC", "-shared"])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(root.join("tests/c/dl/site_component.c"))
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-lpvar")
        .status()
        .map_err(|e| format!("{cc}: {e}"))?;
    if !status.success() {
        return Err(format!("{cc} failed to build the component: {status}"));
    }
    let lib = dlopen(&out)?;
    let sym = |name: &CStr| dlsym(lib, name);
    // SAFETY: each symbol has the C signature of site_component.c (and
    // pvar.h's pvar_get_at, resolved through the component's dependency on
    // libpvar.so); the library is never closed.
    let c = unsafe {
        Component {
            init: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(sym(
                c"site_component_init",
            )?),
            sent: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> PvarVar>(sym(
                c"site_component_sent",
            )?),
            inc_loop: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(u64)>(sym(
                c"site_component_inc",
            )?),
            plain_loop: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(u64)>(sym(
                c"site_component_plain_loop",
            )?),
            plain_total: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> u64>(sym(
                c"site_component_plain_total",
            )?),
            get_at: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(PvarVar, usize) -> u64>(
                sym(c"pvar_get_at")?,
            ),
        }
    };
    // SAFETY: registers the component's variables (no arguments).
    let rc = unsafe { (c.init)() };
    if rc != 0 {
        return Err(format!("site_component_init returned {rc}"));
    }
    Ok(c)
}

/// `threads` threads × `iters` iterations of the component's loop `which`
/// (one call per thread, timed whole); checks the macro's exact total.
fn component_case(threads: usize, iters: u64, macro_loop: bool) -> Duration {
    let c = *component()
        .as_ref()
        .expect("c_* component cases need the component");
    // SAFETY: the component is initialised; element 0 exists.
    let before = unsafe { (c.get_at)((c.sent)(), 0) };
    let d = run_threads(threads, iters, move |iters| {
        // Warm up: fill the call site's cache (first use on this thread).
        // SAFETY: plain C loops of the component.
        unsafe {
            if macro_loop {
                (c.inc_loop)(1);
            } else {
                (c.plain_loop)(1);
            }
        }
        let start = common::Stamp::now();
        // SAFETY: as above.
        unsafe {
            if macro_loop {
                (c.inc_loop)(iters);
            } else {
                (c.plain_loop)(iters);
            }
        }
        let d = start.elapsed();
        if !macro_loop {
            // SAFETY: reads this thread's plain counter.
            black_box(unsafe { (c.plain_total)() });
        }
        d
    });
    if macro_loop && !cfg!(pvar_compile_out) {
        // SAFETY: as above.
        let got = unsafe { (c.get_at)((c.sent)(), 0) }.wrapping_sub(before);
        assert_eq!(
            got,
            threads as u64 * (iters + 1),
            "exact total of the C macro"
        );
    }
    d
}

fn so() -> Api {
    *so_api().as_ref().expect("so_* cases run only with the .so")
}

fn measure(case: &str, threads: usize, iters: u64) -> Duration {
    match case {
        "thread_local" => common::thread_local_case(threads, iters),
        "counter" => common::counter_case(threads, iters),
        "local_counter" => common::local_counter_case(threads, iters),
        "c_inc" => c_case(STATIC, "bench_c_inc", threads, iters, 1, static_inc),
        "c_local" => c_case(STATIC, "bench_c_local", threads, iters, 0, c_local),
        "so_inc" => c_case(so(), "bench_so_inc", threads, iters, 1, c_inc),
        "so_local" => c_case(so(), "bench_so_local", threads, iters, 0, c_local),
        "c_thread_local" => component_case(threads, iters, false),
        "c_macro" => component_case(threads, iters, true),
        _ => unreachable!("unknown case {case}"),
    }
}

fn bench(c: &mut Criterion) {
    let have_so = match so_api() {
        Ok(_) => true,
        Err(why) => {
            println!("c_component: skipping so_inc and so_local: {why}");
            false
        }
    };
    let have_component = match component() {
        Ok(_) => true,
        Err(why) => {
            println!("c_component: skipping c_thread_local and c_macro: {why}");
            false
        }
    };
    let mut group = c.benchmark_group("c_component");
    quick(&mut group);
    for t in THREADS {
        for &case in &CASES {
            if case.starts_with("so_") && !have_so {
                continue;
            }
            if matches!(case, "c_thread_local" | "c_macro") && !have_component {
                continue;
            }
            group.bench_with_input(BenchmarkId::new(case, t), &t, |b, &t| {
                b.iter_custom(|iters| measure(case, t, iters))
            });
        }
    }
    group.finish();
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
}
