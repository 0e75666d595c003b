/*
 * Multi-threaded C test (pthreads): UPDATERS threads update variables from
 * the component side (pvar.h) while READERS threads each read them through
 * their own MPI_T session, and a CHURN thread allocates, uses and frees
 * handles and sessions, checking that stale ones are refused. Totals must
 * be exact:
 *   - every reader's counter handle, started before the updates, ends at
 *     UPDATERS * ITERS, and the values it saw never decreased;
 *   - the per-peer array ends at ITERS * UPDATERS / PEERS per element;
 *   - the level (inc then dec by every updater) ends at 0;
 *   - the high watermark ends at the largest level recorded;
 *   - a counter and a level updated call-free through pvar_local_cell end
 *     exact as well.
 * Halfway through, every updater waits until each reader has read and the
 * churn thread has completed a round, so reads and churn overlap the
 * updates on any schedule (no sleeps: the parties wait for each other).
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

#define UPDATERS 4
#define READERS 2
#define ITERS 100000
#define PEERS 4

static pvar_var counter, per_peer, level, high, local_counter, local_level;
static int counter_index, per_peer_index, level_index, high_index;
static pthread_barrier_t start_line;
static volatile int updaters_done;
/* Progress, read by the updaters halfway: read rounds per reader, churn
 * rounds (INT_MAX once the churn thread has stopped, so that an early stop
 * holds nobody up; its error count says why). */
static int reader_rounds[READERS], churn_rounds;

struct reader_result {
    int errors, reads, nonmonotonic;
    unsigned long long final_counter, final_peer[PEERS], final_high;
    unsigned long long final_level;
};

static void *updater(void *arg) {
    long id = (long)arg, k;
    /* Call-free updates through this thread's own cells. */
    uint64_t *lc = pvar_local_cell(local_counter, 0);
    uint64_t *ll = pvar_local_cell(local_level, 0);
    pthread_barrier_wait(&start_line);
    for (k = 0; k < ITERS; k++) {
        if (k == ITERS / 2) {
            int j;
            for (j = 0; j < READERS; j++)
                while (__atomic_load_n(&reader_rounds[j], __ATOMIC_ACQUIRE) < 1) sched_yield();
            while (__atomic_load_n(&churn_rounds, __ATOMIC_ACQUIRE) < 1) sched_yield();
        }
        pvar_local_inc(lc);
        pvar_local_inc(ll);
        pvar_inc(counter);
        pvar_add_at(per_peer, (size_t)(k % PEERS), 1);
        pvar_inc(level);
        pvar_watermark_update(high, (uint64_t)(id * 1000 + k % 1000));
        pvar_dec(level);
        pvar_local_dec(ll);
    }
    return NULL;
}

struct reader_arg {
    struct reader_result *result;
    int id;
};

static void *reader(void *arg) {
    struct reader_arg *a = arg;
    struct reader_result *r = a->result;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle hc, hp, hl, hh;
    int count;
    unsigned long long last = 0, v, peers[PEERS];
    if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_handle_alloc(s, counter_index, NULL, &hc, &count) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_handle_alloc(s, per_peer_index, NULL, &hp, &count) != MPI_SUCCESS ||
        count != PEERS)
        r->errors++;
    if (MPI_T_pvar_handle_alloc(s, level_index, NULL, &hl, &count) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_handle_alloc(s, high_index, NULL, &hh, &count) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) != MPI_SUCCESS) r->errors++;
    pthread_barrier_wait(&start_line);
    while (!__atomic_load_n(&updaters_done, __ATOMIC_ACQUIRE)) {
        if (MPI_T_pvar_read(s, hc, &v) != MPI_SUCCESS) r->errors++;
        if (v < last) r->nonmonotonic++;
        last = v;
        if (MPI_T_pvar_read(s, hp, peers) != MPI_SUCCESS) r->errors++;
        if (MPI_T_pvar_read(s, hh, &v) != MPI_SUCCESS) r->errors++;
        r->reads++;
        __atomic_store_n(&reader_rounds[a->id], r->reads, __ATOMIC_RELEASE);
    }
    /* All updaters have been joined by main before updaters_done is set. */
    if (MPI_T_pvar_read(s, hc, &r->final_counter) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_read(s, hp, r->final_peer) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_read(s, hl, &r->final_level) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_read(s, hh, &r->final_high) != MPI_SUCCESS) r->errors++;
    if (MPI_T_pvar_session_free(&s) != MPI_SUCCESS || s != MPI_T_PVAR_SESSION_NULL) r->errors++;
    return NULL;
}

struct churn_result {
    int errors, rounds;
};

