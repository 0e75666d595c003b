/*
 * pvar.h — the component side of libpvar from C: register performance
 * variables of every class (arrays, variables bound to objects, variables
 * computed by callback) and control variables, define categories, and
 * update the variables on hot paths.
 *
 * Everything is registered in the process-wide registry that the MPI_T
 * interface (mpi_t.h) serves to tools. This header is self-contained: it
 * needs neither mpi.h nor mpi_t.h (constant values are those of the MPI 5.0
 * standard ABI, the same numbers mpi_t.h uses).
 *
 * Updates (pvar_inc, pvar_add, pvar_set, ...) are one call into the Rust
 * engine's inlined fast path: for counters, a relaxed load and a relaxed
 * store of the calling thread's own cell — no lock, no read-modify-write.
 * They return void; on a NULL handle, an element out of range, or an update
 * the class does not support (e.g. pvar_dec on a counter) they do nothing.
 * They are thread-safe, and async-signal-safe once the thread has updated
 * the variable or called pvar_prepare_thread().
 *
 * Component handles (pvar_var, pvar_bound, pvar_cvar, pvar_bound_cvar) are
 * owned pointers like FILE *: free them once with their *_free function and
 * do not use them afterwards. Freeing a handle never unregisters anything.
 *
 * Registration functions return 0 (MPI_SUCCESS) or an MPI_T error code
 * (1006 = MPI_T_ERR_INVALID when a registration is refused); the reason is
 * in pvar_last_error().
 */
#ifndef PVAR_H
#define PVAR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants (MPI 5.0 ABI values) --------------------------------- */

/* Classes (= MPI_T_PVAR_CLASS_*). */
#define PVAR_CLASS_STATE         1
#define PVAR_CLASS_LEVEL         2
#define PVAR_CLASS_SIZE          3
#define PVAR_CLASS_PERCENTAGE    4
#define PVAR_CLASS_HIGHWATERMARK 5
#define PVAR_CLASS_LOWWATERMARK  6
#define PVAR_CLASS_COUNTER       7
#define PVAR_CLASS_AGGREGATE     8
#define PVAR_CLASS_TIMER         9
#define PVAR_CLASS_GENERIC       10

/* Datatypes (= the handle values of MPI_INT, ... in the MPI 5.0 ABI).
 * 0 in a pvar_info / pvar_cvar_info means "the class default". */
#define PVAR_TYPE_DEFAULT            0
#define PVAR_TYPE_COUNT              0x202 /* int64_t */
#define PVAR_TYPE_INT                0x209 /* int */
#define PVAR_TYPE_UNSIGNED           0x20d /* unsigned */
#define PVAR_TYPE_UNSIGNED_LONG      0x20e /* unsigned long (64-bit) */
#define PVAR_TYPE_UNSIGNED_LONG_LONG 0x20f /* unsigned long long */
#define PVAR_TYPE_DOUBLE             0x214 /* double */
#define PVAR_TYPE_CHAR               0x243 /* char (callback pvars, cvars) */

/* Verbosity (= MPI_T_VERBOSITY_*); 0 means USER_BASIC. */
#define PVAR_VERBOSITY_USER_BASIC    0x09
#define PVAR_VERBOSITY_USER_DETAIL   0x0a
#define PVAR_VERBOSITY_USER_ALL      0x0c
#define PVAR_VERBOSITY_TUNER_BASIC   0x11
#define PVAR_VERBOSITY_TUNER_DETAIL  0x12
#define PVAR_VERBOSITY_TUNER_ALL     0x14
#define PVAR_VERBOSITY_MPIDEV_BASIC  0x21
#define PVAR_VERBOSITY_MPIDEV_DETAIL 0x22
#define PVAR_VERBOSITY_MPIDEV_ALL    0x24

/* Binding (= MPI_T_BIND_*); 0 means unbound (NO_OBJECT). */
#define PVAR_BIND_NO_OBJECT      1
#define PVAR_BIND_MPI_COMM       2
#define PVAR_BIND_MPI_DATATYPE   3
#define PVAR_BIND_MPI_ERRHANDLER 4
#define PVAR_BIND_MPI_FILE       5
#define PVAR_BIND_MPI_GROUP      6
#define PVAR_BIND_MPI_OP         7
#define PVAR_BIND_MPI_REQUEST    8
#define PVAR_BIND_MPI_WIN        9
#define PVAR_BIND_MPI_MESSAGE    10
#define PVAR_BIND_MPI_INFO       11
#define PVAR_BIND_MPI_SESSION    12

