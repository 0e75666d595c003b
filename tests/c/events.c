/*
 * MPI 4 events through the C interface: every MPI_T_event_* / MPI_T_source_*
 * function and MPI_T_category_get_{num_,}events, every return code each can
 * give (NOT_INITIALIZED before init and after finalize, INVALID_INDEX,
 * INVALID_NAME, INVALID, INVALID_HANDLE, NOT_SUPPORTED), and the semantics a
 * tool relies on: get_info's string and array conventions, which callback a
 * raise picks at each safety requirement and the cb_safety it is given,
 * deferral to a delivery point, dropped handlers, freeing a registration
 * from its own callback, MPI_T_event_copy's layout, events bound to
 * communicators, categories holding events, and the engine's own
 * pvar_engine_handle_alloc / _free events.
 *
 * Not provoked here: MPI_T_ERR_OUT_OF_HANDLES (2^16 registrations:
 * event_limits.c) and MPI_T_ERR_MEMORY.
 *
 * The component side is written against pvar.h (pvar_source_register,
 * pvar_event_register, pvar_event_raise{,_in,_at}, pvar_event_deliver).
 * Every callback runs on the main thread (one thread raises elsewhere and
 * only defers), so CHECK may be used inside callbacks.
 */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

#define NONE MPI_T_CB_REQUIRE_NONE
#define RESTRICTED MPI_T_CB_REQUIRE_MPI_RESTRICTED
#define THREAD_SAFE MPI_T_CB_REQUIRE_THREAD_SAFE
#define SIGNAL_SAFE MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE

static const MPI_T_cb_safety levels[4] = {NONE, RESTRICTED, THREAD_SAFE, SIGNAL_SAFE};

/* Values that are not safety levels (the ABI's are 0x00/0x03/0x0F/0x3F). */
static const int bad_levels[] = {1, 2, 4, 7, 0x10, 0x40, -1, INT_MAX};
#define NBAD_LEVELS ((int)(sizeof bad_levels / sizeof bad_levels[0]))

/* Made-up registration handles: never allocated. */
static MPI_T_event_registration garbage_regs[4];

/* ---- the component ------------------------------------------------------- */

/* The record of "evtest_record": five elements with padding between. */
typedef struct {
    uint64_t bytes; /* 0 */
    int peer;       /* 8 */
    double ratio;   /* 16 */
    char tag;       /* 24 */
    int64_t when;   /* 32 */
} rec_t;

typedef struct {
    int v;
} int_rec;

typedef struct {
    unsigned long long v;
} u64_rec;

static int64_t clock_value = 1000; /* the fake clock's next tick */
static int clock_calls;

/* The evtest_clock source: one tick per call. */
static int64_t fake_clock(void *user_data) {
    clock_calls++;
    return (*(int64_t *)user_data)++;
}

static int src_clk, src_nic;
static pvar_event ev_rec, ev_nic, ev_sel, ev_comm, ev_empty;
static int cat_events, cat_empty;

static const int rec_types[5] = {PVAR_TYPE_UNSIGNED_LONG_LONG, PVAR_TYPE_INT, PVAR_TYPE_DOUBLE,
                                 PVAR_TYPE_CHAR, PVAR_TYPE_COUNT};
static const ptrdiff_t rec_disps[5] = {offsetof(rec_t, bytes), offsetof(rec_t, peer),
                                       offsetof(rec_t, ratio), offsetof(rec_t, tag),
                                       offsetof(rec_t, when)};
static const int int_type[1] = {PVAR_TYPE_INT};
static const int u64_type[1] = {PVAR_TYPE_UNSIGNED_LONG_LONG};
static const ptrdiff_t zero_disp[1] = {0};

static void die(const char *what, int rc) {
    fprintf(stderr, "events: %s failed: %d (%s): %s\n", what, rc, pvar_error_string(rc),
            pvar_last_error() ? pvar_last_error() : "");
    abort();
}

#define OK(call)                            \
    do {                                    \
        int rc_ = (call);                   \
        if (rc_ != MPI_SUCCESS) die(#call, rc_); \
    } while (0)

static pvar_event_info sel_info(void) {
    pvar_event_info i;
    memset(&i, 0, sizeof i);
    i.name = "evtest_select";
    i.num_elements = 1;
    i.datatypes = int_type;
    i.displacements = zero_disp;
    i.extent = sizeof(int_rec);
    return i;
}

/* Before MPI_T_init_thread, as a library's constructor would. */
static void component_init(void) {
    pvar_event_info i;
    pvar_event again;
    int idx = -1;

    OK(pvar_source_register("evtest_clock", "a fake clock: one tick per call",
                            PVAR_SOURCE_ORDERED, 1000, (int64_t)1 << 40, fake_clock, &clock_value,
                            &src_clk));
    OK(pvar_source_register("evtest_nic", NULL, PVAR_SOURCE_UNORDERED, 1000000, INT64_MAX, NULL,
                            NULL, &src_nic));
    CHECK(src_clk >= 1 && src_nic == src_clk + 1);
    /* Refused sources. */
    CHECK_RC(pvar_source_register(NULL, NULL, PVAR_SOURCE_ORDERED, 1, 1, NULL, NULL, &idx),
             MPI_T_ERR_INVALID);
    CHECK_RC(pvar_source_register("evtest_x", NULL, PVAR_SOURCE_ORDERED, 1, 1, NULL, NULL, NULL),
             MPI_T_ERR_INVALID);
    CHECK_RC(pvar_source_register("evtest_x", NULL, 3, 1, 1, NULL, NULL, &idx), MPI_T_ERR_INVALID);
    CHECK_RC(pvar_source_register("evtest_x", NULL, PVAR_SOURCE_ORDERED, -1, 1, NULL, NULL, &idx),
             MPI_T_ERR_INVALID);
    CHECK(pvar_source_register("evtest_x", NULL, PVAR_SOURCE_ORDERED, 0, 1, NULL, NULL, &idx) !=
          MPI_SUCCESS);
    CHECK(pvar_source_register("evtest_clock", NULL, PVAR_SOURCE_ORDERED, 1, 1, NULL, NULL,
                               &idx) != MPI_SUCCESS); /* the name is taken */

    memset(&i, 0, sizeof i);
    i.name = "evtest_record";
    i.description = "a record of five elements";
    i.verbosity = PVAR_VERBOSITY_TUNER_DETAIL;
    i.num_elements = 5;
    i.datatypes = rec_types;
    i.displacements = rec_disps;
    i.extent = sizeof(rec_t);
    i.source = src_clk;
    i.category = "evtest_cat"; /* defined below, after its events */
    OK(pvar_event_register(&i, &ev_rec));

    memset(&i, 0, sizeof i);
    i.name = "evtest_nic_event";
    i.description = "raised with the adapter's own timestamps";
    i.num_elements = 1;
    i.datatypes = int_type;
    i.displacements = zero_disp;
    i.extent = sizeof(int_rec);
    i.source = src_nic;
    i.category = "evtest_cat";
    OK(pvar_event_register(&i, &ev_nic));

    i = sel_info();
    OK(pvar_event_register(&i, &ev_sel));
    /* The same name and metadata: the same event type. */
    OK(pvar_event_register(&i, &again));
    CHECK(again.index == ev_sel.index && again.observed == ev_sel.observed);
    i.description = "other metadata";
    CHECK(pvar_event_register(&i, &again) != MPI_SUCCESS);

    memset(&i, 0, sizeof i);
    i.name = "evtest_comm";
    i.bind = PVAR_BIND_MPI_COMM;
    i.num_elements = 1;
    i.datatypes = u64_type;
    i.displacements = zero_disp;
    i.extent = sizeof(u64_rec);
    OK(pvar_event_register(&i, &ev_comm));

    memset(&i, 0, sizeof i);
    i.name = "evtest_empty";
    OK(pvar_event_register(&i, &ev_empty));

    /* Refused event types. */
    CHECK_RC(pvar_event_register(NULL, &again), MPI_T_ERR_INVALID);
    i = sel_info();
    i.name = "evtest_bad";
    CHECK_RC(pvar_event_register(&i, NULL), MPI_T_ERR_INVALID);
    i.name = NULL;
    CHECK_RC(pvar_event_register(&i, &again), MPI_T_ERR_INVALID);
    i.name = "evtest_bad";
    i.datatypes = NULL;
    CHECK_RC(pvar_event_register(&i, &again), MPI_T_ERR_INVALID);
    i = sel_info();
    i.name = "evtest_bad";
    i.source = 99;
    CHECK(pvar_event_register(&i, &again) != MPI_SUCCESS);
    i.source = 0;
    i.extent = 2; /* an int does not fit */
    CHECK(pvar_event_register(&i, &again) != MPI_SUCCESS);
    i.extent = 200; /* more than 192 bytes */
    CHECK(pvar_event_register(&i, &again) != MPI_SUCCESS);
    {
        const int two_ints[2] = {PVAR_TYPE_INT, PVAR_TYPE_INT};
        const ptrdiff_t overlapping[2] = {0, 2};
        i = sel_info();
        i.name = "evtest_bad";
        i.num_elements = 2;
        i.datatypes = two_ints;
        i.displacements = overlapping;
        i.extent = 8;
        CHECK(pvar_event_register(&i, &again) != MPI_SUCCESS);
    }
    CHECK(!pvar_event_observed(ev_rec) && !pvar_event_observed(ev_sel));

    OK(pvar_category_define("evtest_cat", "events of the test", &cat_events));
    OK(pvar_category_define("evtest_nothing", "a category without events", &cat_empty));
}

/* ---- callbacks ------------------------------------------------------------ */

/* What the generic callback saw, in order (dropped handlers, callbacks and
 * free callbacks all append). */
struct hit {
    char kind; /* 'C' callback, 'D' dropped handler, 'F' free callback */
    int id;    /* *(int *)user_data, or -1 */
    MPI_T_cb_safety safety;
    MPI_T_event_registration reg;
    int value;          /* element 0 (an int) for 'C'; the source for 'D' */
    MPI_Count count;    /* 'D': the count; 'C': the timestamp */
    int rc_read, rc_ts, rc_src;
    int src;
};
static struct hit hits[64];
static int nhits;
static MPI_T_event_instance saved_instance;
static int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};