static void *churn(void *arg) {
    struct churn_result *c = arg;
    unsigned long long v;
    pthread_barrier_wait(&start_line);
    while (!__atomic_load_n(&updaters_done, __ATOMIC_ACQUIRE)) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h, stale;
        int count;
        if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS) { c->errors++; break; }
        if (MPI_T_pvar_handle_alloc(s, counter_index, NULL, &h, &count) != MPI_SUCCESS)
            c->errors++;
        if (MPI_T_pvar_start(s, h) != MPI_SUCCESS) c->errors++;
        if (MPI_T_pvar_read(s, h, &v) != MPI_SUCCESS) c->errors++;
        stale = h;
        if (MPI_T_pvar_handle_free(s, &h) != MPI_SUCCESS) c->errors++;
        if (MPI_T_pvar_read(s, stale, &v) != MPI_T_ERR_INVALID_HANDLE) c->errors++;
        if (MPI_T_pvar_session_free(&s) != MPI_SUCCESS) c->errors++;
        c->rounds++;
        __atomic_store_n(&churn_rounds, c->rounds, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&churn_rounds, INT_MAX, __ATOMIC_RELEASE);
    return NULL;
}

int main(void) {
    pthread_t up[UPDATERS], rd[READERS], ch;
    struct reader_result res[READERS];
    struct reader_arg rargs[READERS];
    struct churn_result cres = {0, 0};
    int provided, k, j;
    unsigned long long expect_high = (UPDATERS - 1) * 1000 + 999;

#define REGISTER(var, ...) \
    CHECK_RC(pvar_register(&(pvar_info){__VA_ARGS__}, &(var)), MPI_SUCCESS)
    REGISTER(counter, .name = "threads_counter", .var_class = PVAR_CLASS_COUNTER);
    REGISTER(per_peer, .name = "threads_per_peer", .var_class = PVAR_CLASS_COUNTER, .count = PEERS);
    REGISTER(level, .name = "threads_level", .var_class = PVAR_CLASS_LEVEL);
    REGISTER(high, .name = "threads_high", .var_class = PVAR_CLASS_HIGHWATERMARK);
    REGISTER(local_counter, .name = "threads_local_counter", .var_class = PVAR_CLASS_COUNTER);
    REGISTER(local_level, .name = "threads_local_level", .var_class = PVAR_CLASS_LEVEL);
#undef REGISTER
    CHECK(pvar_local_cell(local_counter, 0) != NULL);
    CHECK(pvar_local_cell(local_counter, 1) == NULL);  /* out of range */
    CHECK(pvar_local_cell(high, 0) == NULL);           /* not a summed integer */
    CHECK(pvar_local_cell(NULL, 0) == NULL);
    counter_index = pvar_var_index(counter);
    per_peer_index = pvar_var_index(per_peer);
    level_index = pvar_var_index(level);
    high_index = pvar_var_index(high);

    CHECK_RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_MULTIPLE);

    memset(res, 0, sizeof res);
    pthread_barrier_init(&start_line, NULL, UPDATERS + READERS + 2);
    for (k = 0; k < READERS; k++) {
        rargs[k].result = &res[k];
        rargs[k].id = k;
        pthread_create(&rd[k], NULL, reader, &rargs[k]);
    }
    pthread_create(&ch, NULL, churn, &cres);
    for (k = 0; k < UPDATERS; k++) pthread_create(&up[k], NULL, updater, (void *)(long)k);
    pthread_barrier_wait(&start_line);
    for (k = 0; k < UPDATERS; k++) pthread_join(up[k], NULL);
    __atomic_store_n(&updaters_done, 1, __ATOMIC_RELEASE);
    for (k = 0; k < READERS; k++) pthread_join(rd[k], NULL);
    pthread_join(ch, NULL);

    for (k = 0; k < READERS; k++) {
        printf("reader %d: %d reads while updating, final counter %llu, level %llu, high %llu\n",
               k, res[k].reads, res[k].final_counter, res[k].final_level, res[k].final_high);
        CHECK(res[k].errors == 0);
        CHECK(res[k].reads >= 1); /* while updating: the updaters waited for it */
        CHECK(res[k].nonmonotonic == 0);
        CHECK(res[k].final_counter == (unsigned long long)UPDATERS * ITERS);
        for (j = 0; j < PEERS; j++)
            CHECK(res[k].final_peer[j] == (unsigned long long)UPDATERS * ITERS / PEERS);
        CHECK(res[k].final_level == 0);
        CHECK(res[k].final_high == expect_high);
    }
    printf("churn: %d session/handle rounds\n", cres.rounds);
    CHECK(cres.errors == 0);
    CHECK(cres.rounds >= 1); /* while updating: the updaters waited for it */
    CHECK(pvar_get_at(counter, 0) == (uint64_t)UPDATERS * ITERS);
    CHECK(pvar_get_at(level, 0) == 0);
    CHECK(pvar_get_at(local_counter, 0) == (uint64_t)UPDATERS * ITERS);
    CHECK(pvar_get_at(local_level, 0) == 0);
    {
        /* ... and through MPI_T. */
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        int count;
        unsigned long long v = 0;
        CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, pvar_var_index(local_counter), NULL, &h, &count),
                 MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_start(s, h), MPI_SUCCESS);
        pvar_local_add(pvar_local_cell(local_counter, 0), 7);
        CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
        CHECK(v == 7);
        CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    }
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    pthread_barrier_destroy(&start_line);
    return summary("threads");
}
