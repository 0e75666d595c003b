/* msgrate: the classic message-rate loop. Even world ranks send to the next
 * odd rank: per iteration the receiver pre-posts WINDOW MPI_Irecv, the
 * sender posts WINDOW MPI_Isend of SIZE bytes, both MPI_Waitall, then the
 * receiver sends a zero-byte acknowledgement the sender receives. A trailing
 * odd rank only joins the collectives.
 *
 * With --self, every rank (one is enough) is its own partner: per
 * iteration it posts WINDOW MPI_Irecv from itself and WINDOW MPI_Isend to
 * itself and completes all 2 x WINDOW with one MPI_Waitall. One process, no
 * second core busy-polling: the library's path is short and steady, so the
 * cost of the wrappers around it stands out (scripts/mpi-bench.sh,
 * "selfrate").
 *
 * Usage: msgrate [-w WINDOW] [-i ITERS] [-r REPS] [-s SIZE] [--mpit-session]
 *                [--self]
 *   WINDOW  messages in flight per iteration (default 64)
 *   ITERS   iterations per repetition (default 200)
 *   REPS    repetitions in this job (default 5); one untimed iteration
 *           precedes them
 *   SIZE    message size in bytes (default 8)
 *   --mpit-session  start a tool session with a started handle on every
 *           performance variable of the MPI library first (see pingpong.c)
 *
 * Output on rank 0:
 *   MPIT_SESSION handles=<n> skipped=<n>              (with --mpit-session)
 *   REP <k> msgs_per_s=<messages of all pairs / slowest rank's time>
 *   MEDIAN msgs_per_s=<median> reps=<R> iters=<N> window=<W> pairs=<P>
 * and on every rank the COUNTED lines of ring.c (comm=world and comm=*).
 */
#define EXAMPLE_NAME "msgrate"
#include "example_common.h"

static struct counted world; /* MPI_COMM_WORLD */
static struct rank_counts all;

/* --self: ITERS iterations of WINDOW receives and sends to this rank and
 * one wait; returns the elapsed time. req/sts hold 2 x WINDOW. */
static double self_loop(char *bufs, int size, int window, long long iters,
                        MPI_Request *req, MPI_Status *sts)
{
    char *rbufs = bufs + (size_t)window * (size_t)size;
    double t0 = MPI_Wtime();
    for (long long k = 0; k < iters; k++) {
        for (int w = 0; w < window; w++)
            CHECK(MPI_Irecv(rbufs + (size_t)w * (size_t)size, size, MPI_BYTE,
                            world_rank, 7, MPI_COMM_WORLD, &req[w]));
        for (int w = 0; w < window; w++)
            CHECK(MPI_Isend(bufs + (size_t)w * (size_t)size, size, MPI_BYTE,
                            world_rank, 7, MPI_COMM_WORLD, &req[window + w]));
        CHECK(MPI_Waitall(2 * window, req, sts));
    }
    double t1 = MPI_Wtime();
    world.send_calls += iters * window;
    world.send_bytes += iters * window * size;
    world.recv_calls += iters * window;
    world.recv_bytes += iters * window * size;
    all.peer_msgs[world_rank] += iters * window;
    all.peer_bytes[world_rank] += iters * window * size;
    all.wait_calls += iters;
    if (iters > 0 && 2 * window > all.requests_max)
        all.requests_max = 2 * window;
    return t1 - t0;
}

