/*
 * collectives.c — collective wrappers, blocking and nonblocking: per
 * communicator and kind (enum pm_kind, the arrays' element), the calls,
 * the bytes this process contributes and (blocking calls) the time.
 *
 * Bytes are the send buffer the call describes at this process: the
 * root's whole buffer for bcast, scatter and scatterv and nothing at the
 * other ranks; nothing at the receiving group's processes of an
 * intercommunicator reduce or gather (MPI_ROOT, MPI_PROC_NULL); this
 * process's block of the receive buffer with MPI_IN_PLACE; 0 for
 * barrier. Bytes count what the program hands over, not what the
 * library's algorithm moves.
 *
 * A nonblocking collective counts in its kind's element when it starts
 * and starts a request; its time is in the MPI_Wait* that completes it.
 * Every blocking collective on MPI_COMM_WORLD also goes to
 * pm_world_collective() (reports every N-th, and on demand): a report
 * there may wait for the other ranks, which a blocking collective may do
 * anyway but the start of a nonblocking one must not (a rank could then
 * hang before a send another rank needs). MPI_Ialltoallw and the nonblocking
 * neighbourhood collectives are wrapped only to count their requests.
 */
#include "record.h"

static void collective(const pm_comm *c, enum pm_kind kind, uint64_t bytes, int blocking) {
    pm_add(c, PM_COLL_CALLS, kind, 1);
    pm_add(c, PM_COLL_BYTES, kind, bytes);
    if (blocking && c->world)
        pm_world_collective();
}

/* The body of a blocking collective wrapper: `call` is the PMPI call,
 * `bytes` an expression evaluated only once the call succeeded. */
#define PM_BLOCKING(kind, call, bytes)                                                          \
    pm_comm *c = pm_comm_of(comm);                                                              \
    pm_time_start(c, PM_COLL_TIME, kind);                                                       \
    int rc = call;                                                                              \
    pm_time_stop(c, PM_COLL_TIME, kind);                                                        \
    if (c != NULL && rc == MPI_SUCCESS)                                                         \
        collective(c, kind, bytes, 1);                                                          \
    return rc

#define PM_NONBLOCKING(kind, call, bytes)                                                       \
    pm_comm *c = pm_comm_of(comm);                                                              \
    int rc = call;                                                                              \
    if (c != NULL && rc == MPI_SUCCESS)                                                         \
        collective(c, kind, bytes, 0);                                                          \
    pm_request_started(rc, request);                                                            \
    return rc

/* ---- bytes per kind --------------------------------------------------------- */

/* The root of a rooted collective: its rank, or MPI_ROOT in the root's
 * group of an intercommunicator. */
static int is_root(const pm_comm *c, int root) {
    return c->inter ? root == MPI_ROOT : root == c->rank;
}

/* Whether this process sends data towards the root (reduce, gather). */
static int towards_root(const pm_comm *c, int root) {
    return !c->inter || (root != MPI_ROOT && root != MPI_PROC_NULL);
}

static MPI_Count sum(const int *counts, int n) {
    MPI_Count s = 0;
    for (int i = 0; i < n; i++)
        s += counts[i];
    return s;
}

static uint64_t bcast_bytes(const pm_comm *c, int count, MPI_Datatype type, int root) {
    return is_root(c, root) ? pm_bytes(count, type) : 0;
}

static uint64_t reduce_bytes(const pm_comm *c, int count, MPI_Datatype type, int root) {
    return towards_root(c, root) ? pm_bytes(count, type) : 0;
}

static uint64_t gather_bytes(const pm_comm *c, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, MPI_Count recvcount, MPI_Datatype recvtype,
                             int root) {
    if (!towards_root(c, root))
        return 0;
    return sendbuf == MPI_IN_PLACE ? pm_bytes(recvcount, recvtype) : pm_bytes(sendcount, sendtype);
}

static uint64_t allgather_bytes(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                MPI_Count recvcount, MPI_Datatype recvtype) {
    return sendbuf == MPI_IN_PLACE ? pm_bytes(recvcount, recvtype) : pm_bytes(sendcount, sendtype);
}

static uint64_t scatter_bytes(const pm_comm *c, int sendcount, MPI_Datatype sendtype, int root) {
    return is_root(c, root) ? pm_bytes((MPI_Count)sendcount * c->peers, sendtype) : 0;
}

static uint64_t scatterv_bytes(const pm_comm *c, const int *sendcounts, MPI_Datatype sendtype,
                               int root) {
    return is_root(c, root) ? pm_bytes(sum(sendcounts, c->peers), sendtype) : 0;
}

static uint64_t alltoall_bytes(const pm_comm *c, const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
    return sendbuf == MPI_IN_PLACE ? pm_bytes((MPI_Count)recvcount * c->peers, recvtype)
                                   : pm_bytes((MPI_Count)sendcount * c->peers, sendtype);
}

static uint64_t alltoallv_bytes(const pm_comm *c, const void *sendbuf, const int *sendcounts,
                                MPI_Datatype sendtype, const int *recvcounts,
                                MPI_Datatype recvtype) {
    return sendbuf == MPI_IN_PLACE ? pm_bytes(sum(recvcounts, c->peers), recvtype)
                                   : pm_bytes(sum(sendcounts, c->peers), sendtype);
}

/* ---- blocking ------------------------------------------------------------------ */