static struct hit *new_hit(char kind) {
    struct hit *h = &hits[nhits < 63 ? nhits++ : 63];
    memset(h, 0, sizeof *h);
    h->kind = kind;
    return h;
}

static void reset_hits(void) {
    nhits = 0;
    memset(hits, 0, sizeof hits);
}

/* Reads element 0 (an int), the timestamp and the source. */
static void int_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s,
                   void *ud) {
    struct hit *h = new_hit('C');
    h->id = ud ? *(int *)ud : -1;
    h->safety = s;
    h->reg = reg;
    h->rc_read = MPI_T_event_read(inst, 0, &h->value);
    h->rc_ts = MPI_T_event_get_timestamp(inst, &h->count);
    h->rc_src = MPI_T_event_get_source(inst, &h->src);
    saved_instance = inst;
}

static void dropped_cb(MPI_Count count, MPI_T_event_registration reg, int source_index,
                       MPI_T_cb_safety s, void *ud) {
    struct hit *h = new_hit('D');
    h->id = ud ? *(int *)ud : -1;
    h->safety = s;
    h->reg = reg;
    h->value = source_index;
    h->count = count;
}

static int in_callback;
static void free_cb(MPI_T_event_registration reg, MPI_T_cb_safety s, void *ud) {
    struct hit *h = new_hit('F');
    h->id = ud ? *(int *)ud : -1;
    h->safety = s;
    h->reg = reg;
    h->value = in_callback; /* must be 0: the freeing callback has returned */
}

static int valid_level(int s) {
    return s == NONE || s == RESTRICTED || s == THREAD_SAFE || s == SIGNAL_SAFE;
}

static MPI_T_event_registration alloc_reg(pvar_event ev, void *obj) {
    MPI_T_event_registration r = NULL;
    OK(MPI_T_event_handle_alloc(ev.index, obj, MPI_INFO_NULL, &r));
    CHECK(r != NULL);
    return r;
}

static void raise_int(pvar_event ev, MPI_T_cb_safety s, int v) {
    int_rec r;
    r.v = v;
    pvar_event_raise_in(ev, (int)s, NULL, &r);
}

/* ---- NOT_INITIALIZED ------------------------------------------------------ */

/* All 20 functions, before the first init and after the last finalize
 * (then with a registration allocated before it). */
static void not_initialized(MPI_T_event_registration reg) {
    const int E = MPI_T_ERR_NOT_INITIALIZED;
    int n = 0, i = 0, idx[2];
    char name[16];
    int len = sizeof name;
    MPI_Count c;
    MPI_Info info;
    MPI_T_source_order ord;
    MPI_T_event_registration r = garbage_regs[1];
    char buf[64];

    CHECK_RC(MPI_T_source_get_num(&n), E);
    CHECK_RC(MPI_T_source_get_info(0, name, &len, NULL, NULL, &ord, &c, &c, &info), E);
    CHECK_RC(MPI_T_source_get_timestamp(0, &c), E);
    CHECK_RC(MPI_T_event_get_num(&n), E);
    CHECK_RC(MPI_T_event_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL),
             E);
    CHECK_RC(MPI_T_event_get_index("evtest_select", &i), E);
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &r), E);
    CHECK(r == NULL); /* set to NULL on every error */
    r = reg;
    CHECK_RC(MPI_T_event_handle_set_info(r, MPI_INFO_NULL), E);
    CHECK_RC(MPI_T_event_handle_get_info(r, &info), E);
    CHECK_RC(MPI_T_event_register_callback(r, NONE, MPI_INFO_NULL, NULL, int_cb), E);
    CHECK_RC(MPI_T_event_callback_set_info(r, NONE, MPI_INFO_NULL), E);
    CHECK_RC(MPI_T_event_callback_get_info(r, NONE, &info), E);
    CHECK_RC(MPI_T_event_handle_free(r, NULL, free_cb), E);
    CHECK_RC(MPI_T_event_set_dropped_handler(r, dropped_cb), E);
    CHECK_RC(MPI_T_event_read(NULL, 0, buf), E);
    CHECK_RC(MPI_T_event_copy(NULL, buf), E);
    CHECK_RC(MPI_T_event_get_timestamp(NULL, &c), E);
    CHECK_RC(MPI_T_event_get_source(NULL, &n), E);
    CHECK_RC(MPI_T_category_get_num_events(0, &n), E);
    CHECK_RC(MPI_T_category_get_events(0, 2, idx), E);
    CHECK(nhits == 0); /* no callback of any kind ran */
}

/* ---- sources -------------------------------------------------------------- */

