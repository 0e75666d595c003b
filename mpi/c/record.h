/*
 * record.h — the recording hot path of the C wrappers (p2p.c,
 * collectives.c, completion.c): the per-thread communicator lookup, the
 * counter updates through the thread-local block (pm_tls, interpose.h),
 * timers, byte counts and the outstanding-request accounting, all inline.
 * Their slow paths live in comms.c and requests.c, which include only
 * interpose.h: the files that define what this header uses never include
 * it, so the wrappers sit on top of them.
 *
 * In the off build (PVAR_MPI_COMPILE_OUT) PM_ON is 0 and every function
 * here returns before recording: the wrappers compile to a jump to their
 * PMPI_ function.
 */
#ifndef PVAR_MPI_RECORD_H
#define PVAR_MPI_RECORD_H

#include "interpose.h"

/* The entry of `comm`, made at its first use if `make`; NULL when not
 * recording (off build, before MPI_Init, after MPI_Finalize), for
 * MPI_COMM_NULL, or when there is none (not `make`) or it cannot be made. */
static inline pm_comm *pm_comm_entry(MPI_Comm comm, int make) {
    if (!PM_ON)
        return NULL;
    pm_tls *t = &pm_tls_cache;
    uint64_t key = pm_comm_key(comm);
    if (__builtin_expect(t->comm != NULL && t->key == key &&
                             t->gen == atomic_load_explicit(&pm_comm_gen, memory_order_acquire),
                         1))
        return t->comm;
    return pm_comm_lookup(t, comm, make);
}

/* The entry of a communicator the caller passed to this call (so it is
 * valid): made at its first use. */
static inline pm_comm *pm_comm_of(MPI_Comm comm) { return pm_comm_entry(comm, 1); }

/* Adds n to element i of the entry's cell variable v on this thread. */
static inline void pm_add(const pm_comm *c, enum pm_bound v, size_t i, uint64_t n) {
    pvar_var var = c->var[v];
    uint64_t *cell = pvar_site_cell(&pm_tls_cache.site[v], var, i, PVAR_SITE_INT);
    if (cell)
        pvar_local_add(cell, n);
    else
        pvar_add_at(var, i, n);
}


/* The fast block serves `c` (an entry pm_comm_entry returned on this
 * thread): one compare with the cached entry, one load of the owner word. */
static inline int pm_fast(pm_tls *t, const pm_comm *c) {
    if (__builtin_expect(t->fast_comm == c && c != NULL &&
                             PVAR_LOAD_RELAXED_(t->owner) == t->incarnation,
                         1))
        return 1;
    return pm_fast_fill(t, c);
}

/* Adds n to this thread's cell of the unbound cell variable v through
 * `site` (a member of pm_tls_cache). */
static inline void pm_add_unbound(pvar_site *site, pvar_var v, size_t i, uint64_t n) {
    if (!PM_ON)
        return;
    uint64_t *cell = pvar_site_cell(site, v, i, PVAR_SITE_INT);
    if (cell)
        pvar_local_add(cell, n);
    else
        pvar_add_at(v, i, n);
}
#define pm_count(field) pm_add_unbound(&pm_tls_cache.field, pm_vars.field, 0, 1)


static inline int pm_timed(enum pm_bound v) {
    return pm_timing >= (v == PM_COLL_TIME ? PM_TIME_COLL : PM_TIME_ALL);
}
static inline void pm_time_start(const pm_comm *c, enum pm_bound v, size_t i) {
    if (c && __builtin_expect(pm_timed(v), v == PM_COLL_TIME))
        pvar_timer_start_at(c->var[v], i);
}
static inline void pm_time_stop(const pm_comm *c, enum pm_bound v, size_t i) {
    if (c && __builtin_expect(pm_timed(v), v == PM_COLL_TIME))
        pvar_timer_stop_at(c->var[v], i);
}

/* ---- what the wrappers record ------------------------------------------ */

/* The size of `type` (valid: the MPI call that named it succeeded), or
 * -1. Predefined datatypes are remembered per thread, one at a time: their
 * sizes never change; a derived datatype's handle can be freed and reused
 * for another type, so those are asked every time. */
static inline MPI_Count pm_type_size(MPI_Datatype type) {
    pm_tls *t = &pm_tls_cache;
    if (__builtin_expect(t->type == type && t->type_size != 0, 1))
        return (MPI_Count)t->type_size;
    return pm_type_size_miss(t, type);
}

/* count elements of `type` in bytes (0 for count <= 0). Call only after the
 * MPI call succeeded, so `type` is valid. */
static inline uint64_t pm_bytes(MPI_Count count, MPI_Datatype type) {
    if (count <= 0)
        return 0;
    MPI_Count size = pm_type_size(type);
    return size > 0 ? (uint64_t)count * (uint64_t)size : 0;
}