/* Control variable scopes (= MPI_T_SCOPE_*); 0 means LOCAL. */
#define PVAR_SCOPE_CONSTANT 1
#define PVAR_SCOPE_READONLY 2
#define PVAR_SCOPE_LOCAL    3
#define PVAR_SCOPE_GROUP    4
#define PVAR_SCOPE_GROUP_EQ 5
#define PVAR_SCOPE_ALL      6
#define PVAR_SCOPE_ALL_EQ   7

/* Object handle values of the MPI 5.0 ABI, for bound instances: a tool
 * that passes &comm with comm == MPI_COMM_WORLD reaches the instance
 * created for PVAR_OBJECT_COMM_WORLD. */
#define PVAR_OBJECT_COMM_NULL  UINT64_C(0x100)
#define PVAR_OBJECT_COMM_WORLD UINT64_C(0x101)
#define PVAR_OBJECT_COMM_SELF  UINT64_C(0x102)

/* Tri-state flags of pvar_info (readonly, continuous, atomic). */
#define PVAR_DEFAULT 0 /* what the engine chooses for the class */
#define PVAR_YES     1
#define PVAR_NO      2

/* pvar_info.count: 0 means 1 element; PVAR_COUNT_PER_OBJECT means each
 * bound instance has its own count (given to pvar_bound_create). */
#define PVAR_COUNT_PER_OBJECT (-1L)

/* Events a notify callback hears. */
#define PVAR_NOTIFY_BIND  0
#define PVAR_NOTIFY_START 1
#define PVAR_NOTIFY_STOP  2
#define PVAR_NOTIFY_FREE  3

/* ---- opaque handles ------------------------------------------------- */

typedef struct pvar_var_s *pvar_var;               /* updatable variable or instance */
typedef struct pvar_bound_s *pvar_bound;           /* variable bound to objects */
typedef struct pvar_cvar_s *pvar_cvar;             /* control variable value */
typedef struct pvar_bound_cvar_s *pvar_bound_cvar; /* control variable bound to objects */

/* ---- descriptions --------------------------------------------------- */

typedef struct pvar_enum_item {
    const char *name;
    int value;
} pvar_enum_item;

/* Zero-initialise and fill in: `pvar_info i = {0}; i.name = ...`. */
typedef struct pvar_info {
    const char *name;        /* required; unique together with the class */
    const char *description; /* NULL: none */
    int var_class;           /* PVAR_CLASS_* */
    int datatype;            /* PVAR_TYPE_*; 0: class default (double for
                                TIMER/PERCENTAGE, int for STATE, else
                                unsigned long long) */
    int verbosity;           /* PVAR_VERBOSITY_*; 0: USER_BASIC */
    int bind;                /* PVAR_BIND_*; 0: unbound */
    long count;              /* elements; 0: 1; PVAR_COUNT_PER_OBJECT */
    const char *category;    /* NULL: none; may be defined later */
    int readonly;            /* PVAR_DEFAULT / PVAR_YES / PVAR_NO */
    int continuous;          /* PVAR_DEFAULT / PVAR_YES / PVAR_NO */
    int atomic;              /* PVAR_DEFAULT / PVAR_YES / PVAR_NO */
    const char *enum_name;   /* STATE (MPI_INT) only; NULL: no enumeration */
    const pvar_enum_item *enum_items;
    int enum_len;
} pvar_info;

typedef struct pvar_cvar_info {
    const char *name;        /* required, unique among control variables */
    const char *description; /* NULL: none */
    int datatype;            /* PVAR_TYPE_*; 0: int */
    int verbosity;           /* 0: USER_BASIC */
    int scope;               /* PVAR_SCOPE_*; 0: LOCAL */
    int bind;                /* 0: unbound */
    const char *category;    /* NULL: none */
    const char *env;         /* comma-separated environment variables that
                                override the default, ascending priority */
    int64_t default_int;     /* default for INT and COUNT */
    uint64_t default_unsigned; /* default for the unsigned types */
    double default_double;   /* default for DOUBLE */
    const char *default_string; /* default for CHAR (NULL: "") */
    size_t capacity;         /* CHAR: bytes including the NUL; 0: 256 */
    const char *enum_name;   /* INT only */
    const pvar_enum_item *enum_items;
    int enum_len;
} pvar_cvar_info;

/* ---- registration --------------------------------------------------- */

/* The reason the last failing pvar_* call on this thread failed, or NULL. */
const char *pvar_last_error(void);

/* An unbound variable of info->var_class. Registering the same name and
 * class again with identical metadata returns the same variable. */
int pvar_register(const pvar_info *info, pvar_var *var);

