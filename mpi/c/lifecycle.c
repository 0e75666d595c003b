/*
 * lifecycle.c — MPI_Init, MPI_Init_thread and MPI_Finalize, and the
 * cross-rank report.
 *
 * After PMPI_Init*: the variables, control variables and categories
 * (vars.c), the entries of MPI_COMM_WORLD and MPI_COMM_SELF (comms.c), a
 * private duplicate of MPI_COMM_WORLD for the report's own collectives
 * (never recorded: they call PMPI_ directly), and the report collector
 * (mpi/src/report.rs).
 *
 * A report: rank 0 broadcasts what it is to write (its pvar_mpi_report
 * and pvar_mpi_report_json: only rank 0's values count, so ranks never
 * disagree on whether to take part); if anything, each rank makes its
 * partial (its variables' statistics with its communicators' labels: a
 * size that does not grow with the number of ranks) and the partials are
 * reduced to rank 0 along a binomial tree (mpi/src/report.rs drives it;
 * the callbacks below move the bytes with PMPI_Send / PMPI_Mprobe +
 * PMPI_Mrecv on the private communicator, whose errors return instead of
 * aborting); rank 0 writes the text to its stderr and the JSON file
 * (whole, renamed into place). No rank ever holds more than its own
 * partial and one child's. Made before PMPI_Finalize, after
 * every pvar_mpi_report_every-th blocking collective on MPI_COMM_WORLD
 * (that setting must be equal on all ranks: each decides alone), and on
 * demand. Only blocking collectives count: a report may wait for the other
 * ranks, which a blocking collective may do anyway, but the start of a
 * nonblocking one must not.
 *
 * On demand: a report is collective, and a signal reaches one rank at an
 * arbitrary point of its run, so the signal handler only sets a flag.
 * Every pvar_mpi_report_poll-th blocking collective on MPI_COMM_WORLD (the
 * same call on every rank: collectives on a communicator are ordered) the ranks
 * combine their flags with an MPI_Allreduce(MAX) on the private
 * communicator, and report if any was set. At MPI_Init the ranks agree on
 * the signal and the poll interval with one allreduce: ranks that would
 * poll at different calls would deadlock, so a disagreement turns the
 * feature off everywhere, with a note from rank 0.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "interpose.h"

/* The report glue (mpi/src/report.rs). */
typedef int (*pvar_mpi_send_fn)(void *ctx, int to, const uint8_t *buf, size_t len);
typedef int (*pvar_mpi_recv_fn)(void *ctx, int from, uint8_t **buf, size_t *len);
int pvar_mpi_report_init(void);
int pvar_mpi_report_reduce(int rank, int size, const uint64_t *objects, const char *const *labels,
                           size_t nlabels, pvar_mpi_send_fn send, pvar_mpi_recv_fn recv, void *ctx,
                           int text_fd, const char *json_path);

static MPI_Comm report_comm = MPI_COMM_NULL;
static int job_rank, job_size;
/* Blocking collectives on MPI_COMM_WORLD so far (they are ordered: no two
 * threads call one at the same time). */
static _Atomic uint64_t world_collectives;

int pm_timing;

/* ---- reports on demand ------------------------------------------------------ */

/* Set by the handler, taken at the next poll. A lock-free atomic: its
 * store is async-signal-safe. */
static atomic_int report_asked;
static int report_signal;    /* the signal handled here; 0: none */
static uint64_t report_poll; /* poll every report_poll-th world collective; 0: never */
static struct sigaction report_old;

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the handler's flag must be lock-free");

static void on_report_signal(int sig) {
    (void)sig;
    atomic_store_explicit(&report_asked, 1, memory_order_relaxed);
}

/* Called on every rank at MPI_Init, after report_comm exists. */
static void on_demand_start(void) {
    int64_t sig = 0, poll = 0;
    if (pm_vars.report_signal != NULL) {
        sig = pvar_cvar_get_int(pm_vars.report_signal);
        pvar_cvar_freeze(pm_vars.report_signal, 1);
    }
    if (pm_vars.report_poll != NULL) {
        poll = pvar_cvar_get_int(pm_vars.report_poll);
        pvar_cvar_freeze(pm_vars.report_poll, 1);
    }
    /* The compiled-out build never polls: it takes part in the agreement
     * with "off" (so a job that mixes builds is told, rather than hangs),
     * and installs no handler (a signal keeps the effect the program
     * expects). */
    if (!PM_ON)
        sig = poll = 0;
    if (report_comm == MPI_COMM_NULL)
        return; /* PMPI_Comm_dup of MPI_COMM_WORLD failed: it is collective,
                   so it failed on every rank */
    /* The highest and (negated) lowest of each setting over the ranks. */
    int64_t mine[4] = {sig, poll, -sig, -poll}, all[4];
    if (PMPI_Allreduce(mine, all, 4, MPI_INT64_T, MPI_MAX, report_comm) != MPI_SUCCESS)
        return;
    /* The poll interval matters only where a signal is set. */
    if (all[0] != -all[2] || (all[0] > 0 && all[1] != -all[3])) {
        if (job_rank == 0)
            fprintf(stderr,
                    "pvar_mpi: no reports on demand: the ranks disagree on "
                    "pvar_mpi_report_signal (%lld..%lld) or pvar_mpi_report_poll (%lld..%lld)\n",
                    (long long)-all[2], (long long)all[0], (long long)-all[3],
                    (long long)all[1]);
        return;
    }
    if (sig <= 0 || poll <= 0)
        return;
    /* Every rank polls from here on, whatever becomes of its handler. */
    report_poll = (uint64_t)poll;
    struct sigaction now;
    if (sigaction((int)sig, NULL, &now) != 0)
        return;
    if ((now.sa_flags & SA_SIGINFO) || (now.sa_handler != SIG_DFL && now.sa_handler != SIG_IGN)) {
        fprintf(stderr,
                "pvar_mpi: rank %d: the program handles signal %lld itself: this rank "
                "keeps its handler (a signal to another rank still brings a report)\n",
                job_rank, (long long)sig);
        return;
    }
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_handler = on_report_signal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESTART; /* the program's interrupted system calls go on */
    if (sigaction((int)sig, &ours, &report_old) == 0)
        report_signal = (int)sig;
}

