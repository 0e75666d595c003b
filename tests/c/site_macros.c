/*
 * pvar.h's use-site macros from a component built as a shared library and
 * loaded with dlopen (tests/c/dl/site_component.c; its path in
 * $PVAR_SITE_COMPONENT, set by scripts/c-tests.sh):
 *   - every macro updates the right variable and element, exactly;
 *   - THREADS threads update through the same call sites: exact totals;
 *   - one call site used with two variables refills its cache;
 *   - a thread keeps updating through a call site it used before, from a
 *     pthread key destructor (which glibc runs after the engine's exit
 *     guard gave the thread's id and record back) while a new thread takes
 *     the record over and updates through the same site: nothing lost.
 *     (A cache trusted past exit could overwrite the new owner's update
 *     only in the instant the new owner claims the record; this run rarely
 *     hits it, the loom model site_cache::c_site_is_refused_after_exit
 *     does.);
 *   - the component can be unloaded with dlclose while threads that used
 *     its sites still run, and loaded again: the totals continue.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "pvar.h"

#define THREADS 4
#define ITERS 100000
#define EXIT_ROUNDS 8
#define EXIT_UPDATES 200000

typedef int (*init_fn)(void);
typedef void (*fini_fn)(void);
typedef pvar_var (*var_fn)(void);
typedef void (*send_fn)(size_t, uint64_t);
typedef void (*inc_fn)(uint64_t);
typedef void (*add_to_fn)(pvar_var, uint64_t);

static struct component {
    void *dl;
    init_fn init;
    fini_fn fini;
    var_fn sent, bytes, seconds, depth;
    send_fn send;
    inc_fn inc;
    add_to_fn add_to;
} comp;

static void *sym(const char *name) {
    void *p = dlsym(comp.dl, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void load(const char *path) {
    comp.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!comp.dl) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(2);
    }
    comp.init = (init_fn)sym("site_component_init");
    comp.fini = (fini_fn)sym("site_component_fini");
    comp.sent = (var_fn)sym("site_component_sent");
    comp.bytes = (var_fn)sym("site_component_bytes");
    comp.seconds = (var_fn)sym("site_component_seconds");
    comp.depth = (var_fn)sym("site_component_depth");
    comp.send = (send_fn)sym("site_component_send");
    comp.inc = (inc_fn)sym("site_component_inc");
    comp.add_to = (add_to_fn)sym("site_component_add_to");
}

static void *sender(void *arg) {
    size_t peer = (size_t)(uintptr_t)arg;
    for (int k = 0; k < ITERS; k++) comp.send(peer, 3);
    return NULL;
}

/* ---- updates after the thread's exit guard ----------------------------- */

static pthread_key_t on_exit_key;
static pthread_barrier_t released;

/* Runs after the engine's thread-local destructors (glibc calls pthread key
 * destructors last), so the thread's id is free again. */
static void updates_on_exit(void *unused) {
    (void)unused;
    pthread_barrier_wait(&released);
    comp.inc(EXIT_UPDATES);
}

static void *exiting(void *unused) {
    (void)unused;
    pthread_setspecific(on_exit_key, (void *)1);
    comp.inc(1); /* fills the site's cache, takes an id and a record */
    return NULL;
}

static void *successor(void *unused) {
    (void)unused;
    /* Takes the free id (and the exiting thread's record) while the exiting
     * thread updates. */
    comp.inc(EXIT_UPDATES + 1);
    return NULL;
}

/* ---- dlclose with live threads ----------------------------------------- */

static pthread_barrier_t used, unloaded;

static void *outlives_component(void *unused) {
    (void)unused;
    comp.inc(10);
    pthread_barrier_wait(&used);
    pthread_barrier_wait(&unloaded); /* the component is gone: exit now */
    return NULL;
}

