/* live_tool: an MPI program that is also its own MPI_T tool. While it
 * communicates it reads the pvar interposer's variables through MPI_T, in
 * process (between iterations, and continuously from a second thread), and
 * checks that they grow exactly as its own calls; it also looks at the MPI
 * library's own variables next to ours.
 *
 * Usage: live_tool [-i ITERS] [-n COUNT] [--expect-ours] [--sweep]
 *                  [--list FILE] [--mpit-late] [--skip-prefix P]...
 *   ITERS          iterations of the checked traffic (default 5)
 *   COUNT          ints per message (default 64)
 *   --expect-ours  the interposer must be there (pvar_mpi_send_calls is a
 *                  performance variable); without it, its absence is only
 *                  reported (LIVE_INFO) and the library checks still run
 *   --sweep        read every performance variable once: MPI_T_pvar_get_info,
 *                  a handle (bound to MPI_COMM_WORLD for communicator-bound
 *                  ones; other bindings are skipped and said so), start
 *                  unless continuous, read, stop, free
 *   --list FILE    rank 0 writes every pvar, cvar and category to FILE
 *                  (PVAR / CVAR / CATEGORY lines: index, name; a file, as
 *                  mpiexec may interleave long output of several ranks)
 *   --mpit-late    call MPI_T_init_thread after MPI_Init_thread instead of
 *                  before (Open MPI then shows the variables of components
 *                  it did not select, where before it leaves holes)
 *   --skip-prefix P  the sweep leaves the pvars whose name starts with P alone
 *                  (Open MPI 4.1.4's mtl_psm2_* crash in handle_alloc when
 *                  that MTL is not selected)
 *
 * Output (every rank, line buffered):
 *   MPIT_COUNTS rank=<r> pvars=<n> cvars=<n> categories=<n>
 *               ours_pvars=<n> ours_cvars=<n> ours_categories=<n>
 *               invalid_pvars=<n> invalid_cvars=<n> invalid_categories=<n>
 *     (the numbers get_num says; ours: names beginning with pvar_ or
 *     PVAR_, the interposer's and the engine's; invalid: indices whose
 *     get_info says MPI_T_ERR_INVALID or MPI_T_ERR_INVALID_INDEX, Open
 *     MPI's holes)
 *   LIVE_OK rank=<r> <check> ...      one per check passed
 *   LIVE_FAIL rank=<r> <reason>       one per check failed
 *   LIVE_INFO rank=<r> ...            facts that are neither
 *   SWEEP_SKIP / SWEEP_FAIL rank=<r> name=<n> ...
 *   SWEEP rank=<r> pvars=<n> read=<n> skipped=<n> failed=<n> ours_read=<n>
 *   LIVE_DONE rank=<r> ok=<n> fail=<n>
 * Exit status 1 when a check failed.
 */
#define EXAMPLE_NAME "live_tool"
#define EXAMPLE_OWN_DIE /* failures are LIVE_FAIL lines on stdout */
#include "example_common.h"
#include <pthread.h>

static int oks, fails;
static const char *skip_prefix[16];
static int nskip;

/* Prints "<tag> rank=<r> <message>". */
__attribute__((format(printf, 2, 0))) static void
report(const char *tag, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    printf("%s rank=%d %s\n", tag, world_rank, line);
}