/* A variable bound to objects of info->bind; create one instance per
 * object. `object` is the object's handle value as tools hold it (e.g.
 * (uint64_t)(uintptr_t)comm); `count` 0 means the registered count. */
int pvar_register_bound(const pvar_info *info, pvar_bound *bound);
int pvar_bound_create(pvar_bound bound, uint64_t object, size_t count, pvar_var *var);
int pvar_bound_drop(pvar_bound bound, uint64_t object);
int pvar_bound_index(pvar_bound bound);
void pvar_bound_free(pvar_bound bound);

/* Names `object` (of kind `bind`, a PVAR_BIND_* other than NO_OBJECT) for
 * readers outside MPI_T: an exported snapshot, `pvar read` and `pvar top`
 * show "comm MPI_COMM_WORLD" instead of the handle value. NULL forgets the
 * name: do so before the object's handle value can be reused. Naming it
 * again replaces the name. Not async-signal-safe. */
int pvar_object_label(int bind, uint64_t object, const char *label);

/* A variable whose values the component computes. Values cross as the
 * 64-bit pattern of the datatype: unsigned as is, int/count two's
 * complement, double via memcpy (see pvar_bits_from_double). `bound` is 1
 * with the object's handle value in `object` for bound variables, else 0.
 * The callbacks may be called from any thread (and, for read, from a tool's
 * signal handler): they must be thread-safe. notify may be NULL.
 * For PVAR_NOTIFY_BIND, notify returns the element count for the object
 * (-1: the registered count). A handle hears BIND, then START/STOP as the
 * tool starts and stops it (a continuous variable's handle: START at
 * allocation, STOP before FREE), then FREE.
 * Values are in the datatype's units (a TIMER: seconds as a double or
 * nanoseconds, not ticks); SUM classes return running totals.
 * Only SUM classes may be writable (readonly = PVAR_NO) or atomic: their
 * handles keep per-handle accum/offset, so a tool's write or reset changes
 * only what that handle reads. Every other class is read-only (a write
 * could only reach the component, where every session would see it); flags
 * left PVAR_DEFAULT make a callback HIGH/LOWWATERMARK read-only and not
 * atomic. */
typedef uint64_t (*pvar_read_fn)(void *context, uint64_t object, int bound, size_t element);
typedef long (*pvar_notify_fn)(void *context, int event, uint64_t object, int bound);
int pvar_register_callback(const pvar_info *info, pvar_read_fn read, pvar_notify_fn notify,
                           void *context, int *index);

