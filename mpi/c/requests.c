/*
 * requests.c — the slow paths of the outstanding-request accounting
 * (record.h, pm_requests_add): the LEVEL through the update function when
 * this thread's cell cannot be had, and a new per-thread highest count for
 * the watermark (a handful of calls per run).
 */
#include "interpose.h"

void pm_requests_level_slow(int64_t n) {
    for (; n > 0; n--)
        pvar_inc(pm_vars.requests);
    for (; n < 0; n++)
        pvar_dec(pm_vars.requests);
}

void pm_requests_report(pm_tls *t, int64_t now) {
    t->reported = now;
    pvar_watermark_update(pm_vars.requests_max, (uint64_t)now);
}
