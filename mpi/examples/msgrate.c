/* msgrate: the classic message-rate loop. Even world ranks send to the next
 * odd rank: per iteration the receiver pre-posts WINDOW MPI_Irecv, the
 * sender posts WINDOW MPI_Isend of SIZE bytes, both MPI_Waitall, then the
 * receiver sends a zero-byte acknowledgement the sender receives. A trailing
 * odd rank only joins the collectives.
 *
 * Usage: msgrate [-w WINDOW] [-i ITERS] [-r REPS] [-s SIZE] [--mpit-session]
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
static long long wait_calls, requests_max;
static long long coll_calls[NK], coll_bytes[NK];
static long long *peer_msgs, *peer_bytes;

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = '\0';
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "msgrate: rank %d: %s failed: %s\n", world_rank, what,
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
        "\nCOUNTED rank=%d comm=* wait_calls=%lld test_calls=0 "
        "probe_calls=0",
        world_rank, wait_calls);
    put_list(out, cap, &at, "peer_send_msgs", peer_msgs, world_size);
    put_list(out, cap, &at, "peer_send_bytes", peer_bytes, world_size);
    put(out, cap, &at, " requests_max=%lld requests_outstanding=0\n",
        requests_max);
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
        send_calls += iters * window;
        send_bytes += iters * window * size;
        peer_msgs[peer] += iters * window;
        peer_bytes[peer] += iters * window * size;
        recv_calls += iters;
    } else {
        recv_calls += iters * window;
        recv_bytes += iters * window * size;
        send_calls += iters;
        peer_msgs[peer] += iters;
    }
    wait_calls += iters;
    if (iters > 0 && window > requests_max)
        requests_max = window;
    return t1 - t0;
}

int main(int argc, char **argv)
{
    long long iters = 200;
    int window = 64, reps = 5, size = 8, session = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-w") && a + 1 < argc)
            window = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-i") && a + 1 < argc)
            iters = atoll(argv[++a]);
        else if (!strcmp(argv[a], "-r") && a + 1 < argc)
            reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "-s") && a + 1 < argc)
            size = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--mpit-session"))
            session = 1;
        else {
            fprintf(stderr, "usage: msgrate [-w WINDOW] [-i ITERS] [-r REPS] "
                            "[-s SIZE] [--mpit-session]\n");
            return 2;
        }
    }
    if (window < 1 || iters < 1 || reps < 1 || size < 0) {
        fprintf(stderr, "msgrate: bad arguments\n");
        return 2;
    }

    MPI_Init(&argc, &argv);
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    if (world_size < 2) {
        fprintf(stderr, "msgrate: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int pairs = world_size / 2;
    peer_msgs = calloc((size_t)world_size, sizeof(long long));
    peer_bytes = calloc((size_t)world_size, sizeof(long long));
    char *bufs = calloc((size_t)window * (size_t)size + 1, 1);
    MPI_Request *req = calloc((size_t)window, sizeof(MPI_Request));
    MPI_Status *sts = calloc((size_t)window, sizeof(MPI_Status));
    double *rate = calloc((size_t)reps, sizeof(double));
    if (!peer_msgs || !peer_bytes || !bufs || !req || !sts || !rate)
        die("calloc", MPI_ERR_NO_MEM);
    if (session)
        start_library_session();

    window_loop(bufs, size, window, 1, req, sts);
    for (int r = 0; r < reps; r++) {
        double mine, slowest = 0.0;
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        coll_calls[K_BARRIER]++;
        mine = window_loop(bufs, size, window, iters, req, sts);
        CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                            MPI_COMM_WORLD));
        coll_calls[K_ALLREDUCE]++;
        coll_bytes[K_ALLREDUCE] += (long long)sizeof(double);
        rate[r] = slowest > 0.0
                      ? (double)pairs * (double)window * (double)iters / slowest
                      : 0.0;
    }

    if (world_rank == 0) {
        for (int r = 0; r < reps; r++)
            printf("REP %d msgs_per_s=%.0f\n", r, rate[r]);
        qsort(rate, (size_t)reps, sizeof(double), cmp_double);
        double med = reps % 2 ? rate[reps / 2]
                              : (rate[reps / 2 - 1] + rate[reps / 2]) / 2.0;
        printf("MEDIAN msgs_per_s=%.0f reps=%d iters=%lld window=%d pairs=%d\n",
               med, reps, iters, window, pairs);
        fflush(stdout);
    }
    print_counted();
    free(bufs);
    free(req);
    free(sts);
    free(rate);
    MPI_Finalize();
    return 0;
}
