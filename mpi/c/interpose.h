/*
 * interpose.h — private header of the C wrappers of libpvar_mpi.so, the
 * PMPI interposer (docs/mpi.md, "The interposer").
 *
 * Every MPI_x defined in p2p.c, completion.c, collectives.c, comms.c and
 * lifecycle.c calls PMPI_x and records what it did in the variables of
 * vars.c, through the component API of include/pvar.h: counters and
 * aggregates through the engine's use-site caches (pvar_site_cell +
 * pvar_local_add: a thread-local access and the cell's load and store),
 * timers and the watermark through the update functions.
 *
 * This header holds the types and the declarations every C file shares;
 * the inline recording path the wrappers call is record.h, on top of the
 * files that implement its slow paths (comms.c, requests.c).
 *
 * The `off` library is built with -DPVAR_MPI_COMPILE_OUT (and linked with
 * the engine built with `--cfg pvar_compile_out`): PM_ON is then 0, pm_comm_of()
 * returns NULL and every recording step of record.h is dead code the compiler
 * drops, so each wrapper is a plain call of its PMPI_ function — no clock
 * read, no table lookup, no type size query. pvar.h's PVAR_NO_UPDATES
 * makes its use-site macros nothing as well. Registration, the report at
 * MPI_Finalize and the merged MPI_T stay.
 */
#ifndef PVAR_MPI_INTERPOSE_H
#define PVAR_MPI_INTERPOSE_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef PVAR_MPI_COMPILE_OUT
#define PVAR_NO_UPDATES
#define PM_ON 0
#else
#define PM_ON 1
#endif
#include "pvar.h"

/* Handle values travel as their bits zero-extended to 64 (MPICH: 4-byte
 * ints, Open MPI: pointers): the object values of the bound instances and
 * the keys of the tables below. */
_Static_assert(sizeof(MPI_Comm) <= 8 && sizeof(MPI_Request) <= 8 && sizeof(MPI_Message) <= 8,
               "MPI handles wider than 64 bits");
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "64-bit targets only");

static inline uint64_t pm_bits(const void *handle, size_t size) {
    uint64_t k = 0;
    memcpy(&k, handle, size); /* little-endian: zero-extended */
    return k;
}
static inline uint64_t pm_comm_key(MPI_Comm c) { return pm_bits(&c, sizeof c); }
static inline uint64_t pm_request_key(MPI_Request r) { return pm_bits(&r, sizeof r); }
static inline uint64_t pm_message_key(MPI_Message m) { return pm_bits(&m, sizeof m); }

/* ---- the variables (vars.c) ------------------------------------------ */

/* Collective kinds: the elements of pvar_mpi_coll_{calls,bytes,time}. */
enum pm_kind {
    PM_BARRIER,
    PM_BCAST,
    PM_REDUCE,
    PM_ALLREDUCE,
    PM_GATHER,
    PM_GATHERV,
    PM_ALLGATHER,
    PM_ALLGATHERV,
    PM_SCATTER,
    PM_SCATTERV,
    PM_ALLTOALL,
    PM_ALLTOALLV,
    PM_REDUCE_SCATTER, /* and MPI_Reduce_scatter_block */
    PM_SCAN,
    PM_EXSCAN,
    PM_KINDS
};

/* The variables bound to communicators. The first PM_CELL_VARS are
 * counters and aggregates updated through per-thread cells (each has a
 * use-site cache in pm_tls); the timers follow. */
enum pm_bound {
    PM_SEND_CALLS,
    PM_SEND_BYTES,
    PM_RECV_CALLS,
    PM_RECV_BYTES,
    PM_COLL_CALLS,
    PM_COLL_BYTES,
    PM_CELL_VARS,
    PM_P2P_TIME = PM_CELL_VARS,
    PM_COLL_TIME,
    PM_BOUND_VARS
};

struct pm_vars {
    pvar_bound bound[PM_BOUND_VARS];
    pvar_var wait_calls, test_calls, probe_calls, wait_time;
    pvar_var requests, requests_max;
    pvar_var peer_msgs, peer_bytes; /* element = world rank of the destination */
    pvar_cvar report, report_json, report_every, report_signal, report_poll, time;
};
extern struct pm_vars pm_vars;

/* Registers the variables, control variables and categories (MPI_Init). */
void pm_vars_register(int world_size);

/* ---- handle tables (comms.c) ----------------------------------------- */

/* Open addressing keyed by handle bits: lookups are lock-free (a few
 * acquire loads); insertions and removals hold `lock`. Keys 0 and
 * UINT64_MAX are reserved (no MPI handle has those bits). A table grows
 * into a new slot array; the old one stays readable for lookups that are
 * still walking it and is freed at MPI_Finalize. A lookup can miss an
 * entry inserted concurrently (callers recheck under the lock), never
 * return another key's value. */
typedef struct pm_slots pm_slots;
typedef struct pm_table {
    _Atomic(pm_slots *) slots;
    atomic_size_t live; /* entries: a lock-free "is it empty" test */
    size_t used;        /* entries + tombstones (under lock) */
    pthread_mutex_t lock;
} pm_table;
#define PM_TABLE_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

void *pm_table_get(pm_table *t, uint64_t key);
int pm_table_put(pm_table *t, uint64_t key, void *value); /* under t->lock; 0 or -1 */
void *pm_table_take(pm_table *t, uint64_t key);           /* under t->lock */
void pm_tables_release(void); /* frees outgrown slot arrays (MPI_Finalize) */

