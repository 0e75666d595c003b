/* A sample component written in C against pvar.h: one or more variables of
 * every class, arrays, variables bound to communicators, callback variables
 * (one of MPI_CHAR), enumerations, categories and control variables of every
 * datatype. Used by the varlist, strings and return-code tests. */
#ifndef PVAR_TEST_SAMPLE_COMPONENT_H
#define PVAR_TEST_SAMPLE_COMPONENT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvar.h"

struct sample {
    pvar_var sent, per_peer, bytes, wait, pool_size, pool_usage, state;
    pvar_var queue_world, queue_self, queue_high, free_low, generic, nonatomic;
    pvar_bound queue;
    int callback_counter_index, callback_name_index, callback_ratio_index;
    int callback_setting_index;
    pvar_cvar protocol, eager, big, offset, factor, path, version, frozen;
    pvar_bound_cvar algo;
    pvar_cvar algo_world;
};

static uint64_t sample_callback_ticks;
static uint64_t sample_settings[3] = {0, 10, 20}; /* per-comm values, writable */
static int sample_notified[4];                     /* BIND, START, STOP, FREE */

static uint64_t sample_read_ratio(void *ctx, uint64_t object, int bound, size_t element) {
    (void)ctx, (void)object, (void)bound, (void)element;
    return pvar_bits_from_double(0.75);
}

static uint64_t sample_read_setting(void *ctx, uint64_t object, int bound, size_t element) {
    (void)object, (void)bound;
    return ((uint64_t *)ctx)[element];
}

static void sample_write_setting(void *ctx, uint64_t object, int bound, size_t element,
                                 uint64_t value) {
    (void)object, (void)bound;
    ((uint64_t *)ctx)[element] = value;
}

/* Per-object element count: 3 for MPI_COMM_WORLD, none for others. */
static long sample_notify_setting(void *ctx, int event, uint64_t object, int bound) {
    (void)ctx;
    if (event >= 0 && event < 4) sample_notified[event]++;
    if (event == PVAR_NOTIFY_BIND) return bound && object == PVAR_OBJECT_COMM_WORLD ? 3 : 0;
    return -1;
}

static uint64_t sample_read_counter(void *ctx, uint64_t object, int bound, size_t element) {
    (void)object, (void)bound, (void)element;
    return *(uint64_t *)ctx;
}

static uint64_t sample_read_name(void *ctx, uint64_t object, int bound, size_t element) {
    const char *s = (const char *)ctx;
    (void)object, (void)bound;
    return element < strlen(s) ? (uint64_t)(unsigned char)s[element] : 0;
}

static void sample_die(const char *what, int rc) {
    fprintf(stderr, "sample component: %s failed: %d (%s): %s\n", what, rc,
            pvar_error_string(rc), pvar_last_error() ? pvar_last_error() : "");
    exit(2);
}