__attribute__((format(printf, 1, 2))) static void ok(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("LIVE_OK", fmt, ap);
    va_end(ap);
    oks++;
}

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("LIVE_FAIL", fmt, ap);
    va_end(ap);
    fails++;
}

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    mpi_error_text(err, msg);
    printf("LIVE_FAIL rank=%d %s failed: %d %s\n", world_rank, what, err, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int cvar_name(int i, char *name, int cap, int *bind, MPI_Datatype *dt,
                     int *scope)
{
    char desc[2048];
    int name_len = cap, desc_len = sizeof desc, verbosity;
    MPI_T_enum et;
    return MPI_T_cvar_get_info(i, name, &name_len, &verbosity, dt, &et, desc,
                               &desc_len, bind, scope);
}

static int category_name(int i, char *name, int cap)
{
    char desc[2048];
    int name_len = cap, desc_len = sizeof desc, nc, np, ns;
    return MPI_T_category_get_info(i, name, &name_len, desc, &desc_len, &nc,
                                   &np, &ns);
}

/* Whether get_info of variable (or category) i of a kind succeeded (err);
 * if not, counts a hole or reports a failure. */
static int info_ok(int err, const char *kind, int i, int *holes)
{
    if (err == MPI_SUCCESS)
        return 1;
    if (mpit_inactive(err))
        ++*holes;
    else
        fail("%s_get_info index=%d err=%d", kind, i, err);
    return 0;
}

/* MPI_T's view of the variables: counts, holes, ours among them, a
 * listing. */
static void counts(FILE *list)
{
    int np = 0, nc = 0, ncat = 0, op = 0, oc = 0, ocat = 0;
    int hp = 0, hc = 0, hcat = 0;
    CHECK(MPI_T_pvar_get_num(&np));
    CHECK(MPI_T_cvar_get_num(&nc));
    CHECK(MPI_T_category_get_num(&ncat));
    for (int i = 0; i < np; i++) {
        struct pvar_info p;
        if (!info_ok(pvar_info(i, &p), "pvar", i, &hp))
            continue;
        op += is_ours(p.name);
        if (list)
            fprintf(list, "PVAR %d %s bind=%d class=%d continuous=%d\n", i,
                    p.name, p.bind, p.var_class, p.continuous);
    }
    for (int i = 0; i < nc; i++) {
        char name[256];
        int bind, scope;
        MPI_Datatype dt;
        if (!info_ok(cvar_name(i, name, sizeof name, &bind, &dt, &scope),
                     "cvar", i, &hc))
            continue;
        oc += is_ours(name);
        if (list)
            fprintf(list, "CVAR %d %s\n", i, name);
    }
    for (int i = 0; i < ncat; i++) {
        char name[256];
        if (!info_ok(category_name(i, name, sizeof name), "category", i,
                     &hcat))
            continue;
        ocat += is_ours(name);
        if (list)
            fprintf(list, "CATEGORY %d %s\n", i, name);
    }
    printf("MPIT_COUNTS rank=%d pvars=%d cvars=%d categories=%d "
           "ours_pvars=%d ours_cvars=%d ours_categories=%d "
           "invalid_pvars=%d invalid_cvars=%d invalid_categories=%d\n",
           world_rank, np, nc, ncat, op, oc, ocat, hp, hc, hcat);
}

/* Looks a library cvar (and pvar, if the library has any) up by name and
 * reads the cvar when it is an unbound integer. */
static void library_lookup(void)
{
    int nc = 0, np = 0;
    CHECK(MPI_T_cvar_get_num(&nc));
    CHECK(MPI_T_pvar_get_num(&np));
    int found = 0;
    for (int i = 0; i < nc && !found; i++) {
        char name[256];
        int bind, scope, idx = -1;
        MPI_Datatype dt;
        if (cvar_name(i, name, sizeof name, &bind, &dt, &scope) !=
                MPI_SUCCESS ||
            is_ours(name))
            continue;
        found = 1;
        int err = MPI_T_cvar_get_index(name, &idx);
        if (err != MPI_SUCCESS || idx != i) {
            fail("lib_cvar name=%s get_index err=%d index=%d want=%d", name,
                 err, idx, i);
            break;
        }
        if (bind == MPI_T_BIND_NO_OBJECT && dt == MPI_INT) {
            MPI_T_cvar_handle h;
            int count = 0, value = 0;
            err = MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
            if (err == MPI_SUCCESS && count == 1)
                err = MPI_T_cvar_read(h, &value);
            if (err == MPI_SUCCESS) {
                MPI_T_cvar_handle_free(&h);
                ok("lib_cvar name=%s index=%d value=%d", name, i, value);
            } else
                fail("lib_cvar name=%s read err=%d", name, err);
        } else
            ok("lib_cvar name=%s index=%d", name, i);
    }
    if (!found)
        printf("LIVE_INFO rank=%d the library has no cvar\n", world_rank);

    found = 0;
    for (int i = 0; i < np && !found; i++) {
        struct pvar_info p;
        int idx = -1;
        if (pvar_info(i, &p) != MPI_SUCCESS || is_ours(p.name))
            continue;
        found = 1;
        int err = MPI_T_pvar_get_index(p.name, p.var_class, &idx);
        if (err != MPI_SUCCESS || idx != i)
            fail("lib_pvar name=%s get_index err=%d index=%d want=%d", p.name,
                 err, idx, i);
        else
            ok("lib_pvar name=%s index=%d", p.name, i);
    }
    if (!found)
        printf("LIVE_INFO rank=%d the library has no pvar\n", world_rank);
}

static int skipped_by_prefix(const char *name)
{
    for (int k = 0; k < nskip; k++)
        if (strncmp(name, skip_prefix[k], strlen(skip_prefix[k])) == 0)
            return 1;
    return 0;
}

/* A SWEEP_FAIL line: step of the sweep failed on variable name. */
static void sweep_fail(const char *name, const char *step, int err,
                       int *nfailed)
{
    printf("SWEEP_FAIL rank=%d name=%s step=%s err=%d\n", world_rank, name,
           step, err);
    ++*nfailed;
}

/* Reads every pvar once. */
static void sweep(void)
{
    int np = 0, nread = 0, nskipped = 0, nfailed = 0, ours_read = 0;
    MPI_T_pvar_session s;
    MPI_Comm world = MPI_COMM_WORLD;
    CHECK(MPI_T_pvar_get_num(&np));
    CHECK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < np; i++) {
        struct pvar_info p;
        MPI_T_pvar_handle h;
        int count = 0, size = 0, err, skip;
        if ((err = pvar_info(i, &p)) != MPI_SUCCESS) {
            if (mpit_inactive(err)) {
                printf("SWEEP_SKIP rank=%d index=%d reason=invalid\n",
                       world_rank, i);
                nskipped++;
            } else {
                printf("SWEEP_FAIL rank=%d index=%d step=get_info err=%d\n",
                       world_rank, i, err);
                nfailed++;
            }
            continue;
        }
        if (skipped_by_prefix(p.name)) {
            printf("SWEEP_SKIP rank=%d name=%s reason=prefix\n", world_rank,
                   p.name);
            nskipped++;
            continue;
        }
        void *obj = mpit_bind_object(p.bind, &world, &skip);
        if (skip) {
            printf("SWEEP_SKIP rank=%d name=%s reason=bind bind=%d\n",
                   world_rank, p.name, p.bind);
            nskipped++;
            continue;
        }
        if ((err = MPI_T_pvar_handle_alloc(s, i, obj, &h, &count)) !=
            MPI_SUCCESS) {
            sweep_fail(p.name, "handle_alloc", err, &nfailed);
            continue;
        }
        if ((err = MPI_Type_size(p.dt, &size)) != MPI_SUCCESS || size < 1)
            size = 8;
        void *buf = calloc((size_t)(count > 0 ? count : 1), (size_t)size);
        if (!buf)
            die("calloc", MPI_ERR_NO_MEM);
        const char *step = pvar_read_once(s, h, p.continuous, buf, &err);
        if (step)
            sweep_fail(p.name, step, err, &nfailed);
        else {
            nread++;
            ours_read += is_ours(p.name);
        }
        free(buf);
        if ((err = MPI_T_pvar_handle_free(s, &h)) != MPI_SUCCESS)
            sweep_fail(p.name, "handle_free", err, &nfailed);
    }
    CHECK(MPI_T_pvar_session_free(&s));
    printf("SWEEP rank=%d pvars=%d read=%d skipped=%d failed=%d ours_read=%d\n",
           world_rank, np, nread, nskipped, nfailed, ours_read);
}

