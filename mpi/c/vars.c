/*
 * vars.c — the interposer's variables: registered at MPI_Init (when the
 * size of MPI_COMM_WORLD, the length of the per-peer arrays, is known)
 * through include/pvar.h, in the process registry that the merged MPI_T
 * and the report read. Names, classes and meanings: docs/mpi.md, "The
 * interposer".
 */
#include <signal.h>
#include <stdio.h>

#include "interpose.h"

struct pm_vars pm_vars;

/* The element order of the per-collective arrays (enum pm_kind), as their
 * descriptions state it. */
#define PM_KINDS_TEXT                                                                           \
    "one element per collective kind, in this order: barrier, bcast, reduce, allreduce, "     \
    "gather, gatherv, allgather, allgatherv, scatter, scatterv, alltoall, alltoallv, "         \
    "reduce_scatter (with reduce_scatter_block), scan, exscan; the nonblocking variants "      \
    "(MPI_Ibcast, ...) count in the same element"

typedef struct pm_def {
    const char *name;
    const char *description;
    int var_class;
    int verbosity;
    long count; /* 0: 1; -1: the size of MPI_COMM_WORLD */
    const char *category;
} pm_def;

static const pm_def bound_defs[PM_BOUND_VARS] = {
    [PM_SEND_CALLS] = {"pvar_mpi_send_calls",
                       "point-to-point sends started on this communicator (blocking, nonblocking, "
                       "and each MPI_Start of a persistent send), MPI_PROC_NULL included",
                       PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
    [PM_SEND_BYTES] = {"pvar_mpi_send_bytes",
                       "bytes of those sends (count times the datatype's size; nothing for "
                       "MPI_PROC_NULL)",
                       PVAR_CLASS_AGGREGATE, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
    [PM_RECV_CALLS] = {"pvar_mpi_recv_calls",
                       "point-to-point receives on this communicator (blocking, nonblocking, "
                       "matched, and each MPI_Start of a persistent receive)",
                       PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
    [PM_RECV_BYTES] = {"pvar_mpi_recv_bytes",
                       "bytes of those receives: for blocking receives what arrived (from the "
                       "status), for nonblocking and persistent receives the bytes posted (count "
                       "times the datatype's size), whatever arrives",
                       PVAR_CLASS_AGGREGATE, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
    [PM_COLL_CALLS] = {"pvar_mpi_coll_calls",
                       "collective calls on this communicator; " PM_KINDS_TEXT,
                       PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, PM_KINDS, "pvar_mpi_coll"},
    [PM_COLL_BYTES] = {"pvar_mpi_coll_bytes",
                       "bytes this process contributes to collectives on this communicator: the "
                       "send buffer the call describes (bcast, scatter(v): the root's; "
                       "MPI_IN_PLACE: this process's block of the receive buffer; barrier: 0); "
                       PM_KINDS_TEXT,
                       PVAR_CLASS_AGGREGATE, PVAR_VERBOSITY_USER_BASIC, PM_KINDS, "pvar_mpi_coll"},
    [PM_P2P_TIME] = {"pvar_mpi_p2p_time",
                     "seconds in blocking point-to-point calls on this communicator (send, "
                     "receive, sendrecv, probe, matched probe and receive)",
                     PVAR_CLASS_TIMER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
    [PM_COLL_TIME] = {"pvar_mpi_coll_time",
                      "seconds in blocking collective calls on this communicator (the "
                      "nonblocking ones' time is in their MPI_Wait*); " PM_KINDS_TEXT,
                      PVAR_CLASS_TIMER, PVAR_VERBOSITY_USER_BASIC, PM_KINDS, "pvar_mpi_coll"},
};

typedef struct pm_unbound {
    pm_def def;
    pvar_var *var;
} pm_unbound;

static const pm_unbound unbound_defs[] = {
    {{"pvar_mpi_wait_calls", "calls of MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Waitsome",
      PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_requests"},
     &pm_vars.wait_calls},
    {{"pvar_mpi_test_calls", "calls of MPI_Test, MPI_Testall, MPI_Testany and MPI_Testsome",
      PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_requests"},
     &pm_vars.test_calls},
    {{"pvar_mpi_probe_calls", "calls of MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe",
      PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_p2p"},
     &pm_vars.probe_calls},
    {{"pvar_mpi_wait_time", "seconds in MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Waitsome",
      PVAR_CLASS_TIMER, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_requests"},
     &pm_vars.wait_time},
    {{"pvar_mpi_requests_outstanding",
      "requests started and not yet completed: +1 when a nonblocking call returns a request or "
      "MPI_Start(all) starts a persistent one, -1 when MPI_Wait*/MPI_Test* completes it (a "
      "nonpersistent request: when it is set to MPI_REQUEST_NULL) or MPI_Request_free frees it",
      PVAR_CLASS_LEVEL, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_requests"},
     &pm_vars.requests},
    {{"pvar_mpi_requests_outstanding_max",
      "the most requests one thread had outstanding (started on that thread and not yet "
      "completed on it): for a single-threaded program the highest value of "
      "pvar_mpi_requests_outstanding. A thread reports only counts above its own earlier "
      "highest, so after a reset the value rises again only when a thread beats that",
      PVAR_CLASS_HIGHWATERMARK, PVAR_VERBOSITY_USER_BASIC, 0, "pvar_mpi_requests"},
     &pm_vars.requests_max},
    {{"pvar_mpi_peer_send_msgs",
      "point-to-point messages sent to each process, one element per rank in MPI_COMM_WORLD "
      "(intercommunicators translate through the remote group; MPI_PROC_NULL and processes "
      "outside MPI_COMM_WORLD are not counted)",
      PVAR_CLASS_COUNTER, PVAR_VERBOSITY_USER_DETAIL, -1, "pvar_mpi_peer"},
     &pm_vars.peer_msgs},
    {{"pvar_mpi_peer_send_bytes",
      "bytes of point-to-point messages sent to each process, one element per rank in "
      "MPI_COMM_WORLD (as pvar_mpi_peer_send_msgs)",
      PVAR_CLASS_AGGREGATE, PVAR_VERBOSITY_USER_DETAIL, -1, "pvar_mpi_peer"},
     &pm_vars.peer_bytes},
};

static pvar_info info_of(const pm_def *d, int world_size) {
    pvar_info i = {0};
    i.name = d->name;
    i.description = d->description;
    i.var_class = d->var_class;
    i.verbosity = d->verbosity;
    i.count = d->count < 0 ? world_size : d->count;
    i.category = d->category;
    return i;
}

/* A refused registration leaves the handle NULL (its updates do nothing)
 * and says so once. */
static void check(int rc, const char *what) {
    if (rc != 0) {
        const char *why = pvar_last_error();
        fprintf(stderr, "pvar_mpi: %s not registered: %s\n", what, why ? why : "unknown error");
    }
}

static void register_categories(void) {
    static const struct {
        const char *name, *description;
    } cats[] = {
        {"pvar_mpi", "MPI communication of this process, recorded by the pvar interposer"},
        {"pvar_mpi_p2p", "point-to-point communication, per communicator"},
        {"pvar_mpi_coll", "collective communication, per communicator and collective kind"},
        {"pvar_mpi_requests", "nonblocking and persistent requests and their completion"},
        {"pvar_mpi_peer", "point-to-point traffic per destination rank in MPI_COMM_WORLD"},
    };
    for (size_t k = 0; k < sizeof cats / sizeof cats[0]; k++) {
        check(pvar_category_define(cats[k].name, cats[k].description, NULL), cats[k].name);
        if (k > 0)
            check(pvar_category_add_subcategory("pvar_mpi", cats[k].name), cats[k].name);
    }
}

static void register_cvars(void) {
    static const pvar_enum_item modes[] = {{"off", 0}, {"text", 1}};

    pvar_cvar_info r = {0};
    r.name = "pvar_mpi_report";
    r.description = "text (1): at MPI_Finalize (and at each report of pvar_mpi_report_every) "
                    "rank 0 writes the report of all ranks' variables to its standard error; "
                    "off (0): no text report. Enumerated: a write of another value is refused "
                    "with MPI_T_ERR_INVALID. Only rank 0's value counts";
    r.datatype = PVAR_TYPE_INT;
    r.category = "pvar_mpi";
    r.env = "PVAR_MPI_REPORT";
    r.default_int = 1;
    r.enum_name = "pvar_mpi_report_mode";
    r.enum_items = modes;
    r.enum_len = 2;
    check(pvar_cvar_register(&r, &pm_vars.report), r.name);

    pvar_cvar_info j = {0};
    j.name = "pvar_mpi_report_json";
    j.description = "a file rank 0 writes the report into as JSON (pvar.report.v2) at "
                    "MPI_Finalize and at each report of pvar_mpi_report_every, whole (written "
                    "beside it, then renamed over it); empty: none. Only rank 0's value counts";
    j.datatype = PVAR_TYPE_CHAR;
    j.category = "pvar_mpi";
    j.env = "PVAR_MPI_REPORT_JSON";
    j.default_string = "";
    j.capacity = 4096;
    check(pvar_cvar_register(&j, &pm_vars.report_json), j.name);

    pvar_cvar_info e = {0};
    e.name = "pvar_mpi_report_every";
    e.description = "N > 0: a report (as at MPI_Finalize) after every N-th blocking collective "
                    "call on MPI_COMM_WORLD; 0: only at MPI_Finalize. "
                    "Collective over all ranks: set the same value on every process";
    e.datatype = PVAR_TYPE_INT;
    e.scope = PVAR_SCOPE_ALL_EQ;
    e.category = "pvar_mpi";
    e.env = "PVAR_MPI_REPORT_EVERY";
    check(pvar_cvar_register(&e, &pm_vars.report_every), e.name);

    static const pvar_enum_item signals[] = {{"off", 0}, {"usr1", SIGUSR1}, {"usr2", SIGUSR2}};
    pvar_cvar_info sig = {0};
    sig.name = "pvar_mpi_report_signal";
    sig.description =
        "usr1 / usr2: the signal that asks for a report on demand. Sent to any rank (Open "
        "MPI's mpirun also passes SIGUSR1 and SIGUSR2 on to the ranks; MPICH's mpiexec does "
        "not, and ends; MPICH handles SIGUSR1 itself: use usr2 there), it makes every rank "
        "take part in a report (as at MPI_Finalize) at the next poll (pvar_mpi_report_poll). "
        "Before MPI_Init and after MPI_Finalize the signal has its usual effect. The "
        "handler only sets a flag; a rank whose program handles the signal itself keeps its "
        "handler. off (0, the default): no handler. Set through the environment "
        "(PVAR_MPI_REPORT_SIGNAL=off|usr1|usr2), the same on every process: the ranks agree on it "
        "at MPI_Init, so it is constant from then on (scope CONSTANT: tool writes are refused "
        "with MPI_T_ERR_CVAR_SET_NEVER)";
    sig.datatype = PVAR_TYPE_INT;
    sig.scope = PVAR_SCOPE_CONSTANT;
    sig.category = "pvar_mpi";
    sig.env = "PVAR_MPI_REPORT_SIGNAL";
    sig.enum_name = "pvar_mpi_signal";
    sig.enum_items = signals;
    sig.enum_len = 3;
    check(pvar_cvar_register(&sig, &pm_vars.report_signal), sig.name);

    pvar_cvar_info poll = {0};
    poll.name = "pvar_mpi_report_poll";
    poll.description =
        "N > 0: with pvar_mpi_report_signal, every N-th blocking collective call on "
        "MPI_COMM_WORLD the "
        "ranks agree (one integer MPI_Allreduce on a private communicator) whether any of them "
        "received the signal, and if so report. 0: never. Set through the environment "
        "(PVAR_MPI_REPORT_POLL), the same on every process: the ranks agree on it at MPI_Init, "
        "so it is constant from then on (scope CONSTANT: tool writes are refused with "
        "MPI_T_ERR_CVAR_SET_NEVER)";
    poll.datatype = PVAR_TYPE_INT;
    poll.scope = PVAR_SCOPE_CONSTANT;
    poll.category = "pvar_mpi";
    poll.env = "PVAR_MPI_REPORT_POLL";
    poll.default_int = 16;
    check(pvar_cvar_register(&poll, &pm_vars.report_poll), poll.name);

    static const pvar_enum_item time_items[] = {{"off", 0}, {"coll", 1}, {"all", 2}};
    pvar_cvar_info t = {0};
    t.name = "pvar_mpi_time";
    t.description = "what the TIMER variables time: coll (1, the default): blocking collective "
                    "calls (pvar_mpi_coll_time), whose microseconds dwarf the two clock reads a "
                    "timed call costs; all (2): also blocking point-to-point calls "
                    "(pvar_mpi_p2p_time) and MPI_Wait* (pvar_mpi_wait_time), about 13 ns more "
                    "per call, a few percent of a small shared-memory message; off (0): no clock "
                    "is read. Timers not selected stay 0. Set through the environment "
                    "(PVAR_MPI_TIME=off|coll|all or 0|1|2) and read at MPI_Init, so it is "
                    "constant from then on (scope CONSTANT: tool writes are refused with "
                    "MPI_T_ERR_CVAR_SET_NEVER)";
    t.datatype = PVAR_TYPE_INT;
    t.scope = PVAR_SCOPE_CONSTANT;
    t.category = "pvar_mpi";
    t.env = "PVAR_MPI_TIME";
    t.default_int = 1;
    t.enum_name = "pvar_mpi_time_mode";
    t.enum_items = time_items;
    t.enum_len = 3;
    check(pvar_cvar_register(&t, &pm_vars.time), t.name);
}

void pm_vars_register(int world_size) {
    register_categories();
    for (int b = 0; b < PM_BOUND_VARS; b++) {
        pvar_info i = info_of(&bound_defs[b], world_size);
        i.bind = PVAR_BIND_MPI_COMM;
        check(pvar_register_bound(&i, &pm_vars.bound[b]), i.name);
    }
    for (size_t u = 0; u < sizeof unbound_defs / sizeof unbound_defs[0]; u++) {
        pvar_info i = info_of(&unbound_defs[u].def, world_size);
        check(pvar_register(&i, unbound_defs[u].var), i.name);
    }
    register_cvars();
}
