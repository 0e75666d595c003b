/*
 * A pvar.h call site whose handle is freed, and a new handle of another
 * variable given the same address (as any allocator may do). The call
 * site's thread-local cache must not take the new handle for the freed
 * one: every update must reach the variable of the handle passed.
 *
 * The allocator is made to reuse the address on demand. This program
 * defines malloc/free/calloc/realloc and the aligned allocations over
 * glibc's __libc_* functions (Rust's allocator asks for alignment with
 * posix_memalign when a type needs more than malloc's), so
 * libpvar's allocations come here too, and holds one chosen block: once
 * the chosen handle is freed its block is kept back from glibc and given
 * to the next allocation of the same size. Everything else passes through.
 * Single-threaded: only the main thread allocates while the trap is set.
 *
 * The check runs for an unbound handle (pvar_register, pvar_var_free) and
 * for per-object instances (pvar_bound_create, pvar_var_free,
 * pvar_bound_drop), the way an MPI interposer makes and drops a
 * communicator's variables.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef __GLIBC__
#error "site_reuse.c interposes glibc's allocator (__libc_malloc, ...): glibc only"
#endif

#include "check.h"
#include "pvar.h"

/* ---- the allocator with a trap ---------------------------------------- */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

enum trap_state { TRAP_OFF, TRAP_IN_USE, TRAP_HELD };

static struct {
    enum trap_state state;
    void *block;   /* the chosen block */
    size_t size;   /* its requested size */
    int handed;    /* times the held block was given out again */
} trap;

/* While `recording`, the last allocations (address, size), so that the
 * size of the handle a call returned can be found. */
#define LOG 256
static struct {
    int recording;
    size_t n;
    void *addr[LOG];
    size_t size[LOG];
} rec;

/* The held block, if it is held, n is its size and it has the alignment. */
static void *trap_take(size_t n, size_t align) {
    if (trap.state == TRAP_HELD && n == trap.size && (uintptr_t)trap.block % align == 0) {
        trap.state = TRAP_IN_USE;
        trap.handed++;
        return trap.block;
    }
    return NULL;
}

static void *logged(void *p, size_t n) {
    if (rec.recording && p && rec.n < LOG) {
        rec.addr[rec.n] = p;
        rec.size[rec.n] = n;
        rec.n++;
    }
    return p;
}

void *malloc(size_t n) {
    void *p = trap_take(n, 16);
    return p ? p : logged(__libc_malloc(n), n);
}