/* ITERS iterations of the window loop; returns this rank's elapsed time. */
static double window_loop(char *bufs, int size, int window, long long iters,
                          MPI_Request *req, MPI_Status *sts)
{
    int peer = world_rank % 2 ? world_rank - 1 : world_rank + 1;
    int sender = world_rank % 2 == 0;
    char ack = 0;
    MPI_Status st;
    if (peer >= world_size)
        return 0.0;
    double t0 = MPI_Wtime();
    for (long long k = 0; k < iters; k++) {
        for (int w = 0; w < window; w++) {
            char *b = bufs + (size_t)w * (size_t)size;
            if (sender)
                CHECK(MPI_Isend(b, size, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                                &req[w]));
            else
                CHECK(MPI_Irecv(b, size, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                                &req[w]));
        }
        CHECK(MPI_Waitall(window, req, sts));
        if (sender)
            CHECK(MPI_Recv(&ack, 0, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &st));
        else
            CHECK(MPI_Send(&ack, 0, MPI_BYTE, peer, 8, MPI_COMM_WORLD));
    }
    double t1 = MPI_Wtime();
    /* Counted once for all iterations: the window's sends (or receives,
     * posted bytes), one wait call per iteration, the zero-byte ack. */
    if (sender) {
        world.send_calls += iters * window;
        world.send_bytes += iters * window * size;
        all.peer_msgs[peer] += iters * window;
        all.peer_bytes[peer] += iters * window * size;
        world.recv_calls += iters;
    } else {
        world.recv_calls += iters * window;
        world.recv_bytes += iters * window * size;
        world.send_calls += iters;
        all.peer_msgs[peer] += iters;
    }
    all.wait_calls += iters;
    if (iters > 0 && window > all.requests_max)
        all.requests_max = window;
    return t1 - t0;
}

int main(int argc, char **argv)
{
    long long iters = 200;
    int window = 64, reps = 5, size = 8, session = 0, self = 0;
    for (int a = 1; a < argc; a++) {
        if (!opt_int(argc, argv, &a, "-w", &window) &&
            !opt_ll(argc, argv, &a, "-i", &iters) &&
            !opt_int(argc, argv, &a, "-r", &reps) &&
            !opt_int(argc, argv, &a, "-s", &size) &&
            !opt_flag(argv[a], "--mpit-session", &session) &&
            !opt_flag(argv[a], "--self", &self)) {
            fprintf(stderr, "usage: msgrate [-w WINDOW] [-i ITERS] [-r REPS] "
                            "[-s SIZE] [--mpit-session] [--self]\n");
            return 2;
        }
    }
    if (window < 1 || iters < 1 || reps < 1 || size < 0) {
        fprintf(stderr, "msgrate: bad arguments\n");
        return 2;
    }

    example_init(&argc, &argv, self ? 1 : 2);
    int pairs = self ? world_size : world_size / 2;
    double (*loop)(char *, int, int, long long, MPI_Request *, MPI_Status *) =
        self ? self_loop : window_loop;
    counted_init(&world, "world", MPI_COMM_WORLD);
    rank_counts_init(&all);
    char *bufs = calloc(2 * (size_t)window * (size_t)size + 1, 1);
    MPI_Request *req = calloc(2 * (size_t)window, sizeof(MPI_Request));
    MPI_Status *sts = calloc(2 * (size_t)window, sizeof(MPI_Status));
    double *rate = calloc((size_t)reps, sizeof(double));
    if (!bufs || !req || !sts || !rate)
        die("calloc", MPI_ERR_NO_MEM);
    if (session)
        start_library_session();

    loop(bufs, size, window, 1, req, sts);
    for (int r = 0; r < reps; r++) {
        double mine, slowest = 0.0;
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        world.coll_calls[K_BARRIER]++;
        mine = loop(bufs, size, window, iters, req, sts);
        CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                            MPI_COMM_WORLD));
        world.coll_calls[K_ALLREDUCE]++;
        world.coll_bytes[K_ALLREDUCE] += (long long)sizeof(double);
        rate[r] = slowest > 0.0
                      ? (double)pairs * (double)window * (double)iters / slowest
                      : 0.0;
    }

    if (world_rank == 0) {
        for (int r = 0; r < reps; r++)
            printf("REP %d msgs_per_s=%.0f\n", r, rate[r]);
        printf("MEDIAN msgs_per_s=%.0f reps=%d iters=%lld window=%d pairs=%d\n",
               median(rate, reps), reps, iters, window, pairs);
        fflush(stdout);
    }
    const struct counted *comms[1] = {&world};
    print_counted(comms, 1, &all);
    free(bufs);
    free(req);
    free(sts);
    free(rate);
    MPI_Finalize();
    return 0;
}