/* A handle on one of our variables, read as unsigned 64-bit integers. */
struct var {
    const char *name;
    int index, count;
    MPI_T_pvar_handle h;
    unsigned long long v[64];
};

static int var_open(MPI_T_pvar_session s, struct var *x, const char *name,
                    int var_class, MPI_Comm *comm)
{
    struct pvar_info p;
    int size = 0, err;
    x->name = name;
    if ((err = MPI_T_pvar_get_index(name, var_class, &x->index)) !=
        MPI_SUCCESS) {
        fail("get_index %s err=%d", name, err);
        return -1;
    }
    if (pvar_info(x->index, &p) != MPI_SUCCESS) {
        fail("get_info %s", name);
        return -1;
    }
    MPI_Type_size(p.dt, &size);
    if (size != 8) {
        fail("%s: datatype of %d bytes, want an 8-byte integer", name, size);
        return -1;
    }
    if ((comm != NULL) != (p.bind == MPI_T_BIND_MPI_COMM)) {
        fail("%s: bind=%d", name, p.bind);
        return -1;
    }
    if ((err = MPI_T_pvar_handle_alloc(s, x->index, comm, &x->h, &x->count)) !=
        MPI_SUCCESS) {
        fail("handle_alloc %s err=%d", name, err);
        return -1;
    }
    if (x->count < 1 || x->count > 64) {
        fail("%s: count=%d", name, x->count);
        return -1;
    }
    if (!p.continuous && (err = MPI_T_pvar_start(s, x->h)) != MPI_SUCCESS) {
        fail("start %s err=%d", name, err);
        return -1;
    }
    return 0;
}

