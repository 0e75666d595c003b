/*
 * The async-signal-safe set (MPI_T_pvar_start, _stop, _read, _write, _reset,
 * _readreset) must not allocate: this program interposes malloc and friends
 * (the executable's definitions win over libc's for libpvar.so too), counts
 * calls while those functions run on handles of every class — including a
 * 300-element array read in place — and from a SIGALRM handler that samples
 * the variables while the main thread updates them.
 */
#define _DEFAULT_SOURCE 1 /* setitimer */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

/* ---- counting allocator (glibc) ----------------------------------- */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile sig_atomic_t counting;
static volatile long allocs;

void *malloc(size_t n) {
    if (counting) allocs++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    if (counting) allocs++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    if (counting) allocs++;
    return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
int posix_memalign(void **p, size_t align, size_t n) {
    if (counting) allocs++;
    *p = __libc_memalign(align, n);
    return *p ? 0 : ENOMEM;
}
void *aligned_alloc(size_t align, size_t n) {
    if (counting) allocs++;
    return __libc_memalign(align, n);
}
void *memalign(size_t align, size_t n) {
    if (counting) allocs++;
    return __libc_memalign(align, n);
}

/* ---- variables and handles ---------------------------------------- */
#define BIG 300
enum { COUNTER, ARRAY, AGG, LEVEL, HIGH, STATE, TIMER, NVARS };
static pvar_var vars[NVARS];
static MPI_T_pvar_handle handles[NVARS];
static MPI_T_pvar_session session;
static volatile long handler_runs, handler_errors;

/* Exercise every signal-safe call on every handle; returns error count. */
static int exercise(void) {
    static unsigned long long buf[BIG]; /* static: no stack growth concerns */
    int k, errors = 0, rc;
    for (k = 0; k < NVARS; k++) {
        MPI_T_pvar_handle h = handles[k];
        rc = MPI_T_pvar_read(session, h, buf);
        if (rc != MPI_SUCCESS) errors++;
        rc = MPI_T_pvar_start(session, h);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_STARTSTOP) errors++;
        rc = MPI_T_pvar_readreset(session, h, buf);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_ATOMIC && rc != MPI_T_ERR_PVAR_NO_WRITE)
            errors++;
        rc = MPI_T_pvar_write(session, h, buf);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_WRITE) errors++;
        rc = MPI_T_pvar_reset(session, h);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_WRITE) errors++;
        rc = MPI_T_pvar_stop(session, h);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_STARTSTOP) errors++;
        rc = MPI_T_pvar_start(session, h);
        if (rc != MPI_SUCCESS && rc != MPI_T_ERR_PVAR_NO_STARTSTOP) errors++;
    }
    if (MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES) != MPI_SUCCESS) errors++;
    if (MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES) != MPI_SUCCESS) errors++;
    if (MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES) != MPI_SUCCESS) errors++;
    /* errors are error codes too: still no allocation */
    if (MPI_T_pvar_read(session, (MPI_T_pvar_handle)(uintptr_t)0x1234, buf) !=
        MPI_T_ERR_INVALID_HANDLE)
        errors++;
    return errors;
}

static void on_alarm(int sig) {
    int e;
    (void)sig;
    counting = 1;
    e = exercise();
    counting = 0;
    handler_runs++;
    handler_errors += e;
}

int main(void) {
    pvar_info i;
    int provided, k, count;
    struct itimerval tv;
    long before;
    static const int classes[NVARS] = {PVAR_CLASS_COUNTER, PVAR_CLASS_COUNTER,
                                       PVAR_CLASS_AGGREGATE, PVAR_CLASS_LEVEL,
                                       PVAR_CLASS_HIGHWATERMARK, PVAR_CLASS_STATE,
                                       PVAR_CLASS_TIMER};
    static const char *names[NVARS] = {"na_counter", "na_array", "na_agg", "na_level",
                                       "na_high", "na_state", "na_timer"};

    for (k = 0; k < NVARS; k++) {
        memset(&i, 0, sizeof i);
        i.name = names[k];
        i.var_class = classes[k];
        if (k == ARRAY) i.count = BIG;
        if (k == AGG) i.datatype = PVAR_TYPE_DOUBLE;
        if (k == LEVEL) i.datatype = PVAR_TYPE_UNSIGNED;
        CHECK_RC(pvar_register(&i, &vars[k]), MPI_SUCCESS);
    }
    pvar_prepare_thread();
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_create(&session), MPI_SUCCESS);
    for (k = 0; k < NVARS; k++) {
        CHECK_RC(MPI_T_pvar_handle_alloc(session, pvar_var_index(vars[k]), NULL, &handles[k],
                                         &count),
                 MPI_SUCCESS);
        CHECK(count == (k == ARRAY ? BIG : 1));
    }
    exercise(); /* warm up outside the count */

    /* Directly. */
    counting = 1;
    k = exercise();
    counting = 0;
    CHECK(k == 0);
    CHECK(allocs == 0);

    /* From a signal handler, raised synchronously... */
    signal(SIGALRM, on_alarm);
    for (k = 0; k < 5; k++) raise(SIGALRM);
    CHECK(handler_runs == 5);

    /* ...and from a timer interrupting component updates. */
    memset(&tv, 0, sizeof tv);
    tv.it_interval.tv_usec = 5000;
    tv.it_value.tv_usec = 5000;
    before = handler_runs;
    setitimer(ITIMER_REAL, &tv, NULL);
    {
        /* At least 100 ms and at least 20 handler runs (progress, not time,
         * decides); after 60 s without them, stop and let the check fail. */
        struct timespec t0, t1;
        long us;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            for (k = 0; k < 1000; k++) {
                pvar_inc(vars[COUNTER]);
                pvar_inc_at(vars[ARRAY], (size_t)k % BIG);
                pvar_add_double(vars[AGG], 0.5);
                pvar_inc(vars[LEVEL]);
                pvar_watermark_update(vars[HIGH], (uint64_t)k);
                pvar_dec(vars[LEVEL]);
                pvar_set_int(vars[STATE], k & 3);
                pvar_timer_add_ns(vars[TIMER], 10);
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
        } while ((us < 100000 || handler_runs - before < 20) && us < 60000000L);
    }
    memset(&tv, 0, sizeof tv);
    setitimer(ITIMER_REAL, &tv, NULL);
    signal(SIGALRM, SIG_IGN);

    printf("signal handler ran %ld times; allocations during signal-safe calls: %ld\n",
           handler_runs, allocs);
    CHECK(handler_runs - before >= 20);
    CHECK(handler_errors == 0);
    CHECK(allocs == 0);

    CHECK_RC(MPI_T_pvar_session_free(&session), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("no_alloc");
}
