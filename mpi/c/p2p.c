/*
 * p2p.c — point-to-point wrappers: blocking and nonblocking sends and
 * receives in every mode, MPI_Sendrecv(_replace), probes and matched
 * probes and receives, and the persistent MPI_*_init calls (their
 * MPI_Start is in completion.c).
 *
 * Per communicator: calls and bytes sent and received, and the time in
 * blocking calls; per destination (its MPI_COMM_WORLD rank): messages and
 * bytes sent; unbound: probe calls. Only calls that return MPI_SUCCESS
 * are recorded (the timers time every call).
 *
 * MPI_Mrecv and MPI_Imrecv name no communicator: the message handle of a
 * successful MPI_Mprobe / MPI_Improbe is remembered with its communicator
 * until the receive takes it.
 */
#include "record.h"

/* ---- sends ----------------------------------------------------------------- */

#define PM_BLOCKING_SEND(mode)                                                                 \
    int MPI_##mode(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,        \
                   MPI_Comm comm) {                                                             \
        pm_comm *c = pm_comm_of(comm);                                                          \
        pm_time_start(c, PM_P2P_TIME, 0);                                                       \
        int rc = PMPI_##mode(buf, count, datatype, dest, tag, comm);                            \
        pm_time_stop(c, PM_P2P_TIME, 0);                                                        \
        if (c != NULL && rc == MPI_SUCCESS)                                                     \
            pm_sent(c, dest, count, datatype);                                                  \
        return rc;                                                                              \
    }

#define PM_NONBLOCKING_SEND(mode)                                                              \
    int MPI_##mode(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,        \
                   MPI_Comm comm, MPI_Request *request) {                                       \
        pm_comm *c = pm_comm_of(comm);                                                          \
        int rc = PMPI_##mode(buf, count, datatype, dest, tag, comm, request);                   \
        if (c != NULL && rc == MPI_SUCCESS)                                                     \
            pm_sent(c, dest, count, datatype);                                                  \
        pm_request_started(rc, request);                                                        \
        return rc;                                                                              \
    }

#define PM_PERSISTENT_SEND(mode)                                                               \
    int MPI_##mode(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,        \
                   MPI_Comm comm, MPI_Request *request) {                                       \
        int rc = PMPI_##mode(buf, count, datatype, dest, tag, comm, request);                   \
        if (pm_comm_of(comm) != NULL && rc == MPI_SUCCESS)                                      \
            pm_persistent_add(*request, PM_OP_SEND, comm, dest,                                 \
                              dest == MPI_PROC_NULL ? 0 : pm_bytes(count, datatype));          \
        return rc;                                                                              \
    }

PM_BLOCKING_SEND(Send)
PM_BLOCKING_SEND(Bsend)
PM_BLOCKING_SEND(Ssend)
PM_BLOCKING_SEND(Rsend)
PM_NONBLOCKING_SEND(Isend)
PM_NONBLOCKING_SEND(Ibsend)
PM_NONBLOCKING_SEND(Issend)
PM_NONBLOCKING_SEND(Irsend)
PM_PERSISTENT_SEND(Send_init)
PM_PERSISTENT_SEND(Bsend_init)
PM_PERSISTENT_SEND(Ssend_init)
PM_PERSISTENT_SEND(Rsend_init)

/* ---- receives ---------------------------------------------------------------- */

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    MPI_Status own, *st = pm_status(c, status, &own);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, st);
    pm_time_stop(c, PM_P2P_TIME, 0);
    if (c != NULL && rc == MPI_SUCCESS)
        pm_received(c, st);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request) {
    pm_comm *c = pm_comm_of(comm);
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
    if (c != NULL && rc == MPI_SUCCESS)
        pm_posted(c, source, count, datatype);
    pm_request_started(rc, request);
    return rc;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request) {
    int rc = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
    if (pm_comm_of(comm) != NULL && rc == MPI_SUCCESS)
        pm_persistent_add(*request, PM_OP_RECV, comm, source,
                          source == MPI_PROC_NULL ? 0 : pm_bytes(count, datatype));
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    MPI_Status own, *st = pm_status(c, status, &own);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, st);
    pm_time_stop(c, PM_P2P_TIME, 0);
    if (c != NULL && rc == MPI_SUCCESS) {
        pm_sent(c, dest, sendcount, sendtype);
        pm_received(c, st);
    }
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    MPI_Status own, *st = pm_status(c, status, &own);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                   st);
    pm_time_stop(c, PM_P2P_TIME, 0);
    if (c != NULL && rc == MPI_SUCCESS) {
        pm_sent(c, dest, count, datatype);
        pm_received(c, st);
    }
    return rc;
}

