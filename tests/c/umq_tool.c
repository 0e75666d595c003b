/*
 * The unexpected-message-queue tool example of the MPI 4.1 performance
 * variable section, adapted to run without an MPI library:
 *
 *  - a small C "MPI library" component (PMPI_Init, PMPI_Recv, PMPI_Finalize
 *    and a message-arrival hook below) registers the LEVEL variable
 *    MPI_T_UMQ_LENGTH bound to communicators through pvar.h and maintains
 *    one instance per communicator (MPI_COMM_WORLD and MPI_COMM_SELF,
 *    registered under their MPI 5.0 ABI handle values 0x101 and 0x102);
 *  - the tool part (MPI_Init, MPI_Recv, MPI_Finalize) is the example's code,
 *    with two adaptations: LEVEL requires an unsigned datatype, so the
 *    datatype assertion is `datatype == MPI_UNSIGNED` and the value read is
 *    `unsigned`; and LEVEL variables are continuous in this engine, so the
 *    tool starts the handle only if get_info reported continuous == 0.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

typedef struct MPI_Status {
    int MPI_SOURCE, MPI_TAG, MPI_ERROR;
} MPI_Status;

/* ===================== the "MPI library" side ======================== */

static pvar_bound umq;
static pvar_var umq_world, umq_self;

static pvar_var umq_of(MPI_Comm comm) {
    return comm == MPI_COMM_WORLD ? umq_world : comm == MPI_COMM_SELF ? umq_self : NULL;
}

int PMPI_Init(int *argc, char ***argv) {
    pvar_info i;
    (void)argc, (void)argv;
    memset(&i, 0, sizeof i);
    i.name = "MPI_T_UMQ_LENGTH";
    i.description = "length of the unexpected message queue of a communicator";
    i.var_class = PVAR_CLASS_LEVEL;
    i.datatype = PVAR_TYPE_UNSIGNED;
    i.bind = PVAR_BIND_MPI_COMM;
    if (pvar_register_bound(&i, &umq) != 0) return 1;
    /* Instances keyed by the communicators' handle values. */
    if (pvar_bound_create(umq, (uint64_t)(uintptr_t)MPI_COMM_WORLD, 1, &umq_world) != 0) return 1;
    if (pvar_bound_create(umq, (uint64_t)(uintptr_t)MPI_COMM_SELF, 1, &umq_self) != 0) return 1;
    return MPI_SUCCESS;
}

/* A message arrives before its receive is posted. */
static void message_arrives(MPI_Comm comm) { pvar_inc(umq_of(comm)); }

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Status *status) {
    (void)buf, (void)count, (void)datatype;
    pvar_dec(umq_of(comm)); /* matched from the unexpected queue */
    if (status) status->MPI_SOURCE = source, status->MPI_TAG = tag, status->MPI_ERROR = 0;
    return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
    pvar_bound_drop(umq, (uint64_t)(uintptr_t)MPI_COMM_WORLD);
    pvar_bound_drop(umq, (uint64_t)(uintptr_t)MPI_COMM_SELF);
    pvar_var_free(umq_world);
    pvar_var_free(umq_self);
    pvar_bound_free(umq);
    return MPI_SUCCESS;
}

/* ===================== the tool (the standard's example) ============= */

/* Global variables for the tool */
static MPI_T_pvar_session pe_session;
static MPI_T_pvar_handle handle;
static int long_queue_receives; /* what the tool found */
static unsigned last_value;

