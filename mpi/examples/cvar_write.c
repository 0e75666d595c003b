/* cvar_write.c: writes every control variable that MPI_T_cvar_get_info
 * says may be written, and checks that each write is taken (read back
 * equal) or refused exactly where get_info says so — in the manner of
 * MPICH's mpi_t cvarwrite test, which writes an arbitrary value to every
 * unbound cvar and reads it back.
 *
 * After MPI_Init and MPI_T_init_thread, for every unbound cvar (bound
 * ones need an object and are left out, as there):
 *
 *   scope CONSTANT or READONLY   a write of its own value must be refused
 *                                and the value stay;
 *   MPI_INT with an enumeration  every item's value must be taken; a value
 *                                that is no item must be refused with
 *                                MPI_T_ERR_INVALID (pvar's rule for
 *                                enumerated cvars, docs/mpi.md), the value
 *                                unchanged;
 *   MPI_INT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG,
 *   MPI_COUNT, MPI_DOUBLE        a value other than its own must be taken;
 *   MPI_CHAR (fitting 8 KiB)      a string must be taken;
 *
 * then the old value is written back. Every write is a local one and the
 * program makes no communication call in between, so ALL_EQ variables
 * (written with the same value on every rank) are written as the standard
 * asks.
 *
 * Usage: cvar_write [--only-prefix PREFIX]
 *   --only-prefix PREFIX   check only cvars whose names start so (e.g.
 *                          "pvar_" for the interposer's and the engine's
 *                          under a library whose own cvars are not all
 *                          safe to change at run time)
 *
 * Output: "CVAR rank=<r> name=<name> scope=<scope> checked=<written |
 * refused | enumerated>" per cvar checked, "CVAR_ERROR rank=<r>
 * name=<name> <what went wrong>" per fault; then "CVAR_WRITE rank=<r>
 * checked=<n> written=<n> refused_as_said=<n> enumerated=<n> ours=<n>
 * errors=<n>". Exit status 0 when there is no error, 1 otherwise.
 */
#define EXAMPLE_NAME "cvar_write"
#include "example_common.h"

#define MAX_STRING 8192

static int errors;

static void fault(const char *name, const char *fmt, ...)
{
    va_list ap;
    char what[512];
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("CVAR_ERROR rank=%d name=%s %s\n", world_rank, name, what);
    errors++;
}

/* A cvar's value, whatever its datatype (strings up to MAX_STRING). */
union value {
    int i;
    unsigned u;
    unsigned long ul;
    unsigned long long ull;
    MPI_Count c;
    double d;
    char s[MAX_STRING];
};

static int same(MPI_Datatype t, const union value *a, const union value *b)
{
    if (t == MPI_INT)
        return a->i == b->i;
    if (t == MPI_UNSIGNED)
        return a->u == b->u;
    if (t == MPI_UNSIGNED_LONG)
        return a->ul == b->ul;
    if (t == MPI_UNSIGNED_LONG_LONG)
        return a->ull == b->ull;
    if (t == MPI_COUNT)
        return a->c == b->c;
    if (t == MPI_DOUBLE)
        return a->d == b->d;
    return strcmp(a->s, b->s) == 0;
}

/* Another value than `old`, of datatype t. */
static void other(MPI_Datatype t, const union value *old, union value *v)
{
    memset(v, 0, sizeof *v);
    if (t == MPI_INT)
        v->i = old->i == 123 ? 124 : 123;
    else if (t == MPI_UNSIGNED)
        v->u = old->u == 133 ? 134 : 133;
    else if (t == MPI_UNSIGNED_LONG)
        v->ul = old->ul == 1830 ? 1831 : 1830;
    else if (t == MPI_UNSIGNED_LONG_LONG)
        v->ull = old->ull == 11930 ? 11931 : 11930;
    else if (t == MPI_COUNT)
        v->c = old->c == 4242 ? 4243 : 4242;
    else if (t == MPI_DOUBLE)
        v->d = old->d == 0.5 ? 0.25 : 0.5;
    else
        snprintf(v->s, sizeof v->s, "%s", strcmp(old->s, "cvar write test") ? "cvar write test"
                                                                              : "cvar write test 2");
}

