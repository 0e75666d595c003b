/*
 * A C component built as a shared library and loaded with dlopen by
 * tests/c/site_macros.c (and benches/c_component.rs): it registers its
 * variables in the process-wide registry and updates them through pvar.h's
 * use-site macros, each call site with its own thread-local cache.
 */
#include <pvar.h>

static pvar_var sent;    /* COUNTER, 4 elements (per peer) */
static pvar_var bytes;   /* AGGREGATE, unsigned long long */
static pvar_var seconds; /* AGGREGATE, double */
static pvar_var depth;   /* LEVEL, unsigned long long */

static int reg(const char *name, int var_class, int datatype, long count, pvar_var *out) {
    pvar_info i = {0};
    i.name = name;
    i.description = "site_component: updated through pvar.h's use-site macros";
    i.var_class = var_class;
    i.datatype = datatype;
    i.count = count;
    return pvar_register(&i, out);
}

/* Registers (or finds again, after a reload) the component's variables. */
int site_component_init(void) {
    int rc = reg("site_sent", PVAR_CLASS_COUNTER, 0, 4, &sent);
    if (rc == 0) rc = reg("site_bytes", PVAR_CLASS_AGGREGATE, 0, 0, &bytes);
    if (rc == 0) rc = reg("site_seconds", PVAR_CLASS_AGGREGATE, PVAR_TYPE_DOUBLE, 0, &seconds);
    if (rc == 0) rc = reg("site_depth", PVAR_CLASS_LEVEL, 0, 0, &depth);
    return rc;
}

void site_component_fini(void) {
    pvar_var_free(sent);
    pvar_var_free(bytes);
    pvar_var_free(seconds);
    pvar_var_free(depth);
    sent = bytes = seconds = depth = NULL;
}

pvar_var site_component_sent(void) { return sent; }
pvar_var site_component_bytes(void) { return bytes; }
pvar_var site_component_seconds(void) { return seconds; }
pvar_var site_component_depth(void) { return depth; }

/* A send of `len` bytes to `peer`: what a communication hot path does. */
void site_component_send(size_t peer, uint64_t len) {
    PVAR_COUNTER_INC_AT(sent, peer);
    PVAR_AGGREGATE_ADD(bytes, len);
    PVAR_AGGREGATE_ADD_DOUBLE(seconds, 0.5);
    PVAR_LEVEL_INC(depth);
    PVAR_LEVEL_DEC(depth);
}

/* `n` increments of element 0 through one call site. */
void site_component_inc(uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        PVAR_COUNTER_INC(sent);
#if defined(__GNUC__)
        __asm__ volatile("" ::: "memory");
#endif
    }
}

/* One call site used with whichever variable it is given. */
void site_component_add_to(pvar_var v, uint64_t n) { PVAR_COUNTER_ADD(v, n); }

/* ---- the cost benchmark's loops (benches/c_component.rs) ---------------- */

static PVAR_THREAD_LOCAL_ uint64_t plain;

/* The floor: a thread-local `+= 1` in this library, with the same compiler
 * barrier per iteration as the macro loop (other code in a real loop
 * touches memory, so the cache is read again each time). */
void site_component_plain_loop(uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        plain += 1;
#if defined(__GNUC__)
        __asm__ volatile("" ::: "memory");
#endif
    }
}

uint64_t site_component_plain_total(void) { return plain; }