int MPI_Barrier(MPI_Comm comm) {
    PM_BLOCKING(PM_BARRIER, PMPI_Barrier(comm), 0);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    PM_BLOCKING(PM_BCAST, PMPI_Bcast(buffer, count, datatype, root, comm),
                bcast_bytes(c, count, datatype, root));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
    PM_BLOCKING(PM_REDUCE, PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm),
                reduce_bytes(c, count, datatype, root));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
    PM_BLOCKING(PM_ALLREDUCE, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm),
                pm_bytes(count, datatype));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    PM_BLOCKING(PM_GATHER,
                PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm),
                gather_bytes(c, sendbuf, sendcount, sendtype, recvcount, recvtype, root));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
    PM_BLOCKING(PM_GATHERV,
                PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, root, comm),
                gather_bytes(c, sendbuf, sendcount, sendtype,
                             sendbuf == MPI_IN_PLACE ? recvcounts[c->rank] : 0, recvtype, root));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    PM_BLOCKING(PM_ALLGATHER,
                PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
    PM_BLOCKING(PM_ALLGATHERV,
                PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, comm),
                allgather_bytes(sendbuf, sendcount, sendtype,
                                sendbuf == MPI_IN_PLACE ? recvcounts[c->rank] : 0, recvtype));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    PM_BLOCKING(PM_SCATTER,
                PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm),
                scatter_bytes(c, sendcount, sendtype, root));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
    PM_BLOCKING(PM_SCATTERV,
                PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                              recvtype, root, comm),
                scatterv_bytes(c, sendcounts, sendtype, root));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    PM_BLOCKING(PM_ALLTOALL,
                PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                alltoall_bytes(c, sendbuf, sendcount, sendtype, recvcount, recvtype));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    PM_BLOCKING(PM_ALLTOALLV,
                PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm),
                alltoallv_bytes(c, sendbuf, sendcounts, sendtype, recvcounts, recvtype));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    PM_BLOCKING(PM_REDUCE_SCATTER,
                PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm),
                pm_bytes(sum(recvcounts, c->size), datatype));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    PM_BLOCKING(PM_REDUCE_SCATTER,
                PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm),
                pm_bytes((MPI_Count)recvcount * c->size, datatype));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
    PM_BLOCKING(PM_SCAN, PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm),
                pm_bytes(count, datatype));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
    PM_BLOCKING(PM_EXSCAN, PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm),
                pm_bytes(count, datatype));
}

/* ---- nonblocking ----------------------------------------------------------------- */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_BARRIER, PMPI_Ibarrier(comm, request), 0);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request) {
    PM_NONBLOCKING(PM_BCAST, PMPI_Ibcast(buffer, count, datatype, root, comm, request),
                   bcast_bytes(c, count, datatype, root));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_REDUCE,
                   PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request),
                   reduce_bytes(c, count, datatype, root));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_ALLREDUCE,
                   PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request),
                   pm_bytes(count, datatype));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
    PM_NONBLOCKING(PM_GATHER,
                   PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                comm, request),
                   gather_bytes(c, sendbuf, sendcount, sendtype, recvcount, recvtype, root));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_GATHERV,
                   PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, root, comm, request),
                   gather_bytes(c, sendbuf, sendcount, sendtype,
                                sendbuf == MPI_IN_PLACE ? recvcounts[c->rank] : 0, recvtype,
                                root));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_ALLGATHER,
                   PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm, request),
                   allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_ALLGATHERV,
                   PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, request),
                   allgather_bytes(sendbuf, sendcount, sendtype,
                                   sendbuf == MPI_IN_PLACE ? recvcounts[c->rank] : 0,
                                   recvtype));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
    PM_NONBLOCKING(PM_SCATTER,
                   PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 root, comm, request),
                   scatter_bytes(c, sendcount, sendtype, root));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_SCATTERV,
                   PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                  recvtype, root, comm, request),
                   scatterv_bytes(c, sendcounts, sendtype, root));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_ALLTOALL,
                   PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, request),
                   alltoall_bytes(c, sendbuf, sendcount, sendtype, recvcount, recvtype));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
    PM_NONBLOCKING(PM_ALLTOALLV,
                   PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, request),
                   alltoallv_bytes(c, sendbuf, sendcounts, sendtype, recvcounts, recvtype));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_REDUCE_SCATTER,
                   PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                        request),
                   pm_bytes(sum(recvcounts, c->size), datatype));
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request) {
    PM_NONBLOCKING(PM_REDUCE_SCATTER,
                   PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                              request),
                   pm_bytes((MPI_Count)recvcount * c->size, datatype));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_SCAN, PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request),
                   pm_bytes(count, datatype));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request) {
    PM_NONBLOCKING(PM_EXSCAN, PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request),
                   pm_bytes(count, datatype));
}

/* ---- requests only ------------------------------------------------------------------ */

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request) {
    int rc = PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, request);
    pm_request_started(rc, request);
    return rc;
}

/* MPI_Ineighbor_allgather and _alltoall: (sendbuf, sendcount, sendtype,
 * recvbuf, recvcount, recvtype, comm, request). */
#define PM_NEIGHBOR(name)                                                                       \
    int MPI_##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,    \
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) { \
        int rc = PMPI_##name(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,  \
                             request);                                                          \
        pm_request_started(rc, request);                                                        \
        return rc;                                                                              \
    }
PM_NEIGHBOR(Ineighbor_allgather)
PM_NEIGHBOR(Ineighbor_alltoall)

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    int rc = PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm, request);
    pm_request_started(rc, request);
    return rc;
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request) {
    int rc = PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm, request);
    pm_request_started(rc, request);
    return rc;
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request) {
    int rc = PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                      recvcounts, rdispls, recvtypes, comm, request);
    pm_request_started(rc, request);
    return rc;
}
