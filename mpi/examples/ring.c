/* ring: point-to-point and collective traffic whose every call the program
 * counts itself, so that a test can compare the pvar interposer's report
 * against it exactly.
 *
 * Per iteration:
 *   - a ring over MPI_COMM_WORLD with MPI_Sendrecv,
 *   - the same ring with MPI_Irecv + MPI_Isend + MPI_Waitall,
 *   - a 1-D halo exchange (non-periodic: left and right neighbours,
 *     nonblocking, MPI_Waitall) on a duplicate of MPI_COMM_WORLD,
 *   - a ring with persistent requests (MPI_Send_init / MPI_Recv_init once,
 *     MPI_Startall + MPI_Waitall every iteration) on MPI_COMM_WORLD,
 *   - a ring with MPI_Sendrecv on a communicator split by rank parity,
 *   - MPI_Allreduce on MPI_COMM_WORLD and on the split communicator,
 *     MPI_Bcast (root 0) on the duplicate, MPI_Barrier on MPI_COMM_WORLD.
 * Once: MPI_Probe + MPI_Recv, a blocking MPI_Recv with a buffer larger than
 * the message (the status says how much arrived), and an MPI_Test polling
 * loop.
 *
 * Usage: ring [-i ITERS] [-n COUNT] [--hold FILE] [--until-report FILE]
 *             [--ibarrier-send] [--free-comms]
 *   ITERS   iterations (default 10)
 *   COUNT   ints per ring message and doubles per halo (default 256)
 *   --hold FILE   before MPI_Finalize, print "HOLD rank=<r> pid=<pid>" and
 *                 wait (polling, at most 120 s) until FILE exists
 *   --until-report FILE   after the COUNTED lines, call MPI_Allreduce on
 *                 MPI_COMM_WORLD until FILE exists on rank 0 (a report on
 *                 demand wrote it; at most 120 s); after the first
 *                 WARMUP_ALLREDUCES calls print "WAITING rank=<r>
 *                 pid=<pid>" (a report before that line came without being
 *                 asked for); at the end rename FILE to FILE.on-demand
 *                 (rank 0) and print "WAITED rank=<r> allreduces=<calls in
 *                 the loop>"
 *   --ibarrier-send   before the COUNTED lines: rank 0 starts
 *                 MPI_Ibarrier on MPI_COMM_WORLD, then sends rank 1 a
 *                 message that rank 1 receives before it starts its own
 *                 MPI_Ibarrier (valid MPI: starting a nonblocking
 *                 collective must not wait for other ranks)
 *   --free-comms  free the duplicate and the split communicator before
 *                 MPI_Finalize (by default they stay alive, so that their
 *                 variables are in the report taken at MPI_Finalize)
 *
 * Output (stdout, one write per rank):
 *   COUNTED rank=<r> comm=<tag> size=<n> members=<world ranks>
 *           handle=<bits of the handle> send_calls= send_bytes= recv_calls= recv_bytes=
 *           coll_calls=<15 values> coll_bytes=<15 values>
 *   COUNTED rank=<r> comm=* wait_calls= test_calls= probe_calls=
 *           peer_send_msgs=<per world rank> peer_send_bytes=<per world rank>
 *           requests_max=<most requests this rank had outstanding at once>
 * with <tag> one of world, dup, split. The counting rules (what the
 * interposer is expected to count) are those of the count_* helpers below.
 * Exit status 0 when every received value was the expected one.
 */
#define EXAMPLE_NAME "ring"
#include "example_common.h"
#include <time.h>

/* What this rank did on each communicator is a struct counted; what it
 * did regardless of communicator: */
static struct rank_counts all;
static int failures;

static long long type_bytes(int count, MPI_Datatype t)
{
    int sz = 0;
    CHECK(MPI_Type_size(t, &sz));
    return (long long)count * sz;
}

/* Counting rules. A send (blocking, nonblocking, the send half of a
 * sendrecv, each start of a persistent send) is one send call of
 * count x type size bytes and one message to the destination's world
 * rank. A receive is one receive call: blocking receives count the bytes
 * that arrived (status), nonblocking and persistent ones the bytes posted.
 * MPI_Send_init / MPI_Recv_init themselves count nothing. Every MPI_Wait*
 * call is one wait call, every MPI_Test* call one test call, every
 * MPI_Probe / MPI_Iprobe call one probe call. */
static void count_send(struct counted *c, int dest, long long bytes)
{
    c->send_calls++;
    c->send_bytes += bytes;
    all.peer_msgs[c->world_of[dest]]++;
    all.peer_bytes[c->world_of[dest]] += bytes;
}

