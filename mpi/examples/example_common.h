/* example_common.h: what the MPI example programs of mpi/examples/ share.
 * Each program is one file built alone (scripts/mpi-build.sh); it defines
 * EXAMPLE_NAME (its name in error messages) and includes this header once.
 * Everything here is static, the functions static inline, so that a
 * program pays nothing for the parts it does not use.
 *
 *   world_rank, world_size, example_init(), example_ranks()
 *                           MPI_Init and the rank in MPI_COMM_WORLD
 *   die(), CHECK(call)      fatal MPI errors: "<name>: rank <r>: <call>
 *                           failed: <message>" on stderr, then MPI_Abort;
 *                           a program that reports them otherwise defines
 *                           EXAMPLE_OWN_DIE and its own die()
 *   opt_int(), opt_ll(), opt_str(), opt_flag()   command-line options
 *   median()                the median of a set of repetitions
 *   struct pvar_info, pvar_info(), mpit_inactive(), mpit_bind_object(),
 *   pvar_read_once()        MPI_T helpers (get_info, Open MPI's holes,
 *                           the handle_alloc object, start / read / stop)
 *   start_library_session() the --mpit-session of pingpong and msgrate
 *   struct counted, struct rank_counts, counted_init(), rank_counts_init(),
 *   print_counted()         what a program counts itself and its COUNTED
 *                           lines (the format of ring.c, which
 *                           mpi/tests/jobs.rs compares with the report)
 */
#ifndef PVAR_EXAMPLE_COMMON_H
#define PVAR_EXAMPLE_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef EXAMPLE_NAME
#error "define EXAMPLE_NAME (the program's name) before including this"
#endif

/* ---- ranks and fatal errors ---------------------------------------- */

__attribute__((unused)) static int world_rank, world_size;

/* Reports that `what` failed with MPI error code err and aborts the job. */
static void die(const char *what, int err);

