/*
 * A varlist-like tool: lists every performance variable, control variable,
 * category and enumeration, and reads every cvar and pvar (bound ones bound
 * to MPI_COMM_WORLD). Variables come from the sample C component and from
 * the engine itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"
#include "sample_component.h"

#define MAX_ENUMS 64
static MPI_T_enum enums[MAX_ENUMS];
static int num_enums;

static void note_enum(MPI_T_enum e) {
    int k;
    if (e == MPI_T_ENUM_NULL) return;
    for (k = 0; k < num_enums; k++)
        if (enums[k] == e) return;
    if (num_enums < MAX_ENUMS) enums[num_enums++] = e;
}

static const char *class_name(int c) {
    static const char *n[] = {"?", "STATE", "LEVEL", "SIZE", "PERCENTAGE", "HIGHWATERMARK",
                              "LOWWATERMARK", "COUNTER", "AGGREGATE", "TIMER", "GENERIC"};
    return c >= 1 && c <= 10 ? n[c] : "?";
}

static size_t type_size(MPI_Datatype d) {
    if (d == MPI_INT || d == MPI_UNSIGNED) return 4;
    if (d == MPI_CHAR) return 1;
    return 8;
}

static void print_values(MPI_Datatype d, const void *buf, int count) {
    int k;
    if (d == MPI_CHAR) {
        printf("\"%.*s\"", count, (const char *)buf);
        return;
    }
    for (k = 0; k < count && k < 8; k++) {
        if (k) printf(", ");
        if (d == MPI_INT) printf("%d", ((const int *)buf)[k]);
        else if (d == MPI_UNSIGNED) printf("%u", ((const unsigned *)buf)[k]);
        else if (d == MPI_UNSIGNED_LONG) printf("%lu", ((const unsigned long *)buf)[k]);
        else if (d == MPI_UNSIGNED_LONG_LONG) printf("%llu", ((const unsigned long long *)buf)[k]);
        else if (d == MPI_COUNT) printf("%lld", (long long)((const MPI_Count *)buf)[k]);
        else if (d == MPI_DOUBLE) printf("%g", ((const double *)buf)[k]);
    }
    if (count > 8) printf(", ...");
}

static void list_pvars(void) {
    int n, i, listed = 0, read = 0;
    MPI_T_pvar_session s;
    MPI_Comm comm = MPI_COMM_WORLD;
    CHECK_RC(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    printf("%d performance variables\n", n);
    for (i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic, count, rc;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_pvar_handle h;
        void *buf;
        rc = MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &e, desc, &dl, &bind, &ro,
                                 &cont, &atomic);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc) continue;
        listed++;
        note_enum(e);
        printf("  pvar %2d %-28s %-13s verb=0x%02x bind=%d ro=%d cont=%d atomic=%d%s\n      %s\n",
               i, name, class_name(cls), verb, bind, ro, cont, atomic,
               e ? " (enum)" : "", desc);
        rc = MPI_T_pvar_handle_alloc(s, i, &comm, &h, &count);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc) continue;
        CHECK(count >= 1);
        if (!cont) CHECK_RC(MPI_T_pvar_start(s, h), MPI_SUCCESS);
        buf = calloc((size_t)count, type_size(dt));
        rc = MPI_T_pvar_read(s, h, buf);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc == MPI_SUCCESS) {
            read++;
            printf("      = ");
            print_values(dt, buf, count);
            printf("\n");
        }
        free(buf);
    }
    CHECK(listed == n);
    CHECK(read == n);
    CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

static void list_cvars(void) {
    int n, i, read = 0;
    MPI_Comm comm = MPI_COMM_WORLD;
    CHECK_RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    printf("%d control variables\n", n);
    for (i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope, count, rc;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_cvar_handle h;
        void *buf;
        rc = MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &e, desc, &dl, &bind, &scope);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc) continue;
        note_enum(e);
        printf("  cvar %2d %-28s scope=%d bind=%d verb=0x%02x%s\n      %s\n", i, name, scope,
               bind, verb, e ? " (enum)" : "", desc);
        rc = MPI_T_cvar_handle_alloc(i, &comm, &h, &count);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc) continue;
        buf = calloc((size_t)count, type_size(dt));
        rc = MPI_T_cvar_read(h, buf);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc == MPI_SUCCESS) {
            read++;
            printf("      = ");
            print_values(dt, buf, dt == MPI_CHAR ? (int)strlen(buf) : count);
            printf("\n");
        }
        free(buf);
        CHECK_RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
        CHECK(h == MPI_T_CVAR_HANDLE_NULL);
    }
    CHECK(read == n);
}

static void list_categories(void) {
    int n, i, npv, ncv;
    CHECK_RC(MPI_T_pvar_get_num(&npv), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_get_num(&ncv), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_num(&n), MPI_SUCCESS);
    printf("%d categories\n", n);
    for (i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, nc, np, ncat, k, rc;
        int idx[64];
        rc = MPI_T_category_get_info(i, name, &nl, desc, &dl, &nc, &np, &ncat);
        CHECK_RC(rc, MPI_SUCCESS);
        if (rc) continue;
        printf("  category %d %s (%d cvars, %d pvars, %d categories): %s\n", i, name, nc, np,
               ncat, desc);
        CHECK(nc <= 64 && np <= 64 && ncat <= 64);
        CHECK_RC(MPI_T_category_get_cvars(i, nc, idx), MPI_SUCCESS);
        for (k = 0; k < nc; k++) CHECK(idx[k] >= 0 && idx[k] < ncv);
        CHECK_RC(MPI_T_category_get_pvars(i, np, idx), MPI_SUCCESS);
        for (k = 0; k < np; k++) CHECK(idx[k] >= 0 && idx[k] < npv);
        CHECK_RC(MPI_T_category_get_categories(i, ncat, idx), MPI_SUCCESS);
        for (k = 0; k < ncat; k++) CHECK(idx[k] >= 0 && idx[k] < n && idx[k] != i);
        {
            /* Only the engine's category holds events (its two own). */
            int ne = -1, nev = 0;
            CHECK_RC(MPI_T_category_get_num_events(i, &ne), MPI_SUCCESS);
            CHECK(ne == (strcmp(name, "pvar_engine") == 0 ? 2 : 0));
            CHECK_RC(MPI_T_event_get_num(&nev), MPI_SUCCESS);
            CHECK(ne <= 64);
            CHECK_RC(MPI_T_category_get_events(i, ne, idx), MPI_SUCCESS);
            for (k = 0; k < ne; k++) CHECK(idx[k] >= 0 && idx[k] < nev);
        }
    }
}