#if MPI_VERSION >= 4
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request *request) {
    pm_comm *c = pm_comm_of(comm);
    int rc = PMPI_Isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, request);
    if (c != NULL && rc == MPI_SUCCESS) {
        pm_sent(c, dest, sendcount, sendtype);
        pm_posted(c, source, recvcount, recvtype);
    }
    pm_request_started(rc, request);
    return rc;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request) {
    pm_comm *c = pm_comm_of(comm);
    int rc = PMPI_Isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                    request);
    if (c != NULL && rc == MPI_SUCCESS) {
        pm_sent(c, dest, count, datatype);
        pm_posted(c, source, count, datatype);
    }
    pm_request_started(rc, request);
    return rc;
}
#endif

/* ---- probes and matched receives ------------------------------------------------ */

/* Matched messages not yet received: message handle -> communicator. */
static pm_table messages = PM_TABLE_INIT;

static void message_matched(MPI_Message message, MPI_Comm comm) {
    if (message == MPI_MESSAGE_NO_PROC || message == MPI_MESSAGE_NULL)
        return;
    uint64_t key = pm_message_key(message);
    pthread_mutex_lock(&messages.lock);
    pm_table_take(&messages, key); /* one left by a receive this layer did not see */
    pm_table_put(&messages, key, (void *)(uintptr_t)pm_comm_key(comm));
    pthread_mutex_unlock(&messages.lock);
}

/* The entry of the communicator `message` was matched on (made by the
 * probe; none if the communicator was freed since), forgetting the message
 * before the receive frees its handle; or NULL. */
static pm_comm *message_received(MPI_Message message) {
    if (!PM_ON || atomic_load_explicit(&messages.live, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&messages.lock);
    uint64_t key = (uintptr_t)pm_table_take(&messages, pm_message_key(message));
    pthread_mutex_unlock(&messages.lock);
    MPI_Comm comm;
    memcpy(&comm, &key, sizeof comm); /* the bits pm_comm_key took */
    return key != 0 ? pm_comm_entry(comm, 0) : NULL;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    pm_count(probe_calls);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Probe(source, tag, comm, status);
    pm_time_stop(c, PM_P2P_TIME, 0);
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    pm_count(probe_calls);
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    pm_count(probe_calls);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Mprobe(source, tag, comm, message, status);
    pm_time_stop(c, PM_P2P_TIME, 0);
    if (c != NULL && rc == MPI_SUCCESS)
        message_matched(*message, comm);
    return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status) {
    pm_comm *c = pm_comm_of(comm);
    pm_count(probe_calls);
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    if (c != NULL && rc == MPI_SUCCESS && *flag)
        message_matched(*message, comm);
    return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status) {
    pm_comm *c = message_received(*message);
    MPI_Status own, *st = pm_status(c, status, &own);
    pm_time_start(c, PM_P2P_TIME, 0);
    int rc = PMPI_Mrecv(buf, count, datatype, message, st);
    pm_time_stop(c, PM_P2P_TIME, 0);
    if (c != NULL && rc == MPI_SUCCESS)
        pm_received(c, st);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request) {
    pm_comm *c = message_received(*message);
    int rc = PMPI_Imrecv(buf, count, datatype, message, request);
    if (c != NULL && rc == MPI_SUCCESS)
        pm_received_bytes(c, pm_bytes(count, datatype));
    pm_request_started(rc, request);
    return rc;
}
