/* Tiny test harness shared by the C interface tests: CHECK / CHECK_RC count
 * passes and failures; summary() prints "NAME: N passed, M failed" and
 * returns the exit status. Only the main thread may use these. */
#ifndef PVAR_TEST_CHECK_H
#define PVAR_TEST_CHECK_H

#include <stdio.h>

#include "mpi_t.h"

static int checks_passed, checks_failed;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (cond) {                                                           \
            checks_passed++;                                                  \
        } else {                                                              \
            checks_failed++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                   \
        }                                                                     \
    } while (0)

#define CHECK_RC(call, expect)                                                \
    do {                                                                      \
        int rc_ = (call);                                                     \
        int ex_ = (expect);                                                   \
        if (rc_ == ex_) {                                                     \
            checks_passed++;                                                  \
        } else {                                                              \
            checks_failed++;                                                  \
            fprintf(stderr, "%s:%d: %s\n  returned %d (%s)\n  expected %d (%s)\n", \
                    __FILE__, __LINE__, #call, rc_, pvar_error_string(rc_),   \
                    ex_, pvar_error_string(ex_));                             \
        }                                                                     \
    } while (0)

static int summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed == 0 && checks_passed > 0 ? 0 : 1;
}

#endif