static int var_read(MPI_T_pvar_session s, struct var *x)
{
    int err = MPI_T_pvar_read(s, x->h, x->v);
    if (err != MPI_SUCCESS)
        fail("read %s err=%d", x->name, err);
    return err;
}

/* The second thread: reads pvar_mpi_send_calls on MPI_COMM_WORLD in its own
 * session until told to stop, checking that it never goes down, then reads
 * once more. */
struct reader {
    int index;
    int stop;  /* main to reader, under mu */
    int ready; /* reader to main, under mu: its handle exists (or failed) */
    pthread_mutex_t mu;
    pthread_cond_t ready_cv;
    long long reads, went_down;
    unsigned long long last, final;
    int err;
};

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_Comm world = MPI_COMM_WORLD;
    int count = 0, stop = 0;
    unsigned long long v = 0;
    struct pvar_info p;
    if ((r->err = pvar_info(r->index, &p)) == MPI_SUCCESS &&
        (r->err = MPI_T_pvar_session_create(&s)) == MPI_SUCCESS &&
        (r->err = MPI_T_pvar_handle_alloc(s, r->index, &world, &h, &count)) ==
            MPI_SUCCESS &&
        !p.continuous)
        r->err = MPI_T_pvar_start(s, h);
    pthread_mutex_lock(&r->mu);
    r->ready = 1;
    pthread_cond_signal(&r->ready_cv);
    pthread_mutex_unlock(&r->mu);
    if (r->err != MPI_SUCCESS)
        return NULL;
    while (!stop) {
        pthread_mutex_lock(&r->mu);
        stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if ((r->err = MPI_T_pvar_read(s, h, &v)) != MPI_SUCCESS)
            return NULL;
        if (v < r->last)
            r->went_down++;
        r->last = v;
        r->reads++;
    }
    /* stop was seen before this last read: every send of main is in it. */
    r->final = v;
    MPI_T_pvar_handle_free(s, &h);
    r->err = MPI_T_pvar_session_free(&s);
    return NULL;
}

/* Traffic on MPI_COMM_WORLD whose effect on our variables is checked
 * exactly after every iteration. */