#define SAMPLE_OK(call)                    \
    do {                                   \
        int rc_ = (call);                  \
        if (rc_ != 0) sample_die(#call, rc_); \
    } while (0)

static const pvar_enum_item sample_states[] = {
    {"idle", 0}, {"sending", 1}, {"receiving", 2}};
static const pvar_enum_item sample_protocols[] = {
    {"eager", 0}, {"rendezvous", 1}, {"auto", 2}};

static void sample_component_init(struct sample *s) {
    pvar_info i;

    SAMPLE_OK(pvar_category_define("sample_root", "everything the sample component exposes", NULL));
    SAMPLE_OK(pvar_category_define("sample_comm", "communication", NULL));
    SAMPLE_OK(pvar_category_define("sample_empty", NULL, NULL));
    SAMPLE_OK(pvar_category_add_subcategory("sample_root", "sample_comm"));
    SAMPLE_OK(pvar_category_add_subcategory("sample_root", "sample_empty"));

    memset(&i, 0, sizeof i);
    i.name = "sample_msgs_sent";
    i.description = "messages sent";
    i.var_class = PVAR_CLASS_COUNTER;
    i.category = "sample_comm";
    SAMPLE_OK(pvar_register(&i, &s->sent));

    i.name = "sample_msgs_per_peer";
    i.description = "messages sent to each of 4 peers";
    i.count = 4;
    i.datatype = PVAR_TYPE_UNSIGNED_LONG;
    SAMPLE_OK(pvar_register(&i, &s->per_peer));

    memset(&i, 0, sizeof i);
    i.name = "sample_nonatomic";
    i.description = "a counter without readreset";
    i.var_class = PVAR_CLASS_COUNTER;
    i.atomic = PVAR_NO;
    SAMPLE_OK(pvar_register(&i, &s->nonatomic));

    memset(&i, 0, sizeof i);
    i.name = "sample_bytes";
    i.description = "bytes sent";
    i.var_class = PVAR_CLASS_AGGREGATE;
    i.datatype = PVAR_TYPE_DOUBLE;
    i.category = "sample_comm";
    SAMPLE_OK(pvar_register(&i, &s->bytes));

    memset(&i, 0, sizeof i);
    i.name = "sample_wait_time";
    i.description = "time spent waiting, seconds";
    i.var_class = PVAR_CLASS_TIMER;
    i.verbosity = PVAR_VERBOSITY_TUNER_DETAIL;
    SAMPLE_OK(pvar_register(&i, &s->wait));

    memset(&i, 0, sizeof i);
    i.name = "sample_pool_size";
    i.description = "size of the buffer pool";
    i.var_class = PVAR_CLASS_SIZE;
    i.datatype = PVAR_TYPE_UNSIGNED;
    SAMPLE_OK(pvar_register(&i, &s->pool_size));

    memset(&i, 0, sizeof i);
    i.name = "sample_pool_usage";
    i.description = "fraction of the pool in use";
    i.var_class = PVAR_CLASS_PERCENTAGE;
    SAMPLE_OK(pvar_register(&i, &s->pool_usage));

    memset(&i, 0, sizeof i);
    i.name = "sample_state";
    i.description = "what the progress engine is doing";
    i.var_class = PVAR_CLASS_STATE;
    i.enum_name = "sample_state_enum";
    i.enum_items = sample_states;
    i.enum_len = 3;
    SAMPLE_OK(pvar_register(&i, &s->state));

    memset(&i, 0, sizeof i);
    i.name = "sample_queue_len";
    i.description = "messages in the queue of a communicator";
    i.var_class = PVAR_CLASS_LEVEL;
    i.datatype = PVAR_TYPE_UNSIGNED;
    i.bind = PVAR_BIND_MPI_COMM;
    i.category = "sample_comm";
    SAMPLE_OK(pvar_register_bound(&i, &s->queue));
    SAMPLE_OK(pvar_bound_create(s->queue, PVAR_OBJECT_COMM_WORLD, 0, &s->queue_world));
    SAMPLE_OK(pvar_bound_create(s->queue, PVAR_OBJECT_COMM_SELF, 0, &s->queue_self));

    memset(&i, 0, sizeof i);
    i.name = "sample_queue_len"; /* same name, other class */
    i.description = "highest queue length";
    i.var_class = PVAR_CLASS_HIGHWATERMARK;
    SAMPLE_OK(pvar_register(&i, &s->queue_high));

    memset(&i, 0, sizeof i);
    i.name = "sample_free_slots";
    i.description = "lowest number of free slots";
    i.var_class = PVAR_CLASS_LOWWATERMARK;
    i.datatype = PVAR_TYPE_DOUBLE;
    SAMPLE_OK(pvar_register(&i, &s->free_low));
    pvar_watermark_init(s->free_low, 64.0);

    memset(&i, 0, sizeof i);
    i.name = "sample_generic";
    i.description = "a signed generic value";
    i.var_class = PVAR_CLASS_GENERIC;
    i.datatype = PVAR_TYPE_COUNT;
    SAMPLE_OK(pvar_register(&i, &s->generic));

    memset(&i, 0, sizeof i);
    i.name = "sample_callback_counter";
    i.description = "a counter the component computes";
    i.var_class = PVAR_CLASS_COUNTER;
    i.readonly = PVAR_YES;
    i.continuous = PVAR_YES;
    SAMPLE_OK(pvar_register_callback(&i, sample_read_counter, NULL, NULL,
                                     &sample_callback_ticks, &s->callback_counter_index));

    memset(&i, 0, sizeof i);
    i.name = "sample_callback_name";
    i.description = "the component's name, as MPI_CHAR";
    i.var_class = PVAR_CLASS_GENERIC;
    i.datatype = PVAR_TYPE_CHAR;
    i.count = 16;
    SAMPLE_OK(pvar_register_callback(&i, sample_read_name, NULL, NULL,
                                     (void *)"sample-component", &s->callback_name_index));

    memset(&i, 0, sizeof i);
    i.name = "sample_callback_ratio";
    i.description = "a double the component computes";
    i.var_class = PVAR_CLASS_PERCENTAGE;
    SAMPLE_OK(pvar_register_callback(&i, sample_read_ratio, NULL, NULL, NULL,
                                     &s->callback_ratio_index));

    memset(&i, 0, sizeof i);
    i.name = "sample_callback_setting";
    i.description = "per-communicator values a tool may write (callbacks, per-object count)";
    i.var_class = PVAR_CLASS_GENERIC;
    i.datatype = PVAR_TYPE_UNSIGNED_LONG_LONG;
    i.bind = PVAR_BIND_MPI_COMM;
    i.count = PVAR_COUNT_PER_OBJECT;
    i.readonly = PVAR_NO;
    SAMPLE_OK(pvar_register_callback(&i, sample_read_setting, sample_write_setting,
                                     sample_notify_setting, sample_settings,
                                     &s->callback_setting_index));

    /* Control variables of every datatype. */
    {
        pvar_cvar_info c;
        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_PROTOCOL";
        c.description = "message protocol";
        c.datatype = PVAR_TYPE_INT;
        c.default_int = 2;
        c.category = "sample_comm";
        c.enum_name = "sample_protocol_enum";
        c.enum_items = sample_protocols;
        c.enum_len = 3;
        SAMPLE_OK(pvar_cvar_register(&c, &s->protocol));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_EAGER_LIMIT";
        c.description = "messages up to this size are sent eagerly";
        c.datatype = PVAR_TYPE_UNSIGNED;
        c.default_unsigned = 65536;
        c.verbosity = PVAR_VERBOSITY_TUNER_BASIC;
        c.category = "sample_comm";
        c.env = "SAMPLE_EAGER_LIMIT_ENV";
        SAMPLE_OK(pvar_cvar_register(&c, &s->eager));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_BIG";
        c.description = "a 64-bit setting";
        c.datatype = PVAR_TYPE_UNSIGNED_LONG_LONG;
        c.default_unsigned = UINT64_C(1) << 40;
        SAMPLE_OK(pvar_cvar_register(&c, &s->big));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_OFFSET";
        c.description = "a signed count";
        c.datatype = PVAR_TYPE_COUNT;
        c.default_int = -5;
        SAMPLE_OK(pvar_cvar_register(&c, &s->offset));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_FACTOR";
        c.description = "a tuning factor";
        c.datatype = PVAR_TYPE_DOUBLE;
        c.default_double = 1.5;
        SAMPLE_OK(pvar_cvar_register(&c, &s->factor));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_PATH";
        c.description = "where to write traces";
        c.datatype = PVAR_TYPE_CHAR;
        c.default_string = "/tmp/sample";
        c.capacity = 64;
        SAMPLE_OK(pvar_cvar_register(&c, &s->path));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_VERSION";
        c.description = "the component version (constant)";
        c.datatype = PVAR_TYPE_CHAR;
        c.default_string = "1.2.3";
        c.scope = PVAR_SCOPE_CONSTANT;
        SAMPLE_OK(pvar_cvar_register(&c, &s->version));

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_FROZEN";
        c.description = "settable only before start-up";
        c.datatype = PVAR_TYPE_INT;
        c.default_int = 7;
        SAMPLE_OK(pvar_cvar_register(&c, &s->frozen));
        pvar_cvar_freeze(s->frozen, 1);

        memset(&c, 0, sizeof c);
        c.name = "SAMPLE_COLL_ALGORITHM";
        c.description = "collective algorithm of a communicator";
        c.datatype = PVAR_TYPE_UNSIGNED;
        c.default_unsigned = 3;
        c.bind = PVAR_BIND_MPI_COMM;
        c.scope = PVAR_SCOPE_GROUP_EQ;
        SAMPLE_OK(pvar_cvar_register_bound(&c, &s->algo));
        SAMPLE_OK(pvar_bound_cvar_create(s->algo, PVAR_OBJECT_COMM_WORLD, &s->algo_world));
    }

    /* Some activity. */
    pvar_inc(s->sent);
    pvar_add_at(s->per_peer, 2, 5);
    pvar_add_double(s->bytes, 1024.5);
    pvar_timer_add_ns(s->wait, 1500);
    pvar_set(s->pool_size, 4096);
    pvar_set_double(s->pool_usage, 0.25);
    pvar_set_int(s->state, 1);
    pvar_inc(s->queue_world);
    pvar_watermark_update(s->queue_high, 3);
    pvar_watermark_update_double(s->free_low, 60.0);
    pvar_set_int(s->generic, -42);
    sample_callback_ticks = 99;
}

#endif
