/*
 * The registration limit of MPI 4 events through the C interface: a
 * process holds at most 2^16 live event registrations; the next
 * MPI_T_event_handle_alloc returns MPI_T_ERR_OUT_OF_HANDLES, and a free
 * makes room again. Checked with every registration on one event type and
 * spread over 256 types; each registration gets a callback, and a raise
 * reaches exactly the registrations of its type (so the per-type lists are
 * right when full, after a free and a reuse); every free runs its free
 * callback once.
 *
 * Allocation and free are O(1) each (issue 28): the whole program runs
 * 4 x 2^16 allocations and frees. A watchdog ends it after 300 s, far
 * beyond what it takes (well under a second in release, a few seconds in
 * debug) but short of what a scan per allocation took (2^31 slot visits
 * per fill: minutes, ~30 s per fill in release): a liveness bound, so a
 * quadratic regression fails here instead of stalling the stage.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

#define LIMIT (1 << 16)
#define TYPES 256
#define WATCHDOG_SECONDS 300

static MPI_T_event_registration regs[LIMIT];
static pvar_event events[TYPES];
static long delivered[TYPES];
static long freed;

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] =
        "event_limits: watchdog: not done after 300 s (is allocation O(n)?)\n";
    ssize_t rc = write(2, msg, sizeof msg - 1);
    (void)rc;
    _exit(1);
}

static void on_event(MPI_T_event_instance instance, MPI_T_event_registration reg,
                     MPI_T_cb_safety safety, void *user_data) {
    (void)instance;
    (void)reg;
    (void)safety;
    delivered[(long)(intptr_t)user_data]++;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user_data) {
    (void)reg;
    (void)safety;
    (void)user_data;
    freed++;
}

/* Allocates LIMIT registrations, registration i on type i % ntypes, each
 * with a callback; checks the limit, a free and a reuse, one raise per
 * type checked; then frees them all. */
static void fill_and_empty(int ntypes) {
    int failures = 0;
    freed = 0;
    for (int i = 0; i < LIMIT; i++) {
        int t = i % ntypes;
        if (MPI_T_event_handle_alloc(events[t].index, NULL, MPI_INFO_NULL, &regs[i]) !=
                MPI_SUCCESS ||
            MPI_T_event_register_callback(regs[i], MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                          (void *)(intptr_t)t, on_event) != MPI_SUCCESS)
            failures++;
    }
    CHECK(failures == 0);
    MPI_T_event_registration extra = NULL;
    CHECK_RC(MPI_T_event_handle_alloc(events[0].index, NULL, MPI_INFO_NULL, &extra),
             MPI_T_ERR_OUT_OF_HANDLES);
    CHECK_RC(MPI_T_event_handle_alloc(events[ntypes - 1].index, NULL, MPI_INFO_NULL, &extra),
             MPI_T_ERR_OUT_OF_HANDLES);

    /* A free makes room for exactly one more, on any type. */
    CHECK_RC(MPI_T_event_handle_free(regs[LIMIT / 2], NULL, on_free), MPI_SUCCESS);
    CHECK(freed == 1);
    CHECK_RC(MPI_T_event_handle_alloc(events[ntypes - 1].index, NULL, MPI_INFO_NULL,
                                      &regs[LIMIT / 2]),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_register_callback(regs[LIMIT / 2], MPI_T_CB_REQUIRE_THREAD_SAFE,
                                           MPI_INFO_NULL, (void *)(intptr_t)(ntypes - 1),
                                           on_event),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_handle_alloc(events[0].index, NULL, MPI_INFO_NULL, &extra),
             MPI_T_ERR_OUT_OF_HANDLES);

    /* One raise of each type reaches its registrations, and only them. */
    memset(delivered, 0, sizeof delivered);
    long expect[TYPES] = {0};
    for (int i = 0; i < LIMIT; i++)
        expect[i == LIMIT / 2 ? ntypes - 1 : i % ntypes]++;
    for (int t = 0; t < ntypes; t++)
        pvar_event_raise_in(events[t], MPI_T_CB_REQUIRE_THREAD_SAFE, NULL, NULL);
    int wrong = 0;
    for (int t = 0; t < ntypes; t++)
        if (delivered[t] != expect[t]) {
            if (wrong++ < 4)
                fprintf(stderr, "type %d: %ld deliveries, expected %ld\n", t, delivered[t],
                        expect[t]);
        }
    CHECK(wrong == 0);

    freed = 0;
    failures = 0;
    for (int i = 0; i < LIMIT; i++)
        if (MPI_T_event_handle_free(regs[i], NULL, on_free) != MPI_SUCCESS)
            failures++;
    CHECK(failures == 0);
    CHECK(freed == LIMIT);
    /* Freed handles are dead; the table is empty again. */
    CHECK_RC(MPI_T_event_handle_free(regs[0], NULL, on_free), MPI_T_ERR_INVALID_HANDLE);
    memset(delivered, 0, sizeof delivered);
    pvar_event_raise_in(events[0], MPI_T_CB_REQUIRE_THREAD_SAFE, NULL, NULL);
    CHECK(delivered[0] == 0);
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(WATCHDOG_SECONDS);
    int provided;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    for (int t = 0; t < TYPES; t++) {
        char name[32];
        snprintf(name, sizeof name, "limits_ev%d", t);
        pvar_event_info info;
        memset(&info, 0, sizeof info);
        info.name = name;
        CHECK_RC(pvar_event_register(&info, &events[t]), MPI_SUCCESS);
    }
    fill_and_empty(1);
    fill_and_empty(TYPES);
    /* Twice more: slots and list entries freed above are reused. */
    fill_and_empty(1);
    fill_and_empty(TYPES);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("event_limits");
}
