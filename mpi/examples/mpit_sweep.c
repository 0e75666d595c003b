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
#define EXAMPLE_NAME "mpit_sweep"
#include "example_common.h"

static int failed;

static void fail(const char *what, int index, int rc)
{
    printf("SWEEP_FAIL rank %d: %s (index %d, rc %d)\n", world_rank, what, index, rc);
    fflush(stdout);
    failed = 1;
}

/* The first variable or category of a kind the sweep met, for the name
 * lookups. */
struct found {
    int index, var_class; /* index -1: none */
    char name[256];
};

static void found_set(struct found *f, int index, int var_class, const char *name)
{
    f->index = index;
    f->var_class = var_class;
    snprintf(f->name, sizeof f->name, "%s", name);
}

/* Keeps the first one met. */
static void found_first(struct found *f, int index, int var_class, const char *name)
{
    if (f->index < 0)
        found_set(f, index, var_class, name);
}

enum kind { PVAR, CVAR, CATEGORY };

/* The name lookup of f (of kind k) gives back f's index (if there is an f
 * and nothing failed yet). */
static void check_lookup(const char *what, enum kind k, const struct found *f)
{
    int got = -1, rc;
    if (failed || f->index < 0)
        return;
    if (k == PVAR)
        rc = MPI_T_pvar_get_index(f->name, f->var_class, &got);
    else if (k == CVAR)
        rc = MPI_T_cvar_get_index(f->name, &got);
    else
        rc = MPI_T_category_get_index(f->name, &got);
    if (rc != MPI_SUCCESS || got != f->index)
        fail(what, f->index, got);
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
    example_init(&argc, &argv, 1);
    MPI_Comm comm = MPI_COMM_WORLD;

    int npvars = -1, ncvars = -1, ncats = -1;
    if ((rc = MPI_T_pvar_get_num(&npvars)) != MPI_SUCCESS)
        fail("pvar_get_num", -1, rc);
    if ((rc = MPI_T_cvar_get_num(&ncvars)) != MPI_SUCCESS)
        fail("cvar_get_num", -1, rc);
    if ((rc = MPI_T_category_get_num(&ncats)) != MPI_SUCCESS)
        fail("category_get_num", -1, rc);
    if (world_rank == 0) {
        printf("MPIT pvars=%d cvars=%d categories=%d\n", npvars, ncvars, ncats);
        fflush(stdout);
    }

    int pvars_read = 0, cvars_read = 0, skipped = 0, inactive = 0;
    struct found lib_pvar = {-1, 0, ""}, our_pvar = {-1, 0, ""};
    int our_is_mpi = 0;

    /* ---- performance variables ---- */
    MPI_T_pvar_session session;
    if ((rc = MPI_T_pvar_session_create(&session)) != MPI_SUCCESS)
        fail("pvar_session_create", -1, rc);
    for (int i = 0; i < npvars && !failed; i++) {
        struct pvar_info p;
        rc = pvar_info(i, &p);
        if (mpit_inactive(rc)) {
            /* No longer active (Open MPI: a component's variable after the
             * component was closed). */
            inactive++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("pvar_get_info", i, rc);
            break;
        }
        if (p.name_len < 2 || !is_class(p.var_class) || !is_verbosity(p.verbosity)) {
            fail("pvar_get_info: name, class or verbosity", i, 0);
            break;
        }
        if (p.et != MPI_T_ENUM_NULL)
            sweep_enum(p.et, i);
        int ours = strncmp(p.name, "pvar_", 5) == 0;
        if (!ours)
            found_first(&lib_pvar, i, p.var_class, p.name);
        int is_mpi = strncmp(p.name, "pvar_mpi_", 9) == 0;
        if (ours && (our_pvar.index < 0 || (is_mpi && !our_is_mpi))) {
            found_set(&our_pvar, i, p.var_class, p.name);
            our_is_mpi = is_mpi;
        }

        int skip;
        void *obj = mpit_bind_object(p.bind, &comm, &skip);
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
        size_t size = element_size(p.dt);
        if (size == 0 || count < 0) {
            fail("pvar datatype or count", i, count);
            break;
        }
        void *buf = calloc(count > 0 ? (size_t)count : 1, size);
        const char *step = pvar_read_once(session, h, p.continuous, buf, &rc);
        free(buf);
        if (step) {
            char what[32];
            snprintf(what, sizeof what, "pvar_%s", step);
            fail(what, i, rc);
            break;
        }
        pvars_read++;
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
            if (mpit_inactive(rc))
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
    struct found lib_cvar = {-1, 0, ""}, our_cvar = {-1, 0, ""};
    for (int i = 0; i < ncvars && !failed; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum e;
        rc = MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &e, desc, &desc_len, &bind,
                                 &scope);
        if (mpit_inactive(rc)) {
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
        int ours = strncmp(name, "pvar_", 5) == 0;
        found_first(ours ? &our_cvar : &lib_cvar, i, 0, name);
        int skip;
        void *obj = mpit_bind_object(bind, &comm, &skip);
#ifdef OPEN_MPI
        /* Open MPI 4.1 reads the UCX common variables (opal_common_ucx_*
         * and their pml_ucx_* / osc_ucx_* synonyms) from the storage of a
         * library it has unloaded once the UCX components were closed: a
         * segmentation fault in PMPI_T_cvar_read, with or without pvar
         * (fixed upstream in 2021: "invalid or discarded cvar, ignore").
         * The OFI common variables (opal_common_ofi_* and their btl_ofi_* /
         * mtl_ofi_* synonyms) are read the same way: whether the unloaded storage is still mapped depends on the
         * address-space layout, so the crash comes and goes (seen in 4 of
         * 6 preloaded 3- and 4-rank runs, none of 6 plain ones). */
        if (strstr(name, "ucx_") != NULL || strstr(name, "ofi_") != NULL)
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
        if (!ours && mpit_inactive(rc)) {
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
    struct found lib_cat = {-1, 0, ""}, our_cat = {-1, 0, ""};
    for (int i = 0; i < ncats && !failed; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc;
        int nc, np, nk;
        rc = MPI_T_category_get_info(i, name, &name_len, desc, &desc_len, &nc, &np, &nk);
        if (mpit_inactive(rc)) {
            inactive++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            fail("category_get_info", i, rc);
            break;
        }
        found_first(strncmp(name, "pvar_", 5) == 0 ? &our_cat : &lib_cat, i, 0, name);
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
    check_lookup("pvar_get_index of a library pvar", PVAR, &lib_pvar);
    check_lookup("pvar_get_index of a pvar pvar", PVAR, &our_pvar);
    check_lookup("cvar_get_index of a library cvar", CVAR, &lib_cvar);
    check_lookup("cvar_get_index of a pvar cvar", CVAR, &our_cvar);
    check_lookup("category_get_index of a library category", CATEGORY, &lib_cat);
    check_lookup("category_get_index of a pvar category", CATEGORY, &our_cat);
    int got = -1;
    if (!failed && MPI_T_pvar_get_index("pvar_no_such_variable", MPI_T_PVAR_CLASS_COUNTER,
                                        &got) != MPI_T_ERR_INVALID_NAME)
        fail("pvar_get_index of an unknown name is not MPI_T_ERR_INVALID_NAME", -1, got);

    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (world_rank == 0 && !any_failed)
        printf("SWEEP_OK pvars_read=%d skipped=%d cvars_read=%d inactive=%d\n", pvars_read,
               skipped, cvars_read, inactive);
    fflush(stdout);
    /* MPI_T_finalize first: Open MPI 4.1 crashes in an MPI_T_finalize
     * after MPI_Finalize. */
    if ((rc = MPI_T_finalize()) != MPI_SUCCESS && !any_failed) {
        printf("SWEEP_FAIL rank %d: MPI_T_finalize (rc %d)\n", world_rank, rc);
        any_failed = 1;
    }
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