static inline uint64_t pvar_bits_from_double(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

int pvar_var_index(pvar_var var);  /* the MPI_T pvar index; -1 for NULL */
size_t pvar_var_count(pvar_var var);
void pvar_var_free(pvar_var var);
/* Component unloaded: tools' accesses fail with MPI_T_ERR_INVALID_INDEX
 * until the variable is registered again. */
int pvar_deactivate(int index);
/* Allocate this thread's cells now, so later updates (also from a signal
 * handler) never allocate. */
void pvar_prepare_thread(void);

/* ---- updates (element 0, and element i of arrays) -------------------- */
/* An MPI_UNSIGNED LEVEL, SIZE or watermark keeps the whole uint64_t given to
 * pvar_set / pvar_watermark_update; tools read it saturated at UINT_MAX
 * (docs/tool-guide.md, "Values at the edges of their range"). */

void pvar_inc(pvar_var v);                      /* COUNTER, AGGREGATE, LEVEL */
void pvar_inc_at(pvar_var v, size_t i);
void pvar_dec(pvar_var v);                      /* LEVEL */
void pvar_dec_at(pvar_var v, size_t i);
void pvar_add(pvar_var v, uint64_t n);          /* COUNTER, AGGREGATE */
void pvar_add_at(pvar_var v, size_t i, uint64_t n);
void pvar_add_double(pvar_var v, double x);     /* AGGREGATE */
void pvar_add_double_at(pvar_var v, size_t i, double x);
void pvar_set(pvar_var v, uint64_t n);          /* LEVEL, SIZE, STATE, GENERIC */
void pvar_set_at(pvar_var v, size_t i, uint64_t n);
void pvar_set_int(pvar_var v, int64_t n);       /* STATE, GENERIC (signed) */
void pvar_set_int_at(pvar_var v, size_t i, int64_t n);
void pvar_set_double(pvar_var v, double x);     /* PERCENTAGE, double LEVEL/SIZE/GENERIC */
void pvar_set_double_at(pvar_var v, size_t i, double x);
void pvar_watermark_init(pvar_var v, double level); /* every element's level */
void pvar_watermark_update(pvar_var v, uint64_t level);
void pvar_watermark_update_at(pvar_var v, size_t i, uint64_t level);
void pvar_watermark_update_double(pvar_var v, double level);
void pvar_watermark_update_double_at(pvar_var v, size_t i, double level);
void pvar_timer_start(pvar_var v);              /* TIMER, per thread */
void pvar_timer_start_at(pvar_var v, size_t i);
void pvar_timer_stop(pvar_var v);
void pvar_timer_stop_at(pvar_var v, size_t i);
void pvar_timer_add_ns(pvar_var v, uint64_t ns);
void pvar_timer_add_ns_at(pvar_var v, size_t i, uint64_t ns);

/* Call-free updates on the calling thread's own cell (what Rust's
 * Counter::local does): for an integer COUNTER, AGGREGATE or LEVEL,
 * pvar_local_cell returns element i's cell of the calling thread (NULL for
 * other variables, i out of range, or a thread that is exiting);
 * pvar_local_add/inc/dec are then a relaxed load and a relaxed store,
 * inlined, with no call and no TLS lookup. The pointer is valid only on the thread that obtained it, until
 * that thread exits, and while `v` is not freed. The first call on a
 * thread may allocate. */
uint64_t *pvar_local_cell(pvar_var v, size_t i);

static inline void pvar_local_add(uint64_t *cell, uint64_t n) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(cell, __atomic_load_n(cell, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#else
    *(volatile uint64_t *)cell += n; /* single writer: this thread */
#endif
}
static inline void pvar_local_inc(uint64_t *cell) { pvar_local_add(cell, 1); }
/* LEVEL only: the cell holds this thread's delta, wrapping. */
static inline void pvar_local_dec(uint64_t *cell) { pvar_local_add(cell, ~(uint64_t)0); }

/* ---- use-site macros: updates at thread-local cost ------------------- */

/* Each macro call keeps, per thread, a cache of the calling thread's cell
 * in a `static __thread pvar_use_site` of its own, so a steady-state update
 * is: the cache's handle compared with the handle given, the engine's site
 * epoch (one word, read relaxed) compared with the cache's, and the cell's
 * relaxed load and store: no call (x86-64, gcc 12 -O2: 10 instructions
 * besides loading the handle, where the older pvar_site check below takes
 * 17). The first update on each thread (and any update the
 * cache cannot serve) calls pvar_use_site_fill_v1, then, if that cannot
 * serve it either, the update function (pvar_add_at, ...), which handles
 * everything else: a NULL handle, an element out of range (nothing
 * happens), a thread that is exiting (the update goes to the shared orphan
 * record).
 *
 *   PVAR_COUNTER_INC(v)  PVAR_COUNTER_INC_AT(v, i)
 *   PVAR_COUNTER_ADD(v, n)  PVAR_COUNTER_ADD_AT(v, i, n)
 *   PVAR_AGGREGATE_ADD(v, n)  PVAR_AGGREGATE_ADD_AT(v, i, n)     integer
 *   PVAR_AGGREGATE_ADD_DOUBLE(v, x)  PVAR_AGGREGATE_ADD_DOUBLE_AT(v, i, x)
 *   PVAR_LEVEL_INC(v)  PVAR_LEVEL_DEC(v)  PVAR_LEVEL_INC_AT(v, i)  PVAR_LEVEL_DEC_AT(v, i)
 *
 * A cache is keyed by the handle, so one call site may be used with
 * different variables (it refills when the handle changes). The handle
 * must stay live (not pvar_var_free'd) while any thread may update
 * through it, as for every update. The epoch moves before any handle is
 * freed (so a handle made later at the address of a freed one, e.g.
 * per-object instances made and freed at run time, finds every cache of
 * that address stale and refills instead of reaching the freed handle's
 * cells) and when a thread that used the macros exits (so an update from
 * a later thread-local destructor on that thread cannot reach the record
 * the next thread takes over; it goes to the orphan record). Each move
 * makes every cache refill once. A component using the macros may be a
 * shared library loaded with dlopen and unloaded with dlclose: nothing
 * outside it points at its caches.
 *
 * TLS model: the caches are `static` thread-locals of the component, so
 * they take the compiler's model for it: local-exec in an executable,
 * general-dynamic (a __tls_get_addr call per access, hoisted out of loops
 * where the compiler can) in a -fPIC shared library. A library loaded at
 * startup (linked by the executable, as an MPI library is) may define
 * PVAR_TLS_MODEL "initial-exec" before including this header: the caches
 * are then one %fs-relative access (glibc also grants a dlopen'ed library
 * initial-exec TLS while its small static TLS reserve lasts; dlopen fails
 * cleanly when it does not).
 *
 * Signals: once a thread has updated through a call site (or through any
 * site of the variable after pvar_prepare_thread), that site's updates
 * are async-signal-safe on the thread. The first update of a call site on
 * a thread touches the component's thread-local storage, which for a
 * dlopen'ed library may allocate: do it before signals can arrive.
 *
 * Which to use: the macros on hot paths; the functions (pvar_inc, ...)
 * on cold paths and for TIMER, watermarks, STATE, SIZE, PERCENTAGE and
 * GENERIC, whose updates are not a per-thread cell. Define PVAR_NO_UPDATES
 * before including this header to compile every macro update to nothing
 * (registration still works). */

/* A cache keyed by the handle's serial and the thread's record owner word
 * (the macros' layout before pvar_use_site; still served, for code that
 * keeps its own caches and reads owner/incarnation, e.g. mpi/c): valid
 * while var, *var's serial, count and *owner == incarnation all match. */
typedef struct pvar_site {
    pvar_var var;           /* the handle the cache was filled for */
    uint64_t serial;        /* that handle's serial (its first word) */
    uint64_t *cell;         /* this thread's cell of element 0 (NULL: empty) */
    size_t count;           /* the variable's element count */
    const uint64_t *owner;  /* owner word of this thread's record */
    uint64_t incarnation;   /* this thread's value of *owner */
} pvar_site;

#define PVAR_SITE_INT    0
#define PVAR_SITE_DOUBLE 1

/* The slow path: refills `site` for `v` and returns this thread's cell of
 * element i, or NULL (then call the update function). The suffix names
 * the layout of pvar_site above: a component compiled against another
 * layout fails to load (an undefined symbol) rather than have its
 * thread-local caches overwritten. */
uint64_t *pvar_site_fill_v2(pvar_site *site, pvar_var v, size_t i, int kind);

#if defined(__cplusplus) && __cplusplus >= 201103L
#define PVAR_THREAD_LOCAL_ thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PVAR_THREAD_LOCAL_ _Thread_local
#else
#define PVAR_THREAD_LOCAL_ __thread
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PVAR_LIKELY_(x) __builtin_expect(!!(x), 1)
#define PVAR_LOAD_RELAXED_(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define PVAR_UNUSED_ __attribute__((unused))
#else
#define PVAR_LIKELY_(x) (x)
#define PVAR_LOAD_RELAXED_(p) (*(volatile const uint64_t *)(p))
#define PVAR_UNUSED_
#endif

#if defined(PVAR_TLS_MODEL) && (defined(__GNUC__) || defined(__clang__))
#define PVAR_SITE_TLS_ static PVAR_THREAD_LOCAL_ __attribute__((tls_model(PVAR_TLS_MODEL)))
#else
#define PVAR_SITE_TLS_ static PVAR_THREAD_LOCAL_
#endif

/* The serial of a live, non-NULL handle: the first word it points to. */
static inline uint64_t pvar_var_serial_(pvar_var v) { return *(const uint64_t *)(const void *)v; }

/* This thread's cell of element i of v from `site`, or NULL. A filled
 * cache holds a non-NULL handle, so v is dereferenced only when it is
 * that non-NULL (live) handle's address. */
static inline uint64_t *pvar_site_cell(pvar_site *site, pvar_var v, size_t i, int kind) {
    uint64_t *cell = site->cell;
    if (PVAR_LIKELY_(cell != NULL && site->var == v && pvar_var_serial_(v) == site->serial &&
                     i < site->count &&
                     PVAR_LOAD_RELAXED_(site->owner) == site->incarnation))
        return cell + i;
    return pvar_site_fill_v2(site, v, i, kind);
}

/* A use-site macro's per-thread cache (the macros declare one per call
 * site; pvar_site above is the older layout, still served). Filled: `var`
 * and `epoch` say for which handle and at which site epoch, `cell` is the
 * thread's cell of element 0 and `count` the element count. Unfilled:
 * `epoch_word` points at a word no epoch equals. */
typedef struct pvar_use_site {
    pvar_var var;                /* the handle the cache was filled for */
    uint64_t epoch;              /* the site epoch then (0: being written) */
    uint64_t *cell;              /* this thread's cell of element 0 */
    size_t count;                /* the variable's element count */
    const uint64_t *epoch_word;  /* the engine's site epoch word */
} pvar_use_site;

/* The slow path of the macros: refills `site` for `v` and returns this
 * thread's cell of element i, or NULL (then call the update function). */
uint64_t *pvar_use_site_fill_v1(pvar_use_site *site, pvar_var v, size_t i, int kind);

/* What an unfilled cache's epoch_word points at: never an epoch. */
static const uint64_t pvar_use_site_unfilled_ PVAR_UNUSED_ = ~(uint64_t)0;
#define PVAR_USE_SITE_INIT {NULL, 0, NULL, 0, &pvar_use_site_unfilled_}

/* This thread's cell of element i of v from `site`, or NULL. Two compares
 * (handle, epoch) and, for an element other than a constant 0, the range
 * test; v is never dereferenced here. */
static inline int pvar_use_site_hit_(const pvar_use_site *site, pvar_var v, size_t i) {
    return site->var == v && PVAR_LOAD_RELAXED_(site->epoch_word) == site->epoch &&
           (i == 0 || i < site->count);
}
static inline uint64_t *pvar_use_site_cell(pvar_use_site *site, pvar_var v, size_t i, int kind) {
    if (PVAR_LIKELY_(pvar_use_site_hit_(site, v, i)))
        return site->cell + i;
    return pvar_use_site_fill_v1(site, v, i, kind);
}

static inline void pvar_site_add_double_(uint64_t *cell, double x) {
    uint64_t bits = PVAR_LOAD_RELAXED_(cell);
    double d;
    memcpy(&d, &bits, sizeof d);
    d += x;
    memcpy(&bits, &d, sizeof d);
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(cell, bits, __ATOMIC_RELAXED);
#else
    *(volatile uint64_t *)cell = bits;
#endif
}

/* The function path of each macro, for what its cache cannot serve. */
static inline void pvar_site_inc_at_(pvar_var v, size_t i, uint64_t n) {
    (void)n;
    pvar_inc_at(v, i);
}
static inline void pvar_site_dec_at_(pvar_var v, size_t i, uint64_t n) {
    (void)n;
    pvar_dec_at(v, i);
}

/* A macro's update that its cache could not serve: the fill, else the
 * function path. Out of line and cold, so that the update's fast path is
 * straight-line code. */
#if defined(__GNUC__) || defined(__clang__)
#define PVAR_COLD_ __attribute__((cold))
#else
#define PVAR_COLD_
#endif
static inline PVAR_COLD_ void pvar_use_site_miss_(pvar_use_site *site, pvar_var v, size_t i,
                                                  uint64_t n,
                                                  void (*fallback)(pvar_var, size_t, uint64_t)) {
    uint64_t *cell = pvar_use_site_fill_v1(site, v, i, PVAR_SITE_INT);
    if (cell)
        pvar_local_add(cell, n);
    else
        fallback(v, i, n);
}
static inline PVAR_COLD_ void pvar_use_site_miss_double_(pvar_use_site *site, pvar_var v,
                                                         size_t i, double x) {
    uint64_t *cell = pvar_use_site_fill_v1(site, v, i, PVAR_SITE_DOUBLE);
    if (cell)
        pvar_site_add_double_(cell, x);
    else
        pvar_add_double_at(v, i, x);
}

#if defined(PVAR_NO_UPDATES)
#define PVAR_SITE_ADD_(v, i, n, fallback) ((void)(v), (void)(i), (void)(n))
#define PVAR_SITE_ADD_DOUBLE_(v, i, x) ((void)(v), (void)(i), (void)(x))
#else
#define PVAR_SITE_ADD_(v, i, n, fallback)                                          \
    do {                                                                           \
        PVAR_SITE_TLS_ pvar_use_site pvar_site_cache_ = PVAR_USE_SITE_INIT;        \
        pvar_var pvar_site_v_ = (v);                                               \
        size_t pvar_site_i_ = (i);                                                 \
        uint64_t pvar_site_n_ = (n);                                               \
        if (PVAR_LIKELY_(pvar_use_site_hit_(&pvar_site_cache_, pvar_site_v_, pvar_site_i_))) \
            pvar_local_add(pvar_site_cache_.cell + pvar_site_i_, pvar_site_n_);    \
        else                                                                       \
            pvar_use_site_miss_(&pvar_site_cache_, pvar_site_v_, pvar_site_i_,     \
                                pvar_site_n_, fallback);                           \
    } while (0)
#define PVAR_SITE_ADD_DOUBLE_(v, i, x)                                             \
    do {                                                                           \
        PVAR_SITE_TLS_ pvar_use_site pvar_site_cache_ = PVAR_USE_SITE_INIT;        \
        pvar_var pvar_site_v_ = (v);                                               \
        size_t pvar_site_i_ = (i);                                                 \
        double pvar_site_x_ = (x);                                                 \
        if (PVAR_LIKELY_(pvar_use_site_hit_(&pvar_site_cache_, pvar_site_v_, pvar_site_i_))) \
            pvar_site_add_double_(pvar_site_cache_.cell + pvar_site_i_, pvar_site_x_); \
        else                                                                       \
            pvar_use_site_miss_double_(&pvar_site_cache_, pvar_site_v_, pvar_site_i_, \
                                       pvar_site_x_);                              \
    } while (0)
#endif

/* COUNTER */
#define PVAR_COUNTER_INC(v) PVAR_SITE_ADD_((v), 0, 1, pvar_add_at)
#define PVAR_COUNTER_INC_AT(v, i) PVAR_SITE_ADD_((v), (i), 1, pvar_add_at)
#define PVAR_COUNTER_ADD(v, n) PVAR_SITE_ADD_((v), 0, (n), pvar_add_at)
#define PVAR_COUNTER_ADD_AT(v, i, n) PVAR_SITE_ADD_((v), (i), (n), pvar_add_at)
/* AGGREGATE (unsigned / unsigned long long, and double) */
#define PVAR_AGGREGATE_ADD(v, n) PVAR_SITE_ADD_((v), 0, (n), pvar_add_at)
#define PVAR_AGGREGATE_ADD_AT(v, i, n) PVAR_SITE_ADD_((v), (i), (n), pvar_add_at)
#define PVAR_AGGREGATE_ADD_DOUBLE(v, x) PVAR_SITE_ADD_DOUBLE_((v), 0, (x))
#define PVAR_AGGREGATE_ADD_DOUBLE_AT(v, i, x) PVAR_SITE_ADD_DOUBLE_((v), (i), (x))
/* LEVEL (integer: the cell holds this thread's wrapping delta) */
#define PVAR_LEVEL_INC(v) PVAR_SITE_ADD_((v), 0, 1, pvar_site_inc_at_)
#define PVAR_LEVEL_DEC(v) PVAR_SITE_ADD_((v), 0, ~(uint64_t)0, pvar_site_dec_at_)
#define PVAR_LEVEL_INC_AT(v, i) PVAR_SITE_ADD_((v), (i), 1, pvar_site_inc_at_)
#define PVAR_LEVEL_DEC_AT(v, i) PVAR_SITE_ADD_((v), (i), ~(uint64_t)0, pvar_site_dec_at_)

/* The component's own view (totals over threads; TIMER: ns / seconds). */
uint64_t pvar_get_at(pvar_var v, size_t i);
double pvar_get_double_at(pvar_var v, size_t i);

/* ---- categories ----------------------------------------------------- */

int pvar_category_define(const char *name, const char *description, int *index);
int pvar_category_add_subcategory(const char *parent, const char *child);

/* ---- control variables ---------------------------------------------- */

int pvar_cvar_register(const pvar_cvar_info *info, pvar_cvar *cvar);
int pvar_cvar_register_bound(const pvar_cvar_info *info, pvar_bound_cvar *bound);
int pvar_bound_cvar_create(pvar_bound_cvar bound, uint64_t object, pvar_cvar *cvar);
int pvar_bound_cvar_drop(pvar_bound_cvar bound, uint64_t object);
void pvar_bound_cvar_free(pvar_bound_cvar bound);
void pvar_cvar_free(pvar_cvar cvar);
int pvar_cvar_index(pvar_cvar cvar);

/* Reads: one relaxed atomic load (strings: lock- and allocation-free). */
int64_t pvar_cvar_get_int(pvar_cvar cvar);
uint64_t pvar_cvar_get_unsigned(pvar_cvar cvar);
double pvar_cvar_get_double(pvar_cvar cvar);
int pvar_cvar_get_string(pvar_cvar cvar, char *buf, int *len); /* MPI_T string rules */

/* Component-side writes (no scope or freeze check). */
int pvar_cvar_set_int(pvar_cvar cvar, int64_t v);
int pvar_cvar_set_unsigned(pvar_cvar cvar, uint64_t v);
int pvar_cvar_set_double(pvar_cvar cvar, double v);
int pvar_cvar_set_string(pvar_cvar cvar, const char *s);
/* While frozen, tool writes fail with MPI_T_ERR_CVAR_SET_NOT_NOW. */
void pvar_cvar_freeze(pvar_cvar cvar, int frozen);

/* ---- events (MPI 4) ------------------------------------------------- */

/* Callback-safety requirements (= MPI_T_CB_REQUIRE_*): what the point of a
 * raise demands of a tool's callback. */
#define PVAR_CB_REQUIRE_NONE              0x00 /* nothing held: anything may run */
#define PVAR_CB_REQUIRE_MPI_RESTRICTED    0x03 /* inside the component's locks */
#define PVAR_CB_REQUIRE_THREAD_SAFE       0x0F
#define PVAR_CB_REQUIRE_ASYNC_SIGNAL_SAFE 0x3F /* in a signal handler */

/* Source ordering (= MPI_T_SOURCE_*). */
#define PVAR_SOURCE_ORDERED   1
#define PVAR_SOURCE_UNORDERED 2

/* A source's clock: ticks since an arbitrary origin. Called at every raise
 * of the source's events, so as safe as the raise points (async-signal-
 * safe if events are raised from signal handlers). */
typedef int64_t pvar_timestamp_fn(void *user_data);

/* Registers an event source (source 0, "pvar_monotonic", is the engine's
 * CLOCK_MONOTONIC in ns). `now` NULL: no timestamps on demand (tools get
 * MPI_T_ERR_NOT_SUPPORTED; raise with pvar_event_raise_at). */
int pvar_source_register(const char *name, const char *description, int ordering,
    int64_t ticks_per_second, int64_t max_ticks, pvar_timestamp_fn *now,
    void *user_data, int *index);

/* Zero-initialise and fill in. The record a raise passes is `extent` bytes
 * (at most 192) with element i of datatype datatypes[i] (PVAR_TYPE_*) at
 * byte displacements[i]: typically a struct and offsetof. */
typedef struct pvar_event_info {
    const char *name;          /* required, unique among event types */
    const char *description;   /* NULL: none */
    int verbosity;             /* PVAR_VERBOSITY_*; 0: USER_BASIC */
    int bind;                  /* PVAR_BIND_*; 0: unbound */
    int num_elements;
    const int *datatypes;
    const ptrdiff_t *displacements;
    size_t extent;             /* sizeof the record */
    int source;                /* source index; 0: the engine's clock */
    const char *category;      /* NULL: none; may be defined later */
} pvar_event_info;

/* An event type's handle: its index and the word a raise tests. */
typedef struct pvar_event {
    const uint32_t *observed; /* non-zero while a tool has a callback or a
                                 dropped handler for it */
    int index;
} pvar_event;

/* Declares an event type (the same name and metadata again gives the same
 * type). */
int pvar_event_register(const pvar_event_info *info, pvar_event *event);

/* The raise behind the inline functions below: do not call directly. */
void pvar_event_raise_slow(int index, int cb_safety, const uint64_t *object,
    const int64_t *timestamp, const void *record);

/* Whether a tool has a callback or a dropped handler for the event: one
 * relaxed load. */
static inline int pvar_event_observed(pvar_event ev) {
    return ev.observed != NULL && __atomic_load_n(ev.observed, __ATOMIC_RELAXED) != 0;
}

/* Raises `ev` from a point where the component holds nothing a callback
 * could trip over. With no tool listening: one load and a branch. */
static inline void pvar_event_raise(pvar_event ev, const void *record) {
    if (pvar_event_observed(ev))
        pvar_event_raise_slow(ev.index, PVAR_CB_REQUIRE_NONE, NULL, NULL, record);
}

/* Raises `ev` from a point that requires `cb_safety` of a callback, for
 * `object` (NULL for unbound events; else the object's handle value).
 * With PVAR_CB_REQUIRE_ASYNC_SIGNAL_SAFE it is async-signal-safe: it never
 * allocates, and drops (counting) what it can neither deliver nor buffer;
 * call pvar_prepare_thread() on the thread first: it makes the thread's
 * event buffer, without which such a raise cannot defer anything. */
static inline void pvar_event_raise_in(pvar_event ev, int cb_safety, const uint64_t *object,
    const void *record) {
    if (pvar_event_observed(ev))
        pvar_event_raise_slow(ev.index, cb_safety, object, NULL, record);
}

/* As pvar_event_raise_in with the timestamp given (ticks of its source). */
static inline void pvar_event_raise_at(pvar_event ev, int64_t timestamp, int cb_safety,
    const uint64_t *object, const void *record) {
    if (pvar_event_observed(ev))
        pvar_event_raise_slow(ev.index, cb_safety, object, &timestamp, record);
}

/* A delivery point: runs the callbacks of events waiting in thread buffers
 * that may run where the requirement is `cb_safety` (call it with
 * PVAR_CB_REQUIRE_NONE where the component holds no lock, e.g. on return
 * from a library call; there it also reports the losses of registrations
 * that have a dropped handler and no callback). Returns the number of
 * callbacks run; -1 for a bad value. */
int pvar_event_deliver(int cb_safety);

#ifdef __cplusplus
}
#endif

#endif /* PVAR_H */