#define CHECK(call)                                                          \
    do {                                                                     \
        int err_ = (call);                                                   \
        if (err_ != MPI_SUCCESS)                                             \
            die(#call, err_);                                                \
    } while (0)

/* The MPI library's message for err ("" if it has none). */
static inline void mpi_error_text(int err, char msg[MPI_MAX_ERROR_STRING])
{
    int len = 0;
    msg[0] = '\0';
    MPI_Error_string(err, msg, &len);
}

#ifndef EXAMPLE_OWN_DIE
static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    mpi_error_text(err, msg);
    fprintf(stderr, EXAMPLE_NAME ": rank %d: %s failed: %s\n", world_rank,
            what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#endif

/* Sets world_rank and world_size (after MPI_Init). */
static inline void example_ranks(void)
{
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
}

/* MPI_Init and example_ranks(); aborts the job ("<name>: needs at least
 * <n> ranks") when MPI_COMM_WORLD has fewer than min_ranks. */
static inline void example_init(int *argc, char ***argv, int min_ranks)
{
    MPI_Init(argc, argv);
    example_ranks();
    if (world_size < min_ranks) {
        fprintf(stderr, EXAMPLE_NAME ": needs at least %d ranks\n",
                min_ranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* ---- command-line options ------------------------------------------ */

/* Each: if argv[*a] is opt (and, for those with a value, a value follows),
 * stores what it says in *out, steps *a past the value and returns 1;
 * otherwise returns 0 and changes nothing. Values are read as atoi /
 * atoll read them. */
static inline const char *opt_value(int argc, char **argv, int *a,
                                    const char *opt)
{
    if (strcmp(argv[*a], opt) != 0 || *a + 1 >= argc)
        return NULL;
    return argv[++*a];
}

static inline int opt_int(int argc, char **argv, int *a, const char *opt,
                          int *out)
{
    const char *v = opt_value(argc, argv, a, opt);
    if (v)
        *out = atoi(v);
    return v != NULL;
}

static inline int opt_ll(int argc, char **argv, int *a, const char *opt,
                         long long *out)
{
    const char *v = opt_value(argc, argv, a, opt);
    if (v)
        *out = atoll(v);
    return v != NULL;
}

static inline int opt_str(int argc, char **argv, int *a, const char *opt,
                          const char **out)
{
    const char *v = opt_value(argc, argv, a, opt);
    if (v)
        *out = v;
    return v != NULL;
}

static inline int opt_flag(const char *arg, const char *opt, int *out)
{
    if (strcmp(arg, opt) != 0)
        return 0;
    *out = 1;
    return 1;
}

/* ---- statistics ---------------------------------------------------- */

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1); sorts v. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* ---- MPI_T ---------------------------------------------------------- */

/* Ours: the variables of pvar (the engine's and the interposer's), named
 * pvar_* or PVAR_*. */
static inline int is_ours(const char *name)
{
    return strncasecmp(name, "pvar_", 5) == 0;
}

/* Open MPI leaves holes in its index spaces: the variables of components
 * it closed at MPI_Init answer get_info with MPI_T_ERR_INVALID (and a
 * variable no longer active answers MPI_T_ERR_INVALID_INDEX). */
static inline int mpit_inactive(int err)
{
    return err == MPI_T_ERR_INVALID || err == MPI_T_ERR_INVALID_INDEX;
}

/* Everything MPI_T_pvar_get_info says about a variable but its
 * description. */
struct pvar_info {
    char name[256];
    int name_len; /* as get_info sets it */
    int verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype dt;
    MPI_T_enum et;
};

static inline int pvar_info(int i, struct pvar_info *p)
{
    char desc[2048];
    int desc_len = sizeof desc;
    p->name_len = sizeof p->name;
    return MPI_T_pvar_get_info(i, p->name, &p->name_len, &p->verbosity,
                               &p->var_class, &p->dt, &p->et, desc, &desc_len,
                               &p->bind, &p->readonly, &p->continuous,
                               &p->atomic);
}

/* The object argument of handle_alloc for a binding: NULL for an unbound
 * variable, comm for a communicator-bound one; NULL with *skip set for
 * the bindings the examples do not cover. */
static inline void *mpit_bind_object(int bind, MPI_Comm *comm, int *skip)
{
    *skip = 0;
    if (bind == MPI_T_BIND_NO_OBJECT)
        return NULL;
    if (bind == MPI_T_BIND_MPI_COMM)
        return comm;
    *skip = 1;
    return NULL;
}

/* Starts handle h (unless continuous), reads it into buf and stops it
 * (unless continuous). Returns NULL, or the step that failed ("start",
 * "read", "stop") with its error code in *err. */
static inline const char *pvar_read_once(MPI_T_pvar_session s,
                                         MPI_T_pvar_handle h, int continuous,
                                         void *buf, int *err)
{
    if (!continuous && (*err = MPI_T_pvar_start(s, h)) != MPI_SUCCESS)
        return "start";
    if ((*err = MPI_T_pvar_read(s, h, buf)) != MPI_SUCCESS)
        return "read";
    if (!continuous && (*err = MPI_T_pvar_stop(s, h)) != MPI_SUCCESS)
        return "stop";
    return NULL;
}

/* Variables the session leaves alone: ours, and Open MPI's psm2 MTL ones:
 * in Open MPI 4.1.4, MPI_T_pvar_handle_alloc on them calls
 * psm2_mq_get_stats on the MQ of an MTL that was not selected and crashes
 * (segfault) on a machine without Omni-Path. */
static inline int left_alone(const char *name)
{
    return is_ours(name) || strncmp(name, "mtl_psm2_", 9) == 0;
}

/* --mpit-session: initialises MPI_T and starts a handle on every library
 * pvar that can be bound here (unbound ones, and communicator-bound ones
 * on MPI_COMM_WORLD), to measure what the library's own MPI_T costs.
 * Rank 0 prints "MPIT_SESSION handles=<n> skipped=<n>". The session stays
 * open until MPI_Finalize. */
static inline void start_library_session(void)
{
    int provided, num = 0, handles = 0, skipped = 0;
    MPI_T_pvar_session session;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(MPI_T_pvar_get_num(&num));
    CHECK(MPI_T_pvar_session_create(&session));
    for (int i = 0; i < num; i++) {
        struct pvar_info p;
        MPI_T_pvar_handle h;
        MPI_Comm comm = MPI_COMM_WORLD;
        int skip, count;
        if (pvar_info(i, &p) != MPI_SUCCESS || left_alone(p.name)) {
            skipped++;
            continue;
        }
        void *obj = mpit_bind_object(p.bind, &comm, &skip);
        if (skip || MPI_T_pvar_handle_alloc(session, i, obj, &h, &count) !=
                        MPI_SUCCESS) {
            skipped++;
            continue;
        }
        if (!p.continuous && MPI_T_pvar_start(session, h) != MPI_SUCCESS) {
            MPI_T_pvar_handle_free(session, &h);
            skipped++;
            continue;
        }
        handles++;
    }
    if (world_rank == 0)
        printf("MPIT_SESSION handles=%d skipped=%d\n", handles, skipped);
}

/* ---- what a program counts itself: the COUNTED lines ---------------- */

/* Collective kinds, in the order of the interposer's coll arrays. */
enum {
    K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_GATHERV,
    K_ALLGATHER, K_ALLGATHERV, K_SCATTER, K_SCATTERV, K_ALLTOALL,
    K_ALLTOALLV, K_REDUCE_SCATTER, K_SCAN, K_EXSCAN, NK
};

/* What this rank did on one communicator: a "COUNTED comm=<tag>" line. */
struct counted {
    const char *tag;
    MPI_Comm comm;
    int size;
    int *world_of; /* rank in comm -> rank in MPI_COMM_WORLD */
    long long send_calls, send_bytes, recv_calls, recv_bytes;
    long long coll_calls[NK], coll_bytes[NK];
};

/* What this rank did regardless of communicator: the "COUNTED comm=*"
 * line. */
struct rank_counts {
    long long wait_calls, test_calls, probe_calls;
    long long *peer_msgs, *peer_bytes; /* per world rank */
    long long requests_max, requests_outstanding;
};

/* Zeroes c and learns comm's size and members. */
static inline void counted_init(struct counted *c, const char *tag,
                                MPI_Comm comm)
{
    MPI_Group g, wg;
    memset(c, 0, sizeof *c);
    c->tag = tag;
    c->comm = comm;
    CHECK(MPI_Comm_size(comm, &c->size));
    c->world_of = malloc(sizeof(int) * (size_t)c->size);
    int *ranks = malloc(sizeof(int) * (size_t)c->size);
    if (!c->world_of || !ranks)
        die("malloc", MPI_ERR_NO_MEM);
    for (int i = 0; i < c->size; i++)
        ranks[i] = i;
    CHECK(MPI_Comm_group(comm, &g));
    CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK(MPI_Group_translate_ranks(g, c->size, ranks, wg, c->world_of));
    CHECK(MPI_Group_free(&g));
    CHECK(MPI_Group_free(&wg));
    free(ranks);
}

/* Zeroes r, with per-peer arrays of world_size. */
static inline void rank_counts_init(struct rank_counts *r)
{
    memset(r, 0, sizeof *r);
    r->peer_msgs = calloc((size_t)world_size, sizeof(long long));
    r->peer_bytes = calloc((size_t)world_size, sizeof(long long));
    if (!r->peer_msgs || !r->peer_bytes)
        die("calloc", MPI_ERR_NO_MEM);
}

/* Appends to out (capacity cap, used *at); output past cap is dropped. */
__attribute__((format(printf, 4, 5))) static inline void
put(char *out, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *at, cap - *at, fmt, ap);
    va_end(ap);
    if (k > 0)
        *at = (size_t)k < cap - *at ? *at + (size_t)k : cap - 1;
}

static inline void put_list(char *out, size_t cap, size_t *at,
                            const char *name, const long long *v, int n)
{
    put(out, cap, at, " %s=", name);
    for (int i = 0; i < n; i++)
        put(out, cap, at, i ? ",%lld" : "%lld", v[i]);
}

/* Prints this rank's COUNTED lines, in one write so that they stay whole
 * when mpiexec forwards the output of several ranks:
 *   COUNTED rank=<r> comm=<tag> size=<n> members=<world ranks>
 *           handle=<the handle's bits, as the interposer's object value>
 *           send_calls= send_bytes= recv_calls= recv_bytes=
 *           coll_calls=<NK values> coll_bytes=<NK values>
 * for each of comms, then
 *   COUNTED rank=<r> comm=* wait_calls= test_calls= probe_calls=
 *           peer_send_msgs=<per world rank> peer_send_bytes=<per world rank>
 *           requests_max= requests_outstanding= */
static inline void print_counted(const struct counted *const *comms,
                                 int ncomms, const struct rank_counts *r)
{
    size_t cap = 16384, at = 0;
    char *out = malloc(cap);
    if (!out)
        die("malloc", MPI_ERR_NO_MEM);
    out[0] = '\0';
    for (int c = 0; c < ncomms; c++) {
        const struct counted *x = comms[c];
        put(out, cap, &at, "COUNTED rank=%d comm=%s size=%d members=",
            world_rank, x->tag, x->size);
        for (int i = 0; i < x->size; i++)
            put(out, cap, &at, i ? ",%d" : "%d", x->world_of[i]);
        unsigned long long handle = 0; /* little-endian: zero-extended */
        memcpy(&handle, &x->comm, sizeof x->comm);
        put(out, cap, &at, " handle=%llu", handle);
        put(out, cap, &at,
            " send_calls=%lld send_bytes=%lld recv_calls=%lld recv_bytes=%lld",
            x->send_calls, x->send_bytes, x->recv_calls, x->recv_bytes);
        put_list(out, cap, &at, "coll_calls", x->coll_calls, NK);
        put_list(out, cap, &at, "coll_bytes", x->coll_bytes, NK);
        put(out, cap, &at, "\n");
    }
    put(out, cap, &at,
        "COUNTED rank=%d comm=* wait_calls=%lld test_calls=%lld "
        "probe_calls=%lld",
        world_rank, r->wait_calls, r->test_calls, r->probe_calls);
    put_list(out, cap, &at, "peer_send_msgs", r->peer_msgs, world_size);
    put_list(out, cap, &at, "peer_send_bytes", r->peer_bytes, world_size);
    put(out, cap, &at, " requests_max=%lld requests_outstanding=%lld\n",
        r->requests_max, r->requests_outstanding);
    if (write(STDOUT_FILENO, out, at) != (ssize_t)at)
        die("write", MPI_ERR_OTHER);
    free(out);
}

#endif /* PVAR_EXAMPLE_COMMON_H */