static void live_checks(int iters, int n, int threaded)
{
    MPI_T_pvar_session s;
    MPI_Comm world = MPI_COMM_WORLD;
    struct var send_calls, send_bytes, coll_calls, peer_msgs, wait_calls;
    int right = (world_rank + 1) % world_size;
    int left = (world_rank - 1 + world_size) % world_size;
    int *sbuf = calloc((size_t)n, sizeof(int));
    int *rbuf = calloc((size_t)n, sizeof(int));
    if (!sbuf || !rbuf)
        die("calloc", MPI_ERR_NO_MEM);

    /* A first use of MPI_COMM_WORLD, so that its instances exist. */
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(MPI_T_pvar_session_create(&s));
    if (var_open(s, &send_calls, "pvar_mpi_send_calls",
                 MPI_T_PVAR_CLASS_COUNTER, &world) ||
        var_open(s, &send_bytes, "pvar_mpi_send_bytes",
                 MPI_T_PVAR_CLASS_AGGREGATE, &world) ||
        var_open(s, &coll_calls, "pvar_mpi_coll_calls",
                 MPI_T_PVAR_CLASS_COUNTER, &world) ||
        var_open(s, &peer_msgs, "pvar_mpi_peer_send_msgs",
                 MPI_T_PVAR_CLASS_COUNTER, NULL) ||
        var_open(s, &wait_calls, "pvar_mpi_wait_calls",
                 MPI_T_PVAR_CLASS_COUNTER, NULL))
        return;
    if (send_calls.count != 1 || coll_calls.count != 15 ||
        peer_msgs.count != world_size || wait_calls.count != 1) {
        fail("counts send_calls=%d coll_calls=%d peer_send_msgs=%d "
             "wait_calls=%d",
             send_calls.count, coll_calls.count, peer_msgs.count,
             wait_calls.count);
        return;
    }
    ok("handles send_calls(world) send_bytes(world) coll_calls(world)[15] "
       "peer_send_msgs[%d] wait_calls",
       world_size);
    if (var_read(s, &send_calls) || var_read(s, &send_bytes) ||
        var_read(s, &coll_calls) || var_read(s, &peer_msgs) ||
        var_read(s, &wait_calls))
        return;
    /* A handle of a COUNTER or AGGREGATE counts from its allocation (MPI_T:
     * its starting value is 0), so the barrier before it is not in it. */
    unsigned long long barriers0 = coll_calls.v[0];
    unsigned long long allreduce0 = coll_calls.v[3];
    unsigned long long peer0 = peer_msgs.v[right];
    unsigned long long wait0 = wait_calls.v[0];
    if (send_calls.v[0] != 0 || send_bytes.v[0] != 0 || barriers0 != 0 ||
        allreduce0 != 0 || peer0 != 0 || wait0 != 0) {
        fail("at allocation: send_calls=%llu send_bytes=%llu barrier=%llu "
             "allreduce=%llu peer_send_msgs[%d]=%llu wait_calls=%llu (want 0)",
             send_calls.v[0], send_bytes.v[0], barriers0, allreduce0, right,
             peer0, wait0);
        return;
    }
    ok("start: every handle reads 0");

    struct reader rd;
    pthread_t tid;
    memset(&rd, 0, sizeof rd);
    rd.index = send_calls.index;
    pthread_mutex_init(&rd.mu, NULL);
    pthread_cond_init(&rd.ready_cv, NULL);
    if (threaded && pthread_create(&tid, NULL, reader_main, &rd) != 0) {
        fail("pthread_create");
        threaded = 0;
    }
    /* The reader's handle must exist before the first send. */
    pthread_mutex_lock(&rd.mu);
    while (threaded && !rd.ready)
        pthread_cond_wait(&rd.ready_cv, &rd.mu);
    pthread_mutex_unlock(&rd.mu);

    int good = 1;
    unsigned long long msg_bytes = (unsigned long long)n * sizeof(int);
    for (int it = 1; it <= iters && good; it++) {
        MPI_Request req[2];
        MPI_Status sts[2], st;
        double x = 1.0, y = 0.0;
        CHECK(MPI_Sendrecv(sbuf, n, MPI_INT, right, 1, rbuf, n, MPI_INT, left,
                           1, MPI_COMM_WORLD, &st));
        CHECK(MPI_Irecv(rbuf, n, MPI_INT, left, 2, MPI_COMM_WORLD, &req[0]));
        CHECK(MPI_Isend(sbuf, n, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]));
        CHECK(MPI_Waitall(2, req, sts));
        CHECK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        if (var_read(s, &send_calls) || var_read(s, &send_bytes) ||
            var_read(s, &coll_calls) || var_read(s, &peer_msgs) ||
            var_read(s, &wait_calls)) {
            good = 0;
            break;
        }
        unsigned long long want_sends = 2ull * (unsigned long long)it;
        if (send_calls.v[0] != want_sends ||
            send_bytes.v[0] != want_sends * msg_bytes ||
            coll_calls.v[3] != allreduce0 + (unsigned long long)it ||
            coll_calls.v[0] != barriers0 ||
            peer_msgs.v[right] != peer0 + want_sends ||
            wait_calls.v[0] != wait0 + (unsigned long long)it) {
            fail("iteration %d: send_calls=%llu (want %llu) send_bytes=%llu "
                 "(want %llu) allreduce=%llu (want %llu) barrier=%llu (want "
                 "%llu) peer_send_msgs[%d]=%llu (want %llu) wait_calls=%llu "
                 "(want %llu)",
                 it, send_calls.v[0], want_sends, send_bytes.v[0],
                 want_sends * msg_bytes, coll_calls.v[3],
                 allreduce0 + (unsigned long long)it, coll_calls.v[0],
                 barriers0, right, peer_msgs.v[right], peer0 + want_sends,
                 wait_calls.v[0], wait0 + (unsigned long long)it);
            good = 0;
        }
    }
    if (good)
        ok("grew exactly over %d iterations send_calls=%llu send_bytes=%llu "
           "peer_send_msgs[%d]=%llu",
           iters, send_calls.v[0], send_bytes.v[0], right, peer_msgs.v[right]);

    if (threaded) {
        pthread_mutex_lock(&rd.mu);
        rd.stop = 1;
        pthread_mutex_unlock(&rd.mu);
        pthread_join(tid, NULL);
        if (rd.err != MPI_SUCCESS)
            fail("reader thread MPI_T error %d", rd.err);
        else if (rd.went_down || rd.final != send_calls.v[0] || rd.reads < 1)
            fail("reader thread reads=%lld went_down=%lld final=%llu (want "
                 "%llu)",
                 rd.reads, rd.went_down, rd.final, send_calls.v[0]);
        else
            ok("thread reads=%lld monotonic final=%llu", rd.reads, rd.final);
    }
    pthread_mutex_destroy(&rd.mu);
    pthread_cond_destroy(&rd.ready_cv);

    /* A communicator of its own: its instance counts only its traffic. */
    MPI_Comm dup;
    struct var dup_sends;
    unsigned long long world_before = send_calls.v[0];
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* Its instance is made at its first use; the handle counts from its
     * allocation. */
    CHECK(MPI_Barrier(dup));
    int dup_open = var_open(s, &dup_sends, "pvar_mpi_send_calls",
                            MPI_T_PVAR_CLASS_COUNTER, &dup) == 0;
    for (int k = 0; k < 3; k++) {
        MPI_Status st;
        CHECK(MPI_Sendrecv(sbuf, n, MPI_INT, right, 3, rbuf, n, MPI_INT, left,
                           3, dup, &st));
    }
    if (dup_open && var_read(s, &dup_sends) == 0 &&
        var_read(s, &send_calls) == 0) {
        if (dup_sends.v[0] == 3 && send_calls.v[0] == world_before)
            ok("dup send_calls=3 world unchanged=%llu", world_before);
        else
            fail("dup send_calls=%llu (want 3), world %llu (want %llu)",
                 dup_sends.v[0], send_calls.v[0], world_before);
        CHECK(MPI_T_pvar_handle_free(s, &dup_sends.h));
    }
    CHECK(MPI_Comm_free(&dup));

    /* Our control variable and category are there too. */
    int ci = -1, cat = -1;
    if (MPI_T_cvar_get_index("pvar_mpi_report", &ci) != MPI_SUCCESS)
        fail("cvar pvar_mpi_report not found");
    else {
        MPI_T_cvar_handle ch;
        int count = 0, value = -1;
        if (MPI_T_cvar_handle_alloc(ci, NULL, &ch, &count) == MPI_SUCCESS &&
            count == 1 && MPI_T_cvar_read(ch, &value) == MPI_SUCCESS) {
            ok("cvar pvar_mpi_report=%d", value);
            MPI_T_cvar_handle_free(&ch);
        } else
            fail("cvar pvar_mpi_report could not be read");
    }
    if (MPI_T_category_get_index("pvar_mpi", &cat) != MPI_SUCCESS)
        fail("category pvar_mpi not found");
    else {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, nc = 0, np = 0, ns = 0;
        CHECK(MPI_T_category_get_info(cat, name, &nl, desc, &dl, &nc, &np,
                                      &ns));
        if (ns < 4)
            fail("category pvar_mpi has %d subcategories, want 4", ns);
        else
            ok("category pvar_mpi cvars=%d pvars=%d subcategories=%d", nc, np,
               ns);
    }
    MPI_T_pvar_session_free(&s);
    free(sbuf);
    free(rbuf);
}

