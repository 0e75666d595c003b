/*
 * completion.c — requests: the outstanding-request level and its
 * watermark, the persistent requests the interposer made, and the
 * wrappers that start, complete or free requests (MPI_Start, MPI_Startall,
 * MPI_Request_free, MPI_Wait*, MPI_Test*), plus the other calls that
 * return a new request (one-sided MPI_R*, nonblocking MPI-IO,
 * MPI_Comm_idup, generalized requests), wrapped only so that their
 * requests are counted when they start as they are when they complete.
 *
 * Accounting: +1 when a call returns a new nonpersistent request or
 * MPI_Start starts a persistent request of the set below; -1 when a
 * wait/test completes it — a nonpersistent request when the call sets it
 * to MPI_REQUEST_NULL, a persistent one when the call reports it complete
 * (it stays allocated, inactive) — or MPI_Request_free frees it. Only
 * completion calls that return MPI_SUCCESS are accounted.
 *
 * Persistent requests (MPI_Send_init & co. in p2p.c) are kept in a table
 * with their operation, so that each MPI_Start counts as a send or a
 * receive. Most programs have none: the wait and test paths only look
 * there while the table is not empty (one atomic load).
 */
#include <stdlib.h>

#include "record.h"

/* ---- persistent requests ----------------------------------------------- */

typedef struct pm_persistent {
    atomic_int active; /* started and not yet completed */
    enum pm_op op;
    MPI_Comm comm;
    int peer;
    uint64_t bytes;
} pm_persistent;

static pm_table persistent = PM_TABLE_INIT;

void pm_persistent_add(MPI_Request request, enum pm_op op, MPI_Comm comm, int peer,
                       uint64_t bytes) {
    pm_persistent *p = malloc(sizeof *p);
    if (p == NULL)
        return;
    atomic_init(&p->active, 0);
    p->op = op;
    p->comm = comm;
    p->peer = peer;
    p->bytes = bytes;
    uint64_t key = pm_request_key(request);
    pthread_mutex_lock(&persistent.lock);
    /* One left by a request freed where this layer does not see it. */
    free(pm_table_take(&persistent, key));
    int rc = pm_table_put(&persistent, key, p);
    pthread_mutex_unlock(&persistent.lock);
    if (rc != 0)
        free(p);
}

static pm_persistent *persistent_of(MPI_Request request) {
    if (atomic_load_explicit(&persistent.live, memory_order_relaxed) == 0)
        return NULL;
    return pm_table_get(&persistent, pm_request_key(request));
}

/* MPI_Start(all) started request: count it and its operation. */
static void started(MPI_Request request) {
    pm_persistent *p = persistent_of(request);
    if (p == NULL)
        return;
    /* Already active: a completion this layer did not see; it restarts. */
    if (atomic_exchange_explicit(&p->active, 1, memory_order_relaxed) == 0)
        pm_requests_started(1);
    /* The entry made at MPI_*_init; none if the communicator was freed
     * since (its handle must not be used to make one). */
    pm_comm *c = pm_comm_entry(p->comm, 0);
    if (c != NULL && p->op == PM_OP_SEND)
        pm_sent_bytes(c, p->peer, p->bytes);
    else if (c != NULL)
        pm_received_bytes(c, p->bytes);
}

/* A wait/test reported `after` (the request's value after the call, which
 * was not MPI_REQUEST_NULL before it) complete. */
static void completed(MPI_Request after) {
    if (after == MPI_REQUEST_NULL) {
        pm_requests_done(1);
        return;
    }
    pm_persistent *p = persistent_of(after);
    if (p != NULL && atomic_exchange_explicit(&p->active, 0, memory_order_relaxed) == 1)
        pm_requests_done(1);
}

/* Requests that are not MPI_REQUEST_NULL. */
static int non_null(int count, const MPI_Request *requests) {
    int n = 0;
    for (int i = 0; i < count; i++)
        n += requests[i] != MPI_REQUEST_NULL;
    return n;
}

/* Waitall/Testall completed every request: those set to MPI_REQUEST_NULL
 * were `before` - (non-null now); persistent ones stay and are looked up. */
static void completed_all(int count, const MPI_Request *requests, int before) {
    int after = non_null(count, requests);
    if (before > after)
        pm_requests_done(before - after);
    if (after > 0 && atomic_load_explicit(&persistent.live, memory_order_relaxed) > 0)
        for (int i = 0; i < count; i++)
            if (requests[i] != MPI_REQUEST_NULL)
                completed(requests[i]);
}

/* Waitsome/Testsome: the requests at `indices` completed. */
static void completed_some(const MPI_Request *requests, int outcount, const int *indices) {
    for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++)
        completed(requests[indices[i]]);
}

/* ---- start and free ------------------------------------------------------ */

int MPI_Start(MPI_Request *request) {
    int rc = PMPI_Start(request);
    if (PM_ON && rc == MPI_SUCCESS)
        started(*request);
    return rc;
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
    int rc = PMPI_Startall(count, array_of_requests);
    for (int i = 0; PM_ON && rc == MPI_SUCCESS && i < count; i++)
        started(array_of_requests[i]);
    return rc;
}