int main(void) {
    const char *path = getenv("PVAR_SITE_COMPONENT");
    if (!path) {
        fprintf(stderr, "set PVAR_SITE_COMPONENT to the component .so\n");
        return 2;
    }
    load(path);
    CHECK_RC(comp.init(), 0);

    /* Every macro, one thread. */
    for (size_t peer = 0; peer < 4; peer++)
        for (size_t k = 0; k <= peer; k++) comp.send(peer, 100);
    CHECK(pvar_get_at(comp.sent(), 0) == 1);
    CHECK(pvar_get_at(comp.sent(), 3) == 4);
    CHECK(pvar_get_at(comp.bytes(), 0) == 1000);
    CHECK(pvar_get_double_at(comp.seconds(), 0) == 5.0);
    CHECK(pvar_get_at(comp.depth(), 0) == 0);
    /* An element out of range changes nothing (the function path refuses). */
    comp.send(4, 1);
    CHECK(pvar_get_at(comp.sent(), 3) == 4);
    CHECK(pvar_get_at(comp.bytes(), 0) == 1001);

    /* Threads. */
    uint64_t sent_before[4];
    for (size_t i = 0; i < 4; i++) sent_before[i] = pvar_get_at(comp.sent(), i);
    uint64_t bytes_before = pvar_get_at(comp.bytes(), 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, sender, (void *)(uintptr_t)(i % 4));
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (size_t i = 0; i < 4; i++)
        CHECK(pvar_get_at(comp.sent(), i) - sent_before[i] == (uint64_t)ITERS * (THREADS / 4));
    CHECK(pvar_get_at(comp.bytes(), 0) - bytes_before == 3ull * ITERS * THREADS);
    CHECK(pvar_get_at(comp.depth(), 0) == 0);

    /* One call site, two variables. */
    pvar_var other = NULL;
    pvar_info info = {0};
    info.name = "site_other";
    info.var_class = PVAR_CLASS_COUNTER;
    CHECK_RC(pvar_register(&info, &other), 0);
    uint64_t sent0 = pvar_get_at(comp.sent(), 0);
    for (int k = 0; k < 10; k++) {
        comp.add_to(other, 2);
        comp.add_to(comp.sent(), 1);
    }
    CHECK(pvar_get_at(other, 0) == 20);
    CHECK(pvar_get_at(comp.sent(), 0) - sent0 == 10);
    /* A NULL handle: nothing happens, nothing crashes. */
    comp.add_to(NULL, 1);

    /* Updates after exit, racing a successor in the same record. */
    pthread_key_create(&on_exit_key, updates_on_exit);
    sent0 = pvar_get_at(comp.sent(), 0);
    for (int r = 0; r < EXIT_ROUNDS; r++) {
        pthread_barrier_init(&released, NULL, 2);
        pthread_t a, b;
        pthread_create(&a, NULL, exiting, NULL);
        pthread_barrier_wait(&released);
        pthread_create(&b, NULL, successor, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        pthread_barrier_destroy(&released);
    }
    uint64_t got = pvar_get_at(comp.sent(), 0) - sent0;
    uint64_t want = (uint64_t)EXIT_ROUNDS * 2 * (EXIT_UPDATES + 1);
    if (got != want)
        fprintf(stderr, "updates during exit: %llu of %llu counted\n", (unsigned long long)got,
                (unsigned long long)want);
    CHECK(got == want);

    /* Unload while a thread that used the sites runs; load again. */
    pthread_barrier_init(&used, NULL, 2);
    pthread_barrier_init(&unloaded, NULL, 2);
    sent0 = pvar_get_at(comp.sent(), 0);
    pthread_t keeper;
    pthread_create(&keeper, NULL, outlives_component, NULL);
    pthread_barrier_wait(&used);
    comp.fini();
    CHECK(dlclose(comp.dl) == 0);
    pthread_barrier_wait(&unloaded);
    pthread_join(keeper, NULL);
    load(path);
    CHECK_RC(comp.init(), 0); /* the same variables again */
    comp.inc(5);
    CHECK(pvar_get_at(comp.sent(), 0) - sent0 == 15);
    comp.fini();
    dlclose(comp.dl);
    pvar_var_free(other);
    return summary("site_macros");
}