static void count_recv(struct counted *c, long long bytes)
{
    c->recv_calls++;
    c->recv_bytes += bytes;
}

static void count_coll(struct counted *c, int kind, long long bytes)
{
    c->coll_calls[kind]++;
    c->coll_bytes[kind] += bytes;
}

static void requests_started(int n)
{
    all.requests_outstanding += n;
    if (all.requests_outstanding > all.requests_max)
        all.requests_max = all.requests_outstanding;
}

/* After one MPI_Wait* call that completed n requests. */
static void requests_waited(int n)
{
    all.wait_calls++;
    all.requests_outstanding -= n;
}

/* This rank's rank in c and its neighbours in a ring on c. */
static void ring_neighbours(struct counted *c, int *me, int *right, int *left)
{
    CHECK(MPI_Comm_rank(c->comm, me));
    *right = (*me + 1) % c->size;
    *left = (*me - 1 + c->size) % c->size;
}

static void expect_int(const char *what, int got, int want)
{
    if (got != want) {
        fprintf(stderr, "ring: rank %d: %s: got %d, want %d\n", world_rank,
                what, got, want);
        failures++;
    }
}

static void fill(int *buf, int n, int seed)
{
    for (int k = 0; k < n; k++)
        buf[k] = seed * 1000003 + k;
}

static void check_fill(const char *what, const int *buf, int n, int seed)
{
    for (int k = 0; k < n; k++)
        if (buf[k] != seed * 1000003 + k) {
            expect_int(what, buf[k], seed * 1000003 + k);
            return;
        }
}

/* Ring with MPI_Sendrecv on c: send to the right, receive from the left. */
static void ring_sendrecv(struct counted *c, int *sbuf, int *rbuf, int n,
                          int it)
{
    int me, right, left;
    MPI_Status st;
    int got = 0;
    ring_neighbours(c, &me, &right, &left);
    fill(sbuf, n, it * 64 + c->world_of[me]);
    CHECK(MPI_Sendrecv(sbuf, n, MPI_INT, right, 10, rbuf, n, MPI_INT, left,
                       10, c->comm, &st));
    count_send(c, right, type_bytes(n, MPI_INT));
    CHECK(MPI_Get_count(&st, MPI_INT, &got));
    count_recv(c, type_bytes(got, MPI_INT));
    check_fill("sendrecv ring", rbuf, n, it * 64 + c->world_of[left]);
}

/* Ring with MPI_Irecv + MPI_Isend + MPI_Waitall on c. */
static void ring_nonblocking(struct counted *c, int *sbuf, int *rbuf, int n,
                             int it)
{
    int me, right, left;
    MPI_Request req[2];
    MPI_Status sts[2];
    ring_neighbours(c, &me, &right, &left);
    fill(sbuf, n, it * 64 + 32 + c->world_of[me]);
    CHECK(MPI_Irecv(rbuf, n, MPI_INT, left, 11, c->comm, &req[0]));
    count_recv(c, type_bytes(n, MPI_INT));
    requests_started(1);
    CHECK(MPI_Isend(sbuf, n, MPI_INT, right, 11, c->comm, &req[1]));
    count_send(c, right, type_bytes(n, MPI_INT));
    requests_started(1);
    CHECK(MPI_Waitall(2, req, sts));
    requests_waited(2);
    check_fill("nonblocking ring", rbuf, n, it * 64 + 32 + c->world_of[left]);
}

/* 1-D halo exchange on c (non-periodic): each rank owns n doubles plus one
 * halo of h doubles on each side and exchanges edges with its neighbours. */
static void halo_exchange(struct counted *c, double *field, int n, int h,
                          int it)
{
    int me;
    MPI_Request req[4];
    MPI_Status sts[4];
    int nreq = 0;
    CHECK(MPI_Comm_rank(c->comm, &me));
    double *left_halo = field, *own = field + h, *right_halo = field + h + n;
    for (int k = 0; k < n; k++)
        own[k] = (double)(me * 100000 + it * 1000 + k);
    if (me > 0) {
        CHECK(MPI_Irecv(left_halo, h, MPI_DOUBLE, me - 1, 20, c->comm,
                        &req[nreq++]));
        count_recv(c, type_bytes(h, MPI_DOUBLE));
    }
    if (me < c->size - 1) {
        CHECK(MPI_Irecv(right_halo, h, MPI_DOUBLE, me + 1, 21, c->comm,
                        &req[nreq++]));
        count_recv(c, type_bytes(h, MPI_DOUBLE));
    }
    if (me > 0) {
        CHECK(MPI_Isend(own, h, MPI_DOUBLE, me - 1, 21, c->comm,
                        &req[nreq++]));
        count_send(c, me - 1, type_bytes(h, MPI_DOUBLE));
    }
    if (me < c->size - 1) {
        CHECK(MPI_Isend(own + n - h, h, MPI_DOUBLE, me + 1, 20, c->comm,
                        &req[nreq++]));
        count_send(c, me + 1, type_bytes(h, MPI_DOUBLE));
    }
    requests_started(nreq);
    CHECK(MPI_Waitall(nreq, req, sts));
    requests_waited(nreq);
    if (me > 0)
        expect_int("left halo", (int)left_halo[0],
                   (me - 1) * 100000 + it * 1000 + (n - h));
    if (me < c->size - 1)
        expect_int("right halo", (int)right_halo[0],
                   (me + 1) * 100000 + it * 1000);
}