static void sources(void) {
    int n = -1, len, dlen, k;
    char name[64], desc[64];
    MPI_T_source_order ord = 0;
    MPI_Count tps = 0, max = 0, ts = 0, ts2 = 0;
    MPI_Info info = NULL;
    const int bad[] = {-1, -1000, 3, INT_MAX};

    CHECK_RC(MPI_T_source_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_source_get_num(&n), MPI_SUCCESS);
    CHECK(n == 3); /* the engine's clock and this component's two */

    /* Source 0: the engine's CLOCK_MONOTONIC in ns. */
    len = sizeof name, dlen = sizeof desc;
    CHECK_RC(MPI_T_source_get_info(0, name, &len, desc, &dlen, &ord, &tps, &max, &info),
             MPI_SUCCESS);
    CHECK(strcmp(name, "pvar_monotonic") == 0 && len == (int)strlen(name) + 1);
    CHECK(dlen == (int)strlen(desc) + 1);
    CHECK(ord == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0);
    CHECK(info == MPI_INFO_NULL);

    /* The fake clock. */
    len = sizeof name, dlen = sizeof desc;
    CHECK_RC(MPI_T_source_get_info(src_clk, name, &len, desc, &dlen, &ord, &tps, &max, &info),
             MPI_SUCCESS);
    CHECK(strcmp(name, "evtest_clock") == 0 && len == 13);
    CHECK(strcmp(desc, "a fake clock: one tick per call") == 0 && dlen == 32);
    CHECK(ord == MPI_T_SOURCE_ORDERED && tps == 1000 && max == (MPI_Count)1 << 40);
    /* No description: "" and length 1; unordered. */
    len = sizeof name, dlen = sizeof desc;
    memset(desc, 'z', sizeof desc);
    CHECK_RC(MPI_T_source_get_info(src_nic, name, &len, desc, &dlen, &ord, &tps, &max, NULL),
             MPI_SUCCESS);
    CHECK(strcmp(name, "evtest_nic") == 0 && desc[0] == '\0' && dlen == 1);
    CHECK(ord == MPI_T_SOURCE_UNORDERED && tps == 1000000 && max == INT64_MAX);

    /* The string convention: truncation, NULL buffer, zero length, NULL length. */
    memset(name, 'z', sizeof name);
    len = 4;
    CHECK_RC(MPI_T_source_get_info(src_clk, name, &len, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(memcmp(name, "evt", 4) == 0 && name[4] == 'z' && len == 13);
    len = 4;
    CHECK_RC(MPI_T_source_get_info(src_clk, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(len == 13);
    memset(name, 'z', sizeof name);
    len = 0;
    CHECK_RC(MPI_T_source_get_info(src_clk, name, &len, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(len == 13 && name[0] == 'z');
    CHECK_RC(MPI_T_source_get_info(src_clk, name, NULL, desc, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(name[0] == 'z');
    /* Every OUT argument NULL. */
    CHECK_RC(MPI_T_source_get_info(src_clk, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);

    for (k = 0; k < 4; k++) {
        CHECK_RC(MPI_T_source_get_info(bad[k], name, &len, NULL, NULL, NULL, NULL, NULL, NULL),
                 MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_source_get_timestamp(bad[k], &ts), MPI_T_ERR_INVALID_INDEX);
    }

    /* Timestamps on demand. */
    CHECK_RC(MPI_T_source_get_timestamp(0, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_source_get_timestamp(src_clk, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_source_get_timestamp(0, &ts), MPI_SUCCESS);
    CHECK_RC(MPI_T_source_get_timestamp(0, &ts2), MPI_SUCCESS);
    CHECK(ts > 0 && ts2 >= ts);
    clock_value = 42;
    k = clock_calls;
    CHECK_RC(MPI_T_source_get_timestamp(src_clk, &ts), MPI_SUCCESS);
    CHECK(ts == 42 && clock_calls == k + 1 && clock_value == 43);
    /* A source without a timestamp function. */
    ts = -7;
    CHECK_RC(MPI_T_source_get_timestamp(src_nic, &ts), MPI_T_ERR_NOT_SUPPORTED);
    CHECK(ts == -7);
}

/* ---- event types ---------------------------------------------------------- */

static void event_types(void) {
    int n = -1, i = -1, len, dlen, verb = 0, bind = 0, num, k;
    char name[64], desc[64];
    MPI_Datatype dts[8];
    MPI_Aint disps[8];
    MPI_T_enum en = (MPI_T_enum)(uintptr_t)1;
    MPI_Info info = NULL;
    const MPI_Datatype rec_dts[5] = {MPI_UNSIGNED_LONG_LONG, MPI_INT, MPI_DOUBLE, MPI_CHAR,
                                     MPI_COUNT};
    const int bad[] = {-1, INT_MIN, 0, INT_MAX};
    const MPI_Datatype sentinel_dt = (MPI_Datatype)(uintptr_t)0xdead;

    CHECK_RC(MPI_T_event_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    CHECK(n == 7); /* the engine's two and this component's five */

    /* Names to indices. */
    CHECK_RC(MPI_T_event_get_index("evtest_select", &i), MPI_SUCCESS);
    CHECK(i == ev_sel.index);
    CHECK_RC(MPI_T_event_get_index("evtest_record", &i), MPI_SUCCESS);
    CHECK(i == ev_rec.index);
    i = -5;
    CHECK_RC(MPI_T_event_get_index("evtest_nope", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_event_get_index("", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_event_get_index("EVTEST_SELECT", &i), MPI_T_ERR_INVALID_NAME);
    CHECK_RC(MPI_T_event_get_index("evtest_\xff\xfe", &i), MPI_T_ERR_INVALID_NAME); /* not UTF-8 */
    CHECK(i == -5);
    CHECK_RC(MPI_T_event_get_index(NULL, &i), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_index("evtest_select", NULL), MPI_T_ERR_INVALID);

    /* Everything about evtest_record. */
    len = sizeof name, dlen = sizeof desc, num = 8;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, name, &len, &verb, dts, disps, &num, &en, &info,
                                  desc, &dlen, &bind),
             MPI_SUCCESS);
    CHECK(strcmp(name, "evtest_record") == 0 && len == 14);
    CHECK(strcmp(desc, "a record of five elements") == 0 && dlen == 26);
    CHECK(verb == PVAR_VERBOSITY_TUNER_DETAIL && bind == MPI_T_BIND_NO_OBJECT);
    CHECK(en == MPI_T_ENUM_NULL && info == MPI_INFO_NULL);
    CHECK(num == 5);
    for (k = 0; k < 5; k++) {
        CHECK(dts[k] == rec_dts[k]);
        CHECK(disps[k] == (MPI_Aint)rec_disps[k]);
    }
    /* num_elements is the capacity on entry: truncated arrays, the count back. */
    for (k = 0; k < 8; k++) dts[k] = sentinel_dt, disps[k] = -9;
    num = 2;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, dts, disps, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(num == 5);
    CHECK(dts[0] == MPI_UNSIGNED_LONG_LONG && dts[1] == MPI_INT && dts[2] == sentinel_dt);
    CHECK(disps[0] == 0 && disps[1] == 8 && disps[2] == -9);
    num = 0;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, dts, disps, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(num == 5 && dts[2] == sentinel_dt && disps[2] == -9);
    /* One array NULL: ignored, the other filled. */
    num = 8;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, NULL, disps, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(num == 5 && disps[2] == 16 && disps[4] == 32);
    num = 8;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, dts, NULL, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(num == 5 && dts[4] == MPI_COUNT);
    /* num_elements NULL: the arrays are ignored. */
    for (k = 0; k < 8; k++) dts[k] = sentinel_dt, disps[k] = -9;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, dts, disps, NULL, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(dts[0] == sentinel_dt && disps[0] == -9);
    /* A negative capacity, with an array to fill. */
    num = -1;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, dts, disps, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_T_ERR_INVALID);
    num = -1;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, NULL, disps, &num, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_T_ERR_INVALID);
    /* Both arrays NULL: nothing to fill, so the count on entry is not read
     * (tools such as MPICH's recvq_events and Open MPI's events_types leave
     * it uninitialised); everything else is returned. */
    {
        const int garbage[] = {-1, INT_MIN, 0, 1, 3, INT_MAX};
        for (k = 0; k < (int)(sizeof garbage / sizeof garbage[0]); k++) {
            num = garbage[k], len = sizeof name, dlen = sizeof desc, verb = -1, bind = -1;
            memset(name, 'z', sizeof name);
            CHECK_RC(MPI_T_event_get_info(ev_rec.index, name, &len, &verb, NULL, NULL, &num, NULL,
                                          NULL, desc, &dlen, &bind),
                     MPI_SUCCESS);
            CHECK(num == 5 && strcmp(name, "evtest_record") == 0 && len == 14 && dlen == 26);
            CHECK(verb == PVAR_VERBOSITY_TUNER_DETAIL && bind == MPI_T_BIND_NO_OBJECT);
            /* The name length alone, as those tools ask first. */
            num = garbage[k], len = 0;
            CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, &len, NULL, NULL, NULL, &num, NULL,
                                          NULL, NULL, NULL, NULL),
                     MPI_SUCCESS);
            CHECK(num == 5 && len == 14);
        }
    }
    /* Strings: truncation, NULL buffers, zero length, NULL lengths. */
    memset(name, 'z', sizeof name);
    memset(desc, 'z', sizeof desc);
    len = 7, dlen = 2;
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, name, &len, NULL, NULL, NULL, NULL, NULL, NULL,
                                  desc, &dlen, NULL),
             MPI_SUCCESS);
    CHECK(strcmp(name, "evtest") == 0 && name[7] == 'z' && len == 14);
    CHECK(strcmp(desc, "a") == 0 && desc[2] == 'z' && dlen == 26);
    len = 0, dlen = 5;
    memset(name, 'z', sizeof name);
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, name, &len, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, &dlen, NULL),
             MPI_SUCCESS);
    CHECK(name[0] == 'z' && len == 14 && dlen == 26);
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, name, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  desc, NULL, NULL),
             MPI_SUCCESS);
    CHECK(name[0] == 'z' && desc[2] == 'z');
    CHECK_RC(MPI_T_event_get_info(ev_rec.index, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL),
             MPI_SUCCESS);

    /* No elements, no description; a bound event; the defaults. */
    len = sizeof name, dlen = sizeof desc, num = 8, verb = 0, bind = 0;
    memset(desc, 'z', sizeof desc);
    CHECK_RC(MPI_T_event_get_info(ev_empty.index, name, &len, &verb, dts, disps, &num, NULL, NULL,
                                  desc, &dlen, &bind),
             MPI_SUCCESS);
    CHECK(strcmp(name, "evtest_empty") == 0 && num == 0 && desc[0] == '\0' && dlen == 1);
    CHECK(verb == MPI_T_VERBOSITY_USER_BASIC && bind == MPI_T_BIND_NO_OBJECT);
    num = 8;
    CHECK_RC(MPI_T_event_get_info(ev_comm.index, NULL, NULL, NULL, dts, disps, &num, NULL, NULL,
                                  NULL, NULL, &bind),
             MPI_SUCCESS);
    CHECK(bind == MPI_T_BIND_MPI_COMM && num == 1 && dts[0] == MPI_UNSIGNED_LONG_LONG &&
          disps[0] == 0);

    /* Indices that are not event types. */
    for (k = 0; k < 4; k++) {
        int bi = bad[k] == 0 ? n : bad[k];
        num = 8;
        CHECK_RC(MPI_T_event_get_info(bi, name, &len, &verb, dts, disps, &num, NULL, NULL, desc,
                                      &dlen, &bind),
                 MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_event_get_info(bi, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                      NULL, NULL),
                 MPI_T_ERR_INVALID_INDEX);
    }
}

/* ---- categories ----------------------------------------------------------- */

static void categories(void) {
    int ci = -1, ne = -1, nc = 0, idx[4], k, ncat = 0;
    const int bad[] = {-1, INT_MIN, 0, INT_MAX};

    CHECK_RC(MPI_T_category_get_index("evtest_cat", &ci), MPI_SUCCESS);
    CHECK(ci == cat_events);
    CHECK_RC(MPI_T_category_get_num_events(ci, &ne), MPI_SUCCESS);
    CHECK(ne == 2); /* attached before the category was defined */
    CHECK_RC(MPI_T_category_get_num_events(ci, NULL), MPI_T_ERR_INVALID);
    for (k = 0; k < 4; k++) idx[k] = -9;
    CHECK_RC(MPI_T_category_get_events(ci, 4, idx), MPI_SUCCESS);
    CHECK((idx[0] == ev_rec.index && idx[1] == ev_nic.index) ||
          (idx[0] == ev_nic.index && idx[1] == ev_rec.index));
    CHECK(idx[2] == -9 && idx[3] == -9); /* past the count: untouched */
    for (k = 0; k < 4; k++) idx[k] = -9;
    CHECK_RC(MPI_T_category_get_events(ci, 1, idx), MPI_SUCCESS);
    CHECK((idx[0] == ev_rec.index || idx[0] == ev_nic.index) && idx[1] == -9);
    CHECK_RC(MPI_T_category_get_events(ci, 0, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_events(ci, -1, idx), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_events(ci, INT_MIN, idx), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_events(ci, 1, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_category_get_info(ci, NULL, NULL, NULL, NULL, &nc, NULL, NULL), MPI_SUCCESS);
    CHECK(nc == 0);

    CHECK_RC(MPI_T_category_get_num_events(cat_empty, &ne), MPI_SUCCESS);
    CHECK(ne == 0);
    idx[0] = -9;
    CHECK_RC(MPI_T_category_get_events(cat_empty, 4, idx), MPI_SUCCESS);
    CHECK(idx[0] == -9);

    CHECK_RC(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    for (k = 0; k < 4; k++) {
        int bi = bad[k] == 0 ? ncat : bad[k];
        CHECK_RC(MPI_T_category_get_num_events(bi, &ne), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_category_get_events(bi, 4, idx), MPI_T_ERR_INVALID_INDEX);
        CHECK_RC(MPI_T_category_get_events(bi, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    }
    /* A bad index wins over a bad length. */
    CHECK_RC(MPI_T_category_get_events(ncat, -1, NULL), MPI_T_ERR_INVALID_INDEX);
}

/* ---- registrations and their error codes -------------------------------- */

static void registrations(void) {
    MPI_T_event_registration r, r2, stale;
    MPI_Info info = NULL;
    int k, g, n;
    void *not_an_object = (void *)(uintptr_t)1; /* ignored for unbound events */

    /* Allocation errors: *event_registration is NULL afterwards. */
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    r = garbage_regs[1];
    CHECK_RC(MPI_T_event_handle_alloc(-1, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_INVALID_INDEX);
    CHECK(r == NULL);
    r = garbage_regs[1];
    CHECK_RC(MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_INVALID_INDEX);
    CHECK(r == NULL);
    CHECK_RC(MPI_T_event_handle_alloc(INT_MAX, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_handle_alloc(ev_sel.index, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    r = garbage_regs[1];
    CHECK_RC(MPI_T_event_handle_alloc(ev_comm.index, NULL, MPI_INFO_NULL, &r), MPI_T_ERR_INVALID);
    CHECK(r == NULL); /* bound: obj_handle required */
    {
        uint64_t objs[2] = {0x101, 0x101};
        CHECK_RC(MPI_T_event_handle_alloc(ev_comm.index, (char *)objs + 1, MPI_INFO_NULL, &r),
                 MPI_T_ERR_INVALID); /* misaligned */
    }

    CHECK_RC(MPI_T_event_handle_alloc(ev_sel.index, not_an_object, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    CHECK(r != NULL);
    r2 = alloc_reg(ev_sel, NULL);
    CHECK(r2 != r);

    /* Hints: accepted and ignored; MPI_INFO_NULL back. */
    CHECK_RC(MPI_T_event_handle_set_info(r, MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_handle_get_info(r, &info), MPI_SUCCESS);
    CHECK(info == MPI_INFO_NULL);
    CHECK_RC(MPI_T_event_handle_get_info(r, NULL), MPI_T_ERR_INVALID);

    /* Callback levels: only the four ABI values. */
    for (k = 0; k < NBAD_LEVELS; k++) {
        MPI_T_cb_safety b = (MPI_T_cb_safety)bad_levels[k];
        CHECK_RC(MPI_T_event_register_callback(r, b, MPI_INFO_NULL, NULL, int_cb),
                 MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_event_callback_set_info(r, b, MPI_INFO_NULL), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_event_callback_get_info(r, b, &info), MPI_T_ERR_INVALID);
    }
    CHECK(!pvar_event_observed(ev_sel)); /* nothing registered by those */
    /* callback_{set,get}_info at a level without a callback. */
    for (k = 0; k < 4; k++) {
        CHECK_RC(MPI_T_event_callback_set_info(r, levels[k], MPI_INFO_NULL), MPI_T_ERR_INVALID);
        CHECK_RC(MPI_T_event_callback_get_info(r, levels[k], &info), MPI_T_ERR_INVALID);
    }
    CHECK_RC(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, &ids[1], int_cb),
             MPI_SUCCESS);
    CHECK(pvar_event_observed(ev_sel));
    info = NULL;
    CHECK_RC(MPI_T_event_callback_set_info(r, RESTRICTED, MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, RESTRICTED, &info), MPI_SUCCESS);
    CHECK(info == MPI_INFO_NULL);
    CHECK_RC(MPI_T_event_callback_get_info(r, RESTRICTED, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_callback_get_info(r, NONE, &info), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_callback_get_info(r, THREAD_SAFE, &info), MPI_T_ERR_INVALID);
    /* NULL removes it: the level has no callback any more. */
    CHECK_RC(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_callback_get_info(r, RESTRICTED, &info), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_callback_set_info(r, RESTRICTED, MPI_INFO_NULL), MPI_T_ERR_INVALID);
    /* Removing where there is none is fine. */
    CHECK_RC(MPI_T_event_register_callback(r, SIGNAL_SAFE, MPI_INFO_NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_set_dropped_handler(r, dropped_cb), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_set_dropped_handler(r, NULL), MPI_SUCCESS);

    /* Free: the free callback runs at once (nothing in flight), with the
     * registration, its user_data and the requirement of normal code. */
    reset_hits();
    stale = r;
    CHECK_RC(MPI_T_event_handle_free(r, &ids[5], free_cb), MPI_SUCCESS);
    CHECK(nhits == 1 && hits[0].kind == 'F' && hits[0].id == 5 && hits[0].reg == stale &&
          hits[0].safety == NONE);
    CHECK_RC(MPI_T_event_handle_free(r2, NULL, NULL), MPI_SUCCESS);
    CHECK(nhits == 1);
    /* A new registration takes the freed slot: the old value stays stale. */
    r = alloc_reg(ev_sel, NULL);
    CHECK(r != stale);
    CHECK_RC(MPI_T_event_handle_free(r, NULL, NULL), MPI_SUCCESS);

    /* Stale (freed) and made-up registrations: INVALID_HANDLE everywhere,
     * also where another argument is bad too, and no callback runs. */
    reset_hits();
    for (g = 0; g < 5; g++) {
        MPI_T_event_registration x = g < 4 ? garbage_regs[g] : stale;
        CHECK_RC(MPI_T_event_handle_set_info(x, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_handle_get_info(x, &info), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_register_callback(x, NONE, MPI_INFO_NULL, NULL, int_cb),
                 MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_register_callback(x, (MPI_T_cb_safety)7, MPI_INFO_NULL, NULL,
                                               int_cb),
                 MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_callback_set_info(x, THREAD_SAFE, MPI_INFO_NULL),
                 MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_callback_get_info(x, SIGNAL_SAFE, &info), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_set_dropped_handler(x, dropped_cb), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_set_dropped_handler(x, NULL), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_event_handle_free(x, &ids[6], free_cb), MPI_T_ERR_INVALID_HANDLE);
    }
    CHECK(nhits == 0); /* no free callback for a failed free */
    CHECK(!pvar_event_observed(ev_sel));
}

/* ---- instances ------------------------------------------------------------ */

static int rec_calls;
static MPI_Count rec_ts[2];

/* Reads and copies evtest_record (raised as {40, -2, 0.75, 'x', -5}), and
 * every instance error code. */
static void rec_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s,
                   void *ud) {
    uint64_t u = 0;
    int peer = 0, src = -1;
    double ratio = 0;
    char tag = 0;
    int64_t when = 0;
    unsigned char buf[64], expect[40];
    rec_t r;
    size_t k;
    (void)reg;
    (void)ud;

    CHECK(s == THREAD_SAFE);
    CHECK_RC(MPI_T_event_read(inst, 0, &u), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(inst, 1, &peer), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(inst, 2, &ratio), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(inst, 3, &tag), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(inst, 4, &when), MPI_SUCCESS);
    CHECK(u == 40 && peer == -2 && ratio == 0.75 && tag == 'x' && when == -5);
    CHECK_RC(MPI_T_event_read(inst, 5, &u), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_read(inst, -1, &u), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_read(inst, INT_MAX, &u), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_read(inst, 0, NULL), MPI_T_ERR_INVALID);

    /* The whole record at the displacements get_info gives; padding zero;
     * nothing written past the extent. */
    memset(buf, 0xAA, sizeof buf);
    CHECK_RC(MPI_T_event_copy(inst, buf), MPI_SUCCESS);
    memset(&r, 0, sizeof r);
    r.bytes = 40, r.peer = -2, r.ratio = 0.75, r.tag = 'x', r.when = -5;
    memset(expect, 0, sizeof expect);
    memcpy(expect + offsetof(rec_t, bytes), &r.bytes, 8);
    memcpy(expect + offsetof(rec_t, peer), &r.peer, 4);
    memcpy(expect + offsetof(rec_t, ratio), &r.ratio, 8);
    memcpy(expect + offsetof(rec_t, tag), &r.tag, 1);
    memcpy(expect + offsetof(rec_t, when), &r.when, 8);
    CHECK(memcmp(buf, expect, sizeof(rec_t)) == 0);
    for (k = sizeof(rec_t); k < sizeof buf; k++) CHECK(buf[k] == 0xAA);
    memcpy(&r, buf, sizeof r);
    CHECK(r.bytes == 40 && r.peer == -2 && r.ratio == 0.75 && r.tag == 'x' && r.when == -5);
    CHECK_RC(MPI_T_event_copy(inst, NULL), MPI_T_ERR_INVALID);

    CHECK_RC(MPI_T_event_get_source(inst, &src), MPI_SUCCESS);
    CHECK(src == src_clk);
    CHECK_RC(MPI_T_event_get_source(inst, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_timestamp(inst, &rec_ts[rec_calls & 1]), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_get_timestamp(inst, NULL), MPI_T_ERR_INVALID);

    /* Other pointers are not instances, even inside a callback. */
    CHECK_RC(MPI_T_event_read((MPI_T_event_instance)buf, 0, &u), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_copy((MPI_T_event_instance)((char *)inst + 8), buf),
             MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_source(NULL, &src), MPI_T_ERR_INVALID_HANDLE);
    saved_instance = inst;
    rec_calls++;
}

/* Every instance function with something that is not a live instance. */
static void check_dead_instance(MPI_T_event_instance inst) {
    char buf[64];
    MPI_Count ts = -3;
    int src = -3;
    memset(buf, 0x55, sizeof buf);
    CHECK_RC(MPI_T_event_read(inst, 0, buf), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_read(inst, -1, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_copy(inst, buf), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_copy(inst, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_timestamp(inst, &ts), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_source(inst, &src), MPI_T_ERR_INVALID_HANDLE);
    CHECK(buf[0] == 0x55 && buf[63] == 0x55 && ts == -3 && src == -3);
}

static void instances(void) {
    MPI_T_event_registration a, b;
    rec_t r;
    int_rec nr;
    int local = 0;

    a = alloc_reg(ev_rec, NULL);
    b = alloc_reg(ev_rec, NULL);
    OK(MPI_T_event_register_callback(a, THREAD_SAFE, MPI_INFO_NULL, NULL, rec_cb));
    OK(MPI_T_event_register_callback(b, THREAD_SAFE, MPI_INFO_NULL, NULL, rec_cb));
    CHECK(pvar_event_observed(ev_rec));

    /* Garbage in the record's padding must not reach the tool. */
    memset(&r, 0xFF, sizeof r);
    r.bytes = 40, r.peer = -2, r.ratio = 0.75, r.tag = 'x', r.when = -5;
    clock_value = 5000;
    clock_calls = 0;
    saved_instance = NULL;
    pvar_event_raise(ev_rec, &r);
    CHECK(rec_calls == 2);
    /* One timestamp per raise, from the source's clock, shared by both. */
    CHECK(clock_calls == 1 && rec_ts[0] == 5000 && rec_ts[1] == 5000);
    /* An explicit timestamp. */
    pvar_event_raise_at(ev_rec, 123456, THREAD_SAFE, NULL, &r);
    CHECK(rec_calls == 4 && clock_calls == 1 && rec_ts[0] == 123456 && rec_ts[1] == 123456);

    /* After the callback returned, and from outside any callback. */
    CHECK(saved_instance != NULL);
    check_dead_instance(saved_instance);
    check_dead_instance(NULL);
    check_dead_instance((MPI_T_event_instance)&local);
    check_dead_instance((MPI_T_event_instance)(uintptr_t)UINTPTR_MAX);
    check_dead_instance((MPI_T_event_instance)a); /* a registration is no instance */

    OK(MPI_T_event_handle_free(a, NULL, NULL));
    OK(MPI_T_event_handle_free(b, NULL, NULL));
    CHECK(!pvar_event_observed(ev_rec));
    pvar_event_raise(ev_rec, &r);
    CHECK(rec_calls == 4);

    /* A source without timestamps on demand: raise_at gives them. */
    a = alloc_reg(ev_nic, NULL);
    OK(MPI_T_event_register_callback(a, SIGNAL_SAFE, MPI_INFO_NULL, &ids[4], int_cb));
    reset_hits();
    nr.v = 9;
    pvar_event_raise_at(ev_nic, 777, NONE, NULL, &nr);
    CHECK(nhits == 1 && hits[0].id == 4 && hits[0].value == 9 && hits[0].count == 777 &&
          hits[0].src == src_nic && hits[0].rc_read == 0 && hits[0].rc_ts == 0 &&
          hits[0].rc_src == 0 && hits[0].reg == a);
    CHECK(hits[0].safety == THREAD_SAFE); /* unserialised callbacks: at least THREAD_SAFE */
    check_dead_instance(saved_instance);
    /* Without a timestamp there is nothing to deliver (pvar.h: use raise_at). */
    pvar_event_raise(ev_nic, &nr);
    CHECK(nhits == 1);
    OK(MPI_T_event_handle_free(a, NULL, NULL));

    /* An event without elements. */
    a = alloc_reg(ev_empty, NULL);
    OK(MPI_T_event_register_callback(a, THREAD_SAFE, MPI_INFO_NULL, &ids[3], int_cb));
    reset_hits();
    pvar_event_raise(ev_empty, NULL);
    CHECK(nhits == 1 && hits[0].id == 3 && hits[0].rc_read == MPI_T_ERR_INVALID_INDEX &&
          hits[0].rc_src == 0 && hits[0].src == 0 && hits[0].rc_ts == 0 && hits[0].count > 0);
    OK(MPI_T_event_handle_free(a, NULL, NULL));
}

/* ---- which callback runs -------------------------------------------------- */

/* Raises evtest_select at each requirement; hits[] shows which ran. */
static void expect_pick(MPI_T_event_registration r, int req, int want_id, int want_safety) {
    reset_hits();
    raise_int(ev_sel, levels[req], 100 + req);
    CHECK(nhits == 1);
    if (nhits != 1) {
        fprintf(stderr, "  raise at level %d: %d callbacks ran\n", req, nhits);
        return;
    }
    if (hits[0].id != want_id || (int)hits[0].safety != want_safety)
        fprintf(stderr, "  raise at level %d: callback %d with cb_safety %#x (want %d, %#x)\n",
                req, hits[0].id, hits[0].safety, want_id, want_safety);
    CHECK(hits[0].kind == 'C' && hits[0].id == want_id && (int)hits[0].safety == want_safety);
    CHECK(hits[0].reg == r && hits[0].value == 100 + req && hits[0].rc_read == 0);
}

static void selection(void) {
    MPI_T_event_registration r = alloc_reg(ev_sel, NULL);
    int k, n;

    /* A callback at every level: each requirement gets its own, told that
     * requirement. */
    for (k = 0; k < 4; k++)
        OK(MPI_T_event_register_callback(r, levels[k], MPI_INFO_NULL, &ids[k], int_cb));
    for (k = 0; k < 4; k++) expect_pick(r, k, k, levels[k]);

    /* MPI_RESTRICTED and ASYNC_SIGNAL_SAFE only: the lowest valid level. */
    OK(MPI_T_event_register_callback(r, NONE, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, NULL, NULL));
    expect_pick(r, 0, 1, NONE);
    expect_pick(r, 1, 1, RESTRICTED);
    expect_pick(r, 2, 3, THREAD_SAFE);
    expect_pick(r, 3, 3, SIGNAL_SAFE);

    /* Re-registering a level replaces its callback and user_data. */
    OK(MPI_T_event_register_callback(r, SIGNAL_SAFE, MPI_INFO_NULL, &ids[7], int_cb));
    expect_pick(r, 3, 7, SIGNAL_SAFE);

    /* THREAD_SAFE only: runs unserialised, so told at least THREAD_SAFE. */
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_register_callback(r, SIGNAL_SAFE, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, &ids[2], int_cb));
    expect_pick(r, 0, 2, THREAD_SAFE);
    expect_pick(r, 1, 2, THREAD_SAFE);
    expect_pick(r, 2, 2, THREAD_SAFE);
    /* A requirement above every callback: the event waits in the thread's
     * buffer for a delivery point where one may run. Without a buffer (none
     * is made in a signal-safe context) it is dropped. */
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
    reset_hits();
    raise_int(ev_sel, SIGNAL_SAFE, 54); /* this thread has no buffer yet */
    CHECK(nhits == 0);
    CHECK(pvar_event_deliver(THREAD_SAFE) == 0);
    pvar_prepare_thread(); /* makes it */
    raise_int(ev_sel, SIGNAL_SAFE, 55);
    CHECK(nhits == 0);
    CHECK(pvar_event_deliver(SIGNAL_SAFE) == 0); /* still not allowed there */
    CHECK(nhits == 0);
    CHECK(pvar_event_deliver(THREAD_SAFE) == 1);
    CHECK(nhits == 2);
    CHECK(hits[0].kind == 'D' && hits[0].count == 1 && hits[0].id == 2 &&
          hits[0].safety == THREAD_SAFE && hits[0].value == 0 && hits[0].reg == r);
    CHECK(hits[1].kind == 'C' && hits[1].id == 2 && hits[1].value == 55 &&
          hits[1].safety == THREAD_SAFE);
    OK(MPI_T_event_set_dropped_handler(r, NULL));

    /* NONE only: runs at once where nothing is required; elsewhere it is
     * deferred to the next delivery point with requirement NONE. */
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_register_callback(r, NONE, MPI_INFO_NULL, &ids[0], int_cb));
    expect_pick(r, 0, 0, NONE);
    reset_hits();
    clock_value = 0;
    raise_int(ev_sel, RESTRICTED, 1);
    raise_int(ev_sel, THREAD_SAFE, 2);
    raise_int(ev_sel, SIGNAL_SAFE, 3); /* this thread has a buffer now */
    CHECK(nhits == 0);
    CHECK(pvar_event_deliver(RESTRICTED) == 0); /* NONE callbacks cannot run there */
    CHECK(pvar_event_deliver(SIGNAL_SAFE) == 0);
    CHECK(nhits == 0);
    CHECK(pvar_event_deliver(0x7) == -1); /* not a level */
    CHECK(pvar_event_deliver(-1) == -1);
    n = pvar_event_deliver(NONE);
    CHECK(n == 3 && nhits == 3);
    for (k = 0; k < nhits && k < 3; k++) {
        /* In raise order, told NONE, with the timestamps of the raises
         * (source 0: increasing, and before the delivery). */
        CHECK(hits[k].id == 0 && hits[k].value == k + 1 && hits[k].safety == NONE);
        CHECK(hits[k].rc_read == 0 && hits[k].rc_ts == 0 && hits[k].src == 0);
        if (k > 0) CHECK(hits[k].count >= hits[k - 1].count);
    }
    CHECK(pvar_event_deliver(NONE) == 0); /* nothing left */
    check_dead_instance(saved_instance);

    /* A raise where nothing is required also delivers what waits. */
    reset_hits();
    raise_int(ev_sel, RESTRICTED, 7);
    CHECK(nhits == 0);
    raise_int(ev_sel, NONE, 8);
    CHECK(nhits == 2);
    CHECK(pvar_event_deliver(NONE) == 0);

    /* Deferred deliveries of a registration freed before the delivery point
     * are discarded; its free callback runs at the free. */
    reset_hits();
    raise_int(ev_sel, RESTRICTED, 9);
    CHECK(nhits == 0);
    OK(MPI_T_event_handle_free(r, &ids[5], free_cb));
    CHECK(nhits == 1 && hits[0].kind == 'F');
    CHECK(pvar_event_deliver(NONE) == 0);
    CHECK(nhits == 1);
    CHECK(!pvar_event_observed(ev_sel));
}

/* ---- dropped events --------------------------------------------------------- */

static void dropped(void) {
    MPI_T_event_registration r = alloc_reg(ev_rec, NULL);
    rec_t rec;
    int k;
    memset(&rec, 0, sizeof rec);

    /* A registration whose callbacks were all removed loses what is raised
     * for it; raised where more than NONE is required, the losses wait for
     * a point where the handler may run: here the next delivery, before
     * which the dropped handler hears the count, with the source, the
     * delivery's requirement and the user_data of the callback chosen for
     * it. */
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, &ids[2], int_cb));
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, NULL, NULL));
    CHECK(pvar_event_observed(ev_rec)); /* the handler observes it */
    reset_hits();
    for (k = 0; k < 3; k++) pvar_event_raise_in(ev_rec, RESTRICTED, NULL, &rec);
    CHECK(nhits == 0);
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, &ids[6], int_cb));
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, &ids[1], int_cb));
    rec.bytes = 11;
    pvar_event_raise_in(ev_rec, THREAD_SAFE, NULL, &rec);
    CHECK(nhits == 2);
    CHECK(hits[0].kind == 'D' && hits[0].count == 3 && hits[0].reg == r &&
          hits[0].value == src_clk && hits[0].safety == THREAD_SAFE && hits[0].id == 6);
    CHECK(hits[1].kind == 'C' && hits[1].id == 6 && hits[1].reg == r);
    /* Reported once: the next delivery has no dropped call before it. */
    reset_hits();
    pvar_event_raise_in(ev_rec, THREAD_SAFE, NULL, &rec);
    CHECK(nhits == 1 && hits[0].kind == 'C');
    /* The user_data is that of the callback chosen (here MPI_RESTRICTED's,
     * for a raise requiring NONE). */
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, NULL, NULL));
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, NULL, NULL));
    pvar_event_raise_in(ev_rec, THREAD_SAFE, NULL, &rec);
    pvar_event_raise_in(ev_rec, SIGNAL_SAFE, NULL, &rec);
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, &ids[1], int_cb));
    reset_hits();
    pvar_event_raise_in(ev_rec, NONE, NULL, &rec);
    CHECK(nhits == 2);
    CHECK(hits[0].kind == 'D' && hits[0].count == 2 && hits[0].id == 1 &&
          hits[0].safety == NONE && hits[0].value == src_clk);
    CHECK(hits[1].kind == 'C' && hits[1].id == 1 && hits[1].safety == NONE);

    /* Without a handler nothing is counted (and with neither handler nor
     * callback the registration does not observe the event); setting one
     * starts from zero; a later set replaces the handler. */
    OK(MPI_T_event_set_dropped_handler(r, NULL));
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, NULL, NULL));
    CHECK(!pvar_event_observed(ev_rec));
    pvar_event_raise_in(ev_rec, NONE, NULL, &rec);
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, &ids[1], int_cb));
    reset_hits();
    pvar_event_raise_in(ev_rec, NONE, NULL, &rec);
    CHECK(nhits == 1 && hits[0].kind == 'C');
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, NULL, NULL));
    pvar_event_raise_in(ev_rec, THREAD_SAFE, NULL, &rec); /* lost, not reported yet */
    CHECK(nhits == 1);
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb)); /* again: count restarts */
    OK(MPI_T_event_register_callback(r, RESTRICTED, MPI_INFO_NULL, &ids[1], int_cb));
    reset_hits();
    pvar_event_raise_in(ev_rec, NONE, NULL, &rec);
    CHECK(nhits == 1 && hits[0].kind == 'C');
    OK(MPI_T_event_handle_free(r, NULL, NULL));
}

