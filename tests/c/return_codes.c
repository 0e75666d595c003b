/*
 * Every row of the MPI_T return-code table (MPI 3.1 Table 14.5, MPI 4.1
 * rules), including freed, stale, foreign-session and made-up handles and
 * sessions. Rows that cannot be provoked in a test are listed at the end:
 * MPI_T_ERR_MEMORY (out of memory), MPI_T_ERR_CANNOT_INIT (only when the CPU
 * lacks lock-free 128-bit atomics), MPI_T_ERR_OUT_OF_HANDLES /
 * OUT_OF_SESSIONS (2^24 slots per table), and MPI_T_ERR_INVALID_ITEM
 * (deprecated: out-of-range items give MPI_T_ERR_INVALID_INDEX, checked).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"
#include "sample_component.h"

static int pvar_index_of(const char *name, int cls) {
    int i = -1;
    CHECK_RC(MPI_T_pvar_get_index(name, cls, &i), MPI_SUCCESS);
    return i;
}

static int cvar_index_of(const char *name) {
    int i = -1;
    CHECK_RC(MPI_T_cvar_get_index(name, &i), MPI_SUCCESS);
    return i;
}

/* Every function before init (and after the last finalize). */
static void all_not_initialized(void) {
    const int E = MPI_T_ERR_NOT_INITIALIZED;
    int n, i;
    char name[16];
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
    MPI_T_event_registration er = NULL;
    MPI_Count c;
    int len = sizeof name;
    CHECK_RC(MPI_T_finalize(), E);
    CHECK_RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, name, &len), E);
    CHECK_RC(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &n, name, &len), E);
    CHECK_RC(MPI_T_cvar_get_num(&n), E);
    CHECK_RC(MPI_T_cvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), E);
    CHECK_RC(MPI_T_cvar_get_index("x", &i), E);
    CHECK_RC(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n), E);
    CHECK_RC(MPI_T_cvar_handle_free(&ch), E);
    CHECK_RC(MPI_T_cvar_read(ch, &n), E);
    CHECK_RC(MPI_T_cvar_write(ch, &n), E);
    CHECK_RC(MPI_T_pvar_get_num(&n), E);
    CHECK_RC(MPI_T_pvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL),
             E);
    CHECK_RC(MPI_T_pvar_get_index("x", MPI_T_PVAR_CLASS_COUNTER, &i), E);
    CHECK_RC(MPI_T_pvar_session_create(&s), E);
    CHECK_RC(MPI_T_pvar_session_free(&s), E);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, 0, NULL, &h, &n), E);
    CHECK_RC(MPI_T_pvar_handle_free(s, &h), E);
    CHECK_RC(MPI_T_pvar_start(s, h), E);
    CHECK_RC(MPI_T_pvar_stop(s, h), E);
    CHECK_RC(MPI_T_pvar_read(s, h, &n), E);
    CHECK_RC(MPI_T_pvar_write(s, h, &n), E);
    CHECK_RC(MPI_T_pvar_reset(s, h), E);
    CHECK_RC(MPI_T_pvar_readreset(s, h, &n), E);
    CHECK_RC(MPI_T_category_get_num(&n), E);
    CHECK_RC(MPI_T_category_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL), E);
    CHECK_RC(MPI_T_category_get_index("x", &i), E);
    CHECK_RC(MPI_T_category_get_cvars(0, 1, &i), E);
    CHECK_RC(MPI_T_category_get_pvars(0, 1, &i), E);
    CHECK_RC(MPI_T_category_get_categories(0, 1, &i), E);
    CHECK_RC(MPI_T_category_changed(&n), E);
    CHECK_RC(MPI_T_category_get_num_events(0, &n), E);
    CHECK_RC(MPI_T_category_get_events(0, 1, &i), E);
    CHECK_RC(MPI_T_source_get_num(&n), E);
    CHECK_RC(MPI_T_source_get_timestamp(0, &c), E);
    CHECK_RC(MPI_T_event_get_num(&n), E);
    CHECK_RC(MPI_T_event_get_index("x", &i), E);
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &er), E);
    /* The PMPI_T_ names behave the same. */
    CHECK_RC(PMPI_T_pvar_get_num(&n), E);
    CHECK_RC(PMPI_T_pvar_read(s, h, &n), E);
}

