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
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { K_BARRIER = 0, K_ALLREDUCE = 3, NK = 15 };

static int world_rank, world_size;
static long long send_calls, send_bytes, recv_calls, recv_bytes;
static long long coll_calls[NK], coll_bytes[NK];
static long long *peer_msgs, *peer_bytes;

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = '\0';
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "pingpong: rank %d: %s failed: %s\n", world_rank, what,
            msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define CHECK(call)                                                          \
    do {                                                                     \
        int err_ = (call);                                                   \
        if (err_ != MPI_SUCCESS)                                             \
            die(#call, err_);                                                \
    } while (0)

__attribute__((format(printf, 4, 5))) static void
put(char *out, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *at, cap - *at, fmt, ap);
    va_end(ap);
    if (k > 0)
        *at = (size_t)k < cap - *at ? *at + (size_t)k : cap - 1;
}

static void put_list(char *out, size_t cap, size_t *at, const char *name,
                     const long long *v, int n)
{
    put(out, cap, at, " %s=", name);
    for (int i = 0; i < n; i++)
        put(out, cap, at, i ? ",%lld" : "%lld", v[i]);
}

/* The COUNTED lines (format of ring.c), in one write. */
static void print_counted(void)
{
    size_t cap = 8192, at = 0;
    char *out = malloc(cap);
    if (!out)
        die("malloc", MPI_ERR_NO_MEM);
    put(out, cap, &at, "COUNTED rank=%d comm=world size=%d members=",
        world_rank, world_size);
    for (int i = 0; i < world_size; i++)
        put(out, cap, &at, i ? ",%d" : "%d", i);
    put(out, cap, &at,
        " send_calls=%lld send_bytes=%lld recv_calls=%lld recv_bytes=%lld",
        send_calls, send_bytes, recv_calls, recv_bytes);
    put_list(out, cap, &at, "coll_calls", coll_calls, NK);
    put_list(out, cap, &at, "coll_bytes", coll_bytes, NK);
    put(out, cap, &at,
        "\nCOUNTED rank=%d comm=* wait_calls=0 test_calls=0 probe_calls=0",
        world_rank);
    put_list(out, cap, &at, "peer_send_msgs", peer_msgs, world_size);
    put_list(out, cap, &at, "peer_send_bytes", peer_bytes, world_size);
    put(out, cap, &at, " requests_max=0 requests_outstanding=0\n");
    if (write(STDOUT_FILENO, out, at) != (ssize_t)at)
        die("write", MPI_ERR_OTHER);
    free(out);
}

/* Variables the session leaves alone: ours (pvar_*: the engine's and the
 * interposer's), and Open MPI's psm2 MTL ones: in Open MPI 4.1.4,
 * MPI_T_pvar_handle_alloc on them calls psm2_mq_get_stats on the MQ of an
 * MTL that was not selected and crashes (segfault) on a machine without
 * Omni-Path. */
static int left_alone(const char *name)
{
    return strncasecmp(name, "pvar_", 5) == 0 ||
           strncmp(name, "mtl_psm2_", 9) == 0;
}

/* Starts a handle on every library pvar that can be bound here; the
 * session stays open until MPI_Finalize. */
static void start_library_session(void)
{
    int provided, num = 0, handles = 0, skipped = 0;
    MPI_T_pvar_session session;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(MPI_T_pvar_get_num(&num));
    CHECK(MPI_T_pvar_session_create(&session));
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, var_class, bind, readonly, continuous, atomic, count;
        MPI_Datatype dt;
        MPI_T_enum et;
        MPI_T_pvar_handle h;
        MPI_Comm comm = MPI_COMM_WORLD;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class,
                                &dt, &et, desc, &desc_len, &bind, &readonly,
                                &continuous, &atomic) != MPI_SUCCESS ||
            left_alone(name)) {
            skipped++;
            continue;
        }
        void *obj = NULL;
        if (bind == MPI_T_BIND_MPI_COMM)
            obj = &comm;
        else if (bind != MPI_T_BIND_NO_OBJECT) {
            skipped++;
            continue;
        }
        if (MPI_T_pvar_handle_alloc(session, i, obj, &h, &count) !=
            MPI_SUCCESS) {
            skipped++;
            continue;
        }
        if (!continuous && MPI_T_pvar_start(session, h) != MPI_SUCCESS) {
            MPI_T_pvar_handle_free(session, &h);
            skipped++;
            continue;
        }
        handles++;
    }
    if (world_rank == 0)
        printf("MPIT_SESSION handles=%d skipped=%d\n", handles, skipped);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

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
        send_calls += n;
        send_bytes += n * size;
        recv_calls += n;
        recv_bytes += n * size;
        peer_msgs[peer] += n;
        peer_bytes[peer] += n * size;
    }
}

static void barrier(void)
{
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    coll_calls[K_BARRIER]++;
}

int main(int argc, char **argv)
{
    long long iters = 10000, warmup = 1000;
    int reps = 5, size = 8, session = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-i") && a + 1 < argc)
            iters = atoll(argv[++a]);
        else if (!strcmp(argv[a], "-w") && a + 1 < argc)
            warmup = atoll(argv[++a]);
        else if (!strcmp(argv[a], "-r") && a + 1 < argc)
            reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-s") && a + 1 < argc)
            size = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--mpit-session"))
            session = 1;
        else {
            fprintf(stderr, "usage: pingpong [-i ITERS] [-w WARMUP] [-r REPS] "
                            "[-s SIZE] [--mpit-session]\n");
            return 2;
        }
    }
    if (iters < 1 || warmup < 0 || reps < 1 || size < 0) {
        fprintf(stderr, "pingpong: bad arguments\n");
        return 2;
    }

    MPI_Init(&argc, &argv);
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    if (world_size < 2) {
        fprintf(stderr, "pingpong: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer_msgs = calloc((size_t)world_size, sizeof(long long));
    peer_bytes = calloc((size_t)world_size, sizeof(long long));
    char *buf = calloc((size_t)size + 1, 1);
    double *lat = calloc((size_t)reps, sizeof(double));
    if (!peer_msgs || !peer_bytes || !buf || !lat)
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
        qsort(lat, (size_t)reps, sizeof(double), cmp_double);
        double med = reps % 2 ? lat[reps / 2]
                              : (lat[reps / 2 - 1] + lat[reps / 2]) / 2.0;
        printf("MEDIAN latency_us=%.4f reps=%d iters=%lld size=%d\n", med,
               reps, iters, size);
        fflush(stdout);
    }
    print_counted();
    free(buf);
    free(lat);
    MPI_Finalize();
    return 0;
}
