/*
 * mpit_sweep.c — an MPI_T tool's full sweep, as a plain MPI program.
 *
 * Touches every performance variable, control variable and category
 * through MPI_T_* (whatever serves them: the MPI library alone, or the
 * merged MPI_T of a preloaded libpvar_mpi.so):
 *
 *   - every pvar: get_info (MPI_T_ERR_INVALID_INDEX, or Open MPI's
 *     MPI_T_ERR_INVALID, for a variable no longer active: counted as
 *     inactive); in one session, handle_alloc (MPI_COMM_WORLD
 *     for communicator-bound variables, NULL for unbound ones; other
 *     bindings are skipped and counted), start unless continuous, read
 *     into a buffer sized from the datatype and count, stop, free;
 *     enumerations: get_info and every item;
 *   - every cvar: get_info, handle_alloc (same binding rule), read, free
 *     (Open MPI: not the UCX variables, whose read crashes Open MPI 4.1);
 *   - every category: get_info, get_cvars / get_pvars / get_categories,
 *     every index in range (inactive ones counted);
 *   - MPI_T_PVAR_ALL_HANDLES: start and stop of all handles of a session;
 *   - name lookups (pvar with its class, cvar, category) of one library
 *     variable and one pvar variable (pvar_mpi_* if there is one, else
 *     pvar_*) come back as the same index.
 *
 * Output (rank 0): "MPIT pvars=<n> cvars=<n> categories=<n>", then
 * "SWEEP_OK pvars_read=<n> skipped=<n> cvars_read=<n> inactive=<n>" or, on any
 * rank,
 * "SWEEP_FAIL <what>" and a nonzero exit status.
 *
 * Build: mpicc -O2 -o mpit_sweep mpit_sweep.c   (no link to pvar)
 * Run:   mpiexec -n 2 ./mpit_sweep
 *        mpiexec -n 2 -x LD_PRELOAD=/abs/libpvar_mpi.so ./mpit_sweep  (Open MPI)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static int failed;

static void fail(const char *what, int index, int rc)
{
    printf("SWEEP_FAIL rank %d: %s (index %d, rc %d)\n", rank, what, index, rc);
    fflush(stdout);
    failed = 1;
}

/* The size in bytes of one element of an MPI_T datatype. */
static size_t element_size(MPI_Datatype dt)
{
    if (dt == MPI_INT || dt == MPI_UNSIGNED)
        return 4;
    if (dt == MPI_UNSIGNED_LONG)
        return sizeof(unsigned long);
    if (dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_COUNT || dt == MPI_DOUBLE)
        return 8;
    if (dt == MPI_CHAR)
        return 1;
    int size = 0;
    if (MPI_Type_size(dt, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (size_t)size;
}

static int is_class(int c)
{
    return c == MPI_T_PVAR_CLASS_STATE || c == MPI_T_PVAR_CLASS_LEVEL ||
           c == MPI_T_PVAR_CLASS_SIZE || c == MPI_T_PVAR_CLASS_PERCENTAGE ||
           c == MPI_T_PVAR_CLASS_HIGHWATERMARK || c == MPI_T_PVAR_CLASS_LOWWATERMARK ||
           c == MPI_T_PVAR_CLASS_COUNTER || c == MPI_T_PVAR_CLASS_AGGREGATE ||
           c == MPI_T_PVAR_CLASS_TIMER || c == MPI_T_PVAR_CLASS_GENERIC;
}

static int is_verbosity(int v)
{
    return v == MPI_T_VERBOSITY_USER_BASIC || v == MPI_T_VERBOSITY_USER_DETAIL ||
           v == MPI_T_VERBOSITY_USER_ALL || v == MPI_T_VERBOSITY_TUNER_BASIC ||
           v == MPI_T_VERBOSITY_TUNER_DETAIL || v == MPI_T_VERBOSITY_TUNER_ALL ||
           v == MPI_T_VERBOSITY_MPIDEV_BASIC || v == MPI_T_VERBOSITY_MPIDEV_DETAIL ||
           v == MPI_T_VERBOSITY_MPIDEV_ALL;
}

/* The object argument of handle_alloc for a binding; NULL with *skip set
 * for bindings the sweep does not cover. */
static void *object_for(int bind, MPI_Comm *comm, int *skip)
{
    *skip = 0;
    if (bind == MPI_T_BIND_NO_OBJECT)
        return NULL;
    if (bind == MPI_T_BIND_MPI_COMM)
        return comm;
    *skip = 1;
    return NULL;
}

static void sweep_enum(MPI_T_enum e, int index)
{
    int num = 0, rc;
    char name[256];
    int len = sizeof name;
    if ((rc = MPI_T_enum_get_info(e, &num, name, &len)) != MPI_SUCCESS) {
        fail("enum_get_info", index, rc);
        return;
    }
    for (int k = 0; k < num; k++) {
        int value;
        len = sizeof name;
        if ((rc = MPI_T_enum_get_item(e, k, &value, name, &len)) != MPI_SUCCESS) {
            fail("enum_get_item", index, rc);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    int provided, rc;
    if ((rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) != MPI_SUCCESS) {
        printf("SWEEP_FAIL MPI_T_init_thread (rc %d)\n", rc);
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm comm = MPI_COMM_WORLD;

    int npvars = -1, ncvars = -1, ncats = -1;
    if ((rc = MPI_T_pvar_get_num(&npvars)) != MPI_SUCCESS)
        fail("pvar_get_num", -1, rc);
    if ((rc = MPI_T_cvar_get_num(&ncvars)) != MPI_SUCCESS)
        fail("cvar_get_num", -1, rc);
    if ((rc = MPI_T_category_get_num(&ncats)) != MPI_SUCCESS)
        fail("category_get_num", -1, rc);
    if (rank == 0) {
        printf("MPIT pvars=%d cvars=%d categories=%d\n", npvars, ncvars, ncats);
        fflush(stdout);
    }

    int pvars_read = 0, cvars_read = 0, skipped = 0, inactive = 0;
    int lib_pvar = -1, lib_pvar_class = 0, our_pvar = -1, our_pvar_class = 0, our_is_mpi = 0;
    char lib_pvar_name[256] = "", our_pvar_name[256] = "";

    /* ---- performance variables ---- */
    MPI_T_pvar_session session;
    if ((rc = MPI_T_pvar_session_create(&session)) != MPI_SUCCESS)
        fail("pvar_session_create", -1, rc);
    for (int i = 0; i < npvars && !failed; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype dt;
        MPI_T_enum e;
        rc = MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &dt, &e, desc,
                                 &desc_len, &bind, &readonly, &continuous, &atomic);
        if (rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID) {
            /* No longer active (Open MPI: a component's variable after the
             * component was closed). */
            inactive++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("pvar_get_info", i, rc);
            break;
        }
        if (name_len < 2 || !is_class(var_class) || !is_verbosity(verbosity)) {
            fail("pvar_get_info: name, class or verbosity", i, 0);
            break;
        }
        if (e != MPI_T_ENUM_NULL)
            sweep_enum(e, i);
        int is_ours = strncmp(name, "pvar_", 5) == 0;
        if (!is_ours && lib_pvar < 0) {
            lib_pvar = i;
            lib_pvar_class = var_class;
            snprintf(lib_pvar_name, sizeof lib_pvar_name, "%s", name);
        }
        int is_mpi = strncmp(name, "pvar_mpi_", 9) == 0;
        if (is_ours && (our_pvar < 0 || (is_mpi && !our_is_mpi))) {
            our_pvar = i;
            our_pvar_class = var_class;
            our_is_mpi = is_mpi;
            snprintf(our_pvar_name, sizeof our_pvar_name, "%s", name);
        }

        int skip;
        void *obj = object_for(bind, &comm, &skip);
        if (skip) {
            skipped++;
            continue;
        }
        MPI_T_pvar_handle h;
        int count = 0;
        if ((rc = MPI_T_pvar_handle_alloc(session, i, obj, &h, &count)) != MPI_SUCCESS) {
            fail("pvar_handle_alloc", i, rc);
            break;
        }
        size_t size = element_size(dt);
        if (size == 0 || count < 0) {
            fail("pvar datatype or count", i, count);
            break;
        }
        void *buf = calloc(count > 0 ? (size_t)count : 1, size);
        if (!continuous && (rc = MPI_T_pvar_start(session, h)) != MPI_SUCCESS) {
            fail("pvar_start", i, rc);
            free(buf);
            break;
        }
        if ((rc = MPI_T_pvar_read(session, h, buf)) != MPI_SUCCESS) {
            fail("pvar_read", i, rc);
            free(buf);
            break;
        }
        pvars_read++;
        if (!continuous && (rc = MPI_T_pvar_stop(session, h)) != MPI_SUCCESS) {
            fail("pvar_stop", i, rc);
            free(buf);
            break;
        }
        free(buf);
        if ((rc = MPI_T_pvar_handle_free(session, &h)) != MPI_SUCCESS ||
            h != MPI_T_PVAR_HANDLE_NULL) {
            fail("pvar_handle_free", i, rc);
            break;
        }
    }

    /* MPI_T_PVAR_ALL_HANDLES: handles of every unbound pvar, started and
     * stopped at once. */
    if (!failed) {
        MPI_T_pvar_handle *hs = calloc(npvars > 0 ? (size_t)npvars : 1, sizeof *hs);
        int nh = 0;
        for (int i = 0; i < npvars && !failed; i++) {
            int bind, count;
            rc = MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind,
                                     NULL, NULL, NULL);
            if (rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID)
                continue;
            if (rc != MPI_SUCCESS) {
                fail("pvar_get_info (bind only)", i, rc);
                break;
            }
            if (bind != MPI_T_BIND_NO_OBJECT)
                continue;
            if ((rc = MPI_T_pvar_handle_alloc(session, i, NULL, &hs[nh], &count)) !=
                MPI_SUCCESS) {
                fail("pvar_handle_alloc (all handles)", i, rc);
                break;
            }
            nh++;
        }
        if (!failed && (rc = MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES)) != MPI_SUCCESS)
            fail("pvar_start(MPI_T_PVAR_ALL_HANDLES)", -1, rc);
        if (!failed && (rc = MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES)) != MPI_SUCCESS)
            fail("pvar_stop(MPI_T_PVAR_ALL_HANDLES)", -1, rc);
        free(hs);
    }
    if ((rc = MPI_T_pvar_session_free(&session)) != MPI_SUCCESS ||
        session != MPI_T_PVAR_SESSION_NULL)
        fail("pvar_session_free", -1, rc);

    /* ---- control variables ---- */
    int lib_cvar = -1, our_cvar = -1;
    char lib_cvar_name[256] = "", our_cvar_name[256] = "";
    for (int i = 0; i < ncvars && !failed; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum e;
        rc = MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &e, desc, &desc_len, &bind,
                                 &scope);
        if (rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID) {
            inactive++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("cvar_get_info", i, rc);
            break;
        }
        if (name_len < 2 || !is_verbosity(verbosity)) {
            fail("cvar_get_info: name or verbosity", i, 0);
            break;
        }
        if (e != MPI_T_ENUM_NULL)
            sweep_enum(e, i);
        int is_ours = strncmp(name, "pvar_", 5) == 0;
        if (!is_ours && lib_cvar < 0) {
            lib_cvar = i;
            snprintf(lib_cvar_name, sizeof lib_cvar_name, "%s", name);
        }
        if (is_ours && our_cvar < 0) {
            our_cvar = i;
            snprintf(our_cvar_name, sizeof our_cvar_name, "%s", name);
        }
        int skip;
        void *obj = object_for(bind, &comm, &skip);
#ifdef OPEN_MPI
        /* Open MPI 4.1 reads the UCX common variables (opal_common_ucx_*
         * and their pml_ucx_* / osc_ucx_* synonyms) from the storage of a
         * library it has unloaded once the UCX components were closed: a
         * segmentation fault in PMPI_T_cvar_read, with or without pvar
         * (fixed upstream in 2021: "invalid or discarded cvar, ignore"). */
        if (strstr(name, "ucx_") != NULL)
            skip = 1;
#endif
        if (skip) {
            skipped++;
            continue;
        }
        MPI_T_cvar_handle h;
        int count = 0;
        if ((rc = MPI_T_cvar_handle_alloc(i, obj, &h, &count)) != MPI_SUCCESS) {
            fail("cvar_handle_alloc", i, rc);
            break;
        }
        size_t size = element_size(dt);
        if (size == 0 || count < 0) {
            fail("cvar datatype or count", i, count);
            break;
        }
        void *buf = calloc((count > 0 ? (size_t)count : 1) + 1, size);
        rc = MPI_T_cvar_read(h, buf);
        if (!is_ours && (rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID)) {
            /* A library variable that went inactive (Open MPI). */
            inactive++;
            free(buf);
            MPI_T_cvar_handle_free(&h);
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("cvar_read", i, rc);
            free(buf);
            break;
        }
        free(buf);
        cvars_read++;
        if ((rc = MPI_T_cvar_handle_free(&h)) != MPI_SUCCESS || h != MPI_T_CVAR_HANDLE_NULL) {
            fail("cvar_handle_free", i, rc);
            break;
        }
    }

    /* ---- categories ---- */
    int lib_cat = -1, our_cat = -1;
    char lib_cat_name[256] = "", our_cat_name[256] = "";
    for (int i = 0; i < ncats && !failed; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc;
        int nc, np, nk;
        rc = MPI_T_category_get_info(i, name, &name_len, desc, &desc_len, &nc, &np, &nk);
        if (rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID) {
            inactive++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("category_get_info", i, rc);
            break;
        }
        int is_ours = strncmp(name, "pvar_", 5) == 0;
        if (!is_ours && lib_cat < 0) {
            lib_cat = i;
            snprintf(lib_cat_name, sizeof lib_cat_name, "%s", name);
        }
        if (is_ours && our_cat < 0) {
            our_cat = i;
            snprintf(our_cat_name, sizeof our_cat_name, "%s", name);
        }
        int n = nc + np + nk;
        int *idx = malloc((n > 0 ? (size_t)n : 1) * sizeof *idx);
        if ((nc > 0 && (rc = MPI_T_category_get_cvars(i, nc, idx)) != MPI_SUCCESS) ||
            (np > 0 && (rc = MPI_T_category_get_pvars(i, np, idx + nc)) != MPI_SUCCESS) ||
            (nk > 0 && (rc = MPI_T_category_get_categories(i, nk, idx + nc + np)) != MPI_SUCCESS)) {
            fail("category_get_cvars/pvars/categories", i, rc);
            free(idx);
            break;
        }
        for (int k = 0; k < n; k++) {
            int limit = k < nc ? ncvars : k < nc + np ? npvars : ncats;
            if (idx[k] < 0 || idx[k] >= limit) {
                fail("category member index out of range", i, idx[k]);
                break;
            }
        }
        free(idx);
    }
    int stamp;
    if (!failed && (rc = MPI_T_category_changed(&stamp)) != MPI_SUCCESS)
        fail("category_changed", -1, rc);

    /* ---- name lookups round-trip ---- */
    int got;
    if (!failed && lib_pvar >= 0 &&
        (MPI_T_pvar_get_index(lib_pvar_name, lib_pvar_class, &got) != MPI_SUCCESS ||
         got != lib_pvar))
        fail("pvar_get_index of a library pvar", lib_pvar, got);
    if (!failed && our_pvar >= 0 &&
        (MPI_T_pvar_get_index(our_pvar_name, our_pvar_class, &got) != MPI_SUCCESS ||
         got != our_pvar))
        fail("pvar_get_index of a pvar pvar", our_pvar, got);
    if (!failed && lib_cvar >= 0 &&
        (MPI_T_cvar_get_index(lib_cvar_name, &got) != MPI_SUCCESS || got != lib_cvar))
        fail("cvar_get_index of a library cvar", lib_cvar, got);
    if (!failed && our_cvar >= 0 &&
        (MPI_T_cvar_get_index(our_cvar_name, &got) != MPI_SUCCESS || got != our_cvar))
        fail("cvar_get_index of a pvar cvar", our_cvar, got);
    if (!failed && lib_cat >= 0 &&
        (MPI_T_category_get_index(lib_cat_name, &got) != MPI_SUCCESS || got != lib_cat))
        fail("category_get_index of a library category", lib_cat, got);
    if (!failed && our_cat >= 0 &&
        (MPI_T_category_get_index(our_cat_name, &got) != MPI_SUCCESS || got != our_cat))
        fail("category_get_index of a pvar category", our_cat, got);
    if (!failed && MPI_T_pvar_get_index("pvar_no_such_variable", MPI_T_PVAR_CLASS_COUNTER,
                                        &got) != MPI_T_ERR_INVALID_NAME)
        fail("pvar_get_index of an unknown name is not MPI_T_ERR_INVALID_NAME", -1, got);

    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any_failed)
        printf("SWEEP_OK pvars_read=%d skipped=%d cvars_read=%d inactive=%d\n", pvars_read,
               skipped, cvars_read, inactive);
    fflush(stdout);
    /* MPI_T_finalize first: Open MPI 4.1 crashes in an MPI_T_finalize
     * after MPI_Finalize. */
    if ((rc = MPI_T_finalize()) != MPI_SUCCESS && !any_failed) {
        printf("SWEEP_FAIL rank %d: MPI_T_finalize (rc %d)\n", rank, rc);
        any_failed = 1;
    }
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