/* A registration with a dropped handler and no callback loses every event
 * raised for it (no callback at any level) — whether or not another
 * registration of the event has a callback. Its handler has no delivery to
 * precede: it hears the losses at the first point where it may run, one
 * where nothing is required and no other callback of the kind is running
 * (the raise itself there, else the next pvar_event_deliver(NONE), else
 * the free), told NONE, with user_data NULL (no callback, no user_data).
 * MPI 4.1 §15.3.8 lets an implementation never call it then; pvar does, as
 * Open MPI's events_dropped test expects. */
static void dropped_without_callback(void) {
    int with_other, k;
    for (with_other = 0; with_other < 2; with_other++) {
        MPI_T_event_registration bare = alloc_reg(ev_sel, NULL);
        MPI_T_event_registration r = alloc_reg(ev_sel, NULL);
        MPI_T_event_registration other = alloc_reg(ev_sel, NULL);
        int drops = 0, calls = 0;
        if (with_other)
            OK(MPI_T_event_register_callback(other, THREAD_SAFE, MPI_INFO_NULL, &ids[3], int_cb));
        CHECK(pvar_event_observed(ev_sel) == with_other);
        OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
        CHECK(pvar_event_observed(ev_sel));

        /* Raised where nothing is required: reported at each raise. */
        reset_hits();
        for (k = 0; k < 3; k++) raise_int(ev_sel, NONE, 20 + k);
        for (k = 0; k < nhits; k++) {
            if (hits[k].kind == 'D') {
                drops++;
                CHECK(hits[k].reg == r && hits[k].count == 1 && hits[k].safety == NONE &&
                      hits[k].id == -1 && hits[k].value == 0);
            } else {
                calls++;
                CHECK(hits[k].kind == 'C' && hits[k].reg == other && hits[k].id == 3);
            }
        }
        CHECK(drops == 3);
        CHECK(calls == 3 * with_other);

        /* Raised where more is required: counted, and reported at the next
         * delivery point where nothing is. */
        reset_hits();
        raise_int(ev_sel, RESTRICTED, 30);
        raise_int(ev_sel, THREAD_SAFE, 31);
        CHECK(nhits == 2 * with_other);
        pvar_event_deliver(THREAD_SAFE);
        CHECK(nhits == 2 * with_other);
        pvar_event_deliver(NONE);
        CHECK(nhits == 2 * with_other + 1);
        CHECK(hits[nhits - 1].kind == 'D' && hits[nhits - 1].reg == r &&
              hits[nhits - 1].count == 2 && hits[nhits - 1].safety == NONE &&
              hits[nhits - 1].id == -1);

        /* Still unreported at the free: the free reports it, before the
         * free callback. */
        reset_hits();
        raise_int(ev_sel, SIGNAL_SAFE, 32);
        CHECK(nhits == 0);
        OK(MPI_T_event_handle_free(r, &ids[5], free_cb));
        CHECK(nhits == 2 && hits[0].kind == 'D' && hits[0].count == 1 && hits[0].reg == r &&
              hits[1].kind == 'F' && hits[1].id == 5);

        /* The registration with neither callback nor handler never took part
         * (nothing of it was counted, no callback of any kind ran for it). */
        OK(MPI_T_event_handle_free(other, NULL, NULL));
        CHECK(!pvar_event_observed(ev_sel));
        OK(MPI_T_event_handle_free(bare, NULL, NULL));
    }
}