/* At MPI_Finalize: the program's disposition of the signal back, unless
 * the program has replaced ours since MPI_Init (then its own stays). */
static void on_demand_stop(void) {
    struct sigaction now;
    if (report_signal != 0 && sigaction(report_signal, NULL, &now) == 0 &&
        !(now.sa_flags & SA_SIGINFO) && now.sa_handler == on_report_signal)
        sigaction(report_signal, &report_old, NULL);
    report_signal = 0;
    report_poll = 0;
}

static void start(void) {
    if (pm_running())
        return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &job_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &job_size);
    pm_vars_register(job_size);
    int64_t mode = pm_vars.time != NULL ? pvar_cvar_get_int(pm_vars.time) : PM_TIME_COLL;
    pm_timing = mode <= PM_TIME_OFF ? PM_TIME_OFF : mode >= PM_TIME_ALL ? PM_TIME_ALL : PM_TIME_COLL;
    if (pm_vars.time != NULL)
        pvar_cvar_freeze(pm_vars.time, 1);
    pm_comms_start();
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &report_comm) != MPI_SUCCESS)
        report_comm = MPI_COMM_NULL;
    else
        PMPI_Comm_set_errhandler(report_comm, MPI_ERRORS_RETURN);
    pvar_mpi_report_init();
    on_demand_start();
    pm_running_set(1);
}

/* ---- the report ------------------------------------------------------------ */

/* The tag of the report's messages on the private communicator. */
#define REPORT_TAG 0x7076

/* Sends a partial to rank `to`. One that does not fit an int count goes
 * as an empty message (its parent, which waits for one, reports the rank
 * as missing). */
static int report_send(void *ctx, int to, const uint8_t *buf, size_t len) {
    (void)ctx;
    int too_big = len > (size_t)INT_MAX;
    int rc = PMPI_Send(too_big ? NULL : buf, too_big ? 0 : (int)len, MPI_BYTE, to, REPORT_TAG,
                       report_comm);
    return rc != MPI_SUCCESS || too_big;
}

/* Receives rank `from`'s partial into a malloc'd buffer. The message is
 * matched first (PMPI_Mprobe): without memory for it, it is still
 * received (into nothing: truncated), so that nothing is left pending. */
static int report_recv(void *ctx, int from, uint8_t **buf, size_t *len) {
    (void)ctx;
    *buf = NULL;
    *len = 0;
    MPI_Message msg;
    MPI_Status st;
    int count = 0;
    if (PMPI_Mprobe(from, REPORT_TAG, report_comm, &msg, &st) != MPI_SUCCESS ||
        PMPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0)
        return -1;
    uint8_t *b = malloc((size_t)count + 1);
    int rc = PMPI_Mrecv(b, b != NULL ? count : 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (b == NULL || rc != MPI_SUCCESS) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = (size_t)count;
    return 0;
}

static void report(void) {
    if (report_comm == MPI_COMM_NULL)
        return;
    /* What rank 0 writes: text to stderr, JSON into `path`. */
    char path[4096] = "";
    int want[2] = {0, 0};
    if (job_rank == 0) {
        int len = (int)sizeof path;
        want[0] = pvar_cvar_get_int(pm_vars.report) == 1;
        want[1] = pvar_cvar_get_string(pm_vars.report_json, path, &len) == 0 && path[0] != '\0';
    }
    if (PMPI_Bcast(want, 2, MPI_INT, 0, report_comm) != MPI_SUCCESS || (!want[0] && !want[1]))
        return;

    uint64_t *objects;
    char **labels;
    size_t n = pm_comm_labels(&objects, &labels);
    pvar_mpi_report_reduce(job_rank, job_size, objects, (const char *const *)labels, n,
                           report_send, report_recv, NULL, want[0] ? 2 : -1,
                           want[1] ? path : NULL);
    pm_comm_labels_free(objects, labels, n);
}

void pm_world_collective(void) {
    uint64_t n = atomic_load_explicit(&world_collectives, memory_order_relaxed) + 1;
    atomic_store_explicit(&world_collectives, n, memory_order_relaxed);
    int64_t every = pvar_cvar_get_int(pm_vars.report_every);
    int due = every > 0 && n % (uint64_t)every == 0;
    if (report_poll > 0 && n % report_poll == 0) {
        /* Taken before the allreduce: a signal after it is for the next poll. */
        int asked = atomic_exchange_explicit(&report_asked, 0, memory_order_relaxed), any = 0;
        if (PMPI_Allreduce(&asked, &any, 1, MPI_INT, MPI_MAX, report_comm) == MPI_SUCCESS && any)
            due = 1;
    }
    if (due)
        report();
}

/* ---- wrappers ------------------------------------------------------------------ */

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

int MPI_Finalize(void) {
    if (pm_running()) {
        report();
        on_demand_stop();
        pm_running_set(0);
        if (report_comm != MPI_COMM_NULL)
            PMPI_Comm_free(&report_comm);
        pm_comms_stop();
    }
    return PMPI_Finalize();
}
