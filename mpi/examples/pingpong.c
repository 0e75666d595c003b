/* pingpong: one-way latency between world ranks 0 and 1 (MPI_Send /
 * MPI_Recv of SIZE bytes), the benchmark behind scripts/mpi-bench.sh.
 *
 * Usage: pingpong [-i ITERS] [-w WARMUP] [-r REPS] [-s SIZE] [--mpit-session]
 *   ITERS   round trips timed per repetition (default 10000)
 *   WARMUP  round trips before the first repetition (default 1000)
 *   REPS    repetitions in this job (default 5)
 *   SIZE    message size in bytes (default 8)
 *   --mpit-session  before timing, start a tool session with a started handle
 *           on every performance variable of the MPI library (those not
 *           named pvar_*, nor Open MPI's mtl_psm2_* whose handles crash
 *           when that MTL is not in use): unbound ones and those bound to a
 *           communicator (bound to MPI_COMM_WORLD); other bindings are
 *           skipped. Measures what the library's own MPI_T costs.
 *
 * Output on rank 0:
 *   MPIT_SESSION handles=<n> skipped=<n>            (with --mpit-session)
 *   REP <k> latency_us=<one-way latency>            (one per repetition)
 *   MEDIAN latency_us=<median of the repetitions> reps=<R> iters=<N> size=<S>
 * and on every rank the COUNTED lines of ring.c (comm=world and comm=*):
 * what this rank sent, received and called.
 * Ranks other than 0 and 1 take part only in the barriers.
 */
#define EXAMPLE_NAME "pingpong"
#include "example_common.h"

static struct counted world; /* MPI_COMM_WORLD */
static struct rank_counts all;

static void round_trips(char *buf, int size, long long n)
{
    MPI_Status st;
    int got = 0;
    for (long long k = 0; k < n; k++) {
        if (world_rank == 0) {
            CHECK(MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            CHECK(MPI_Recv(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &st));
        } else if (world_rank == 1) {
            CHECK(MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
            CHECK(MPI_Send(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
        }
    }
    if (world_rank <= 1) {
        CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
        if (got != size)
            die("message size check", MPI_ERR_TRUNCATE);
        int peer = 1 - world_rank;
        world.send_calls += n;
        world.send_bytes += n * size;
        world.recv_calls += n;
        world.recv_bytes += n * size;
        all.peer_msgs[peer] += n;
        all.peer_bytes[peer] += n * size;
    }
}

static void barrier(void)
{
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    world.coll_calls[K_BARRIER]++;
}

int main(int argc, char **argv)
{
    long long iters = 10000, warmup = 1000;
    int reps = 5, size = 8, session = 0;
    for (int a = 1; a < argc; a++) {
        if (!opt_ll(argc, argv, &a, "-i", &iters) &&
            !opt_ll(argc, argv, &a, "-w", &warmup) &&
            !opt_int(argc, argv, &a, "-r", &reps) &&
            !opt_int(argc, argv, &a, "-s", &size) &&
            !opt_flag(argv[a], "--mpit-session", &session)) {
            fprintf(stderr, "usage: pingpong [-i ITERS] [-w WARMUP] [-r REPS] "
                            "[-s SIZE] [--mpit-session]\n");
            return 2;
        }
    }
    if (iters < 1 || warmup < 0 || reps < 1 || size < 0) {
        fprintf(stderr, "pingpong: bad arguments\n");
        return 2;
    }

    example_init(&argc, &argv, 2);
    counted_init(&world, "world", MPI_COMM_WORLD);
    rank_counts_init(&all);
    char *buf = calloc((size_t)size + 1, 1);
    double *lat = calloc((size_t)reps, sizeof(double));
    if (!buf || !lat)
        die("calloc", MPI_ERR_NO_MEM);
    if (session)
        start_library_session();

    round_trips(buf, size, warmup);
    for (int r = 0; r < reps; r++) {
        barrier();
        double t0 = MPI_Wtime();
        round_trips(buf, size, iters);
        double t1 = MPI_Wtime();
        lat[r] = (t1 - t0) * 1e6 / (2.0 * (double)iters);
    }
    barrier();

    if (world_rank == 0) {
        for (int r = 0; r < reps; r++)
            printf("REP %d latency_us=%.4f\n", r, lat[r]);
        printf("MEDIAN latency_us=%.4f reps=%d iters=%lld size=%d\n",
               median(lat, reps), reps, iters, size);
        fflush(stdout);
    }
    const struct counted *comms[1] = {&world};
    print_counted(comms, 1, &all);
    free(buf);
    free(lat);
    MPI_Finalize();
    return 0;
}