/* Callbacks raising events whose callbacks raise events...: deliveries
 * nested deeper than 16 are dropped (and reported) instead of run. */
static int nest_depth, nest_max, nest_calls;
static void nesting_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s,
                       void *ud) {
    int v = 0;
    (void)reg;
    (void)s;
    (void)ud;
    nest_calls++;
    if (++nest_depth > nest_max) nest_max = nest_depth;
    CHECK_RC(MPI_T_event_read(inst, 0, &v), MPI_SUCCESS);
    if (v < 40) raise_int(ev_sel, THREAD_SAFE, v + 1);
    nest_depth--;
}

static void dropped_nested(void) {
    MPI_T_event_registration r = alloc_reg(ev_sel, NULL);
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, &ids[2], nesting_cb));
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
    reset_hits();
    raise_int(ev_sel, THREAD_SAFE, 0);
    CHECK(nest_calls == 16 && nest_max == 16 && nhits == 0);
    OK(MPI_T_event_register_callback(r, THREAD_SAFE, MPI_INFO_NULL, &ids[2], int_cb));
    raise_int(ev_sel, THREAD_SAFE, 41);
    CHECK(nhits == 2 && hits[0].kind == 'D' && hits[0].count == 1 && hits[0].id == 2);
    CHECK(hits[1].kind == 'C' && hits[1].value == 41);
    OK(MPI_T_event_handle_free(r, NULL, NULL));
}