/* Persistent ring on c: the requests are made once, started every
 * iteration. */
struct persistent {
    MPI_Request req[2];
    int *sbuf, *rbuf;
    int n, right, left;
};

static void persistent_init(struct persistent *p, struct counted *c, int n)
{
    int me;
    ring_neighbours(c, &me, &p->right, &p->left);
    p->n = n;
    p->sbuf = malloc(sizeof(int) * (size_t)n);
    p->rbuf = malloc(sizeof(int) * (size_t)n);
    if (!p->sbuf || !p->rbuf)
        die("malloc", MPI_ERR_NO_MEM);
    CHECK(MPI_Recv_init(p->rbuf, n, MPI_INT, p->left, 30, c->comm,
                        &p->req[0]));
    CHECK(MPI_Send_init(p->sbuf, n, MPI_INT, p->right, 30, c->comm,
                        &p->req[1]));
}

static void persistent_round(struct persistent *p, struct counted *c, int it)
{
    MPI_Status sts[2];
    fill(p->sbuf, p->n, it * 64 + 48 + world_rank);
    CHECK(MPI_Startall(2, p->req));
    count_recv(c, type_bytes(p->n, MPI_INT));
    count_send(c, p->right, type_bytes(p->n, MPI_INT));
    requests_started(2);
    CHECK(MPI_Waitall(2, p->req, sts));
    requests_waited(2);
    check_fill("persistent ring", p->rbuf, p->n,
               it * 64 + 48 + c->world_of[p->left]);
}

static void persistent_free(struct persistent *p)
{
    CHECK(MPI_Request_free(&p->req[0]));
    CHECK(MPI_Request_free(&p->req[1]));
    free(p->sbuf);
    free(p->rbuf);
}

/* Once: MPI_Probe + MPI_Recv from the left on c. */
static void probe_then_recv(struct counted *c, int *sbuf, int *rbuf, int n)
{
    int me, right, left, count = 0;
    MPI_Status st;
    MPI_Request req;
    ring_neighbours(c, &me, &right, &left);
    fill(sbuf, n, 7000 + c->world_of[me]);
    CHECK(MPI_Isend(sbuf, n, MPI_INT, right, 40, c->comm, &req));
    count_send(c, right, type_bytes(n, MPI_INT));
    requests_started(1);
    CHECK(MPI_Probe(left, 40, c->comm, &st));
    all.probe_calls++;
    CHECK(MPI_Get_count(&st, MPI_INT, &count));
    expect_int("probed count", count, n);
    CHECK(MPI_Recv(rbuf, count, MPI_INT, st.MPI_SOURCE, 40, c->comm, &st));
    CHECK(MPI_Get_count(&st, MPI_INT, &count));
    count_recv(c, type_bytes(count, MPI_INT));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    requests_waited(1);
    check_fill("probed message", rbuf, n, 7000 + c->world_of[left]);
}

/* Once: a blocking receive into a buffer twice the message's size. */
static void short_message(struct counted *c, int *sbuf, int *rbuf, int n)
{
    int me, right, left, count = 0;
    MPI_Status st;
    MPI_Request req;
    ring_neighbours(c, &me, &right, &left);
    fill(sbuf, n / 2, 8000 + c->world_of[me]);
    CHECK(MPI_Isend(sbuf, n / 2, MPI_INT, right, 41, c->comm, &req));
    count_send(c, right, type_bytes(n / 2, MPI_INT));
    requests_started(1);
    CHECK(MPI_Recv(rbuf, n, MPI_INT, left, 41, c->comm, &st));
    CHECK(MPI_Get_count(&st, MPI_INT, &count));
    expect_int("short message count", count, n / 2);
    count_recv(c, type_bytes(count, MPI_INT));
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    requests_waited(1);
    check_fill("short message", rbuf, n / 2, 8000 + c->world_of[left]);
}

