/*
 * MPI_UNSIGNED values past 2^32 - 1, set through pvar.h: LEVEL, SIZE and
 * the watermarks must not overflow, so tools read them saturated at
 * UINT_MAX (and exactly again once back in range: the engine keeps the whole
 * 64-bit value); COUNTER, AGGREGATE and TIMER can overflow and wrap.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "mpi_t.h"
#include "pvar.h"

#define REGISTER(out, ...) CHECK_RC(pvar_register(&(pvar_info){__VA_ARGS__}, (out)), 0)

static unsigned read_u32(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned v = 12345;
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    return v;
}

int main(void) {
    pvar_var level, size, high, counter;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle hl, hs, hh, hc;
    int provided, count, index;
    const uint64_t big = UINT64_C(5000000000); /* 2^32 + 705032704 */

    REGISTER(&level, .name = "ur_level", .var_class = PVAR_CLASS_LEVEL,
             .datatype = PVAR_TYPE_UNSIGNED);
    REGISTER(&size, .name = "ur_size", .var_class = PVAR_CLASS_SIZE,
             .datatype = PVAR_TYPE_UNSIGNED);
    REGISTER(&high, .name = "ur_high", .var_class = PVAR_CLASS_HIGHWATERMARK,
             .datatype = PVAR_TYPE_UNSIGNED, .continuous = PVAR_NO);
    REGISTER(&counter, .name = "ur_counter", .var_class = PVAR_CLASS_COUNTER,
             .datatype = PVAR_TYPE_UNSIGNED, .continuous = PVAR_NO);

    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    index = pvar_var_index(level);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &hl, &count), MPI_SUCCESS);
    index = pvar_var_index(size);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &hs, &count), MPI_SUCCESS);
    index = pvar_var_index(high);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &hh, &count), MPI_SUCCESS);
    index = pvar_var_index(counter);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &hc, &count), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);

    /* LEVEL: saturated while above, exact again once back in range (the
     * set kept the whole value: 4294967300 - 10, not 4 - 10). */
    pvar_set(level, UINT64_C(4294967300));
    CHECK(read_u32(s, hl) == UINT_MAX);
    CHECK(pvar_get_at(level, 0) == UINT_MAX);
    for (int k = 0; k < 10; k++) pvar_dec(level);
    CHECK(read_u32(s, hl) == 4294967290u);
    CHECK(pvar_get_at(level, 0) == 4294967290u);
    pvar_set_int(level, INT64_C(4294967296));
    CHECK(read_u32(s, hl) == UINT_MAX);

    /* SIZE and HIGHWATERMARK: saturated, not 705032704. */
    pvar_set(size, big);
    CHECK(read_u32(s, hs) == UINT_MAX);
    CHECK(pvar_get_at(size, 0) == UINT_MAX);
    pvar_set(size, 7);
    CHECK(read_u32(s, hs) == 7);
    pvar_watermark_update(high, big);
    pvar_watermark_update(high, 3);
    CHECK(read_u32(s, hh) == UINT_MAX);
    CHECK(pvar_get_at(high, 0) == 3);

    /* COUNTER wraps: a tool's difference of two reads stays right. */
    {
        unsigned before, after;
        pvar_add(counter, UINT_MAX);
        before = read_u32(s, hc);
        pvar_add(counter, 10);
        after = read_u32(s, hc);
        CHECK(before == UINT_MAX && after == 9 && after - before == 10);
    }

    CHECK_RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    return summary("unsigned_range");
}