int MPI_Init(int *argc, char ***argv) {
    int err, num, i, index, namelen, verbosity;
    int var_class, bind, threadsup;
    int readonly, continuous, atomic, count;
    char name[18];

    MPI_Comm comm;
    MPI_Datatype datatype;
    MPI_T_enum enumtype;

    err = PMPI_Init(argc, argv);
    if (err != MPI_SUCCESS) return err;

    err = PMPI_T_init_thread(MPI_THREAD_SINGLE, &threadsup);
    if (err != MPI_SUCCESS) return err;

    err = PMPI_T_pvar_get_num(&num);
    if (err != MPI_SUCCESS) return err;

    index = -1;
    i = 0;
    while ((i < num) && (index < 0) && (err == MPI_SUCCESS)) {
        /* Pass a buffer that is at least one character longer than */
        /* the name of the variable being searched for to avoid */
        /* finding variables that have a name that has a prefix */
        /* equal to the name of the variable being searched. */
        namelen = 18;
        err = PMPI_T_pvar_get_info(i, name, &namelen, &verbosity, &var_class, &datatype,
                                   &enumtype, NULL, NULL, &bind, &readonly, &continuous,
                                   &atomic);
        if (strcmp(name, "MPI_T_UMQ_LENGTH") == 0) index = i;
        i++;
    }
    if (err != MPI_SUCCESS) return err;

    /* this could be handled in a more flexible way for a generic tool */
    assert(index >= 0);
    assert(var_class == MPI_T_PVAR_CLASS_LEVEL);
    assert(datatype == MPI_UNSIGNED); /* adapted: LEVEL is unsigned */
    assert(bind == MPI_T_BIND_MPI_COMM);

    /* Create a session */
    err = PMPI_T_pvar_session_create(&pe_session);
    if (err != MPI_SUCCESS) return err;

    /* Get a handle and bind to MPI_COMM_WORLD */
    comm = MPI_COMM_WORLD;
    err = PMPI_T_pvar_handle_alloc(pe_session, index, &comm, &handle, &count);
    if (err != MPI_SUCCESS) return err;

    /* this could be handled in a more flexible way for a generic tool */
    assert(count == 1);

    /* Start variable (adapted: only if it is not continuous) */
    if (!continuous) {
        err = PMPI_T_pvar_start(pe_session, handle);
        if (err != MPI_SUCCESS) return err;
    }

    return MPI_SUCCESS;
}

#define THRESHOLD 5

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    unsigned value; /* adapted: the variable is MPI_UNSIGNED */
    int err;

    if (comm == MPI_COMM_WORLD) {
        err = PMPI_T_pvar_read(pe_session, handle, &value);
        last_value = value;
        if ((err == MPI_SUCCESS) && (value > THRESHOLD)) {
            /* tool identified receive called with long UMQ */
            /* execute tool functionality, */
            /* e.g., gather and print call stack */
            long_queue_receives++;
        }
    }

    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Finalize(void) {
    int err;

    err = PMPI_T_pvar_handle_free(pe_session, &handle);
    CHECK_RC(err, MPI_SUCCESS);
    CHECK(handle == MPI_T_PVAR_HANDLE_NULL);
    err = PMPI_T_pvar_session_free(&pe_session);
    CHECK_RC(err, MPI_SUCCESS);
    CHECK(pe_session == MPI_T_PVAR_SESSION_NULL);
    err = PMPI_T_finalize();
    CHECK_RC(err, MPI_SUCCESS);
    return PMPI_Finalize();
}

/* ===================== the application =============================== */

int main(int argc, char **argv) {
    int buf = 0, k;
    MPI_Status st;

    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);

    /* 8 messages arrive early on MPI_COMM_WORLD, 20 on MPI_COMM_SELF. */
    for (k = 0; k < 8; k++) message_arrives(MPI_COMM_WORLD);
    for (k = 0; k < 20; k++) message_arrives(MPI_COMM_SELF);

    /* Receiving them: the queue is 8, 7, ..., 1 at the reads, so the tool
     * flags the receives that see 8, 7 and 6 (> THRESHOLD = 5). */
    for (k = 0; k < 8; k++) {
        MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        CHECK(last_value == (unsigned)(8 - k));
    }
    CHECK(long_queue_receives == 3);
    /* Receives on MPI_COMM_SELF are not watched and do not change WORLD's. */
    for (k = 0; k < 20; k++) MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &st);
    CHECK(long_queue_receives == 3);
    CHECK(pvar_get_at(umq_world, 0) == 0 && pvar_get_at(umq_self, 0) == 0);

    /* The same through the MPI_T_ names (not the PMPI_T_ ones). */
    {
        unsigned v = 99;
        message_arrives(MPI_COMM_WORLD);
        CHECK_RC(MPI_T_pvar_read(pe_session, handle, &v), MPI_SUCCESS);
        CHECK(v == 1);
        MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
    }

    MPI_Finalize();
    /* After the last MPI_T_finalize the interface is no longer initialised. */
    {
        int n;
        CHECK_RC(PMPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    }
    return summary("umq_tool");
}
