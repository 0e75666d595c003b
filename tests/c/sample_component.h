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
static uint64_t sample_settings[3] = {0, 10, 20}; /* per-comm values */
static int sample_notified[4];                     /* BIND, START, STOP, FREE */

static uint64_t sample_read_ratio(void *ctx, uint64_t object, int bound, size_t element) {
    (void)ctx, (void)object, (void)bound, (void)element;
    return pvar_bits_from_double(0.75);
}

static uint64_t sample_read_setting(void *ctx, uint64_t object, int bound, size_t element) {
    (void)object, (void)bound;
    return ((uint64_t *)ctx)[element];
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

/* Registration from designated initializers (the other fields zero). */
#define SAMPLE_REGISTER(out, ...) SAMPLE_OK(pvar_register(&(pvar_info){__VA_ARGS__}, (out)))
#define SAMPLE_CVAR(out, ...) SAMPLE_OK(pvar_cvar_register(&(pvar_cvar_info){__VA_ARGS__}, (out)))

static const pvar_enum_item sample_states[] = {
    {"idle", 0}, {"sending", 1}, {"receiving", 2}};
static const pvar_enum_item sample_protocols[] = {
    {"eager", 0}, {"rendezvous", 1}, {"auto", 2}};

static void sample_component_init(struct sample *s) {
    SAMPLE_OK(pvar_category_define("sample_root", "everything the sample component exposes", NULL));
    SAMPLE_OK(pvar_category_define("sample_comm", "communication", NULL));
    SAMPLE_OK(pvar_category_define("sample_empty", NULL, NULL));
    SAMPLE_OK(pvar_category_add_subcategory("sample_root", "sample_comm"));
    SAMPLE_OK(pvar_category_add_subcategory("sample_root", "sample_empty"));

    SAMPLE_REGISTER(&s->sent, .name = "sample_msgs_sent", .description = "messages sent",
                    .var_class = PVAR_CLASS_COUNTER, .category = "sample_comm");
    SAMPLE_REGISTER(&s->per_peer, .name = "sample_msgs_per_peer",
                    .description = "messages sent to each of 4 peers",
                    .var_class = PVAR_CLASS_COUNTER, .category = "sample_comm", .count = 4,
                    .datatype = PVAR_TYPE_UNSIGNED_LONG);
    SAMPLE_REGISTER(&s->nonatomic, .name = "sample_nonatomic",
                    .description = "a counter without readreset", .var_class = PVAR_CLASS_COUNTER,
                    .atomic = PVAR_NO);
    SAMPLE_REGISTER(&s->bytes, .name = "sample_bytes", .description = "bytes sent",
                    .var_class = PVAR_CLASS_AGGREGATE, .datatype = PVAR_TYPE_DOUBLE,
                    .category = "sample_comm");
    SAMPLE_REGISTER(&s->wait, .name = "sample_wait_time",
                    .description = "time spent waiting, seconds", .var_class = PVAR_CLASS_TIMER,
                    .verbosity = PVAR_VERBOSITY_TUNER_DETAIL);
    SAMPLE_REGISTER(&s->pool_size, .name = "sample_pool_size",
                    .description = "size of the buffer pool", .var_class = PVAR_CLASS_SIZE,
                    .datatype = PVAR_TYPE_UNSIGNED);
    SAMPLE_REGISTER(&s->pool_usage, .name = "sample_pool_usage",
                    .description = "fraction of the pool in use",
                    .var_class = PVAR_CLASS_PERCENTAGE);
    SAMPLE_REGISTER(&s->state, .name = "sample_state",
                    .description = "what the progress engine is doing",
                    .var_class = PVAR_CLASS_STATE, .enum_name = "sample_state_enum",
                    .enum_items = sample_states, .enum_len = 3);
    SAMPLE_OK(pvar_register_bound(
        &(pvar_info){.name = "sample_queue_len",
                     .description = "messages in the queue of a communicator",
                     .var_class = PVAR_CLASS_LEVEL,
                     .datatype = PVAR_TYPE_UNSIGNED,
                     .bind = PVAR_BIND_MPI_COMM,
                     .category = "sample_comm"},
        &s->queue));
    SAMPLE_OK(pvar_bound_create(s->queue, PVAR_OBJECT_COMM_WORLD, 0, &s->queue_world));
    SAMPLE_OK(pvar_bound_create(s->queue, PVAR_OBJECT_COMM_SELF, 0, &s->queue_self));
    SAMPLE_REGISTER(&s->queue_high, .name = "sample_queue_len", /* same name, other class */
                    .description = "highest queue length",
                    .var_class = PVAR_CLASS_HIGHWATERMARK);
    SAMPLE_REGISTER(&s->free_low, .name = "sample_free_slots",
                    .description = "lowest number of free slots",
                    .var_class = PVAR_CLASS_LOWWATERMARK, .datatype = PVAR_TYPE_DOUBLE);
    pvar_watermark_init(s->free_low, 64.0);
    SAMPLE_REGISTER(&s->generic, .name = "sample_generic", .description = "a signed generic value",
                    .var_class = PVAR_CLASS_GENERIC, .datatype = PVAR_TYPE_COUNT);

    SAMPLE_OK(pvar_register_callback(
        &(pvar_info){.name = "sample_callback_counter",
                     .description = "a counter the component computes",
                     .var_class = PVAR_CLASS_COUNTER,
                     .readonly = PVAR_YES,
                     .continuous = PVAR_YES},
        sample_read_counter, NULL, &sample_callback_ticks, &s->callback_counter_index));
    SAMPLE_OK(pvar_register_callback(
        &(pvar_info){.name = "sample_callback_name",
                     .description = "the component's name, as MPI_CHAR",
                     .var_class = PVAR_CLASS_GENERIC,
                     .datatype = PVAR_TYPE_CHAR,
                     .count = 16},
        sample_read_name, NULL, (void *)"sample-component", &s->callback_name_index));
    SAMPLE_OK(pvar_register_callback(
        &(pvar_info){.name = "sample_callback_ratio",
                     .description = "a double the component computes",
                     .var_class = PVAR_CLASS_PERCENTAGE},
        sample_read_ratio, NULL, NULL, &s->callback_ratio_index));
    SAMPLE_OK(pvar_register_callback(
        &(pvar_info){.name = "sample_callback_setting",
                     .description =
                         "per-communicator values (callbacks, per-object count)",
                     .var_class = PVAR_CLASS_GENERIC,
                     .datatype = PVAR_TYPE_UNSIGNED_LONG_LONG,
                     .bind = PVAR_BIND_MPI_COMM,
                     .count = PVAR_COUNT_PER_OBJECT},
        sample_read_setting, sample_notify_setting, sample_settings,
        &s->callback_setting_index));

    /* Control variables of every datatype. */
    SAMPLE_CVAR(&s->protocol, .name = "SAMPLE_PROTOCOL", .description = "message protocol",
                .datatype = PVAR_TYPE_INT, .default_int = 2, .category = "sample_comm",
                .enum_name = "sample_protocol_enum", .enum_items = sample_protocols,
                .enum_len = 3);
    SAMPLE_CVAR(&s->eager, .name = "SAMPLE_EAGER_LIMIT",
                .description = "messages up to this size are sent eagerly",
                .datatype = PVAR_TYPE_UNSIGNED, .default_unsigned = 65536,
                .verbosity = PVAR_VERBOSITY_TUNER_BASIC, .category = "sample_comm",
                .env = "SAMPLE_EAGER_LIMIT_ENV");
    SAMPLE_CVAR(&s->big, .name = "SAMPLE_BIG", .description = "a 64-bit setting",
                .datatype = PVAR_TYPE_UNSIGNED_LONG_LONG, .default_unsigned = UINT64_C(1) << 40);
    SAMPLE_CVAR(&s->offset, .name = "SAMPLE_OFFSET", .description = "a signed count",
                .datatype = PVAR_TYPE_COUNT, .default_int = -5);
    SAMPLE_CVAR(&s->factor, .name = "SAMPLE_FACTOR", .description = "a tuning factor",
                .datatype = PVAR_TYPE_DOUBLE, .default_double = 1.5);
    SAMPLE_CVAR(&s->path, .name = "SAMPLE_PATH", .description = "where to write traces",
                .datatype = PVAR_TYPE_CHAR, .default_string = "/tmp/sample", .capacity = 64);
    SAMPLE_CVAR(&s->version, .name = "SAMPLE_VERSION",
                .description = "the component version (constant)", .datatype = PVAR_TYPE_CHAR,
                .default_string = "1.2.3", .scope = PVAR_SCOPE_CONSTANT);
    SAMPLE_CVAR(&s->frozen, .name = "SAMPLE_FROZEN", .description = "settable only before start-up",
                .datatype = PVAR_TYPE_INT, .default_int = 7);
    pvar_cvar_freeze(s->frozen, 1);
    SAMPLE_OK(pvar_cvar_register_bound(
        &(pvar_cvar_info){.name = "SAMPLE_COLL_ALGORITHM",
                          .description = "collective algorithm of a communicator",
                          .datatype = PVAR_TYPE_UNSIGNED,
                          .default_unsigned = 3,
                          .bind = PVAR_BIND_MPI_COMM,
                          .scope = PVAR_SCOPE_GROUP_EQ},
        &s->algo));
    SAMPLE_OK(pvar_bound_cvar_create(s->algo, PVAR_OBJECT_COMM_WORLD, &s->algo_world));

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