/* A full thread buffer, and a raise in a signal-safe context on a thread
 * that has none: both lose events, which the dropped handler reports at
 * the delivery point that delivers what waited. */
static void *raiser(void *arg) {
    int k;
    (void)arg;
    raise_int(ev_sel, SIGNAL_SAFE, -1); /* no buffer yet: cannot be made here */
    for (k = 0; k < 6; k++) raise_int(ev_sel, RESTRICTED, k); /* 4 entries */
    return NULL;
}

static void set_buffer_entries(unsigned long long n) {
    int ci = -1, count = 0;
    MPI_T_cvar_handle h;
    OK(MPI_T_cvar_get_index("PVAR_EVENT_BUFFER_ENTRIES", &ci));
    OK(MPI_T_cvar_handle_alloc(ci, NULL, &h, &count));
    OK(MPI_T_cvar_write(h, &n));
    OK(MPI_T_cvar_handle_free(&h));
}

static void dropped_full_buffer(void) {
    MPI_T_event_registration r = alloc_reg(ev_sel, NULL);
    pthread_t t;
    int k, n;
    OK(MPI_T_event_register_callback(r, NONE, MPI_INFO_NULL, &ids[0], int_cb));
    OK(MPI_T_event_set_dropped_handler(r, dropped_cb));
    set_buffer_entries(4);
    reset_hits();
    if (pthread_create(&t, NULL, raiser, NULL) != 0) die("pthread_create", -1);
    pthread_join(t, NULL);
    set_buffer_entries(256);
    CHECK(nhits == 0);
    n = pvar_event_deliver(NONE);
    CHECK(n == 4 && nhits == 5);
    CHECK(hits[0].kind == 'D' && hits[0].count == 3 && hits[0].id == 0 && hits[0].safety == NONE &&
          hits[0].value == 0);
    for (k = 1; k < nhits && k < 5; k++)
        CHECK(hits[k].kind == 'C' && hits[k].value == k - 1 && hits[k].safety == NONE);
    OK(MPI_T_event_handle_free(r, NULL, NULL));
}