int posix_memalign(void **out, size_t align, size_t n) {
    void *p = trap_take(n, align);
    if (!p)
        p = logged(__libc_memalign(align, n), n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) {
    void *p = trap_take(n, align);
    return p ? p : logged(__libc_memalign(align, n), n);
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }

void free(void *p) {
    if (p != NULL && p == trap.block && trap.state == TRAP_IN_USE) {
        trap.state = TRAP_HELD; /* kept back for the next malloc(size) */
        return;
    }
    __libc_free(p);
}

void *calloc(size_t k, size_t n) { return __libc_calloc(k, n); }

void *realloc(void *p, size_t n) {
    if (p != NULL && p == trap.block && trap.state == TRAP_IN_USE) {
        /* Not expected of a handle, but the block may have gone to another
         * allocation of its size: move that one out and hold the block. */
        void *moved = __libc_malloc(n);
        if (moved != NULL) {
            memcpy(moved, p, n < trap.size ? n : trap.size);
            trap.state = TRAP_HELD;
        }
        return moved;
    }
    return __libc_realloc(p, n);
}

/* Chooses the block of handle h (just returned by a call run while
 * recording): its next free keeps it for the next allocation of its size. */
static int trap_set(void *h) {
    /* The latest allocation at that address: an earlier one there was a
     * temporary, freed before the handle was made. */
    for (size_t k = rec.n; k-- > 0;)
        if (rec.addr[k] == h) {
            trap.block = h;
            trap.size = rec.size[k];
            trap.state = TRAP_IN_USE;
            trap.handed = 0;
            return 1;
        }
    return 0;
}

static void trap_clear(void) {
    if (trap.state == TRAP_HELD)
        __libc_free(trap.block);
    trap.state = TRAP_OFF;
    trap.block = NULL;
}

/* ---- the call site under test ----------------------------------------- */

/* One call site (one thread-local cache), used with every handle. */
static __attribute__((noinline)) void add_to(pvar_var v, uint64_t n) { PVAR_COUNTER_ADD(v, n); }

static pvar_info counter(const char *name, int bind) {
    pvar_info i;
    memset(&i, 0, sizeof i);
    i.name = name;
    i.var_class = PVAR_CLASS_COUNTER;
    i.bind = bind;
    i.continuous = PVAR_YES; /* a tool reads the total without starting */
    return i;
}

/* Unbound: handle a of "reuse_a" is freed; a handle of "reuse_b" gets its
 * address. `a_reader`/`b_reader` (other handles of the same variables:
 * registering a name again returns a new handle of the same variable)
 * read the totals. */
static void unbound(void) {
    pvar_info ia = counter("reuse_a", 0), ib = counter("reuse_b", 0);
    pvar_var a_reader = NULL, b_reader = NULL, a = NULL, b = NULL;
    CHECK_RC(pvar_register(&ia, &a_reader), 0);
    CHECK_RC(pvar_register(&ib, &b_reader), 0);

    rec.recording = 1;
    rec.n = 0;
    CHECK_RC(pvar_register(&ia, &a), 0);
    rec.recording = 0;
    CHECK(trap_set(a));

    add_to(a, 3); /* the site now caches a's cell */
    add_to(a, 4);
    void *freed = a;
    pvar_var_free(a);
    CHECK(trap.state == TRAP_HELD);
    CHECK_RC(pvar_register(&ib, &b), 0);
    /* The premise: b has a's address (the held block went out once). */
    CHECK((void *)b == freed && trap.handed == 1);
    add_to(b, 5);
    add_to(b, 6);
    CHECK(pvar_get_at(a_reader, 0) == 7);
    CHECK(pvar_get_at(b_reader, 0) == 11);

    pvar_var_free(b);
    trap_clear();
    pvar_var_free(a_reader);
    pvar_var_free(b_reader);
}

/* Bound: the instance of object 1 is freed (still live in the registry);
 * the instance of object 2 gets its handle's address. A tool reads each
 * instance through MPI_T, with handles allocated before the updates (a
 * tool handle reads what happened since it was allocated). */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
} tool_view;

static tool_view tool_open(int index, uint64_t object) {
    tool_view t;
    int count = 0;
    CHECK_RC(MPI_T_pvar_session_create(&t.session), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_alloc(t.session, index, &object, &t.handle, &count), MPI_SUCCESS);
    CHECK(count == 1);
    return t;
}

static uint64_t tool_close(tool_view *t) {
    uint64_t value = ~(uint64_t)0;
    CHECK_RC(MPI_T_pvar_read(t->session, t->handle, &value), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_free(t->session, &t->handle), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_free(&t->session), MPI_SUCCESS);
    return value;
}

static void bound(void) {
    pvar_info info = counter("reuse_per_object", PVAR_BIND_MPI_COMM);
    pvar_bound per_object = NULL;
    pvar_var one = NULL, two = NULL;
    CHECK_RC(pvar_register_bound(&info, &per_object), 0);
    int index = pvar_bound_index(per_object);

    rec.recording = 1;
    rec.n = 0;
    CHECK_RC(pvar_bound_create(per_object, 1, 0, &one), 0);
    rec.recording = 0;
    CHECK(trap_set(one));
    tool_view view_one = tool_open(index, 1);

    add_to(one, 2);
    void *freed = one;
    pvar_var_free(one);
    CHECK(trap.state == TRAP_HELD);
    CHECK_RC(pvar_bound_create(per_object, 2, 0, &two), 0);
    CHECK((void *)two == freed && trap.handed == 1);
    tool_view view_two = tool_open(index, 2);
    add_to(two, 9);
    CHECK(tool_close(&view_one) == 2);
    CHECK(tool_close(&view_two) == 9);

    pvar_var_free(two);
    trap_clear();
    CHECK_RC(pvar_bound_drop(per_object, 1), 0);
    CHECK_RC(pvar_bound_drop(per_object, 2), 0);
    pvar_bound_free(per_object);
}

int main(void) {
    int provided = 0;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    unbound();
    bound();
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("site_reuse");
}