/* Once: MPI_Test polling until the receive completes, then MPI_Wait on the
 * send. */
static void test_polling(struct counted *c, int *sbuf, int *rbuf, int n)
{
    int me, right, left, flag = 0;
    MPI_Request rreq, sreq;
    ring_neighbours(c, &me, &right, &left);
    fill(sbuf, n, 9000 + c->world_of[me]);
    CHECK(MPI_Irecv(rbuf, n, MPI_INT, left, 42, c->comm, &rreq));
    count_recv(c, type_bytes(n, MPI_INT));
    requests_started(1);
    CHECK(MPI_Isend(sbuf, n, MPI_INT, right, 42, c->comm, &sreq));
    count_send(c, right, type_bytes(n, MPI_INT));
    requests_started(1);
    while (!flag) {
        CHECK(MPI_Test(&rreq, &flag, MPI_STATUS_IGNORE));
        all.test_calls++;
    }
    all.requests_outstanding -= 1;
    CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    requests_waited(1);
    check_fill("polled message", rbuf, n, 9000 + c->world_of[left]);
}

static void collectives(struct counted *world, struct counted *dup,
                        struct counted *split, int n, int it)
{
    double *in = malloc(sizeof(double) * (size_t)n);
    double *out = malloc(sizeof(double) * (size_t)n);
    int me_dup;
    if (!in || !out)
        die("malloc", MPI_ERR_NO_MEM);
    for (int k = 0; k < n; k++)
        in[k] = (double)(world_rank + k);

    CHECK(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, world->comm));
    count_coll(world, K_ALLREDUCE, type_bytes(n, MPI_DOUBLE));
    expect_int("allreduce world", (int)out[1],
               world_size * (world_size - 1) / 2 + world_size);

    CHECK(MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_MAX, split->comm));
    count_coll(split, K_ALLREDUCE, type_bytes(1, MPI_DOUBLE));
    expect_int("allreduce split", (int)out[0],
               split->world_of[split->size - 1]);

    CHECK(MPI_Comm_rank(dup->comm, &me_dup));
    int words[4] = {it, 1, 2, 3};
    if (me_dup != 0)
        words[0] = -1;
    CHECK(MPI_Bcast(words, 4, MPI_INT, 0, dup->comm));
    count_coll(dup, K_BCAST, me_dup == 0 ? type_bytes(4, MPI_INT) : 0);
    expect_int("bcast", words[0], it);

    CHECK(MPI_Barrier(world->comm));
    count_coll(world, K_BARRIER, 0);
    free(in);
    free(out);
}

static void wait_for_file(const char *path)
{
    struct timespec start, now, pause = {0, 2 * 1000 * 1000};
    char line[128];
    int len = snprintf(line, sizeof line, "HOLD rank=%d pid=%ld\n", world_rank,
                       (long)getpid());
    if (write(STDOUT_FILENO, line, (size_t)len) != len)
        die("write", MPI_ERR_OTHER);
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (access(path, F_OK) != 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 120) {
            fprintf(stderr, "ring: rank %d: %s did not appear in 120 s\n",
                    world_rank, path);
            failures++;
            return;
        }
        nanosleep(&pause, NULL);
    }
}

/* --ibarrier-send: hangs if starting a nonblocking collective waits for
 * the other ranks (as a report or a poll at its start would). */
static void ibarrier_around_send(struct counted *world, int *sbuf, int *rbuf)
{
    int me;
    MPI_Request r;
    MPI_Status st;
    CHECK(MPI_Comm_rank(world->comm, &me));
    if (me == 1) {
        CHECK(MPI_Recv(rbuf, 8, MPI_INT, 0, 30, world->comm, &st));
        count_recv(world, type_bytes(8, MPI_INT));
        check_fill("ibarrier-send", rbuf, 8, 77);
    }
    CHECK(MPI_Ibarrier(world->comm, &r));
    count_coll(world, K_BARRIER, 0);
    requests_started(1);
    if (me == 0 && world->size > 1) {
        fill(sbuf, 8, 77);
        CHECK(MPI_Send(sbuf, 8, MPI_INT, 1, 30, world->comm));
        count_send(world, 1, type_bytes(8, MPI_INT));
    }
    CHECK(MPI_Wait(&r, &st));
    requests_waited(1);
}

#define WARMUP_ALLREDUCES 64