/* Writes v and reads it back: 1 if taken, 0 if refused (rc in *rc). */
static int write_read(MPI_T_cvar_handle h, MPI_Datatype t, const union value *v, int *rc,
                      union value *back)
{
    *rc = MPI_T_cvar_write(h, t == MPI_CHAR ? (const void *)v->s : (const void *)v);
    memset(back, 0, sizeof *back);
    MPI_T_cvar_read(h, back);
    return *rc == MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    const char *only = "";
    for (int a = 1; a < argc; a++) {
        if (!opt_str(argc, argv, &a, "--only-prefix", &only)) {
            fprintf(stderr, "usage: cvar_write [--only-prefix PREFIX]\n");
            return 2;
        }
    }
    example_init(&argc, &argv, 1);
    int provided, num;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(MPI_T_cvar_get_num(&num));
    int checked = 0, written = 0, refused = 0, enumerated = 0, ours = 0;
    for (int i = 0; i < num; i++) {
        char name[256];
        int name_len = sizeof name, verbosity, bind, scope;
        MPI_Datatype t;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &t, &e, NULL, NULL, &bind,
                                &scope) != MPI_SUCCESS)
            continue; /* an inactive variable */
        if (bind != MPI_T_BIND_NO_OBJECT || strncmp(name, only, strlen(only)) != 0)
            continue;
        MPI_T_cvar_handle h;
        int count;
        if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS) {
            fault(name, "handle_alloc failed");
            continue;
        }
        int known = t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
                    t == MPI_UNSIGNED_LONG_LONG || t == MPI_COUNT || t == MPI_DOUBLE ||
                    (t == MPI_CHAR && count < MAX_STRING);
        if (!known || (t != MPI_CHAR && count != 1)) {
            MPI_T_cvar_handle_free(&h);
            continue;
        }
        checked++;
        ours += strncasecmp(name, "pvar_", 5) == 0;
        int errors_before = errors;
        const char *how = "written";
        union value old, v, back;
        memset(&old, 0, sizeof old);
        MPI_T_cvar_read(h, t == MPI_CHAR ? (void *)old.s : (void *)&old);
        int rc;
        if (scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY) {
            if (write_read(h, t, &old, &rc, &back))
                fault(name, "read-only (scope %d), yet a write was taken", scope);
            else if (!same(t, &old, &back))
                fault(name, "a refused write changed the value");
            else
                refused++;
            how = "refused";
        } else if (t == MPI_INT && e != MPI_T_ENUM_NULL) {
            enumerated++;
            how = "enumerated";
            int items, len = 0, taken = 1, max = 0;
            char ename[256];
            len = sizeof ename;
            CHECK(MPI_T_enum_get_info(e, &items, ename, &len));
            for (int k = 0; k < items; k++) {
                int value;
                char iname[256];
                len = sizeof iname;
                CHECK(MPI_T_enum_get_item(e, k, &value, iname, &len));
                max = k == 0 || value > max ? value : max;
                memset(&v, 0, sizeof v);
                v.i = value;
                if (!write_read(h, t, &v, &rc, &back) || back.i != value) {
                    fault(name, "item %s (%d) of its enumeration %s: write returned %d, read %d",
                          iname, value, ename, rc, back.i);
                    taken = 0;
                }
            }
            memset(&v, 0, sizeof v);
            v.i = max + 1000;
            if (write_read(h, t, &v, &rc, &back))
                fault(name, "%d is no item of its enumeration %s, yet it was taken", v.i, ename);
            else if (rc != MPI_T_ERR_INVALID && strncmp(name, "pvar_", 5) == 0)
                fault(name, "a value that is no item was refused with %d, not MPI_T_ERR_INVALID",
                      rc);
            else if (back.i == v.i)
                fault(name, "a refused write changed the value");
            written += taken;
        } else {
            other(t, &old, &v);
            if (!write_read(h, t, &v, &rc, &back))
                fault(name, "scope %d says it may be written, yet the write returned %d", scope,
                      rc);
            else if (!same(t, &v, &back))
                fault(name, "a write was taken, yet the value read back differs");
            else
                written++;
        }
        /* The old value back. */
        if (scope != MPI_T_SCOPE_CONSTANT && scope != MPI_T_SCOPE_READONLY &&
            (!write_read(h, t, &old, &rc, &back) || !same(t, &old, &back)))
            fault(name, "the old value could not be written back (%d)", rc);
        if (errors == errors_before)
            printf("CVAR rank=%d name=%s scope=%d checked=%s\n", world_rank, name, scope, how);
        MPI_T_cvar_handle_free(&h);
    }
    printf("CVAR_WRITE rank=%d checked=%d written=%d refused_as_said=%d enumerated=%d ours=%d "
           "errors=%d\n",
           world_rank, checked, written, refused, enumerated, ours, errors);
    fflush(stdout);
    MPI_T_finalize();
    MPI_Finalize();
    return errors > 0;
}