/* A message of `bytes` to rank `dest` of the entry's (remote) group. */
static inline void pm_sent_bytes(const pm_comm *c, int dest, uint64_t bytes) {
    pm_tls *t = &pm_tls_cache;
    if (__builtin_expect(pm_fast(t, c), 1)) {
        pvar_local_add(t->cell[PM_SEND_CALLS], 1);
        if (dest == MPI_PROC_NULL)
            return;
        pvar_local_add(t->cell[PM_SEND_BYTES], bytes);
        if (dest >= 0 && dest < c->peers) {
            int w = c->world_rank[dest];
            if (w >= 0 && (size_t)w < t->peer_cells) {
                pvar_local_add(t->peer_msgs_cell + w, 1);
                pvar_local_add(t->peer_bytes_cell + w, bytes);
            }
        }
        return;
    }
    pm_add(c, PM_SEND_CALLS, 0, 1);
    if (dest == MPI_PROC_NULL)
        return;
    pm_add(c, PM_SEND_BYTES, 0, bytes);
    if (dest >= 0 && dest < c->peers && c->world_rank[dest] >= 0) {
        size_t w = (size_t)c->world_rank[dest];
        pm_add_unbound(&pm_tls_cache.peer_msgs, pm_vars.peer_msgs, w, 1);
        pm_add_unbound(&pm_tls_cache.peer_bytes, pm_vars.peer_bytes, w, bytes);
    }
}
static inline void pm_sent(const pm_comm *c, int dest, int count, MPI_Datatype type) {
    pm_sent_bytes(c, dest, dest == MPI_PROC_NULL ? 0 : pm_bytes(count, type));
}

/* A receive: posted (nonblocking: the buffer's bytes) or completed
 * (blocking: the bytes the status reports). */
static inline void pm_received_bytes(const pm_comm *c, uint64_t bytes) {
    pm_tls *t = &pm_tls_cache;
    if (__builtin_expect(pm_fast(t, c), 1)) {
        pvar_local_add(t->cell[PM_RECV_CALLS], 1);
        pvar_local_add(t->cell[PM_RECV_BYTES], bytes);
        return;
    }
    pm_add(c, PM_RECV_CALLS, 0, 1);
    pm_add(c, PM_RECV_BYTES, 0, bytes);
}
static inline void pm_posted(const pm_comm *c, int source, int count, MPI_Datatype type) {
    pm_received_bytes(c, source == MPI_PROC_NULL ? 0 : pm_bytes(count, type));
}
/* The bytes a receive's status reports. Read from the library's own
 * status fields where their layout is known (Open MPI 4/5: _ucount;
 * MPICH: count_lo and count_hi_and_cancelled, as MPIR_STATUS_GET_COUNT),
 * else asked with MPI_Get_elements_x in bytes. */
static inline uint64_t pm_status_bytes(const MPI_Status *status) {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 4 && OMPI_MAJOR_VERSION <= 5
    return (uint64_t)status->_ucount;
#elif defined(MPICH) && defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 30400000 &&         \
    MPICH_NUMVERSION < 50000000
    return ((uint64_t)(uint32_t)status->count_lo) |
           ((uint64_t)(uint32_t)(status->count_hi_and_cancelled >> 1) << 32);
#else
    MPI_Count n = 0;
    if (PMPI_Get_elements_x(status, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
        n = 0;
    return (uint64_t)n;
#endif
}
static inline void pm_received(const pm_comm *c, const MPI_Status *status) {
    pm_received_bytes(c, pm_status_bytes(status));
}

/* Where a blocking receive's status goes: the caller's, or `own` when the
 * caller ignores it and the bytes must be read from it. */
static inline MPI_Status *pm_status(const pm_comm *c, MPI_Status *status, MPI_Status *own) {
    return c != NULL && status == MPI_STATUS_IGNORE ? own : status;
}

/* ---- requests ------------------------------------------------------------ */

/* Outstanding requests: +n when nonblocking or persistent requests start,
 * -n when they complete. The LEVEL pvar_mpi_requests_outstanding is this
 * thread's cell (+n/-n in one update; the engine sums the threads: exact);
 * the watermark is fed from this thread's own count, and only when it
 * exceeds the highest this thread has reported (so the engine is called
 * a handful of times per run, not per request). */
static inline void pm_requests_add(int64_t n) {
    if (!PM_ON)
        return;
    pm_tls *t = &pm_tls_cache;
    uint64_t *cell;
    if (__builtin_expect(t->fast_comm != NULL && PVAR_LOAD_RELAXED_(t->owner) == t->incarnation,
                         1))
        cell = t->requests_cell;
    else
        cell = pvar_site_cell(&t->requests, pm_vars.requests, 0, PVAR_SITE_INT);
    if (cell)
        pvar_local_add(cell, (uint64_t)n); /* the cell holds a wrapping delta */
    else
        pm_requests_level_slow(n);
    int64_t now = t->outstanding + n;
    t->outstanding = now;
    if (__builtin_expect(now > t->reported, 0))
        pm_requests_report(t, now);
}
static inline void pm_requests_started(int n) { pm_requests_add(n); }
static inline void pm_requests_done(int n) { pm_requests_add(-(int64_t)n); }

/* After a call that returns a new nonpersistent request in *request. */
static inline void pm_request_started(int rc, const MPI_Request *request) {
    if (PM_ON && rc == MPI_SUCCESS && *request != MPI_REQUEST_NULL)
        pm_requests_started(1);
}

#endif /* PVAR_MPI_RECORD_H */