static void until_report(const char *path)
{
    struct timespec start, now;
    char line[160];
    int len;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long calls = 0;
    int all = 0; /* 1: the file is there; 2: rank 0 gave up */
    while (all == 0) {
        if (calls == WARMUP_ALLREDUCES) {
            len = snprintf(line, sizeof line, "WAITING rank=%d pid=%ld\n",
                           world_rank, (long)getpid());
            if (write(STDOUT_FILENO, line, (size_t)len) != len)
                die("write", MPI_ERR_OTHER);
        }
        int state = 0;
        if (world_rank == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (access(path, F_OK) == 0)
                state = 1;
            else if (now.tv_sec - start.tv_sec > 120)
                state = 2;
        }
        CHECK(MPI_Allreduce(&state, &all, 1, MPI_INT, MPI_MAX,
                            MPI_COMM_WORLD));
        calls++;
    }
    if (all == 2) {
        if (world_rank == 0)
            fprintf(stderr, "ring: %s did not appear in 120 s\n", path);
        failures++;
    } else if (world_rank == 0) {
        char moved[4096];
        snprintf(moved, sizeof moved, "%s.on-demand", path);
        if (rename(path, moved) != 0)
            die("rename", MPI_ERR_OTHER);
    }
    len = snprintf(line, sizeof line, "WAITED rank=%d allreduces=%ld\n",
                   world_rank, calls);
    if (write(STDOUT_FILENO, line, (size_t)len) != len)
        die("write", MPI_ERR_OTHER);
}

int main(int argc, char **argv)
{
    int iters = 10, n = 256, free_comms = 0, ibarrier_send = 0;
    const char *hold = NULL, *until = NULL;
    for (int a = 1; a < argc; a++) {
        if (!opt_int(argc, argv, &a, "-i", &iters) &&
            !opt_int(argc, argv, &a, "-n", &n) &&
            !opt_str(argc, argv, &a, "--hold", &hold) &&
            !opt_str(argc, argv, &a, "--until-report", &until) &&
            !opt_flag(argv[a], "--ibarrier-send", &ibarrier_send) &&
            !opt_flag(argv[a], "--free-comms", &free_comms)) {
            fprintf(stderr,
                    "usage: ring [-i ITERS] [-n COUNT] [--hold FILE] "
                    "[--until-report FILE] [--ibarrier-send] [--free-comms]\n");
            return 2;
        }
    }
    if (iters < 0 || n < 8) {
        fprintf(stderr, "ring: need ITERS >= 0 and COUNT >= 8\n");
        return 2;
    }

    example_init(&argc, &argv, 1);
    rank_counts_init(&all);

    MPI_Comm dup_comm, split_comm;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm));
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank,
                         &split_comm));
    struct counted world, dup, split;
    counted_init(&world, "world", MPI_COMM_WORLD);
    counted_init(&dup, "dup", dup_comm);
    counted_init(&split, "split", split_comm);

    int *sbuf = malloc(sizeof(int) * (size_t)n);
    int *rbuf = malloc(sizeof(int) * (size_t)n);
    int h = n / 4 > 0 ? n / 4 : 1;
    double *field = calloc((size_t)(n + 2 * h), sizeof(double));
    if (!sbuf || !rbuf || !field)
        die("malloc", MPI_ERR_NO_MEM);

    struct persistent p;
    persistent_init(&p, &world, n);
    for (int it = 0; it < iters; it++) {
        ring_sendrecv(&world, sbuf, rbuf, n, it);
        ring_nonblocking(&world, sbuf, rbuf, n, it);
        halo_exchange(&dup, field, n, h, it);
        persistent_round(&p, &world, it);
        ring_sendrecv(&split, sbuf, rbuf, n / 2, it);
        collectives(&world, &dup, &split, n, it);
    }
    persistent_free(&p);
    probe_then_recv(&world, sbuf, rbuf, n);
    short_message(&world, sbuf, rbuf, n);
    test_polling(&dup, sbuf, rbuf, n);
    if (ibarrier_send)
        ibarrier_around_send(&world, sbuf, rbuf);

    if (free_comms) {
        CHECK(MPI_Comm_free(&dup_comm));
        CHECK(MPI_Comm_free(&split_comm));
    }
    const struct counted *comms[3] = {&world, &dup, &split};
    print_counted(comms, free_comms ? 1 : 3, &all);
    if (until)
        until_report(until);
    if (hold)
        wait_for_file(hold);

    free(sbuf);
    free(rbuf);
    free(field);
    if (failures)
        fprintf(stderr, "ring: rank %d: %d wrong values\n", world_rank,
                failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