int main(void) {
    struct sample smp;
    int provided, n, i, count, np, nc, ncat;
    MPI_T_pvar_session s, s2, sfreed;
    MPI_T_pvar_handle h, hfree, hstale, hforeign, hro, hcont, hnonatomic;
    MPI_T_cvar_handle ch, chfreed;
    MPI_Comm comm = MPI_COMM_WORLD;
    unsigned long long v = 0;
    char buf[64];

    sample_component_init(&smp);

    /* ---- MPI_T_ERR_NOT_INITIALIZED -------------------------------- */
    all_not_initialized();

    /* ---- MPI_T_ERR_INVALID for init itself ------------------------ */
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);

    /* ---- the thread level ------------------------------------------ */
    /* The level required is the level provided, neither downgraded nor
     * upgraded (MPICH and Open MPI do the same; Open MPI's
     * mpi_t_level_no_downgrade test checks it). */
    {
        const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                              MPI_THREAD_MULTIPLE};
        int k;
        for (k = 0; k < 4; k++) {
            provided = -1;
            CHECK_RC(MPI_T_init_thread(levels[k], &provided), MPI_SUCCESS);
            CHECK(provided == levels[k]);
            /* Nested: each init provides its own request. */
            provided = -1;
            CHECK_RC(MPI_T_init_thread(levels[3 - k], &provided), MPI_SUCCESS);
            CHECK(provided == levels[3 - k]);
            CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
            CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
        }
    }
    /* A level that is none of the four: MPI_ERR_ARG (MPICH's class),
     * nothing counted, *provided untouched. */
    {
        const int bad[] = {-1, 1, 3, 1023, 1025, 4095, 4097, 12345, INT_MIN, INT_MAX};
        int k;
        CHECK(MPI_ERR_ARG == 13 && PVAR_ABI_MPI_ERR_ARG == 13);
        for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
            provided = -7;
            CHECK_RC(MPI_T_init_thread(bad[k], &provided), MPI_ERR_ARG);
            CHECK(provided == -7);
            CHECK_RC(PMPI_T_init_thread(bad[k], &provided), MPI_ERR_ARG);
            CHECK_RC(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
        }
        CHECK_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
        CHECK(strcmp(pvar_error_string(MPI_ERR_ARG),
                     "MPI_ERR_ARG: invalid argument of some other kind") == 0);
    }

    /* ---- init / finalize counting --------------------------------- */
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_SINGLE);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_get_num(&n), MPI_SUCCESS); /* still initialised */
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    all_not_initialized();                         /* after the last finalize */
    CHECK_RC(PMPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);

    CHECK_RC(MPI_T_pvar_get_num(&np), MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_get_num(&nc), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_num(&ncat), MPI_SUCCESS);

    /* ---- MPI_T_ERR_INVALID: bad parameters ------------------------- */
    CHECK_RC(MPI_T_pvar_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_changed(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_get_index(NULL, MPI_T_PVAR_CLASS_COUNTER, &i), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_get_index("sample_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, NULL),
             MPI_T_ERR_INVALID);
    /* A class that is not one of the ten: no variable has it (the standard's
     * wording; MPICH's code too). */
    {
        const int classes[] = {0, 11, 99, -1, INT_MIN};
        int k;
        for (k = 0; k < 5; k++)
            CHECK_RC(MPI_T_pvar_get_index("sample_msgs_sent", classes[k], &i),
                     MPI_T_ERR_INVALID_NAME);
    }
    CHECK_RC(MPI_T_cvar_get_index(NULL, &i), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_index("sample_comm", NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_session_create(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_session_free(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK(s != MPI_T_PVAR_SESSION_NULL);
    i = pvar_index_of("sample_msgs_sent", MPI_T_PVAR_CLASS_COUNTER);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, i, NULL, NULL, &count), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, i, NULL, &h, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_handle_free(s, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count), MPI_SUCCESS); /* unbound: obj ignored */
    CHECK_RC(MPI_T_pvar_read(s, h, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_readreset(s, h, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_pvar_write(s, h, NULL), MPI_T_ERR_INVALID);
    {
        int q = pvar_index_of("sample_queue_len", MPI_T_PVAR_CLASS_LEVEL);
        MPI_Comm none = MPI_COMM_NULL;
        MPI_T_pvar_handle hq;
        /* A refused allocation leaves a NULL handle and a zero count, so a
         * tool that ignores the code and frees the handle gets an error,
         * not someone else's handle. */
        hq = h;
        count = 7;
        CHECK_RC(MPI_T_pvar_handle_alloc(s, q, NULL, &hq, &count), MPI_T_ERR_INVALID);
        CHECK(hq == MPI_T_PVAR_HANDLE_NULL && count == 0);
        hq = h;
        count = 7;
        CHECK_RC(MPI_T_pvar_handle_alloc(s, np + 5, NULL, &hq, &count), MPI_T_ERR_INVALID_INDEX);
        CHECK(hq == MPI_T_PVAR_HANDLE_NULL && count == 0);
        CHECK_RC(MPI_T_pvar_handle_free(s, &hq), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, q, &none, &hq, &count), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, q, &comm, &hq, &count), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_handle_free(s, &hq), MPI_SUCCESS);
    }
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_EAGER_LIMIT"), NULL, NULL, &count),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_COLL_ALGORITHM"), NULL, &ch, &count),
             MPI_T_ERR_INVALID); /* bound: needs an object */
    CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_PROTOCOL"), NULL, &ch, &count),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_cvar_read(ch, NULL), MPI_T_ERR_INVALID);
    {
        int bad = 17, good = 1;
        CHECK_RC(MPI_T_cvar_write(ch, &bad), MPI_T_ERR_INVALID); /* not an enum item */
        CHECK_RC(MPI_T_cvar_write(ch, &good), MPI_SUCCESS);
        CHECK(pvar_cvar_get_int(smp.protocol) == 1);
    }
    CHECK_RC(MPI_T_cvar_handle_free(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_pvars(0, -1, &i), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_pvars(0, 1, NULL), MPI_T_ERR_INVALID);

    /* ---- MPI_T_ERR_INVALID_INDEX ---------------------------------- */
    {
        const int bad[] = {-1, np, np + 1000, INT_MAX};
        int k;
        for (k = 0; k < 4; k++) {
            MPI_T_pvar_handle hx;
            CHECK_RC(MPI_T_pvar_get_info(bad[k], buf, &n, NULL, NULL, NULL, NULL, NULL, NULL,
                                         NULL, NULL, NULL, NULL),
                     MPI_T_ERR_INVALID_INDEX);
            CHECK_RC(MPI_T_pvar_handle_alloc(s, bad[k], &comm, &hx, &count),
                     MPI_T_ERR_INVALID_INDEX);
        }
    }
    CHECK_RC(MPI_T_cvar_get_info(nc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    {
        MPI_T_cvar_handle cx;
        CHECK_RC(MPI_T_cvar_handle_alloc(nc, &comm, &cx, &count), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_cvar_handle_alloc(-3, &comm, &cx, &count), MPI_T_ERR_INVALID_INDEX);
    }
    CHECK_RC(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_cvars(ncat, 1, &i), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_pvars(-1, 1, &i), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_categories(ncat, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_num_events(ncat, &n), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_category_get_events(ncat, 1, &i), MPI_T_ERR_INVALID_INDEX);
    {
        /* Enumeration items out of range: INVALID_INDEX (never INVALID_ITEM). */
        MPI_T_enum e = MPI_T_ENUM_NULL;
        int num = 0, val;
        CHECK_RC(MPI_T_pvar_get_info(pvar_index_of("sample_state", MPI_T_PVAR_CLASS_STATE), NULL,
                                     NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL, NULL,
                                     NULL),
                 MPI_SUCCESS);
        CHECK(e != MPI_T_ENUM_NULL);
        CHECK_RC(MPI_T_enum_get_info(e, &num, NULL, NULL), MPI_SUCCESS);
        CHECK(num == 3);
        CHECK_RC(MPI_T_enum_get_item(e, num, &val, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_enum_get_item(e, -1, &val, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_enum_get_item(e, 1, NULL, NULL, NULL), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_enum_get_item(e, 1, &val, NULL, NULL), MPI_SUCCESS);
        CHECK(val == 1);
    }
    {
        /* Sources and event types past the last (tests/c/events.c has the rest). */
        int nsrc = 0, nev = 0;
        MPI_Count ts;
        MPI_T_event_registration er;
        CHECK_RC(MPI_T_source_get_num(&nsrc), MPI_SUCCESS);
        CHECK_RC(MPI_T_event_get_num(&nev), MPI_SUCCESS);
        CHECK_RC(MPI_T_source_get_timestamp(nsrc, &ts), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_source_get_info(nsrc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_event_get_info(nev, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                      NULL, NULL),
                 MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_event_handle_alloc(nev, NULL, MPI_INFO_NULL, &er), MPI_T_ERR_INVALID_INDEX);
        CHECK(er == NULL);
    }
    /* A variable whose component was unloaded, and a dropped bound instance. */
    {
        pvar_info pi;
        pvar_var tmp;
        MPI_T_pvar_handle ht, hq;
        int ti, q = pvar_index_of("sample_queue_len", MPI_T_PVAR_CLASS_LEVEL);
        MPI_Comm self = MPI_COMM_SELF;
        unsigned u;
        memset(&pi, 0, sizeof pi);
        pi.name = "errors_unloaded";
        pi.var_class = PVAR_CLASS_COUNTER;
        CHECK_RC(pvar_register(&pi, &tmp), MPI_SUCCESS);
        ti = pvar_var_index(tmp);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, ti, NULL, &ht, &count), MPI_SUCCESS);
        CHECK_RC(pvar_deactivate(ti), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_read(s, ht, &v), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_pvar_start(s, ht), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, ti, NULL, &hq, &count), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(pvar_register(&pi, &tmp), MPI_SUCCESS); /* reloaded: active again */
        CHECK_RC(MPI_T_pvar_read(s, ht, &v), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_handle_free(s, &ht), MPI_SUCCESS);

        CHECK_RC(MPI_T_pvar_handle_alloc(s, q, &self, &hq, &count), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_read(s, hq, &u), MPI_SUCCESS);
        CHECK_RC(pvar_bound_drop(smp.queue, PVAR_OBJECT_COMM_SELF), MPI_SUCCESS);
        CHECK_RC(MPI_T_pvar_read(s, hq, &u), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_pvar_handle_free(s, &hq), MPI_SUCCESS);
    }

    /* Object labels: a bind kind of objects only; NULL forgets. */
    CHECK_RC(pvar_object_label(PVAR_BIND_MPI_COMM, PVAR_OBJECT_COMM_SELF, "MPI_COMM_SELF"),
             MPI_SUCCESS);
    CHECK_RC(pvar_object_label(PVAR_BIND_MPI_COMM, PVAR_OBJECT_COMM_SELF, NULL), MPI_SUCCESS);
    CHECK_RC(pvar_object_label(0, 1, "no object"), MPI_T_ERR_INVALID);
    CHECK_RC(pvar_object_label(-5, 1, "no such kind"), MPI_T_ERR_INVALID);

    /* A dropped bound cvar value. */
    {
        MPI_T_cvar_handle cb;
        unsigned u = 0;
        pvar_cvar self_algo;
        MPI_Comm self = MPI_COMM_SELF;
        int ai = cvar_index_of("SAMPLE_COLL_ALGORITHM");
        CHECK_RC(pvar_bound_cvar_create(smp.algo, PVAR_OBJECT_COMM_SELF, &self_algo),
                 MPI_SUCCESS);
        CHECK_RC(pvar_cvar_set_unsigned(self_algo, 4000000000u), MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_handle_alloc(ai, &self, &cb, &count), MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_read(cb, &u), MPI_SUCCESS);
        CHECK(u == 4000000000u);
        CHECK_RC(pvar_bound_cvar_drop(smp.algo, PVAR_OBJECT_COMM_SELF), MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_read(cb, &u), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(pvar_bound_cvar_drop(smp.algo, PVAR_OBJECT_COMM_SELF), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_cvar_handle_free(&cb), MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_handle_alloc(ai, &self, &cb, &count), MPI_T_ERR_INVALID);
        pvar_cvar_free(self_algo);
    }

    /* ---- MPI_T_ERR_INVALID_NAME ----------------------------------- */
    CHECK_RC(MPI_T_pvar_get_index("no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &i),
             MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_pvar_get_index("sample_msgs_sent", MPI_T_PVAR_CLASS_TIMER, &i),
             MPI_T_ERR_INVALID_NAME); /* right name, wrong class */
    CHECK_RC(MPI_T_pvar_get_index("sample_msgs_sen", MPI_T_PVAR_CLASS_COUNTER, &i),
             MPI_T_ERR_INVALID_NAME); /* a prefix */
    CHECK_RC(MPI_T_cvar_get_index("NO_SUCH_CVAR", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_category_get_index("no_such_category", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_event_get_index("no_such_event", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_pvar_get_index("\xff\xfe", MPI_T_PVAR_CLASS_COUNTER, &i),
             MPI_T_ERR_INVALID_NAME); /* not UTF-8: matches nothing */

    /* ---- MPI_T_ERR_INVALID_HANDLE --------------------------------- */
    /* Freed. */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, i = pvar_index_of("sample_msgs_sent",
                                                          MPI_T_PVAR_CLASS_COUNTER),
                                     NULL, &hfree, &count),
             MPI_SUCCESS);
    hstale = hfree;
    CHECK_RC(MPI_T_pvar_handle_free(s, &hfree), MPI_SUCCESS);
    CHECK(hfree == MPI_T_PVAR_HANDLE_NULL);
    CHECK_RC(MPI_T_pvar_read(s, hstale, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_write(s, hstale, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_start(s, hstale), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_stop(s, hstale), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_reset(s, hstale), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_readreset(s, hstale, &v), MPI_T_ERR_INVALID_HANDLE);
    hfree = hstale;
    CHECK_RC(MPI_T_pvar_handle_free(s, &hfree), MPI_T_ERR_INVALID_HANDLE); /* double free */
    CHECK(hfree == hstale); /* unchanged on error */
    /* Stale: the slot is reused by a new handle; the old value stays invalid. */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count), MPI_SUCCESS);
    CHECK(h != hstale);
    CHECK_RC(MPI_T_pvar_read(s, hstale, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    /* Foreign: a handle of another session. */
    CHECK_RC(MPI_T_pvar_session_create(&s2), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_alloc(s2, i, NULL, &hforeign, &count), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s, hforeign, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_start(s, hforeign), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_handle_free(s, &hforeign), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_pvar_read(s2, hforeign, &v), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s2, h, &v), MPI_T_ERR_INVALID_HANDLE);
    /* Made up, NULL, and MPI_T_PVAR_ALL_HANDLES where it is not allowed. */
    {
        MPI_T_pvar_handle junk[] = {MPI_T_PVAR_HANDLE_NULL, (MPI_T_pvar_handle)(uintptr_t)0x2,
                                    (MPI_T_pvar_handle)(uintptr_t)0xdeadbeef,
                                    (MPI_T_pvar_handle)(uintptr_t)0x7fffffff00000001ULL,
                                    (MPI_T_pvar_handle)(uintptr_t)&v,
                                    (MPI_T_pvar_handle)(uintptr_t)UINTPTR_MAX};
        int k;
        for (k = 0; k < (int)(sizeof junk / sizeof junk[0]); k++) {
            MPI_T_pvar_handle j = junk[k];
            CHECK_RC(MPI_T_pvar_read(s, j, &v), MPI_T_ERR_INVALID_HANDLE);
            CHECK_RC(MPI_T_pvar_start(s, j), MPI_T_ERR_INVALID_HANDLE);
            CHECK_RC(MPI_T_pvar_handle_free(s, &j), MPI_T_ERR_INVALID_HANDLE);
        }
        CHECK_RC(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
        {
            MPI_T_pvar_handle all = MPI_T_PVAR_ALL_HANDLES;
            CHECK_RC(MPI_T_pvar_handle_free(s, &all), MPI_T_ERR_INVALID_HANDLE);
        }
    }
    /* Handles of a freed session are freed with it. */
    CHECK_RC(MPI_T_pvar_session_create(&sfreed), MPI_SUCCESS);
    {
        MPI_T_pvar_handle hs;
        MPI_T_pvar_session keep;
        CHECK_RC(MPI_T_pvar_handle_alloc(sfreed, i, NULL, &hs, &count), MPI_SUCCESS);
        keep = sfreed;
        CHECK_RC(MPI_T_pvar_session_free(&sfreed), MPI_SUCCESS);
        CHECK(sfreed == MPI_T_PVAR_SESSION_NULL);
        CHECK_RC(MPI_T_pvar_read(s, hs, &v), MPI_T_ERR_INVALID_HANDLE);
        sfreed = keep;
    }
    /* Control variable handles. */
    chfreed = ch;
    CHECK_RC(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
    CHECK(ch == MPI_T_CVAR_HANDLE_NULL);
    CHECK_RC(MPI_T_cvar_read(chfreed, &n), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_write(chfreed, &n), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_handle_free(&chfreed), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &n), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_cvar_read((MPI_T_cvar_handle)(uintptr_t)0xabcdef12345ULL, &n),
             MPI_T_ERR_INVALID_HANDLE);
    {
        MPI_T_cvar_handle nul = MPI_T_CVAR_HANDLE_NULL;
        CHECK_RC(MPI_T_cvar_handle_free(&nul), MPI_T_ERR_INVALID_HANDLE);
    }
    /* Enumeration handles: NULL and made-up values. */
    CHECK_RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_enum_get_info((MPI_T_enum)(uintptr_t)0x7777, &n, NULL, NULL),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_enum_get_item((MPI_T_enum)(uintptr_t)UINTPTR_MAX, 0, &n, NULL, NULL),
             MPI_T_ERR_INVALID_HANDLE);
    /* NULL event registrations and instances (tests/c/events.c: the rest). */
    CHECK_RC(MPI_T_event_handle_free(NULL, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_read(NULL, 0, buf), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_register_callback(NULL, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL,
                                           NULL),
             MPI_T_ERR_INVALID_HANDLE);

    /* ---- MPI_T_ERR_INVALID_SESSION -------------------------------- */
    {
        MPI_T_pvar_session junk[] = {MPI_T_PVAR_SESSION_NULL, sfreed,
                                     (MPI_T_pvar_session)(uintptr_t)0x1,
                                     (MPI_T_pvar_session)(uintptr_t)0xfeedface};
        int k;
        for (k = 0; k < 4; k++) {
            MPI_T_pvar_session j = junk[k];
            MPI_T_pvar_handle hx;
            CHECK_RC(MPI_T_pvar_handle_alloc(j, i, NULL, &hx, &count),
                     MPI_T_ERR_INVALID_SESSION);
            CHECK_RC(MPI_T_pvar_read(j, h, &v), MPI_T_ERR_INVALID_SESSION);
            CHECK_RC(MPI_T_pvar_start(j, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
            CHECK_RC(MPI_T_pvar_reset(j, h), MPI_T_ERR_INVALID_SESSION);
            CHECK_RC(MPI_T_pvar_handle_free(j, &h), MPI_T_ERR_INVALID_SESSION);
            CHECK_RC(MPI_T_pvar_session_free(&j), MPI_T_ERR_INVALID_SESSION);
        }
    }

    /* ---- MPI_T_ERR_CVAR_SET_NOT_NOW / SET_NEVER ------------------- */
    {
        MPI_T_cvar_handle cf, cv;
        int seven = 8;
        CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_FROZEN"), NULL, &cf, &count),
                 MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_write(cf, &seven), MPI_T_ERR_CVAR_SET_NOT_NOW);
        pvar_cvar_freeze(smp.frozen, 0);
        CHECK_RC(MPI_T_cvar_write(cf, &seven), MPI_SUCCESS);
        CHECK(pvar_cvar_get_int(smp.frozen) == 8);
        CHECK_RC(MPI_T_cvar_handle_free(&cf), MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_VERSION"), NULL, &cv, &count),
                 MPI_SUCCESS);
        CHECK_RC(MPI_T_cvar_write(cv, "9.9.9"), MPI_T_ERR_CVAR_SET_NEVER);
        CHECK_RC(MPI_T_cvar_handle_free(&cv), MPI_SUCCESS);
        /* and a writable string, with a short literal (never over-read) */
        CHECK_RC(MPI_T_cvar_handle_alloc(cvar_index_of("SAMPLE_PATH"), NULL, &cv, &count),
                 MPI_SUCCESS);
        CHECK(count == 64);
        CHECK_RC(MPI_T_cvar_write(cv, "/x"), MPI_SUCCESS);
        memset(buf, 0, sizeof buf);
        CHECK_RC(MPI_T_cvar_read(cv, buf), MPI_SUCCESS);
        CHECK(strcmp(buf, "/x") == 0);
        CHECK_RC(MPI_T_cvar_handle_free(&cv), MPI_SUCCESS);
    }

    /* ---- MPI_T_ERR_PVAR_NO_WRITE / NO_STARTSTOP / NO_ATOMIC ------- */
    CHECK_RC(MPI_T_pvar_handle_alloc(s, pvar_index_of("sample_pool_size", MPI_T_PVAR_CLASS_SIZE),
                                     NULL, &hro, &count),
             MPI_SUCCESS);
    {
        unsigned u = 1;
        CHECK_RC(MPI_T_pvar_write(s, hro, &u), MPI_T_ERR_PVAR_NO_WRITE);
        CHECK_RC(MPI_T_pvar_reset(s, hro), MPI_T_ERR_PVAR_NO_WRITE);
        CHECK_RC(MPI_T_pvar_start(s, hro), MPI_T_ERR_PVAR_NO_STARTSTOP); /* continuous */
        CHECK_RC(MPI_T_pvar_stop(s, hro), MPI_T_ERR_PVAR_NO_STARTSTOP);
        CHECK_RC(MPI_T_pvar_readreset(s, hro, &u), MPI_T_ERR_PVAR_NO_ATOMIC);
    }
    hcont = hro;
    CHECK_RC(MPI_T_pvar_handle_alloc(s, pvar_index_of("sample_nonatomic",
                                                      MPI_T_PVAR_CLASS_COUNTER),
                                     NULL, &hnonatomic, &count),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_readreset(s, hnonatomic, &v), MPI_T_ERR_PVAR_NO_ATOMIC);
    CHECK_RC(MPI_T_pvar_reset(s, hnonatomic), MPI_SUCCESS); /* writable, just not atomic */
    /* ALL_HANDLES ignores continuous and read-only variables. */
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS); /* already started */
    CHECK_RC(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s, hcont, &n), MPI_SUCCESS);
    /* SUM semantics through C: start, count, readreset, write. */
    CHECK_RC(MPI_T_pvar_start(s, h), MPI_SUCCESS);
    pvar_add(smp.sent, 5);
    CHECK_RC(MPI_T_pvar_readreset(s, h, &v), MPI_SUCCESS);
    CHECK(v == 5);
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    CHECK(v == 0);
    v = 100;
    CHECK_RC(MPI_T_pvar_write(s, h, &v), MPI_SUCCESS);
    pvar_inc(smp.sent);
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    CHECK(v == 101);

    /* ---- MPI_T_ERR_NOT_INITIALIZED after finalize; sessions released */
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED); /* more than init */
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_T_ERR_INVALID_SESSION); /* released by finalize */
    CHECK_RC(MPI_T_pvar_read(s2, hforeign, &v), MPI_T_ERR_INVALID_SESSION);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);

    /* ---- pvar_error_string covers every code ---------------------- */
    {
        int codes[] = {MPI_SUCCESS, MPI_ERR_ARG, MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_NOT_ACCESSIBLE,
                       MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_NOT_SUPPORTED, MPI_T_ERR_MEMORY,
                       MPI_T_ERR_INVALID, MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_ITEM,
                       MPI_T_ERR_INVALID_SESSION, MPI_T_ERR_INVALID_HANDLE,
                       MPI_T_ERR_INVALID_NAME, MPI_T_ERR_OUT_OF_HANDLES,
                       MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_CVAR_SET_NOT_NOW,
                       MPI_T_ERR_CVAR_SET_NEVER, MPI_T_ERR_PVAR_NO_WRITE,
                       MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_ATOMIC};
        int k;
        for (k = 0; k < (int)(sizeof codes / sizeof codes[0]); k++) {
            const char *m = pvar_error_string(codes[k]);
            CHECK(m != NULL && strlen(m) > 10 && strstr(m, "unknown") == NULL);
            CHECK(codes[k] == 0 || (codes[k] > 0 && codes[k] <= MPI_ERR_LASTCODE));
        }
        CHECK(strcmp(pvar_error_string(42), "unknown error code") == 0);
    }

    printf("not provoked (see header comment): MPI_T_ERR_MEMORY, MPI_T_ERR_CANNOT_INIT, "
           "MPI_T_ERR_OUT_OF_HANDLES, MPI_T_ERR_OUT_OF_SESSIONS; MPI_T_ERR_INVALID_ITEM is "
           "never returned\n");
    return summary("return_codes");
}