#if MPI_VERSION >= 4
static void on_event_cb(MPI_T_event_instance e, MPI_T_event_registration r,
                        MPI_T_cb_safety s, void *u)
{
    (void)e, (void)r, (void)s, (void)u;
}

/* The info object of one of pvar's events' registrations (MPI 4.1: a new
 * object holding the hints in effect; pvar keeps none): a real, empty
 * MPI_Info of the library, freed with MPI_Info_free; for the handle and
 * for a callback. */
static void event_info_checks(void)
{
    int index, err;
    MPI_T_event_registration reg;
    if ((err = MPI_T_event_get_index("pvar_engine_handle_free", &index)) != MPI_SUCCESS ||
        (err = MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &reg)) != MPI_SUCCESS ||
        (err = MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                             NULL, on_event_cb)) != MPI_SUCCESS) {
        fail("event registration for the info checks err=%d", err);
        return;
    }
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    int nkeys[2] = {-1, -1};
    if ((err = MPI_T_event_handle_get_info(reg, &infos[0])) != MPI_SUCCESS ||
        (err = MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE,
                                             &infos[1])) != MPI_SUCCESS)
        fail("event get_info err=%d", err);
    else if (infos[0] == MPI_INFO_NULL || infos[1] == MPI_INFO_NULL)
        fail("event get_info returned MPI_INFO_NULL (handle %d, callback %d)",
             infos[0] == MPI_INFO_NULL, infos[1] == MPI_INFO_NULL);
    else if (infos[0] == infos[1])
        fail("event get_info returned the same info object twice");
    else if (MPI_Info_get_nkeys(infos[0], &nkeys[0]) != MPI_SUCCESS ||
             MPI_Info_get_nkeys(infos[1], &nkeys[1]) != MPI_SUCCESS ||
             MPI_Info_free(&infos[0]) != MPI_SUCCESS ||
             MPI_Info_free(&infos[1]) != MPI_SUCCESS)
        fail("event info objects are not the library's");
    else
        ok("event info objects new nkeys=%d,%d", nkeys[0], nkeys[1]);
    if ((err = MPI_T_event_handle_free(reg, NULL, NULL)) != MPI_SUCCESS)
        fail("event handle_free err=%d", err);
}
#endif