/* ---- communicator entries (comms.c) ------------------------------------ */

/* One per communicator in use: created at its first recorded use (so
 * communicators made by any constructor are covered), dropped at
 * MPI_Comm_free / MPI_Comm_disconnect. Immutable once published. */
typedef struct pm_comm {
    uint64_t key; /* the handle's bits: the instances' object */
    int rank, size;
    int inter;        /* intercommunicator: peers are the remote group */
    int peers;        /* size of the group ranks address (remote for inter) */
    int world;        /* MPI_COMM_WORLD itself */
    const int *world_rank; /* [peers]: MPI_COMM_WORLD rank, or -1 (outside it) */
    unsigned long seq;     /* creation order, for labels */
    char *label;           /* "MPI_COMM_WORLD", "MPI_COMM_SELF", "comm[0-3]" */
    int fixed_label;
    pvar_var var[PM_BOUND_VARS]; /* this communicator's instances */
} pm_comm;

/* Per thread, everything one wrapper touches, in one thread-local block
 * (one %fs-relative base): the last communicator looked up, valid while
 * the global generation (bumped whenever an entry is created or removed)
 * is unchanged, and the use-site caches of its cell variables (emptied
 * whenever the entry is refreshed; a cache also refills by itself for a
 * handle at a freed handle's address, see pvar.h); the use-site caches of the
 * unbound cell variables; the last predefined datatype's size; and this
 * thread's outstanding requests with the highest count it has given the
 * watermark. */
typedef struct pm_tls {
    uint64_t key;
    uint64_t gen;
    pm_comm *comm;
    pvar_site site[PM_CELL_VARS];
    /* Unbound cell variables (handles live from MPI_Init to exit). */
    pvar_site peer_msgs, peer_bytes, requests, wait_calls, test_calls, probe_calls;
    /* A predefined (MPI_COMBINER_NAMED) datatype and its size: those never
     * change, so the entry needs no invalidation. type_size 0: empty. */
    MPI_Datatype type;
    uint64_t type_size;
    /* The fast block: this thread's cells (element 0) of `fast_comm`'s
     * cell variables and of the unbound point-to-point ones, filled from
     * the sites above when they all cache cells of one thread record, so
     * that one check (the record's owner word still holds `incarnation`)
     * validates them all. fast_comm NULL: empty; emptied with the sites
     * (pm_comm_lookup). */
    const pm_comm *fast_comm;
    const uint64_t *owner;
    uint64_t incarnation;
    uint64_t *cell[PM_CELL_VARS];
    uint64_t *peer_msgs_cell, *peer_bytes_cell, *requests_cell;
    size_t peer_cells; /* elements of the peer arrays */
    /* Requests started minus completed on this thread, and the highest
     * value passed to pvar_watermark_update. */
    int64_t outstanding;
    int64_t reported;
} pm_tls;

extern _Thread_local pm_tls pm_tls_cache;
extern _Atomic uint64_t pm_comm_gen;

/* The miss path: the entry from the table, made if `make` and missing. */
pm_comm *pm_comm_lookup(pm_tls *t, MPI_Comm comm, int make);
void pm_comms_start(void);                         /* MPI_Init: WORLD and SELF */
void pm_comms_stop(void);                          /* MPI_Finalize */
/* Live entries in creation order: their object values and report labels
 * (malloc'd; free with pm_comm_labels_free). Returns the count, or 0. */
size_t pm_comm_labels(uint64_t **objects, char ***labels);
void pm_comm_labels_free(uint64_t *objects, char **labels, size_t n);

/* Implemented in comms.c: the fast block's fill (nonzero if it serves `c`)
 * and the miss path of the per-thread datatype size (record.h). */
int pm_fast_fill(pm_tls *t, const pm_comm *c);
MPI_Count pm_type_size_miss(pm_tls *t, MPI_Datatype type);

/* What the timers time (pvar_mpi_time, read at MPI_Init by lifecycle.c;
 * the cvar is frozen afterwards): nothing, the blocking collectives
 * (default), or every blocking call (point-to-point and MPI_Wait* too).
 * Two clock reads and two engine calls cost about 13 ns: nothing next to
 * a collective, 4 % of a shared-memory message (docs/mpi.md, "Overhead"). */
enum pm_time_mode { PM_TIME_OFF = 0, PM_TIME_COLL = 1, PM_TIME_ALL = 2 };
extern int pm_timing;

/* Implemented in requests.c: the slow paths of the outstanding-request
 * accounting (record.h, pm_requests_add). */
void pm_requests_report(pm_tls *t, int64_t now);
void pm_requests_level_slow(int64_t n);

/* The persistent requests the interposer made (MPI_*_init of p2p.c). */
enum pm_op { PM_OP_SEND, PM_OP_RECV };
void pm_persistent_add(MPI_Request request, enum pm_op op, MPI_Comm comm, int peer,
                       uint64_t bytes);

/* ---- recording state and the report (comms.c, lifecycle.c) --------------- */

/* Recording is on: between MPI_Init and MPI_Finalize (comms.c; set by
 * lifecycle.c). */
int pm_running(void);
void pm_running_set(int on);
/* A blocking collective on MPI_COMM_WORLD completed: every
 * pvar_mpi_report_every-th makes a report, and every pvar_mpi_report_poll-th
 * asks all ranks whether one of them received pvar_mpi_report_signal
 * (lifecycle.c). Never from a nonblocking collective: both may wait for the
 * other ranks. */
void pm_world_collective(void);

#endif /* PVAR_MPI_INTERPOSE_H */