/* ---- freeing a registration from its own callback ------------------------ */

static MPI_T_event_registration self_freeing;
static int self_free_rc = -1, self_read_rc = -1, free_ran_inside = -1;

static void freeing_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s,
                       void *ud) {
    int v = 0;
    (void)s;
    (void)ud;
    in_callback = 1;
    CHECK(reg == self_freeing);
    self_free_rc = MPI_T_event_handle_free(reg, &ids[5], free_cb);
    free_ran_inside = nhits; /* the free callback must not have run yet */
    /* The instance stays valid until this callback returns. */
    self_read_rc = MPI_T_event_read(inst, 0, &v);
    CHECK(v == 31);
    /* The registration is gone for further calls. */
    CHECK_RC(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_register_callback(reg, s, MPI_INFO_NULL, NULL, int_cb),
             MPI_T_ERR_INVALID_HANDLE);
    in_callback = 0;
}

static void free_inside(void) {
    self_freeing = alloc_reg(ev_sel, NULL);
    OK(MPI_T_event_register_callback(self_freeing, THREAD_SAFE, MPI_INFO_NULL, NULL, freeing_cb));
    reset_hits();
    raise_int(ev_sel, NONE, 31);
    CHECK(self_free_rc == MPI_SUCCESS && self_read_rc == MPI_SUCCESS);
    CHECK(free_ran_inside == 0);
    /* After the callback returned: once, with the registration, its
     * user_data and a valid requirement. */
    CHECK(nhits == 1 && hits[0].kind == 'F' && hits[0].reg == self_freeing && hits[0].id == 5);
    CHECK(hits[0].value == 0 && valid_level(hits[0].safety));
    CHECK(!pvar_event_observed(ev_sel));
    reset_hits();
    raise_int(ev_sel, NONE, 32);
    CHECK(nhits == 0);
    CHECK_RC(MPI_T_event_handle_get_info(self_freeing, NULL), MPI_T_ERR_INVALID_HANDLE);
}