int MPI_Request_free(MPI_Request *request) {
    int ended = 0;
    if (PM_ON && *request != MPI_REQUEST_NULL) {
        /* Taken out before the library frees the handle (it may reuse it). */
        pm_persistent *p = NULL;
        if (atomic_load_explicit(&persistent.live, memory_order_relaxed) > 0) {
            pthread_mutex_lock(&persistent.lock);
            p = pm_table_take(&persistent, pm_request_key(*request));
            pthread_mutex_unlock(&persistent.lock);
        }
        ended = p == NULL || atomic_load_explicit(&p->active, memory_order_relaxed);
        free(p);
    }
    int rc = PMPI_Request_free(request);
    if (ended && rc == MPI_SUCCESS)
        pm_requests_done(1);
    return rc;
}

/* ---- wait ------------------------------------------------------------------ */

static inline void wait_start(void) {
    pm_count(wait_calls);
    if (PM_ON && __builtin_expect(pm_timing >= PM_TIME_ALL, 0))
        pvar_timer_start(pm_vars.wait_time);
}

static inline void wait_stop(void) {
    if (PM_ON && __builtin_expect(pm_timing >= PM_TIME_ALL, 0))
        pvar_timer_stop(pm_vars.wait_time);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    MPI_Request before = *request;
    wait_start();
    int rc = PMPI_Wait(request, status);
    wait_stop();
    if (PM_ON && rc == MPI_SUCCESS && before != MPI_REQUEST_NULL)
        completed(*request);
    return rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
    int before = PM_ON ? non_null(count, array_of_requests) : 0;
    wait_start();
    int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    wait_stop();
    if (PM_ON && rc == MPI_SUCCESS)
        completed_all(count, array_of_requests, before);
    return rc;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    wait_start();
    int rc = PMPI_Waitany(count, array_of_requests, index, status);
    wait_stop();
    if (PM_ON && rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        completed(array_of_requests[*index]);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
    wait_start();
    int rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    wait_stop();
    if (PM_ON && rc == MPI_SUCCESS)
        completed_some(array_of_requests, *outcount, array_of_indices);
    return rc;
}

/* ---- test ------------------------------------------------------------------ */

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    MPI_Request before = *request;
    pm_count(test_calls);
    int rc = PMPI_Test(request, flag, status);
    if (PM_ON && rc == MPI_SUCCESS && *flag && before != MPI_REQUEST_NULL)
        completed(*request);
    return rc;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[]) {
    int before = PM_ON ? non_null(count, array_of_requests) : 0;
    pm_count(test_calls);
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    if (PM_ON && rc == MPI_SUCCESS && *flag)
        completed_all(count, array_of_requests, before);
    return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status) {
    pm_count(test_calls);
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    if (PM_ON && rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        completed(array_of_requests[*index]);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
    pm_count(test_calls);
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    if (PM_ON && rc == MPI_SUCCESS)
        completed_some(array_of_requests, *outcount, array_of_indices);
    return rc;
}

/* ---- other calls that return a request: counted only ------------------------ */

#define PM_COUNTED(name, params, args)                                                         \
    int MPI_##name params {                                                                     \
        int rc = PMPI_##name args;                                                              \
        pm_request_started(rc, request);                                                        \
        return rc;                                                                              \
    }

PM_COUNTED(Rput,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
            target_datatype, win, request))
PM_COUNTED(Rget,
           (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
            MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
            target_datatype, win, request))
PM_COUNTED(Raccumulate,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
            target_datatype, op, win, request))
PM_COUNTED(Rget_accumulate,
           (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
            MPI_Win win, MPI_Request *request),
           (origin_addr, origin_count, origin_datatype, result_addr, result_count,
            result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
            request))

/* Nonblocking MPI-IO: (fh, buf, count, datatype, request) and the
 * explicit-offset forms (fh, offset, buf, count, datatype, request). */
#define PM_FILE_IO(name, buf_type)                                                              \
    PM_COUNTED(name,                                                                            \
               (MPI_File fh, buf_type buf, int count, MPI_Datatype datatype,                   \
                MPI_Request *request),                                                         \
               (fh, buf, count, datatype, request))
#define PM_FILE_IO_AT(name, buf_type)                                                           \
    PM_COUNTED(name,                                                                            \
               (MPI_File fh, MPI_Offset offset, buf_type buf, int count,                        \
                MPI_Datatype datatype, MPI_Request *request),                                  \
               (fh, offset, buf, count, datatype, request))

PM_FILE_IO(File_iread, void *)
PM_FILE_IO(File_iread_shared, void *)
PM_FILE_IO(File_iread_all, void *)
PM_FILE_IO(File_iwrite, const void *)
PM_FILE_IO(File_iwrite_shared, const void *)
PM_FILE_IO(File_iwrite_all, const void *)
PM_FILE_IO_AT(File_iread_at, void *)
PM_FILE_IO_AT(File_iread_at_all, void *)
PM_FILE_IO_AT(File_iwrite_at, const void *)
PM_FILE_IO_AT(File_iwrite_at_all, const void *)

PM_COUNTED(Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request),
           (comm, newcomm, request))
PM_COUNTED(Grequest_start,
           (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
            MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request),
           (query_fn, free_fn, cancel_fn, extra_state, request))

#if MPI_VERSION >= 4
PM_COUNTED(Comm_idup_with_info,
           (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request),
           (comm, info, newcomm, request))
#endif