int main(int argc, char **argv)
{
    int iters = 5, n = 64, expect_ours = 0, do_sweep = 0, late = 0;
    const char *list_path = NULL;
    int provided = 0, tprovided = 0, idx = -1;
    for (int a = 1; a < argc; a++) {
        if (nskip < 16 && opt_str(argc, argv, &a, "--skip-prefix",
                                  &skip_prefix[nskip]))
            nskip++;
        else if (!opt_int(argc, argv, &a, "-i", &iters) &&
                 !opt_int(argc, argv, &a, "-n", &n) &&
                 !opt_flag(argv[a], "--expect-ours", &expect_ours) &&
                 !opt_flag(argv[a], "--sweep", &do_sweep) &&
                 !opt_str(argc, argv, &a, "--list", &list_path) &&
                 !opt_flag(argv[a], "--mpit-late", &late)) {
            fprintf(stderr, "usage: live_tool [-i ITERS] [-n COUNT] "
                            "[--expect-ours] [--sweep] [--list FILE] "
                            "[--mpit-late] [--skip-prefix P]...\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    int err = MPI_SUCCESS;
    if (!late)
        err = MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprovided);
    if (err != MPI_SUCCESS) {
        printf("LIVE_FAIL rank=? MPI_T_init_thread err=%d\n", err);
        return 1;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (late)
        CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &tprovided));
    example_ranks();
    printf("LIVE_INFO rank=%d mpi_t_thread=%d mpi_thread=%d multiple=%d\n",
           world_rank, tprovided, provided, MPI_THREAD_MULTIPLE);

    FILE *list = NULL;
    if (list_path && world_rank == 0 && !(list = fopen(list_path, "w")))
        fail("cannot write %s", list_path);
    counts(list);
    if (list && fclose(list) != 0)
        fail("cannot write %s", list_path);
    library_lookup();
    int ours = MPI_T_pvar_get_index("pvar_mpi_send_calls",
                                    MPI_T_PVAR_CLASS_COUNTER,
                                    &idx) == MPI_SUCCESS;
    if (ours) {
        live_checks(iters, n, tprovided == MPI_THREAD_MULTIPLE);
#if MPI_VERSION >= 4
        event_info_checks();
#endif
    } else if (expect_ours)
        fail("pvar_mpi_send_calls is not a performance variable (is the "
             "interposer preloaded?)");
    else
        printf("LIVE_INFO rank=%d no pvar_mpi variables (not preloaded)\n",
               world_rank);
    if (do_sweep)
        sweep();

    /* MPI_T_finalize before MPI_Finalize: Open MPI 4.1.4 crashes (segfault)
     * in MPI_T_finalize called after MPI_Finalize when MPI_T_init_thread
     * came before MPI_Init. */
    if ((err = MPI_T_finalize()) != MPI_SUCCESS)
        fail("MPI_T_finalize err=%d", err);
    printf("LIVE_DONE rank=%d ok=%d fail=%d\n", world_rank, oks, fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
