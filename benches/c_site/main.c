/*
 * scripts/c-site-bench.sh's driver: times the loops of loops.c of the
 * three builds, interleaved (each round runs every loop once, briefly),
 * with the thread's CPU time, and prints per loop the median and minimum
 * ns per update and its ratio to the floor of the same build: the ratio of
 * medians, of minimums, and the median of the per-round ratios.
 *
 *   c-site-bench [rounds [iterations per loop and round]]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pvar.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*loop_fn)(uint64_t);
typedef uint64_t (*total_fn)(void);
void exe_set(pvar_var);
void exe_plain(uint64_t);
void exe_macro(uint64_t);
void exe_site_v2(uint64_t);
uint64_t exe_plain_total(void);

#define BUILDS 3
#define LOOPS 3
#define N (BUILDS * LOOPS)
#define MAX_ROUNDS 2001

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double t[N][MAX_ROUNDS], ratio[N][MAX_ROUNDS];

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 201;
    uint64_t iters = argc > 2 ? strtoull(argv[2], NULL, 10) : 300000;
    if (rounds < 1 || rounds > MAX_ROUNDS || iters == 0) {
        fprintf(stderr, "usage: %s [rounds 1..%d [iterations]]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    const char *dir = getenv("C_SITE_BENCH_DIR");
    if (dir == NULL) dir = ".";
    pvar_info info = {0};
    info.name = "c_site_bench";
    info.var_class = PVAR_CLASS_COUNTER;
    pvar_var v;
    if (pvar_register(&info, &v) != 0) {
        fprintf(stderr, "pvar_register: %s\n", pvar_last_error());
        return 1;
    }
    const char *build[BUILDS] = {"executable, local-exec", "dlopen'ed .so, general-dynamic",
                                 ".so, PVAR_TLS_MODEL initial-exec"};
    const char *loop[LOOPS] = {"thread-local += 1", "PVAR_COUNTER_INC", "pvar_site (older cache)"};
    loop_fn f[N] = {exe_plain, exe_macro, exe_site_v2};
    total_fn plain_total[BUILDS] = {exe_plain_total};
    exe_set(v);
    const char *lib[2] = {"libc_site_gd.so", "libc_site_ie.so"};
    const char *pfx[2] = {"gd", "ie"};
    const char *suffix[LOOPS] = {"plain", "macro", "site_v2"};
    for (int s = 0; s < 2; s++) {
        char path[4096], sym[64];
        snprintf(path, sizeof path, "%s/%s", dir, lib[s]);
        void *h = dlopen(path, RTLD_NOW);
        if (h == NULL) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        snprintf(sym, sizeof sym, "%s_set", pfx[s]);
        ((void (*)(pvar_var))dlsym(h, sym))(v);
        snprintf(sym, sizeof sym, "%s_plain_total", pfx[s]);
        plain_total[s + 1] = (total_fn)dlsym(h, sym);
        for (int k = 0; k < LOOPS; k++) {
            snprintf(sym, sizeof sym, "%s_%s", pfx[s], suffix[k]);
            f[LOOPS * (s + 1) + k] = (loop_fn)dlsym(h, sym);
            if (f[LOOPS * (s + 1) + k] == NULL) {
                fprintf(stderr, "dlsym %s: %s\n", sym, dlerror());
                return 1;
            }
        }
    }
    for (int k = 0; k < N; k++) f[k](1000); /* fill the caches, fault the pages */
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N; k++) {
            double a = now_ns();
            f[k](iters);
            t[k][r] = (now_ns() - a) / (double)iters;
        }
    /* Every update counted: the macro and the older cache add to one variable. */
    uint64_t want = (uint64_t)BUILDS * 2 * (1000 + (uint64_t)rounds * iters);
    if (pvar_get_at(v, 0) != want) {
        fprintf(stderr, "total %llu, expected %llu\n", (unsigned long long)pvar_get_at(v, 0),
                (unsigned long long)want);
        return 1;
    }
    for (int b = 0; b < BUILDS; b++)
        if (plain_total[b]() != 1000 + (uint64_t)rounds * iters) return 1;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N; k++) ratio[k][r] = t[k][r] / t[k - k % LOOPS][r];
    printf("%d rounds of %llu updates per loop, CPU time per thread\n", rounds,
           (unsigned long long)iters);
    for (int k = 0; k < N; k++) {
        qsort(t[k], rounds, sizeof(double), by_value);
        qsort(ratio[k], rounds, sizeof(double), by_value);
    }
    for (int k = 0; k < N; k++) {
        int floor = k - k % LOOPS;
        if (k % LOOPS == 0) printf("%s\n", build[k / LOOPS]);
        printf("  %-24s median %6.3f ns  min %6.3f ns  ratio: medians %.2fx  mins %.2fx  "
               "per round %.2fx (p25 %.2f, p75 %.2f)\n",
               loop[k % LOOPS], t[k][rounds / 2], t[k][0], t[k][rounds / 2] / t[floor][rounds / 2],
               t[k][0] / t[floor][0], ratio[k][rounds / 2], ratio[k][rounds / 4],
               ratio[k][3 * rounds / 4]);
    }
    return 0;
}