static void list_enums(void) {
    int k;
    printf("%d enumerations\n", num_enums);
    for (k = 0; k < num_enums; k++) {
        char name[256];
        int nl = sizeof name, num = 0, j;
        CHECK_RC(MPI_T_enum_get_info(enums[k], &num, name, &nl), MPI_SUCCESS);
        CHECK(num >= 1);
        printf("  enum %s:", name);
        for (j = 0; j < num; j++) {
            char item[256];
            int il = sizeof item, value;
            CHECK_RC(MPI_T_enum_get_item(enums[k], j, &value, item, &il), MPI_SUCCESS);
            printf(" %s=%d", item, value);
        }
        printf("\n");
    }
}

/* The callback variables of the sample component, beyond listing. */
static void check_callbacks(struct sample *smp) {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_Comm world = MPI_COMM_WORLD, self = MPI_COMM_SELF;
    int count = 0;
    double ratio = 0;
    unsigned long long vals[3] = {0, 0, 0}, neu[3] = {7, 8, 9};
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, smp->callback_ratio_index, NULL, &h, &count),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s, h, &ratio), MPI_SUCCESS);
    CHECK(ratio == 0.75);
    /* per-object count from the notify callback */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, smp->callback_setting_index, &world, &h, &count),
             MPI_SUCCESS);
    CHECK(count == 3);
    CHECK_RC(MPI_T_pvar_read(s, h, vals), MPI_SUCCESS);
    CHECK(vals[0] == 0 && vals[1] == 10 && vals[2] == 20);
    /* read-only: a write could only reach the component, shared by every
     * session; the component's values are untouched */
    CHECK_RC(MPI_T_pvar_write(s, h, neu), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK_RC(MPI_T_pvar_reset(s, h), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK(sample_settings[0] == 0 && sample_settings[2] == 20);
    CHECK_RC(MPI_T_pvar_handle_free(s, &h), MPI_SUCCESS);
    CHECK(sample_notified[PVAR_NOTIFY_BIND] >= 1 && sample_notified[PVAR_NOTIFY_FREE] >= 1);
    /* no elements for MPI_COMM_SELF: refused */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, smp->callback_setting_index, &self, &h, &count),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

int main(void) {
    struct sample s;
    int provided, n;
    sample_component_init(&s);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_SINGLE);
    list_pvars();
    list_cvars();
    list_categories();
    list_enums();
    check_callbacks(&s);
    CHECK(num_enums >= 2); /* sample_state_enum, sample_protocol_enum */
    /* Source 0 (the engine's clock) and the engine's two event types. */
    CHECK_RC(MPI_T_source_get_num(&n), MPI_SUCCESS);
    CHECK(n == 1);
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    CHECK(n == 2);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("varlist");
}