/* ---- bound events --------------------------------------------------------- */

static void bound(void) {
    /* obj_handle: the address of a variable holding the handle. */
    uint64_t world = PVAR_OBJECT_COMM_WORLD; /* 0x101 */
    MPI_Comm self = MPI_COMM_SELF;           /* 0x102, pointer-sized */
    uint64_t other = 0x103, obj;
    MPI_T_event_registration rw, rs;
    u64_rec rec;

    rw = alloc_reg(ev_comm, &world);
    rs = alloc_reg(ev_comm, &self);
    OK(MPI_T_event_register_callback(rw, THREAD_SAFE, MPI_INFO_NULL, &ids[1], int_cb));
    OK(MPI_T_event_register_callback(rs, THREAD_SAFE, MPI_INFO_NULL, &ids[2], int_cb));
    reset_hits();
    rec.v = 77;
    obj = 0x101;
    pvar_event_raise_in(ev_comm, NONE, &obj, &rec);
    CHECK(nhits == 1 && hits[0].id == 1 && hits[0].reg == rw && hits[0].value == 77);
    obj = 0x102;
    pvar_event_raise_in(ev_comm, NONE, &obj, &rec);
    CHECK(nhits == 2 && hits[1].id == 2 && hits[1].reg == rs);
    pvar_event_raise_in(ev_comm, NONE, &other, &rec); /* nobody bound to it */
    pvar_event_raise(ev_comm, &rec);                  /* no object */
    CHECK(nhits == 2);
    OK(MPI_T_event_handle_free(rw, NULL, NULL));
    obj = 0x101;
    pvar_event_raise_in(ev_comm, NONE, &obj, &rec);
    CHECK(nhits == 2);
    OK(MPI_T_event_handle_free(rs, NULL, NULL));
}

/* ---- the engine's own events ------------------------------------------------ */

static int engine_alloc[2], engine_free, engine_alloc_calls, engine_free_calls;

static void engine_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety s,
                      void *ud) {
    int src = -1;
    (void)reg;
    (void)s;
    CHECK_RC(MPI_T_event_get_source(inst, &src), MPI_SUCCESS);
    CHECK(src == 0);
    if (*(int *)ud == 0) {
        CHECK_RC(MPI_T_event_read(inst, 0, &engine_alloc[0]), MPI_SUCCESS);
        CHECK_RC(MPI_T_event_read(inst, 1, &engine_alloc[1]), MPI_SUCCESS);
        engine_alloc_calls++;
    } else {
        CHECK_RC(MPI_T_event_read(inst, 0, &engine_free), MPI_SUCCESS);
        CHECK_RC(MPI_T_event_read(inst, 1, &engine_free), MPI_T_ERR_INVALID_INDEX);
        engine_free_calls++;
    }
}

static void engine_events(void) {
    int ia = -1, ifr = -1, num = 4, pi = -1, count = -1, ci = -1, ne = 0, idx[4], k;
    int found_a = 0, found_f = 0;
    MPI_Datatype dts[4];
    MPI_T_event_registration ra, rf;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;

    CHECK_RC(MPI_T_event_get_index("pvar_engine_handle_alloc", &ia), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_get_index("pvar_engine_handle_free", &ifr), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_get_info(ia, NULL, NULL, NULL, dts, NULL, &num, NULL, NULL, NULL, NULL,
                                  NULL),
             MPI_SUCCESS);
    CHECK(num == 2 && dts[0] == MPI_INT && dts[1] == MPI_INT);
    num = 4;
    CHECK_RC(MPI_T_event_get_info(ifr, NULL, NULL, NULL, dts, NULL, &num, NULL, NULL, NULL, NULL,
                                  NULL),
             MPI_SUCCESS);
    CHECK(num == 1 && dts[0] == MPI_INT);
    CHECK_RC(MPI_T_category_get_index("pvar_engine", &ci), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_num_events(ci, &ne), MPI_SUCCESS);
    CHECK(ne == 2);
    CHECK_RC(MPI_T_category_get_events(ci, 4, idx), MPI_SUCCESS);
    for (k = 0; k < ne && k < 4; k++) found_a |= idx[k] == ia, found_f |= idx[k] == ifr;
    CHECK(found_a && found_f);

    OK(MPI_T_event_handle_alloc(ia, NULL, MPI_INFO_NULL, &ra));
    OK(MPI_T_event_handle_alloc(ifr, NULL, MPI_INFO_NULL, &rf));
    OK(MPI_T_event_register_callback(ra, THREAD_SAFE, MPI_INFO_NULL, &ids[0], engine_cb));
    OK(MPI_T_event_register_callback(rf, NONE, MPI_INFO_NULL, &ids[1], engine_cb));

    OK(MPI_T_pvar_get_index("pvar_engine_sessions", MPI_T_PVAR_CLASS_LEVEL, &pi));
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_handle_alloc(s, pi, NULL, &h, &count));
    CHECK(engine_alloc_calls == 1 && engine_alloc[0] == pi && engine_alloc[1] == count);
    CHECK(engine_free_calls == 0);
    OK(MPI_T_pvar_handle_free(s, &h));
    CHECK(engine_free_calls == 1 && engine_free == pi && engine_alloc_calls == 1);
    /* Freed registrations: no more deliveries. */
    OK(MPI_T_event_handle_free(ra, NULL, NULL));
    OK(MPI_T_event_handle_free(rf, NULL, NULL));
    OK(MPI_T_pvar_handle_alloc(s, pi, NULL, &h, &count));
    OK(MPI_T_pvar_handle_free(s, &h));
    CHECK(engine_alloc_calls == 1 && engine_free_calls == 1);
    OK(MPI_T_pvar_session_free(&s));
}

int main(void) {
    int provided = -1;

    garbage_regs[0] = NULL;
    garbage_regs[1] = (MPI_T_event_registration)(uintptr_t)0x12345;
    garbage_regs[2] = (MPI_T_event_registration)(uintptr_t)UINTPTR_MAX;
    garbage_regs[3] = (MPI_T_event_registration)(uintptr_t)(((uint64_t)1 << 40) | 1);

    component_init();
    not_initialized(garbage_regs[1]);

    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_SINGLE);
    sources();
    event_types();
    categories();
    registrations();
    instances();
    selection();
    dropped();
    dropped_without_callback();
    dropped_full_buffer();
    dropped_nested();
    free_inside();
    bound();
    engine_events();
    {
        /* A registration left open with a callback: the last finalize frees
         * it (no callback after it, none after a re-init), as it frees
         * sessions and cvar handles. */
        MPI_T_event_registration kept = alloc_reg(ev_sel, NULL);
        OK(MPI_T_event_register_callback(kept, SIGNAL_SAFE, MPI_INFO_NULL, &ids[0], int_cb));
        CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
        reset_hits();
        not_initialized(kept);
        raise_int(ev_sel, SIGNAL_SAFE, 5);
        CHECK(nhits == 0);
        CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
        CHECK_RC(MPI_T_event_handle_set_info(kept, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);
        CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    }
    return summary("events");
}
